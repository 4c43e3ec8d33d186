//! The two classic BSD tests that stock netperf 2.7.1 still runs without
//! omni: TCP_SENDFILE (`DO_TCP_STREAM`, served by netserver's
//! `recv_tcp_stream`) and TCP_CC (`DO_TCP_CC`, served by `recv_tcp_cc`).
//! Request, response and results codecs, byte for byte as the stock programs
//! put them on the control connection (checked against captured traffic in
//! the tests).
//!
//! # Byte order
//!
//! Requests and responses go through `send_request` / `send_response`, which
//! `htonl` all 164 words of the message, so every field is a big-endian word.
//! A netserver writes its results into the same buffer it has just converted
//! and sent as the response, and sends it with `send_response` again: every
//! word it does not rewrite is converted a second time and arrives
//! byte-reversed relative to the response. This includes the type word, so a
//! results message carries the *response* type, byte-swapped (11 arrives as
//! `0b 00 00 00`, 301 as `2d 01 00 00`); `TCP_STREAM_RESULTS` and
//! `TCP_CC_RESULTS` never appear. The results structs' `left_over_from`
//! reproduces those words (for the first test on a control connection, which
//! is all a plain run does; later `-i` iterations carry older leftovers that
//! netperf never reads). TCP_SENDFILE's `bytes_received` is a `double`: the
//! server applies `htond` before the word conversion, so it travels as a plain
//! 8-byte big-endian IEEE double.
//!
//! # TCP_SENDFILE
//!
//! 1. netperf sends `DO_TCP_STREAM` ([`TcpStreamRequest`]).
//! 2. netserver opens a listen socket (`port`, `ipfamily`) and answers with
//!    [`TcpStreamResponse`]; on failure the same message with `serv_errno`
//!    set, and the netserver child exits.
//! 3. netperf connects to `data_port_number` and `sendfile()`s `send_size`
//!    chunks until its timer (`test_length` seconds) or byte count runs out,
//!    then `shutdown(SHUT_WR)` and blocks reading the data socket for the
//!    server's FIN.
//! 4. netserver `recv()`s until it reads end of file: that is how it learns
//!    the test ended. It then `shutdown(SHUT_WR)`s the data socket and sends
//!    [`TcpStreamResults`]. Its own timer of `test_length + PAD_TIME_SECS` is
//!    only a backstop; note that a byte-count test sends the byte count
//!    positive in `test_length`, indistinguishable from seconds.
//! 5. netperf reads the results and closes the control connection.
//!
//! netperf reads from the response: `serv_errno`, `recv_buf_size`,
//! `send_buf_size`, `no_delay`, `measure_cpu` (it replaces netperf's idea of
//! whether remote CPU is measured), `cpu_rate`, `data_port_number` (as a
//! 16-bit port), `so_rcvavoid`, `so_sndavoid`; not `receive_size` or
//! `test_length`. From the results: `serv_errno`, `bytes_received` (its
//! throughput), `cpu_util` and `num_cpus` if the response's `measure_cpu` was
//! set, `cpu_method` if `-c` or `-C`, `recv_calls` only at `-v 2`; never
//! `elapsed_time`, `serv_dem`, `recv_buf_size`, `send_buf_size`.
//!
//! # TCP_CC
//!
//! 1. netperf sends `DO_TCP_CC` ([`TcpCcRequest`]).
//! 2. netserver opens a listen socket and answers with [`TcpCcResponse`].
//! 3. netperf loops: a fresh socket bound to the next local port, `connect`,
//!    `recv` one byte expecting end of file, `close`; one transaction each.
//!    No data flows. It stops on its timer (`test_length` seconds) or after
//!    the transaction count, sends nothing, and waits (up to 120 s) for the
//!    results on the control connection. A refused `connect` makes it exit,
//!    so the listen socket must stay open until its loop ends.
//! 4. netserver loops `accept` then `close` at once, counting. It decides the
//!    end itself: after `-test_length` accepts when `test_length <= 0`, else
//!    when its timer of `test_length + PAD_TIME_SECS` interrupts `accept`
//!    (it then subtracts `PAD_TIME_SECS` from its elapsed time). It never
//!    closes the listen socket. Then it sends [`TcpCcResults`].
//!
//! netperf reads from the response: `serv_errno`, `recv_buf_size`,
//! `send_buf_size`, `no_delay`, `measure_cpu`, `cpu_rate`,
//! `data_port_number`; not `test_length`, `so_rcvavoid`, `so_sndavoid`. From
//! the results only `serv_errno`, and `cpu_util` and `num_cpus` if the
//! response's `measure_cpu` was set: the rate comes from its own count.

