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
//!    [`TcpStreamResults`]. Its own timer of `test_length + PAD_TIME` is
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
//!    when its timer of `test_length + PAD_TIME` interrupts `accept`
//!    (it then subtracts `PAD_TIME` from its elapsed time). It never
//!    closes the listen socket. Then it sends [`TcpCcResults`].
//!
//! netperf reads from the response: `serv_errno`, `recv_buf_size`,
//! `send_buf_size`, `no_delay`, `measure_cpu`, `cpu_rate`,
//! `data_port_number`; not `test_length`, `so_rcvavoid`, `so_sndavoid`. From
//! the results only `serv_errno`, and `cpu_util` and `num_cpus` if the
//! response's `measure_cpu` was set: the rate comes from its own count.

use super::layout::layout;
use super::message::{kind, Message, MESSAGE_WORDS};

/// The buffer as a stock netserver holds it after sending `sent`: every word
/// already in network order, so sending it again reverses each word's bytes.
fn converted_again(sent: &Message) -> Message {
    let mut again = Message::default();
    for index in 0..MESSAGE_WORDS {
        again.set_word(index, sent.word(index).swap_bytes());
    }
    again
}

layout! {
    /// `tcp_stream_request_struct`, as `sendfile_tcp_stream` fills it.
    TcpStreamRequest { kind: kind::DO_TCP_STREAM, swapped: false, header: cpu_bind }
    send_buf_size: i32,
    recv_buf_size: i32,
    receive_size: i32,
    recv_alignment: i32,
    recv_offset: i32,
    no_delay: i32,
    measure_cpu: i32,
    cpu_rate: f32,
    /// Seconds, or for a byte-count test the byte count (positive).
    test_length: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
    /// Left 0: stock netperf is built without DIRTY.
    dirty_count: i32,
    clean_count: i32,
    port: i32,
    /// netperf's family number (NF_INET 4, NF_INET6 6).
    ipfamily: i32,
    recv_aio: i32,
}

layout! {
    /// `tcp_stream_response_struct`. A stock netserver never writes
    /// `test_length` (0 on a fresh connection).
    TcpStreamResponse { kind: kind::TCP_STREAM_RESPONSE, swapped: false, header: serv_errno }
    recv_buf_size: i32,
    receive_size: i32,
    no_delay: i32,
    measure_cpu: i32,
    test_length: i32,
    send_buf_size: i32,
    data_port_number: i32,
    cpu_rate: f32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
}

layout! {
    /// `tcp_stream_results_struct`, typed as the response byte-swapped
    /// (`0b 00 00 00`) because it reuses the response's converted buffer. A
    /// stock netserver writes `bytes_received`, `recv_calls`,
    /// `elapsed_time`, `cpu_method`, `num_cpus`, and `cpu_util` only when
    /// measuring CPU; everything else (`serv_errno` included) is the
    /// response converted twice: see [`Self::left_over_from`].
    TcpStreamResults { kind: kind::TCP_STREAM_RESPONSE, swapped: true, header: serv_errno }
    /// Two words: a `double` sent through `htond`.
    bytes_received: f64,
    recv_calls: u32,
    elapsed_time: f32,
    cpu_util: f32,
    serv_dem: f32,
    cpu_method: i32,
    num_cpus: i32,
    recv_buf_size: i32,
    send_buf_size: i32,
}

impl TcpStreamResults {
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

layout! {
    /// `tcp_cc_request_struct`, as `send_tcp_cc` fills it.
    TcpCcRequest { kind: kind::DO_TCP_CC, swapped: false, header: cpu_bind }
    recv_buf_size: i32,
    send_buf_size: i32,
    recv_alignment: i32,
    recv_offset: i32,
    send_alignment: i32,
    send_offset: i32,
    request_size: i32,
    response_size: i32,
    no_delay: i32,
    measure_cpu: i32,
    cpu_rate: f32,
    /// > 0 seconds, <= 0 a negated transaction count.
    test_length: i32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
    port: i32,
    /// netperf's family number (NF_INET 4, NF_INET6 6).
    ipfamily: i32,
}

layout! {
    /// `tcp_cc_response_struct`. A stock netserver never writes
    /// `test_length`, and writes `measure_cpu` only as 1 when asked to
    /// measure (else 0 on a fresh connection).
    TcpCcResponse { kind: kind::TCP_CC_RESPONSE, swapped: false, header: serv_errno }
    recv_buf_size: i32,
    no_delay: i32,
    measure_cpu: i32,
    test_length: i32,
    send_buf_size: i32,
    data_port_number: i32,
    cpu_rate: f32,
    so_rcvavoid: i32,
    so_sndavoid: i32,
}

layout! {
    /// `tcp_cc_results_struct`, plus the one data word just past it that the
    /// response (one word longer) leaves behind; typed as the response
    /// byte-swapped (`2d 01 00 00`). A stock netserver writes
    /// `bytes_received` (transactions × (request_size + response_size),
    /// wrapping), `trans_received`, `elapsed_time`, `num_cpus`, and
    /// `cpu_util` only when measuring CPU; everything else (`serv_errno`
    /// included) is the response converted twice: see
    /// [`Self::left_over_from`].
    TcpCcResults { kind: kind::TCP_CC_RESPONSE, swapped: true, header: serv_errno }
    bytes_received: u32,
    recv_calls: u32,
    trans_received: u32,
    elapsed_time: f32,
    cpu_util: f32,
    serv_dem: f32,
    cpu_method: i32,
    num_cpus: i32,
    /// Data word 8, not part of the C struct: the response's `so_sndavoid`
    /// converted twice (1 reads as 0x0100_0000).
    leftover_so_sndavoid: u32,
}

impl TcpCcResults {
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
