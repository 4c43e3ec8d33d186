//! A small generic-netlink client: one blocking request, its reply and its
//! acknowledgement over an `AF_NETLINK`/`NETLINK_GENERIC` socket, attribute
//! encoding and bounds-checked decoding, and the family-id lookup
//! (`CTRL_CMD_GETFAMILY`). Just enough for the ethtool family; see
//! <https://docs.kernel.org/userspace-api/netlink/intro.html> for the framing
//! and <https://docs.kernel.org/networking/ethtool-netlink.html> for ethtool.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// struct nlmsghdr: u32 length (header included), u16 type, u16 flags,
/// u32 sequence, u32 port id; all in host byte order.
const NLMSG_HDRLEN: usize = 16;
/// struct genlmsghdr after it: u8 command, u8 version, u16 reserved.
const GENL_HDRLEN: usize = 4;
/// struct nlattr: u16 length (header included), u16 type; payloads are
/// padded to 4 bytes (NLA_ALIGNTO), and so are messages (NLMSG_ALIGNTO).
const NLA_HDRLEN: usize = 4;
/// The two top bits of an attribute's type are flags, not the type.
const NLA_F_NESTED: u16 = 1 << 15;
const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | 1 << 14);

const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
/// On an NLMSG_ERROR: the echoed request is cut to its header
/// (NETLINK_CAP_ACK), and extended-ack attributes follow (NETLINK_EXT_ACK).
const NLM_F_CAPPED: u16 = 0x100;
const NLM_F_ACK_TLVS: u16 = 0x200;
const NLMSG_ERROR: u16 = 0x2;
const NLMSG_DONE: u16 = 0x3;
/// The extended ack's human-readable text, e.g. "no device matches name".
const NLMSGERR_ATTR_MSG: u16 = 1;

const SOL_NETLINK: libc::c_int = 270;
const NETLINK_CAP_ACK: libc::c_int = 10;
const NETLINK_EXT_ACK: libc::c_int = 11;

/// The generic netlink controller: a fixed family id that resolves the
/// others by name (linux/genetlink.h).
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

/// How long one reply may take; the kernel answers at once, so only a
/// wedged kernel lock would make us wait this long.
const REPLY_WAIT: Duration = Duration::from_secs(5);
/// Datagrams read for one request before giving up: a reply, an ack, and
/// room for stray messages of earlier requests.
const MAX_DATAGRAMS: usize = 64;
/// The largest datagram accepted (a verbose FEATURES_GET reply is ~10 KiB).
const MAX_DATAGRAM: usize = 1 << 20;

/// A request the kernel refused, or a socket that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetlinkError {
    /// A positive errno (ENODEV, EPERM, ...).
    pub errno: i32,
    /// The kernel's extended-ack text, when it gave one.
    pub message: Option<String>,
}

impl NetlinkError {
    fn os(e: io::Error) -> Self {
        NetlinkError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            message: None,
        }
    }

    fn malformed(what: &str) -> Self {
        NetlinkError {
            errno: libc::EPROTO,
            message: Some(format!("malformed netlink reply: {what}")),
        }
    }
}

impl std::fmt::Display for NetlinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = io::Error::from_raw_os_error(self.errno).to_string();
        match &self.message {
            Some(message) => write!(f, "{message} ({text})"),
            None => f.write_str(&text),
        }
    }
}

/// Builds a message's attributes, nests included.
#[derive(Default)]
pub struct Attrs {
    buf: Vec<u8>,
}

impl Attrs {
    pub fn new() -> Self {
        Attrs::default()
    }

