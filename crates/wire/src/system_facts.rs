//! netperf-ng's blocks in the omni results: the netserver's operating system
//! and CPU facts (netperf 2.7.1 prints "Deprecated" for the remote ones). Our
//! netserver adds it when our netperf asks (extension flag); it sits after a
//! magic word in results bytes a stock netserver leaves unused, so a stock
//! netperf never reads it and a stock netserver never sends it.

use super::message::Message;

/// "NGR1": marks the block and its layout version.
const MAGIC: u32 = 0x4e47_5231;
/// Data word where the block starts (byte 300 of the data area; the results'
/// own fields end at byte 284, the request extension starts at 400 and is
/// not echoed into results).
const AT: usize = 75;

/// Fields after the magic and the CPU frequency word: (byte length) in order
/// sysname, machine, release, version, system model, CPU model. The block
/// ends at data byte 300 + 8 + 284 = 592.
const TEXT_FIELDS: [usize; 6] = [16, 16, 48, 76, 64, 64];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemFacts {
    pub sysname: String,
    pub machine: String,
    pub release: String,
    pub version: String,
    pub model: String,
    pub cpu_model: String,
    pub cpu_mhz: i32,
    /// Online CPUs; 0 from a netserver that predates the word.
    pub cpu_count: u32,
}

/// The CPU count's word: the one free word between the interface counters
/// (148..157) and the datagram counts (158..162), data bytes 628..632.
const CPU_COUNT_AT: usize = 157;

impl SystemFacts {
    fn texts(&self) -> [&String; 6] {
        [
            &self.sysname,
            &self.machine,
            &self.release,
            &self.version,
            &self.model,
            &self.cpu_model,
        ]
    }

    /// Add the block to an encoded results message.
    pub fn encode_into(&self, m: &mut Message) {
        m.set_data_u32(AT, MAGIC);
        m.set_data_u32(AT + 1, self.cpu_mhz as u32);
        m.set_data_u32(CPU_COUNT_AT, self.cpu_count);
        let mut at = (AT + 2) * 4;
        for (len, text) in TEXT_FIELDS.iter().zip(self.texts()) {
            m.set_data_str(at, *len, text);
            at += len;
        }
    }

    /// The block of a results message, if it carries one. Strings are
    /// bounded and terminated by `data_str`.
    pub fn decode(m: &Message) -> Option<SystemFacts> {
        if m.data_u32(AT) != MAGIC {
            return None;
        }
        let mut texts = Vec::with_capacity(TEXT_FIELDS.len());
        let mut at = (AT + 2) * 4;
        for len in TEXT_FIELDS {
            texts.push(m.data_str(at, len));
            at += len;
        }
        let mut texts = texts.into_iter();
        let mut next = || texts.next().unwrap_or_default();
        Some(SystemFacts {
            sysname: next(),
            machine: next(),
            release: next(),
            version: next(),
            model: next(),
            cpu_model: next(),
            cpu_mhz: m.data_u32(AT + 1) as i32,
            cpu_count: m.data_u32(CPU_COUNT_AT),
        })
    }
}

/// "NGI1": the netserver's interface counters over its data phase (packets
/// and bytes each way, 64 bits each), data bytes 592..628.
const INTERFACE_MAGIC: u32 = 0x4e47_4931;
const INTERFACE_AT: usize = 148;

/// Interface counters over a test: (tx packets, rx packets, tx bytes, rx bytes).
pub type InterfaceDelta = [u64; 4];

pub fn encode_interface(m: &mut Message, delta: &InterfaceDelta) {
    m.set_data_u32(INTERFACE_AT, INTERFACE_MAGIC);
    for (i, v) in delta.iter().enumerate() {
        m.set_data_u32(INTERFACE_AT + 1 + 2 * i, (v >> 32) as u32);
        m.set_data_u32(INTERFACE_AT + 2 + 2 * i, *v as u32);
    }
}

pub fn decode_interface(m: &Message) -> Option<InterfaceDelta> {
    (m.data_u32(INTERFACE_AT) == INTERFACE_MAGIC).then(|| {
        let word = |i: usize| {
            u64::from(m.data_u32(INTERFACE_AT + 1 + 2 * i)) << 32
                | u64::from(m.data_u32(INTERFACE_AT + 2 + 2 * i))
        };
        [word(0), word(1), word(2), word(3)]
    })
}

/// What a datagram receiver saw (netperf-ng `--seq`): counted by
/// `engine::sequence`, carried in results by the block below.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatagramCounts {
    /// Sequence numbers never received below the highest one seen.
    pub lost: u64,
    pub duplicated: u64,
    /// Arrived after a later-numbered datagram.
    pub out_of_order: u64,
    /// One more than the highest sequence number seen (0: none seen).
    pub next_expected: u64,
}