use super::message::{join_u64, kind, split_u64, Message, MESSAGE_WORDS};

/// Seconds a stock netserver adds to `test_length` for its own test timer.
pub const PAD_TIME_SECS: i32 = 4;

/// The buffer as a stock netserver holds it after sending `sent`: every word
/// already in network order, so sending it again reverses each word's bytes.
fn converted_again(sent: &Message) -> Message {
    let mut again = Message::default();
    for index in 0..MESSAGE_WORDS {
        again.set_word(index, sent.word(index).swap_bytes());
    }
    again
}

fn put_words(m: &mut Message, words: &[u32]) {
    for (index, word) in words.iter().enumerate() {
        m.set_data_u32(index, *word);
    }
}

/// `tcp_stream_request_struct`, as `sendfile_tcp_stream` fills it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpStreamRequest {
    /// The header's second word: netserver's CPU binding, -1 for none.
    pub cpu_bind: i32,
    pub send_buf_size: i32,
    pub recv_buf_size: i32,
    pub receive_size: i32,
    pub recv_alignment: i32,
    pub recv_offset: i32,
    pub no_delay: i32,
    pub measure_cpu: i32,
    pub cpu_rate: f32,
    /// Seconds, or for a byte-count test the byte count (positive).
    pub test_length: i32,
    pub so_rcvavoid: i32,
    pub so_sndavoid: i32,
    /// Left 0: stock netperf is built without DIRTY.
    pub dirty_count: i32,
    pub clean_count: i32,
    pub port: i32,
    /// netperf's family number (NF_INET 4, NF_INET6 6).
    pub ipfamily: i32,
    pub recv_aio: i32,
}

impl TcpStreamRequest {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::DO_TCP_STREAM, self.cpu_bind);
        put_words(
            &mut m,
            &[
                self.send_buf_size as u32,
                self.recv_buf_size as u32,
                self.receive_size as u32,
                self.recv_alignment as u32,
                self.recv_offset as u32,
                self.no_delay as u32,
                self.measure_cpu as u32,
                self.cpu_rate.to_bits(),
                self.test_length as u32,
                self.so_rcvavoid as u32,
                self.so_sndavoid as u32,
                self.dirty_count as u32,
                self.clean_count as u32,
                self.port as u32,
                self.ipfamily as u32,
                self.recv_aio as u32,
            ],
        );
        m
    }

    pub fn decode(m: &Message) -> Self {
        TcpStreamRequest {
            cpu_bind: m.serv_errno(),
            send_buf_size: m.data_i32(0),
            recv_buf_size: m.data_i32(1),
            receive_size: m.data_i32(2),
            recv_alignment: m.data_i32(3),
            recv_offset: m.data_i32(4),
            no_delay: m.data_i32(5),
            measure_cpu: m.data_i32(6),
            cpu_rate: m.data_f32(7),
            test_length: m.data_i32(8),
            so_rcvavoid: m.data_i32(9),
            so_sndavoid: m.data_i32(10),
            dirty_count: m.data_i32(11),
            clean_count: m.data_i32(12),
            port: m.data_i32(13),
            ipfamily: m.data_i32(14),
            recv_aio: m.data_i32(15),
        }
    }
}

/// `tcp_stream_response_struct`. A stock netserver never writes
/// `test_length` (0 on a fresh connection).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpStreamResponse {
    pub serv_errno: i32,
    pub recv_buf_size: i32,
    pub receive_size: i32,
    pub no_delay: i32,
    pub measure_cpu: i32,
    pub test_length: i32,
    pub send_buf_size: i32,
    pub data_port_number: i32,
    pub cpu_rate: f32,
    pub so_rcvavoid: i32,
    pub so_sndavoid: i32,
}