    fn put(&mut self, kind: u16, payload: &[u8]) {
        let len = NLA_HDRLEN + payload.len();
        self.buf.extend_from_slice(&(len as u16).to_ne_bytes());
        self.buf.extend_from_slice(&kind.to_ne_bytes());
        self.buf.extend_from_slice(payload);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    pub fn u32(&mut self, kind: u16, value: u32) -> &mut Self {
        self.put(kind, &value.to_ne_bytes());
        self
    }

    /// A NUL-terminated string (NLA_NUL_STRING in the kernel's policies).
    pub fn string(&mut self, kind: u16, value: &str) -> &mut Self {
        let mut bytes = value.as_bytes().to_vec();
        bytes.push(0);
        self.put(kind, &bytes);
        self
    }

    /// A flag: present means true, so only a true one is written.
    pub fn flag(&mut self, kind: u16, on: bool) -> &mut Self {
        if on {
            self.put(kind, &[]);
        }
        self
    }

    /// A nested attribute holding what `fill` writes. NLA_F_NESTED is set
    /// because the kernel's strict validation (all ethtool requests)
    /// refuses a nest without it.
    pub fn nest(&mut self, kind: u16, fill: impl FnOnce(&mut Attrs)) -> &mut Self {
        let mut inner = Attrs::new();
        fill(&mut inner);
        self.put(kind | NLA_F_NESTED, &inner.buf);
        self
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// The attributes in `data`, as (type without flags, payload); stops at the
/// first malformed one (a length shorter than the header or past the end).
pub fn parse_attrs(data: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = data;
    std::iter::from_fn(move || {
        if rest.len() < NLA_HDRLEN {
            return None;
        }
        let len = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let kind = u16::from_ne_bytes([rest[2], rest[3]]) & NLA_TYPE_MASK;
        if len < NLA_HDRLEN || len > rest.len() {
            rest = &[];
            return None;
        }
        let payload = &rest[NLA_HDRLEN..len];
        rest = rest.get(align4(len)..).unwrap_or(&[]);
        Some((kind, payload))
    })
}

/// The first attribute of type `kind` in `data`.
pub fn find_attr(data: &[u8], kind: u16) -> Option<&[u8]> {
    parse_attrs(data).find(|(k, _)| *k == kind).map(|(_, p)| p)
}

pub fn attr_u32(payload: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(payload.get(..4)?.try_into().ok()?))
}

fn attr_u16(payload: &[u8]) -> Option<u16> {
    Some(u16::from_ne_bytes(payload.get(..2)?.try_into().ok()?))
}

/// A string attribute, up to its NUL.
pub fn attr_string(payload: &[u8]) -> String {
    let end = payload
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(payload.len());
    String::from_utf8_lossy(&payload[..end]).into_owned()
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

/// A generic netlink socket of this process's network namespace.
pub struct GenlSocket {
    fd: OwnedFd,
    seq: u32,
}

impl GenlSocket {
    pub fn open() -> Result<Self, NetlinkError> {
        // SAFETY: plain socket(2); the descriptor is owned at once.
        let raw = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_GENERIC,
            )
        };
        if raw < 0 {
            return Err(NetlinkError::os(io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let one: libc::c_int = 1;
        for option in [NETLINK_EXT_ACK, NETLINK_CAP_ACK] {
            // Best effort: older kernels answer without the text or echo.
            // SAFETY: an int option of the right size on our socket.
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    SOL_NETLINK,
                    option,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
        }
        let timeout = libc::timeval {
            tv_sec: REPLY_WAIT.as_secs() as libc::time_t,
            tv_usec: 0,
        };
        // SAFETY: a timeval option of the right size on our socket.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(NetlinkError::os(io::Error::last_os_error()));
        }
        Ok(GenlSocket { fd, seq: 0 })
    }

    /// The id of generic netlink family `name`, or None when this kernel
    /// does not have it (the controller answers ENOENT).
    pub fn family_id(&mut self, name: &str) -> Result<Option<u16>, NetlinkError> {
        let mut attrs = Attrs::new();
        attrs.string(CTRL_ATTR_FAMILY_NAME, name);
        match self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, &attrs) {
            Ok(reply) => find_attr(&reply, CTRL_ATTR_FAMILY_ID)
                .and_then(attr_u16)
                .map(Some)
                .ok_or_else(|| NetlinkError::malformed("no family id")),
            Err(e) if e.errno == libc::ENOENT => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Send one request (`cmd` of `family`, with `attrs`) asking for an
    /// acknowledgement, and return the attributes of its reply message
    /// (empty when the command sends none). The kernel's refusal comes back
    /// as the errno of its NLMSG_ERROR, with its extended-ack text.
    pub fn request(
        &mut self,
        family: u16,
        cmd: u8,
        version: u8,
        attrs: &Attrs,
    ) -> Result<Vec<u8>, NetlinkError> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let len = NLMSG_HDRLEN + GENL_HDRLEN + attrs.bytes().len();
        let mut msg = Vec::with_capacity(len);
        msg.extend_from_slice(&(len as u32).to_ne_bytes());
        msg.extend_from_slice(&family.to_ne_bytes());
        msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        msg.extend_from_slice(&seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes()); // port id 0: the kernel
        msg.extend_from_slice(&[cmd, version, 0, 0]);
        msg.extend_from_slice(attrs.bytes());
        let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `msg` and `kernel` are valid for the lengths given.
        let sent = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&kernel as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            return Err(NetlinkError::os(io::Error::last_os_error()));
        }
        let mut reply = Vec::new();
        for _ in 0..MAX_DATAGRAMS {
            let datagram = self.receive()?;
            if let Some(done) = scan_datagram(&datagram, seq, family, &mut reply) {
                return done.map(|()| reply);
            }
        }
        Err(NetlinkError::malformed("no acknowledgement"))
    }

    /// One whole datagram: its size peeked first (MSG_TRUNC reports the
    /// real length), so that a large reply is never cut.
    fn receive(&self) -> Result<Vec<u8>, NetlinkError> {
        loop {
            let mut probe = [0u8; 1];
            // SAFETY: a 1-byte buffer; MSG_PEEK leaves the datagram queued.
            let size = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    probe.as_mut_ptr().cast(),
                    1,
                    libc::MSG_PEEK | libc::MSG_TRUNC,
                )
            };
            if size < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                if e.kind() == io::ErrorKind::WouldBlock {
                    return Err(NetlinkError {
                        errno: libc::ETIMEDOUT,
                        message: Some(format!("no netlink reply within {REPLY_WAIT:?}")),
                    });
                }
                return Err(NetlinkError::os(e));
            }
            let size = (size as usize).clamp(1, MAX_DATAGRAM);
            let mut buf = vec![0u8; size];
            // SAFETY: `buf` holds `size` bytes.
            let got = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), size, 0) };
            if got < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(NetlinkError::os(e));
            }
            buf.truncate(got as usize);
            return Ok(buf);
        }
    }
}

