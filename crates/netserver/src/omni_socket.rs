//! The options of netserver's data socket for an omni test: what the
//! request's fields and our extension block ask, and the defaults netserver
//! picks itself (SO_REUSEADDR, a bulk sender's TCP_NOTSENT_LOWAT).

use netperf_data::engine;
use netperf_data::net::socket::SocketOptions;
use netperf_data::spec::Protocol;
use netperf_wire::extension::Extension;
use netperf_wire::omni::{self, OmniRequest};

/// The data socket's options; a TCP listener's pass to what it accepts.
pub fn data_socket_options(r: &OmniRequest, protocol: Protocol, ext: &Extension) -> SocketOptions {
    let (sends, receives) = (
        r.direction & omni::DIR_XMIT != 0,
        r.direction & omni::DIR_RECV != 0,
    );
    let (udp_segment, udp_gro) = engine::fast_paths::socket_options(
        protocol == Protocol::Udp,
        ext,
        sends,
        receives,
        r.send_size,
    );
    SocketOptions {
        udp: protocol == Protocol::Udp,
        send_buf: r.send_buf_size,
        recv_buf: r.recv_buf_size,
        nodelay: r.flags & omni::flag::NO_DELAY != 0,
        cork: false,
        routing_allowed: r.flags & omni::flag::ROUTING_ALLOWED != 0,
        keepalive: r.flags & omni::flag::WANT_KEEPALIVE != 0,
        priority: r.socket_prio,
        tos: r.socket_tos,
        cong_control: (!r.cong_control.is_empty()).then(|| r.cong_control.clone()),
        // A TCP listener needs it (a port in TIME_WAIT), and so does a UDP
        // socket on a port the client named (`-- -P ,D`, as k8s-netperf
        // runs: netperf's own socket on the same port, or the last test's):
        // netperf sets it on every data socket. Not on an ephemeral UDP
        // port: two sockets that both have it may be given the same one by
        // the kernel, and then one takes the other's datagrams, end-of-test
        // marks included: at a few hundred concurrent UDP tests that left
        // tests waiting for the silent timeout.
        reuse_address: protocol == Protocol::Tcp || r.data_port != 0,
        busy_poll_usecs: ext.busy_poll_usecs,
        zerocopy: ext.zerocopy && r.direction & omni::DIR_XMIT != 0 && protocol == Protocol::Tcp,
        mptcp: ext.mptcp && protocol == Protocol::Tcp,
        report_send_errors: false,
        maxseg: None,
        udp_lite: r.protocol == netperf_data::spec::IPPROTO_UDPLITE,
        max_pacing_rate: None,
        udp_segment,
        udp_gro,
        mtu_discover: r.flags & omni::flag::USE_MTU_DISCOVER != 0,
        fastopen: r.flags & omni::flag::FASTOPEN != 0,
        defer_accept: r.flags & omni::flag::WANT_DEFER_ACCEPT != 0,
        protocol_unnamed: false,
        notsent_lowat: (protocol == Protocol::Tcp)
            .then(|| {
                let bulk = sends && !receives && !ext.mptcp;
                engine::flows::notsent_lowat(ext.notsent_lowat, ext.flows, bulk)
            })
            .flatten(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tcp_data_sockets_reuse_ephemeral_addresses() {
        let r = OmniRequest::default();
        let ext = Extension::default();
        assert!(data_socket_options(&r, Protocol::Tcp, &ext).reuse_address);
        assert!(!data_socket_options(&r, Protocol::Udp, &ext).reuse_address);
    }

    #[test]
    fn a_udp_data_socket_on_a_named_port_reuses_it() {
        let r = OmniRequest {
            data_port: 42424,
            ..OmniRequest::default()
        };
        let ext = Extension::default();
        assert!(data_socket_options(&r, Protocol::Udp, &ext).reuse_address);
    }

    /// A many-flow bulk sender gets the low-water mark unless the client
    /// set one; a receiver, request/response and UDP keep the kernel's.
    #[test]
    fn bulk_senders_get_a_notsent_low_water_mark() {
        let mark = |direction: u32, protocol: Protocol, ext: &Extension| {
            let r = OmniRequest {
                direction,
                ..OmniRequest::default()
            };
            data_socket_options(&r, protocol, ext).notsent_lowat
        };
        let flows = Extension {
            flows: 8,
            flow_threads: 8,
            ..Extension::default()
        };
        let bulk = engine::flows::BULK_NOTSENT_LOWAT;
        let both = omni::DIR_XMIT | omni::DIR_RECV;
        assert_eq!(mark(omni::DIR_XMIT, Protocol::Tcp, &flows), Some(bulk));
        assert_eq!(mark(omni::DIR_RECV, Protocol::Tcp, &flows), None);
        assert_eq!(mark(both, Protocol::Tcp, &flows), None);
        assert_eq!(mark(omni::DIR_XMIT, Protocol::Udp, &flows), None);
        assert_eq!(
            mark(omni::DIR_XMIT, Protocol::Tcp, &Extension::default()),
            None
        );
        let asked = Extension {
            notsent_lowat: Some(0),
            ..flows
        };
        assert_eq!(mark(omni::DIR_XMIT, Protocol::Tcp, &asked), Some(0));
        let mptcp = Extension {
            mptcp: true,
            ..flows
        };
        assert_eq!(mark(omni::DIR_XMIT, Protocol::Tcp, &mptcp), None);
    }
}
