//! A parsed command line as a test: netperf's classic preset for the test
//! name first, then the test-specific options on top (`Config::test_spec`).

use super::config::{Config, GlobalOptions, TestOptions};
use netperf_data::net::resolve::Family;
use netperf_data::spec::{
    parse_protocol, Limit, OpenLoop, Preset, Protocol, SpecError, TestName, TestSpec, RECV, XMIT,
};

/// What the preset and the test-specific options decide together: the shape
/// of the test, before the options that only travel along are copied in.
struct Shape {
    test: TestName,
    protocol: Protocol,
    udp_lite: bool,
    connection: bool,
    direction: u32,
    /// A request/response test: both directions, or connect/close only.
    is_rr: bool,
    sendfile: bool,
    request_size: i32,
    response_size: i32,
}

impl Config {
    /// Resolve a parsed command line into a test, applying the classic preset
    /// first and the test-specific options on top, as netperf does.
    pub fn test_spec(&self) -> Result<TestSpec, SpecError> {
        let (g, t) = (&self.global, &self.test);
        let preset = Preset::lookup(&g.test_name)
            .ok_or_else(|| SpecError::UnknownTest(g.test_name.clone()))?;
        let (protocol, udp_lite) = protocol(t, preset.protocol)?;
        let connection = preset.connection || t.connection_test;
        let direction = direction(t, preset.direction, connection);
        // netperf's NETPERF_IS_RR and NETPERF_CC: by the two bits alone, as
        // -d keeps whatever other bits it was given.
        let both = direction & (XMIT | RECV) == XMIT | RECV;
        let is_rr = both || direction & (XMIT | RECV) == 0;
        let (request_size, response_size) = rr_sizes(t, preset.rr_sizes, direction, both);
        // The Unix-domain tests check their sizes against their own limit.
        if !preset.test.is_unix() {
            check_local_sizes(g, t, direction, both)?;
        }
        let shape = Shape {
            test: preset.test,
            protocol,
            udp_lite,
            connection,
            direction,
            is_rr,
            sendfile: preset.sendfile,
            request_size,
            response_size,
        };
        check_sequence(t, &shape)?;
        let fast = super::fast_paths::Shape {
            protocol: shape.protocol,
            udp_lite: shape.udp_lite,
            stream: !shape.is_rr && !shape.connection,
            direction: shape.direction,
            unix: shape.test.is_unix(),
        };
        super::fast_paths::check(g, t, &fast)?;
        check_data_ports(t)?;
        let limit = limit(g)?;
        check_until_stopped(&shape, limit)?;
        check_flows(g, t, &shape, limit)?;
        check_mptcp(g, t, &shape)?;
        check_notsent_lowat(g, t, &shape)?;
        check_cork(t, &shape)?;
        check_open_loop(g, t, &shape, limit)?;
        if shape.test.is_unix() {
            refuse_tcp_udp_only(g, t)?;
        }
        let unix_dir = match &t.unix_dir {
            Some(text) => Some(
                netperf_data::net::unix_path::resolve_user_dir(text).map_err(SpecError::Invalid)?,
            ),
            None => None,
        };
        Ok(self.assemble(shape, limit, unix_dir))
    }

