//! Thin, allocation-free wrappers around send/recv/sendto/recvfrom/sendfile
//! that classify the result the way the test loops need it.

use std::io;
use std::os::fd::RawFd;

/// What one system call did.
pub enum Io {
    /// Transferred this many bytes (> 0).
    Moved(usize),
    /// Zero bytes: the peer closed the stream, or a zero-length datagram
    /// (netperf's end-of-test signal on UDP).
    Zero,
    /// Timed out (SO_RCVTIMEO/SO_SNDTIMEO) or interrupted: check the stop flag.
    Retry,
    /// ENOBUFS/ENOMEM on send: a failed send, not an error (UDP).
    NoBuffers,
    Failed(io::Error),
}

/// A system call's result as the loops need it: bytes or messages moved,
/// or why none moved.
#[inline]
pub(super) fn classify(ret: isize) -> Io {
    if ret > 0 {
        return Io::Moved(ret as usize);
    }
    if ret == 0 {
        return Io::Zero;
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EINTR) => Io::Retry,
        Some(libc::ENOBUFS) | Some(libc::ENOMEM) => Io::NoBuffers,
        _ => Io::Failed(e),
    }
}

/// A receive that failed: the loop's end when stopping or at the peer's
/// reset (the far end going away at the end of a test), else its error.
#[cold]
pub(crate) fn receive_failed(
    e: io::Error,
    stop: &super::stop_flag::StopFlag,
) -> Result<(), super::DataError> {
    if stop.is_set() || e.raw_os_error() == Some(libc::ECONNRESET) {
        return Ok(());
    }
    Err(super::DataError::Recv(e))
}

/// sendto(2) straight to the kernel. glibc's socket wrappers are thread
/// cancellation points: in a multi-threaded process (netperf has its timer
/// thread, netserver a thread per client) every call switches the thread's
/// asynchronous-cancel state on and off with atomic operations, which shows
/// up at 10^5 calls per second. We never cancel threads, so the raw system
/// call does the same work without that cost.
///
/// # Safety
/// `buf` must be readable for `len` bytes; `addr` null or valid for `addr_len`.
#[inline]
unsafe fn raw_sendto(
    fd: RawFd,
    buf: *const u8,
    len: usize,
    flags: libc::c_int,
    addr: *const libc::sockaddr,
    addr_len: libc::socklen_t,
) -> isize {
    libc::syscall(
        libc::SYS_sendto,
        fd as libc::c_long,
        buf as libc::c_long,
        len as libc::c_long,
        flags as libc::c_long,
        addr as libc::c_long,
        addr_len as libc::c_long,
    ) as isize
}

/// recvfrom(2) straight to the kernel (see `raw_sendto` for why).
///
/// # Safety
/// `buf` must be writable for `len` bytes; `addr`/`addr_len` null or valid.
#[inline]
unsafe fn raw_recvfrom(
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    flags: libc::c_int,
    addr: *mut libc::sockaddr,
    addr_len: *mut libc::socklen_t,
) -> isize {
    libc::syscall(
        libc::SYS_recvfrom,
        fd as libc::c_long,
        buf as libc::c_long,
        len as libc::c_long,
        flags as libc::c_long,
        addr as libc::c_long,
        addr_len as libc::c_long,
    ) as isize
}

