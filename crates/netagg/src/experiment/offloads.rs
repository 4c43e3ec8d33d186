//! The experiment's offload switch: which interface on each end, a check
//! before the first run that every level the plan asks for can be set
//! (then everything put back), each cell's levels set and read back before
//! its run, and the original state restored at the end, on Ctrl-C, or when
//! the switch is dropped. The remote end goes through our netserver's
//! offload control (only when its operator allowed changes; netserver also
//! restores when our control connection closes).

use super::factors::FactorKind;
use super::plan::{OffloadEnds, Plan};
use super::runner::OffloadControl;
use netperf_client::control::offload::{NetserverAt, RemoteOffloadError, RemoteOffloads};
use netperf_data::net::offload::{self, on_off, OffloadError, OffloadSnapshot, RestoreGuard};
use netperf_results::model::{Cell, OffloadRecord};
use netperf_wire::offload::Offload;
use std::net::ToSocketAddrs;

/// Both ends' offloads for one experiment.
pub struct OffloadSwitch {
    ends: OffloadEnds,
    offload_set: Vec<Offload>,
    /// Whether the plan has the `offloads` factor (which switches `offload_set`).
    offloads_factor: bool,
    /// Whether any factor switches offloads (else the switch only reads).
    switching: bool,
    local_interface: Option<String>,
    local_guard: Option<RestoreGuard>,
    remote: Option<RemoteOffloads>,
    host: String,
    port: u16,
    remote_interface: Option<String>,
    /// Held while this experiment may change the local interface.
    _local_lock: Option<super::iflock::InterfaceLock>,
    /// Each end's state before anything changed.
    pub local_start: Option<OffloadSnapshot>,
    pub remote_start: Option<OffloadSnapshot>,
}

/// The (offload, on) pairs a cell asks for, in the table's order.
pub fn wanted_of(cell: &Cell, offload_set: &[Offload]) -> Vec<(Offload, bool)> {
    let mut wanted: Vec<(Offload, bool)> = Vec::new();
    for (factor, level) in cell {
        let on = level == "on";
        if factor == "offloads" {
            wanted.extend(offload_set.iter().map(|&o| (o, on)));
        } else if let Ok(o) = Offload::from_name(factor) {
            wanted.push((o, on));
        }
    }
    wanted
}

/// The local interface toward `host`, as the kernel would route to it.
fn interface_toward(host: &str, port: u16) -> Option<String> {
    let addr = (host, port).to_socket_addrs().ok()?.next()?;
    netperf_data::net::interface::egress_interface(&addr)
}

fn remote_error(e: RemoteOffloadError, ends: OffloadEnds) -> String {
    match e {
        RemoteOffloadError::NotNetperfNg { .. } | RemoteOffloadError::NotAllowed { .. }
            if ends == OffloadEnds::Both =>
        {
            format!("{e}; or switch the local end only: offload_ends = \"local\" (--offload-ends local)")
        }
        other => other.to_string(),
    }
}

/// How to leave `refused` out of the plan, by what put it there: the
/// `offloads` factor's set (`--offload-set` less it) or a factor of its own.
/// A driver's fixed offload (veth's lro) cannot be switched at all, so the
/// refusal alone would leave the user guessing which option to change.
fn leave_out(refused: Offload, offload_set: &[Offload], offloads_factor: bool) -> String {
    if !(offloads_factor && offload_set.contains(&refused)) {
        return format!("leave the {refused} factor out");
    }
    let rest: Vec<&str> = offload_set
        .iter()
        .filter(|&&o| o != refused)
        .map(|o| o.name())
        .collect();
    if rest.is_empty() {
        return format!("leave the offloads factor out (it switches {refused} only)");
    }
    let quoted: Vec<String> = rest.iter().map(|name| format!("\"{name}\"")).collect();
    format!(
        "to switch the others, leave {refused} out: --offload-set {} (offload_set = [{}] in the plan)",
        rest.join(","),
        quoted.join(", ")
    )
}

