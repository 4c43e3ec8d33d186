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

/// send(2), or sendto(2) when a destination is given.
#[inline]
pub fn send(fd: RawFd, buf: *const u8, len: usize, dest: Option<&socket2::SockAddr>) -> Io {
    // SAFETY: buf points to at least len readable bytes owned by a ring.
    let ret = unsafe {
        match dest {
            None => libc::send(fd, buf as *const libc::c_void, len, libc::MSG_NOSIGNAL),
            Some(a) => libc::sendto(
                fd,
                buf as *const libc::c_void,
                len,
                libc::MSG_NOSIGNAL,
                a.as_ptr() as *const libc::sockaddr,
                a.len(),
            ),
        }
    };
    classify(ret)
}

/// send(2) with extra flags (e.g. MSG_ZEROCOPY).
#[inline]
pub fn send_flags(fd: RawFd, buf: *const u8, len: usize, flags: libc::c_int) -> Io {
    // SAFETY: buf points to at least len readable bytes owned by a ring.
    let ret = unsafe {
        libc::send(
            fd,
            buf as *const libc::c_void,
            len,
            libc::MSG_NOSIGNAL | flags,
        )
    };
    classify(ret)
}

/// recv(2).
#[inline]
pub fn recv(fd: RawFd, buf: *mut u8, len: usize) -> Io {
    // SAFETY: buf points to at least len writable bytes owned by a ring.
    let ret = unsafe { libc::recv(fd, buf as *mut libc::c_void, len, 0) };
    classify(ret)
}

/// recvfrom(2), storing the source address in `from`.
#[inline]
pub fn recv_from(
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    from: &mut libc::sockaddr_storage,
    from_len: &mut libc::socklen_t,
) -> Io {
    *from_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: buffer and address storage are valid for the sizes given.
    let ret = unsafe {
        libc::recvfrom(
            fd,
            buf as *mut libc::c_void,
            len,
            0,
            from as *mut libc::sockaddr_storage as *mut libc::sockaddr,
            from_len,
        )
    };
    classify(ret)
}

/// sendto(2) to a raw address previously filled by recv_from.
#[inline]
pub fn send_to_raw(
    fd: RawFd,
    buf: *const u8,
    len: usize,
    to: &libc::sockaddr_storage,
    to_len: libc::socklen_t,
) -> Io {
    // SAFETY: buffer and address valid for the sizes given.
    let ret = unsafe {
        libc::sendto(
            fd,
            buf as *const libc::c_void,
            len,
            libc::MSG_NOSIGNAL,
            to as *const libc::sockaddr_storage as *const libc::sockaddr,
            to_len,
        )
    };
    classify(ret)
}

/// sendfile(2) of `len` bytes at `offset` of `file_fd`.
#[inline]
pub fn sendfile(fd: RawFd, file_fd: RawFd, offset: &mut libc::off_t, len: usize) -> Io {
    // SAFETY: plain fds and a live offset.
    let ret = unsafe { libc::sendfile(fd, file_fd, offset, len) };
    classify(ret)
}