/// Walk the netlink messages of one datagram, keeping those of request
/// `seq`: the reply's attributes go to `reply`; the NLMSG_ERROR that ends
/// the exchange gives `Some(Ok(()))` (errno 0, the ack) or `Some(Err(..))`
/// (as does a malformed datagram); `None`: the exchange goes on in a later
/// datagram.
fn scan_datagram(
    datagram: &[u8],
    seq: u32,
    family: u16,
    reply: &mut Vec<u8>,
) -> Option<Result<(), NetlinkError>> {
    let mut at = 0;
    while at + NLMSG_HDRLEN <= datagram.len() {
        let header = |offset| read_u32(datagram, at + offset);
        let len = header(0).unwrap_or(0) as usize;
        if len < NLMSG_HDRLEN || at + len > datagram.len() {
            return Some(Err(NetlinkError::malformed("bad message length")));
        }
        let kind = read_u16(datagram, at + 4).unwrap_or(0);
        let flags = read_u16(datagram, at + 6).unwrap_or(0);
        let body = &datagram[at + NLMSG_HDRLEN..at + len];
        let ours = header(8) == Some(seq);
        at += align4(len);
        if !ours {
            continue; // a late answer to an earlier request
        }
        match kind {
            NLMSG_ERROR => return Some(ack_result(body, flags)),
            NLMSG_DONE => return Some(Ok(())),
            k if k == family => {
                let Some(attrs) = body.get(GENL_HDRLEN..) else {
                    return Some(Err(NetlinkError::malformed("short reply")));
                };
                reply.extend_from_slice(attrs);
            }
            _ => {}
        }
    }
    None
}

