//! The one normalized description of a test (`TestSpec`) and the presets of
//! netperf's classic test names — netperf's "two routines to measure them
//! all" idea: every classic test is a direction, a protocol and a few sizes.
//! `cli` applies a preset and the command line's options to make a TestSpec.

use crate::net::resolve::Family;

/// Transport of the data connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
}

impl Protocol {
    pub fn ipproto(self) -> u32 {
        match self {
            Protocol::Tcp => libc::IPPROTO_TCP as u32,
            Protocol::Udp => libc::IPPROTO_UDP as u32,
        }
    }
    pub fn from_ipproto(p: u32) -> Option<Protocol> {
        match p as i32 {
            libc::IPPROTO_TCP => Some(Protocol::Tcp),
            libc::IPPROTO_UDP | libc::IPPROTO_UDPLITE => Some(Protocol::Udp),
            _ => None,
        }
    }
}

/// Classic test names this netperf runs, and how each presets a TestSpec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestName {
    TcpStream,
    TcpMaerts,
    TcpSendfile,
    UdpStream,
    TcpRr,
    UdpRr,
    TcpCrr,
    TcpCc,
    Omni,
    /// A Unix-domain test: `protocol` Tcp is its SOCK_STREAM, Udp its
    /// SOCK_DGRAM, and the data moves over a socket file on this host.
    Unix(UnixTest),
}

/// Direction bits as netperf uses them: what the *local* end does.
pub const XMIT: u32 = 0x2;
pub const RECV: u32 = 0x4;

/// What a classic test name sets before the test-specific options.
pub struct Preset {
    pub name: &'static str,
    pub test: TestName,
    pub protocol: Protocol,
    pub direction: u32,
    /// Whether -r sizes apply (default 1,1): request/response and connect tests.
    pub rr_sizes: bool,
    pub connection: bool,
    pub sendfile: bool,
}

impl Preset {
    /// The preset of a classic test name, in any case.
    pub fn lookup(name: &str) -> Option<&'static Preset> {
        PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
    }
}

const fn preset(
    name: &'static str,
    test: TestName,
    protocol: Protocol,
    direction: u32,
    connection: bool,
    sendfile: bool,
) -> Preset {
    let rr_sizes = direction == XMIT | RECV || connection;
    Preset {
        name,
        test,
        protocol,
        direction,
        rr_sizes,
        connection,
        sendfile,
    }
}

/// The classic names (matched case-insensitively, as netperf does): the
/// test, its protocol (for a Unix-domain test Tcp is SOCK_STREAM), the local
/// direction, whether it connects per transaction, whether it uses sendfile.
#[rustfmt::skip]
const PRESETS: &[Preset] = &[
    preset("TCP_STREAM", TestName::TcpStream, Protocol::Tcp, XMIT, false, false),
    preset("TCP_MAERTS", TestName::TcpMaerts, Protocol::Tcp, RECV, false, false),
    preset("TCP_SENDFILE", TestName::TcpSendfile, Protocol::Tcp, XMIT, false, true),
    // netperf 2.7.1 gives UDP_STREAM no direction: it becomes a send test
    // only when no -c made it a connection test (`-- -c` runs direction 0).
    preset("UDP_STREAM", TestName::UdpStream, Protocol::Udp, 0, false, false),
    preset("TCP_RR", TestName::TcpRr, Protocol::Tcp, XMIT | RECV, false, false),
    preset("UDP_RR", TestName::UdpRr, Protocol::Udp, XMIT | RECV, false, false),
    preset("TCP_CRR", TestName::TcpCrr, Protocol::Tcp, XMIT | RECV, true, false),
    preset("TCP_CC", TestName::TcpCc, Protocol::Tcp, 0, true, false),
    preset("OMNI", TestName::Omni, Protocol::Tcp, 0, false, false),
    preset("STREAM_STREAM", TestName::Unix(UnixTest::StreamStream), Protocol::Tcp, XMIT, false, false),
    preset("STREAM_RR", TestName::Unix(UnixTest::StreamRr), Protocol::Tcp, XMIT | RECV, false, false),
    preset("DG_STREAM", TestName::Unix(UnixTest::DgStream), Protocol::Udp, XMIT, false, false),
    preset("DG_RR", TestName::Unix(UnixTest::DgRr), Protocol::Udp, XMIT | RECV, false, false),
];

