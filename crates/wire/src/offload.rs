//! netperf-ng's offload control messages: our netperf-side tools ask our
//! netserver to read, change or restore the stateless offloads (tso, gso,
//! gro, lro) of its interface. Request type `kind::DO_NG_OFFLOADS`, far from
//! netperf's own numbers (which end at 601), so a stock netserver answers
//! it as an unknown request (serv_errno 998) and a stock netperf never sends
//! it. Both layouts start with a magic word that carries their version.
//!
//! Request, data bytes: 0 magic "NGO1", 4 operation (1 read, 2 set,
//! 3 restore), 8 mask of the offloads to set, 12 their values (bit i is
//! `Offload::ALL[i]`: tso, gso, gro, lro), 16..32 the interface name,
//! NUL-terminated (empty: the one that carries the client's traffic). Every
//! other byte is zero.
//!
//! Response, data bytes: 0 magic, 4 status, 8 offloads on, 12 offloads the
//! driver has fixed, 16 MTU (0 unknown), 20 the refused offload's index + 1
//! (0 none), 24 the value that was refused, 32..48 the interface, 48..448 one
//! line of text saying why (empty on success).
//!
//! Also the vocabulary both ends share: the offloads' names and which
//! interface names the kernel would take.

use super::message::{kind, Message};

/// One stateless offload, by its `ethtool -K` short name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Offload {
    Tso,
    Gso,
    Gro,
    Lro,
}

/// What each offload is called: `NAMES[offload.index()]` is (short name,
/// the name `ethtool -k` prints).
const NAMES: [(&str, &str); 4] = [
    ("tso", "tcp-segmentation-offload"),
    ("gso", "generic-segmentation-offload"),
    ("gro", "generic-receive-offload"),
    ("lro", "large-receive-offload"),
];

impl Offload {
    pub const ALL: [Offload; 4] = [Offload::Tso, Offload::Gso, Offload::Gro, Offload::Lro];

    /// Its place in `ALL` (and its bit in the netserver request).
    pub fn index(self) -> usize {
        self as usize
    }

    /// "tso", "gso", "gro", "lro": the key in `OffloadSnapshot::features`.
    pub fn name(self) -> &'static str {
        NAMES[self.index()].0
    }

    /// The name `ethtool -k` prints ("tcp-segmentation-offload").
    pub fn ethtool_name(self) -> &'static str {
        NAMES[self.index()].1
    }

    /// The short or the `ethtool -k` name, in any case.
    pub fn from_name(name: &str) -> Result<Offload, UnknownOffload> {
        let wanted = name.trim();
        Offload::ALL
            .into_iter()
            .find(|o| {
                o.name().eq_ignore_ascii_case(wanted)
                    || o.ethtool_name().eq_ignore_ascii_case(wanted)
            })
            .ok_or_else(|| UnknownOffload {
                name: name.to_string(),
            })
    }
}

impl std::fmt::Display for Offload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Offload {
    type Err = UnknownOffload;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Offload::from_name(s)
    }
}

/// A name that is no offload's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown offload '{name}': the offloads are tso, gso, gro and lro")]
pub struct UnknownOffload {
    pub name: String,
}

/// Whether the kernel could take `name` as an interface name (its
/// dev_valid_name): 1 to 15 bytes, not "." or "..", no '/', ':' or space.
pub fn valid_interface_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() < libc::IFNAMSIZ
        && name != "."
        && name != ".."
        && !name
            .bytes()
            .any(|b| b == b'/' || b == b':' || b == 0 || b.is_ascii_whitespace())
}

/// "NGO1": offload control, layout version 1.
pub const MAGIC: u32 = 0x4e47_4f31;
/// Every offload's bit.
pub const ALL_BITS: u32 = (1 << Offload::ALL.len()) - 1;
const NAME_AT: usize = 16;
const NAME_LEN: usize = 16;
const REQUEST_END: usize = NAME_AT + NAME_LEN;
const TEXT_AT: usize = 48;
pub const TEXT_LEN: usize = 400;

/// What the client asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadOp {
    /// The interface's offloads and MTU: always answered.
    Read = 1,
    /// Change offloads: only where the operator allowed it.
    Set = 2,
    /// Put back what this control connection changed (netserver also does
    /// when the connection closes).
    Restore = 3,
}

/// Offloads as two bit masks: which, and their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OffloadBits {
    pub mask: u32,
    pub values: u32,
}