impl TcpStreamResponse {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::TCP_STREAM_RESPONSE, self.serv_errno);
        put_words(
            &mut m,
            &[
                self.recv_buf_size as u32,
                self.receive_size as u32,
                self.no_delay as u32,
                self.measure_cpu as u32,
                self.test_length as u32,
                self.send_buf_size as u32,
                self.data_port_number as u32,
                self.cpu_rate.to_bits(),
                self.so_rcvavoid as u32,
                self.so_sndavoid as u32,
            ],
        );
        m
    }

    pub fn decode(m: &Message) -> Self {
        TcpStreamResponse {
            serv_errno: m.serv_errno(),
            recv_buf_size: m.data_i32(0),
            receive_size: m.data_i32(1),
            no_delay: m.data_i32(2),
            measure_cpu: m.data_i32(3),
            test_length: m.data_i32(4),
            send_buf_size: m.data_i32(5),
            data_port_number: m.data_i32(6),
            cpu_rate: m.data_f32(7),
            so_rcvavoid: m.data_i32(8),
            so_sndavoid: m.data_i32(9),
        }
    }
}

/// `tcp_stream_results_struct`. A stock netserver writes `bytes_received`,
/// `recv_calls`, `elapsed_time`, `cpu_method`, `num_cpus`, and `cpu_util`
/// only when measuring CPU; everything else (type word and `serv_errno`
/// included) is the response converted twice: see [`Self::left_over_from`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpStreamResults {
    pub serv_errno: i32,
    pub bytes_received: f64,
    pub recv_calls: u32,
    pub elapsed_time: f32,
    pub cpu_util: f32,
    pub serv_dem: f32,
    pub cpu_method: i32,
    pub num_cpus: i32,
    pub recv_buf_size: i32,
    pub send_buf_size: i32,
}

impl TcpStreamResults {
    /// Encode as a stock netserver does: the type word is
    /// `TCP_STREAM_RESPONSE` byte-swapped (`0b 00 00 00`), because the
    /// results reuse the response's already converted buffer.
    pub fn encode(&self) -> Message {
        let mut m = Message::new(0, self.serv_errno);
        m.set_kind_swapped(kind::TCP_STREAM_RESPONSE);
        let (bytes_hi, bytes_lo) = split_u64(self.bytes_received.to_bits());
        put_words(
            &mut m,
            &[
                bytes_hi,
                bytes_lo,
                self.recv_calls,
                self.elapsed_time.to_bits(),
                self.cpu_util.to_bits(),
                self.serv_dem.to_bits(),
                self.cpu_method as u32,
                self.num_cpus as u32,
                self.recv_buf_size as u32,
                self.send_buf_size as u32,
            ],
        );
        m
    }

    /// Accepts the type word in either byte order (it is not checked).
    pub fn decode(m: &Message) -> Self {
        TcpStreamResults {
            serv_errno: m.serv_errno(),
            bytes_received: f64::from_bits(join_u64(m.data_u32(0), m.data_u32(1))),
            recv_calls: m.data_u32(2),
            elapsed_time: m.data_f32(3),
            cpu_util: m.data_f32(4),
            serv_dem: m.data_f32(5),
            cpu_method: m.data_i32(6),
            num_cpus: m.data_i32(7),
            recv_buf_size: m.data_i32(8),
            send_buf_size: m.data_i32(9),
        }
    }

    /// The results a stock netserver would send after `response` before it
    /// writes anything: each field is the response word at the same position
    /// converted twice (byte-reversed). Overwrite the fields it writes (see
    /// the struct doc) to get its exact bytes; the leftovers are
    /// `cpu_util` = test_length, `serv_dem` = send_buf_size,
    /// `recv_buf_size` = so_rcvavoid, `send_buf_size` = so_sndavoid.
    pub fn left_over_from(response: &TcpStreamResponse) -> Self {
        Self::decode(&converted_again(&response.encode()))
    }
}

/// `tcp_cc_request_struct`, as `send_tcp_cc` fills it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpCcRequest {
    /// The header's second word: netserver's CPU binding, -1 for none.
    pub cpu_bind: i32,
    pub recv_buf_size: i32,
    pub send_buf_size: i32,
    pub recv_alignment: i32,
    pub recv_offset: i32,
    pub send_alignment: i32,
    pub send_offset: i32,
    pub request_size: i32,
    pub response_size: i32,
    pub no_delay: i32,
    pub measure_cpu: i32,
    pub cpu_rate: f32,
    /// > 0 seconds, <= 0 a negated transaction count.
    pub test_length: i32,
    pub so_rcvavoid: i32,
    pub so_sndavoid: i32,
    pub port: i32,
    /// netperf's family number (NF_INET 4, NF_INET6 6).
    pub ipfamily: i32,
}

