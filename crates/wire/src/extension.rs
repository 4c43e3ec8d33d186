//! netperf-ng's extension block in the omni request: what our netperf asks
//! of our netserver beyond netperf 2.7.1 (UDP batching, zero-copy sends,
//! busy polling, many flows in one test, open-loop sequence echo, MPTCP, UDP
//! segmentation offload, receives that skip the copy, TCP_INFO per interval,
//! the senders' TCP_NOTSENT_LOWAT). It sits in request bytes a stock netperf leaves zero, after
//! a magic word, so a stock netserver never sees it and a stock netperf never
//! sends it.

use super::message::Message;

/// "NGX1": marks the block and its layout version.
pub const MAGIC: u32 = 0x4e47_5831;
/// Data word where the block starts (byte 400 of the data area; the omni
/// request itself ends at byte 200).
const AT: usize = 100;
const FLAG_ZEROCOPY: u32 = 0x1;
const FLAG_BUSY_POLL: u32 = 0x2;
/// Ask for the netserver's system facts in its results (see `system_facts`).
const FLAG_SYSTEM_FACTS: u32 = 0x4;
/// Number UDP datagrams and count losses (`--seq`) on both ends.
const FLAG_SEQUENCE: u32 = 0x8;
/// Report the netserver's data interface counters over the test.
const FLAG_IF_COUNTERS: u32 = 0x10;
/// Many flows in one test (`--flows`): their count and threads follow.
const FLAG_FLOWS: u32 = 0x20;
/// Echo each UDP request's number in its response (`--rate` over UDP).
const FLAG_ECHO: u32 = 0x40;
/// The data connections are MPTCP (`--mptcp`) on both ends.
const FLAG_MPTCP: u32 = 0x80;
/// UDP sends of several datagrams per call (`--gso N`): the count follows.
const FLAG_GSO: u32 = 0x100;
/// UDP receives of coalesced datagrams (`--gro`).
const FLAG_GRO: u32 = 0x200;
/// TCP stream receives that discard the bytes in the kernel (`--skip-rx-copy`).
const FLAG_SKIP_RX_COPY: u32 = 0x400;
/// The netserver's TCP_INFO over the test and (interval in ms > 0) per
/// interval, sent after its results (`tcp_series`).
const FLAG_TCP_INFO: u32 = 0x800;
/// The TCP_NOTSENT_LOWAT of netserver's data socket (`--notsent-lowat`):
/// the bytes follow. Sent only when the user set it, so that a netserver of
/// ours that predates it still serves every test run with the defaults.
const FLAG_NOTSENT_LOWAT: u32 = 0x1000;
/// Every flag this build knows.
const FLAGS: u32 = FLAG_ZEROCOPY
    | FLAG_BUSY_POLL
    | FLAG_SYSTEM_FACTS
    | FLAG_SEQUENCE
    | FLAG_IF_COUNTERS
    | FLAG_FLOWS
    | FLAG_ECHO
    | FLAG_MPTCP
    | FLAG_GSO
    | FLAG_GRO
    | FLAG_SKIP_RX_COPY
    | FLAG_TCP_INFO
    | FLAG_NOTSENT_LOWAT;
/// Most flows one test may ask for: far beyond a machine's ports, a bound
/// on what a hostile request can make either end allocate.
pub const MAX_FLOWS: u32 = 1_000_000;
/// Most threads a many-flow test may ask each end for.
pub const MAX_FLOW_THREADS: u32 = 1024;
/// Largest batch sendmmsg/recvmmsg take (UIO_MAXIOV).
pub const MAX_MMSG: u32 = 1024;
pub const MAX_BUSY_POLL_USECS: u32 = 1_000_000;
/// Most datagrams one UDP_SEGMENT send may carry (the kernel's
/// UDP_MAX_SEGMENTS in the kernels that first had it; newer ones take more).
pub const MAX_GSO_SEGMENTS: u32 = 64;
/// Longest TCP_INFO interval: an hour, in ms.
pub const MAX_TCP_INFO_MS: u32 = 3_600_000;
/// Largest TCP_NOTSENT_LOWAT asked for: setsockopt takes an int.
pub const MAX_NOTSENT_LOWAT: u32 = i32::MAX as u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extension {
    /// Messages per sendmmsg/recvmmsg call; 0 or 1 = one per call.
    pub mmsg_batch: u32,
    pub zerocopy: bool,
    pub busy_poll_usecs: Option<u32>,
    /// Report the netserver's OS and CPU facts with the results.
    pub system_facts: bool,
    /// Sequence numbers in UDP payloads, counted by each receiver.
    pub sequence: bool,
    /// The netserver counts its data interface's packets over the test.
    pub interface_counters: bool,
    /// Data connections (or UDP flows) of a many-flow test; 0 for one
    /// flow as netperf runs it.
    pub flows: u32,
    /// Threads each end runs the flows on.
    pub flow_threads: u32,
    /// The netserver writes each UDP request's number (its first 8 bytes)
    /// into the first 8 bytes of the response: an open loop (`--rate`)
    /// pairs responses with their requests by it when datagrams are lost.
    pub echo_sequence: bool,
    /// MPTCP data connections (IPPROTO_MPTCP) on both ends.
    pub mptcp: bool,
    /// Datagrams per UDP_SEGMENT send of a UDP stream sender; 0 = off.
    pub gso_segments: u32,
    /// A UDP stream receiver takes coalesced datagrams (UDP_GRO).
    pub gro: bool,
    /// A TCP stream receiver discards its bytes with MSG_TRUNC.
    pub skip_rx_copy: bool,
    /// The netserver sends its data connection's TCP_INFO figures after its
    /// results: over the whole test, and every so many ms when not 0 (-D).
    pub tcp_info_ms: Option<u32>,
    /// TCP_NOTSENT_LOWAT in bytes on netserver's data socket (0: the
    /// kernel's default); None leaves netserver its own default.
    pub notsent_lowat: Option<u32>,
}

