//! What netagg runs: the test kinds of the seed's runemomniaggdemo.sh and
//! the ramp of stream counts (1, 2, 4, ... up to twice the CPUs of the
//! system under test, the last level exactly that).

/// One kind of aggregate test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// TCP_STREAM from the SUT to the load generators.
    Outbound,
    /// TCP_MAERTS: the load generators send to the SUT.
    Inbound,
    /// Large-burst TCP_RR: traffic both ways.
    Bidirectional,
    /// 1-byte burst UDP_RR: the packets-per-second test.
    Tps,
    /// 1-byte TCP_RR to each load generator in turn.
    Sync,
}

/// How each kind maps onto a netperf test (netperf's own argv words, so
/// the same table also writes the stock-compatible .out files' commands).
#[derive(Debug)]
pub struct KindSpec {
    pub kind: Kind,
    pub name: &'static str,
    pub test: &'static str,
    pub test_options: &'static [&'static str],
    pub default_burst: u32,
    pub units: &'static str,
    /// Whether its streams recover from a lost datagram with netperf's
    /// `-- -e` (only UDP_RR has datagrams to lose; runemomniaggdemo.sh uses
    /// `-e 1` for its tps streams alone).
    pub recovers_loss: bool,
    /// TCP bulk: a shared test's flows each get a thread, as netperf's
    /// `--flows` gives them by default (issue 39: on 2 CPUs more bytes
    /// than the same flows on one epoll thread per CPU).
    pub thread_per_stream: bool,
}

pub const KINDS: &[KindSpec] = &[
    KindSpec {
        kind: Kind::Outbound,
        name: "outbound",
        test: "TCP_STREAM",
        // A bulk stream's send size: netperf's many-flow default
        // (BULK_MESSAGE), also for a level's single streams and stock
        // netservers; runemomniaggdemo.sh sends 64K.
        test_options: &["-m", "128K"],
        default_burst: 0,
        units: "10^6bits/s",
        recovers_loss: false,
        thread_per_stream: true,
    },
    KindSpec {
        kind: Kind::Inbound,
        name: "inbound",
        test: "TCP_MAERTS",
        // The netserver's sends, as outbound's.
        test_options: &["-m", ",128K"],
        default_burst: 0,
        units: "10^6bits/s",
        recovers_loss: false,
        thread_per_stream: true,
    },
    KindSpec {
        kind: Kind::Bidirectional,
        name: "bidirectional",
        test: "TCP_RR",
        test_options: &["-r", "64K"],
        default_burst: 12,
        units: "Trans/s",
        recovers_loss: false,
        thread_per_stream: false,
    },
    KindSpec {
        kind: Kind::Tps,
        name: "tps",
        test: "UDP_RR",
        test_options: &["-r", "1"],
        default_burst: 0,
        units: "Trans/s",
        recovers_loss: true,
        thread_per_stream: false,
    },
    KindSpec {
        kind: Kind::Sync,
        name: "sync",
        test: "TCP_RR",
        test_options: &["-r", "1"],
        default_burst: 0,
        units: "Trans/s",
        recovers_loss: false,
        thread_per_stream: false,
    },
];

pub fn spec_of(kind: Kind) -> &'static KindSpec {
    KINDS
        .iter()
        .find(|k| k.kind == kind)
        .expect("every kind has a row")
}

/// Stream counts of the ramp: doubling from 1 to `max`, ending at `max`.
pub fn ramp(max: u32) -> Vec<u32> {
    let max = max.max(1);
    let mut levels = Vec::new();
    let mut n = 1;
    while n < max {
        levels.push(n);
        n = n.saturating_mul(2);
    }
    levels.push(max);
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramps_double_and_end_at_the_maximum() {
        assert_eq!(ramp(4), [1, 2, 4]);
        assert_eq!(ramp(6), [1, 2, 4, 6]);
        assert_eq!(ramp(1), [1]);
        assert_eq!(ramp(0), [1]);
        assert_eq!(spec_of(Kind::Tps).test, "UDP_RR");
        let recovering: Vec<&str> = KINDS
            .iter()
            .filter(|k| k.recovers_loss)
            .map(|k| k.test)
            .collect();
        assert_eq!(recovering, ["UDP_RR"], "-e is for datagrams only");
        // Bulk streams send netperf's many-flow message, whether a level's
        // streams share a test (--flows) or not.
        assert_eq!(netperf_data::engine::flows::BULK_MESSAGE, 128 * 1024);
        assert_eq!(spec_of(Kind::Outbound).test_options, ["-m", "128K"]);
        assert_eq!(spec_of(Kind::Inbound).test_options, ["-m", ",128K"]);
    }
}
