//! Data and control sockets: creation with the options a test asks for
//! (buffer sizes, NODELAY, CORK, DONTROUTE, KEEPALIVE, priority, TOS,
//! congestion control, TCP_NOTSENT_LOWAT), and the facts reports need back (buffer sizes, MSS,
//! retransmissions, congestion control name).

use socket2::{Domain, Protocol as SockProto, SockAddr, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Socket options to apply before bind/connect/listen.
#[derive(Debug, Clone, Default)]
pub struct SocketOptions {
    pub udp: bool,
    /// Requested SO_SNDBUF / SO_RCVBUF; <= 0 leaves the system default.
    pub send_buf: i32,
    pub recv_buf: i32,
    pub nodelay: bool,
    pub cork: bool,
    pub routing_allowed: bool,
    pub keepalive: bool,
    /// SO_PRIORITY and IP_TOS; < 0 leaves them alone.
    pub priority: i32,
    pub tos: i32,
    pub cong_control: Option<String>,
    pub reuse_address: bool,
    /// SO_BUSY_POLL in microseconds (netperf-ng `--busy-poll`).
    pub busy_poll_usecs: Option<u32>,
    /// SO_ZEROCOPY, so sends may use MSG_ZEROCOPY (netperf-ng `--zerocopy`).
    pub zerocopy: bool,
    /// IP_RECVERR/IPV6_RECVERR: have a UDP sender see ENOBUFS instead of
    /// Linux dropping the datagram silently, as netperf's UDP_STREAM does.
    pub report_send_errors: bool,
    /// SO_MAX_PACING_RATE in bytes per second (netperf's test option -q).
    pub max_pacing_rate: Option<u32>,
    /// UDP-Lite instead of UDP for a datagram socket.
    pub udp_lite: bool,
    /// TCP_MAXSEG before connecting (netperf's test option -G).
    pub maxseg: Option<i32>,
    /// An MPTCP stream socket (IPPROTO_MPTCP) instead of TCP
    /// (netperf-ng `--mptcp`).
    pub mptcp: bool,
    /// UDP_SEGMENT: the datagram size a larger send is cut into
    /// (netperf-ng `--gso`, on a UDP stream sender).
    pub udp_segment: Option<u16>,
    /// UDP_GRO: receives may return datagrams the kernel kept together
    /// (netperf-ng `--gro`, on a UDP stream receiver).
    pub udp_gro: bool,
    /// IP_MTU_DISCOVER set to IP_PMTUDISC_DO (netperf's test option -f).
    pub mtu_discover: bool,
    /// TCP fast open (netperf's test option -F): TCP_FASTOPEN_CONNECT on a
    /// connecting socket, a TCP_FASTOPEN queue on a listening one.
    pub fastopen: bool,
    /// TCP_DEFER_ACCEPT on a listening socket (netperf's test option -a).
    pub defer_accept: bool,
    /// Create the socket with protocol 0 (IPPROTO_IP), as netperf does for
    /// a `-T` name it does not know: the kernel takes the type's own.
    pub protocol_unnamed: bool,
    /// TCP_NOTSENT_LOWAT in bytes (0: the kernel's default): how much a
    /// sender keeps written but unsent before its writes wait. A listening
    /// socket's value is inherited by the connections it accepts.
    pub notsent_lowat: Option<u32>,
}

/// The queue length and seconds netserver gives TCP_FASTOPEN and
/// TCP_DEFER_ACCEPT: its listen() backlog, 5, as netserver 2.7.1 does.
const NETSERVER_BACKLOG: i32 = 5;

/// Linux socket option numbers the libc crate does not export for every
/// architecture (asm-generic values, used by x86_64 and aarch64).
const SO_BUSY_POLL: i32 = 46;
const SO_ZEROCOPY: i32 = 60;
const SO_MAX_PACING_RATE: i32 = 47;

/// Create a socket for `family_of` (its family only) with `opts` applied.
pub fn create(family_of: &SocketAddr, opts: &SocketOptions) -> io::Result<Socket> {
    let domain = Domain::for_address(*family_of);
    let (ty, proto) = if opts.udp {
        let proto = if opts.udp_lite {
            SockProto::from(libc::IPPROTO_UDPLITE)
        } else {
            SockProto::UDP
        };
        (Type::DGRAM, proto)
    } else if opts.mptcp {
        (Type::STREAM, SockProto::from(super::mptcp::IPPROTO_MPTCP))
    } else {
        (Type::STREAM, SockProto::TCP)
    };
    let s = Socket::new(domain, ty, (!opts.protocol_unnamed).then_some(proto))?;
    // 0 is a request too (the kernel's smallest buffer), as netperf makes it.
    if opts.send_buf >= 0 {
        s.set_send_buffer_size(opts.send_buf as usize)?;
    }
    if opts.recv_buf >= 0 {
        s.set_recv_buffer_size(opts.recv_buf as usize)?;
    }
    if opts.reuse_address {
        s.set_reuse_address(true)?;
    }
    if !opts.udp {
        if opts.nodelay {
            s.set_tcp_nodelay(true)?;
        }
        if opts.cork {
            s.set_tcp_cork(true)?;
        }
        if let Some(bytes) = opts.notsent_lowat {
            let bytes = bytes.min(i32::MAX as u32) as i32;
            set_int(&s, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, bytes)
                .map_err(|e| io::Error::new(e.kind(), format!("TCP_NOTSENT_LOWAT: {e}")))?;
        }
        if let Some(mss) = opts.maxseg {
            set_int(&s, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss)?;
        }
        // As netperf, an algorithm the kernel does not have (not loaded,
        // not allowed) leaves the default in place rather than failing the
        // test: the congestion control reported is read back from the
        // socket, so it names what really ran (flent's rrul_torrent asks
        // for ledbat, which few kernels have).
        if let Some(cc) = opts.cong_control.as_deref().filter(|cc| !cc.is_empty()) {
            let _ = s.set_tcp_congestion(cc.as_bytes());
        }
    }
    if let Some(rate) = opts.max_pacing_rate {
        set_int(&s, libc::SOL_SOCKET, SO_MAX_PACING_RATE, rate as i32)
            .map_err(|e| io::Error::new(e.kind(), format!("SO_MAX_PACING_RATE: {e}")))?;
    }
    if !opts.routing_allowed {
        set_int(&s, libc::SOL_SOCKET, libc::SO_DONTROUTE, 1)?;
    }
    if opts.keepalive {
        s.set_keepalive(true)?;
    }
    if let Some(usecs) = opts.busy_poll_usecs {
        set_int(
            &s,
            libc::SOL_SOCKET,
            SO_BUSY_POLL,
            usecs.min(i32::MAX as u32) as i32,
        )
        .map_err(|e| io::Error::new(e.kind(), format!("SO_BUSY_POLL: {e}")))?;
    }
    if opts.report_send_errors {
        let (level, name) = match family_of {
            SocketAddr::V4(_) => (libc::IPPROTO_IP, libc::IP_RECVERR),
            SocketAddr::V6(_) => (libc::IPPROTO_IPV6, libc::IPV6_RECVERR),
        };
        set_int(&s, level, name, 1)?;
    }
    if opts.zerocopy {
        set_int(&s, libc::SOL_SOCKET, SO_ZEROCOPY, 1)
            .map_err(|e| io::Error::new(e.kind(), format!("SO_ZEROCOPY: {e}")))?;
    }
    if let Some(size) = opts.udp_segment {
        set_int(&s, libc::SOL_UDP, libc::UDP_SEGMENT, i32::from(size)).map_err(|e| {
            io::Error::new(e.kind(), format!("UDP_SEGMENT (--gso, Linux 4.18+): {e}"))
        })?;
    }
    if opts.udp_gro {
        set_int(&s, libc::SOL_UDP, libc::UDP_GRO, 1)
            .map_err(|e| io::Error::new(e.kind(), format!("UDP_GRO (--gro, Linux 5.0+): {e}")))?;
        // A GRO receiver takes 64 KB a call at millions of datagrams a
        // second: one late wake-up (tens of us on a VM) brings more than
        // the default 208 KB buffer holds, and the rest is dropped.
        if opts.recv_buf < 0 {
            grow_recv_buffer(&s, GRO_RECV_BUF);
        }
    }
    // As netperf, a kernel that refuses these runs the test without them.
    if opts.mtu_discover {
        let _ = match family_of {
            SocketAddr::V4(_) => set_int(
                &s,
                libc::IPPROTO_IP,
                libc::IP_MTU_DISCOVER,
                libc::IP_PMTUDISC_DO,
            ),
            SocketAddr::V6(_) => set_int(
                &s,
                libc::IPPROTO_IPV6,
                libc::IPV6_MTU_DISCOVER,
                libc::IP_PMTUDISC_DO,
            ),
        };
    }
    // Each of these is inert on a socket of the other role (connecting or
    // listening), so whichever this one becomes keeps its own.
    if opts.fastopen && !opts.udp {
        let _ = set_int(&s, libc::IPPROTO_TCP, libc::TCP_FASTOPEN_CONNECT, 1);
        let _ = set_int(&s, libc::IPPROTO_TCP, libc::TCP_FASTOPEN, NETSERVER_BACKLOG);
    }
    if opts.defer_accept && !opts.udp {
        let _ = set_int(
            &s,
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            NETSERVER_BACKLOG,
        );
    }
    if opts.priority >= 0 {
        s.set_priority(opts.priority as u32)?;
    }
    if opts.tos >= 0 {
        match family_of {
            SocketAddr::V4(_) => s.set_tos_v4(opts.tos as u32)?,
            SocketAddr::V6(_) => s.set_tclass_v6(opts.tos as u32)?,
        }
    }
    Ok(s)
}

/// The receive buffer `--gro` asks for when -s/-S asked for none.
pub const GRO_RECV_BUF: usize = 4 << 20;

/// Grow `s`'s receive buffer to at least `want` bytes: past the system's
/// rmem_max where allowed (SO_RCVBUFFORCE, CAP_NET_ADMIN), else as far as
/// it lets. Never shrinks it; what it got is what the socket reports.
pub fn grow_recv_buffer(s: &Socket, want: usize) {
    if s.recv_buffer_size().unwrap_or(0) >= want {
        return;
    }
    let size = want.min(i32::MAX as usize) as i32;
    if set_int(s, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, size).is_err() {
        let _ = s.set_recv_buffer_size(want);
    }
}

fn set_int(s: &Socket, level: i32, name: i32, value: i32) -> io::Result<()> {
    set_fd_int(s.as_raw_fd(), level, name, value)
}

/// setsockopt of an int option on a raw descriptor.
pub fn set_fd_int(fd: std::os::fd::RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: a plain fd and a pointer to a live c_int of the given size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Current (SO_SNDBUF, SO_RCVBUF) as the kernel reports them.
pub fn buffer_sizes(s: &Socket) -> (i32, i32) {
    (
        s.send_buffer_size().map_or(-1, |v| v as i32),
        s.recv_buffer_size().map_or(-1, |v| v as i32),
    )
}

/// TCP_MAXSEG, or -1.
pub fn mss(s: &Socket) -> i32 {
    s.tcp_mss().map_or(-1, |v| v as i32)
}

/// The socket's TCP_INFO, or None when it has none (not TCP, closed).
pub fn tcp_info(fd: i32) -> Option<libc::tcp_info> {
    // SAFETY: tcp_info is plain data; getsockopt writes at most `len` bytes.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut libc::tcp_info as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some(info)
}

/// Total TCP retransmissions from a TCP_INFO, or -1 when there is none.
pub fn retransmissions(info: Option<&libc::tcp_info>) -> i32 {
    info.map_or(-1, |info| info.tcpi_total_retrans as i32)
}

/// The congestion control algorithm in use, or "" when unknown.
pub fn congestion_control(s: &Socket) -> String {
    s.tcp_congestion()
        .map(|v| {
            let end = v.iter().position(|&b| b == 0).unwrap_or(v.len());
            String::from_utf8_lossy(&v[..end]).into_owned()
        })
        .unwrap_or_default()
}

/// Bound every later blocking send/recv so that no call can hang a test.
pub fn set_timeouts(s: &Socket, t: Option<Duration>) -> io::Result<()> {
    s.set_read_timeout(t)?;
    s.set_write_timeout(t)
}

/// Bind to `addr`, turning the error into one that names the address.
pub fn bind(s: &Socket, addr: &SocketAddr) -> io::Result<()> {
    s.bind(&SockAddr::from(*addr))
        .map_err(|e| io::Error::new(e.kind(), format!("cannot bind to {addr}: {e}")))
}

/// Connect with a bound wait: a non-blocking connect polled up to `limit`.
pub fn connect_timeout(s: &Socket, addr: &SocketAddr, limit: Duration) -> io::Result<()> {
    s.connect_timeout(&SockAddr::from(*addr), limit)
}

/// The local address of a socket as a std address.
pub fn local_addr(s: &Socket) -> Option<SocketAddr> {
    s.local_addr().ok().and_then(|a| a.as_socket())
}