impl OffloadBits {
    /// From (offload, on) pairs; a later pair for the same offload wins.
    pub fn from_pairs(pairs: &[(Offload, bool)]) -> Self {
        let mut bits = OffloadBits::default();
        for &(offload, on) in pairs {
            let bit = 1 << offload.index();
            bits.mask |= bit;
            bits.values = if on {
                bits.values | bit
            } else {
                bits.values & !bit
            };
        }
        bits
    }

    pub fn pairs(&self) -> Vec<(Offload, bool)> {
        Offload::ALL
            .iter()
            .filter(|o| self.mask & (1 << o.index()) != 0)
            .map(|&o| (o, self.values & (1 << o.index()) != 0))
            .collect()
    }
}

/// The set of offloads whose bits are in `mask`.
pub fn offloads_in(mask: u32) -> Vec<Offload> {
    Offload::ALL
        .iter()
        .copied()
        .filter(|o| mask & (1 << o.index()) != 0)
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadRequest {
    pub op: OffloadOp,
    /// None: the netserver's interface toward the client.
    pub interface: Option<String>,
    /// For `Set` only; empty otherwise.
    pub changes: OffloadBits,
}

impl OffloadRequest {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::DO_NG_OFFLOADS, 0);
        m.set_data_u32(0, MAGIC);
        m.set_data_u32(1, self.op as u32);
        m.set_data_u32(2, self.changes.mask);
        m.set_data_u32(3, self.changes.values);
        m.set_data_str(NAME_AT, NAME_LEN, self.interface.as_deref().unwrap_or(""));
        m
    }

    /// A request as netserver takes it: every field checked, every unused
    /// byte zero; the error says what is wrong, for the refusal and the log.
    pub fn decode(m: &Message) -> Result<OffloadRequest, String> {
        if m.data_u32(0) != MAGIC {
            return Err(format!(
                "unknown offload request layout {:#x}",
                m.data_u32(0)
            ));
        }
        let op = match m.data_u32(1) {
            1 => OffloadOp::Read,
            2 => OffloadOp::Set,
            3 => OffloadOp::Restore,
            other => return Err(format!("unknown offload operation {other}")),
        };
        let changes = OffloadBits {
            mask: m.data_u32(2),
            values: m.data_u32(3),
        };
        if changes.mask & !ALL_BITS != 0 || changes.values & !changes.mask != 0 {
            return Err(format!(
                "offload bits out of range (mask {:#x}, values {:#x})",
                changes.mask, changes.values
            ));
        }
        match (op, changes.mask) {
            (OffloadOp::Set, 0) => return Err("an offload change that names no offload".into()),
            (OffloadOp::Read | OffloadOp::Restore, mask) if mask != 0 => {
                return Err("offload bits in a request that changes nothing".into())
            }
            _ => {}
        }
        let interface = name_field(m, NAME_AT)?;
        let data = &m.bytes[super::message::DATA_OFFSET..];
        if data[REQUEST_END..].iter().any(|&b| b != 0) {
            return Err("unknown fields in an offload request".into());
        }
        Ok(OffloadRequest {
            op,
            interface,
            changes,
        })
    }
}

