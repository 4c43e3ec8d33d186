//! Stateless offloads of a local interface — tso, gso, gro, lro, as
//! `ethtool -k/-K` names them — read, changed and restored through the
//! kernel's ethtool netlink family (no ethtool binary, no ioctl).
//!
//! A legacy name stands for the kernel features that match its pattern, as in
//! ethtool's `off_flag_def`: tso = `tx-tcp*-segmentation` (tx-tcp-, -ecn-,
//! -mangleid-, tcp6- and, from Linux 6.18, -accecn-segmentation), gso =
//! `tx-generic-segmentation`, gro = `rx-gro`, lro = `rx-lro`. Like `ethtool -k`,
//! an offload reads "on" when any of its features is active; `set` asks for
//! every feature of it the driver can change, and then requires each of those
//! to take (the driver's fixed ones are left as they are, as `ethtool -K`
//! leaves them).

mod features;
mod genetlink;
mod restore;

pub use features::on_off;
use features::{pattern_matches, Ethtool, Feature, OpenError};
use genetlink::NetlinkError;
use netperf_wire::offload::{valid_interface_name, Offload};
pub use restore::RestoreGuard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// ethtool's pattern of the kernel feature names an offload stands for (at
/// most one '*'), as in its `off_flag_def`.
fn pattern(offload: Offload) -> &'static str {
    match offload {
        Offload::Tso => "tx-tcp*-segmentation",
        Offload::Gso => "tx-generic-segmentation",
        Offload::Gro => "rx-gro",
        Offload::Lro => "rx-lro",
    }
}

/// Whether kernel feature `name` is one of `offload`'s.
fn covers(offload: Offload, name: &str) -> bool {
    pattern_matches(name, pattern(offload))
}

/// Why offloads could not be read, changed or restored. Each message is one
/// line that names the interface and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OffloadError {
    #[error("unknown offload '{name}': the offloads are tso, gso, gro and lro")]
    UnknownOffload { name: String },
    #[error("there is no network interface named '{interface}' here ('ip link' lists them)")]
    NoSuchInterface { interface: String },
    /// The driver or the kernel did not apply the change; `shown` is what
    /// `ethtool -k` shows for it now.
    #[error("cannot turn {offload} {} on {interface}: {reason} (ethtool -k {interface} shows '{shown}'); {aftermath}", on_off(*wanted))]
    Refused {
        interface: String,
        offload: Offload,
        wanted: bool,
        shown: String,
        reason: String,
        /// "nothing was changed", or what became of this call's changes.
        aftermath: String,
    },
    #[error("changing the offloads of {interface} needs root or CAP_NET_ADMIN, which this process does not have")]
    PermissionDenied { interface: String },
    #[error("this kernel has no ethtool netlink interface (Linux 5.6 or later has it): offloads cannot be read or changed")]
    KernelUnsupported,
    #[error("offloads of {interface} were not restored: {detail}")]
    NotRestored { interface: String, detail: String },
    #[error("cannot {doing} the offloads of {interface}: {detail}")]
    Io {
        interface: String,
        doing: &'static str,
        detail: String,
    },
}

/// The kernel's refusal as our error, for `doing` on `interface`.
fn kernel_error(interface: &str, doing: &'static str, e: NetlinkError) -> OffloadError {
    match e.errno {
        libc::ENODEV => OffloadError::NoSuchInterface {
            interface: interface.to_string(),
        },
        libc::EPERM | libc::EACCES => OffloadError::PermissionDenied {
            interface: interface.to_string(),
        },
        libc::EOPNOTSUPP => OffloadError::KernelUnsupported,
        _ => OffloadError::Io {
            interface: interface.to_string(),
            doing,
            detail: e.to_string(),
        },
    }
}

/// One interface's features, as the kernel reported them.
struct Device {
    interface: String,
    features: Vec<Feature>,
}

impl Device {
    fn read(ethtool: &mut Ethtool, interface: &str) -> Result<Device, OffloadError> {
        let features = ethtool
            .features(interface)
            .map_err(|e| kernel_error(interface, "read", e))?;
        Ok(Device {
            interface: interface.to_string(),
            features,
        })
    }

    fn of(&self, offload: Offload) -> impl Iterator<Item = &Feature> {
        self.features
            .iter()
            .filter(move |f| covers(offload, &f.name))
    }

