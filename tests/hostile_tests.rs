//! Hostile clients against our netserver's control connection (issue 7, "a
//! netserver you can leave running"): random and truncated messages, too many
//! bytes, a client that dribbles, clients that vanish at every step of a
//! test, and hundreds of idle connections. After each attack the same server
//! must still run a normal TCP_RR test, and its threads and memory must come
//! back down. Every loop and every read here is bounded; nothing asserts a
//! timing.

mod common;

use common::control::*;
use common::*;
use netperf_ng::wire::kind;
use netperf_ng::wire::omni::{self, OmniResponse};
use netperf_ng::wire::{Message, MESSAGE_LEN};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, UdpSocket};
use std::time::Duration;

/// A deterministic xorshift64 generator: the same attack on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
}

/// 200 connections each sending one message of random bytes, 200 more with
/// a DO_OMNI type word, and a few with every other type netserver knows:
/// each is answered, refused or closed, never hangs the test, and the
/// server stays up.
#[test]
fn random_messages() {
    let server = Server::start("127.0.0.1");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let known = [
        kind::DEBUG_ON,
        kind::DEBUG_OFF,
        kind::CPU_CALIBRATE,
        kind::PASSPHRASE,
        kind::DO_TCP_STREAM,
        kind::DO_TCP_CC,
        kind::DO_OMNI,
        kind::DO_SYSINFO,
        netperf_ng::wire::unix::DO_STREAM_STREAM,
        netperf_ng::wire::unix::DO_STREAM_RR,
        netperf_ng::wire::unix::DO_DG_STREAM,
        netperf_ng::wire::unix::DO_DG_RR,
    ];
    let (mut answered, mut closed, mut silent) = (0, 0, 0);
    for round in 0..400 {
        let mut m = Message::from_bytes(rng.bytes(MESSAGE_LEN).try_into().unwrap());
        if round >= 200 {
            m.set_word(0, kind::DO_OMNI);
        }
        let k = m.kind();
        let mut s = connect(&server);
        if send_message(&mut s, &m).is_err() {
            closed += 1;
            continue;
        }
        match read_reply(&mut s, Duration::from_secs(2)) {
            Reply::Message(_) => answered += 1,
            Reply::Closed => closed += 1,
            Reply::Silent(n) => {
                // A random type is unknown (answered with an error); a
                // DO_OMNI request is answered or refused.
                assert!(
                    known.contains(&k) && k != kind::DO_OMNI,
                    "round {round}: type {k} neither answered nor closed ({n} bytes)"
                );
                silent += 1;
            }
        }
    }
    assert!(answered > 0, "no random message was answered");
    eprintln!("random: {answered} answered, {closed} closed, {silent} silent");
    // Every type netserver knows, with random contents. A passphrase nobody
    // asked for is ignored (silence is fine); a legacy request may start a
    // test that waits for a data connection that never comes.
    for k in known {
        for _ in 0..3 {
            let mut m = Message::from_bytes(rng.bytes(MESSAGE_LEN).try_into().unwrap());
            m.set_word(0, k);
            let mut s = connect(&server);
            if send_message(&mut s, &m).is_ok() {
                let _ = read_reply(&mut s, Duration::from_secs(2));
            }
        }
    }
    still_serves(&server);
}

/// Messages cut short: closed at a sample of lengths, and a partial message
/// followed by a second of silence.
#[test]
fn truncated_messages() {
    let server = Server::start("127.0.0.1");
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let request = omni_request("TCP_RR", 1).encode();
    let mut lengths: Vec<usize> = vec![1, 2, 3, 4, 5, 7, 8, 9, 12, 100, 327, 328, 500, 654, 655];
    for _ in 0..15 {
        lengths.push(1 + (rng.next() % 655) as usize);
    }
    for (i, &len) in lengths.iter().enumerate() {
        // Alternate random bytes and the start of a real request.
        let bytes = if i % 2 == 0 {
            rng.bytes(len)
        } else {
            request.bytes[..len].to_vec()
        };
        let mut s = connect(&server);
        let _ = s.write_all(&bytes);
        drop(s);
    }
    for len in [1, 8, 655] {
        let mut s = connect(&server);
        let _ = s.write_all(&request.bytes[..len]);
        // The server must not answer half a message.
        match read_reply(&mut s, Duration::from_secs(1)) {
            Reply::Message(m) => panic!("answered {len} bytes of a request: type {}", m.kind()),
            Reply::Closed | Reply::Silent(_) => {}
        }
        drop(s);
    }
    still_serves(&server);
}

