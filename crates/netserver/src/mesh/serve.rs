//! The mesh exchange on one control connection: HELLO gets a fresh nonce
//! (or, without the opt-in, the refusal that says how to enable it); ORIGIN
//! is checked in an order that tells an unproven client nothing: its
//! fields, the nonce (this connection's, once), the key's MAC, then the
//! operator's peers, length, concurrency and rate; then the test runs and
//! its record goes back signed. Every originated test and every refusal
//! is an audit line.

use super::super::phase::Caller;
use super::{child, gate, Enabled};
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_wire::mesh::{self as wire, Challenge, Origin, Outcome, SignedOrigin, NONCE_LEN};
use netperf_wire::{kind, Message};

/// What one control connection holds between HELLO and ORIGIN.
#[derive(Debug, Default)]
pub struct MeshSession {
    /// The challenge not yet answered; taken by the first ORIGIN after it.
    nonce: Option<[u8; NONCE_LEN]>,
}

impl MeshSession {
    /// Answer a mesh request (`kind::NG_MESH_HELLO` or `NG_MESH_ORIGIN`).
    pub fn serve(
        &mut self,
        chan: &mut Channel,
        m: &Message,
        caller: Caller,
    ) -> Result<(), ChannelError> {
        let enabled = caller.opts.mesh.enabled.clone();
        match (m.kind(), enabled) {
            (kind::NG_MESH_HELLO, None) => {
                audit(
                    caller,
                    "refused: this netserver runs no mesh tests (no --mesh-key, --mesh-peers)",
                );
                chan.send(&Challenge::NotEnabled(wire::HOW_TO_ENABLE.into()).encode())
            }
            (kind::NG_MESH_HELLO, Some(_)) => {
                let answer = match (wire::decode_hello(m), fresh_nonce()) {
                    (Err(why), _) | (Ok(()), Err(why)) => {
                        audit(caller, &format!("refused a challenge: {why}"));
                        Challenge::Refused(why)
                    }
                    (Ok(()), Ok(nonce)) => {
                        self.nonce = Some(nonce);
                        Challenge::Nonce(nonce)
                    }
                };
                chan.send(&answer.encode())
            }
            (_, None) => {
                audit(
                    caller,
                    "refused: this netserver runs no mesh tests (no --mesh-key, --mesh-peers)",
                );
                send(chan, &Outcome::NotEnabled(wire::HOW_TO_ENABLE.into()), None)
            }
            (_, Some(enabled)) => self.originate(chan, m, caller, &enabled),
        }
    }

    fn originate(
        &mut self,
        chan: &mut Channel,
        m: &Message,
        caller: Caller,
        enabled: &Enabled,
    ) -> Result<(), ChannelError> {
        // Any request uses up the challenge, signed right or not: one
        // guess per nonce, and a replay meets no nonce at all.
        let nonce = self.nonce.take();
        let request = match authenticate(m, nonce, enabled.key()) {
            Ok(request) => request,
            Err(why) => {
                audit(caller, &format!("refused a mesh request: {why}"));
                return send(chan, &Outcome::Refused(why), None);
            }
        };
        let nonce = nonce.expect("authenticated against it");
        let signer = Some((enabled.key(), &nonce));
        let what = describe(&request);
        let admitted = allowed(&request, enabled)
            .and_then(|()| gate::admit(enabled.concurrency, enabled.rate_per_minute));
        let slot = match admitted {
            Ok(slot) => slot,
            Err(why) => {
                audit(caller, &format!("refused {what}: {why}"));
                return send(chan, &Outcome::Refused(why), signer);
            }
        };
        audit(caller, &format!("originating {what}"));
        std::thread::sleep(std::time::Duration::from_millis(u64::from(
            request.start_in_ms,
        )));
        let outcome = match child::run(&enabled.netperf, &request) {
            Ok(record) => {
                audit(caller, &format!("{what}: done"));
                Outcome::Record(record)
            }
            Err(why) => {
                audit(caller, &format!("{what}: failed: {why}"));
                Outcome::Failed(why)
            }
        };
        // The test is over: its place is free before the coordinator hears
        // so, which may ask for the next one at once.
        drop(slot);
        send(chan, &outcome, signer)
    }
}

