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

#[inline]
fn classify(ret: isize) -> Io {
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
