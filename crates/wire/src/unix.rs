//! The control messages of netperf 2.7.1's Unix-domain tests (the structs of
//! its `nettest_unix.h`): request, response and results of each test, byte
//! for byte. Encoding and decoding only; no I/O.
//!
//! # Byte order
//!
//! Every word of these messages goes through `htonl`/`ntohl` on both ends,
//! including the 32-byte `unix_path` string after `path_name_len`: a
//! little-endian stock program therefore puts each 4-byte group of the
//! string on the wire reversed ("/tmp" travels as "pmt/"). [`UnixPath`]
//! writes and reads that layout; a big-endian stock peer (which would send
//! the string as is) is not supported, as elsewhere in this project.
//!
//! # Results
//!
//! A stock netserver writes its results into the buffer it has just
//! converted and sent as the response, so the results of STREAM_STREAM,
//! STREAM_RR and DG_RR carry the *response* type byte-swapped (38 travels as
//! `26 00 00 00`); only DG_STREAM sets `DG_STREAM_RESULTS` (45). Our encoders
//! do the same; `Message::kind` reads either order. Stock netserver writes no
//! `num_cpus` in any of these results (netperf reads a leftover word), and
//! `cpu_util` only when it measured CPU.
//!
//! # The path fields
//!
//! Stock netperf never fills `path_name_len`/`unix_path` of a request, and
//! stock netserver never fills `path_name_len` of a response. netperf-ng uses
//! both, compatibly: a request whose `path_name_len` is the length of its
//! `unix_path` names the directory for netserver's socket (`-- -p`), and a
//! response whose `path_name_len` matches its path tells our netperf that the
//! netserver ends a test when netperf signals the end on the data socket
//! (see `client`). A stock netserver copies a path of any length (up to its
//! `sun_path`, 108 bytes) over the words after the 32-byte field; we read and
//! write paths the same way, bounded by [`PATH_FIELD_MAX`] and the message.

use crate::layout::layout;
use crate::message::{Message, DATA_OFFSET, MESSAGE_LEN};

/// Message types (netperf's netlib.h).
pub const DO_STREAM_STREAM: u32 = 37;
pub const STREAM_STREAM_RESPONSE: u32 = 38;
pub const STREAM_STREAM_RESULTS: u32 = 39;
pub const DO_STREAM_RR: u32 = 40;
pub const STREAM_RR_RESPONSE: u32 = 41;
pub const STREAM_RR_RESULTS: u32 = 42;
pub const DO_DG_STREAM: u32 = 43;
pub const DG_STREAM_RESPONSE: u32 = 44;
pub const DG_STREAM_RESULTS: u32 = 45;
pub const DO_DG_RR: u32 = 46;
pub const DG_RR_RESPONSE: u32 = 47;
pub const DG_RR_RESULTS: u32 = 48;

/// One of the four Unix-domain tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnixTest {
    /// SOCK_STREAM bulk transfer, netperf to netserver.
    StreamStream,
    /// SOCK_STREAM request/response.
    StreamRr,
    /// SOCK_DGRAM bulk transfer, netperf to netserver.
    DgStream,
    /// SOCK_DGRAM request/response.
    DgRr,
}

/// Each test's `-t` name and request type, in the order of their types.
pub const UNIX_TESTS: [(&str, UnixTest, u32); 4] = [
    ("STREAM_STREAM", UnixTest::StreamStream, DO_STREAM_STREAM),
    ("STREAM_RR", UnixTest::StreamRr, DO_STREAM_RR),
    ("DG_STREAM", UnixTest::DgStream, DO_DG_STREAM),
    ("DG_RR", UnixTest::DgRr, DO_DG_RR),
];

