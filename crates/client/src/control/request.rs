//! What netperf asks of netserver: the local socket options, message sizes
//! and ring widths netperf picks for its own end, and the omni request that
//! describes netserver's end.

use crate::cli::config::GlobalOptions;
use netperf_data::engine::sizing::{choose, UDP_LENGTH_MAX};
use netperf_data::net::socket::SocketOptions;
use netperf_data::spec::{Limit, Protocol, TestSpec};
use netperf_wire::omni::{self, OmniRequest};
use std::net::SocketAddr;

/// The options of netperf's own data socket.
pub fn local_socket_options(spec: &TestSpec) -> SocketOptions {
    let stream = !spec.is_rr();
    let (udp_segment, udp_gro) = netperf_data::engine::fast_paths::socket_options(
        spec.protocol == Protocol::Udp,
        &spec.extension,
        stream && spec.xmit(),
        stream && spec.recv(),
        spec.send_size as i32,
    );
    SocketOptions {
        udp: spec.protocol == Protocol::Udp,
        send_buf: spec.local_send_buf,
        recv_buf: spec.local_recv_buf,
        nodelay: spec.local_nodelay,
        cork: spec.cork,
        routing_allowed: spec.routing_allowed,
        keepalive: spec.keepalive,
        priority: spec.local_socket_prio,
        tos: spec.local_socket_tos,
        cong_control: spec.local_cong_control.clone(),
        // An explicit local port (-P, --data-ports) is bound again by the
        // next test while the last one's connection is in TIME_WAIT, and
        // k8s-netperf's `-- -P 42424` names the same port at both ends (a
        // UDP netserver on this host binds it too): netperf sets SO_REUSEADDR
        // on its data sockets for this. Never on an ephemeral UDP port, where
        // two sockets with it may share one port.
        reuse_address: spec.local_data_port != 0
            || (spec.protocol == Protocol::Tcp && spec.local_data_ports.is_some()),
        busy_poll_usecs: spec.extension.busy_poll_usecs,
        zerocopy: spec.extension.zerocopy && spec.xmit() && spec.protocol == Protocol::Tcp,
        mptcp: spec.extension.mptcp && spec.protocol == Protocol::Tcp,
        report_send_errors: spec.protocol == Protocol::Udp && spec.xmit() && !spec.recv(),
        maxseg: spec.maxseg.filter(|_| spec.protocol == Protocol::Tcp),
        udp_lite: spec.udp_lite,
        max_pacing_rate: spec.pacing_rate,
        udp_segment,
        udp_gro,
        mtu_discover: spec.mtu_discover,
        // netperf's -F sends its first message with the SYN: a test whose
        // client only receives (TCP_MAERTS) would never send one, so it
        // connects as without -F.
        fastopen: spec.fastopen && spec.xmit(),
        defer_accept: false,
        protocol_unnamed: spec.protocol_unnamed,
        notsent_lowat: (spec.protocol == Protocol::Tcp)
            .then(|| {
                netperf_data::engine::flows::notsent_lowat(
                    spec.extension.notsent_lowat,
                    spec.extension.flows,
                    // Not by default over MPTCP, whose older kernels refuse it.
                    stream && spec.xmit() && !spec.extension.mptcp,
                )
            })
            .flatten(),
    }
}

/// The local message sizes and ring widths, chosen as netperf chooses them.
pub struct LocalSizes {
    pub send_size: i32,
    pub recv_size: i32,
    pub send_width: u32,
    pub recv_width: u32,
}

