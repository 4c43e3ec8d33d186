//! netperf-ng's mesh messages: a coordinator (`netagg mesh`) asks a
//! netserver that the operator opted in (`netserver --mesh-key FILE
//! --mesh-peers NET`) to run one test from itself to a peer and send back
//! the result record. Request types far from netperf's own (which end at
//! 601): a stock netserver answers them as unknown (serv_errno 998).
//! Encoding, decoding and the HMAC-SHA256 both ends compute; no I/O.
//!
//! The exchange, on an open control connection:
//! 1. `HELLO` → `CHALLENGE`: a fresh random nonce from the netserver (or why
//!    it runs no mesh tests).
//! 2. `ORIGIN`: the request's fields, the nonce echoed and
//!    HMAC-SHA256(key, ORIGIN_DOMAIN ‖ nonce ‖ the request's canonical
//!    bytes). The netserver uses each nonce once: a replayed request meets
//!    a nonce it no longer holds.
//! 3. `RESULT`, one message or more (the record is longer than one message
//!    holds): a status, the text (netperf's `-J` JSON, or why not), and on
//!    success HMAC-SHA256(key, RESULT_DOMAIN ‖ nonce ‖ status ‖ text), so a
//!    coordinator keeps only numbers from a netserver holding the key.
//!
//! Layouts, data bytes (every other byte zero):
//! - HELLO: 0 magic.
//! - CHALLENGE: 0 magic, 4 status, 8..40 nonce, 40..440 text.
//! - ORIGIN: 0 magic, 4 port, 8 duration (s), 12 start delay (ms), 16 address
//!   family (4 or 6), 20..36 address (IPv4 in the first 4), 36..52 test name
//!   NUL-terminated, 52..84 nonce, 84..116 MAC. The MAC covers bytes 0..52.
//! - RESULT: 0 magic, 4 status, 8 chunk index, 12 the whole text's length,
//!   16 this chunk's length, 20..52 MAC (last chunk only), 52.. the chunk.

use super::message::{kind, Message, DATA_OFFSET, MESSAGE_LEN};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// "NGM1": mesh messages, layout version 1.
pub const MAGIC: u32 = 0x4e47_4d31;
pub const NONCE_LEN: usize = 32;
pub const MAC_LEN: usize = 32;
/// The tests a netserver originates: the classic names our netperf runs.
pub const TESTS: [&str; 6] = [
    "TCP_STREAM",
    "TCP_MAERTS",
    "TCP_RR",
    "TCP_CRR",
    "UDP_RR",
    "UDP_STREAM",
];
/// The `-J` selection of the record a netserver sends back: a stream test's
/// throughput, and a request/response test's rate and latency too.
const STREAM_SELECTION: &str = "THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME";
const RR_SELECTION: &str = "THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME,TRANSACTION_RATE,\
MEAN_LATENCY,MIN_LATENCY,MAX_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,STDDEV_LATENCY";
/// UDP_RR's, with the requests lost (each a one-second timeout, `-e 1`).
const UDP_RR_SELECTION: &str = "THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME,TRANSACTION_RATE,\
MEAN_LATENCY,MIN_LATENCY,MAX_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,STDDEV_LATENCY,\
RR_TIMEOUTS";

/// Each test a mesh runs: its `-J` selection and the test-specific options
/// before it. A lost UDP_RR request would stall a closed loop for the rest
/// of the test; with `-e 1` it is a timeout counted (RR_TIMEOUTS) and the
/// loop goes on, so the mesh can report loss.
const RUNS: [(&str, &str, &[&str]); 6] = [
    ("TCP_STREAM", STREAM_SELECTION, &[]),
    ("TCP_MAERTS", STREAM_SELECTION, &[]),
    ("UDP_STREAM", STREAM_SELECTION, &[]),
    ("TCP_RR", RR_SELECTION, &[]),
    ("TCP_CRR", RR_SELECTION, &[]),
    ("UDP_RR", UDP_RR_SELECTION, &["-e", "1"]),
];

/// The selectors of `test`'s record (None for a test not in `TESTS`).
pub fn selection(test: &str) -> Option<&'static str> {
    RUNS.iter().find(|(t, _, _)| *t == test).map(|(_, s, _)| *s)
}

/// The test-specific options `test` runs with, before its `-J`.
pub fn test_options(test: &str) -> &'static [&'static str] {
    RUNS.iter()
        .find(|(t, _, _)| *t == test)
        .map_or(&[], |(_, _, o)| *o)
}