/// An NLMSG_ERROR body: struct nlmsgerr (int error; the request's
/// nlmsghdr, plus its payload unless NLM_F_CAPPED), then with
/// NLM_F_ACK_TLVS the extended-ack attributes.
fn ack_result(body: &[u8], flags: u16) -> Result<(), NetlinkError> {
    let Some(error) = read_u32(body, 0).map(|e| e as i32) else {
        return Err(NetlinkError::malformed("short error message"));
    };
    if error == 0 {
        return Ok(());
    }
    let mut message = None;
    if flags & NLM_F_ACK_TLVS != 0 {
        let echoed = if flags & NLM_F_CAPPED != 0 {
            NLMSG_HDRLEN
        } else {
            read_u32(body, 4).unwrap_or(0) as usize
        };
        let tlvs = body.get(4 + align4(echoed)..).unwrap_or(&[]);
        message = find_attr(tlvs, NLMSGERR_ATTR_MSG)
            .map(attr_string)
            .filter(|m| !m.is_empty());
    }
    Err(NetlinkError {
        errno: error.checked_neg().unwrap_or(libc::EIO),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_round_trip_with_padding_and_nests() {
        let mut attrs = Attrs::new();
        attrs
            .u32(1, 7)
            .string(2, "eth0")
            .flag(3, true)
            .flag(4, false)
            .nest(5, |inner| {
                inner.string(1, "x");
            });
        assert_eq!(attrs.bytes().len() % 4, 0);
        let parsed: Vec<(u16, &[u8])> = parse_attrs(attrs.bytes()).collect();
        assert_eq!(parsed.len(), 4, "a false flag is absent");
        assert_eq!(attr_u32(parsed[0].1), Some(7));
        assert_eq!(attr_string(parsed[1].1), "eth0");
        assert_eq!(parsed[2], (3, &[][..]));
        assert_eq!(parsed[3].0, 5, "the nested flag is masked off the type");
        assert_eq!(attr_string(find_attr(parsed[3].1, 1).unwrap()), "x");
    }

    #[test]
    fn malformed_attributes_end_the_walk_without_panicking() {
        let cases: [&[u8]; 4] = [
            &[1, 0, 1, 0],         // length below the header
            &[200, 0, 1, 0, 9, 9], // length past the end
            &[8, 0, 1, 0, 1, 2],   // truncated payload
            &[4, 0],               // truncated header
        ];
        for bytes in cases {
            assert_eq!(parse_attrs(bytes).count(), 0, "{bytes:?}");
        }
        assert_eq!(attr_u32(&[1, 2]), None);
        assert_eq!(attr_string(&[b'a', 0, b'b']), "a");
    }

    fn error_message(error: i32, flags: u16, text: Option<&str>) -> Vec<u8> {
        let mut body = error.to_ne_bytes().to_vec();
        body.extend_from_slice(&[0u8; NLMSG_HDRLEN]);
        if let Some(text) = text {
            let mut tlv = Attrs::new();
            tlv.string(NLMSGERR_ATTR_MSG, text);
            body.extend_from_slice(tlv.bytes());
        }
        let len = NLMSG_HDRLEN + body.len();
        let mut msg = (len as u32).to_ne_bytes().to_vec();
        msg.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
        msg.extend_from_slice(&flags.to_ne_bytes());
        msg.extend_from_slice(&9u32.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(&body);
        msg
    }

    #[test]
    fn acks_errors_and_their_texts_are_read() {
        let mut reply = Vec::new();
        let ack = error_message(0, NLM_F_CAPPED, None);
        assert_eq!(scan_datagram(&ack, 9, 20, &mut reply), Some(Ok(())));
        let refused = error_message(
            -libc::ENODEV,
            NLM_F_CAPPED | NLM_F_ACK_TLVS,
            Some("no device matches name"),
        );
        let Some(Err(e)) = scan_datagram(&refused, 9, 20, &mut reply) else {
            panic!("expected an error");
        };
        assert_eq!(e.errno, libc::ENODEV);
        assert_eq!(e.message.as_deref(), Some("no device matches name"));
        assert!(e.to_string().starts_with("no device matches name ("), "{e}");
        // Another request's answer is skipped.
        assert_eq!(scan_datagram(&ack, 10, 20, &mut reply), None);
        // A length past the datagram is malformed, not a panic.
        let mut bad = ack.clone();
        bad[0] = 200;
        assert!(matches!(
            scan_datagram(&bad, 9, 20, &mut reply),
            Some(Err(_))
        ));
    }

    #[test]
    fn the_ethtool_family_is_found_and_an_unknown_one_is_not() {
        let mut socket = GenlSocket::open().expect("a generic netlink socket");
        assert_eq!(socket.family_id("nosuchfamily").unwrap(), None);
        // The ethtool family exists since Linux 5.6.
        if let Some(id) = socket.family_id("ethtool").unwrap() {
            assert!(id >= GENL_ID_CTRL);
        }
    }
}