impl OffloadSwitch {
    /// Finds both interfaces, reads their state, and, when the plan
    /// switches offloads, checks that every level can be set on each end
    /// it applies to (putting everything back afterwards). Errors are one
    /// line each; nothing is left changed.
    pub fn open(plan: &Plan) -> Result<OffloadSwitch, String> {
        let offload_set = plan
            .offload_set
            .iter()
            .map(|n| Offload::from_name(n).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let switching = plan.changes_offloads();
        let local_interface = plan
            .interface
            .clone()
            .or_else(|| interface_toward(&plan.host, plan.port));
        let mut switch = OffloadSwitch {
            ends: plan.offload_ends,
            offload_set,
            offloads_factor: plan.factors.iter().any(|f| f.kind == FactorKind::Offloads),
            switching,
            local_interface,
            local_guard: None,
            remote: None,
            host: plan.host.clone(),
            port: plan.port,
            remote_interface: plan.remote_interface.clone(),
            _local_lock: None,
            local_start: None,
            remote_start: None,
        };
        let local_switched = switching && plan.offload_ends.local();
        let remote_switched = switching && plan.offload_ends.remote();
        match (&switch.local_interface, local_switched) {
            (Some(interface), true) => {
                switch._local_lock = Some(super::iflock::lock(interface)?);
                switch.local_start = Some(offload::read(interface).map_err(|e| e.to_string())?);
                let involved: Vec<Offload> = Offload::ALL.to_vec();
                switch.local_guard = Some(RestoreGuard::capture(&[interface], &involved).map_err(|e| e.to_string())?);
            }
            (None, true) => {
                return Err(format!(
                    "cannot tell which local interface reaches {}: name it with interface = \"...\" (--interface)",
                    plan.host
                ))
            }
            (Some(interface), false) => switch.local_start = offload::read(interface).ok(),
            (None, false) => {}
        }
        match switch.connect_remote() {
            Ok(()) => {}
            Err(e) if remote_switched => return Err(remote_error(e, plan.offload_ends)),
            Err(_) => switch.remote = None,
        }
        if switching {
            switch.preflight(plan)?;
        }
        Ok(switch)
    }

    fn connect_remote(&mut self) -> Result<(), RemoteOffloadError> {
        let mut remote = RemoteOffloads::connect(&self.host, self.port)?;
        remote.set_interface(self.remote_interface.as_deref());
        let state = remote.read()?;
        self.remote_start.get_or_insert(state);
        self.remote = Some(remote);
        Ok(())
    }

    /// Sets every distinct level combination of the plan once on each end
    /// it applies to, then restores: a refusal shows before any run.
    fn preflight(&mut self, plan: &Plan) -> Result<(), String> {
        let mut combinations: Vec<Vec<(Offload, bool)>> = Vec::new();
        for cell in plan.cells() {
            let wanted = wanted_of(&cell, &self.offload_set);
            if !combinations.contains(&wanted) {
                combinations.push(wanted);
            }
        }
        let mut result = Ok(());
        for wanted in &combinations {
            if let Err(e) = self.set_both(wanted) {
                result = Err(e);
                break;
            }
        }
        let restored = self.restore();
        result?;
        restored?;
        // The guard is spent by the restore: take a new one for the runs.
        if let (Some(interface), true) = (&self.local_interface, self.ends.local()) {
            self.local_guard = Some(
                RestoreGuard::capture(&[interface], &Offload::ALL).map_err(|e| e.to_string())?,
            );
        }
        Ok(())
    }

    /// Sets `wanted` where it applies; reads elsewhere. The read-back state.
    fn set_both(&mut self, wanted: &[(Offload, bool)]) -> Result<OffloadRecord, String> {
        let mut record = OffloadRecord::default();
        if let Some(interface) = &self.local_interface {
            let local = if self.switching && self.ends.local() {
                offload::set(interface, wanted)
            } else {
                offload::read(interface)
            };
            record.local = Some(local.map_err(|e| {
                let refused = match &e {
                    OffloadError::Refused { offload, .. } => Some(*offload),
                    _ => None,
                };
                self.refusal("local", e.to_string(), refused)
            })?);
        }
        let remote_wanted: &[(Offload, bool)] = if self.switching && self.ends.remote() {
            wanted
        } else {
            &[]
        };
        record.remote = match self.remote_call(remote_wanted) {
            Ok(s) => Some(s),
            Err(e) if self.switching && self.ends.remote() => {
                let refused = match &e {
                    RemoteOffloadError::Refused { offload, .. } => Some(*offload),
                    _ => None,
                };
                return Err(self.refusal("remote", remote_error(e, self.ends), refused));
            }
            Err(_) => None,
        };
        Ok(record)
    }

    /// One end's error as the experiment reports it; an offload the end
    /// refused to switch comes with how to leave it out of the plan.
    fn refusal(&self, end: &str, text: String, refused: Option<Offload>) -> String {
        match refused {
            Some(o) => format!(
                "{end}: {text}; {}",
                leave_out(o, &self.offload_set, self.offloads_factor)
            ),
            None => format!("{end}: {text}"),
        }
    }

    /// One remote set (or read), reconnecting once if the connection was
    /// lost (netserver's idle timeout, a restart): netserver restored our
    /// changes then, so they are made again.
    fn remote_call(
        &mut self,
        wanted: &[(Offload, bool)],
    ) -> Result<OffloadSnapshot, RemoteOffloadError> {
        let Some(remote) = self.remote.as_mut() else {
            return Err(RemoteOffloadError::NotNetperfNg {
                at: NetserverAt::new(&self.host, self.port),
            });
        };
        match remote.set(wanted) {
            Err(RemoteOffloadError::Io { .. }) => {
                self.connect_remote()?;
                self.remote.as_mut().expect("just connected").set(wanted)
            }
            other => other,
        }
    }

    /// Puts both ends back as they were; the first failure is returned
    /// after both were tried.
    pub fn restore(&mut self) -> Result<(), String> {
        let local = match self.local_guard.as_mut() {
            Some(guard) => guard.restore().map(drop).map_err(|e| format!("local: {e}")),
            None => Ok(()),
        };
        let remote = match (self.remote.as_mut(), self.switching && self.ends.remote()) {
            (Some(r), true) => r.restore().map(drop).map_err(|e| format!("remote: {e}")),
            _ => Ok(()),
        };
        local.and(remote)
    }
}

impl OffloadControl for OffloadSwitch {
    fn apply(&mut self, cell: &Cell) -> Result<OffloadRecord, String> {
        let wanted = wanted_of(cell, &self.offload_set);
        self.set_both(&wanted)
    }