pub fn local_sizes(spec: &TestSpec, lss: i32, lsr: i32) -> LocalSizes {
    let udp_cap = if spec.protocol == Protocol::Udp {
        UDP_LENGTH_MAX
    } else {
        i32::MAX
    };
    let mut send = choose(
        spec.request_size,
        spec.send_size as i32,
        spec.send_width,
        lss,
        udp_cap,
    );
    // netperf caps a stream's default send size at the largest datagram
    // for IPPROTO_UDP only: for UDP-Lite it takes the socket buffer's size,
    // which no datagram carries. Ours sends the capped size, and makes (and
    // asks for) the ring width netperf's size gives.
    if spec.udp_lite {
        let uncapped = choose(
            spec.request_size,
            spec.send_size as i32,
            spec.send_width,
            lss,
            i32::MAX,
        );
        send.width = uncapped.width;
    }
    // netperf's sending stream end makes a ring of one buffer two, given
    // (-W 1) or not; its receiving end and netserver keep a given 1.
    if spec.request_size <= 0 && send.width == 1 {
        send.width = 2;
    }
    let recv = choose(
        spec.response_size,
        spec.recv_size as i32,
        spec.recv_width,
        lsr,
        i32::MAX,
    );
    LocalSizes {
        send_size: if spec.xmit() { send.size } else { 0 },
        send_width: if spec.xmit() {
            send.width
        } else {
            spec.send_width
        },
        recv_size: if spec.recv() { recv.size } else { 0 },
        recv_width: if spec.recv() {
            recv.width
        } else {
            spec.recv_width
        },
    }
}

fn nf_family(a: &SocketAddr) -> u32 {
    match a {
        SocketAddr::V4(_) => omni::NF_INET,
        SocketAddr::V6(_) => omni::NF_INET6,
    }
}

fn ip_bytes(a: &SocketAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match a {
        SocketAddr::V4(v4) => out[..4].copy_from_slice(&v4.ip().octets()),
        SocketAddr::V6(v6) => out = v6.ip().octets(),
    }
    out
}

/// What runs between netserver's answer and the data phase: it may wait,
/// and says whether the test goes on.
#[derive(Clone)]
pub struct StartHook(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for StartHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartHook")
    }
}

/// The knobs of one run that come from the global options.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub local_cpu: bool,
    pub remote_cpu: bool,
    pub remote_cpu_rate: f32,
    pub remote_cpu_bind: i32,
    pub num_cpus: Option<u32>,
    pub wait_secs: u32,
    pub remote_fill_file: String,
    /// File whose bytes fill local send buffers and back TCP_SENDFILE.
    pub local_fill_file: Option<String>,
    /// Extra request flags (what the netserver should report: interface
    /// name, ids, driver; netperf's OMNI_WANT_REM_*).
    pub extra_flags: u32,
    /// Local interface whose packet counters to read around the data phase.
    pub count_interface: Option<String>,
    /// A stop flag shared with someone else (netagg's coordinator), who
    /// samples its published work units and sets it to end the test.
    pub shared_stop: Option<netperf_data::engine::stop_flag::StopFlag>,
    /// With many flows (`--flows`): where each flow's counts are stored as
    /// it moves, for that same someone to sample the flows one by one.
    /// Whoever holds it also accounts for the flows' failures.
    pub flow_board: Option<std::sync::Arc<netperf_data::engine::flows::FlowBoard>>,
    /// Called once netserver has accepted the test, before its data phase;
    /// `false` calls the test off (netagg's start of a level).
    pub start_hook: Option<StartHook>,
    /// netperf's -d level (messages and data phase summaries on stderr).
    pub debug: i32,
    /// Paced sending (-w/-b): our burst per interval, and the netserver's.
    pub interval_usecs: u32,
    pub interval_burst: u32,
    pub remote_interval_usecs: u32,
    pub remote_interval_burst: u32,
    /// Interim results (-D) to sample during the data phase.
    pub interim: Option<super::interim::InterimOptions>,
}