/// The interface name field at data byte `at`: NUL-terminated within its
/// 16 bytes, zero after, a name the kernel could have; None when empty.
fn name_field(m: &Message, at: usize) -> Result<Option<String>, String> {
    let start = super::message::DATA_OFFSET + at;
    let field = &m.bytes[start..start + NAME_LEN];
    let Some(end) = field.iter().position(|&b| b == 0) else {
        return Err("an interface name without its NUL".into());
    };
    if field[end..].iter().any(|&b| b != 0) {
        return Err("bytes after an interface name".into());
    }
    if end == 0 {
        return Ok(None);
    }
    match std::str::from_utf8(&field[..end]) {
        Ok(name) if valid_interface_name(name) => Ok(Some(name.to_string())),
        _ => Err(format!(
            "'{}' is not an interface name",
            String::from_utf8_lossy(&field[..end]).escape_debug()
        )),
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadStatus {
    Ok = 0,
    BadRequest = 1,
    /// The operator's rule does not reach the interface: netserver was not
    /// started with --allow-offload-changes, or the interface is neither
    /// the client's route nor one it lists (`=IF[,IF]`). The text names the
    /// rule; the interface field names the interface (empty from
    /// netservers before the rule).
    NotAllowed = 2,
    NoSuchInterface = 3,
    /// The driver or kernel did not take the change.
    Refused = 4,
    /// netserver does not run as root (or with CAP_NET_ADMIN).
    PermissionDenied = 5,
    KernelUnsupported = 6,
    /// Another control connection is changing this interface.
    Busy = 7,
    Failed = 8,
}

const STATUSES: [OffloadStatus; 9] = [
    OffloadStatus::Ok,
    OffloadStatus::BadRequest,
    OffloadStatus::NotAllowed,
    OffloadStatus::NoSuchInterface,
    OffloadStatus::Refused,
    OffloadStatus::PermissionDenied,
    OffloadStatus::KernelUnsupported,
    OffloadStatus::Busy,
    OffloadStatus::Failed,
];

impl OffloadStatus {
    /// The serv_errno word beside it, as netserver's other refusals carry.
    fn errno(self) -> i32 {
        match self {
            OffloadStatus::Ok => 0,
            OffloadStatus::BadRequest => libc::EINVAL,
            OffloadStatus::NotAllowed => libc::EACCES,
            OffloadStatus::NoSuchInterface => libc::ENODEV,
            OffloadStatus::Refused | OffloadStatus::KernelUnsupported => libc::EOPNOTSUPP,
            OffloadStatus::PermissionDenied => libc::EPERM,
            OffloadStatus::Busy => libc::EBUSY,
            OffloadStatus::Failed => libc::EIO,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadResponse {
    pub status: OffloadStatus,
    /// The interface the request was about (empty when none was found).
    pub interface: String,
    /// Bits of the offloads that are on (as `ethtool -k` shows them).
    pub active: u32,
    /// Bits of the offloads the driver does not let change.
    pub fixed: u32,
    /// 0: unknown.
    pub mtu: u32,
    /// With `Refused`: the offload and the value it did not take.
    pub refused: Option<(Offload, bool)>,
    /// One line: why, when the status is not Ok.
    pub text: String,
}

impl OffloadResponse {
    pub fn failure(status: OffloadStatus, text: &str) -> Self {
        OffloadResponse {
            status,
            interface: String::new(),
            active: 0,
            fixed: 0,
            mtu: 0,
            refused: None,
            text: one_line(text),
        }
    }

    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::NG_OFFLOADS_RESPONSE, self.status.errno());
        m.set_data_u32(0, MAGIC);
        m.set_data_u32(1, self.status as u32);
        m.set_data_u32(2, self.active);
        m.set_data_u32(3, self.fixed);
        m.set_data_u32(4, self.mtu);
        if let Some((offload, wanted)) = self.refused {
            m.set_data_u32(5, offload.index() as u32 + 1);
            m.set_data_u32(6, u32::from(wanted));
        }
        m.set_data_str(NAME_AT * 2, NAME_LEN, &self.interface);
        m.set_data_str(TEXT_AT, TEXT_LEN, &self.text);
        m
    }

    /// A response as our client takes it; None when it is not one (another
    /// type, a stock netserver's errno-only answer, fields out of range).
    /// Text is kept to one line of printable characters.
    pub fn decode(m: &Message) -> Option<OffloadResponse> {
        if m.kind() != kind::NG_OFFLOADS_RESPONSE || m.data_u32(0) != MAGIC {
            return None;
        }
        let status = *STATUSES.get(m.data_u32(1) as usize)?;
        let (active, fixed) = (m.data_u32(2), m.data_u32(3));
        if (active | fixed) & !ALL_BITS != 0 {
            return None;
        }
        let refused = match (m.data_u32(5), m.data_u32(6)) {
            (0, _) => None,
            (index @ 1..=4, wanted @ 0..=1) => {
                Some((Offload::ALL[index as usize - 1], wanted == 1))
            }
            _ => return None,
        };
        let interface = m.data_str(NAME_AT * 2, NAME_LEN);
        if !interface.is_empty() && !valid_interface_name(&interface) {
            return None;
        }
        Some(OffloadResponse {
            status,
            interface,
            active,
            fixed,
            mtu: m.data_u32(4),
            refused,
            text: one_line(&m.data_str(TEXT_AT, TEXT_LEN)),
        })
    }
}

/// `text` with every control character a space: a remote's words printed
/// as one line, never as terminal commands.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_and_unknown_ones_list_the_valid() {
        for offload in Offload::ALL {
            assert_eq!(Offload::from_name(offload.name()), Ok(offload));
            assert_eq!(
                Offload::from_name(&offload.name().to_uppercase()),
                Ok(offload)
            );
            assert_eq!(Offload::from_name(offload.ethtool_name()), Ok(offload));
            assert_eq!(Offload::ALL[offload.index()], offload);
        }
        let e = Offload::from_name("ufo").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown offload 'ufo': the offloads are tso, gso, gro and lro"
        );
    }

    #[test]
    fn requests_round_trip() {
        let requests = [
            OffloadRequest {
                op: OffloadOp::Read,
                interface: None,
                changes: OffloadBits::default(),
            },
            OffloadRequest {
                op: OffloadOp::Set,
                interface: Some("veth0".into()),
                changes: OffloadBits::from_pairs(&[(Offload::Tso, false), (Offload::Gro, true)]),
            },
            OffloadRequest {
                op: OffloadOp::Restore,
                interface: Some("abcdefghijklmno".into()),
                changes: OffloadBits::default(),
            },
        ];
        for request in requests {
            let m = request.encode();
            assert_eq!(m.kind(), kind::DO_NG_OFFLOADS);
            assert_eq!(OffloadRequest::decode(&m), Ok(request));
        }
    }

    #[test]
    fn bits_keep_the_last_value_of_an_offload() {
        let bits = OffloadBits::from_pairs(&[
            (Offload::Lro, true),
            (Offload::Tso, true),
            (Offload::Lro, false),
        ]);
        assert_eq!(
            bits.pairs(),
            vec![(Offload::Tso, true), (Offload::Lro, false)]
        );
        assert_eq!(offloads_in(0b1010), vec![Offload::Gso, Offload::Lro]);
    }

    #[test]
    fn every_malformed_request_is_refused_with_a_reason() {
        let good = OffloadRequest {
            op: OffloadOp::Set,
            interface: Some("eth0".into()),
            changes: OffloadBits::from_pairs(&[(Offload::Gso, false)]),
        }
        .encode();
        type Edit = (&'static str, fn(&mut Message));
        let edits: [Edit; 14] = [
            ("magic", |m| m.set_data_u32(0, 0x4e47_4f32)),
            ("operation 0", |m| m.set_data_u32(1, 0)),
            ("operation 4", |m| m.set_data_u32(1, 4)),
            ("mask past lro", |m| m.set_data_u32(2, 0x12)),
            ("value outside the mask", |m| m.set_data_u32(3, 0x1)),
            ("set of nothing", |m| m.set_data_u32(2, 0)),
            ("read with bits", |m| m.set_data_u32(1, 1)),
            ("name without NUL", |m| {
                m.set_data_str(NAME_AT, 17, &"x".repeat(16))
            }),
            ("bytes after the name", |m| m.bytes[8 + NAME_AT + 10] = b'z'),
            ("a slash", |m| m.set_data_str(NAME_AT, NAME_LEN, "../x")),
            ("a dot", |m| m.set_data_str(NAME_AT, NAME_LEN, ".")),
            ("invalid UTF-8", |m| m.bytes[8 + NAME_AT] = 0xff),
            ("a later field", |m| m.set_data_u32(40, 1)),
            ("the last byte", |m| m.bytes[655] = 1),
        ];
        for (what, edit) in edits {
            let mut m = good.clone();
            edit(&mut m);
            let reason = OffloadRequest::decode(&m).expect_err(what);
            assert!(
                !reason.is_empty() && !reason.contains('\n'),
                "{what}: {reason}"
            );
        }
    }

    #[test]
    fn responses_round_trip_and_refuse_what_is_out_of_range() {
        let response = OffloadResponse {
            status: OffloadStatus::Refused,
            interface: "veth1".into(),
            active: 0b0011,
            fixed: 0b1000,
            mtu: 1500,
            refused: Some((Offload::Lro, true)),
            text: "cannot turn lro on".into(),
        };
        let m = response.encode();
        assert_eq!(m.serv_errno(), libc::EOPNOTSUPP);
        assert_eq!(OffloadResponse::decode(&m), Some(response.clone()));
        for (word, value) in [(0, 0), (1, 9), (2, 0x10), (3, 0x20), (5, 5), (6, 2)] {
            let mut bad = m.clone();
            bad.set_data_u32(word, value);
            assert_eq!(OffloadResponse::decode(&bad), None, "word {word} = {value}");
        }
        // A stock netserver's answer to an unknown request.
        assert_eq!(OffloadResponse::decode(&Message::new(0, 998)), None);
        let mut bad = m.clone();
        bad.set_data_str(NAME_AT * 2, NAME_LEN, "a/b");
        assert_eq!(OffloadResponse::decode(&bad), None);
        let mut noisy = m;
        noisy.set_data_str(TEXT_AT, TEXT_LEN, "two\nlines\x1b[2J");
        assert_eq!(
            OffloadResponse::decode(&noisy).unwrap().text,
            "two lines [2J"
        );
    }
}