/// Three messages and a bit more in one write: each whole one is answered,
/// the tail waits for the rest (no fourth answer), and a close ends it all.
#[test]
fn oversized_write() {
    let server = Server::start("127.0.0.1");
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for omni_type in [false, true] {
        let mut bytes = rng.bytes(MESSAGE_LEN * 3 + 100);
        if omni_type {
            for i in 0..3 {
                bytes[i * MESSAGE_LEN..i * MESSAGE_LEN + 4]
                    .copy_from_slice(&kind::DO_OMNI.to_be_bytes());
            }
        }
        let mut s = connect(&server);
        let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
        s.write_all(&bytes).expect("netserver reads all of it");
        for i in 0..3 {
            match read_reply(&mut s, Duration::from_secs(10)) {
                Reply::Message(_) => {}
                other => panic!("omni type {omni_type}: message {i} not answered: {other:?}"),
            }
        }
        match read_reply(&mut s, Duration::from_secs(1)) {
            Reply::Silent(0) => {}
            other => panic!("omni type {omni_type}: the 100-byte tail was answered: {other:?}"),
        }
        s.shutdown(Shutdown::Write).unwrap();
        match read_reply(&mut s, Duration::from_secs(10)) {
            Reply::Closed => {}
            other => panic!("omni type {omni_type}: not closed after ours: {other:?}"),
        }
    }
    still_serves(&server);
}

/// Run a counted TCP_RR as a client on an already answered request:
/// `transactions` one-byte exchanges on the data port, then the results.
fn finish_rr(control: &mut TcpStream, response: &OmniResponse, transactions: usize) -> Message {
    let port = response.data_port as u16;
    let mut data = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(5),
    )
    .expect("connect to the data port");
    data.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    data.set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for i in 0..transactions {
        data.write_all(b"x").expect("send a request");
        let mut b = [0u8; 1];
        data.read_exact(&mut b)
            .unwrap_or_else(|e| panic!("response {i}: {e}"));
    }
    let _ = data.shutdown(Shutdown::Write);
    match read_reply(control, Duration::from_secs(20)) {
        Reply::Message(m) => *m,
        other => panic!("no results message: {other:?}"),
    }
}

