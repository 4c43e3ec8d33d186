//! Outcome builders shared by the output tests: netperf's default socket
//! sizes on loopback with the counters a transcript line implies, the
//! output options of a command line, and the banner of a test from 0.0.0.0
//! to 127.0.0.1.

use super::banner::{Banner, BannerEndpoint};
use super::classic::ClassicOptions;
use super::layouts::ClassicKind;
use netperf_data::measure::outcome::{CpuUsage, Outcome, SideStats};

/// The classic test and the output options a netperf command line gives:
/// the test of -t, or of a leading test name (netperf's default TCP_STREAM
/// without either), and -f, -v, -c, -C, -P, -B before any "--".
pub(super) fn run_options(command: &str) -> (ClassicKind, ClassicOptions) {
    let words: Vec<&str> = command
        .split_whitespace()
        .take_while(|w| *w != "--")
        .collect();
    let value = |flag: &str| {
        let at = words.iter().position(|w| *w == flag)?;
        words.get(at + 1).copied()
    };
    let kind = value("-t")
        .or(words.first().copied())
        .and_then(ClassicKind::from_test_name)
        .unwrap_or(ClassicKind::TcpStream);
    let default_unit = if kind.is_request_response() { 'x' } else { 'm' };
    let opts = ClassicOptions {
        unit: value("-f")
            .and_then(|f| f.chars().next())
            .unwrap_or(default_unit),
        verbosity: value("-v").map_or(1, |v| v.parse().expect("a -v level")),
        local_cpu: words.contains(&"-c"),
        remote_cpu: words.contains(&"-C"),
        print_headers: value("-P") != Some("0"),
        brand: value("-B").map(Into::into),
        ..ClassicOptions::default()
    };
    (kind, opts)
}

/// The banner of an IPv4 test from the wildcard address to 127.0.0.1.
pub(super) fn ipv4_banner(title: &str) -> Banner {
    Banner {
        title: title.to_string(),
        local: BannerEndpoint {
            name: "0.0.0.0".into(),
            address: "0.0.0.0".into(),
            port: 0,
            family: "AF_INET".into(),
        },
        remote: BannerEndpoint {
            name: "127.0.0.1".into(),
            address: "127.0.0.1".into(),
            port: 0,
            family: "AF_INET".into(),
        },
        ..Banner::default()
    }
}

pub(super) fn side() -> SideStats {
    SideStats {
        send_buf_req: -1,
        recv_buf_req: -1,
        send_size: -1,
        recv_size: -1,
        retransmits: -1,
        ..SideStats::default()
    }
}

pub(super) fn cpu(util: f64, num_cpus: u32) -> Option<CpuUsage> {
    Some(CpuUsage {
        util,
        num_cpus,
        method: 'S',
        ..CpuUsage::default()
    })
}

/// `o` with the CPU figures of each end given (two CPUs, method 'S').
pub(super) fn with_cpu(mut o: Outcome, local: Option<f64>, remote: Option<f64>) -> Outcome {
    o.local.cpu = local.and_then(|u| cpu(u, 2));
    o.remote.cpu = remote.and_then(|u| cpu(u, 2));
    o
}

/// TCP_STREAM defaults: 131072 remote receive buffer, 16384 send buffer and size.
pub(super) fn stream(elapsed: f64, bytes: u64) -> Outcome {
    let mut o = Outcome {
        elapsed,
        request_size: -1,
        response_size: -1,
        ..Outcome::default()
    };
    o.local = SideStats {
        send_buf: 16384,
        recv_buf: 131072,
        send_size: 16384,
        ..side()
    };
    o.remote = SideStats {
        send_buf: 16384,
        recv_buf: 131072,
        recv_size: 131072,
        ..side()
    };
    o.local.bytes_sent = bytes;
    o.remote.bytes_received = bytes;
    o.transport_mss = -1;
    o
}

/// TCP_MAERTS: the remote sends, we receive.
pub(super) fn maerts(elapsed: f64, bytes: u64) -> Outcome {
    let mut o = stream(elapsed, 0);
    o.local.bytes_sent = 0;
    o.local.send_size = -1;
    o.local.bytes_received = bytes;
    o.remote.send_size = 16384;
    o.remote.bytes_sent = bytes;
    o
}

/// An RR test with netperf's default sizes on TCP (16384/131072 buffers).
pub(super) fn rr(elapsed: f64, transactions: u64) -> Outcome {
    let mut o = Outcome {
        elapsed,
        request_size: 1,
        response_size: 1,
        ..Outcome::default()
    };
    o.local = SideStats {
        send_buf: 16384,
        recv_buf: 131072,
        ..side()
    };
    o.remote = SideStats {
        send_buf: 16384,
        recv_buf: 131072,
        ..side()
    };
    for s in [&mut o.local, &mut o.remote] {
        s.transactions = transactions;
        s.bytes_sent = transactions;
        s.bytes_received = transactions;
        s.send_calls = transactions;
        s.recv_calls = transactions;
    }
    o.local.send_align = 8;
    o.local.recv_align = 8;
    o.remote.send_align = 8;
    o.remote.recv_align = 8;
    o
}

pub(super) fn udp_buffers(o: &mut Outcome) {
    for s in [&mut o.local, &mut o.remote] {
        s.send_buf = 212992;
        s.recv_buf = 212992;
    }
}

pub(super) fn udp_stream(elapsed: f64, sent: u64, received: u64) -> Outcome {
    let mut o = stream(elapsed, 0);
    udp_buffers(&mut o);
    o.local.send_size = 1024;
    o.local.send_calls = sent;
    o.local.bytes_sent = sent * 1024;
    o.remote.recv_calls = received;
    o.remote.bytes_received = received * 1024;
    o
}