impl TcpCcRequest {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::DO_TCP_CC, self.cpu_bind);
        put_words(
            &mut m,
            &[
                self.recv_buf_size as u32,
                self.send_buf_size as u32,
                self.recv_alignment as u32,
                self.recv_offset as u32,
                self.send_alignment as u32,
                self.send_offset as u32,
                self.request_size as u32,
                self.response_size as u32,
                self.no_delay as u32,
                self.measure_cpu as u32,
                self.cpu_rate.to_bits(),
                self.test_length as u32,
                self.so_rcvavoid as u32,
                self.so_sndavoid as u32,
                self.port as u32,
                self.ipfamily as u32,
            ],
        );
        m
    }

    pub fn decode(m: &Message) -> Self {
        TcpCcRequest {
            cpu_bind: m.serv_errno(),
            recv_buf_size: m.data_i32(0),
            send_buf_size: m.data_i32(1),
            recv_alignment: m.data_i32(2),
            recv_offset: m.data_i32(3),
            send_alignment: m.data_i32(4),
            send_offset: m.data_i32(5),
            request_size: m.data_i32(6),
            response_size: m.data_i32(7),
            no_delay: m.data_i32(8),
            measure_cpu: m.data_i32(9),
            cpu_rate: m.data_f32(10),
            test_length: m.data_i32(11),
            so_rcvavoid: m.data_i32(12),
            so_sndavoid: m.data_i32(13),
            port: m.data_i32(14),
            ipfamily: m.data_i32(15),
        }
    }
}

/// `tcp_cc_response_struct`. A stock netserver never writes `test_length`,
/// and writes `measure_cpu` only as 1 when asked to measure (else 0 on a
/// fresh connection).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpCcResponse {
    pub serv_errno: i32,
    pub recv_buf_size: i32,
    pub no_delay: i32,
    pub measure_cpu: i32,
    pub test_length: i32,
    pub send_buf_size: i32,
    pub data_port_number: i32,
    pub cpu_rate: f32,
    pub so_rcvavoid: i32,
    pub so_sndavoid: i32,
}

impl TcpCcResponse {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::TCP_CC_RESPONSE, self.serv_errno);
        put_words(
            &mut m,
            &[
                self.recv_buf_size as u32,
                self.no_delay as u32,
                self.measure_cpu as u32,
                self.test_length as u32,
                self.send_buf_size as u32,
                self.data_port_number as u32,
                self.cpu_rate.to_bits(),
                self.so_rcvavoid as u32,
                self.so_sndavoid as u32,
            ],
        );
        m
    }

    pub fn decode(m: &Message) -> Self {
        TcpCcResponse {
            serv_errno: m.serv_errno(),
            recv_buf_size: m.data_i32(0),
            no_delay: m.data_i32(1),
            measure_cpu: m.data_i32(2),
            test_length: m.data_i32(3),
            send_buf_size: m.data_i32(4),
            data_port_number: m.data_i32(5),
            cpu_rate: m.data_f32(6),
            so_rcvavoid: m.data_i32(7),
            so_sndavoid: m.data_i32(8),
        }
    }
}

/// `tcp_cc_results_struct`, plus the one data word just past it that the
/// response (one word longer) leaves behind. A stock netserver writes
/// `bytes_received` (transactions × (request_size + response_size), wrapping),
/// `trans_received`, `elapsed_time`, `num_cpus`, and `cpu_util` only when
/// measuring CPU; everything else (type word and `serv_errno` included) is
/// the response converted twice: see [`Self::left_over_from`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpCcResults {
    pub serv_errno: i32,
    pub bytes_received: u32,
    pub recv_calls: u32,
    pub trans_received: u32,
    pub elapsed_time: f32,
    pub cpu_util: f32,
    pub serv_dem: f32,
    pub cpu_method: i32,
    pub num_cpus: i32,
    /// Data word 8, not part of the C struct: the response's `so_sndavoid`
    /// converted twice (1 reads as 0x0100_0000).
    pub leftover_so_sndavoid: u32,
}

