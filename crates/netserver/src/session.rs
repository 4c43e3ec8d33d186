//! One control connection on the netserver side: check the passphrase, then
//! serve requests until the client closes, goes silent, or misbehaves.

use super::mesh::serve::MeshSession;
use super::offload::SessionOffloads;
use super::options::ServerOptions;
use super::phase::Caller;
use netperf_data::measure::cpu;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_wire::{self as wire, kind, Message};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How long a client has to present the passphrase (stock netserver: 20 s).
const PASSPHRASE_WAIT: Duration = Duration::from_secs(20);
/// serv_errno stock netserver sends for an unknown request type.
const UNKNOWN_REQUEST_ERRNO: i32 = 998;

/// Compare a presented passphrase with ours in time that does not depend on
/// where they differ, so that it cannot be guessed byte by byte.
fn same_secret(presented: &str, expected: &str) -> bool {
    let (a, b) = (presented.as_bytes(), expected.as_bytes());
    let differing = (0..a.len().max(b.len()))
        .map(|i| a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0xff))
        .fold(0u8, |acc, x| acc | x);
    a.len() == b.len() && differing == 0
}

/// Tests running now, over every control connection.
static RUNNING_TESTS: AtomicUsize = AtomicUsize::new(0);

/// One of the `--max-tests` places, held while a test runs.
struct TestSlot;

impl TestSlot {
    fn take(max: usize) -> Option<TestSlot> {
        RUNNING_TESTS
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| TestSlot)
    }
}

impl Drop for TestSlot {
    fn drop(&mut self) {
        RUNNING_TESTS.fetch_sub(1, Ordering::AcqRel);
    }
}

pub fn run(stream: TcpStream, peer: SocketAddr, opts: &ServerOptions) {
    // Watched during tests: a client that vanishes mid-test ends it.
    let control_fd = stream.as_raw_fd();
    let caller = Caller {
        control_fd,
        peer,
        opts,
    };
    let mut chan = Channel::new(stream);
    caller.log("control connection opened");
    if let Some(phrase) = &opts.passphrase {
        let ok = matches!(chan.recv(PASSPHRASE_WAIT), Ok(m) if m.kind() == kind::PASSPHRASE && same_secret(&wire::decode_passphrase(&m), phrase));
        if !ok {
            caller.log("Unable to match required passphrase.  Closing control connection");
            chan.shutdown();
            return;
        }
    }
    // Whatever this connection changes is put back when it ends, however.
    let mut offloads = SessionOffloads::new(peer);
    let mut mesh = MeshSession::default();
    loop {
        // A peer that closes between messages ends the session silently.
        let failed = match chan.recv_within(opts.limits.idle_timeout, opts.limits.silent_timeout) {
            Ok(m) => dispatch(&mut chan, &m, caller, &mut offloads, &mut mesh).err(),
            Err(ChannelError::Closed) => break,
            Err(e) => Some(e),
        };
        if let Some(e) = failed {
            caller.log(&format!("closing control connection: {e}"));
            break;
        }
    }
    chan.shutdown();
    // Failures are in the log; the client is gone.
    let _ = offloads.release(opts);
    caller.log("control connection closed");
}

fn dispatch(
    chan: &mut Channel,
    m: &Message,
    caller: Caller,
    offloads: &mut SessionOffloads,
    mesh: &mut MeshSession,
) -> Result<(), ChannelError> {
    let opts = caller.opts;
    let is_test = matches!(
        m.kind(),
        kind::DO_OMNI | kind::DO_TCP_STREAM | kind::DO_TCP_CC
    ) || netperf_wire::unix::UnixTest::from_request_kind(m.kind()).is_some();
    let _slot = if is_test {
        match TestSlot::take(opts.limits.max_tests) {
            Some(slot) => Some(slot),
            None => {
                caller.log(&format!(
                    "refused test {}: {} tests already running (--max-tests)",
                    m.kind(),
                    opts.limits.max_tests
                ));
                // Every netperf response type is its request type plus one.
                return chan.send(&wire::encode_error_response(m.kind() + 1, libc::EBUSY));
            }
        }
    } else {
        None
    };
    // Word 1 of every test request is netperf's -T binding for netserver
    // (-1 for none), as stock netserver applies it whatever the test.
    if is_test {
        let cpu = m.serv_errno();
        if let Err(e) = netperf_data::engine::affinity::bind_current_thread(cpu) {
            caller.log(&format!("cannot bind to CPU {cpu}: {e}"));
        }
    }
    match m.kind() {
        kind::DO_OMNI => super::omni::serve(chan, m, caller),
        kind::DO_TCP_STREAM => super::legacy::serve_tcp_stream(chan, m, caller),
        kind::DO_TCP_CC => super::legacy::serve_tcp_cc(chan, m, caller),
        k if netperf_wire::unix::UnixTest::from_request_kind(k).is_some() => {
            super::unix::serve(chan, m, caller)
        }
        kind::CPU_CALIBRATE => chan.send(&wire::encode_cpu_calibrate_response(
            cpu::calibrate_rate(),
            cpu::num_cpus(),
        )),
        kind::DEBUG_ON | kind::DEBUG_OFF => chan.send(&Message::new(kind::DEBUG_OK, 0)),
        kind::DO_SYSINFO => {
            let mut r = Message::new(kind::SYSINFO_RESPONSE, 0);
            r.set_data_str(0, 640, ",Deprecated,Deprecated,Deprecated,Deprecated");
            chan.send(&r)
        }
        kind::DO_NG_OFFLOADS => offloads.serve(chan, m, opts),
        kind::NG_MESH_HELLO | kind::NG_MESH_ORIGIN => mesh.serve(chan, m, caller),
        // A passphrase we did not ask for is ignored, as stock netserver does.
        kind::PASSPHRASE => Ok(()),
        other => {
            caller.log(&format!("unknown test number {other}"));
            chan.send(&Message::new(0, UNKNOWN_REQUEST_ERRNO))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn passphrases_match_only_exactly() {
        assert!(same_secret("secret", "secret"));
        assert!(same_secret("", ""));
        for other in ["Secret", "secre", "secrets", "", "secret\u{ff}"] {
            assert!(!same_secret(other, "secret"), "{other:?}");
        }
    }
}