impl UnixTest {
    fn row(self) -> &'static (&'static str, UnixTest, u32) {
        UNIX_TESTS
            .iter()
            .find(|row| row.1 == self)
            .expect("every test has a row")
    }

    /// The test a `-t` name means (any case, as netperf's strcasecmp).
    pub fn lookup(name: &str) -> Option<UnixTest> {
        let row = UNIX_TESTS
            .iter()
            .find(|row| row.0.eq_ignore_ascii_case(name));
        row.map(|row| row.1)
    }

    /// The test a netserver request type asks for.
    pub fn from_request_kind(kind: u32) -> Option<UnixTest> {
        UNIX_TESTS.iter().find(|row| row.2 == kind).map(|row| row.1)
    }

    /// The test whose response has this type.
    pub fn from_response_kind(kind: u32) -> Option<UnixTest> {
        Self::from_request_kind(kind.wrapping_sub(1))
    }

    pub fn name(self) -> &'static str {
        self.row().0
    }

    pub fn request_kind(self) -> u32 {
        self.row().2
    }

    pub fn response_kind(self) -> u32 {
        self.request_kind() + 1
    }

    pub fn is_datagram(self) -> bool {
        matches!(self, UnixTest::DgStream | UnixTest::DgRr)
    }

    pub fn is_request_response(self) -> bool {
        matches!(self, UnixTest::StreamRr | UnixTest::DgRr)
    }
}

/// Longest path, with its NUL, that may occupy the `unix_path` field and
/// the words after it: the size of `sockaddr_un.sun_path` on Linux.
pub const PATH_FIELD_MAX: usize = 108;

/// `path_name_len` and the `unix_path` string that follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixPath {
    /// The `path_name_len` word as it travelled.
    pub name_len: i32,
    /// The string's bytes up to its NUL (or up to the bound, if none).
    pub bytes: Vec<u8>,
    /// Whether a NUL ended the string within [`PATH_FIELD_MAX`] bytes and
    /// the message.
    pub terminated: bool,
}

/// The empty string, as a zeroed message holds it.
impl Default for UnixPath {
    fn default() -> Self {
        UnixPath {
            name_len: 0,
            bytes: Vec::new(),
            terminated: true,
        }
    }
}

impl UnixPath {
    /// A path field holding `bytes` (cut to fit with its NUL), with
    /// `path_name_len` set to its length as netperf-ng sends it.
    pub fn new(bytes: &[u8]) -> Self {
        let kept = &bytes[..bytes.len().min(PATH_FIELD_MAX - 1)];
        UnixPath {
            name_len: kept.len() as i32,
            bytes: kept.to_vec(),
            terminated: true,
        }
    }

    /// Whether `path_name_len` is the string's real length: set by
    /// netperf-ng, never by a stock program (which leaves it 0).
    pub fn is_announced(&self) -> bool {
        self.terminated && self.name_len > 0 && self.name_len as usize == self.bytes.len()
    }

    /// Byte range of the string region that starts at data word `first`.
    fn region(first: usize) -> std::ops::Range<usize> {
        let start = (DATA_OFFSET + first * 4).min(MESSAGE_LEN);
        start..(start + PATH_FIELD_MAX).min(MESSAGE_LEN)
    }

    /// Write the length at data word `at` and the string from word `at + 1`.
    fn put(&self, m: &mut Message, at: usize) {
        m.set_data_i32(at, self.name_len);
        let region = Self::region(at + 1);
        let mut raw = vec![0u8; region.len()];
        // Nothing after an embedded NUL is sent. An unterminated string (as
        // decoded from a full region) is written back whole, so it reads
        // back the same; ours keep their NUL.
        let bytes = self.bytes.split(|&b| b == 0).next().unwrap_or(&[]);
        let room = if self.terminated {
            raw.len().saturating_sub(1)
        } else {
            raw.len()
        };
        let n = bytes.len().min(room);
        raw[..n].copy_from_slice(&bytes[..n]);
        for (i, chunk) in raw.chunks(4).enumerate() {
            let mut group = [0u8; 4];
            group[..chunk.len()].copy_from_slice(chunk);
            // The word a little-endian host holds; htonl reverses it.
            m.set_data_u32(at + 1 + i, u32::from_le_bytes(group));
        }
    }