impl TcpCcResults {
    /// Encode as a stock netserver does: the type word is `TCP_CC_RESPONSE`
    /// byte-swapped (`2d 01 00 00`), because the results reuse the response's
    /// already converted buffer.
    pub fn encode(&self) -> Message {
        let mut m = Message::new(0, self.serv_errno);
        m.set_kind_swapped(kind::TCP_CC_RESPONSE);
        put_words(
            &mut m,
            &[
                self.bytes_received,
                self.recv_calls,
                self.trans_received,
                self.elapsed_time.to_bits(),
                self.cpu_util.to_bits(),
                self.serv_dem.to_bits(),
                self.cpu_method as u32,
                self.num_cpus as u32,
                self.leftover_so_sndavoid,
            ],
        );
        m
    }

    /// Accepts the type word in either byte order (it is not checked).
    pub fn decode(m: &Message) -> Self {
        TcpCcResults {
            serv_errno: m.serv_errno(),
            bytes_received: m.data_u32(0),
            recv_calls: m.data_u32(1),
            trans_received: m.data_u32(2),
            elapsed_time: m.data_f32(3),
            cpu_util: m.data_f32(4),
            serv_dem: m.data_f32(5),
            cpu_method: m.data_i32(6),
            num_cpus: m.data_i32(7),
            leftover_so_sndavoid: m.data_u32(8),
        }
    }