    /// The test: its shape and end, and every option that only travels along.
    fn assemble(
        &self,
        shape: Shape,
        limit: Limit,
        unix_dir: Option<std::path::PathBuf>,
    ) -> TestSpec {
        let (g, t) = (&self.global, &self.test);
        // netperf's safety latch keeps plain UDP streams (not UDP-Lite) off
        // gateways unless -R says otherwise.
        let routing_allowed = t
            .routing_allowed
            .unwrap_or(shape.protocol != Protocol::Udp || shape.udp_lite || shape.is_rr);
        // The remote data family: the test's -4/-6 or -H name,family, the
        // last given (netperf's remote_data_family).
        let data_family = match (t.data_host_family, g.host_family) {
            (Family::Unspec, f) => f,
            (f, _) => f,
        };
        let open_tcp = t.rate.is_some() && shape.protocol == Protocol::Tcp;
        // --latency-histogram writes the same per-operation times -j keeps.
        let keep_histogram = g.verbosity > 1 || g.keep_statistics || t.latency_histogram.is_some();
        // The sender of a many-flow TCP bulk test (ours for XMIT, netserver
        // for RECV) sends BULK_MESSAGE unless -m says otherwise.
        let bulk = t.flows.is_some()
            && shape.protocol == Protocol::Tcp
            && !shape.is_rr
            && !shape.connection;
        let bulk_size = |sender: u32| {
            (bulk && shape.direction & sender != 0)
                .then_some(netperf_data::engine::flows::BULK_MESSAGE)
        };
        TestSpec {
            test: shape.test,
            protocol: shape.protocol,
            direction: shape.direction,
            connection: shape.connection,
            sendfile: shape.sendfile,
            limit,
            request_size: shape.request_size,
            response_size: shape.response_size,
            send_size: local_size(t.local_send_size.or(bulk_size(XMIT))),
            recv_size: local_size(t.local_recv_size),
            remote_send_size: t
                .remote_send_size
                .or(bulk_size(RECV))
                .map_or(-1, |v| v as i32),
            remote_recv_size: t.remote_recv_size.map_or(-1, |v| v as i32),
            local_send_buf: t.local_send_buf.unwrap_or(-1),
            local_recv_buf: t.local_recv_buf.unwrap_or(-1),
            remote_send_buf: t.remote_send_buf.unwrap_or(-1),
            remote_recv_buf: t.remote_recv_buf.unwrap_or(-1),
            // An open loop pipelines requests: Nagle would hold a request (or
            // netserver's response) behind an unacknowledged one until a
            // delayed ACK, and keep the far end one response behind for good.
            local_nodelay: t.local_nodelay || open_tcp,
            remote_nodelay: t.remote_nodelay || open_tcp,
            cork: t.cork,
            first_burst: t.first_burst.max(0) as u32,
            first_burst_given: t.first_burst,
            routing_allowed,
            keepalive: g.keepalive,
            data_family,
            data_local_family: t.data_local_family,
            data_host: t.data_host.clone().unwrap_or_else(|| g.host.clone()),
            // netperf binds the data connection to the global -L's host
            // unless the test names its own data endpoints (-H or -L).
            data_local: t.data_local.clone().or_else(|| {
                t.data_host
                    .is_none()
                    .then(|| g.local_host.clone())
                    .flatten()
            }),
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
            defer_accept: t.defer_accept,
            use_pktinfo: t.use_pktinfo,
            mtu_discover: t.mtu_discover,
            fastopen: t.fastopen,
            copy_avoidance: t.copy_avoidance,
            protocol_unnamed: t.protocol_unnamed,
            pacing_rate: t.pacing_rate,
            udp_lite: shape.udp_lite,
            extension: netperf_wire::extension::Extension {
                mmsg_batch: t.mmsg_batch.unwrap_or(0),
                zerocopy: t.zerocopy,
                mptcp: t.mptcp,
                busy_poll_usecs: t.busy_poll_usecs,
                system_facts: false,
                sequence: t.sequence,
                interface_counters: false,
                gso_segments: t.gso_segments.unwrap_or(0),
                gro: t.gro,
                skip_rx_copy: t.skip_rx_copy,
                flows: t.flows.unwrap_or(0),
                flow_threads: t.flows.map_or(0, |n| {
                    netperf_data::engine::flows::threads_for(n, t.flow_threads, bulk)
                }),
                echo_sequence: t.rate.is_some() && shape.protocol == Protocol::Udp,
                // Decided with the output (what shows the netserver's figures).
                tcp_info_ms: None,
                notsent_lowat: t.notsent_lowat,
            },
            unix_dir,
            flow_samples: t.flow_samples.is_some(),
            open_loop: t.rate.map(|rate| OpenLoop {
                rate,
                max_inflight: t.max_inflight.unwrap_or(OpenLoop::DEFAULT_MAX_INFLIGHT),
            }),
        }
    }
}

/// The protocol (and whether it is UDP-Lite): `-T` wins over the preset's,
/// and `-t` stands in for it when `-T` is absent.
fn protocol(t: &TestOptions, preset: Protocol) -> Result<(Protocol, bool), SpecError> {
    let (mut protocol, mut udp_lite) = (preset, false);
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
    Ok((protocol, udp_lite))
}

