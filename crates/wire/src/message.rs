//! The control message frame of netperf 2.7.1: 656 bytes, two header words
//! (type, serv_errno) and 162 words of test-specific data, plus the per-message
//! byte-order rules that the real implementation applies.

/// Size of every control message in both directions.
pub const MESSAGE_LEN: usize = 656;
/// Number of 32-bit words in a message.
pub const MESSAGE_WORDS: usize = MESSAGE_LEN / 4;
/// Byte offset of the test-specific data.
pub const DATA_OFFSET: usize = 8;

/// Message type codes (netlib.h). Requests and the matching responses.
pub mod kind {
    pub const DEBUG_ON: u32 = 1;
    pub const DEBUG_OFF: u32 = 2;
    pub const DEBUG_OK: u32 = 3;
    pub const CPU_CALIBRATE: u32 = 5;
    pub const PASSPHRASE: u32 = 6;
    pub const DO_TCP_STREAM: u32 = 10;
    pub const TCP_STREAM_RESPONSE: u32 = 11;
    pub const TCP_STREAM_RESULTS: u32 = 12;
    pub const DO_OMNI: u32 = 97;
    pub const OMNI_RESPONSE: u32 = 98;
    pub const OMNI_RESULTS: u32 = 99;
    pub const DO_TCP_CC: u32 = 300;
    pub const TCP_CC_RESPONSE: u32 = 301;
    pub const TCP_CC_RESULTS: u32 = 302;
    pub const DO_SYSINFO: u32 = 600;
    pub const SYSINFO_RESPONSE: u32 = 601;
    /// netperf-ng's offload control (`wire::offload`): far above netperf's
    /// numbers, which a stock netserver answers with serv_errno 998.
    pub const DO_NG_OFFLOADS: u32 = 20_000;
    pub const NG_OFFLOADS_RESPONSE: u32 = 20_001;
    /// netperf-ng's TCP_INFO series (`wire::tcp_series`), after the omni
    /// results, only to a client that asked for it.
    pub const NG_TCP_SERIES: u32 = 20_002;
    /// netperf-ng's mesh tests (`wire::mesh`): a challenge, a signed request
    /// to run a test from the netserver to a peer, its result record.
    pub const NG_MESH_HELLO: u32 = 20_010;
    pub const NG_MESH_CHALLENGE: u32 = 20_011;
    pub const NG_MESH_ORIGIN: u32 = 20_012;
    pub const NG_MESH_RESULT: u32 = 20_013;
}

/// One control message as it travels on the wire.
///
/// netperf converts a prefix of the message to network order word by word
/// (`htonl`) and leaves the rest (strings) as raw bytes. Accessors here read
/// and write words big-endian, which is what a word inside the converted
/// prefix looks like on the wire; strings are read and written as bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    pub bytes: [u8; MESSAGE_LEN],
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Message(type={}, errno={})",
            self.kind(),
            self.serv_errno()
        )
    }
}

impl Default for Message {
    fn default() -> Self {
        Message {
            bytes: [0; MESSAGE_LEN],
        }
    }
}

impl Message {
    /// A zeroed message with the given type and serv_errno/dummy word.
    pub fn new(kind: u32, second_word: i32) -> Self {
        let mut m = Message::default();
        m.set_word(0, kind);
        m.set_word(1, second_word as u32);
        m
    }

    pub fn from_bytes(bytes: [u8; MESSAGE_LEN]) -> Self {
        Message { bytes }
    }

    /// The type word, accepting it in either byte order: a stock netserver
    /// sends the type of its results message byte-swapped (it converts the
    /// same in-memory word twice), so 98 arrives as 0x62000000.
    pub fn kind(&self) -> u32 {
        let w = self.word(0);
        if w > 0xFFFF && w.swap_bytes() <= 0xFFFF {
            w.swap_bytes()
        } else {
            w
        }
    }

    /// Word 1: serv_errno in a response, the remote CPU binding in a request.
    pub fn serv_errno(&self) -> i32 {
        self.word(1) as i32
    }

    /// A whole-message word, big-endian. Out-of-range indexes read as 0.
    pub fn word(&self, index: usize) -> u32 {
        let at = index * 4;
        match self.bytes.get(at..at + 4) {
            Some(b) => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            None => 0,
        }
    }

    pub fn set_word(&mut self, index: usize, value: u32) {
        let at = index * 4;
        if let Some(b) = self.bytes.get_mut(at..at + 4) {
            b.copy_from_slice(&value.to_be_bytes());
        }
    }

    /// Word `index` of the test-specific data.
    pub fn data_u32(&self, index: usize) -> u32 {
        self.word(index + 2)
    }
    pub fn data_i32(&self, index: usize) -> i32 {
        self.word(index + 2) as i32
    }
    pub fn data_f32(&self, index: usize) -> f32 {
        f32::from_bits(self.word(index + 2))
    }
    pub fn set_data_u32(&mut self, index: usize, value: u32) {
        self.set_word(index + 2, value)
    }
    pub fn set_data_i32(&mut self, index: usize, value: i32) {
        self.set_word(index + 2, value as u32)
    }
    pub fn set_data_f32(&mut self, index: usize, value: f32) {
        self.set_word(index + 2, value.to_bits())
    }