    /// The results a stock netserver would send after `response` before it
    /// writes anything: each field is the response word at the same position
    /// converted twice (byte-reversed). Overwrite the fields it writes (see
    /// the struct doc) to get its exact bytes; the leftovers are
    /// `recv_calls` = no_delay, `cpu_util` = send_buf_size, `serv_dem` =
    /// data_port_number, `cpu_method` = cpu_rate's bits,
    /// `leftover_so_sndavoid` = so_sndavoid.
    pub fn left_over_from(response: &TcpCcResponse) -> Self {
        Self::decode(&converted_again(&response.encode()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::message::MESSAGE_LEN;

    /// A captured message: the words given, zeros after (as captured).
    fn captured(words: &[u32]) -> Message {
        let mut m = Message::default();
        for (index, word) in words.iter().enumerate() {
            m.set_word(index, *word);
        }
        m
    }

    // Real control messages between stock netperf and netserver 2.7.1 on
    // x86_64 Linux over loopback (strace of netperf); all later bytes are 0.

    // netperf -t TCP_SENDFILE -l 1 -c -C -- -s 65536 -S 87380 -m 8192 -D
    const SENDFILE_CPU_REQUEST: &[u32] = &[
        0x0000000a, 0xffffffff, 0x00015554, 0x00015554, 0x00000000, 0x00000008, 0x00000000,
        0x00000001, 0x00000001, 0x00000000, 0x00000001, 0x00000000, 0x00000000, 0x00000000,
        0x00000000, 0x00000000, 0x00000004,
    ];
    const SENDFILE_CPU_RESPONSE: &[u32] = &[
        0x0000000b, 0x00000000, 0x0002aaa8, 0x0002aaa8, 0x00000001, 0x00000001, 0x00000000,
        0x0002aaa8, 0x00009019, 0x42c80000,
    ];
    const SENDFILE_CPU_RESULTS: &[u32] = &[
        0x0b000000, 0x00000000, 0x41bd8380, 0x00000000, 0x0000ead7, 0x3f80095f, 0x42853d92,
        0xa8aa0200, 0x00000008, 0x00000002,
    ];

    // netperf -t TCP_SENDFILE -l 1 -- -V (request omitted)
    const SENDFILE_AVOID_RESPONSE: &[u32] = &[
        0x0000000b, 0x00000000, 0x00020000, 0x00020000, 0x00000000, 0x00000000, 0x00000000,
        0x00004000, 0x0000905b, 0x00000000, 0x00000001, 0x00000001,
    ];
    const SENDFILE_AVOID_RESULTS: &[u32] = &[
        0x0b000000, 0x00000000, 0x41c48500, 0x00000000, 0x00006f83, 0x3f800924, 0x00000000,
        0x00400000, 0x00000000, 0x00000000, 0x01000000, 0x01000000,
    ];

    // netperf -t TCP_CC -l 1 -c -C -- -r 32,64 -D
    const CC_CPU_REQUEST: &[u32] = &[
        0x0000012c, 0xffffffff, 0xffffffff, 0xffffffff, 0x00000008, 0x00000000, 0x00000008,
        0x00000000, 0x00000020, 0x00000040, 0x00000001, 0x00000001, 0x00000000, 0x00000001,
        0x00000000, 0x00000000, 0x00000000, 0x00000004,
    ];
    const CC_CPU_RESPONSE: &[u32] = &[
        0x0000012d, 0x00000000, 0x00020000, 0x00000001, 0x00000001, 0x00000000, 0x00004000,
        0x0000860f, 0x42c80000,
    ];
    const CC_CPU_RESULTS: &[u32] = &[
        0x2d010000, 0x00000000, 0x00042f60, 0x01000000, 0x00000b29, 0x3f800840, 0x41fd5cde,
        0x0f860000, 0x0000c842, 0x00000002,
    ];

    // netperf -t TCP_CC -l -100 -- -V
    const CC_COUNT_REQUEST: &[u32] = &[
        0x0000012c, 0xffffffff, 0xffffffff, 0xffffffff, 0x00000008, 0x00000000, 0x00000008,
        0x00000000, 0x00000001, 0x00000001, 0x00000000, 0x00000000, 0x00000000, 0xffffff9c,
        0x00000001, 0x00000001, 0x00000000, 0x00000004,
    ];
    const CC_COUNT_RESPONSE: &[u32] = &[
        0x0000012d, 0x00000000, 0x00020000, 0x00000000, 0x00000000, 0x00000000, 0x00004000,
        0x0000895f, 0x00000000, 0x00000001, 0x00000001,
    ];
    const CC_COUNT_RESULTS: &[u32] = &[
        0x2d010000, 0x00000000, 0x000000c8, 0x00000000, 0x00000064, 0x3c71d3ed, 0x00400000,
        0x5f890000, 0x00000000, 0x00000000, 0x01000000,
    ];

    fn sendfile_cpu_response() -> TcpStreamResponse {
        TcpStreamResponse {
            serv_errno: 0,
            recv_buf_size: 174760,
            receive_size: 174760,
            no_delay: 1,
            measure_cpu: 1,
            test_length: 0,
            send_buf_size: 174760,
            data_port_number: 36889,
            cpu_rate: 100.0,
            so_rcvavoid: 0,
            so_sndavoid: 0,
        }
    }

    fn cc_cpu_response() -> TcpCcResponse {
        TcpCcResponse {
            serv_errno: 0,
            recv_buf_size: 131072,
            no_delay: 1,
            measure_cpu: 1,
            test_length: 0,
            send_buf_size: 16384,
            data_port_number: 34319,
            cpu_rate: 100.0,
            so_rcvavoid: 0,
            so_sndavoid: 0,
        }
    }

    #[test]
    fn sendfile_request_matches_capture() {
        let expected = TcpStreamRequest {
            cpu_bind: -1,
            send_buf_size: 87380,
            recv_buf_size: 87380,
            receive_size: 0,
            recv_alignment: 8,
            recv_offset: 0,
            no_delay: 1,
            measure_cpu: 1,
            cpu_rate: 0.0,
            test_length: 1,
            so_rcvavoid: 0,
            so_sndavoid: 0,
            dirty_count: 0,
            clean_count: 0,
            port: 0,
            ipfamily: 4,
            recv_aio: 0,
        };
        let wire = captured(SENDFILE_CPU_REQUEST);
        assert_eq!(TcpStreamRequest::decode(&wire), expected);
        assert_eq!(expected.encode(), wire);
        assert_eq!(&wire.bytes[0..8], &[0, 0, 0, 0x0a, 0xff, 0xff, 0xff, 0xff]);
        // ipfamily NF_INET is data word 14.
        assert_eq!(&wire.bytes[64..68], &[0, 0, 0, 4]);
    }

    #[test]
    fn sendfile_response_matches_capture() {
        let wire = captured(SENDFILE_CPU_RESPONSE);
        assert_eq!(TcpStreamResponse::decode(&wire), sendfile_cpu_response());
        assert_eq!(sendfile_cpu_response().encode(), wire);
        // Port 36889 is data word 6; cpu_rate 100.0 is data word 7.
        assert_eq!(&wire.bytes[32..40], &[0, 0, 0x90, 0x19, 0x42, 0xc8, 0, 0]);
    }

    #[test]
    fn sendfile_results_match_capture() {
        let response = sendfile_cpu_response();
        let results = TcpStreamResults {
            bytes_received: 495_157_248.0,
            recv_calls: 60119,
            elapsed_time: f32::from_bits(0x3f80095f),
            cpu_util: f32::from_bits(0x42853d92),
            cpu_method: 8,
            num_cpus: 2,
            ..TcpStreamResults::left_over_from(&response)
        };
        let wire = captured(SENDFILE_CPU_RESULTS);
        assert_eq!(results.encode(), wire);
        assert_eq!(TcpStreamResults::decode(&wire), results);
        assert_eq!(wire.kind(), kind::TCP_STREAM_RESPONSE);
        assert_eq!(&wire.bytes[0..4], &[0x0b, 0, 0, 0]);
        // bytes_received: one big-endian IEEE double.
        assert_eq!(&wire.bytes[8..16], &495_157_248.0f64.to_be_bytes());
        // serv_dem is the response's send_buf_size, byte-reversed.
        assert_eq!(results.serv_dem.to_bits(), 174760u32.swap_bytes());
    }

    #[test]
    fn sendfile_results_keep_copy_avoidance_leftovers() {
        let response = TcpStreamResponse::decode(&captured(SENDFILE_AVOID_RESPONSE));
        assert_eq!((response.so_rcvavoid, response.so_sndavoid), (1, 1));
        let results = TcpStreamResults {
            bytes_received: f64::from_bits(0x41c4_8500_0000_0000),
            recv_calls: 0x6f83,
            elapsed_time: f32::from_bits(0x3f800924),
            cpu_method: 0,
            num_cpus: 0,
            ..TcpStreamResults::left_over_from(&response)
        };
        assert_eq!(results.encode(), captured(SENDFILE_AVOID_RESULTS));
        assert_eq!(
            (results.recv_buf_size, results.send_buf_size),
            (1 << 24, 1 << 24)
        );
        assert_eq!(results.cpu_util, 0.0);
    }

    #[test]
    fn cc_request_matches_capture() {
        let expected = TcpCcRequest {
            cpu_bind: -1,
            recv_buf_size: -1,
            send_buf_size: -1,
            recv_alignment: 8,
            recv_offset: 0,
            send_alignment: 8,
            send_offset: 0,
            request_size: 32,
            response_size: 64,
            no_delay: 1,
            measure_cpu: 1,
            cpu_rate: 0.0,
            test_length: 1,
            so_rcvavoid: 0,
            so_sndavoid: 0,
            port: 0,
            ipfamily: 4,
        };
        let wire = captured(CC_CPU_REQUEST);
        assert_eq!(TcpCcRequest::decode(&wire), expected);
        assert_eq!(expected.encode(), wire);
        assert_eq!(&wire.bytes[0..4], &[0, 0, 0x01, 0x2c]);
    }

    #[test]
    fn cc_count_request_carries_negated_count() {
        let request = TcpCcRequest::decode(&captured(CC_COUNT_REQUEST));
        assert_eq!(request.test_length, -100);
        assert_eq!((request.so_rcvavoid, request.so_sndavoid), (1, 1));
        assert_eq!(request.encode(), captured(CC_COUNT_REQUEST));
    }

    #[test]
    fn cc_response_matches_capture() {
        let wire = captured(CC_CPU_RESPONSE);
        assert_eq!(TcpCcResponse::decode(&wire), cc_cpu_response());
        assert_eq!(cc_cpu_response().encode(), wire);
        assert_eq!(&wire.bytes[0..4], &[0, 0, 0x01, 0x2d]);
        // Port 34319 is data word 5.
        assert_eq!(&wire.bytes[28..32], &[0, 0, 0x86, 0x0f]);
    }

    #[test]
    fn cc_results_match_capture() {
        let response = cc_cpu_response();
        let results = TcpCcResults {
            bytes_received: 2857 * (32 + 64),
            trans_received: 2857,
            elapsed_time: f32::from_bits(0x3f800840),
            cpu_util: f32::from_bits(0x41fd5cde),
            num_cpus: 2,
            ..TcpCcResults::left_over_from(&response)
        };
        let wire = captured(CC_CPU_RESULTS);
        assert_eq!(results.encode(), wire);
        assert_eq!(TcpCcResults::decode(&wire), results);
        assert_eq!(wire.kind(), kind::TCP_CC_RESPONSE);
        assert_eq!(&wire.bytes[0..4], &[0x2d, 0x01, 0, 0]);
        // Leftovers: no_delay 1, port, cpu_rate 100.0, all byte-reversed.
        assert_eq!(results.recv_calls, 0x0100_0000);
        assert_eq!(results.serv_dem.to_bits(), 34319u32.swap_bytes());
        assert_eq!(results.cpu_method as u32, 100.0f32.to_bits().swap_bytes());
    }

    #[test]
    fn cc_results_keep_word_past_the_struct() {
        let response = TcpCcResponse::decode(&captured(CC_COUNT_RESPONSE));
        let results = TcpCcResults {
            bytes_received: 200,
            trans_received: 100,
            elapsed_time: f32::from_bits(0x3c71d3ed),
            num_cpus: 0,
            ..TcpCcResults::left_over_from(&response)
        };
        assert_eq!(results.leftover_so_sndavoid, 0x0100_0000);
        // Not measuring CPU: cpu_util is the response's send_buf_size.
        assert_eq!(results.cpu_util.to_bits(), 16384u32.swap_bytes());
        assert_eq!(results.encode(), captured(CC_COUNT_RESULTS));
    }

    #[test]
    fn round_trips() {
        let request = TcpStreamRequest {
            cpu_bind: 3,
            send_buf_size: 1,
            recv_buf_size: 2,
            receive_size: 3,
            recv_alignment: 4,
            recv_offset: 5,
            no_delay: 6,
            measure_cpu: 7,
            cpu_rate: 8.5,
            test_length: -9,
            so_rcvavoid: 10,
            so_sndavoid: 11,
            dirty_count: 12,
            clean_count: 13,
            port: 14,
            ipfamily: 6,
            recv_aio: 16,
        };
        assert_eq!(TcpStreamRequest::decode(&request.encode()), request);
        let mut response = sendfile_cpu_response();
        response.test_length = -17;
        response.so_sndavoid = 18;
        assert_eq!(TcpStreamResponse::decode(&response.encode()), response);
        let results = TcpStreamResults {
            serv_errno: 104,
            bytes_received: 12_345_678_901.0,
            recv_calls: u32::MAX,
            elapsed_time: 10.25,
            cpu_util: 12.5,
            serv_dem: 0.75,
            cpu_method: 0x53,
            num_cpus: 64,
            recv_buf_size: -1,
            send_buf_size: 212992,
        };
        assert_eq!(TcpStreamResults::decode(&results.encode()), results);

        let request = TcpCcRequest {
            cpu_bind: -1,
            recv_buf_size: 1,
            send_buf_size: 2,
            recv_alignment: 3,
            recv_offset: 4,
            send_alignment: 5,
            send_offset: 6,
            request_size: 7,
            response_size: 8,
            no_delay: 9,
            measure_cpu: 10,
            cpu_rate: 11.5,
            test_length: -12,
            so_rcvavoid: 13,
            so_sndavoid: 14,
            port: 15,
            ipfamily: 4,
        };
        assert_eq!(TcpCcRequest::decode(&request.encode()), request);
        let mut response = cc_cpu_response();
        response.test_length = 30;
        response.so_rcvavoid = 1;
        assert_eq!(TcpCcResponse::decode(&response.encode()), response);
        let results = TcpCcResults {
            serv_errno: 4,
            bytes_received: 1,
            recv_calls: 2,
            trans_received: 3,
            elapsed_time: 4.5,
            cpu_util: 5.5,
            serv_dem: 6.5,
            cpu_method: 7,
            num_cpus: 8,
            leftover_so_sndavoid: 9,
        };
        assert_eq!(TcpCcResults::decode(&results.encode()), results);
    }

    #[test]
    fn leftovers_of_a_plain_response_are_zero_but_the_type() {
        let results = TcpStreamResults::left_over_from(&TcpStreamResponse::default());
        assert_eq!(results, TcpStreamResults::default());
        assert_eq!(
            &results.encode().bytes[0..4],
            &kind::TCP_STREAM_RESPONSE.swap_bytes().to_be_bytes()
        );
    }

    #[test]
    fn any_bytes_decode_without_panic() {
        let noise = Message::from_bytes([0xa5; MESSAGE_LEN]);
        let _ = TcpStreamRequest::decode(&noise);
        let _ = TcpStreamResponse::decode(&noise);
        let _ = TcpStreamResults::decode(&noise);
        let _ = TcpCcRequest::decode(&noise);
        let _ = TcpCcResponse::decode(&noise);
        let _ = TcpCcResults::decode(&noise);
        let _ = TcpCcResults::left_over_from(&TcpCcResponse::decode(&noise));
    }
}