/// The longest result text sent back (a `-J` record is about 1 KB).
pub const MAX_RESULT_LEN: usize = 64 * 1024;
/// How long past its length a netserver lets its netperf run before it
/// kills it (a coordinator waits at least this long for the record).
pub const GRACE_SECS: u32 = 30;
/// The longest wait before a test starts (`start_in_ms`).
pub const MAX_START_MS: u32 = 600_000;
/// Shortest and longest key (bytes of the key file, trailing whitespace off).
pub const KEY_MIN: usize = 16;
pub const KEY_MAX: usize = 4096;
/// What a netserver without the opt-in answers, and what a coordinator says
/// for one: how to enable it.
pub const HOW_TO_ENABLE: &str = "this netserver does not run mesh tests (a stock netserver, or netperf-ng's without the opt-in): start netperf-ng's netserver with --mesh-key FILE --mesh-peers NET";

/// What each MAC is over, first: a MAC of one kind never passes for another.
const ORIGIN_DOMAIN: &[u8] = b"netperf-ng mesh origin v1\0";
const RESULT_DOMAIN: &[u8] = b"netperf-ng mesh result v1\0";

const NONCE_AT: usize = 8;
const CHALLENGE_TEXT_AT: usize = 40;
pub const TEXT_LEN: usize = 400;
const ADDRESS_AT: usize = 20;
const TEST_AT: usize = 36;
const TEST_LEN: usize = 16;
const SIGNED_END: usize = 52;
const ORIGIN_NONCE_AT: usize = 52;
const ORIGIN_MAC_AT: usize = 84;
const ORIGIN_END: usize = 116;
const RESULT_MAC_AT: usize = 20;
const CHUNK_AT: usize = 52;
/// Text bytes in one RESULT message.
pub const CHUNK_LEN: usize = MESSAGE_LEN - DATA_OFFSET - CHUNK_AT;

type HmacSha256 = Hmac<Sha256>;

/// The operator's shared key, as both ends read it from its file: the
/// bytes without trailing whitespace (a newline an editor or `echo` adds
/// does not change the key), 16 to 4096 of them.
pub fn key_from_file_bytes(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    match end {
        n if n < KEY_MIN => Err(format!(
            "the mesh key has {n} bytes: it needs at least {KEY_MIN} (for example `head -c 32 /dev/urandom | base64 > FILE`)"
        )),
        n if n > KEY_MAX => Err(format!("the mesh key has {n} bytes: at most {KEY_MAX}")),
        n => Ok(bytes[..n].to_vec()),
    }
}

fn mac_over(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // new_from_slice takes a key of any length for HMAC.
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    for part in parts {
        mac.update(part);
    }
    mac
}

fn data(m: &Message) -> &[u8] {
    &m.bytes[DATA_OFFSET..]
}

fn data_mut(m: &mut Message) -> &mut [u8] {
    &mut m.bytes[DATA_OFFSET..]
}

fn check_magic(m: &Message, what: &str) -> Result<(), String> {
    match m.data_u32(0) {
        MAGIC => Ok(()),
        other => Err(format!("unknown mesh {what} layout {other:#x}")),
    }
}

fn zero_after(m: &Message, end: usize, what: &str) -> Result<(), String> {
    match data(m)[end..].iter().all(|&b| b == 0) {
        true => Ok(()),
        false => Err(format!("unknown fields in a mesh {what}")),
    }
}

/// Step 1: ask for a challenge.
pub fn encode_hello() -> Message {
    let mut m = Message::new(kind::NG_MESH_HELLO, 0);
    m.set_data_u32(0, MAGIC);
    m
}

pub fn decode_hello(m: &Message) -> Result<(), String> {
    check_magic(m, "hello")?;
    zero_after(m, 4, "hello")
}

/// The answer to HELLO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// Sign the request with this.
    Nonce([u8; NONCE_LEN]),
    /// No opt-in here: the text says how to enable it.
    NotEnabled(String),
    /// Opted in, but not now or not for this client (the text says why).
    Refused(String),
}

