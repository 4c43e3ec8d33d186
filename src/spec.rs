//! The one normalized description of a test (`TestSpec`) and the presets that
//! turn netperf's classic test names into it — netperf's "two routines to
//! measure them all" idea: every classic test is a direction, a protocol and a
//! few sizes.

use crate::cli::config::{Config, Family};

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

struct Preset {
    name: &'static str,
    test: TestName,
    protocol: Protocol,
    direction: u32,
    /// Whether -r sizes apply (default 1,1): request/response and connect tests.
    rr_sizes: bool,
    connection: bool,
    sendfile: bool,
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
    preset("UDP_STREAM", TestName::UdpStream, Protocol::Udp, XMIT, false, false),
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
        PRESETS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .map(|p| p.test)
    }
}

pub use crate::wire::unix::UnixTest;

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
    /// netperf-ng extensions asked for on the command line (both ends).
    pub extension: crate::wire::extension::Extension,
    /// A Unix-domain test's `-p dir`, checked and absolute: where netserver
    /// makes its socket file (None: its default).
    pub unix_dir: Option<std::path::PathBuf>,
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
fn parse_protocol(name: &str) -> Result<(Protocol, bool), SpecError> {
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
        if self.udp_lite {
            IPPROTO_UDPLITE
        } else {
            self.protocol.ipproto()
        }
    }

    /// Resolve a parsed command line into a test, applying the classic preset
    /// first and the test-specific options on top, as netperf does.
    pub fn from_config(cfg: &Config) -> Result<TestSpec, SpecError> {
        let g = &cfg.global;
        let t = &cfg.test;
        let preset = PRESETS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(&g.test_name))
            .ok_or_else(|| SpecError::UnknownTest(g.test_name.clone()))?;

        let mut protocol = preset.protocol;
        let mut udp_lite = false;
        if let Some(p) = &t.protocol {
            (protocol, udp_lite) = parse_protocol(p)?;
        }
        if let Some(st) = &t.socket_type {
            let wanted = match st.to_ascii_lowercase().as_str() {
                "stream" => Protocol::Tcp,
                "dgram" => Protocol::Udp,
                other => {
                    return Err(SpecError::Invalid(format!(
                        "unsupported socket type '{other}'"
                    )))
                }
            };
            if t.protocol.is_none() {
                protocol = wanted;
            }
        }
        let connection = preset.connection || t.connection_test;
        let mut direction = preset.direction;
        if let Some(mask) = t.direction_mask {
            direction = mask;
        } else if t.implied_direction != 0 {
            direction = t.implied_direction;
        }
        if direction == 0 && !connection {
            direction = XMIT;
        }
        let is_rr = direction == (XMIT | RECV) || direction == 0;
        let (mut request_size, mut response_size) = if preset.rr_sizes { (1, 1) } else { (-1, -1) };
        if let Some(r) = t.request_size {
            request_size = r as i32;
        }
        if let Some(r) = t.response_size {
            response_size = r as i32;
        }
        if is_rr && direction != 0 {
            if request_size < 0 {
                request_size = 1;
            }
            if response_size < 0 {
                response_size = 1;
            }
        }
        if t.sequence {
            let short = |size: i64| (0..8).contains(&size);
            if protocol != Protocol::Udp {
                return Err(SpecError::Invalid(
                    "--seq numbers UDP datagrams; use it with a UDP test".into(),
                ));
            }
            if is_rr && (short(request_size.into()) || short(response_size.into())) {
                return Err(SpecError::Invalid(
                    "--seq needs requests and responses of at least 8 bytes (e.g. -r 8)".into(),
                ));
            }
            if t.local_send_size.is_some_and(|m| m < 8) || t.remote_send_size.is_some_and(|m| m < 8)
            {
                return Err(SpecError::Invalid(
                    "--seq needs messages of at least 8 bytes (-m 8 or more)".into(),
                ));
            }
        }
        if let (Some(range), Some(port)) = (t.data_ports, t.local_data_port) {
            if port != 0 && !range.contains(port) {
                return Err(SpecError::Invalid(format!(
                    "-P local port {port} is outside --data-ports {range}"
                )));
            }
        }
        let limit = if g.test_length > 0 {
            Limit::Seconds(g.test_length.min(i64::from(i32::MAX)) as u32)
        } else if g.test_length < 0 {
            // DG_STREAM counts bytes and ends with a zero-length datagram.
            if protocol == Protocol::Udp && !is_rr && !preset.test.is_unix() {
                return Err(SpecError::Invalid(
                    "a byte count (-l negative) is not valid for an unreliable UDP stream test"
                        .into(),
                ));
            }
            Limit::Units(g.test_length.unsigned_abs())
        } else {
            Limit::Seconds(0)
        };
        if connection && direction == 0 && limit == Limit::Seconds(0) {
            return Err(SpecError::Invalid(
                "-l 0 (until stopped) is not available for TCP_CC: nothing in a connect/close \
                 test tells the netserver that it ended; use -l SECONDS or a count"
                    .into(),
            ));
        }
        let routing_allowed = t
            .routing_allowed
            .unwrap_or(protocol != Protocol::Udp || is_rr);
        let data_family = match (t.data_family, g.host_family) {
            (Family::Unspec, f) => f,
            (f, _) => f,
        };
        // --latency-histogram writes the same per-operation times -j keeps.
        if preset.test.is_unix() {
            // What only TCP/UDP sockets do: refused, never silently ignored.
            let tcp_udp_only = [
                ("--zerocopy", t.zerocopy),
                ("--seq", t.sequence),
                ("--busy-poll", t.busy_poll_usecs.is_some()),
                ("--data-ports", t.data_ports.is_some()),
            ];
            if let Some((option, _)) = tcp_udp_only.iter().find(|(_, given)| *given) {
                return Err(SpecError::Invalid(format!(
                    "{option} is for TCP and UDP tests; {} moves its data over an AF_UNIX socket",
                    g.test_name
                )));
            }
        }
        let unix_dir = match &t.unix_dir {
            Some(text) => {
                Some(crate::net::unix_path::resolve_user_dir(text).map_err(SpecError::Invalid)?)
            }
            None => None,
        };
        let keep_histogram = g.verbosity > 1 || g.keep_statistics || t.latency_histogram.is_some();
        Ok(TestSpec {
            test: preset.test,
            protocol,
            direction,
            connection,
            sendfile: preset.sendfile,
            limit,
            request_size,
            response_size,
            send_size: t.local_send_size.unwrap_or(0),
            recv_size: t.local_recv_size.unwrap_or(0),
            remote_send_size: t.remote_send_size.map_or(-1, |v| v as i32),
            remote_recv_size: t.remote_recv_size.map_or(-1, |v| v as i32),
            local_send_buf: t.local_send_buf.unwrap_or(-1),
            local_recv_buf: t.local_recv_buf.unwrap_or(-1),
            remote_send_buf: t.remote_send_buf.unwrap_or(-1),
            remote_recv_buf: t.remote_recv_buf.unwrap_or(-1),
            local_nodelay: t.local_nodelay,
            remote_nodelay: t.remote_nodelay,
            cork: t.cork,
            first_burst: t.first_burst.max(0) as u32,
            first_burst_given: t.first_burst,
            routing_allowed,
            keepalive: g.keepalive,
            data_family,
            data_host: t.data_host.clone().unwrap_or_else(|| g.host.clone()),
            data_local: t.data_local.clone(),
            local_data_port: t.local_data_port.unwrap_or(0),
            remote_data_port: t.remote_data_port.unwrap_or(0),
            local_data_ports: t.data_ports,
            port_min: t.port_min.unwrap_or(5000),
            port_max: t.port_max.unwrap_or(65535),
            receive_timeout: t.receive_timeout,
            local_connected: t.local_connected,
            remote_connected: t.remote_connected,
            local_send_align: g.local_send_align,
            local_recv_align: g.local_recv_align,
            local_send_offset: g.local_send_offset,
            local_recv_offset: g.local_recv_offset,
            remote_send_align: g.remote_send_align,
            remote_recv_align: g.remote_recv_align,
            remote_send_offset: g.remote_send_offset,
            remote_recv_offset: g.remote_recv_offset,
            send_width: g.send_width,
            recv_width: g.recv_width,
            local_socket_prio: g.local_socket_prio,
            remote_socket_prio: g.remote_socket_prio,
            local_socket_tos: g.local_socket_tos,
            remote_socket_tos: g.remote_socket_tos,
            remote_cong_control: t.remote_cong_control.clone().unwrap_or_default(),
            local_cong_control: t.local_cong_control.clone(),
            keep_histogram,
            maxseg: t.maxseg,
            pacing_rate: t.pacing_rate,
            udp_lite,
            extension: crate::wire::extension::Extension {
                mmsg_batch: t.mmsg_batch.unwrap_or(0),
                zerocopy: t.zerocopy,
                busy_poll_usecs: t.busy_poll_usecs,
                system_facts: false,
                sequence: t.sequence,
                interface_counters: false,
            },
            unix_dir,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> TestSpec {
        let mut cfg = Config {
            global: Default::default(),
            test: Default::default(),
            unsupported: vec![],
        };
        cfg.global.test_name = name.into();
        TestSpec::from_config(&cfg).unwrap()
    }

    #[test]
    fn presets_match_netperf() {
        let s = spec("tcp_stream");
        assert_eq!(
            (s.direction, s.request_size, s.protocol),
            (XMIT, -1, Protocol::Tcp)
        );
        let s = spec("UDP_STREAM");
        assert!(!s.routing_allowed);
        let s = spec("TCP_CRR");
        assert!(s.connection && s.is_rr() && s.request_size == 1);
        let s = spec("TCP_CC");
        assert!(s.connection && s.direction == 0 && s.request_size == 1);
        let s = spec("UDP_RR");
        assert!(s.routing_allowed && s.protocol == Protocol::Udp);
    }

    #[test]
    fn unknown_test_names_the_test() {
        let mut cfg = Config {
            global: Default::default(),
            test: Default::default(),
            unsupported: vec![],
        };
        cfg.global.test_name = "BOGUS_TEST".into();
        let e = TestSpec::from_config(&cfg).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("The test you requested (BOGUS_TEST) is unknown"));
    }
}