    /// On when any of its features is active, as `ethtool -k` shows it.
    fn active(&self, offload: Offload) -> bool {
        self.of(offload).any(|f| f.active)
    }

    /// None of its features can change: `ethtool -k` shows "[fixed]".
    fn fixed(&self, offload: Offload) -> bool {
        !self.of(offload).any(|f| f.changeable)
    }

    /// Whether the offload is as `wanted`: its legacy value, and every
    /// feature of it the driver can change.
    fn satisfies(&self, offload: Offload, wanted: bool) -> bool {
        self.active(offload) == wanted
            && self
                .of(offload)
                .filter(|f| f.changeable)
                .all(|f| f.active == wanted)
    }

    /// Whether changing the features the driver lets change can make the
    /// offload `wanted`: on needs one such feature (or one fixed on); off
    /// needs no fixed feature on.
    fn reachable(&self, offload: Offload, wanted: bool) -> bool {
        if wanted {
            !self.fixed(offload) || self.active(offload)
        } else {
            !self.of(offload).any(|f| !f.changeable && f.active)
        }
    }

    /// What `ethtool -k` shows for the offload, on one line: the feature's
    /// own line when the offload is one feature, else the legacy line and
    /// its features' lines in parentheses.
    fn shown(&self, offload: Offload) -> String {
        let label = offload.ethtool_name();
        let members: Vec<&Feature> = self.of(offload).collect();
        match members.as_slice() {
            [one] => one.ethtool_line(label),
            [] => format!("{label}: off"),
            many => {
                let lines: Vec<String> = many.iter().map(|f| f.ethtool_line(&f.name)).collect();
                format!(
                    "{label}: {} ({})",
                    on_off(self.active(offload)),
                    lines.join(", ")
                )
            }
        }
    }

    fn state(&self, offload: Offload) -> OffloadState {
        OffloadState {
            offload,
            active: self.active(offload),
            fixed: self.fixed(offload),
            ethtool: self.shown(offload),
        }
    }

    fn snapshot(&self) -> OffloadSnapshot {
        let features: BTreeMap<String, bool> = Offload::ALL
            .iter()
            .map(|&o| (o.name().to_string(), self.active(o)))
            .collect();
        OffloadSnapshot {
            interface: self.interface.clone(),
            features,
            mtu: mtu(&self.interface),
        }
    }
}

/// The stateless offloads of one interface as read back from the kernel
/// (ethtool netlink): feature ("tso", "gso", "gro", "lro") -> on. A feature
/// the interface does not have is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadSnapshot {
    pub interface: String,
    pub features: BTreeMap<String, bool>,
    /// The interface's MTU, when known.
    #[serde(default)]
    pub mtu: Option<u32>,
}

impl OffloadSnapshot {
    /// The features as ethtool says them, "tso on" ..., `separator` between.
    pub fn features_text(&self, separator: &str) -> String {
        let words: Vec<String> = self
            .features
            .iter()
            .map(|(name, on)| format!("{name} {}", on_off(*on)))
            .collect();
        words.join(separator)
    }
}

/// One offload of one interface in detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadState {
    pub offload: Offload,
    /// On, as `ethtool -k` shows it (any of its features active).
    pub active: bool,
    /// The driver lets none of its features change ("[fixed]").
    pub fixed: bool,
    /// What `ethtool -k` shows for it, e.g. "large-receive-offload: off [fixed]".
    pub ethtool: String,
}

/// The ethtool family, or why it cannot be had.
fn open(interface: &str) -> Result<Ethtool, OffloadError> {
    Ethtool::open().map_err(|e| match e {
        OpenError::Unsupported => OffloadError::KernelUnsupported,
        OpenError::Netlink(e) => kernel_error(interface, "reach", e),
    })
}

fn checked_name(interface: &str) -> Result<(), OffloadError> {
    if valid_interface_name(interface) {
        Ok(())
    } else {
        Err(OffloadError::NoSuchInterface {
            interface: interface.to_string(),
        })
    }
}

/// The four offloads of `interface` and its MTU.
pub fn read(interface: &str) -> Result<OffloadSnapshot, OffloadError> {
    checked_name(interface)?;
    Ok(Device::read(&mut open(interface)?, interface)?.snapshot())
}

/// The four offloads of `interface` in detail (fixed or not, ethtool's line).
pub fn states(interface: &str) -> Result<Vec<OffloadState>, OffloadError> {
    checked_name(interface)?;
    let device = Device::read(&mut open(interface)?, interface)?;
    Ok(Offload::ALL.iter().map(|&o| device.state(o)).collect())
}

