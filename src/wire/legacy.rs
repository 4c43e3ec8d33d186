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
#[path = "legacy_tests.rs"]
mod tests;
