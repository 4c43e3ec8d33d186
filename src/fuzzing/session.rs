//! The `session` target: a fuzz input is a short script of what a client
//! does on a netserver control connection, played over real loopback TCP
//! against `server::session::run` on its own thread, with limits tight
//! enough that any test it starts ends within about a second. Once the
//! client has closed, the session must end within [`SESSION_BOUND`]: a
//! session that does not is a hang, reported as a panic.
//!
//! # Input format
//!
//! Byte 0: bit 0 set = the server requires the passphrase
//! [`templates::PASSPHRASE`]. Then up to [`MAX_STEPS`] steps, each an
//! opcode byte (taken modulo 6, so every byte is one) and its operands:
//!
//! | op | operands | the client |
//! |----|----------|------------|
//! | 0 message | 656 bytes (zero-padded at the end of input) | sends them as one message |
//! | 1 template | t, n, n × (word index, 4-byte big-endian value) | sends template t (modulo their number) with n (modulo 9) words replaced |
//! | 2 await | — | reads one message (bounded wait); a response's data port is remembered |
//! | 3 data | b | connects to the data port (b bit 0: UDP) and writes (b >> 1) × 256 bytes |
//! | 4 partial | n, n bytes | sends the first n bytes of a message, and no more |
//! | 5 pause | p | waits (p modulo 8) × 40 ms |
//!
//! Every message sent passes through [`templates::confine`], so data
//! connections and datagrams stay on this machine.

use super::client::Client;
pub use super::templates;
use crate::server::limits::Limits;
use crate::server::options::ServerOptions;
use crate::server::session;
use crate::wire::MESSAGE_LEN;
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::Duration;

/// Steps read from one input; the rest is ignored.
pub const MAX_STEPS: usize = 16;
/// How long the session may go on after its client has closed.
pub const SESSION_BOUND: Duration = Duration::from_secs(5);

pub const OP_MESSAGE: u8 = 0;
pub const OP_TEMPLATE: u8 = 1;
pub const OP_AWAIT: u8 = 2;
pub const OP_DATA: u8 = 3;
pub const OP_PARTIAL: u8 = 4;
pub const OP_PAUSE: u8 = 5;
const OPS: u8 = 6;

/// One thing the client does.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Message(Box<[u8; MESSAGE_LEN]>),
    Template { index: u8, edits: Vec<(u8, u32)> },
    Await,
    Data { udp: bool, units: u8 },
    Partial(Vec<u8>),
    Pause(u8),
}

/// A parsed input.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    pub passphrase: bool,
    pub steps: Vec<Step>,
}

/// Read a script from any bytes (every input is one).
pub fn parse(data: &[u8]) -> Script {
    let passphrase = data.first().is_some_and(|b| b & 1 != 0);
    let mut rest = data.get(1..).unwrap_or(&[]);
    let mut steps = Vec::new();
    while !rest.is_empty() && steps.len() < MAX_STEPS {
        let (step, used) = parse_step(rest);
        steps.push(step);
        rest = rest.get(used..).unwrap_or(&[]);
    }
    Script { passphrase, steps }
}

/// One step at the start of `data` (not empty), and the bytes it used.
fn parse_step(data: &[u8]) -> (Step, usize) {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    match data[0] % OPS {
        OP_MESSAGE => {
            let mut m = Box::new([0u8; MESSAGE_LEN]);
            let body = data.get(1..).unwrap_or(&[]);
            let n = body.len().min(MESSAGE_LEN);
            m[..n].copy_from_slice(&body[..n]);
            (Step::Message(m), 1 + n)
        }
        OP_TEMPLATE => {
            let count = usize::from(byte(2) % 9);
            let edits = (0..count)
                .map(|e| {
                    let at = 3 + e * 5;
                    let value = u32::from_be_bytes([
                        byte(at + 1),
                        byte(at + 2),
                        byte(at + 3),
                        byte(at + 4),
                    ]);
                    (byte(at), value)
                })
                .collect();
            (
                Step::Template {
                    index: byte(1),
                    edits,
                },
                3 + count * 5,
            )
        }
        OP_AWAIT => (Step::Await, 1),
        OP_DATA => (
            Step::Data {
                udp: byte(1) & 1 != 0,
                units: byte(1) >> 1,
            },
            2,
        ),
        OP_PARTIAL => {
            let n = usize::from(byte(1));
            let body = data.get(2..).unwrap_or(&[]);
            let n = n.min(body.len());
            (Step::Partial(body[..n].to_vec()), 2 + n)
        }
        _ => (Step::Pause(byte(1)), 2),
    }
}

