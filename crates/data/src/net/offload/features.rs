//! ethtool netlink's netdev features of one interface: ETHTOOL_MSG_FEATURES_GET
//! (every feature's hw/wanted/active/nochange bits, by name) and
//! ETHTOOL_MSG_FEATURES_SET (wanted values by name, and the kernel's account
//! of what did not take). Message layouts: "FEATURES_GET" and "FEATURES_SET"
//! in <https://docs.kernel.org/networking/ethtool-netlink.html>; bitsets:
//! "Bit sets" there.

use super::genetlink::{self, Attrs, GenlSocket, NetlinkError};

/// The ethtool family's name and version (linux/ethtool_netlink.h).
pub const FAMILY: &str = "ethtool";
const VERSION: u8 = 1;
/// Message types, user to kernel (and their replies have the same numbers).
const MSG_FEATURES_GET: u8 = 11;
const MSG_FEATURES_SET: u8 = 12;
/// ETHTOOL_A_FEATURES_*: the request header and the four bitsets.
const A_FEATURES_HEADER: u16 = 1;
const A_FEATURES_HW: u16 = 2;
const A_FEATURES_WANTED: u16 = 3;
const A_FEATURES_ACTIVE: u16 = 4;
const A_FEATURES_NOCHANGE: u16 = 5;
/// ETHTOOL_A_HEADER_*: the device by name, and request flags (0 asks for
/// verbose bitsets, which name every bit, so no string-set lookup is needed).
const A_HEADER_DEV_NAME: u16 = 2;
const A_HEADER_FLAGS: u16 = 3;
/// ETHTOOL_A_BITSET_*: a verbose bitset is a list of bits; with NOMASK the
/// listed bits are the set ones, without it each bit carries its value as
/// the BIT_VALUE flag (and the listed bits are the mask).
const A_BITSET_NOMASK: u16 = 1;
const A_BITSET_BITS: u16 = 3;
const A_BITSET_BITS_BIT: u16 = 1;
const A_BITSET_BIT_INDEX: u16 = 1;
const A_BITSET_BIT_NAME: u16 = 2;
const A_BITSET_BIT_VALUE: u16 = 3;

/// One netdev feature ("tx-tcp-segmentation") of one interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    pub name: String,
    /// In hw_features and not in NETIF_F_NEVER_CHANGE: ethtool can change
    /// it. `ethtool -k` marks the others "[fixed]".
    pub changeable: bool,
    /// What was asked for (dev->wanted_features).
    pub wanted: bool,
    /// What is in force (dev->features).
    pub active: bool,
}

impl Feature {
    /// The line `ethtool -k` prints for it, under `label`.
    pub fn ethtool_line(&self, label: &str) -> String {
        let value = on_off(self.active);
        let suffix = if !self.changeable {
            " [fixed]"
        } else if self.active != self.wanted {
            if self.wanted {
                " [requested on]"
            } else {
                " [requested off]"
            }
        } else {
            ""
        };
        format!("{label}: {value}{suffix}")
    }
}

pub fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// ethtool's match of a kernel feature name with a legacy flag's pattern,
/// which holds at most one '*' standing for any text
/// ("tx-tcp*-segmentation" matches "tx-tcp6-segmentation").
pub fn pattern_matches(name: &str, pattern: &str) -> bool {
    match pattern.split_once('*') {
        Some((prefix, suffix)) => {
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        }
        None => name == pattern,
    }
}

/// The verbose bitset in `payload`: (index, name, value) for every listed
/// bit. A bit without a name (none in practice) is named by its index.
fn parse_bitset(payload: &[u8]) -> Vec<(u32, String, bool)> {
    let nomask = genetlink::find_attr(payload, A_BITSET_NOMASK).is_some();
    let Some(bits) = genetlink::find_attr(payload, A_BITSET_BITS) else {
        return Vec::new();
    };
    genetlink::parse_attrs(bits)
        .filter(|(kind, _)| *kind == A_BITSET_BITS_BIT)
        .filter_map(|(_, bit)| {
            let index = genetlink::find_attr(bit, A_BITSET_BIT_INDEX).and_then(genetlink::attr_u32);
            let name = genetlink::find_attr(bit, A_BITSET_BIT_NAME).map(genetlink::attr_string);
            let value = nomask || genetlink::find_attr(bit, A_BITSET_BIT_VALUE).is_some();
            match (index, name) {
                (Some(i), Some(n)) if !n.is_empty() => Some((i, n, value)),
                (Some(i), _) => Some((i, format!("bit{i}"), value)),
                (None, Some(n)) if !n.is_empty() => Some((u32::MAX, n, value)),
                _ => None,
            }
        })
        .collect()
}

/// The ethtool request header naming `interface`, verbose bitsets.
fn header(attrs: &mut Attrs, interface: &str) {
    attrs.nest(A_FEATURES_HEADER, |h| {
        h.string(A_HEADER_DEV_NAME, interface)
            .u32(A_HEADER_FLAGS, 0);
    });
}

/// The ethtool family on an open socket.
pub struct Ethtool {
    socket: GenlSocket,
    family: u16,
}

/// Why the ethtool family could not be reached.
pub enum OpenError {
    /// No ethtool netlink family: a kernel before 5.6, or built without it.
    Unsupported,
    Netlink(NetlinkError),
}

impl Ethtool {
    pub fn open() -> Result<Self, OpenError> {
        let mut socket = GenlSocket::open().map_err(|e| match e.errno {
            libc::EAFNOSUPPORT | libc::EPROTONOSUPPORT => OpenError::Unsupported,
            _ => OpenError::Netlink(e),
        })?;
        match socket.family_id(FAMILY) {
            Ok(Some(family)) => Ok(Ethtool { socket, family }),
            Ok(None) => Err(OpenError::Unsupported),
            Err(e) => Err(OpenError::Netlink(e)),
        }
    }