impl TestName {
    pub fn is_unix(self) -> bool {
        matches!(self, TestName::Unix(_))
    }

    pub fn lookup(name: &str) -> Option<TestName> {
        Preset::lookup(name).map(|p| p.test)
    }
}

pub use netperf_wire::unix::UnixTest;

/// How a test ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// After this many seconds (0 = until interrupted).
    Seconds(u32),
    /// After this many bytes (stream tests) or transactions (RR tests).
    Units(u64),
}

/// A fully-resolved test: what both ends need to know to run it.
#[derive(Debug, Clone)]
pub struct TestSpec {
    pub test: TestName,
    pub protocol: Protocol,
    /// Local direction bits (XMIT, RECV); 0 with `connection` = connect/close only.
    pub direction: u32,
    pub connection: bool,
    pub sendfile: bool,
    pub limit: Limit,
    /// Request and response sizes; -1 for stream tests.
    pub request_size: i32,
    pub response_size: i32,
    /// Local send/recv sizes per call (0 = choose from the socket buffer size).
    pub send_size: u32,
    pub recv_size: u32,
    /// Remote send/recv sizes (-1 = netserver chooses).
    pub remote_send_size: i32,
    pub remote_recv_size: i32,
    /// Socket buffer sizes requested (-1 = system default).
    pub local_send_buf: i32,
    pub local_recv_buf: i32,
    pub remote_send_buf: i32,
    pub remote_recv_buf: i32,
    pub local_nodelay: bool,
    pub remote_nodelay: bool,
    pub cork: bool,
    /// Extra requests kept in flight (-b); zero when -b was zero or negative.
    pub first_burst: u32,
    /// -b as given, which netperf reports (banner, BURST_SIZE) even when it
    /// is negative and so means no burst.
    pub first_burst_given: i32,
    pub routing_allowed: bool,
    pub keepalive: bool,
    /// Data connection addressing.
    pub data_family: Family,
    /// The family `-L`'s name resolves in: the test's -4/-6 or `-L
    /// name,fam`; Unspec takes the data connection's.
    pub data_local_family: Family,
    pub data_host: String,
    pub data_local: Option<String>,
    pub local_data_port: u16,
    pub remote_data_port: u16,
    /// `-- --data-ports MIN-MAX` (netperf-ng): the local data port comes
    /// from this range (`local_data_port`, when given, lies in it).
    pub local_data_ports: Option<crate::net::port_range::PortRange>,
    pub port_min: u16,
    pub port_max: u16,
    /// UDP_RR receive timeout in seconds (-e), for loss recovery.
    pub receive_timeout: Option<i32>,
    pub local_connected: bool,
    pub remote_connected: bool,
    pub local_send_align: u32,
    pub local_recv_align: u32,
    pub local_send_offset: u32,
    pub local_recv_offset: u32,
    pub remote_send_align: u32,
    pub remote_recv_align: u32,
    pub remote_send_offset: u32,
    pub remote_recv_offset: u32,
    pub send_width: u32,
    pub recv_width: u32,
    pub local_socket_prio: i32,
    pub remote_socket_prio: i32,
    pub local_socket_tos: i32,
    pub remote_socket_tos: i32,
    pub remote_cong_control: String,
    pub local_cong_control: Option<String>,
    pub keep_histogram: bool,
    /// UDP-Lite (-T udplite) instead of UDP: same datagram engine, full
    /// checksum coverage.
    pub udp_lite: bool,
    /// SO_MAX_PACING_RATE in bytes per second for the local data socket (-q).
    pub pacing_rate: Option<u32>,
    /// TCP_MAXSEG for the local data socket (-G).
    pub maxseg: Option<i32>,
    /// netperf's test options that travel as request flags and fields:
    /// -a (TCP_DEFER_ACCEPT), -B (IP_PKTINFO), -f (IP_MTU_DISCOVER), -F
    /// (TCP fast open), -V (copy avoidance).
    pub defer_accept: bool,
    pub use_pktinfo: bool,
    pub mtu_discover: bool,
    pub fastopen: bool,
    pub copy_avoidance: bool,
    /// -T named a protocol netperf 2.7.1 does not know: it asks for
    /// protocol 0 (IPPROTO_IP), the socket type's own.
    pub protocol_unnamed: bool,
    /// netperf-ng extensions asked for on the command line (both ends).
    pub extension: netperf_wire::extension::Extension,
    /// Keep each flow's work per interval (`--flow-samples`, with `--flows`).
    pub flow_samples: bool,
    /// A Unix-domain test's `-p dir`, checked and absolute: where netserver
    /// makes its socket file (None: its default).
    pub unix_dir: Option<std::path::PathBuf>,
    /// `-- --rate R`: requests leave on a schedule, not after the last
    /// response (netperf alone keeps it; nothing of it is on the wire).
    pub open_loop: Option<OpenLoop>,
}

