//! Putting offloads back: a guard that captures the wanted values of the
//! features behind the offloads of some interfaces, and restores exactly
//! those (then checks them by reading back) when asked or when dropped.

use super::features::{on_off, Feature};
use super::{checked_name, covers, kernel_error, open, Device, OffloadError, OffloadSnapshot};
use netperf_wire::offload::Offload;

/// The offloads of some interfaces as they were when captured; `restore`
/// (or dropping the guard) puts them back: exactly the features' wanted
/// values, so that an offload whose features differed among themselves
/// comes back that way too.
#[derive(Debug)]
pub struct RestoreGuard {
    saved: Vec<SavedInterface>,
}

#[derive(Debug)]
struct SavedInterface {
    interface: String,
    /// The changeable features of the captured offloads: name, wanted, active.
    features: Vec<Feature>,
}

impl RestoreGuard {
    /// Remember `offloads` of each of `interfaces` (all four for an empty
    /// list).
    pub fn capture(
        interfaces: &[&str],
        offloads: &[Offload],
    ) -> Result<RestoreGuard, OffloadError> {
        let offloads: &[Offload] = if offloads.is_empty() {
            &Offload::ALL
        } else {
            offloads
        };
        let mut saved = Vec::new();
        for &interface in interfaces {
            checked_name(interface)?;
            let device = Device::read(&mut open(interface)?, interface)?;
            let features = device
                .features
                .iter()
                .filter(|f| f.changeable && offloads.iter().any(|&o| covers(o, &f.name)))
                .cloned()
                .collect();
            saved.push(SavedInterface {
                interface: interface.to_string(),
                features,
            });
        }
        Ok(RestoreGuard { saved })
    }

    /// The interfaces this guard restores.
    pub fn interfaces(&self) -> Vec<&str> {
        self.saved.iter().map(|s| s.interface.as_str()).collect()
    }

    /// Put every captured interface back, checking each by reading it
    /// again; returns their states after. Every interface is tried; the
    /// first failure is returned. The guard is spent either way: dropping
    /// it afterwards does nothing.
    pub fn restore(&mut self) -> Result<Vec<OffloadSnapshot>, OffloadError> {
        let mut restored = Vec::new();
        let mut first_error = None;
        for saved in std::mem::take(&mut self.saved) {
            match restore_one(&saved) {
                Ok(snapshot) => restored.push(snapshot),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(restored), Err)
    }
}

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        if self.saved.is_empty() {
            return;
        }
        // Nobody is left to hand the error to: say it, once.
        if let Err(e) = self.restore() {
            eprintln!("netperf-ng: {e}");
        }
    }
}

fn restore_one(saved: &SavedInterface) -> Result<OffloadSnapshot, OffloadError> {
    let interface = saved.interface.as_str();
    let mut ethtool = open(interface)?;
    let now = Device::read(&mut ethtool, interface)?;
    let differs = |f: &Feature| {
        now.features
            .iter()
            .find(|n| n.name == f.name)
            .is_some_and(|n| n.wanted != f.wanted || n.active != f.active)
    };
    let request: Vec<(String, bool)> = saved
        .features
        .iter()
        .filter(|f| differs(f))
        .map(|f| (f.name.clone(), f.wanted))
        .collect();
    if request.is_empty() {
        return Ok(now.snapshot());
    }
    ethtool
        .set_features(interface, &request)
        .map_err(|e| kernel_error(interface, "restore", e))?;
    let after = Device::read(&mut ethtool, interface)?;
    let wrong: Vec<String> = saved
        .features
        .iter()
        .filter_map(|f| {
            let now = after.features.iter().find(|n| n.name == f.name)?;
            (now.active != f.active).then(|| {
                format!(
                    "{} is {}, was {}",
                    f.name,
                    on_off(now.active),
                    on_off(f.active)
                )
            })
        })
        .collect();
    if wrong.is_empty() {
        Ok(after.snapshot())
    } else {
        Err(OffloadError::NotRestored {
            interface: interface.to_string(),
            detail: wrong.join(", "),
        })
    }
}