/// A valid TCP_RR request sent one byte every 10 ms: it is served, and a
/// normal netperf run meanwhile is served too.
#[test]
fn slow_client() {
    if fast_tier_skips("slow (7 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let port = server.port;
    let slow = std::thread::spawn(move || {
        let request = omni_request("TCP_RR", -10).encode();
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_nodelay(true).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        for b in request.bytes.iter() {
            s.write_all(std::slice::from_ref(b))
                .expect("dribble a byte");
            std::thread::sleep(Duration::from_millis(10));
        }
        let m = match read_reply(&mut s, Duration::from_secs(20)) {
            Reply::Message(m) => m,
            other => panic!("slow request not answered: {other:?}"),
        };
        assert_eq!(m.kind(), kind::OMNI_RESPONSE);
        let response = OmniResponse::decode(&m);
        if response.serv_errno != 0 {
            // Refused cleanly: acceptable.
            return false;
        }
        let results = finish_rr(&mut s, &response, 10);
        // Stock netserver's results carry the response's type word.
        let r = omni::OmniResults::decode(&results);
        assert_eq!(r.trans_received, 10, "{r:?}");
        true
    });
    // Meanwhile (the dribble takes about 6.6 s) others are served.
    still_serves(&server);
    still_serves(&server);
    let served = slow.join().expect("slow client thread");
    eprintln!("slow client served: {served}");
    still_serves(&server);
}

#[derive(Clone, Copy, Debug)]
enum VanishAfter {
    /// Close right after sending the request.
    Request,
    /// Read the response, connect to the data port, close everything.
    DataConnect,
    /// As DataConnect, with a little data sent first.
    SomeData,
}

/// One client that vanishes at `when` during `test`.
fn vanish(server: &Server, test: &str, test_length: i32, when: VanishAfter) {
    let request = omni_request(test, test_length);
    let mut s = connect(server);
    send_message(&mut s, &request.encode()).expect("send the request");
    if let VanishAfter::Request = when {
        return;
    }
    let m = match read_reply(&mut s, Duration::from_secs(10)) {
        Reply::Message(m) => m,
        other => panic!("{test}: no response: {other:?}"),
    };
    let response = OmniResponse::decode(&m);
    assert_eq!(response.serv_errno, 0, "{test} refused: {response:?}");
    let data_addr = std::net::SocketAddr::from(([127, 0, 0, 1], response.data_port as u16));
    let send_some = matches!(when, VanishAfter::SomeData);
    if request.protocol == 17 {
        let u = UdpSocket::bind("127.0.0.1:0").expect("udp bind");
        u.connect(data_addr).expect("udp connect");
        if send_some {
            for _ in 0..3 {
                let _ = u.send(&[7u8; 64]);
            }
        }
    } else {
        let mut d = TcpStream::connect_timeout(&data_addr, Duration::from_secs(5))
            .expect("connect to the data port");
        if send_some {
            let _ = d.set_write_timeout(Some(Duration::from_secs(2)));
            let _ = d.write_all(&[7u8; 100]);
        }
    }
}

/// Clients that vanish at each step of each kind of test: the server keeps
/// serving, and its threads come back down once the abandoned tests end.
#[test]
fn connect_and_vanish() {
    let server = Server::start("127.0.0.1");
    let base = threads(&server);
    let tests = [
        "TCP_RR",
        "TCP_STREAM",
        "TCP_MAERTS",
        "UDP_RR",
        "UDP_STREAM",
        "TCP_CRR",
    ];
    for test in tests {
        for when in [
            VanishAfter::Request,
            VanishAfter::DataConnect,
            VanishAfter::SomeData,
        ] {
            vanish(&server, test, 2, when);
        }
        still_serves(&server);
    }
    // Counted tests have no timer to end them: a vanished client must not
    // leave them waiting forever either.
    for test in ["TCP_RR", "UDP_RR", "UDP_STREAM", "TCP_CRR"] {
        vanish(&server, test, -1000, VanishAfter::SomeData);
    }
    still_serves(&server);
    // A timed test waits its length plus netperf's 4 s pad, so ~6 s here.
    let after = wait_threads_back(&server, base, 3, 20);
    assert!(
        after <= base + 3,
        "netserver threads did not come back: {base} before, {after} after"
    );
    still_serves(&server);
}

/// The soft limit on open files of this process.
fn fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: one valid rlimit out-parameter.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 256;
    }
    r.rlim_cur
}