/// The direction bits: `-d`, else what the sizes implied, else the preset's;
/// a test that is no connect/close test moves data somewhere (XMIT).
fn direction(t: &TestOptions, preset: u32, connection: bool) -> u32 {
    let mut direction = preset;
    if let Some(mask) = t.direction_mask {
        direction = mask;
    } else if t.implied_direction != 0 {
        direction = t.implied_direction;
    }
    if direction == 0 && !connection {
        direction = XMIT;
    }
    direction
}

/// The request and response sizes: `-r` over the preset's (1,1 or -1,-1),
/// and at least 1 byte each way for a request/response test.
fn rr_sizes(t: &TestOptions, preset_rr_sizes: bool, direction: u32, is_rr: bool) -> (i32, i32) {
    let (mut request_size, mut response_size) = if preset_rr_sizes { (1, 1) } else { (-1, -1) };
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
    (request_size, response_size)
}

/// `--seq` numbers UDP datagrams, so it needs UDP and room for the number.
fn check_sequence(t: &TestOptions, shape: &Shape) -> Result<(), SpecError> {
    if !t.sequence {
        return Ok(());
    }
    let short = |size: i64| (0..8).contains(&size);
    if shape.protocol != Protocol::Udp {
        return Err(SpecError::Invalid(
            "--seq numbers UDP datagrams; use it with a UDP test".into(),
        ));
    }
    if shape.is_rr && (short(shape.request_size.into()) || short(shape.response_size.into())) {
        return Err(SpecError::Invalid(
            "--seq needs requests and responses of at least 8 bytes (e.g. -r 8)".into(),
        ));
    }
    if t.local_send_size.is_some_and(|m| m < 8) || t.remote_send_size.is_some_and(|m| m < 8) {
        return Err(SpecError::Invalid(
            "--seq needs messages of at least 8 bytes (-m 8 or more)".into(),
        ));
    }
    Ok(())
}

/// A local message size as the engine takes it: netperf's `int` (`-m -1`
/// is its "default"), where 0 and below choose the default.
fn local_size(size: Option<u32>) -> u32 {
    size.map_or(0, |bits| (bits as i32).max(0) as u32)
}

/// The local message sizes and ring widths stock netperf cannot run with,
/// where the test uses them (an RR test ignores -m and -M, a receiving
/// one its send ring: stock sends its request and runs): a size from
/// [`MESSAGE_LIMIT`](super::checked::MESSAGE_LIMIT) on (-r's sizes too
/// wherever that end sends or receives: a positive one sizes its buffers),
/// below -1 (its "default"; it aborts or fails to allocate) for -m, -M and
/// a request/response test's -r, and a width below 0 (it aborts).
fn check_local_sizes(
    g: &GlobalOptions,
    t: &TestOptions,
    direction: u32,
    both: bool,
) -> Result<(), SpecError> {
    let (sends, receives) = (direction & XMIT != 0, direction & RECV != 0);
    // (option, size, whether this end uses it, whether below -1 fails)
    let given = [
        ("-m", t.local_send_size, sends && !both, true),
        ("-M", t.local_recv_size, receives && !both, true),
        ("-r", t.request_size, sends, both),
        ("-r", t.response_size, receives, both),
    ];
    for (option, size, is_used, negative_fails) in given {
        let Some(bytes) = size.map(|bits| bits as i32).filter(|_| is_used) else {
            continue;
        };
        if bytes >= super::checked::MESSAGE_LIMIT || (negative_fails && bytes < -1) {
            return Err(SpecError::Invalid(format!(
                "test option {option}: netperf 2.7.1 cannot run with messages of {bytes} bytes (this end takes -1 to {})",
                super::checked::MESSAGE_LIMIT - 1
            )));
        }
    }
    for (width, is_used) in [(g.send_width, sends), (g.recv_width, receives)] {
        let width = width as i32;
        if is_used && width < 0 {
            return Err(SpecError::Invalid(format!(
                "-W: a ring of {width} buffers; netperf 2.7.1 aborts on a ring of fewer than 0 buffers"
            )));
        }
    }
    Ok(())
}

/// `-C` (TCP_CORK) on a UDP socket: stock netperf's setsockopt fails
/// and it stops before the test.
fn check_cork(t: &TestOptions, shape: &Shape) -> Result<(), SpecError> {
    if t.cork && shape.protocol == Protocol::Udp {
        return Err(SpecError::Invalid(
            "test option -C: TCP_CORK is a TCP option; netperf 2.7.1 fails setting it on a UDP socket"
                .into(),
        ));
    }
    Ok(())
}