impl DatagramCounts {
    /// Losses including the tail a receiver cannot see: datagrams the sender
    /// numbered after the last one that arrived.
    pub fn with_sender_total(mut self, sent: u64) -> DatagramCounts {
        self.lost += sent.saturating_sub(self.next_expected);
        self
    }
}

/// "NGD1": the netserver's datagram accounting (`--seq`), in the last four
/// words of the data area, after the system facts block.
const DATAGRAM_MAGIC: u32 = 0x4e47_4431;
const DATAGRAM_AT: usize = 158;

/// Add the receiver's datagram counts (saturated to 32 bits) to results.
pub fn encode_datagrams(m: &mut Message, c: &DatagramCounts) {
    let word = |v: u64| v.min(u64::from(u32::MAX)) as u32;
    m.set_data_u32(DATAGRAM_AT, DATAGRAM_MAGIC);
    m.set_data_u32(DATAGRAM_AT + 1, word(c.lost));
    m.set_data_u32(DATAGRAM_AT + 2, word(c.duplicated));
    m.set_data_u32(DATAGRAM_AT + 3, word(c.out_of_order));
}

/// The netserver's datagram counts, if its results carry them. The highest
/// sequence number is not sent: losses at the tail are the sender's to add.
pub fn decode_datagrams(m: &Message) -> Option<DatagramCounts> {
    (m.data_u32(DATAGRAM_AT) == DATAGRAM_MAGIC).then(|| DatagramCounts {
        lost: u64::from(m.data_u32(DATAGRAM_AT + 1)),
        duplicated: u64::from(m.data_u32(DATAGRAM_AT + 2)),
        out_of_order: u64::from(m.data_u32(DATAGRAM_AT + 3)),
        next_expected: 0,
    })
}

/// "NGM1": the netserver's MPTCP subflows (`--mptcp`), in the words the
/// datagram block uses: MPTCP is a stream, `--seq` datagrams, so a test
/// never carries both.
const MPTCP_MAGIC: u32 = 0x4e47_4d31;

/// Add how many subflows the netserver's data connection had to results.
pub fn encode_mptcp_subflows(m: &mut Message, subflows: u32) {
    m.set_data_u32(DATAGRAM_AT, MPTCP_MAGIC);
    m.set_data_u32(DATAGRAM_AT + 1, subflows);
}

/// The netserver's MPTCP subflows, if its results carry them.
pub fn decode_mptcp_subflows(m: &Message) -> Option<u32> {
    (m.data_u32(DATAGRAM_AT) == MPTCP_MAGIC).then(|| m.data_u32(DATAGRAM_AT + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::omni::OmniResults;

    #[test]
    fn round_trips_beside_the_results() {
        let results = OmniResults {
            cong_control: "cubic".into(),
            ifname: "eth0".into(),
            bytes_sent: 1 << 40,
            ..Default::default()
        };
        let facts = SystemFacts {
            sysname: "Linux".into(),
            machine: "x86_64".into(),
            release: "6.1.0".into(),
            version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0".into(),
            model: "Standard PC".into(),
            cpu_model: "Intel(R) Xeon(R) Processor".into(),
            cpu_mhz: 2000,
            cpu_count: 96,
        };
        let mut m = results.encode();
        facts.encode_into(&mut m);
        assert_eq!(SystemFacts::decode(&m), Some(facts));
        assert_eq!(OmniResults::decode(&m), results);
        assert_eq!(SystemFacts::decode(&results.encode()), None);
        let counts = DatagramCounts {
            lost: 3,
            duplicated: 2,
            out_of_order: 1,
            next_expected: 0,
        };
        encode_datagrams(&mut m, &counts);
        assert_eq!(decode_datagrams(&m), Some(counts));
        assert_eq!(decode_mptcp_subflows(&m), None);
        assert_eq!(decode_interface(&m), None);
        let delta = [1, 2, 3 << 40, 4];
        encode_interface(&mut m, &delta);
        assert_eq!(decode_interface(&m), Some(delta));
        assert_eq!(decode_datagrams(&m), Some(counts));
        assert_eq!(SystemFacts::decode(&m).unwrap().cpu_mhz, 2000);
        assert_eq!(SystemFacts::decode(&m).unwrap().cpu_count, 96);
        assert_eq!(OmniResults::decode(&m), results);
        // A stream's subflows in the datagram block's words.
        let mut m = results.encode();
        encode_mptcp_subflows(&mut m, 2);
        assert_eq!(decode_mptcp_subflows(&m), Some(2));
        assert_eq!(decode_datagrams(&m), None);
        assert_eq!(OmniResults::decode(&m), results);
    }

    #[test]
    fn long_texts_are_cut_not_overflowed() {
        let facts = SystemFacts {
            version: "v".repeat(500),
            ..Default::default()
        };
        let mut m = OmniResults::default().encode();
        facts.encode_into(&mut m);
        let back = SystemFacts::decode(&m).unwrap();
        assert!(back.version.len() < 76);
    }
}
