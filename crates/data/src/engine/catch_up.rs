//! The open loop's catch-up send: when several requests are due at once (the
//! sender was preempted, or a request costs more than the schedule's
//! interval), one system call carries them all — sendmsg with one iovec per
//! request on a stream, sendmmsg with one message per request on UDP, each
//! datagram's first 8 bytes its own request number. A schedule that fell
//! behind then catches up at a fraction of a system call per request, so
//! fewer requests leave late and the slip's tail is shorter.

use super::io::{classify, Io};
use super::ring::BufferRing;
use super::sequence::SEQ_BYTES;
use std::os::fd::RawFd;

/// Most requests one catch-up call carries.
pub const MAX_BATCH: usize = 32;

/// The message headers, iovecs and request numbers of one call, allocated
/// once for the test.
pub struct CatchUp {
    iov: Vec<libc::iovec>,
    headers: Vec<libc::mmsghdr>,
    numbers: Vec<[u8; SEQ_BYTES]>,
}

impl Default for CatchUp {
    fn default() -> CatchUp {
        let empty_iov = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        // SAFETY: an all-zero mmsghdr is a valid empty header.
        let empty_header: libc::mmsghdr = unsafe { std::mem::zeroed() };
        CatchUp {
            iov: vec![empty_iov; 2 * MAX_BATCH],
            headers: vec![empty_header; MAX_BATCH],
            numbers: vec![[0; SEQ_BYTES]; MAX_BATCH],
        }
    }
}

/// What one catch-up call is asked to send.
pub struct Due<'a> {
    pub fd: RawFd,
    pub ring: &'a mut BufferRing,
    /// How many requests (2 to MAX_BATCH).
    pub count: usize,
    /// The first one's number on the schedule.
    pub first: u64,
    /// Datagrams, numbered; else one byte stream.
    pub datagram: bool,
    /// Each datagram's destination on an unconnected socket.
    pub dest: Option<&'a socket2::SockAddr>,
}

impl CatchUp {
    /// Send `due.count` requests in one call. On a stream `Io::Moved` is
    /// bytes, the last request perhaps in part (`request_start` gives where
    /// each begins); on UDP it is whole datagrams.
    pub fn send(&mut self, due: Due<'_>) -> Io {
        let count = due.count.min(MAX_BATCH);
        let len = due.ring.size();
        let numbered = due.datagram && len >= SEQ_BYTES;
        for j in 0..count {
            let request = due.ring.next_ptr();
            if numbered {
                self.numbers[j] = (due.first + j as u64).to_le_bytes();
                self.iov[2 * j] = iovec(self.numbers[j].as_mut_ptr(), SEQ_BYTES);
                // SAFETY: the ring's buffers hold `len` >= SEQ_BYTES bytes.
                self.iov[2 * j + 1] = iovec(unsafe { request.add(SEQ_BYTES) }, len - SEQ_BYTES);
            } else {
                self.iov[j] = iovec(request, len);
            }
        }
        if !due.datagram {
            return self.send_stream(due.fd, count);
        }
        let (name, name_len) = match due.dest {
            Some(a) => (a.as_ptr() as *mut libc::c_void, a.len()),
            None => (std::ptr::null_mut(), 0),
        };
        let per_message = if numbered { 2 } else { 1 };
        for j in 0..count {
            let h = &mut self.headers[j].msg_hdr;
            h.msg_name = name;
            h.msg_namelen = name_len;
            h.msg_iov = self.iov[per_message * j..].as_mut_ptr();
            h.msg_iovlen = per_message as _;
            self.headers[j].msg_len = 0;
        }
        // SAFETY: `count` live headers whose iovecs point into the ring's
        // buffers and `numbers`, all alive for the call; the address, if
        // any, is a live SockAddr.
        let sent = unsafe {
            libc::sendmmsg(
                due.fd,
                self.headers.as_mut_ptr(),
                count as libc::c_uint,
                libc::MSG_NOSIGNAL,
            )
        };
        classify(sent as isize)
    }

    /// Where request `j` of the last stream call begins.
    pub fn request_start(&self, j: usize) -> *const u8 {
        self.iov[j].iov_base as *const u8
    }

    fn send_stream(&mut self, fd: RawFd, count: usize) -> Io {
        // SAFETY: an all-zero msghdr is valid; the iovecs set above point
        // into the ring's buffers, alive for the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = self.iov.as_mut_ptr();
        msg.msg_iovlen = count as _;
        // sendmsg, not writev: a peer gone must be EPIPE, never SIGPIPE.
        classify(unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL) })
    }
}

fn iovec(base: *mut u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: base as *mut libc::c_void,
        iov_len: len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn each_datagram_of_a_call_carries_its_own_number() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(server.local_addr().unwrap()).unwrap();
        // Only this sender's datagrams: a port just freed by another test
        // may still be the target of its late sender (a loaded machine).
        server.connect(sock.local_addr().unwrap()).unwrap();
        server
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        // Two buffers in the ring for five requests: the numbers cannot
        // live in the buffers.
        let mut ring = BufferRing::new(2, 20, 8, 0);
        let mut catch_up = CatchUp::default();
        let moved = catch_up.send(Due {
            fd: sock.as_raw_fd(),
            ring: &mut ring,
            count: 5,
            first: 7,
            datagram: true,
            dest: None,
        });
        assert!(matches!(moved, Io::Moved(5)));
        for number in 7..12u64 {
            let mut buf = [0u8; 64];
            let n = server.recv(&mut buf).unwrap();
            assert_eq!(n, 20);
            assert_eq!(buf[..SEQ_BYTES], number.to_le_bytes());
        }
    }
}