    /// Every netdev feature of `interface`, in the kernel's bit order.
    pub fn features(&mut self, interface: &str) -> Result<Vec<Feature>, NetlinkError> {
        let mut attrs = Attrs::new();
        header(&mut attrs, interface);
        let reply = self
            .socket
            .request(self.family, MSG_FEATURES_GET, VERSION, &attrs)?;
        let set = |kind| {
            genetlink::find_attr(&reply, kind)
                .map(parse_bitset)
                .unwrap_or_default()
        };
        // HW comes with the mask of every feature the kernel knows, so it
        // lists them all; the other three list only their set bits.
        let hw = set(A_FEATURES_HW);
        if hw.is_empty() {
            return Err(NetlinkError {
                errno: libc::EPROTO,
                message: Some("the kernel listed no features".into()),
            });
        }
        let has = |list: &[(u32, String, bool)], index: u32, name: &str| {
            list.iter()
                .any(|(i, n, v)| *v && (*i == index || n == name))
        };
        let (wanted, active, nochange) = (
            set(A_FEATURES_WANTED),
            set(A_FEATURES_ACTIVE),
            set(A_FEATURES_NOCHANGE),
        );
        Ok(hw
            .iter()
            .map(|(index, name, in_hw)| Feature {
                name: name.clone(),
                changeable: *in_hw && !has(&nochange, *index, name),
                wanted: has(&wanted, *index, name),
                active: has(&active, *index, name),
            })
            .collect())
    }

    /// Ask for `wanted` (feature name, value) on `interface`. Returns the
    /// requested features the kernel left different from the request
    /// (the reply's WANTED bitset: name and what was requested).
    pub fn set_features(
        &mut self,
        interface: &str,
        wanted: &[(String, bool)],
    ) -> Result<Vec<(String, bool)>, NetlinkError> {
        let mut attrs = Attrs::new();
        header(&mut attrs, interface);
        // Without NOMASK the listed bits are the mask: only these change.
        attrs.nest(A_FEATURES_WANTED, |set| {
            set.nest(A_BITSET_BITS, |bits| {
                for (name, value) in wanted {
                    bits.nest(A_BITSET_BITS_BIT, |bit| {
                        bit.string(A_BITSET_BIT_NAME, name)
                            .flag(A_BITSET_BIT_VALUE, *value);
                    });
                }
            });
        });
        let reply = self
            .socket
            .request(self.family, MSG_FEATURES_SET, VERSION, &attrs)?;
        // The reply's WANTED holds the requested bits whose result differs
        // from the request, valued as requested; its ACTIVE (not needed:
        // we read the state back) holds the bits that changed.
        Ok(genetlink::find_attr(&reply, A_FEATURES_WANTED)
            .map(parse_bitset)
            .unwrap_or_default()
            .into_iter()
            .map(|(_, name, requested)| (name, requested))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_ethtool_does() {
        let tso = "tx-tcp*-segmentation";
        for name in [
            "tx-tcp-segmentation",
            "tx-tcp6-segmentation",
            "tx-tcp-ecn-segmentation",
            "tx-tcp-mangleid-segmentation",
            "tx-tcp-accecn-segmentation",
        ] {
            assert!(pattern_matches(name, tso), "{name}");
        }
        for name in ["tx-udp-segmentation", "tx-tcp", "tx-tcp-segmentationx", ""] {
            assert!(!pattern_matches(name, tso), "{name}");
        }
        // The prefix and the suffix may not overlap.
        assert!(!pattern_matches("ab", "ab*b"));
        assert!(pattern_matches("rx-gro", "rx-gro"));
        assert!(!pattern_matches("rx-gro-hw", "rx-gro"));
    }

    #[test]
    fn verbose_bitsets_parse_with_and_without_a_mask() {
        let mut masked = Attrs::new();
        masked.nest(A_BITSET_BITS, |bits| {
            for (index, name, value) in [(0, "a", true), (1, "b", false)] {
                bits.nest(A_BITSET_BITS_BIT, |b| {
                    b.u32(A_BITSET_BIT_INDEX, index)
                        .string(A_BITSET_BIT_NAME, name)
                        .flag(A_BITSET_BIT_VALUE, value);
                });
            }
        });
        assert_eq!(
            parse_bitset(masked.bytes()),
            vec![(0, "a".to_string(), true), (1, "b".to_string(), false)]
        );
        let mut listed = Attrs::new();
        listed
            .flag(A_BITSET_NOMASK, true)
            .nest(A_BITSET_BITS, |bits| {
                bits.nest(A_BITSET_BITS_BIT, |b| {
                    b.u32(A_BITSET_BIT_INDEX, 5);
                });
            });
        assert_eq!(
            parse_bitset(listed.bytes()),
            vec![(5, "bit5".to_string(), true)]
        );
        assert!(parse_bitset(&[]).is_empty());
    }

    #[test]
    fn lines_read_as_ethtool_prints_them() {
        let f = |changeable, wanted, active| Feature {
            name: "rx-lro".into(),
            changeable,
            wanted,
            active,
        };
        for (feature, shown) in [
            (f(false, false, false), "off [fixed]"),
            (f(true, true, false), "off [requested on]"),
            (f(true, false, true), "on [requested off]"),
            (f(true, true, true), "on"),
        ] {
            let line = feature.ethtool_line("large-receive-offload");
            assert_eq!(line, format!("large-receive-offload: {shown}"));
        }
    }
}
