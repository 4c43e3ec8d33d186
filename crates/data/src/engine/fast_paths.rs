//! Which stream loop the fast-path extensions pick (`--gso N`, `--gro`,
//! `--skip-rx-copy`), and the socket options they need: one rule for both
//! ends, applied once before a test, so the plain loops are untouched.

use super::ring::BufferRing;
use super::sequence::Sequence;
use super::stop_flag::StopFlag;
use super::{discard, gso, Counters, DataError};
use crate::spec::Protocol;
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

/// The loop a stream receiver of `protocol` runs for `ext`; None for the
/// plain one.
fn receiver(protocol: Protocol, ext: &Extension) -> Option<Receiver> {
    match protocol {
        Protocol::Udp if ext.gro => Some(Receiver::Gro),
        Protocol::Tcp if ext.skip_rx_copy => Some(Receiver::Discard),
        _ => None,
    }
}

/// Datagrams per send of a UDP stream sender of `protocol`; None for one.
fn segments(protocol: Protocol, ext: &Extension) -> Option<usize> {
    (protocol == Protocol::Udp && ext.gso_segments > 0).then_some(ext.gso_segments as usize)
}

/// (UDP_SEGMENT size, UDP_GRO) for the data socket of an end that `sends`
/// or `receives` a stream of `protocol`, in messages of `send_size` bytes:
/// what its loop (`pick`) needs set before the test.
pub fn socket_options(
    protocol: Protocol,
    ext: &Extension,
    sends: bool,
    receives: bool,
    send_size: i32,
) -> (Option<u16>, bool) {
    match pick(protocol, ext, sends, receives) {
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

/// The fast-path loop of an end that `sends` or `receives` a stream of
/// `protocol` (never both: request/response has none), if `ext` asks for
/// one. Picked before the test, beside the plain loops' own choice, so
/// their functions stay as they are (bench/callgrind).
pub fn pick(protocol: Protocol, ext: &Extension, sends: bool, receives: bool) -> Option<Loop> {
    match (sends, receives) {
        (true, false) => segments(protocol, ext).map(Loop::Segmented),
        (false, true) => receiver(protocol, ext).map(Loop::Receive),
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