impl Challenge {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::NG_MESH_CHALLENGE, 0);
        m.set_data_u32(0, MAGIC);
        let (status, text) = match self {
            Challenge::Nonce(nonce) => {
                data_mut(&mut m)[NONCE_AT..NONCE_AT + NONCE_LEN].copy_from_slice(nonce);
                (Status::Ok, "")
            }
            Challenge::NotEnabled(text) => (Status::NotEnabled, text.as_str()),
            Challenge::Refused(text) => (Status::Refused, text.as_str()),
        };
        m.set_data_u32(1, status as u32);
        m.set_data_str(CHALLENGE_TEXT_AT, TEXT_LEN, text);
        m
    }

    pub fn decode(m: &Message) -> Result<Challenge, String> {
        check_magic(m, "challenge")?;
        zero_after(m, CHALLENGE_TEXT_AT + TEXT_LEN, "challenge")?;
        let text = super::offload::one_line(&m.data_str(CHALLENGE_TEXT_AT, TEXT_LEN));
        match Status::from_word(m.data_u32(1))? {
            Status::Ok => {
                let mut nonce = [0; NONCE_LEN];
                nonce.copy_from_slice(&data(m)[NONCE_AT..NONCE_AT + NONCE_LEN]);
                Ok(Challenge::Nonce(nonce))
            }
            Status::NotEnabled => Ok(Challenge::NotEnabled(text)),
            Status::Refused => Ok(Challenge::Refused(text)),
            Status::Failed => Err("a challenge cannot fail".into()),
        }
    }
}

/// How an exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    /// Opted in, but the request was refused (key, peer, limits, fields).
    Refused = 1,
    /// The test ran and failed (netperf's exit and stderr in the text).
    Failed = 2,
    /// This netserver runs no mesh tests.
    NotEnabled = 3,
}

impl Status {
    fn from_word(word: u32) -> Result<Status, String> {
        [
            Status::Ok,
            Status::Refused,
            Status::Failed,
            Status::NotEnabled,
        ]
        .into_iter()
        .find(|s| *s as u32 == word)
        .ok_or_else(|| format!("unknown mesh status {word}"))
    }
}

/// What a coordinator asks: run `test` from the netserver to the netserver
/// at `destination`:`port` for `duration_secs`, starting `start_in_ms`
/// after the request arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub test: String,
    pub destination: IpAddr,
    pub port: u16,
    pub duration_secs: u32,
    pub start_in_ms: u32,
}

impl Origin {
    /// What a netserver refuses whatever its options say; the error says why.
    pub fn check(&self) -> Result<(), String> {
        if !TESTS.contains(&self.test.as_str()) {
            return Err(format!(
                "test '{}' is not one a netserver originates ({})",
                super::offload::one_line(&self.test),
                TESTS.join(", ")
            ));
        }
        let ip = self.destination.to_canonical();
        if ip.is_unspecified() || ip.is_multicast() || ip == IpAddr::V4(Ipv4Addr::BROADCAST) {
            return Err(format!("{ip} is not one host's address"));
        }
        if self.port == 0 {
            return Err("port 0 is no netserver's".into());
        }
        if self.duration_secs == 0 {
            return Err("a mesh test needs a length of at least 1 s".into());
        }
        if self.start_in_ms > MAX_START_MS {
            return Err(format!(
                "a start {} ms away is more than {MAX_START_MS} ms",
                self.start_in_ms
            ));
        }
        Ok(())
    }

    /// The request's bytes the MAC covers: the same fields always give the
    /// same bytes, whatever the sender left elsewhere.
    fn canonical(&self) -> [u8; SIGNED_END] {
        let mut b = [0u8; SIGNED_END];
        b[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&u32::from(self.port).to_be_bytes());
        b[8..12].copy_from_slice(&self.duration_secs.to_be_bytes());
        b[12..16].copy_from_slice(&self.start_in_ms.to_be_bytes());
        let (family, raw): (u32, Vec<u8>) = match self.destination {
            IpAddr::V4(a) => (4, a.octets().to_vec()),
            IpAddr::V6(a) => (6, a.octets().to_vec()),
        };
        b[16..20].copy_from_slice(&family.to_be_bytes());
        b[ADDRESS_AT..ADDRESS_AT + raw.len()].copy_from_slice(&raw);
        let name = self.test.as_bytes();
        let n = name.len().min(TEST_LEN - 1);
        b[TEST_AT..TEST_AT + n].copy_from_slice(&name[..n]);
        b
    }

    fn mac(&self, key: &[u8], nonce: &[u8; NONCE_LEN]) -> HmacSha256 {
        mac_over(key, &[ORIGIN_DOMAIN, nonce, &self.canonical()])
    }

