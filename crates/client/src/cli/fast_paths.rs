//! What `--gso N`, `--gro` and `--skip-rx-copy` may be asked of: a stream
//! test of their protocol, with a message size a segmented send can carry.
//! Anything else is refused with the reason before any traffic, never done
//! half or silently without them.

use super::config::{GlobalOptions, TestOptions};
use netperf_data::engine::gso;
use netperf_data::spec::{Protocol, SpecError, RECV, XMIT};

/// The shape of the test the options are checked against.
pub struct Shape {
    pub protocol: Protocol,
    pub udp_lite: bool,
    /// Data flows one way (no request/response, no connect/close).
    pub stream: bool,
    pub direction: u32,
    pub unix: bool,
}

/// Refuse a fast-path option the test cannot honour.
pub fn check(g: &GlobalOptions, t: &TestOptions, s: &Shape) -> Result<(), SpecError> {
    // A Unix-domain test names the options in its own refusal.
    if s.unix {
        return Ok(());
    }
    let refused = |why: String| Err(SpecError::Invalid(why));
    let udp_stream = s.protocol == Protocol::Udp && s.stream && !s.udp_lite;
    let rules = [
        (
            t.gso_segments.is_some() && !udp_stream,
            "--gso sends UDP stream datagrams: use it with UDP_STREAM (or omni -T udp -d send or -d recv)",
        ),
        (
            t.gro && !udp_stream,
            "--gro receives UDP stream datagrams: use it with UDP_STREAM (or omni -T udp -d send or -d recv)",
        ),
        (
            t.skip_rx_copy && !(s.protocol == Protocol::Tcp && s.stream),
            "--skip-rx-copy receives a TCP stream: use it with TCP_STREAM, TCP_MAERTS or omni -T tcp -d send or -d recv",
        ),
        (
            (t.gso_segments.is_some() || t.gro) && t.mmsg_batch.is_some(),
            "--mmsg and --gso/--gro are two ways of moving many datagrams a call: choose one",
        ),
        (
            t.gso_segments.is_some() && g.interval_usecs > 0,
            "-w/-b pacing paces one datagram a call: not with --gso",
        ),
    ];
    if let Some((_, why)) = rules.iter().find(|(broken, _)| *broken) {
        return refused((*why).to_string());
    }
    let local_fast = (t.gso_segments.is_some() && s.direction == XMIT)
        || ((t.gro || t.skip_rx_copy) && s.direction == RECV);
    let timed = g.verbosity > 1 || g.keep_statistics || t.latency_histogram.is_some();
    if local_fast && timed {
        return refused(
            "per-call timing (-v 2, -j, --latency-histogram) is not available with --gso, --gro or --skip-rx-copy"
                .into(),
        );
    }
    if let Some(segments) = t.gso_segments {
        // The sender's message size: ours, or (-d recv) netserver's.
        let (size, how) = match s.direction {
            XMIT => (t.local_send_size, "-m SIZE"),
            _ => (t.remote_send_size, "-m ,SIZE (netserver's)"),
        };
        let Some(size) = size else {
            return refused(format!(
                "--gso needs the message size: {how}, 1 to {} bytes",
                gso::MAX_SEGMENT
            ));
        };
        gso::check_size(segments, size as usize).map_err(SpecError::Invalid)?;
    }
    Ok(())
}