/// A `-P` local port must lie in `--data-ports` when both are given.
fn check_data_ports(t: &TestOptions) -> Result<(), SpecError> {
    if let (Some(range), Some(port)) = (t.data_ports, t.local_data_port) {
        if port != 0 && !range.contains(port) {
            return Err(SpecError::Invalid(format!(
                "-P local port {port} is outside --data-ports {range}"
            )));
        }
    }
    Ok(())
}

/// How the test ends, from `-l`: seconds, 0 (until stopped), or a negative
/// byte/transaction count.
fn limit(g: &GlobalOptions) -> Result<Limit, SpecError> {
    if g.test_length > 0 {
        Ok(Limit::Seconds(g.test_length.min(i64::from(i32::MAX)) as u32))
    } else if g.test_length < 0 {
        Ok(Limit::Units(g.test_length.unsigned_abs()))
    } else {
        Ok(Limit::Seconds(0))
    }
}

/// A connect/close test cannot run until stopped: nothing tells the
/// netserver that it ended.
fn check_until_stopped(shape: &Shape, limit: Limit) -> Result<(), SpecError> {
    if shape.connection && shape.direction == 0 && limit == Limit::Seconds(0) {
        return Err(SpecError::Invalid(
            "-l 0 (until stopped) is not available for TCP_CC: nothing in a connect/close \
             test tells the netserver that it ended; use -l SECONDS or a count"
                .into(),
        ));
    }
    Ok(())
}

/// `--flows`: what a many-flow test cannot do is refused with the reason,
/// never silently done with one flow.
fn check_flows(
    g: &GlobalOptions,
    t: &TestOptions,
    shape: &Shape,
    limit: Limit,
) -> Result<(), SpecError> {
    if t.flows.is_none() {
        return Ok(());
    }
    let refused = |why: &str| Err(SpecError::Invalid(format!("--flows: {why}")));
    if shape.test.is_unix() || shape.sendfile {
        return refused(&format!(
            "{} is not a TCP or UDP test over sockets (--flows runs TCP_RR, TCP_CRR, UDP_RR, \
             TCP_STREAM, TCP_MAERTS, UDP_STREAM and omni)",
            g.test_name
        ));
    }
    if shape.connection && shape.direction == 0 {
        return refused("TCP_CC moves no data; TCP_CRR is the connection test with --flows");
    }
    if shape.protocol == Protocol::Udp && shape.direction == RECV {
        return refused(
            "UDP flows receiving from netserver are not available; send (-d send) or -d rr",
        );
    }
    if matches!(limit, Limit::Units(_)) {
        return refused("a count (-l -N) is not available; give a time (-l SECONDS)");
    }
    if t.first_burst > 0 && (shape.connection || !shape.is_rr) {
        return refused(
            "-b (first burst) keeps requests in flight on each flow of TCP_RR, UDP_RR or -d rr only",
        );
    }
    let one_flow_only = [
        ("-P's local port", t.local_data_port.is_some_and(|p| p != 0)),
        ("--data-ports", t.data_ports.is_some()),
        ("-w/-b pacing", g.interval_usecs > 0),
        ("--mmsg", t.mmsg_batch.is_some()),
        ("--zerocopy", t.zerocopy),
        ("--seq", t.sequence),
        ("--skip-rx-copy", t.skip_rx_copy),
    ];
    match one_flow_only.iter().find(|(_, given)| *given) {
        Some((option, _)) => refused(&format!("{option} runs with one flow only")),
        None => Ok(()),
    }
}

/// `--mptcp`: MPTCP carries TCP's byte streams only.
fn check_mptcp(g: &GlobalOptions, t: &TestOptions, shape: &Shape) -> Result<(), SpecError> {
    if t.mptcp && (shape.protocol != Protocol::Tcp || shape.test.is_unix() || shape.sendfile) {
        return Err(SpecError::Invalid(format!(
            "--mptcp: {} is not a TCP test over sockets (MPTCP runs TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR and omni -T tcp)",
            g.test_name
        )));
    }
    Ok(())
}