/// The bytes of a script, for writing seeds: `parse(&encode(s)) == s` for
/// scripts `parse` can return.
pub fn encode(script: &Script) -> Vec<u8> {
    let mut out = vec![u8::from(script.passphrase)];
    for step in &script.steps {
        match step {
            Step::Message(m) => {
                out.push(OP_MESSAGE);
                out.extend_from_slice(&m[..]);
            }
            Step::Template { index, edits } => {
                out.extend([OP_TEMPLATE, *index, edits.len() as u8]);
                for (at, value) in edits {
                    out.push(*at);
                    out.extend_from_slice(&value.to_be_bytes());
                }
            }
            Step::Await => out.push(OP_AWAIT),
            Step::Data { udp, units } => out.extend([OP_DATA, units << 1 | u8::from(*udp)]),
            Step::Partial(bytes) => {
                out.extend([OP_PARTIAL, bytes.len() as u8]);
                out.extend_from_slice(bytes);
            }
            Step::Pause(p) => out.extend([OP_PAUSE, *p]),
        }
    }
    out
}

/// The fuzzed server's fill directory (`-F`): fuzz/fill in the source tree,
/// a file and a link out of it, so that fill names reach the directory's
/// checks; none where the tree is not there.
fn fill_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fill");
    dir.is_dir().then_some(dir)
}

/// What the server is run with: the defaults, but a test that starts ends
/// within about a second, and idle or stalled clients are not waited for.
/// Offload changes stay off: a fuzzed session must never change this
/// host's interfaces (the rule is checked by the decode target).
/// NETPERF_NG_FUZZ_LOG set in the environment turns the server's log on
/// (stderr), to see what an input does.
pub fn server_options(passphrase: bool) -> ServerOptions {
    let log = std::env::var_os("NETPERF_NG_FUZZ_LOG").is_some();
    let ms = Duration::from_millis;
    ServerOptions {
        limits: Limits {
            accept_timeout: ms(50),
            silent_timeout: ms(200),
            idle_timeout: ms(300),
            max_test_seconds: 1,
            ..Default::default()
        },
        passphrase: passphrase.then(|| templates::PASSPHRASE.to_string()),
        fill_dir: fill_dir(),
        verbosity: i32::from(log),
        verbosity_given: log,
        ..Default::default()
    }
}

/// The listener sessions are accepted on, made once per process.
fn listener() -> &'static TcpListener {
    static LISTENER: OnceLock<TcpListener> = OnceLock::new();
    LISTENER.get_or_init(|| {
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a loopback listener")
    })
}

/// Where netserver's UDP sends to "netperf" go: a socket of ours that is
/// never read (the kernel drops what does not fit).
pub(super) fn sink_port() -> u16 {
    static SINK: OnceLock<Option<UdpSocket>> = OnceLock::new();
    SINK.get_or_init(|| UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).ok())
        .as_ref()
        .and_then(|s| s.local_addr().ok())
        .map_or(9, |a| a.port())
}

/// Play `data` as a script against a fresh session; panics on a finding.
pub fn run_input(data: &[u8]) {
    run_script(&parse(data));
}

pub fn run_script(script: &Script) {
    let listener = listener();
    let addr = listener.local_addr().expect("listener address");
    let stream = TcpStream::connect(addr).expect("connect to the session listener");
    let (server_end, peer) = listener.accept().expect("accept the session");
    let opts = server_options(script.passphrase);
    let (done, ended) = mpsc::channel();
    let session = std::thread::Builder::new()
        .name("fuzz-session".into())
        .spawn(move || {
            session::run(server_end, peer, &opts);
            let _ = done.send(());
        })
        .expect("spawn the session thread");
    let mut client = Client::new(stream, sink_port());
    for step in &script.steps {
        if !client.step(step) {
            break;
        }
    }
    client.finish();
    match ended.recv_timeout(SESSION_BOUND) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
        Err(RecvTimeoutError::Timeout) => panic!(
            "hang: the netserver session was still running {SESSION_BOUND:?} after its client \
             closed the control connection (script: {script:?})"
        ),
    }
    if let Err(panic) = session.join() {
        std::panic::resume_unwind(panic);
    }
}
