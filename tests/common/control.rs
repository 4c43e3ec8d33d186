//! A raw control-connection client for the hostile-client tests: connect,
//! send whole or partial messages, read one reply with a deadline, build the
//! omni requests our netperf would send, and read netserver's thread and fd
//! counts from /proc.

use super::{first_line, numbers, run_ok, Server};
use netperf_ng::wire::omni::{self, OmniRequest};
use netperf_ng::wire::{Message, MESSAGE_LEN};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub fn connect(server: &Server) -> TcpStream {
    let addr = (server.host.as_str(), server.port);
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&addr)
        .expect("resolve")
        .next()
        .expect("an address");
    TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect to netserver")
}

/// What a read of at most one control message saw.
#[derive(Debug)]
pub enum Reply {
    /// A whole 656-byte message.
    Message(Box<Message>),
    /// The server closed (or reset) after this many bytes.
    Closed,
    /// Nothing more within the limit, after this many bytes.
    Silent(usize),
}

/// Read until one whole message, a close, or `limit` has passed.
pub fn read_reply(s: &mut TcpStream, limit: Duration) -> Reply {
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; MESSAGE_LEN];
    let mut got = 0;
    // Bounded: each pass either reads bytes or waits out the deadline.
    for _ in 0..10_000 {
        if got == MESSAGE_LEN {
            return Reply::Message(Box::new(Message::from_bytes(buf)));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Reply::Silent(got);
        }
        let _ = s.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        match s.read(&mut buf[got..]) {
            Ok(0) => return Reply::Closed,
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return Reply::Closed,
        }
    }
    Reply::Silent(got)
}

/// The server still runs a normal test.
pub fn still_serves(server: &Server) {
    let out = run_ok(server, &["-t", "TCP_RR", "-l", "-200", "-P", "0"]);
    let row = numbers(first_line(&out));
    assert!(row.len() >= 6, "no TCP_RR result row in: {out}");
}

/// A numeric field (`Threads:`, `VmRSS:`) of /proc/<pid>/status.
pub fn proc_status(pid: u32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// How many files netserver has open.
pub fn open_fds(server: &Server) -> u64 {
    std::fs::read_dir(format!("/proc/{}/fd", server.pid()))
        .map(|d| d.count() as u64)
        .expect("netserver's /proc fd directory")
}

pub fn threads(server: &Server) -> u64 {
    proc_status(server.pid(), "Threads:").expect("netserver's /proc status")
}

/// Poll (bounded, about `secs`) until the server is back to at most
/// `base + slack` threads; return the last count seen.
pub fn wait_threads_back(server: &Server, base: u64, slack: u64, secs: u64) -> u64 {
    let mut n = threads(server);
    for _ in 0..secs * 10 {
        if n <= base + slack {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        n = threads(server);
    }
    n
}

/// An omni request as our netperf builds one for a classic test, from
/// netserver's point of view, with a timed length in seconds (> 0) or a
/// negated transaction/byte count.
pub fn omni_request(test: &str, test_length: i32) -> OmniRequest {
    let (protocol, socket_type, direction, flags) = match test {
        "TCP_STREAM" => (6, omni::NST_STREAM, omni::DIR_RECV, 0),
        "TCP_MAERTS" => (6, omni::NST_STREAM, omni::DIR_XMIT, 0),
        "TCP_RR" => (6, omni::NST_STREAM, omni::DIR_XMIT | omni::DIR_RECV, 0),
        "TCP_CRR" => (
            6,
            omni::NST_STREAM,
            omni::DIR_XMIT | omni::DIR_RECV,
            omni::flag::CONNECT_TEST,
        ),
        "UDP_STREAM" => (17, omni::NST_DGRAM, omni::DIR_RECV, 0),
        "UDP_MAERTS" => (17, omni::NST_DGRAM, omni::DIR_XMIT, 0),
        "UDP_RR" => (17, omni::NST_DGRAM, omni::DIR_XMIT | omni::DIR_RECV, 0),
        other => panic!("no omni preset for {other}"),
    };
    let rr = direction == omni::DIR_XMIT | omni::DIR_RECV;
    let (size, rr_size) = if rr { (-1, 1) } else { (1024, -1) };
    let mut localhost = [0u8; 16];
    localhost[..4].copy_from_slice(&[127, 0, 0, 1]);
    OmniRequest {
        cpu_bind: -1,
        send_buf_size: -1,
        send_size: size,
        send_width: 1,
        request_size: rr_size,
        recv_buf_size: -1,
        receive_size: size,
        recv_width: 1,
        response_size: rr_size,
        flags,
        test_length,
        send_dirty_count: -1,
        recv_dirty_count: -1,
        recv_clean_count: -1,
        ipfamily: omni::NF_INET,
        socket_type,
        protocol,
        direction,
        netperf_ip: localhost,
        netserver_ip: localhost,
        ..Default::default()
    }
}

pub fn send_message(s: &mut TcpStream, m: &Message) -> std::io::Result<()> {
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(&m.bytes)
}
