//! UDP segmentation offload for UDP stream tests (netperf-ng `--gso N`,
//! `--gro`): a sender hands the kernel N datagrams in one sendmsg (the
//! socket's UDP_SEGMENT size cuts them apart), a receiver takes datagrams
//! the kernel kept together (UDP_GRO) in one recvmsg. The loops count wire
//! datagrams, never system calls, in `send_calls`/`recv_calls` (what
//! netperf's UDP_STREAM reports as messages), and return the system calls
//! beside them, as the sendmmsg loops do (mmsg.rs).

use super::io::{self, classify, Io};
use super::ring::BufferRing;
use super::sequence::Sequence;
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use std::os::fd::RawFd;

/// The largest segment `--gso` takes: a UDP payload that fits a 1500-byte
/// Ethernet frame over IPv4. A larger one only fits loopback or jumbo
/// frames, where the kernel refuses it on the way out anyway.
pub const MAX_SEGMENT: usize = 1472;
/// The largest UDP payload, and so the most one segmented send carries.
pub const MAX_SEND: usize = 65507;
/// Room for a whole coalesced receive: the kernel keeps at most 64 KiB.
const GRO_BUFFER: usize = 65536;

/// Whether `segments` datagrams of `size` bytes fit one segmented send;
/// the reason when they do not.
pub fn check_size(segments: u32, size: usize) -> Result<(), String> {
    if !(1..=MAX_SEGMENT).contains(&size) {
        return Err(format!(
            "--gso needs messages of 1 to {MAX_SEGMENT} bytes (one Ethernet frame's UDP payload), not {size}"
        ));
    }
    let bytes = segments as usize * size;
    if bytes > MAX_SEND {
        return Err(format!(
            "--gso {segments} with {size}-byte messages sends {bytes} bytes a call, over UDP's {MAX_SEND}: at most {} segments of {size} bytes",
            MAX_SEND / size
        ));
    }
    Ok(())
}

