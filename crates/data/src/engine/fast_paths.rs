//! Which stream loop the fast-path extensions pick (`--gso N`, `--gro`,
//! `--skip-rx-copy`), and the socket options they need: one rule for both
//! ends, applied once before a test, so the plain loops are untouched.

use super::ring::BufferRing;
use super::sequence::Sequence;
use super::stop_flag::StopFlag;
use super::{discard, gso, Counters, DataError};
use netperf_wire::extension::Extension;
use std::os::fd::RawFd;

/// A stream receiver's loop other than the plain one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// UDP with UDP_GRO: coalesced datagrams, each counted.
    Gro,
    /// TCP with MSG_TRUNC: bytes counted, never copied.
    Discard,
}

/// The loop a stream receiver (UDP when `udp`, else TCP) runs for `ext`;
/// None for the plain one.
fn receiver(udp: bool, ext: &Extension) -> Option<Receiver> {
    match udp {
        true if ext.gro => Some(Receiver::Gro),
        false if ext.skip_rx_copy => Some(Receiver::Discard),
        _ => None,
    }
}

/// Datagrams per send of a stream sender (UDP when `udp`); None for one.
fn segments(udp: bool, ext: &Extension) -> Option<usize> {
    (udp && ext.gso_segments > 0).then_some(ext.gso_segments as usize)
}

/// (UDP_SEGMENT size, UDP_GRO) for the data socket of an end that `sends`
/// or `receives` a stream (UDP when `udp`, else TCP) in messages of
/// `send_size` bytes: what its loop (`pick`) needs set before the test.
pub fn socket_options(
    udp: bool,
    ext: &Extension,
    sends: bool,
    receives: bool,
    send_size: i32,
) -> (Option<u16>, bool) {
    match pick(udp, ext, sends, receives) {
        Some(Loop::Segmented(_)) => (u16::try_from(send_size).ok(), false),
        Some(Loop::Receive(Receiver::Gro)) => (None, true),
        _ => (None, false),
    }
}

/// A stream loop other than the plain ones, for one end of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    /// UDP_SEGMENT sends of this many datagrams a call.
    Segmented(usize),
    Receive(Receiver),
}

/// The fast-path loop of an end that `sends` or `receives` a stream (UDP
/// when `udp`, else TCP; never both: request/response has none), if `ext`
/// asks for one. Picked before the test, beside the plain loops' own choice, so
/// their functions stay as they are (bench/callgrind).
pub fn pick(udp: bool, ext: &Extension, sends: bool, receives: bool) -> Option<Loop> {
    match (sends, receives) {
        (true, false) => segments(udp, ext).map(Loop::Segmented),
        (false, true) => receiver(udp, ext).map(Loop::Receive),
        _ => None,
    }
}

impl Loop {
    /// Run the loop on `fd` until the stream ends, `stop` is set or `units`
    /// bytes moved: sends from `send_ring` (to `dest`, unless connected),
    /// receives of `recv_ring`'s size. Out of line and cold, and called
    /// beside the plain loops' function, never from it: a fast-path branch
    /// inside it cost the UDP_RR loop 2 (netperf) to 11 (netserver)
    /// instructions a transaction in spilled registers (bench/callgrind).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    pub fn run(
        self,
        fd: RawFd,
        send_ring: &mut BufferRing,
        recv_ring: &BufferRing,
        stop: &StopFlag,
        units: Option<u64>,
        dest: Option<&socket2::SockAddr>,
        seq: Option<&mut Sequence>,
    ) -> Result<Counters, DataError> {
        match self {
            Loop::Segmented(n) => Ok(gso::send(fd, send_ring, n, stop, units, dest, seq)?.0),
            Loop::Receive(Receiver::Gro) => Ok(gso::recv_gro(fd, stop, units, seq)?.0),
            Loop::Receive(Receiver::Discard) => discard::recv(fd, recv_ring.size(), stop, units),
        }
    }
}