/// `--notsent-lowat`: a TCP socket option, refused where there is none.
fn check_notsent_lowat(g: &GlobalOptions, t: &TestOptions, shape: &Shape) -> Result<(), SpecError> {
    if t.notsent_lowat.is_some() && (shape.protocol != Protocol::Tcp || shape.test.is_unix()) {
        return Err(SpecError::Invalid(format!(
            "--notsent-lowat sets TCP_NOTSENT_LOWAT: {} is not a TCP test over sockets",
            g.test_name
        )));
    }
    Ok(())
}

/// `--rate`: an open loop over one TCP connection or UDP socket; what it
/// cannot honestly do is refused with the reason, before any traffic.
fn check_open_loop(
    g: &GlobalOptions,
    t: &TestOptions,
    shape: &Shape,
    limit: Limit,
) -> Result<(), SpecError> {
    if t.rate.is_none() {
        return Ok(());
    }
    let refused = |why: &str| Err(SpecError::Invalid(format!("--rate: {why}")));
    let request_response = shape.is_rr && shape.direction != 0;
    let not_open = [
        (!request_response, "is not a request/response test"),
        (
            request_response && shape.connection,
            "opens a connection per transaction (TCP_CRR, or -c)",
        ),
        (shape.test.is_unix(), "is a Unix-domain test"),
    ];
    if let Some((_, what)) = not_open.iter().find(|(given, _)| *given) {
        return refused(&format!(
            "{} {what} (--rate runs TCP_RR, UDP_RR and omni -d rr)",
            g.test_name
        ));
    }
    if matches!(limit, Limit::Units(_)) {
        return refused("a count (-l -N) is not available; give a time (-l SECONDS)");
    }
    let numbered = netperf_data::engine::sequence::SEQ_BYTES as i32;
    if shape.protocol == Protocol::Udp
        && (shape.request_size < numbered || shape.response_size < numbered)
    {
        return refused(&format!(
            "over UDP each request carries its number in its first {numbered} bytes and netserver \
             echoes it, so that a response pairs with its request when datagrams are lost: use \
             requests and responses of at least {numbered} bytes (-r {numbered})"
        ));
    }
    let closed_loop_only = [
        (
            "-b (first burst: the schedule decides what is in flight; see --max-inflight)",
            t.first_burst > 0,
        ),
        (
            "-w/-b pacing (the schedule is the pacing)",
            g.interval_usecs > 0,
        ),
        ("--mmsg", t.mmsg_batch.is_some()),
        ("--seq", t.sequence),
    ];
    match closed_loop_only.iter().find(|(_, given)| *given) {
        Some((option, _)) => refused(&format!("cannot be used with {option}")),
        None => Ok(()),
    }
}

