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
pub fn receiver(protocol: Protocol, ext: &Extension) -> Option<Receiver> {
    match protocol {
        Protocol::Udp if ext.gro => Some(Receiver::Gro),
        Protocol::Tcp if ext.skip_rx_copy => Some(Receiver::Discard),
        _ => None,
    }
}

/// Datagrams per send of a UDP stream sender of `protocol`; None for one.
pub fn segments(protocol: Protocol, ext: &Extension) -> Option<usize> {
    (protocol == Protocol::Udp && ext.gso_segments > 0).then_some(ext.gso_segments as usize)
}

/// (UDP_SEGMENT size, UDP_GRO) for a data socket of `protocol` that sends
/// messages of `send_size` bytes when `sends`, and receives when `receives`.
pub fn socket_options(
    protocol: Protocol,
    ext: &Extension,
    sends: bool,
    receives: bool,
    send_size: i32,
) -> (Option<u16>, bool) {
    let segment = (sends && segments(protocol, ext).is_some())
        .then(|| u16::try_from(send_size).ok())
        .flatten();
    let gro = receives && receiver(protocol, ext) == Some(Receiver::Gro);
    (segment, gro)
}

impl Receiver {
    /// Receive the stream on `fd` into `ring`'s buffers' size until the
    /// peer ends it, `stop` is set or `units` bytes arrived.
    pub fn run(
        self,
        fd: RawFd,
        ring: &BufferRing,
        stop: &StopFlag,
        units: Option<u64>,
        seq: Option<&mut Sequence>,
    ) -> Result<Counters, DataError> {
        match self {
            Receiver::Gro => Ok(gso::recv_gro(fd, stop, units, seq)?.0),
            Receiver::Discard => discard::recv(fd, ring.size(), stop, units),
        }
    }
}
