//! A `session` fuzz input read as a script: what a client does on a
//! netserver control connection, step by step (the `session` target plays
//! it; seeds are written with `encode`).
//!
//! # Input format
//!
//! Byte 0: bit 0 set = the server requires the passphrase
//! [`PASSPHRASE`](super::templates::PASSPHRASE). Then up to [`MAX_STEPS`] steps, each an
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
//! Every message sent passes through [`confine`](super::templates::confine), so data
//! connections and datagrams stay on this machine.

use crate::wire::MESSAGE_LEN;

/// Steps read from one input; the rest is ignored.
pub const MAX_STEPS: usize = 16;

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