    fn verify(&mut self, before: &OffloadRecord) -> Result<(), String> {
        if !self.switching {
            return Ok(());
        }
        let after = self.set_both(&[])?;
        let ends = [
            ("local", &before.local, &after.local),
            ("remote", &before.remote, &after.remote),
        ];
        let changed: Vec<String> = ends
            .iter()
            .filter_map(|(end, b, a)| Some((end, b.as_ref()?, a.as_ref()?)))
            .flat_map(|(end, b, a)| {
                b.features.iter().filter_map(move |(name, was)| {
                    let now = a.features.get(name)?;
                    (now != was)
                        .then(|| format!("{end} {name} was {}, now {}", on_off(*was), on_off(*now)))
                })
            })
            .collect();
        if changed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the offloads changed during the run (something else switched them): {}",
                changed.join(", ")
            ))
        }
    }
}

impl Drop for OffloadSwitch {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!("netagg experiment: restoring offloads: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_offload_comes_with_the_option_that_leaves_it_out() {
        let all = Offload::ALL.to_vec();
        assert_eq!(
            leave_out(Offload::Lro, &all, true),
            "to switch the others, leave lro out: --offload-set tso,gso,gro \
             (offload_set = [\"tso\", \"gso\", \"gro\"] in the plan)"
        );
        assert_eq!(
            leave_out(Offload::Lro, &[Offload::Lro], true),
            "leave the offloads factor out (it switches lro only)"
        );
        // Its own factor, whatever the set holds.
        assert_eq!(
            leave_out(Offload::Lro, &all, false),
            "leave the lro factor out"
        );
        assert_eq!(
            leave_out(Offload::Gso, &[Offload::Tso], true),
            "leave the gso factor out"
        );
    }
}
