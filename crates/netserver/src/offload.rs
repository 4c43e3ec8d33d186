//! netserver's half of offload control (netperf-ng only): answer reads of
//! the offloads of the interface that carries a client's traffic, change them
//! only where the operator's `--allow-offload-changes` reaches
//! (`offload_scope`), and put back everything a control connection changed
//! when it closes — for whatever reason — or when netserver shuts down.
//! Every change, restore and refusal of an allowed netserver is an audit
//! line of the log, with the client's address.
//!
//! An interface changed by one control connection is held by it until it
//! closes: another connection may read it but not change it, so that one
//! connection's restore never undoes another's experiment.

use super::log;
use super::options::ServerOptions;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_data::net::interface::egress_interface;
use netperf_data::net::offload::{self, OffloadError, RestoreGuard};
use netperf_wire::offload::{Offload, OffloadOp, OffloadRequest, OffloadResponse, OffloadStatus};
use netperf_wire::Message;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// An interface a control connection changed, and how it was before.
struct Hold {
    owner: u64,
    peer: SocketAddr,
    guard: RestoreGuard,
}

/// Every interface held now, by name; `closed` once netserver shuts down.
#[derive(Default)]
struct Registry {
    closed: bool,
    held: BTreeMap<String, Hold>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    closed: false,
    held: BTreeMap::new(),
});
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// A poisoned lock (a panic elsewhere) still guards valid data: the holds
/// must be restored all the same.
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The offload changes of one control connection.
pub struct SessionOffloads {
    id: u64,
    peer: SocketAddr,
}

impl SessionOffloads {
    pub fn new(peer: SocketAddr) -> Self {
        SessionOffloads {
            id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
            peer,
        }
    }

    /// Answer one DO_NG_OFFLOADS request.
    pub fn serve(
        &mut self,
        chan: &mut Channel,
        m: &Message,
        opts: &ServerOptions,
    ) -> Result<(), ChannelError> {
        let response = match OffloadRequest::decode(m) {
            Ok(request) => self.answer(&request, opts),
            Err(why) => {
                log::line(
                    opts,
                    Some(self.peer),
                    &format!("refused offload request: {why}"),
                );
                OffloadResponse::failure(
                    OffloadStatus::BadRequest,
                    &format!("netserver refused the request: {why}"),
                )
            }
        };
        chan.send(&response.encode())
    }

    fn answer(&mut self, request: &OffloadRequest, opts: &ServerOptions) -> OffloadResponse {
        let toward = egress_interface(&self.peer);
        let interface = match (&request.interface, &toward) {
            (Some(name), _) | (None, Some(name)) => name.clone(),
            (None, None) => {
                return OffloadResponse::failure(
                    OffloadStatus::NoSuchInterface,
                    &format!(
                        "netserver finds no interface toward its client {}",
                        self.peer.ip().to_canonical()
                    ),
                )
            }
        };
        match request.op {
            OffloadOp::Read => describe(&interface),
            OffloadOp::Set => {
                let wanted = request.changes.pairs();
                let rule =
                    opts.offload_changes
                        .permits(&interface, self.peer.ip(), toward.as_deref());
                match rule {
                    Ok(()) => self.change(&interface, &wanted, opts),
                    Err(rule) => self.refuse(&interface, &wanted, &rule, opts),
                }
            }
            OffloadOp::Restore => match self.release(opts) {
                Ok(()) => describe(&interface),
                Err(e) => failure(&e),
            },
        }
    }

    /// A change the operator's rule does not reach: logged, and answered
    /// with the rule (NotAllowed, as netservers before the rule answered).
    fn refuse(
        &self,
        interface: &str,
        wanted: &[(Offload, bool)],
        rule: &str,
        opts: &ServerOptions,
    ) -> OffloadResponse {
        let text = format!(
            "refused offload change on {interface} ({}): {rule}",
            asked(wanted)
        );
        // Without the opt-in nobody can change anything: a client's probe
        // is no event the operator must see.
        if opts.offload_changes.enabled() {
            log::audit(opts, Some(self.peer), &text);
        } else {
            log::line(opts, Some(self.peer), &text);
        }
        let mut response = OffloadResponse::failure(OffloadStatus::NotAllowed, rule);
        response.interface = interface.to_string();
        response
    }