impl Extension {
    /// Whether anything differs from plain netperf behaviour.
    pub fn is_used(&self) -> bool {
        *self != Extension::default()
    }

    pub fn encode_into(&self, m: &mut Message) {
        if !self.is_used() {
            return;
        }
        let mut flags = 0;
        if self.zerocopy {
            flags |= FLAG_ZEROCOPY;
        }
        if self.busy_poll_usecs.is_some() {
            flags |= FLAG_BUSY_POLL;
        }
        if self.system_facts {
            flags |= FLAG_SYSTEM_FACTS;
        }
        if self.sequence {
            flags |= FLAG_SEQUENCE;
        }
        if self.interface_counters {
            flags |= FLAG_IF_COUNTERS;
        }
        if self.flows > 0 {
            flags |= FLAG_FLOWS;
        }
        if self.echo_sequence {
            flags |= FLAG_ECHO;
        }
        if self.mptcp {
            flags |= FLAG_MPTCP;
        }
        if self.gso_segments > 0 {
            flags |= FLAG_GSO;
        }
        if self.gro {
            flags |= FLAG_GRO;
        }
        if self.skip_rx_copy {
            flags |= FLAG_SKIP_RX_COPY;
        }
        if self.tcp_info_ms.is_some() {
            flags |= FLAG_TCP_INFO;
        }
        if self.notsent_lowat.is_some() {
            flags |= FLAG_NOTSENT_LOWAT;
        }
        m.set_data_u32(AT, MAGIC);
        m.set_data_u32(AT + 1, flags);
        m.set_data_u32(AT + 2, self.mmsg_batch);
        m.set_data_u32(AT + 3, self.busy_poll_usecs.unwrap_or(0));
        m.set_data_u32(AT + 4, self.flows);
        m.set_data_u32(AT + 5, self.flow_threads);
        m.set_data_u32(AT + 6, self.gso_segments);
        m.set_data_u32(AT + 7, self.tcp_info_ms.unwrap_or(0));
        m.set_data_u32(AT + 8, self.notsent_lowat.unwrap_or(0));
    }

    /// The block of a request, if it carries one; values out of range are an
    /// error text for the refusal.
    pub fn decode(m: &Message) -> Result<Option<Extension>, String> {
        if m.data_u32(AT) != MAGIC {
            return Ok(None);
        }
        let flags = m.data_u32(AT + 1);
        let mmsg_batch = m.data_u32(AT + 2);
        let busy = m.data_u32(AT + 3);
        if flags & !FLAGS != 0 {
            return Err(format!("unknown extension flags {flags:#x}"));
        }
        if mmsg_batch > MAX_MMSG {
            return Err(format!("mmsg batch {mmsg_batch} out of range"));
        }
        if busy > MAX_BUSY_POLL_USECS {
            return Err(format!("busy poll {busy} us out of range"));
        }
        let (flows, flow_threads) = match flags & FLAG_FLOWS != 0 {
            true => (m.data_u32(AT + 4), m.data_u32(AT + 5)),
            false => (0, 0),
        };
        if flags & FLAG_FLOWS != 0 && !(1..=MAX_FLOWS).contains(&flows) {
            return Err(format!("{flows} flows: a test has 1 to {MAX_FLOWS}"));
        }
        if flags & FLAG_FLOWS != 0 && !(1..=MAX_FLOW_THREADS).contains(&flow_threads) {
            return Err(format!(
                "{flow_threads} flow threads: a test has 1 to {MAX_FLOW_THREADS}"
            ));
        }
        let gso_segments = match flags & FLAG_GSO != 0 {
            true => m.data_u32(AT + 6),
            false => 0,
        };
        if flags & FLAG_GSO != 0 && !(1..=MAX_GSO_SEGMENTS).contains(&gso_segments) {
            return Err(format!(
                "gso {gso_segments} segments: a send carries 1 to {MAX_GSO_SEGMENTS}"
            ));
        }
        let tcp_info_ms = (flags & FLAG_TCP_INFO != 0).then(|| m.data_u32(AT + 7));
        if tcp_info_ms.is_some_and(|ms| ms > MAX_TCP_INFO_MS) {
            return Err(format!(
                "TCP_INFO every {} ms: at most every {MAX_TCP_INFO_MS}",
                m.data_u32(AT + 7)
            ));
        }
        let notsent_lowat = (flags & FLAG_NOTSENT_LOWAT != 0).then(|| m.data_u32(AT + 8));
        if let Some(bytes) = notsent_lowat.filter(|b| *b > MAX_NOTSENT_LOWAT) {
            return Err(format!(
                "TCP_NOTSENT_LOWAT {bytes}: at most {MAX_NOTSENT_LOWAT}"
            ));
        }
        Ok(Some(Extension {
            mmsg_batch,
            zerocopy: flags & FLAG_ZEROCOPY != 0,
            busy_poll_usecs: (flags & FLAG_BUSY_POLL != 0).then_some(busy),
            system_facts: flags & FLAG_SYSTEM_FACTS != 0,
            sequence: flags & FLAG_SEQUENCE != 0,
            interface_counters: flags & FLAG_IF_COUNTERS != 0,
            flows,
            flow_threads,
            echo_sequence: flags & FLAG_ECHO != 0,
            mptcp: flags & FLAG_MPTCP != 0,
            gso_segments,
            gro: flags & FLAG_GRO != 0,
            skip_rx_copy: flags & FLAG_SKIP_RX_COPY != 0,
            tcp_info_ms,
            notsent_lowat,
        }))
    }
}