/// Turn offloads of `interface` on or off (a later pair for the same
/// offload wins), then read the state back. An offload the driver has
/// fixed is refused before anything changes; one the kernel did not apply
/// is refused after this call has put back what it changed. Offloads that
/// already are as wanted are left alone.
pub fn set(interface: &str, wanted: &[(Offload, bool)]) -> Result<OffloadSnapshot, OffloadError> {
    checked_name(interface)?;
    let mut merged: BTreeMap<Offload, bool> = BTreeMap::new();
    merged.extend(wanted.iter().copied());
    let mut ethtool = open(interface)?;
    let before = Device::read(&mut ethtool, interface)?;
    let refused = |device: &Device, offload: Offload, want: bool, reason: &str, aftermath: &str| {
        OffloadError::Refused {
            interface: interface.to_string(),
            offload,
            wanted: want,
            shown: device.shown(offload),
            reason: reason.to_string(),
            aftermath: aftermath.to_string(),
        }
    };
    if let Some((&offload, &want)) = merged.iter().find(|(&o, &w)| !before.reachable(o, w)) {
        return Err(refused(
            &before,
            offload,
            want,
            "the driver does not let it change",
            "nothing was changed",
        ));
    }
    let request: Vec<(String, bool)> = merged
        .iter()
        .flat_map(|(&offload, &want)| {
            before
                .of(offload)
                .filter(move |f| f.changeable && (f.wanted != want || f.active != want))
                .map(move |f| (f.name.clone(), want))
        })
        .collect();
    if request.is_empty() {
        return Ok(before.snapshot());
    }
    let undo: Vec<(String, bool)> = request
        .iter()
        .filter_map(|(name, _)| before.features.iter().find(|f| &f.name == name))
        .map(|f| (f.name.clone(), f.wanted))
        .collect();
    let kept = ethtool
        .set_features(interface, &request)
        .map_err(|e| kernel_error(interface, "change", e))?;
    let after = Device::read(&mut ethtool, interface)?;
    let Some((&offload, &want)) = merged.iter().find(|(&o, &w)| !after.satisfies(o, w)) else {
        return Ok(after.snapshot());
    };
    let held: Vec<&str> = kept
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| covers(offload, name))
        .collect();
    let reason = if held.is_empty() {
        format!("the kernel left it {}", on_off(!want))
    } else {
        format!("the kernel did not apply {}", held.join(", "))
    };
    let reason = format!("{reason}; a feature it depends on may be off, or the driver refused");
    let aftermath = match ethtool.set_features(interface, &undo) {
        Ok(_) => "what this call changed was put back".to_string(),
        Err(e) => format!("putting back what this call changed failed too: {e}"),
    };
    Err(refused(&after, offload, want, &reason, &aftermath))
}

