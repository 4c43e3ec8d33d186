//! The message sizes and buffer-ring widths netserver settles on for an
//! omni test, as stock netserver computes them from the request and its
//! socket buffers, within the operator's ring-memory bound.

use super::limits::{defaults, Limits};
use super::omni_checks::{refuse, Refusal};
use netperf_data::engine::sizing::{choose, UDP_LENGTH_MAX};
use netperf_data::spec::Protocol;
use netperf_wire::omni::{self, OmniRequest};

/// The sizes netserver settles on, as stock netserver computes them.
pub struct Plan {
    pub send_size: i32,
    pub send_width: u32,
    pub recv_size: i32,
    pub recv_width: u32,
}

pub fn plan(
    r: &OmniRequest,
    protocol: Protocol,
    lss: i32,
    lsr: i32,
    limits: &Limits,
) -> Result<Plan, Refusal> {
    let xmit = r.direction & omni::DIR_XMIT != 0;
    let recv = r.direction & omni::DIR_RECV != 0;
    let udp_cap = if protocol == Protocol::Udp {
        UDP_LENGTH_MAX
    } else {
        i32::MAX
    };
    let mut p = Plan {
        send_size: r.send_size,
        send_width: r.send_width,
        recv_size: r.receive_size,
        recv_width: r.recv_width,
    };
    if xmit {
        let s = choose(r.response_size, r.send_size, r.send_width, lss, udp_cap);
        (p.send_size, p.send_width) = (s.size, s.width);
    }
    if recv {
        let s = choose(r.request_size, r.receive_size, r.recv_width, lsr, i32::MAX);
        (p.recv_size, p.recv_width) = (s.size, s.width);
    }
    // A wider ring only spreads the same bytes over more memory (netperf's
    // cache-busting); capping it changes nothing on the wire, and the
    // response tells the client the width used.
    p.send_width = p.send_width.min(limits.max_ring_width);
    p.recv_width = p.recv_width.min(limits.max_ring_width);
    let ring = |size: i32, width: u32| {
        u64::from(width.max(1)) * (size.max(0) as u64 + 2 * u64::from(defaults::MAX_ALIGNMENT))
    };
    for (name, wanted, size, width) in [
        ("send", xmit, p.send_size, p.send_width),
        ("receive", recv, p.recv_size, p.recv_width),
    ] {
        if wanted && ring(size, width) > limits.max_ring_bytes {
            return Err(refuse(
                libc::ENOMEM,
                format!(
                    "{name} ring of {width} x {size} bytes is over --max-ring-memory {}",
                    limits.max_ring_bytes
                ),
            ));
        }
    }
    Ok(p)
}
