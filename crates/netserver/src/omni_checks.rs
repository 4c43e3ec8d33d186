//! What netserver accepts of an omni request: every field checked against
//! the operator's limits before anything is opened, and the one address a
//! test's datagrams may go to. A refusal carries netperf's errno and a
//! reason for the log.

use super::allow::AllowList;
use super::limits::{defaults, Limits};
use netperf_data::engine::gso;
use netperf_data::spec::Protocol;
use netperf_wire::extension::Extension;
use netperf_wire::omni::{self, OmniRequest};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A request field that cannot be honoured, and the errno sent back.
#[derive(Debug)]
pub struct Refusal {
    pub errno: i32,
    pub reason: String,
}

pub(crate) fn refuse(errno: i32, reason: impl Into<String>) -> Refusal {
    Refusal {
        errno,
        reason: reason.into(),
    }
}

/// A value over one of the operator's limits, named in the refusal.
fn over(
    what: &str,
    value: impl std::fmt::Display,
    option: &str,
    max: impl std::fmt::Display,
) -> Refusal {
    refuse(
        libc::EINVAL,
        format!("{what} {value} is over netserver's --{option} {max}"),
    )
}

/// Check every field before anything is allocated or opened.
pub fn validate(r: &OmniRequest, limits: &Limits) -> Result<Protocol, Refusal> {
    // Protocol 0 (IPPROTO_IP) is the socket type's own, as socket(2) takes
    // it: stock netperf sends it for a `-T` name it does not know, and
    // stock's netserver runs such a stream test over TCP (and refuses a
    // datagram one, "Operation not supported", which stock netperf would
    // wait on for ever).
    if (r.protocol, r.socket_type) == (0, omni::NST_DGRAM) {
        return Err(refuse(
            libc::EOPNOTSUPP,
            "protocol 0 on a datagram socket is not supported".to_string(),
        ));
    }
    let protocol = match (r.protocol, r.socket_type) {
        (0, omni::NST_STREAM) => Some(Protocol::Tcp),
        (p, _) => Protocol::from_ipproto(p),
    }
    .ok_or_else(|| {
        refuse(
            libc::EPROTONOSUPPORT,
            format!("protocol {} not supported", r.protocol),
        )
    })?;
    let expected_type = match protocol {
        Protocol::Tcp => omni::NST_STREAM,
        Protocol::Udp => omni::NST_DGRAM,
    };
    if r.socket_type != expected_type {
        return Err(refuse(
            libc::ESOCKTNOSUPPORT,
            format!(
                "socket type {} does not fit protocol {}",
                r.socket_type, r.protocol
            ),
        ));
    }
    if r.ipfamily != omni::NF_INET && r.ipfamily != omni::NF_INET6 {
        return Err(refuse(
            libc::EAFNOSUPPORT,
            format!("address family {} not supported", r.ipfamily),
        ));
    }
    if r.direction & !(omni::DIR_XMIT | omni::DIR_RECV) != 0 {
        return Err(refuse(
            libc::EINVAL,
            format!("invalid direction {:#x}", r.direction),
        ));
    }
    if r.data_port > 65535 || r.netperf_port > 65535 {
        return Err(refuse(libc::EINVAL, "port out of range"));
    }
    for (name, v) in [
        ("send size", r.send_size),
        ("receive size", r.receive_size),
        ("request size", r.request_size),
        ("response size", r.response_size),
    ] {
        if v > limits.max_message {
            return Err(over(name, v, "max-message", limits.max_message));
        }
        if v < -1 {
            return Err(refuse(libc::EINVAL, format!("{name} {v} is negative")));
        }
    }
    for (name, v) in [
        ("send buffer", r.send_buf_size),
        ("receive buffer", r.recv_buf_size),
    ] {
        if v > limits.max_socket_buffer {
            return Err(over(name, v, "max-socket-buffer", limits.max_socket_buffer));
        }
    }
    // Ring widths are not refused: netperf sends its own ring's width
    // (`-s 1M -m 64` makes 32769), also for a ring netserver does not use;
    // the plan caps the rings it does use at --max-ring-width.
    if r.send_alignment > defaults::MAX_ALIGNMENT
        || r.recv_alignment > defaults::MAX_ALIGNMENT
        || r.send_offset > defaults::MAX_OFFSET
        || r.recv_offset > defaults::MAX_OFFSET
    {
        return Err(refuse(libc::EINVAL, "alignment or offset out of range"));
    }
    if r.test_length > limits.max_test_seconds {
        return Err(over(
            "test length (s)",
            r.test_length,
            "max-test-length",
            limits.max_test_seconds,
        ));
    }
    if !(-1..=i32::from(u16::MAX)).contains(&r.socket_prio) || !(-1..=255).contains(&r.socket_tos) {
        return Err(refuse(
            libc::EINVAL,
            format!(
                "socket priority {} or TOS {} out of range",
                r.socket_prio, r.socket_tos
            ),
        ));
    }
    if !r.cong_control.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(refuse(
            libc::EINVAL,
            "congestion control name is not printable",
        ));
    }
    // A pacing interval over an hour is a mistake, not a test.
    if r.interval_usecs > 3_600_000_000 {
        return Err(refuse(
            libc::EINVAL,
            format!("pacing interval {} us out of range", r.interval_usecs),
        ));
    }

    Ok(protocol)
}