    /// The ORIGIN message, signed for `nonce` (the challenge's).
    pub fn sign(&self, key: &[u8], nonce: &[u8; NONCE_LEN]) -> Message {
        let mut m = Message::new(kind::NG_MESH_ORIGIN, 0);
        let tag = self.mac(key, nonce).finalize().into_bytes();
        let d = data_mut(&mut m);
        d[..SIGNED_END].copy_from_slice(&self.canonical());
        d[ORIGIN_NONCE_AT..ORIGIN_NONCE_AT + NONCE_LEN].copy_from_slice(nonce);
        d[ORIGIN_MAC_AT..ORIGIN_MAC_AT + MAC_LEN].copy_from_slice(&tag);
        m
    }
}

/// An ORIGIN message as a netserver reads it: fields checked, not yet
/// authenticated (`verify`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedOrigin {
    pub origin: Origin,
    /// The nonce the sender signed for: which challenge it answers.
    pub nonce: [u8; NONCE_LEN],
    mac: [u8; MAC_LEN],
}

impl SignedOrigin {
    pub fn decode(m: &Message) -> Result<SignedOrigin, String> {
        check_magic(m, "request")?;
        zero_after(m, ORIGIN_END, "request")?;
        let d = data(m);
        let port = u16::try_from(m.data_u32(1))
            .map_err(|_| format!("port {} out of range", m.data_u32(1)))?;
        let destination = match m.data_u32(4) {
            4 if d[ADDRESS_AT + 4..ADDRESS_AT + 16].iter().all(|&b| b == 0) => {
                let o: [u8; 4] = d[ADDRESS_AT..ADDRESS_AT + 4].try_into().expect("4 bytes");
                IpAddr::V4(Ipv4Addr::from(o))
            }
            4 => return Err("bytes after an IPv4 address".into()),
            6 => {
                let o: [u8; 16] = d[ADDRESS_AT..ADDRESS_AT + 16].try_into().expect("16");
                IpAddr::V6(Ipv6Addr::from(o))
            }
            other => return Err(format!("unknown address family {other}")),
        };
        let field = &d[TEST_AT..TEST_AT + TEST_LEN];
        let end = field
            .iter()
            .position(|&b| b == 0)
            .ok_or("a test name without its NUL")?;
        if field[end..].iter().any(|&b| b != 0) {
            return Err("bytes after the test name".into());
        }
        let test = std::str::from_utf8(&field[..end])
            .map_err(|_| "a test name that is not text".to_string())?
            .to_string();
        let origin = Origin {
            test,
            destination,
            port,
            duration_secs: m.data_u32(2),
            start_in_ms: m.data_u32(3),
        };
        origin.check()?;
        let mut nonce = [0; NONCE_LEN];
        nonce.copy_from_slice(&d[ORIGIN_NONCE_AT..ORIGIN_NONCE_AT + NONCE_LEN]);
        let mut mac = [0; MAC_LEN];
        mac.copy_from_slice(&d[ORIGIN_MAC_AT..ORIGIN_MAC_AT + MAC_LEN]);
        Ok(SignedOrigin { origin, nonce, mac })
    }

    /// Whether the holder of `key` signed this request for `nonce`
    /// (constant time).
    pub fn verify(&self, key: &[u8], nonce: &[u8; NONCE_LEN]) -> bool {
        self.origin.mac(key, nonce).verify_slice(&self.mac).is_ok()
    }

    /// The message again, as it was signed (for a relay, or a replay in
    /// a test): `decode(encode(s)) == s`.
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::NG_MESH_ORIGIN, 0);
        let d = data_mut(&mut m);
        d[..SIGNED_END].copy_from_slice(&self.origin.canonical());
        d[ORIGIN_NONCE_AT..ORIGIN_NONCE_AT + NONCE_LEN].copy_from_slice(&self.nonce);
        d[ORIGIN_MAC_AT..ORIGIN_MAC_AT + MAC_LEN].copy_from_slice(&self.mac);
        m
    }
}

/// What came of a request: the record, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// netperf's `-J` JSON.
    Record(String),
    Refused(String),
    Failed(String),
    NotEnabled(String),
}

impl Outcome {
    fn parts(&self) -> (Status, &str) {
        match self {
            Outcome::Record(t) => (Status::Ok, t),
            Outcome::Refused(t) => (Status::Refused, t),
            Outcome::Failed(t) => (Status::Failed, t),
            Outcome::NotEnabled(t) => (Status::NotEnabled, t),
        }
    }
}

fn result_mac(key: &[u8], nonce: &[u8; NONCE_LEN], status: Status, text: &[u8]) -> HmacSha256 {
    mac_over(
        key,
        &[RESULT_DOMAIN, nonce, &(status as u32).to_be_bytes(), text],
    )
}