/// The MTU of `interface` (SIOCGIFMTU, in this process's network namespace,
/// which sysfs may not show).
fn mtu(interface: &str) -> Option<u32> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // Any socket will do for the ioctl; an unbound one needs no address
    // (a fresh namespace's loopback has none until it is up).
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a fresh descriptor nobody else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: ifreq is plain data for which all zeros is valid.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(interface.bytes()) {
        *slot = byte as libc::c_char;
    }
    // SAFETY: the request names a NUL-terminated interface (at most 15
    // bytes in 16, checked by the callers) and the kernel writes ifru_mtu.
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFMTU as _, &mut request) };
    if rc != 0 {
        return None;
    }
    // SAFETY: after a successful SIOCGIFMTU the union holds the MTU.
    u32::try_from(unsafe { request.ifr_ifru.ifru_mtu }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feature(name: &str, changeable: bool, wanted: bool, active: bool) -> Feature {
        Feature {
            name: name.into(),
            changeable,
            wanted,
            active,
        }
    }

    /// veth as seen on Linux 6.18: tso on, gso on, gro off, lro off [fixed].
    fn veth() -> Device {
        Device {
            interface: "va".into(),
            features: vec![
                feature("tx-tcp-segmentation", true, true, true),
                feature("tx-tcp-ecn-segmentation", true, true, true),
                feature("tx-tcp6-segmentation", true, true, true),
                feature("tx-tcp-mangleid-segmentation", true, true, true),
                feature("tx-generic-segmentation", true, true, true),
                feature("rx-gro", true, false, false),
                feature("rx-gro-hw", false, false, false),
                feature("rx-lro", false, false, false),
                feature("tx-udp-segmentation", true, true, true),
            ],
        }
    }

    #[test]
    fn offloads_read_as_ethtool_shows_them() {
        let device = veth();
        let snapshot = device.snapshot();
        let on: Vec<(&str, bool)> = snapshot
            .features
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            on,
            [("gro", false), ("gso", true), ("lro", false), ("tso", true)]
        );
        assert!(device.fixed(Offload::Lro) && !device.fixed(Offload::Gro));
        assert_eq!(
            device.shown(Offload::Lro),
            "large-receive-offload: off [fixed]"
        );
        assert_eq!(device.shown(Offload::Gro), "generic-receive-offload: off");
        assert!(device.shown(Offload::Tso).starts_with(
            "tcp-segmentation-offload: on (tx-tcp-segmentation: on, tx-tcp-ecn-segmentation: on, "
        ));
        // rx-gro-hw is not gro, tx-udp-segmentation is not tso.
        assert_eq!(device.of(Offload::Gro).count(), 1);
        assert_eq!(device.of(Offload::Tso).count(), 4);
    }

    #[test]
    fn tso_is_on_when_any_feature_is_and_satisfied_only_when_all_changeable_ones_are() {
        let mut device = veth();
        for f in device
            .features
            .iter_mut()
            .filter(|f| f.name == "tx-tcp6-segmentation")
        {
            f.active = false;
        }
        assert!(device.active(Offload::Tso));
        assert!(!device.satisfies(Offload::Tso, true));
        assert!(!device.satisfies(Offload::Tso, false));
        // A fixed-off member (tx-tcp-ecn-segmentation on many NICs) does not
        // keep tso from being on.
        let mut device = veth();
        device.features[1] = feature("tx-tcp-ecn-segmentation", false, false, false);
        assert!(device.satisfies(Offload::Tso, true));
    }

    #[test]
    fn interface_names_are_checked_as_the_kernel_does() {
        for good in ["eth0", "veth-a.1", "x", "abcdefghijklmno"] {
            assert!(valid_interface_name(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "a:b",
            "a b",
            "abcdefghijklmnop",
            "a\0",
        ] {
            assert!(!valid_interface_name(bad), "{bad:?}");
            assert!(matches!(
                read(bad),
                Err(OffloadError::NoSuchInterface { .. })
            ));
        }
    }

    #[test]
    fn every_error_is_one_line() {
        let errors = [
            OffloadError::UnknownOffload { name: "x".into() },
            OffloadError::NoSuchInterface {
                interface: "x".into(),
            },
            OffloadError::Refused {
                interface: "va".into(),
                offload: Offload::Lro,
                wanted: true,
                shown: "large-receive-offload: off [fixed]".into(),
                reason: "the driver does not let it change".into(),
                aftermath: "nothing was changed".into(),
            },
            OffloadError::PermissionDenied {
                interface: "va".into(),
            },
            OffloadError::KernelUnsupported,
            OffloadError::NotRestored {
                interface: "va".into(),
                detail: "rx-gro is on, was off".into(),
            },
            OffloadError::Io {
                interface: "va".into(),
                doing: "read",
                detail: "x".into(),
            },
        ];
        for e in &errors {
            let text = e.to_string();
            assert!(!text.contains('\n') && !text.is_empty(), "{text}");
        }
        assert_eq!(
            errors[2].to_string(),
            "cannot turn lro on on va: the driver does not let it change \
             (ethtool -k va shows 'large-receive-offload: off [fixed]'); nothing was changed"
        );
    }

    #[test]
    fn loopback_reads_and_a_missing_interface_is_named() {
        match read("lo") {
            Ok(snapshot) => {
                assert_eq!(snapshot.interface, "lo");
                assert_eq!(snapshot.features.len(), 4);
                assert!(snapshot.mtu.is_some_and(|m| m > 0));
            }
            Err(OffloadError::KernelUnsupported) => crate::test_skip::skip("no ethtool netlink"),
            Err(e) => panic!("{e}"),
        }
        match read("nosuchif9") {
            Err(OffloadError::NoSuchInterface { interface }) => assert_eq!(interface, "nosuchif9"),
            Err(OffloadError::KernelUnsupported) => {}
            other => panic!("{other:?}"),
        }
    }
}