/// The fast-path extension words (`--gso`, `--gro`, `--skip-rx-copy`)
/// against the test they arrived with: a stream of their protocol, and a
/// segmented send netserver can make. netperf checks the same before
/// asking; a request that breaks them comes from another client.
pub fn fast_paths(r: &OmniRequest, protocol: Protocol, ext: &Extension) -> Result<(), Refusal> {
    let one_way = r.direction == omni::DIR_XMIT || r.direction == omni::DIR_RECV;
    let stream = one_way && r.flags & omni::flag::CONNECT_TEST == 0;
    let udp_stream =
        stream && protocol == Protocol::Udp && r.protocol != netperf_data::spec::IPPROTO_UDPLITE;
    let segmented = ext.gso_segments > 0;
    let rules = [
        (segmented && !udp_stream, "--gso outside a UDP stream test"),
        (ext.gro && !udp_stream, "--gro outside a UDP stream test"),
        (
            ext.skip_rx_copy && !(stream && protocol == Protocol::Tcp),
            "--skip-rx-copy outside a TCP stream test",
        ),
        // With --flows netserver only receives UDP streams (flows::check),
        // coalesced when asked.
        (
            (segmented || ext.gro) && ext.mmsg_batch > 1,
            "--gso/--gro with --mmsg",
        ),
    ];
    if let Some((_, why)) = rules.iter().find(|(broken, _)| *broken) {
        return Err(refuse(libc::EINVAL, *why));
    }
    if segmented && r.direction == omni::DIR_XMIT {
        let size = usize::try_from(r.send_size).unwrap_or(0);
        gso::check_size(ext.gso_segments, size).map_err(|why| refuse(libc::EINVAL, why))?;
    }
    Ok(())
}

/// The client's data address as the request gives it (netperf: its data
/// socket's getsockname, unspecified when it did not bind).
fn requested_data_addr(r: &OmniRequest) -> SocketAddr {
    let port = r.netperf_port as u16;
    let ip = if r.ipfamily == omni::NF_INET6 {
        IpAddr::V6(Ipv6Addr::from(r.netperf_ip))
    } else {
        let [a, b, c, d, ..] = r.netperf_ip;
        IpAddr::V4(Ipv4Addr::new(a, b, c, d))
    };
    SocketAddr::new(ip, port)
}

/// Where a test's datagrams go and whose interface is reported: the
/// client's data address, or, when it is unspecified, the control
/// connection's peer (stock netserver would send to 0.0.0.0, i.e. itself).
/// A UDP sender may aim only at the control peer or at a network --allow
/// names, so that netserver cannot be told to flood a third party.
pub(crate) fn client_data_addr(
    r: &OmniRequest,
    protocol: Protocol,
    control_peer: SocketAddr,
    allow: &AllowList,
) -> Result<SocketAddr, Refusal> {
    let mut addr = requested_data_addr(r);
    if addr.ip().is_unspecified() {
        addr.set_ip(control_peer.ip().to_canonical());
    }
    let sends_datagrams = protocol == Protocol::Udp && r.direction & omni::DIR_XMIT != 0;
    let is_control_peer = addr.ip().to_canonical() == control_peer.ip().to_canonical();
    let allowed = is_control_peer || (!allow.is_empty() && allow.permits(addr.ip()));
    if sends_datagrams && !allowed {
        return Err(refuse(
            libc::EACCES,
            format!(
                "UDP data address {} is not the control connection's {} (netserver --allow can permit its network)",
                addr.ip(),
                control_peer.ip().to_canonical()
            ),
        ));
    }
    Ok(addr)
}
