//! netperf 2.7.1's control-connection messages: framing and byte order
//! (`message`), the omni test (`omni`), the legacy BSD tests that stock
//! netperf still sends for TCP_SENDFILE and TCP_CC (`legacy`), and the small
//! messages below; the Unix-domain tests (`unix`); netperf-ng's own offload
//! control (`offload`); the mesh opt-in's challenge, signed request and
//! result (`mesh`); netserver's TCP_INFO per interval (`tcp_series`); the macro that defines the fixed word layouts of the
//! legacy and Unix-domain messages (`layout`). Encoding and decoding only; no
//! I/O.

pub mod extension;
pub mod layout;
pub mod legacy;
pub mod mesh;
pub mod message;
pub mod offload;
pub mod omni;
pub mod system_facts;
pub mod tcp_series;
pub mod unix;

pub use message::{kind, Message, MESSAGE_LEN};

/// What `netperf -V` and `netserver -V` print on stdout (exit code 0): the
/// version whose wire format both ends speak.
pub const VERSION_TEXT: &str = "Netperf version 2.7.1\n";

/// Seconds a netserver adds to a timed test's length for its own timer
/// (netperf's PAD_TIME): netperf normally ends the test first.
pub const PAD_TIME: u32 = 4;

/// Longest passphrase that fits the message's data area with its NUL.
pub const PASSPHRASE_MAX: usize = message::MESSAGE_LEN - message::DATA_OFFSET - 1;

/// The PASSPHRASE request: only the header words are converted; the phrase
/// follows raw.
pub fn encode_passphrase(phrase: &str) -> Message {
    let mut m = Message::new(kind::PASSPHRASE, -1);
    m.set_data_str(0, MESSAGE_LEN - message::DATA_OFFSET, phrase);
    m
}

pub fn decode_passphrase(m: &Message) -> String {
    m.data_str(0, MESSAGE_LEN - message::DATA_OFFSET)
}

/// The CPU_CALIBRATE request (REM_CPU) and its response: the rate as a float
/// and the number of CPUs, both converted words.
pub fn encode_cpu_calibrate_request() -> Message {
    Message::new(kind::CPU_CALIBRATE, -1)
}

pub fn encode_cpu_calibrate_response(rate: f32, num_cpus: u32) -> Message {
    let mut m = Message::new(kind::CPU_CALIBRATE, 0);
    m.set_data_f32(0, rate);
    m.set_data_u32(1, num_cpus);
    m
}

pub fn decode_cpu_calibrate_response(m: &Message) -> (f32, u32) {
    (m.data_f32(0), m.data_u32(1))
}

/// A response that carries only an errno: how netserver refuses a request.
pub fn encode_error_response(kind: u32, errno: i32) -> Message {
    Message::new(kind, errno)
}