    /// Change `wanted` on `interface`, holding it (and its state before the
    /// first change) for this connection.
    fn change(
        &mut self,
        interface: &str,
        wanted: &[(Offload, bool)],
        opts: &ServerOptions,
    ) -> OffloadResponse {
        let mut registry = registry();
        if registry.closed {
            return OffloadResponse::failure(OffloadStatus::Failed, "netserver is shutting down");
        }
        match registry.held.get(interface) {
            Some(hold) if hold.owner != self.id => {
                return OffloadResponse::failure(
                    OffloadStatus::Busy,
                    &format!(
                        "another control connection (from {}) is changing the offloads of {interface}; \
                         they are restored when it closes",
                        hold.peer.ip()
                    ),
                );
            }
            Some(_) => {}
            None => match RestoreGuard::capture(&[interface], &Offload::ALL) {
                Ok(guard) => {
                    registry.held.insert(
                        interface.to_string(),
                        Hold {
                            owner: self.id,
                            peer: self.peer,
                            guard,
                        },
                    );
                }
                Err(e) => return failure(&e),
            },
        }
        match offload::set(interface, wanted) {
            Ok(_) => {
                log::audit(
                    opts,
                    Some(self.peer),
                    &format!("offloads of {interface} set: {}", asked(wanted)),
                );
                describe(interface)
            }
            Err(e) => {
                log::audit(
                    opts,
                    Some(self.peer),
                    &format!(
                        "offload change on {interface} ({}) failed: {e}",
                        asked(wanted)
                    ),
                );
                failure(&e)
            }
        }
    }

    /// Put back every interface this connection changed, and let go of
    /// them; the first failure (all are tried and logged).
    pub fn release(&mut self, opts: &ServerOptions) -> Result<(), OffloadError> {
        // Restored under the lock: another connection must not capture an
        // interface's "original" state while ours is being put back.
        let mut registry = registry();
        let mine: Vec<String> = registry
            .held
            .iter()
            .filter(|(_, hold)| hold.owner == self.id)
            .map(|(name, _)| name.clone())
            .collect();
        let mut first_error = None;
        for name in mine {
            if let Some(hold) = registry.held.remove(&name) {
                if let Err(e) = restore(&name, hold, "", opts) {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Put one held interface back, saying so in the log.
fn restore(
    name: &str,
    mut hold: Hold,
    when: &str,
    opts: &ServerOptions,
) -> Result<(), OffloadError> {
    let result = hold.guard.restore().map(|_| ());
    let text = match &result {
        Ok(()) => format!("offloads of {name} restored{when}"),
        Err(e) => format!("offloads of {name} NOT restored{when}: {e}"),
    };
    log::audit(opts, Some(hold.peer), &text);
    result
}

/// The changes asked for, as the log shows them: "tso off gro on".
fn asked(wanted: &[(Offload, bool)]) -> String {
    let pairs: Vec<String> = wanted
        .iter()
        .map(|(o, on)| format!("{o} {}", offload::on_off(*on)))
        .collect();
    pairs.join(" ")
}

impl Drop for SessionOffloads {
    /// A session that ends without `release` (a panic) still restores: the
    /// holds' guards put their interfaces back as they drop.
    fn drop(&mut self) {
        let mut registry = registry();
        registry.held.retain(|_, hold| hold.owner != self.id);
    }
}

/// At shutdown: restore every interface still held (sessions that are
/// still open), and refuse changes from now on.
pub fn restore_all(opts: &ServerOptions) {
    let mut registry = registry();
    registry.closed = true;
    for (name, hold) in std::mem::take(&mut registry.held) {
        // Logged; nobody else is left to tell.
        let _ = restore(&name, hold, " at shutdown", opts);
    }
}

/// The offloads of `interface` as a response.
fn describe(interface: &str) -> OffloadResponse {
    let read =
        offload::read(interface).and_then(|snapshot| Ok((snapshot, offload::states(interface)?)));
    let (snapshot, states) = match read {
        Ok(both) => both,
        Err(e) => return failure(&e),
    };
    let bits = |on: &dyn Fn(&offload::OffloadState) -> bool| {
        states
            .iter()
            .filter(|s| on(s))
            .fold(0, |acc, s| acc | 1 << s.offload.index())
    };
    OffloadResponse {
        status: OffloadStatus::Ok,
        interface: snapshot.interface,
        active: bits(&|s| s.active),
        fixed: bits(&|s| s.fixed),
        mtu: snapshot.mtu.unwrap_or(0),
        refused: None,
        text: String::new(),
    }
}

/// Our error as the response's status and text.
fn failure(e: &OffloadError) -> OffloadResponse {
    let status = match e {
        OffloadError::NoSuchInterface { .. } => OffloadStatus::NoSuchInterface,
        OffloadError::Refused { .. } => OffloadStatus::Refused,
        OffloadError::PermissionDenied { .. } => OffloadStatus::PermissionDenied,
        OffloadError::KernelUnsupported => OffloadStatus::KernelUnsupported,
        OffloadError::UnknownOffload { .. } => OffloadStatus::BadRequest,
        OffloadError::NotRestored { .. } | OffloadError::Io { .. } => OffloadStatus::Failed,
    };
    let mut response = OffloadResponse::failure(status, &e.to_string());
    if let OffloadError::Refused {
        interface,
        offload,
        wanted,
        ..
    } = e
    {
        response.refused = Some((*offload, *wanted));
        response.interface = interface.clone();
    }
    response
}