/// Send batches of `segments` ring buffers of `ring.size()` bytes, one
/// sendmsg each, until `stop` is set or `byte_limit` bytes have gone. The
/// socket must have UDP_SEGMENT set to the ring's size
/// (`net::socket::SocketOptions::udp_segment`). A batch refused with
/// ENOBUFS/ENOMEM counts its datagrams as failed sends, and their sequence
/// numbers (`--seq`) go out again with the next batch.
// Out of line, as every fast-path loop: never part of the frame that
// holds the plain loops (see fast_paths::Loop::run).
#[inline(never)]
pub fn send(
    fd: RawFd,
    ring: &mut BufferRing,
    segments: usize,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    dest: Option<&socket2::SockAddr>,
    mut seq: Option<&mut Sequence>,
) -> Result<(Counters, u64), DataError> {
    // A zero-length datagram would end the receiver's test.
    let size = ring.size();
    if size == 0 {
        return Ok((Counters::default(), 0));
    }
    let (mut c, mut calls) = (Counters::default(), 0u64);
    let segments = segments.clamp(1, MAX_SEND / size);
    // One buffer holding `segments` messages in a row, the ring's bytes:
    // the kernel copies a send whatever its layout, and one buffer it
    // reads warm costs less than `segments` iovecs cycling through the
    // ring (so -W has no say here). A numbered datagram has its number in
    // its own slot.
    let mut batch = vec![0u8; segments * size];
    for slot in batch.chunks_mut(size) {
        // SAFETY: a ring buffer holds `size` bytes, and the slot as many.
        unsafe { std::ptr::copy_nonoverlapping(ring.next_ptr(), slot.as_mut_ptr(), size) };
    }
    let mut iov = libc::iovec {
        iov_base: batch.as_mut_ptr().cast(),
        iov_len: 0,
    };
    // SAFETY: msghdr is plain C data; zero is empty and null.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    if let Some(a) = dest {
        // The kernel only reads msg_name on send, so the const cast is sound.
        msg.msg_name = a.as_ptr() as *mut libc::c_void;
        msg.msg_namelen = a.len();
    }
    msg.msg_iovlen = 1;
    while !stop.is_set() {
        let n = match byte_limit {
            None => segments,
            Some(limit) => {
                (limit.saturating_sub(c.bytes_sent).div_ceil(size as u64) as usize).min(segments)
            }
        };
        if n == 0 {
            break;
        }
        if let Some(s) = seq.as_deref_mut() {
            for slot in batch.chunks_mut(size).take(n) {
                // SAFETY: the slot holds `size` bytes.
                unsafe { s.stamp(slot.as_mut_ptr(), size) };
                s.sent();
            }
        }
        iov.iov_len = n * size;
        msg.msg_iov = &mut iov;
        calls += 1;
        // SAFETY: msg points at one live iovec over n messages of `batch`
        // and at a live address or none. The raw system call skips glibc's
        // cancellation bookkeeping (see io::raw_sendto).
        let ret = unsafe {
            libc::syscall(
                libc::SYS_sendmsg,
                fd as libc::c_long,
                &msg as *const libc::msghdr as libc::c_long,
                libc::MSG_NOSIGNAL as libc::c_long,
            )
        };
        match classify(ret as isize) {
            Io::Moved(bytes) => {
                c.bytes_sent += bytes as u64;
                c.send_calls += bytes.div_ceil(size) as u64;
                stop.publish(c.bytes_sent);
            }
            Io::NoBuffers => {
                c.failed_sends += n as u64;
                if let Some(s) = seq.as_deref_mut() {
                    s.unsend(n as u64);
                }
            }
            Io::Retry | Io::Zero => {
                if let Some(s) = seq.as_deref_mut() {
                    s.unsend(n as u64);
                }
            }
            Io::Failed(e) => {
                if stop.is_set() {
                    break;
                }
                return Err(DataError::Send(e));
            }
        }
    }
    Ok((c, calls))
}

/// The segment size of a coalesced receive, from its UDP_GRO control
/// message; None for a datagram that arrived alone.
fn gro_segment(msg: &libc::msghdr) -> Option<usize> {
    // SAFETY: the control buffer is the one recvmsg just filled, and
    // msg_controllen says how much of it; CMSG_* walk only inside it.
    unsafe {
        let mut cm = libc::CMSG_FIRSTHDR(msg);
        while !cm.is_null() {
            if (*cm).cmsg_level == libc::SOL_UDP && (*cm).cmsg_type == libc::UDP_GRO {
                let size = std::ptr::read_unaligned(libc::CMSG_DATA(cm).cast::<libc::c_int>());
                return usize::try_from(size).ok().filter(|s| *s > 0);
            }
            cm = libc::CMSG_NXTHDR(msg, cm);
        }
    }
    None
}

/// One recvmsg into `buf` of a socket with UDP_GRO: one datagram or a
/// train the kernel kept together, with the trains' segment size (None for
/// a datagram that arrived alone), and its sender in `from` when given.
#[inline]
pub(crate) fn recv_coalesced(
    fd: RawFd,
    buf: &mut [u8],
    from: Option<(&mut libc::sockaddr_storage, &mut libc::socklen_t)>,
) -> (Io, Option<usize>) {
    // u64 words keep the control buffer aligned for cmsghdr.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain C data; zero is empty and null.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    let from_len = match from {
        Some((storage, len)) => {
            msg.msg_name = (storage as *mut libc::sockaddr_storage).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            Some(len)
        }
        None => None,
    };
    // SAFETY: msg points at the live buffer, control words and address
    // storage above.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_recvmsg,
            fd as libc::c_long,
            &mut msg as *mut libc::msghdr as libc::c_long,
            0 as libc::c_long,
        )
    };
    if let Some(len) = from_len {
        *len = msg.msg_namelen;
    }
    let got = classify(ret as isize);
    let segment = matches!(got, Io::Moved(_))
        .then(|| gro_segment(&msg))
        .flatten();
    (got, segment)
}