/// An open-loop request/response test's schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLoop {
    /// Requests per second: above 0, at most [`OpenLoop::MAX_RATE`].
    pub rate: f64,
    /// Most requests in flight at once.
    pub max_inflight: u32,
}

impl OpenLoop {
    /// The highest rate `--rate` takes: far above what one thread can send.
    pub const MAX_RATE: f64 = 10_000_000.0;
    /// `--max-inflight`'s default: room for a 100 ms stall at 10,000 a second.
    pub const DEFAULT_MAX_INFLIGHT: u32 = 1024;
    /// The largest `--max-inflight`.
    pub const MAX_INFLIGHT: u32 = 1_000_000;
}

/// Why a command line does not describe a runnable test.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error("The test you requested ({0}) is unknown to this netperf.\nPlease verify that you have the correct test name, \nand that test family has been compiled into this netperf.")]
    UnknownTest(String),
    #[error("netperf: {0}")]
    Invalid(String),
}

/// IPPROTO_UDPLITE (Linux).
pub const IPPROTO_UDPLITE: u32 = 136;

/// What a -T name runs: the protocol and whether it is UDP-Lite, or the
/// name of a protocol we refuse.
type ProtocolChoice = Result<(Protocol, bool), &'static str>;

/// The -T names netperf knows.
const PROTOCOLS: &[(&str, ProtocolChoice)] = &[
    ("tcp", Ok((Protocol::Tcp, false))),
    ("udp", Ok((Protocol::Udp, false))),
    ("udplite", Ok((Protocol::Udp, true))),
    ("sctp", Err("SCTP")),
    ("sdp", Err("SDP (Sockets Direct Protocol)")),
    ("dccp", Err("DCCP")),
];

/// Parse -T: TCP, UDP and UDP-Lite run; SCTP, SDP and DCCP are refused with
/// the reason (and, for SCTP, whether this kernel has it at all).
pub fn parse_protocol(name: &str) -> Result<(Protocol, bool), SpecError> {
    let lower = name.to_ascii_lowercase();
    match PROTOCOLS.iter().find(|(n, _)| *n == lower) {
        Some((_, Ok(p))) => Ok(*p),
        Some((_, Err(what))) => {
            let kernel = if lower == "sctp" && !kernel_has_sctp() {
                " (and this kernel does not provide it: socket() says protocol not supported)"
            } else {
                ""
            };
            Err(SpecError::Invalid(format!(
                "-T {name}: {what} tests are not supported by netperf-ng{kernel}; use tcp, udp or udplite"
            )))
        }
        None => Err(SpecError::Invalid(format!(
            "-T {name}: unknown protocol; use tcp, udp or udplite"
        ))),
    }
}

fn kernel_has_sctp() -> bool {
    // SAFETY: socket() with constant arguments; the descriptor is closed at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_SCTP) };
    if fd >= 0 {
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
    }
    fd >= 0
}

impl TestSpec {
    /// The IP protocol number of the data connection.
    pub fn ip_protocol(&self) -> u32 {
        if self.protocol_unnamed {
            0
        } else if self.udp_lite {
            IPPROTO_UDPLITE
        } else {
            self.protocol.ipproto()
        }
    }

    pub fn is_rr(&self) -> bool {
        self.direction == (XMIT | RECV) || self.direction == 0
    }
    pub fn xmit(&self) -> bool {
        self.direction & XMIT != 0
    }
    pub fn recv(&self) -> bool {
        self.direction & RECV != 0
    }
}
