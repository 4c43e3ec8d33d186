//! MPTCP (`-- --mptcp`): whether this kernel opens MPTCP sockets (off when
//! `net.mptcp.enabled` is 0, or built without it), and what each subflow of
//! a connection carried, read at the test's end with MPTCP_TCPINFO (one
//! tcp_info per subflow).

use std::io;

/// IPPROTO_MPTCP, the protocol of an MPTCP stream socket.
pub const IPPROTO_MPTCP: i32 = 262;
const SOL_MPTCP: i32 = 284;
const MPTCP_TCPINFO: i32 = 2;
/// Subflows read at most: more than any path manager opens by default
/// (its limit is 8 subflows).
const MOST_SUBFLOWS: usize = 8;

/// A connection's subflows: how many it has in all, and what the first
/// of them (up to 8) carried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subflows {
    pub total: u32,
    pub each: Vec<Subflow>,
}

/// What one subflow carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Subflow {
    /// Bytes the peer acknowledged, and bytes received, on this subflow.
    pub bytes_acked: u64,
    pub bytes_received: u64,
}

/// Ok when an MPTCP socket opens here (the kernel's switch,
/// net.mptcp.enabled, covers both families); else the reason, in words a
/// user acts on.
pub fn available() -> Result<(), String> {
    // SAFETY: socket() takes plain integers; the descriptor is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, IPPROTO_MPTCP) };
    if fd >= 0 {
        // SAFETY: fd was just opened here.
        unsafe { libc::close(fd) };
        return Ok(());
    }
    let e = io::Error::last_os_error();
    Err(format!(
        "this kernel does not open MPTCP sockets ({}): MPTCP is off (sysctl net.mptcp.enabled=0) or not built in",
        super::strerror(e.raw_os_error().unwrap_or(0))
    ))
}

/// The header MPTCP_TCPINFO reads and writes before the tcp_info array
/// (struct mptcp_subflow_data, 8-byte aligned).
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct SubflowData {
    size_subflow_data: u32,
    num_subflows: u32,
    size_kernel: u32,
    size_user: u32,
}

#[repr(C)]
struct Reply {
    head: SubflowData,
    info: [libc::tcp_info; MOST_SUBFLOWS],
}

/// The subflows of MPTCP socket `fd` (the first MOST_SUBFLOWS of them), and
/// how many it has in all; None when it is not an MPTCP socket (or the
/// kernel cannot say).
pub fn subflows(fd: i32) -> Option<Subflows> {
    // SAFETY: plain data; the kernel writes at most `len` bytes.
    let mut reply: Reply = unsafe { std::mem::zeroed() };
    reply.head.size_subflow_data = std::mem::size_of::<SubflowData>() as u32;
    reply.head.size_user = std::mem::size_of::<libc::tcp_info>() as u32;
    let mut len = std::mem::size_of::<Reply>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd,
            SOL_MPTCP,
            MPTCP_TCPINFO,
            (&mut reply as *mut Reply).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    let total = reply.head.num_subflows;
    let each = reply
        .info
        .iter()
        .take((total as usize).min(MOST_SUBFLOWS))
        .map(|i| Subflow {
            bytes_acked: i.tcpi_bytes_acked,
            bytes_received: i.tcpi_bytes_received,
        })
        .collect();
    Some(Subflows { total, each })
}

/// How often a `Watch` reads the subflows.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// The subflows of a connection over its life, for an end that reads them
/// only after its peer may have started closing (netserver, whose data
/// phase ends at the client's close): a thread reads them every 50 ms and
/// keeps the reading with the most, so a subflow torn down at the end is
/// still counted. Stopped and joined before the socket may close.
pub struct Watch {
    fd: i32,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<Option<Subflows>>>,
}

impl Watch {
    /// Starts watching MPTCP socket `fd`, which must stay open until
    /// `finish` or the drop.
    pub fn start(fd: i32) -> Watch {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("mptcp-watch".into())
            .spawn(move || {
                let mut most: Option<Subflows> = None;
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    most = most_of(most, subflows(fd));
                    std::thread::sleep(WATCH_EVERY);
                }
                most
            })
            .ok();
        Watch { fd, stop, thread }
    }

    /// The reading with the most subflows, the last one included.
    pub fn finish(mut self) -> Option<Subflows> {
        let seen = self.halt();
        most_of(seen, subflows(self.fd))
    }

    fn halt(&mut self) -> Option<Subflows> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok().flatten())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The later reading unless the earlier one saw more subflows.
fn most_of(earlier: Option<Subflows>, later: Option<Subflows>) -> Option<Subflows> {
    match (earlier, later) {
        (Some(e), Some(l)) if e.total > l.total => Some(e),
        (e, None) => e,
        (_, l) => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd};

    #[test]
    fn a_loopback_connection_has_one_subflow_that_carried_its_bytes() {
        let at: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        if let Err(why) = available() {
            return crate::test_skip::skip(format!("no MPTCP here: {why}"));
        }
        // SAFETY: socket() with plain integers; owned by the Socket below.
        let listen = unsafe {
            socket2::Socket::from_raw_fd(libc::socket(
                libc::AF_INET,
                libc::SOCK_STREAM,
                IPPROTO_MPTCP,
            ))
        };
        listen.bind(&at.into()).unwrap();
        listen.listen(1).unwrap();
        let to = listen.local_addr().unwrap().as_socket().unwrap();
        let client = unsafe {
            socket2::Socket::from_raw_fd(libc::socket(
                libc::AF_INET,
                libc::SOCK_STREAM,
                IPPROTO_MPTCP,
            ))
        };
        client.connect(&to.into()).unwrap();
        let (mut served, _) = listen.accept().unwrap();
        let mut c: std::net::TcpStream = client.into();
        c.write_all(&[7u8; 100_000]).unwrap();
        let mut got = vec![0u8; 100_000];
        served.read_exact(&mut got).unwrap();
        let ours = subflows(c.as_raw_fd()).expect("an MPTCP socket");
        assert_eq!(ours.total, 1);
        assert!(ours.each[0].bytes_acked >= 100_000, "{ours:?}");
        let theirs = subflows(served.as_raw_fd()).expect("accepted MPTCP");
        assert_eq!(theirs.each[0].bytes_received, 100_000);
        // A watch keeps the reading with the most subflows.
        let watch = Watch::start(served.as_raw_fd());
        std::thread::sleep(std::time::Duration::from_millis(120));
        assert_eq!(watch.finish().map(|s| s.total), Some(1));
        let one = |n| {
            Some(Subflows {
                total: n,
                each: vec![],
            })
        };
        assert_eq!(most_of(one(2), one(1)), one(2));
        assert_eq!(most_of(one(1), one(2)), one(2));
        assert_eq!(most_of(one(2), None), one(2));
        // A plain TCP socket is none.
        let tcp = std::net::TcpListener::bind(at).unwrap();
        assert!(subflows(tcp.as_raw_fd()).is_none());
    }
}