/// send(2), or sendto(2) when a destination is given.
#[inline]
pub(crate) fn send(fd: RawFd, buf: *const u8, len: usize, dest: Option<&socket2::SockAddr>) -> Io {
    let (addr, addr_len) = match dest {
        Some(a) => (a.as_ptr() as *const libc::sockaddr, a.len()),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: buf points to at least len readable bytes owned by a ring;
    // the address, if any, is a live SockAddr.
    classify(unsafe { raw_sendto(fd, buf, len, libc::MSG_NOSIGNAL, addr, addr_len) })
}

/// send(2) with extra flags (e.g. MSG_ZEROCOPY).
#[inline]
pub(crate) fn send_flags(fd: RawFd, buf: *const u8, len: usize, flags: libc::c_int) -> Io {
    // SAFETY: buf points to at least len readable bytes owned by a ring.
    classify(unsafe {
        raw_sendto(
            fd,
            buf,
            len,
            libc::MSG_NOSIGNAL | flags,
            std::ptr::null(),
            0,
        )
    })
}

/// recv(2).
#[inline]
pub(crate) fn recv(fd: RawFd, buf: *mut u8, len: usize) -> Io {
    // SAFETY: buf points to at least len writable bytes owned by a ring.
    classify(unsafe { raw_recvfrom(fd, buf, len, 0, std::ptr::null_mut(), std::ptr::null_mut()) })
}

/// recvfrom(2), storing the source address in `from`.
#[inline]
pub(crate) fn recv_from(
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    from: &mut libc::sockaddr_storage,
    from_len: &mut libc::socklen_t,
) -> Io {
    *from_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: buffer and address storage are valid for the sizes given.
    classify(unsafe {
        raw_recvfrom(
            fd,
            buf,
            len,
            0,
            from as *mut libc::sockaddr_storage as *mut libc::sockaddr,
            from_len,
        )
    })
}

/// sendto(2) to a raw address previously filled by recv_from.
#[inline]
pub(crate) fn send_to_raw(
    fd: RawFd,
    buf: *const u8,
    len: usize,
    to: &libc::sockaddr_storage,
    to_len: libc::socklen_t,
) -> Io {
    // SAFETY: buffer and address valid for the sizes given.
    classify(unsafe {
        raw_sendto(
            fd,
            buf,
            len,
            libc::MSG_NOSIGNAL,
            to as *const libc::sockaddr_storage as *const libc::sockaddr,
            to_len,
        )
    })
}

/// sendfile(2) of `len` bytes at `offset` of `file_fd`.
#[inline]
pub(crate) fn sendfile(fd: RawFd, file_fd: RawFd, offset: &mut libc::off_t, len: usize) -> Io {
    // SAFETY: plain fds and a live offset.
    let ret = unsafe { libc::sendfile(fd, file_fd, offset, len) };
    classify(ret)
}

/// The IP address in a socket address the kernel filled in (recvfrom,
/// recvmmsg); None for another family.
#[inline]
pub fn source_ip(from: &libc::sockaddr_storage) -> Option<std::net::IpAddr> {
    match i32::from(from.ss_family) {
        libc::AF_INET => {
            // SAFETY: an AF_INET address is a sockaddr_in, which fits.
            let v4 =
                unsafe { &*(from as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(std::net::Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr)).into())
        }
        libc::AF_INET6 => {
            // SAFETY: an AF_INET6 address is a sockaddr_in6, which fits.
            let v6 =
                unsafe { &*(from as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            Some(std::net::Ipv6Addr::from(v6.sin6_addr.s6_addr).into())
        }
        _ => None,
    }
}

/// One IP address in the raw forms a received source can take, so that the
/// per-datagram check is a compare, not a conversion: an IPv4 address as
/// sockaddr_in carries it, and as IPv6 bytes (itself, or v4-mapped).
pub struct SourceMatch {
    v4_be: Option<u32>,
    v6: [u8; 16],
}

impl SourceMatch {
    pub fn new(ip: std::net::IpAddr) -> SourceMatch {
        match ip.to_canonical() {
            std::net::IpAddr::V4(v4) => SourceMatch {
                v4_be: Some(u32::from(v4).to_be()),
                v6: v4.to_ipv6_mapped().octets(),
            },
            std::net::IpAddr::V6(v6) => SourceMatch {
                v4_be: None,
                v6: v6.octets(),
            },
        }
    }

    /// Whether `from` (filled in by the kernel) is this address.
    #[inline]
    pub fn matches(&self, from: &libc::sockaddr_storage) -> bool {
        match i32::from(from.ss_family) {
            libc::AF_INET => {
                // SAFETY: an AF_INET address is a sockaddr_in, which fits.
                let v4 = unsafe {
                    &*(from as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>()
                };
                self.v4_be == Some(v4.sin_addr.s_addr)
            }
            libc::AF_INET6 => {
                // SAFETY: an AF_INET6 address is a sockaddr_in6, which fits.
                let v6 = unsafe {
                    &*(from as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
                };
                v6.sin6_addr.s6_addr == self.v6
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod source_tests {
    use super::*;
    use std::net::SocketAddr;

    fn storage(addr: &str) -> libc::sockaddr_storage {
        let a: SocketAddr = addr.parse().unwrap();
        let s = socket2::SockAddr::from(a);
        // SAFETY: SockAddr holds a valid sockaddr_storage.
        unsafe { *s.as_ptr().cast::<libc::sockaddr_storage>() }
    }

    #[test]
    fn sources_match_in_every_form() {
        let m = SourceMatch::new("127.0.0.1".parse().unwrap());
        assert!(m.matches(&storage("127.0.0.1:9")));
        assert!(m.matches(&storage("[::ffff:127.0.0.1]:9")));
        assert!(!m.matches(&storage("127.0.0.2:9")));
        assert!(!m.matches(&storage("[::1]:9")));
        let m6 = SourceMatch::new("::1".parse().unwrap());
        assert!(m6.matches(&storage("[::1]:9")) && !m6.matches(&storage("127.0.0.1:9")));
        assert_eq!(
            source_ip(&storage("10.1.2.3:9")),
            Some("10.1.2.3".parse().unwrap())
        );
        assert_eq!(
            source_ip(&storage("[fe80::1]:9")),
            Some("fe80::1".parse().unwrap())
        );
    }
}