    fn get(m: &Message, at: usize) -> Self {
        let region = Self::region(at + 1);
        let mut raw = Vec::with_capacity(region.len());
        for i in 0..region.len().div_ceil(4) {
            raw.extend_from_slice(&m.data_u32(at + 1 + i).to_le_bytes());
        }
        raw.truncate(region.len());
        let end = raw.iter().position(|&b| b == 0);
        raw.truncate(end.unwrap_or(raw.len()));
        UnixPath {
            name_len: m.data_i32(at),
            bytes: raw,
            terminated: end.is_some(),
        }
    }
}

layout! {
    /// `stream_stream_request_struct`. `test_length` is seconds, or for a
    /// byte-count test the byte count, positive.
    StreamStreamRequest { kind: DO_STREAM_STREAM, swapped: false, header: cpu_bind, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    receive_size: i32,
    recv_alignment: i32,
    recv_offset: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
    measure_cpu: i32,
    cpu_rate: f32,
    test_length: i32,
    dirty_count: i32,
    clean_count: i32,
}

layout! {
    /// `stream_stream_response_struct`.
    StreamStreamResponse { kind: STREAM_STREAM_RESPONSE, swapped: false, header: serv_errno, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    receive_size: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
    measure_cpu: i32,
    test_length: i32,
    data_port_number: i32,
    cpu_rate: f32,
}

layout! {
    /// `stream_stream_results_struct`, typed as the response (swapped).
    StreamStreamResults { kind: STREAM_STREAM_RESPONSE, swapped: true, header: serv_errno, path: false }
    bytes_received: i32,
    recv_calls: i32,
    elapsed_time: f32,
    cpu_util: f32,
    serv_dem: f32,
    num_cpus: i32,
}

layout! {
    /// `stream_rr_request_struct`. `test_length` is seconds, or the
    /// transaction count negated.
    StreamRrRequest { kind: DO_STREAM_RR, swapped: false, header: cpu_bind, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    recv_alignment: i32,
    recv_offset: i32,
    send_alignment: i32,
    send_offset: i32,
    request_size: i32,
    response_size: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
    measure_cpu: i32,
    cpu_rate: f32,
    test_length: i32,
}

layout! {
    /// `stream_rr_response_struct`.
    StreamRrResponse { kind: STREAM_RR_RESPONSE, swapped: false, header: serv_errno, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
    measure_cpu: i32,
    test_length: i32,
    cpu_rate: f32,
}

layout! {
    /// `stream_rr_results_struct`, typed as the response (swapped).
    StreamRrResults { kind: STREAM_RR_RESPONSE, swapped: true, header: serv_errno, path: false }
    bytes_received: i32,
    recv_calls: i32,
    trans_received: i32,
    elapsed_time: f32,
    cpu_util: f32,
    serv_dem: f32,
    num_cpus: i32,
}

layout! {
    /// `dg_stream_request_struct`. `test_length` is seconds; stock netperf
    /// sends 0 for a count test (it has no count mode for DG_STREAM).
    DgStreamRequest { kind: DO_DG_STREAM, swapped: false, header: cpu_bind, path: true }
    recv_buf_size: i32,
    message_size: i32,
    recv_alignment: i32,
    recv_offset: i32,
    measure_cpu: i32,
    cpu_rate: f32,
    test_length: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
}

layout! {
    /// `dg_stream_response_struct`.
    DgStreamResponse { kind: DG_STREAM_RESPONSE, swapped: false, header: serv_errno, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    measure_cpu: i32,
    test_length: i32,
    cpu_rate: f32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
}

layout! {
    /// `dg_stream_results_struct`: the one results message with its own type.
    DgStreamResults { kind: DG_STREAM_RESULTS, swapped: false, header: serv_errno, path: false }
    messages_recvd: i32,
    bytes_received: i32,
    elapsed_time: f32,
    cpu_util: f32,
    num_cpus: i32,
}

layout! {
    /// `dg_rr_request_struct`. `test_length` is seconds, or the transaction
    /// count negated.
    DgRrRequest { kind: DO_DG_RR, swapped: false, header: cpu_bind, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    recv_alignment: i32,
    recv_offset: i32,
    send_alignment: i32,
    send_offset: i32,
    request_size: i32,
    response_size: i32,
    measure_cpu: i32,
    cpu_rate: f32,
    test_length: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
}

layout! {
    /// `dg_rr_response_struct`.
    DgRrResponse { kind: DG_RR_RESPONSE, swapped: false, header: serv_errno, path: true }
    recv_buf_size: i32,
    send_buf_size: i32,
    no_delay: i32,
    measure_cpu: i32,
    test_length: i32,
    cpu_rate: f32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
}

layout! {
    /// `dg_rr_results_struct`, typed as the response (swapped).
    DgRrResults { kind: DG_RR_RESPONSE, swapped: true, header: serv_errno, path: false }
    bytes_received: i32,
    recv_calls: i32,
    trans_received: i32,
    elapsed_time: f32,
    cpu_util: f32,
    serv_dem: f32,
    num_cpus: i32,
}

/// Every field of any Unix-domain message, under the names netperf's structs
/// give them: a layout writes and reads the ones it has, the others stay 0.
/// Both ends fill one of these whatever the test, so only the layouts know
/// which word is where.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fields {
    /// A request's header word: netserver's CPU binding (-1 for none).
    pub cpu_bind: i32,
    /// A response's or results' header word.
    pub serv_errno: i32,
    pub recv_buf_size: i32,
    pub send_buf_size: i32,
    /// STREAM_STREAM's receive size.
    pub receive_size: i32,
    /// DG_STREAM's datagram size.
    pub message_size: i32,
    pub recv_alignment: i32,
    pub recv_offset: i32,
    pub send_alignment: i32,
    pub send_offset: i32,
    pub request_size: i32,
    pub response_size: i32,
    pub so_rcvavoid: i32,
    pub so_sndavoid: i32,
    pub measure_cpu: i32,
    pub cpu_rate: f32,
    pub test_length: i32,
    pub dirty_count: i32,
    pub clean_count: i32,
    pub data_port_number: i32,
    pub no_delay: i32,
    pub bytes_received: i32,
    pub recv_calls: i32,
    pub trans_received: i32,
    pub messages_recvd: i32,
    pub elapsed_time: f32,
    pub cpu_util: f32,
    pub serv_dem: f32,
    pub num_cpus: i32,
    pub path: UnixPath,
}

/// Which of a test's three control messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Request,
    Response,
    Results,
}

/// The layout of `test`'s `role` message, as a call on its struct type.
macro_rules! by_layout {
    ($test:expr, $role:expr, |$t:ident| $body:expr) => {
        by_layout!(@arms ($test, $role), $t, $body;
            StreamStream: StreamStreamRequest StreamStreamResponse StreamStreamResults,
            StreamRr: StreamRrRequest StreamRrResponse StreamRrResults,
            DgStream: DgStreamRequest DgStreamResponse DgStreamResults,
            DgRr: DgRrRequest DgRrResponse DgRrResults)
    };
    (@arms $on:expr, $t:ident, $body:expr; $($test:ident: $request:ident $response:ident $results:ident),*) => {
        match $on {
            $(
                (UnixTest::$test, Role::Request) => { type $t = $request; $body }
                (UnixTest::$test, Role::Response) => { type $t = $response; $body }
                (UnixTest::$test, Role::Results) => { type $t = $results; $body }
            )*
        }
    };
}

/// Where the path fields of `test`'s `role` message start, in data words
/// (the message's length without them).
pub fn path_word(test: UnixTest, role: Role) -> usize {
    by_layout!(test, role, |T| T::WORDS)
}

/// `test`'s `role` message holding the fields its layout has.
pub fn encode(test: UnixTest, role: Role, fields: &Fields) -> Message {
    by_layout!(test, role, |T| T::from(fields).encode())
}

/// The fields of `test`'s `role` message; the type word is not checked.
pub fn decode(test: UnixTest, role: Role, m: &Message) -> Fields {
    by_layout!(test, role, |T| Fields::from(&T::decode(m)))
}

#[cfg(test)]
#[path = "unix_tests.rs"]
mod tests;