/// The request, if it answers this connection's challenge and carries the
/// key's MAC; else why not.
fn authenticate(m: &Message, nonce: Option<[u8; NONCE_LEN]>, key: &[u8]) -> Result<Origin, String> {
    let signed = SignedOrigin::decode(m)?;
    match nonce {
        Some(n) if n == signed.nonce => {}
        _ => {
            return Err(
                "no open challenge for this request (a replayed or stale one): ask for a new one"
                    .into(),
            )
        }
    }
    match signed.verify(key, &signed.nonce) {
        true => Ok(signed.origin),
        false => Err("the request is not signed with this netserver's mesh key".into()),
    }
}

/// The operator's bounds on what is tested: where, and for how long.
fn allowed(request: &Origin, enabled: &Enabled) -> Result<(), String> {
    let destination = request.destination.to_canonical();
    if !enabled.peers.permits(destination) {
        return Err(format!(
            "{destination} is outside this netserver's --mesh-peers"
        ));
    }
    if request.duration_secs > enabled.max_duration_secs {
        return Err(format!(
            "a test of {} s is longer than this netserver's --mesh-max-duration {}",
            request.duration_secs, enabled.max_duration_secs
        ));
    }
    Ok(())
}

fn describe(r: &Origin) -> String {
    let host = r.destination.to_canonical();
    let at = match host {
        std::net::IpAddr::V6(_) => format!("[{host}]:{}", r.port),
        _ => format!("{host}:{}", r.port),
    };
    format!("mesh {} to {at} for {} s", r.test, r.duration_secs)
}

fn audit(caller: Caller, text: &str) {
    super::super::log::audit(caller.opts, Some(caller.peer), text);
}

fn send(
    chan: &mut Channel,
    outcome: &Outcome,
    signer: Option<(&[u8], &[u8; NONCE_LEN])>,
) -> Result<(), ChannelError> {
    for m in wire::encode_result(outcome, signer) {
        chan.send(&m)?;
    }
    Ok(())
}

/// 32 bytes from the kernel's random source: never a weaker nonce.
fn fresh_nonce() -> Result<[u8; NONCE_LEN], String> {
    let mut nonce = [0u8; NONCE_LEN];
    let mut filled = 0;
    while filled < NONCE_LEN {
        // SAFETY: writes at most the rest of `nonce`.
        let n =
            unsafe { libc::getrandom(nonce[filled..].as_mut_ptr().cast(), NONCE_LEN - filled, 0) };
        match n {
            n if n > 0 => filled += n as usize,
            _ if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => {
                return Err(format!(
                    "no random nonce: {}",
                    std::io::Error::last_os_error()
                ))
            }
        }
    }
    Ok(nonce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_fresh() {
        let (a, b) = (fresh_nonce().unwrap(), fresh_nonce().unwrap());
        assert_ne!(a, b);
        assert_ne!(a, [0; NONCE_LEN]);
    }

    #[test]
    fn only_the_challenged_and_signed_request_passes() {
        let key = b"0123456789abcdef0123456789abcdef";
        let nonce = fresh_nonce().unwrap();
        let origin = Origin {
            test: "TCP_RR".into(),
            destination: "127.0.0.1".parse().unwrap(),
            port: 12865,
            duration_secs: 1,
            start_in_ms: 0,
        };
        let m = origin.sign(key, &nonce);
        assert_eq!(authenticate(&m, Some(nonce), key), Ok(origin.clone()));
        assert!(authenticate(&m, None, key)
            .unwrap_err()
            .contains("replayed"));
        let other = fresh_nonce().unwrap();
        assert!(authenticate(&m, Some(other), key)
            .unwrap_err()
            .contains("replayed"));
        let wrong = origin.sign(b"another key of enough length", &nonce);
        assert!(authenticate(&wrong, Some(nonce), key)
            .unwrap_err()
            .contains("not signed"));
    }
}