/// UDP_STREAM receiver with UDP_GRO: each recvmsg takes one datagram or a
/// train the kernel kept together, into one 64 KiB buffer (whatever the
/// receive size), and counts the datagrams in it (bytes over the segment
/// size, rounded up: only the last may be short). Ends at a zero-length
/// datagram, `stop`, or `byte_limit` bytes. The socket must have UDP_GRO
/// set (`net::socket::SocketOptions::udp_gro`); without it every datagram
/// arrives alone and counts one, which is still the truth.
#[inline(never)]
pub fn recv_gro(
    fd: RawFd,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    mut seq: Option<&mut Sequence>,
) -> Result<(Counters, u64), DataError> {
    let mut c = Counters::default();
    let mut calls = 0u64;
    let mut buf = vec![0u8; GRO_BUFFER];
    while !stop.is_set() {
        if byte_limit.is_some_and(|limit| c.bytes_received >= limit) {
            break;
        }
        calls += 1;
        let (got, segment) = recv_coalesced(fd, &mut buf, None);
        match got {
            Io::Moved(n) => {
                let segment = segment.unwrap_or(n);
                c.bytes_received += n as u64;
                c.recv_calls += n.div_ceil(segment) as u64;
                stop.publish(c.bytes_received);
                if let Some(s) = seq.as_deref_mut() {
                    for chunk in buf[..n].chunks(segment) {
                        // SAFETY: the chunk lies inside the bytes received.
                        unsafe { s.check(chunk.as_ptr(), chunk.len()) };
                    }
                }
            }
            // netperf's end-of-test mark, not counted.
            Io::Zero => break,
            Io::Retry | Io::NoBuffers => {}
            Io::Failed(e) => {
                io::receive_failed(e, stop)?;
                break;
            }
        }
    }
    Ok((c, calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn sizes_that_fit_one_send() {
        assert!(check_size(44, 1472).is_ok());
        assert!(check_size(64, 1000).is_ok());
        let e = check_size(64, 1472).unwrap_err();
        assert!(e.contains("94208") && e.contains("at most 44"), "{e}");
        assert!(check_size(1, 1473).unwrap_err().contains("1 to 1472"));
        assert!(check_size(1, 0).is_err());
    }

    /// A segmented send over loopback arrives as one coalesced receive of
    /// the same datagrams, each numbered and counted.
    #[test]
    fn segments_go_out_and_come_back_counted() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        if crate::net::socket::set_fd_int(tx.as_raw_fd(), libc::SOL_UDP, libc::UDP_SEGMENT, 100)
            .is_err()
        {
            eprintln!("no UDP_SEGMENT in this kernel: skipped");
            return;
        }
        crate::net::socket::set_fd_int(rx.as_raw_fd(), libc::SOL_UDP, libc::UDP_GRO, 1).unwrap();
        let stop = StopFlag::new();
        let mut ring = BufferRing::new(4, 100, 0, 0);
        let mut seq_out = Sequence::new();
        let (sent, calls) = send(
            tx.as_raw_fd(),
            &mut ring,
            10,
            &stop,
            Some(3000),
            None,
            Some(&mut seq_out),
        )
        .unwrap();
        assert_eq!((sent.send_calls, sent.bytes_sent, calls), (30, 3000, 3));
        assert_eq!(seq_out.numbered(), 30);
        tx.send(&[]).unwrap();
        let mut seq_in = Sequence::new();
        let (got, calls) = recv_gro(rx.as_raw_fd(), &stop, None, Some(&mut seq_in)).unwrap();
        // Three trains of ten and the end mark.
        assert_eq!((got.recv_calls, got.bytes_received, calls), (30, 3000, 4));
        assert_eq!(seq_in.counts().lost, 0);
    }
}