impl RunOptions {
    pub fn from_global(g: &GlobalOptions) -> Self {
        RunOptions {
            local_cpu: g.local_cpu,
            remote_cpu: g.remote_cpu,
            remote_cpu_rate: g.remote_cpu_rate,
            remote_cpu_bind: g.remote_cpu_bind,
            num_cpus: g.num_cpus,
            wait_secs: g.wait_secs,
            remote_fill_file: g.remote_fill_file.clone().unwrap_or_default(),
            local_fill_file: g.local_fill_file.clone(),
            extra_flags: 0,
            count_interface: None,
            interim: None,
            shared_stop: None,
            flow_board: None,
            start_hook: None,
            debug: g.debug,
            interval_usecs: g.interval_usecs,
            interval_burst: g.interval_burst,
            remote_interval_usecs: g.remote_interval_usecs,
            remote_interval_burst: g.remote_interval_burst,
        }
    }
}

pub fn build_request(
    spec: &TestSpec,
    run: &RunOptions,
    sizes: &LocalSizes,
    local: &SocketAddr,
    remote: &SocketAddr,
    explicit_remote: bool,
) -> OmniRequest {
    let mut flags = 0;
    let table = [
        (spec.remote_nodelay, omni::flag::NO_DELAY),
        (spec.fastopen, omni::flag::FASTOPEN),
        (spec.use_pktinfo, omni::flag::USE_PKTINFO),
        (spec.defer_accept, omni::flag::WANT_DEFER_ACCEPT),
        (spec.mtu_discover, omni::flag::USE_MTU_DISCOVER),
        (spec.connection, omni::flag::CONNECT_TEST),
        (run.remote_cpu, omni::flag::MEASURE_CPU),
        (spec.routing_allowed, omni::flag::ROUTING_ALLOWED),
        (spec.remote_connected, omni::flag::USE_CONNECTED),
        (spec.keepalive, omni::flag::WANT_KEEPALIVE),
    ];
    for (on, bit) in table {
        if on {
            flags |= bit;
        }
    }
    let mut direction = 0;
    if spec.xmit() {
        direction |= omni::DIR_RECV;
    }
    if spec.recv() {
        direction |= omni::DIR_XMIT;
    }
    let test_length = match spec.limit {
        Limit::Seconds(s) => s.min(i32::MAX as u32) as i32,
        // netperf's `test_trans * -1` in an int: a count of 2^31 (-l
        // -2147483648) goes out as itself, -2^31.
        Limit::Units(n) => (-(n.min(1 << 31) as i64)) as i32,
    };
    OmniRequest {
        interval_usecs: run.remote_interval_usecs,
        interval_burst: run.remote_interval_burst,
        cpu_bind: run.remote_cpu_bind,
        send_buf_size: spec.remote_send_buf,
        send_size: spec.remote_send_size,
        send_alignment: spec.remote_send_align,
        send_offset: spec.remote_send_offset,
        send_width: sizes.send_width,
        request_size: spec.request_size,
        recv_buf_size: spec.remote_recv_buf,
        receive_size: spec.remote_recv_size,
        recv_alignment: spec.remote_recv_align,
        recv_offset: spec.remote_recv_offset,
        recv_width: sizes.recv_width,
        response_size: spec.response_size,
        flags,
        cpu_rate: run.remote_cpu_rate,
        test_length,
        so_rcvavoid: u32::from(spec.copy_avoidance),
        so_sndavoid: u32::from(spec.copy_avoidance),
        send_dirty_count: -1,
        recv_dirty_count: -1,
        recv_clean_count: -1,
        data_port: u32::from(spec.remote_data_port),
        ipfamily: nf_family(remote),
        socket_type: if spec.protocol == Protocol::Udp {
            omni::NST_DGRAM
        } else {
            omni::NST_STREAM
        },
        protocol: spec.ip_protocol(),
        direction,
        netperf_port: u32::from(local.port()),
        netperf_ip: ip_bytes(local),
        netserver_ip: if explicit_remote {
            ip_bytes(remote)
        } else {
            [0; 16]
        },
        socket_prio: spec.remote_socket_prio,
        socket_tos: spec.remote_socket_tos,
        cong_control: spec.remote_cong_control.clone(),
        fill_file: run.remote_fill_file.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::run;

    /// The request our netperf sends for `words`, with socket buffers of
    /// `buf` bytes each way, from 127.0.0.1:5000 to 127.0.0.1.
    fn request(words: &str, buf: i32) -> OmniRequest {
        let config = run(words);
        let spec = config.test_spec().unwrap();
        let options = RunOptions::from_global(&config.global);
        let sizes = local_sizes(&spec, buf, buf);
        let local: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let remote: SocketAddr = "127.0.0.1:0".parse().unwrap();
        build_request(&spec, &options, &sizes, &local, &remote, false)
    }

    #[test]
    fn ring_widths_as_netperf_asks_for_them() {
        // a sending stream's ring of one is two; a receiver keeps its one
        assert_eq!(request("-t TCP_STREAM -W 1", 16384).send_width, 2);
        assert_eq!(request("-t TCP_MAERTS -W 1,1", 16384).recv_width, 1);
        assert_eq!(request("-t TCP_RR -W 1", 16384).send_width, 1);
        // an unused width goes out as netperf's int
        assert_eq!(
            request("-t TCP_MAERTS -- -W -7", 16384).send_width,
            -7i32 as u32
        );
        // UDP-Lite's width follows netperf's uncapped send size
        assert_eq!(request("-t UDP_STREAM -- -T udplite", 212992).send_width, 2);
        assert_eq!(request("-t UDP_STREAM", 212992).send_width, 4);
    }

    #[test]
    fn stock_request_flags_and_fields() {
        let r = request("-t TCP_STREAM -- -a -B -f -F -V", 16384);
        let wanted = omni::flag::WANT_DEFER_ACCEPT
            | omni::flag::USE_PKTINFO
            | omni::flag::USE_MTU_DISCOVER
            | omni::flag::FASTOPEN;
        assert_eq!(r.flags & wanted, wanted);
        assert_eq!((r.so_rcvavoid, r.so_sndavoid), (1, 1));
        assert_eq!(request("-t TCP_RR -- -T bogus", 16384).protocol, 0);
        assert_eq!(request("-t TCP_RR -- -T tcp", 16384).protocol, 6);
        // netperf's test_trans * -1 in an int
        assert_eq!(request("-l -2147483648", 16384).test_length, i32::MIN);
        assert_eq!(request("-l -5", 16384).test_length, -5);
    }

    /// TCP_NOTSENT_LOWAT on our socket: 256K on a many-flow bulk sender,
    /// what --notsent-lowat says anywhere over TCP, else untouched; and it
    /// goes to netserver only when the user set it.
    #[test]
    fn the_notsent_low_water_mark_of_our_socket_and_the_request() {
        let ours = |words: &str| {
            let spec = run(words).test_spec().unwrap();
            (
                local_socket_options(&spec).notsent_lowat,
                spec.extension.notsent_lowat,
            )
        };
        let bulk = netperf_data::engine::flows::BULK_NOTSENT_LOWAT;
        assert_eq!(ours("-t TCP_STREAM -- --flows 8"), (Some(bulk), None));
        assert_eq!(ours("-t TCP_MAERTS -- --flows 8"), (None, None));
        assert_eq!(ours("-t TCP_STREAM"), (None, None));
        assert_eq!(ours("-t TCP_RR -- --flows 8"), (None, None));
        assert_eq!(ours("-t TCP_STREAM -- --flows 8 --mptcp"), (None, None));
        assert_eq!(
            ours("-t TCP_STREAM -- --flows 8 --notsent-lowat 0"),
            (Some(0), Some(0))
        );
        assert_eq!(
            ours("-t TCP_MAERTS -- --notsent-lowat 64K"),
            (Some(65536), Some(65536))
        );
        for refused in [
            "-t UDP_STREAM -- --notsent-lowat 1K",
            "-t STREAM_STREAM -- --notsent-lowat 1K",
        ] {
            let e = run(refused).test_spec().unwrap_err().to_string();
            assert!(e.contains("--notsent-lowat"), "{refused}: {e}");
        }
    }
}