    /// A C string stored raw at `offset..offset+len` of the test-specific
    /// data: up to the first NUL, lossily decoded, and cut to what
    /// `set_data_str` can write back (`len - 1` bytes, whole characters).
    /// Without the cut, a value read from a hostile or unterminated field
    /// (invalid bytes become 3-byte U+FFFD) would change when re-sent.
    pub fn data_str(&self, offset: usize, len: usize) -> String {
        let start = DATA_OFFSET + offset;
        let end = (start + len).min(MESSAGE_LEN);
        let field = self.bytes.get(start..end).unwrap_or(&[]);
        let used = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        let mut text = String::from_utf8_lossy(&field[..used]).into_owned();
        text.truncate(char_floor(&text, field.len().saturating_sub(1)));
        text
    }

    /// Store `value` raw at `offset` of the test-specific data, up to its
    /// first NUL (what a C reader sees; nothing hides behind it), truncated
    /// to whole characters so that a terminating NUL always fits in `len`
    /// bytes (a cut character would read back as U+FFFD).
    pub fn set_data_str(&mut self, offset: usize, len: usize, value: &str) {
        let start = DATA_OFFSET + offset;
        let end = (start + len).min(MESSAGE_LEN);
        if start >= end {
            return;
        }
        let field = &mut self.bytes[start..end];
        field.fill(0);
        let value = value.split('\0').next().unwrap_or("");
        let n = char_floor(value, field.len() - 1);
        field[..n].copy_from_slice(&value.as_bytes()[..n]);
    }

    /// Store 16 raw bytes as four words that a little-endian netperf converts
    /// with htonl: each 4-byte group is reversed on the wire.
    pub fn set_data_swapped_bytes(&mut self, index: usize, raw: &[u8; 16]) {
        for (i, chunk) in raw.chunks_exact(4).enumerate() {
            let host_word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            self.set_data_u32(index + i, host_word);
        }
    }

    /// Inverse of `set_data_swapped_bytes`.
    pub fn data_swapped_bytes(&self, index: usize) -> [u8; 16] {
        let mut raw = [0u8; 16];
        for i in 0..4 {
            raw[i * 4..i * 4 + 4].copy_from_slice(&self.data_u32(index + i).to_le_bytes());
        }
        raw
    }

    /// Write the type word byte-swapped, as a stock netserver does on its
    /// results message.
    pub fn set_kind_swapped(&mut self, kind: u32) {
        self.set_word(0, kind.swap_bytes());
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
fn char_floor(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// Join two 32-bit halves sent as separate words into a 64-bit counter.
pub fn join_u64(hi: u32, lo: u32) -> u64 {
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Split a 64-bit counter into (hi, lo) words.
pub fn split_u64(value: u64) -> (u32, u32) {
    ((value >> 32) as u32, value as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_big_endian_and_bounded() {
        let mut m = Message::new(kind::DO_OMNI, -1);
        assert_eq!(&m.bytes[0..8], &[0, 0, 0, 0x61, 0xff, 0xff, 0xff, 0xff]);
        m.set_data_i32(0, 131072);
        assert_eq!(m.data_i32(0), 131072);
        assert_eq!(m.word(MESSAGE_WORDS), 0);
        m.set_word(MESSAGE_WORDS + 3, 7); // ignored, no panic
    }

    #[test]
    fn kind_accepts_swapped_results_type() {
        let mut m = Message::default();
        m.set_kind_swapped(kind::OMNI_RESPONSE);
        assert_eq!(&m.bytes[0..4], &[0x62, 0, 0, 0]);
        assert_eq!(m.kind(), kind::OMNI_RESPONSE);
    }

    #[test]
    fn strings_are_bounded_and_terminated() {
        let mut m = Message::default();
        m.set_data_str(152, 16, "a-very-long-congestion-name");
        assert_eq!(m.data_str(152, 16), "a-very-long-con");
        m.set_data_str(MESSAGE_LEN, 16, "x");
        assert_eq!(m.data_str(MESSAGE_LEN, 16), "");
    }

    #[test]
    fn strings_read_back_as_they_can_be_written() {
        let mut m = Message::default();
        // A cut never splits a character: "é" is two bytes.
        m.set_data_str(0, 4, "aéé");
        assert_eq!(m.data_str(0, 4), "aé");
        // Nothing after an embedded NUL is sent.
        m.set_data_str(0, 8, "ab\0cd");
        assert_eq!(&m.bytes[DATA_OFFSET..DATA_OFFSET + 8], b"ab\0\0\0\0\0\0");
        // An unterminated field of invalid bytes reads as U+FFFD (3 bytes
        // each), cut to what fits back with its NUL.
        m.bytes[DATA_OFFSET..DATA_OFFSET + 8].fill(0xff);
        let read = m.data_str(0, 8);
        assert_eq!(read, "\u{fffd}\u{fffd}");
        let mut again = Message::default();
        again.set_data_str(0, 8, &read);
        assert_eq!(again.data_str(0, 8), read);
    }

    #[test]
    fn u64_halves_round_trip() {
        let (hi, lo) = split_u64(0x1_2345_6789);
        assert_eq!(join_u64(hi, lo), 0x1_2345_6789);
    }
}