/// 500 control connections at once, held for a second and closed: the
/// server still serves, its memory stays bounded and its threads go away.
#[test]
fn many_connections() {
    let server = Server::start("127.0.0.1");
    let base = threads(&server);
    // Both ends share this process's and the server's file limit; leave room
    // for the other tests of this binary running in parallel.
    let count = 500.min(fd_limit().saturating_sub(300) as usize).max(10);
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        match TcpStream::connect(("127.0.0.1", server.port)) {
            Ok(s) => held.push(s),
            Err(e) => panic!("connection {} of {count}: {e}", held.len()),
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let rss_held = proc_status(server.pid(), "VmRSS:").unwrap_or(0);
    drop(held);
    still_serves(&server);
    let rss_kb = proc_status(server.pid(), "VmRSS:").expect("VmRSS");
    eprintln!("{count} connections: VmRSS {rss_held} kB held, {rss_kb} kB after");
    assert!(
        rss_kb < 200 * 1024 && rss_held < 200 * 1024,
        "netserver uses {rss_kb} kB after {count} connections ({rss_held} kB while held)"
    );
    let after = wait_threads_back(&server, base, 3, 15);
    assert!(
        after <= base + 3,
        "netserver threads did not come back: {base} before, {after} after"
    );
}

/// A directory (and files beside it) removed when dropped, also when the
/// test fails.
struct Scratch(Vec<std::path::PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_dir_all(path);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// netserver's answer to an omni request naming `fill_file`: its errno.
fn fill_request_errno(server: &Server, fill_file: &str) -> i32 {
    let mut request = omni_request("TCP_MAERTS", 1);
    request.fill_file = fill_file.to_string();
    let mut s = connect(server);
    send_message(&mut s, &request.encode()).expect("send the request");
    match read_reply(&mut s, Duration::from_secs(10)) {
        Reply::Message(m) => OmniResponse::decode(&m).serv_errno,
        other => panic!("{fill_file:?}: no answer: {other:?}"),
    }
}

/// Fast-path extension words (`--gso`, `--gro`, `--skip-rx-copy`) another
/// client writes: absurd counts, the wrong test, segmented sends no kernel
/// takes. Each is refused with EINVAL before anything is opened, and the
/// same netserver then runs a plain test.
#[test]
fn fast_path_words_from_a_hostile_client_are_refused() {
    use netperf_ng::wire::extension::Extension;
    let server = Server::start("127.0.0.1");
    let errno = |test: &str, send_size: i32, ext: Extension| {
        let mut request = omni_request(test, 1);
        request.send_size = send_size;
        let mut m = request.encode();
        ext.encode_into(&mut m);
        let mut s = connect(&server);
        send_message(&mut s, &m).expect("send the request");
        match read_reply(&mut s, Duration::from_secs(10)) {
            Reply::Message(m) => OmniResponse::decode(&m).serv_errno,
            other => panic!("{test} {ext:?}: no answer: {other:?}"),
        }
    };
    let gso = |n| Extension {
        gso_segments: n,
        ..Default::default()
    };
    let cases = [
        ("UDP_MAERTS", 1000, gso(u32::MAX)),
        ("UDP_MAERTS", 1000, gso(65)),
        ("UDP_MAERTS", 1472, gso(64)),
        ("UDP_MAERTS", 9000, gso(2)),
        ("UDP_MAERTS", -1, gso(2)),
        ("TCP_MAERTS", 1000, gso(8)),
        ("UDP_RR", 1000, gso(8)),
        (
            "TCP_STREAM",
            1000,
            Extension {
                gro: true,
                ..Default::default()
            },
        ),
        (
            "UDP_STREAM",
            1000,
            Extension {
                skip_rx_copy: true,
                ..Default::default()
            },
        ),
        (
            "UDP_STREAM",
            1000,
            Extension {
                gro: true,
                mmsg_batch: 8,
                ..Default::default()
            },
        ),
    ];
    for (test, size, ext) in cases {
        assert_eq!(
            errno(test, size, ext),
            libc::EINVAL,
            "{test} {size} {ext:?}"
        );
    }
    let out = netperf(&server, &["-t", "TCP_RR", "-l", "-100"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Fill file names a client sends (netperf's `-F ,name`) stay inside the
/// operator's `-F` directory: no path, no `..`, no link out of it, to a
/// file or a directory; and a name with a line break in it cannot write a
/// line of its own into netserver's log.
#[test]
fn fill_names_stay_in_the_fill_directory_and_on_their_log_line() {
    let base = std::env::temp_dir().join(format!("ng-hostile-fill-{}", std::process::id()));
    let (dir, outside) = (base.join("fill"), base.join("secret"));
    let log = base.with_extension("log");
    let _scratch = Scratch(vec![base.clone(), log.clone()]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&outside, b"secret").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("escape")).unwrap();
    std::os::unix::fs::symlink(&base, dir.join("up")).unwrap();
    std::fs::write(dir.join("pattern"), b"0123456789").unwrap();
    let server = Server::start_logging(
        "127.0.0.1",
        &["-F", dir.to_str().unwrap(), "-v", "1"],
        &[],
        Some(&log),
    );
    let forged = "x\nnetserver 6.6.6.6:1 forged";
    for (name, errno) in [
        ("../secret", libc::EPERM),
        ("/etc/passwd", libc::EPERM),
        ("..", libc::EPERM),
        (".", libc::EPERM),
        ("up/secret", libc::EPERM),
        ("escape", libc::ENOENT),
        ("up", libc::ENOENT),
        ("missing", libc::ENOENT),
        (forged, libc::ENOENT),
    ] {
        assert_eq!(fill_request_errno(&server, name), errno, "{name:?}");
    }
    still_serves(&server);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        logged.contains("no fill file 'x netserver 6.6.6.6:1 forged'"),
        "{logged}"
    );
    assert!(
        !logged.lines().any(|l| l.starts_with("netserver 6.6.6.6")),
        "a client wrote a log line:\n{logged}"
    );
}

/// Offload requests from a client of a netserver that allows changes
/// (bare `--allow-offload-changes`: the client's route only), over one
/// control connection: a change of any other interface is refused naming
/// the rule, whatever the name — absent, absurd, or made to move a
/// terminal's cursor — and each refusal is one log line with the client's
/// address; malformed names are bad requests; the connection lives on.
/// (Only names that are not the loopback client's route, so nothing here
/// can change this host's interfaces.)
#[test]
fn offload_changes_beyond_the_clients_route_are_refused_by_the_rule() {
    use netperf_ng::wire::offload::Offload;
    use netperf_ng::wire::offload::{
        OffloadBits, OffloadOp, OffloadRequest, OffloadResponse, OffloadStatus,
    };
    let log = std::env::temp_dir().join(format!("ng-hostile-offload-{}.log", std::process::id()));
    let _scratch = Scratch(vec![log.clone()]);
    let server = Server::start_logging(
        "127.0.0.1",
        &["--allow-offload-changes=ngnosuch1"],
        &[],
        Some(&log),
    );
    let mut s = connect(&server);
    let mut ask = |name: &[u8]| -> OffloadResponse {
        let mut m = OffloadRequest {
            op: OffloadOp::Set,
            interface: None,
            changes: OffloadBits::from_pairs(&[(Offload::Gso, false)]),
        }
        .encode();
        // The name field, raw: 16 bytes at data byte 16.
        let at = netperf_ng::wire::message::DATA_OFFSET + 16;
        m.bytes[at..at + 16].fill(0);
        m.bytes[at..at + name.len()].copy_from_slice(name);
        send_message(&mut s, &m).expect("send the request");
        match read_reply(&mut s, Duration::from_secs(10)) {
            Reply::Message(m) => OffloadResponse::decode(&m).expect("an offload response"),
            other => panic!("{name:?}: no answer: {other:?}"),
        }
    };
    for name in [&b"ngnosuch0"[..], b"eth0", b"lo\x1b[2J", b"ngnosuch1x"] {
        let answer = ask(name);
        assert_eq!(answer.status, OffloadStatus::NotAllowed, "{name:?}");
        assert!(
            answer
                .text
                .starts_with("not the interface toward the client 127.0.0.1 (lo); ")
                && answer.text.ends_with("--allow-offload-changes=IF[,IF]"),
            "{name:?}: {}",
            answer.text
        );
    }
    for name in [
        &b"../../etc"[..],
        b"a/b",
        b"..",
        b"lo lo",
        b"0123456789abcdef",
        b"\xff\xfe",
    ] {
        assert_eq!(ask(name).status, OffloadStatus::BadRequest, "{name:?}");
    }
    // The listed interface passes the rule (and, absent, is named so).
    assert_eq!(ask(b"ngnosuch1").status, OffloadStatus::NoSuchInterface);
    drop(s);
    still_serves(&server);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let refusals: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains(" netserver 127.0.0.1:") && l.contains("refused offload change on "))
        .collect();
    assert_eq!(refusals.len(), 4, "{logged}");
    assert!(
        refusals[2].contains("refused offload change on lo [2J (gso off): not the interface"),
        "{logged}"
    );
    assert!(!logged.contains('\x1b'), "{logged:?}");
}

/// Every request field that sizes memory, time or ports, pushed past the
/// operator's limits: each is refused with its errno, or (ring widths,
/// which netperf fills with its own) capped; no request lifts a limit.
#[test]
fn no_request_field_lifts_an_operators_limit() {
    use netperf_ng::wire::omni::OmniRequest;
    let server = Server::start_with(
        "127.0.0.1",
        &[
            "--max-message",
            "64K",
            "--max-socket-buffer",
            "1M",
            "--max-ring-width",
            "8",
            "--max-ring-memory",
            "512K",
            "--max-test-length",
            "2",
            "--accept-timeout",
            "1",
        ],
    );
    type Edit = fn(&mut OmniRequest);
    let refused: [(&str, Edit, i32); 16] = [
        ("send size", |r| r.send_size = 65537, libc::EINVAL),
        ("receive size", |r| r.receive_size = i32::MAX, libc::EINVAL),
        ("request size", |r| r.request_size = 65537, libc::EINVAL),
        (
            "response size",
            |r| r.response_size = i32::MIN,
            libc::EINVAL,
        ),
        (
            "send buffer",
            |r| r.send_buf_size = (1 << 20) + 1,
            libc::EINVAL,
        ),
        (
            "receive buffer",
            |r| r.recv_buf_size = i32::MAX,
            libc::EINVAL,
        ),
        ("test length", |r| r.test_length = 3, libc::EINVAL),
        ("alignment", |r| r.send_alignment = u32::MAX, libc::EINVAL),
        ("offset", |r| r.recv_offset = 1 << 20, libc::EINVAL),
        ("data port", |r| r.data_port = 65536, libc::EINVAL),
        ("netperf port", |r| r.netperf_port = u32::MAX, libc::EINVAL),
        ("priority", |r| r.socket_prio = 1 << 20, libc::EINVAL),
        ("tos", |r| r.socket_tos = 256, libc::EINVAL),
        ("pacing", |r| r.interval_usecs = u32::MAX, libc::EINVAL),
        (
            "ring memory",
            |r| {
                r.receive_size = 65536;
                r.recv_width = 8;
            },
            libc::ENOMEM,
        ),
        ("address family", |r| r.ipfamily = 99, libc::EAFNOSUPPORT),
    ];
    let ask = |edit: Edit| -> OmniResponse {
        let mut request = omni_request("TCP_STREAM", 1);
        edit(&mut request);
        let mut s = connect(&server);
        send_message(&mut s, &request.encode()).expect("send the request");
        match read_reply(&mut s, Duration::from_secs(10)) {
            Reply::Message(m) => OmniResponse::decode(&m),
            other => panic!("no answer: {other:?}"),
        }
    };
    for (field, edit, errno) in refused {
        assert_eq!(ask(edit).serv_errno, errno, "{field}");
    }
    // Ring widths are netperf's own; netserver caps the ring it uses.
    let capped = ask(|r| {
        r.recv_width = u32::MAX;
        r.send_width = u32::MAX;
    });
    assert_eq!(capped.serv_errno, 0);
    assert!(
        (1..=8).contains(&capped.recv_width),
        "receive ring of {} buffers",
        capped.recv_width
    );
    still_serves(&server);
}

/// A stream test whose client never opens its data connection ends, at the
/// test's clock (length and netserver's pad), in an error for the client
/// (ETIMEDOUT), as stock netserver's interrupted accept does — never in a
/// result of zero bytes that netperf would print as a rate of 0.00.
#[test]
fn a_stream_test_without_its_data_connection_is_an_error_not_zeros() {
    use netperf_ng::wire::legacy::TcpStreamRequest;
    // The omni test ends by its clock (1 s and the 4 s pad, counted from
    // the answer); the legacy one, like stock's, starts its clock only
    // once connected, so the accept timeout ends it (60 s by default).
    let server = Server::start_with("127.0.0.1", &["--accept-timeout", "8"]);
    let legacy = TcpStreamRequest {
        cpu_bind: -1,
        send_buf_size: -1,
        recv_buf_size: -1,
        test_length: 1,
        ipfamily: omni::NF_INET as i32,
        ..Default::default()
    };
    let requests = [
        ("omni", omni_request("TCP_STREAM", 1).encode()),
        ("legacy", legacy.encode()),
    ];
    // Both at once: each waits out its clock or the accept timeout.
    std::thread::scope(|scope| {
        for (which, request) in &requests {
            let server = &server;
            scope.spawn(move || expect_no_connection_error(server, which, request));
        }
    });
    still_serves(&server);
}

/// Send `request`, take its response, never connect: the results must say
/// ETIMEDOUT.
fn expect_no_connection_error(server: &Server, which: &str, request: &Message) {
    use netperf_ng::wire::legacy::TcpStreamResults;
    let mut s = connect(server);
    send_message(&mut s, request).expect("send the request");
    let Reply::Message(response) = read_reply(&mut s, Duration::from_secs(30)) else {
        panic!("{which}: no response");
    };
    assert_eq!(response.serv_errno(), 0, "{which}: refused");
    // 1 s and the 4 s pad, with room for a busy machine.
    let Reply::Message(results) = read_reply(&mut s, Duration::from_secs(60)) else {
        panic!("{which}: no results");
    };
    let errno = match which {
        "omni" => results.serv_errno(),
        _ => TcpStreamResults::decode(&results).serv_errno,
    };
    assert_eq!(errno, libc::ETIMEDOUT, "{which}: results without an error");
}