/// Our netserver's word that it read the block: the magic at the same
/// place of its response (a stock netserver never writes there).
pub fn acknowledge(response: &mut Message) {
    response.set_data_u32(AT, MAGIC);
}

/// Whether the netserver that sent `response` read the block.
pub fn acknowledged(response: &Message) -> bool {
    response.data_u32(AT) == MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::omni::OmniRequest;

    #[test]
    fn round_trips_and_stays_out_of_the_omni_fields() {
        let ext = Extension {
            mmsg_batch: 32,
            zerocopy: true,
            busy_poll_usecs: Some(50),
            system_facts: true,
            sequence: true,
            interface_counters: true,
            flows: 10_000,
            flow_threads: 2,
            echo_sequence: true,
            mptcp: true,
            gso_segments: 44,
            gro: true,
            skip_rx_copy: true,
            tcp_info_ms: Some(1000),
            notsent_lowat: Some(256 * 1024),
        };
        let req = OmniRequest {
            fill_file: "x".repeat(31),
            cong_control: "cubic".into(),
            ..Default::default()
        };
        let mut m = req.encode();
        ext.encode_into(&mut m);
        assert_eq!(Extension::decode(&m), Ok(Some(ext)));
        assert_eq!(OmniRequest::decode(&m), req);
    }

    #[test]
    fn absent_in_plain_requests_and_checked_when_present() {
        let m = OmniRequest::default().encode();
        assert_eq!(Extension::decode(&m), Ok(None));
        let mut m = OmniRequest::default().encode();
        Extension {
            mmsg_batch: 4,
            ..Default::default()
        }
        .encode_into(&mut m);
        m.set_data_u32(AT + 2, 5000);
        assert!(Extension::decode(&m).is_err());
        m.set_data_u32(AT + 2, 4);
        m.set_data_u32(AT + 1, 0x8000_0000);
        assert!(Extension::decode(&m).is_err());
        // A GSO segment count no kernel takes, or none at all.
        for segments in [0, MAX_GSO_SEGMENTS + 1, u32::MAX] {
            m.set_data_u32(AT + 1, FLAG_GSO);
            m.set_data_u32(AT + 6, segments);
            assert!(Extension::decode(&m).is_err(), "{segments}");
        }
        m.set_data_u32(AT + 6, 0);
        m.set_data_u32(AT + 1, FLAG_TCP_INFO);
        m.set_data_u32(AT + 7, MAX_TCP_INFO_MS + 1);
        assert!(Extension::decode(&m).is_err());
        m.set_data_u32(AT + 7, 0);
        assert_eq!(Extension::decode(&m).unwrap().unwrap().tcp_info_ms, Some(0));
        // TCP_NOTSENT_LOWAT: 0 is the kernel's default, past an int refused.
        m.set_data_u32(AT + 1, FLAG_NOTSENT_LOWAT);
        m.set_data_u32(AT + 8, MAX_NOTSENT_LOWAT + 1);
        assert!(Extension::decode(&m).is_err());
        m.set_data_u32(AT + 8, 0);
        assert_eq!(
            Extension::decode(&m).unwrap().unwrap().notsent_lowat,
            Some(0)
        );
        m.set_data_u32(AT + 1, 0);
        assert_eq!(Extension::decode(&m).unwrap().unwrap().notsent_lowat, None);
        // Absurd flow and thread counts from a hostile client.
        for (flows, threads) in [
            (0, 1),
            (MAX_FLOWS + 1, 1),
            (5, 0),
            (5, MAX_FLOW_THREADS + 1),
        ] {
            m.set_data_u32(AT + 1, FLAG_FLOWS);
            m.set_data_u32(AT + 2, 0);
            m.set_data_u32(AT + 4, flows);
            m.set_data_u32(AT + 5, threads);
            assert!(Extension::decode(&m).is_err(), "{flows} {threads}");
        }
    }
}