/// The RESULT messages for `outcome`; a text over `MAX_RESULT_LEN` is cut.
/// With `signer` (the key and the request's nonce) the last message carries
/// the MAC; a refusal before the key was proven goes without.
pub fn encode_result(outcome: &Outcome, signer: Option<(&[u8], &[u8; NONCE_LEN])>) -> Vec<Message> {
    let (status, text) = outcome.parts();
    let mut cut = text.len().min(MAX_RESULT_LEN);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let text = &text.as_bytes()[..cut];
    let tag =
        signer.map(|(key, nonce)| result_mac(key, nonce, status, text).finalize().into_bytes());
    let chunks: Vec<&[u8]> = match text.is_empty() {
        true => vec![&[]],
        false => text.chunks(CHUNK_LEN).collect(),
    };
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut m = Message::new(kind::NG_MESH_RESULT, 0);
            m.set_data_u32(0, MAGIC);
            m.set_data_u32(1, status as u32);
            m.set_data_u32(2, i as u32);
            m.set_data_u32(3, text.len() as u32);
            m.set_data_u32(4, chunk.len() as u32);
            let d = data_mut(&mut m);
            if let (true, Some(tag)) = (i == last, &tag) {
                d[RESULT_MAC_AT..RESULT_MAC_AT + MAC_LEN].copy_from_slice(tag);
            }
            d[CHUNK_AT..CHUNK_AT + chunk.len()].copy_from_slice(chunk);
            m
        })
        .collect()
}

/// Reads RESULT messages in order into one outcome.
#[derive(Debug, Default)]
pub struct ResultReader {
    status: Option<Status>,
    total: usize,
    text: Vec<u8>,
    next: u32,
}

/// A whole result: its outcome and the MAC the last message carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResult {
    pub outcome: Outcome,
    mac: [u8; MAC_LEN],
}

impl ReadResult {
    /// Whether the holder of `key` sent this for the request signed with
    /// `nonce` (constant time).
    pub fn verify(&self, key: &[u8], nonce: &[u8; NONCE_LEN]) -> bool {
        let (status, text) = self.outcome.parts();
        result_mac(key, nonce, status, text.as_bytes())
            .verify_slice(&self.mac)
            .is_ok()
    }
}

impl ResultReader {
    /// Take the next message: `Ok(None)` while more are due.
    pub fn push(&mut self, m: &Message) -> Result<Option<ReadResult>, String> {
        if m.kind() != kind::NG_MESH_RESULT {
            return Err(format!("message type {} in a mesh result", m.kind()));
        }
        check_magic(m, "result")?;
        let status = Status::from_word(m.data_u32(1))?;
        let (index, total, len) = (
            m.data_u32(2),
            m.data_u32(3) as usize,
            m.data_u32(4) as usize,
        );
        if index != self.next {
            return Err(format!(
                "mesh result part {index} where {} was due",
                self.next
            ));
        }
        if total > MAX_RESULT_LEN || len > CHUNK_LEN {
            return Err(format!("a mesh result of {total} bytes (part of {len})"));
        }
        if self.status.is_some_and(|s| s != status) || (index > 0 && total != self.total) {
            return Err("a mesh result whose parts disagree".into());
        }
        if self.text.len() + len > total || (len < CHUNK_LEN && self.text.len() + len < total) {
            return Err("a mesh result whose parts do not add up".into());
        }
        zero_after(m, CHUNK_AT + len, "result")?;
        let d = data(m);
        self.text.extend_from_slice(&d[CHUNK_AT..CHUNK_AT + len]);
        (self.status, self.total, self.next) = (Some(status), total, index + 1);
        if self.text.len() < total {
            if d[RESULT_MAC_AT..RESULT_MAC_AT + MAC_LEN]
                .iter()
                .any(|&b| b != 0)
            {
                return Err("a MAC before a mesh result's last part".into());
            }
            return Ok(None);
        }
        let text = String::from_utf8(std::mem::take(&mut self.text))
            .map_err(|_| "a mesh result that is not text".to_string())?;
        let mut mac = [0; MAC_LEN];
        mac.copy_from_slice(&d[RESULT_MAC_AT..RESULT_MAC_AT + MAC_LEN]);
        let outcome = match status {
            Status::Ok => Outcome::Record(text),
            Status::Refused => Outcome::Refused(text),
            Status::Failed => Outcome::Failed(text),
            Status::NotEnabled => Outcome::NotEnabled(text),
        };
        Ok(Some(ReadResult { outcome, mac }))
    }
}

#[cfg(test)]
#[path = "mesh_tests.rs"]
mod tests;