/// What only TCP/UDP sockets do, asked of a Unix-domain test: refused, never
/// silently ignored.
fn refuse_tcp_udp_only(g: &GlobalOptions, t: &TestOptions) -> Result<(), SpecError> {
    let tcp_udp_only = [
        ("--zerocopy", t.zerocopy),
        ("--seq", t.sequence),
        ("--busy-poll", t.busy_poll_usecs.is_some()),
        ("--data-ports", t.data_ports.is_some()),
        ("--gso", t.gso_segments.is_some()),
        ("--gro", t.gro),
        ("--skip-rx-copy", t.skip_rx_copy),
    ];
    if let Some((option, _)) = tcp_udp_only.iter().find(|(_, given)| *given) {
        return Err(SpecError::Invalid(format!(
            "{option} is for TCP and UDP tests; {} moves its data over an AF_UNIX socket",
            g.test_name
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_data::spec::{Protocol, XMIT};

    fn spec(name: &str) -> TestSpec {
        let mut cfg = Config {
            global: Default::default(),
            test: Default::default(),
            unsupported: vec![],
            notes: vec![],
            stdout_text: String::new(),
        };
        cfg.global.test_name = name.into();
        cfg.test_spec().unwrap()
    }

    /// The spec (or its refusal) of a whole command line.
    fn line(words: &str) -> Result<TestSpec, SpecError> {
        crate::cli::test_support::run(words).test_spec()
    }

    #[test]
    fn sizes_and_widths_are_refused_only_where_the_test_uses_them() {
        // an RR test ignores -m; a receiving test makes no send ring
        assert!(line("-t TCP_CRR -- -m 10g").is_ok());
        assert!(line("-t TCP_MAERTS -- -W -7").is_ok());
        assert!(line("-t TCP_MAERTS -W -7,").is_ok());
        // one value sets both rings, and MAERTS receives
        assert!(line("-t TCP_MAERTS -W -7").is_err());
        assert!(line("-t TCP_STREAM -- -W -7").is_err());
        assert!(line("-t TCP_MAERTS -W ,-7").is_err());
        assert!(line("-t TCP_STREAM -- -m 10g").is_err());
        // a positive -r sizes a stream test's buffers (stock mallocs it)
        assert!(line("-t UDP_STREAM -- -r 2147483647").is_err());
        assert!(line("-t UDP_STREAM -- -r -5").is_ok());
        // -M gives the netserver's size first
        assert!(line("-t TCP_MAERTS -- -M 10g").is_ok());
        assert!(line("-t TCP_MAERTS -- -M ,10g").is_err());
    }

    #[test]
    fn many_flow_tcp_bulk_sends_128k_unless_m_says() {
        let sizes = |words: &str| {
            let s = line(words).unwrap();
            (s.send_size, s.remote_send_size)
        };
        let bulk = netperf_data::engine::flows::BULK_MESSAGE;
        assert_eq!(sizes("-t TCP_STREAM -- --flows 8"), (bulk, -1));
        assert_eq!(sizes("-t TCP_MAERTS -- --flows 8"), (0, bulk as i32));
        assert_eq!(sizes("-t TCP_STREAM -- --flows 8 -m 16K"), (16384, -1));
        assert_eq!(sizes("-t TCP_MAERTS -- --flows 8 -m ,4K"), (0, 4096));
        // One stream, UDP and request/response keep netperf's sizes.
        assert_eq!(sizes("-t TCP_STREAM"), (0, -1));
        assert_eq!(sizes("-t UDP_STREAM -- --flows 8"), (0, -1));
        assert_eq!(sizes("-t TCP_RR -- --flows 8"), (0, -1));
    }

    #[test]
    fn udp_stream_with_c_is_a_connection_test_of_no_direction() {
        let s = line("-t UDP_STREAM -- -c").unwrap();
        assert!(s.connection && s.direction == 0);
        assert_eq!(line("-t UDP_STREAM").unwrap().direction, XMIT);
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
    fn an_open_loop_sets_nodelay_over_tcp_and_asks_for_the_echo_over_udp() {
        let open = |name: &str, size: u32| {
            let mut cfg = Config {
                global: Default::default(),
                test: Default::default(),
                unsupported: vec![],
                notes: vec![],
                stdout_text: String::new(),
            };
            cfg.global.test_name = name.into();
            cfg.test.rate = Some(2500.0);
            cfg.test.request_size = Some(size);
            cfg.test.response_size = Some(size);
            cfg.test_spec()
        };
        let tcp = open("TCP_RR", 1).unwrap();
        assert_eq!(
            tcp.open_loop,
            Some(OpenLoop {
                rate: 2500.0,
                max_inflight: OpenLoop::DEFAULT_MAX_INFLIGHT
            })
        );
        assert!(tcp.local_nodelay && tcp.remote_nodelay && !tcp.extension.echo_sequence);
        let udp = open("UDP_RR", 8).unwrap();
        assert!(udp.extension.echo_sequence && !udp.local_nodelay);
        let e = open("UDP_RR", 1).unwrap_err().to_string();
        assert!(e.contains("-r 8"), "{e}");
        // Without --rate nothing of it reaches the test.
        let closed = spec("TCP_RR");
        assert!(closed.open_loop.is_none() && !closed.local_nodelay);
        assert!(!closed.extension.is_used());
    }

    #[test]
    fn unknown_test_names_the_test() {
        let mut cfg = Config {
            global: Default::default(),
            test: Default::default(),
            unsupported: vec![],
            notes: vec![],
            stdout_text: String::new(),
        };
        cfg.global.test_name = "BOGUS_TEST".into();
        let e = cfg.test_spec().unwrap_err();
        assert!(e
            .to_string()
            .starts_with("The test you requested (BOGUS_TEST) is unknown"));
    }
}
