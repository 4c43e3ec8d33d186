//! The factors an experiment can vary, as one table: each factor's name in
//! the plan, what its levels may be, and the netperf options (or the
//! offload switch, or the stream count) a level turns into.

use netperf_client::cli::sizespec::parse_size;

/// What a factor's level changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactorKind {
    /// A classic test name, run as the omni test it migrates to.
    Test,
    /// omni `-d`: send, recv or rr.
    Direction,
    /// omni `-T`: tcp or udp.
    Protocol,
    /// `-m` for stream tests, `-r N,N` for request/response tests.
    MessageSize,
    /// `-G`: TCP_MAXSEG.
    Mss,
    /// `-s N,N -S N,N`: both ends' send and receive buffers.
    SocketBuffer,
    /// `-b`: transactions in flight (request/response tests).
    Burst,
    /// `-q`: SO_MAX_PACING_RATE in bytes per second.
    PacingRate,
    /// Concurrent netperf streams in one run.
    Streams,
    /// The plan's `offload_set` all on or all off.
    Offloads,
    /// One stateless offload (tso, gso, gro, lro) on or off.
    Offload,
    /// Where the run goes: a label of the plan's `[targets]` table (or an
    /// address), e.g. the scenarios of `netagg matrix`.
    Target,
    /// A netperf-ng extension switched on or off: `on` adds the option.
    Switch(&'static str),
    /// A netperf-ng extension with a count: the option and the level as
    /// its value, 0 leaving it out.
    Count(&'static str),
}

/// What a level may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LevelRule {
    /// One of these words (compared case-insensitively; kept as listed).
    OneOf(&'static [&'static str]),
    /// A size as netperf reads it (1024, 64K, 1M), within the bounds.
    Size(u64, u64),
    /// A plain integer within the bounds.
    Integer(u64, u64),
    /// A classic test name, optionally `*N` for N concurrent streams
    /// (`TCP_RR*4`: the aggregate of four).
    TestName,
    /// A label: printable text of at most `MAX_LABEL` characters.
    Label,
}

/// Longest target label.
pub const MAX_LABEL: usize = 80;
/// Most streams a `*N` test level may ask for (as the streams factor).
const MAX_STREAMS: u64 = 256;

/// The classic tests the `test` factor knows, with their omni direction
/// and protocol.
pub const TESTS: &[(&str, &str, &str)] = &[
    ("TCP_STREAM", "send", "tcp"),
    ("TCP_MAERTS", "recv", "tcp"),
    ("TCP_RR", "rr", "tcp"),
    ("UDP_STREAM", "send", "udp"),
    ("UDP_RR", "rr", "udp"),
];

const ON_OFF: &[&str] = &["on", "off"];
const DIRECTIONS: &[&str] = &["send", "recv", "rr"];
const PROTOCOLS: &[&str] = &["tcp", "udp"];
const TEST_NAMES: &[&str] = &["TCP_STREAM", "TCP_MAERTS", "TCP_RR", "UDP_STREAM", "UDP_RR"];

/// Stateless offloads a factor can name: the ethtool -K names.
pub const OFFLOAD_NAMES: &[&str] = &["tso", "gso", "gro", "lro"];

/// (name, kind, rule, description) of every factor.
const FACTORS: &[(&str, FactorKind, LevelRule, &str)] = &[
    (
        "test",
        FactorKind::Test,
        LevelRule::TestName,
        "classic test, run as omni",
    ),
    (
        "direction",
        FactorKind::Direction,
        LevelRule::OneOf(DIRECTIONS),
        "omni -d",
    ),
    (
        "protocol",
        FactorKind::Protocol,
        LevelRule::OneOf(PROTOCOLS),
        "omni -T",
    ),
    (
        "message_size",
        FactorKind::MessageSize,
        LevelRule::Size(1, 1 << 30),
        "-m, or -r N,N for rr",
    ),
    (
        "mss",
        FactorKind::Mss,
        LevelRule::Integer(88, 65_535),
        "-G (TCP_MAXSEG)",
    ),
    (
        "socket_buffer",
        FactorKind::SocketBuffer,
        LevelRule::Size(1, 1 << 31),
        "-s N,N -S N,N",
    ),
    (
        "burst",
        FactorKind::Burst,
        LevelRule::Integer(0, 1_000_000),
        "-b (rr tests)",
    ),
    (
        "pacing_rate",
        FactorKind::PacingRate,
        LevelRule::Size(1, u32::MAX as u64),
        "-q bytes/s",
    ),
    (
        "streams",
        FactorKind::Streams,
        LevelRule::Integer(1, MAX_STREAMS),
        "concurrent netperfs",
    ),
    (
        "offloads",
        FactorKind::Offloads,
        LevelRule::OneOf(ON_OFF),
        "offload_set on/off",
    ),
    (
        "tso",
        FactorKind::Offload,
        LevelRule::OneOf(ON_OFF),
        "ethtool -K tso",
    ),
    (
        "gso",
        FactorKind::Offload,
        LevelRule::OneOf(ON_OFF),
        "ethtool -K gso",
    ),
    (
        "gro",
        FactorKind::Offload,
        LevelRule::OneOf(ON_OFF),
        "ethtool -K gro",
    ),
    (
        "lro",
        FactorKind::Offload,
        LevelRule::OneOf(ON_OFF),
        "ethtool -K lro",
    ),
    (
        "target",
        FactorKind::Target,
        LevelRule::Label,
        "a [targets] label or host[:port]",
    ),
    (
        "mptcp",
        FactorKind::Switch("--mptcp"),
        LevelRule::OneOf(ON_OFF),
        "--mptcp (tcp cells; needs our netserver)",
    ),
    // `gso` and `gro` name the interfaces' ethtool offloads above; the
    // socket-level UDP ones are `udp_gso` and `udp_gro`.
    (
        "udp_gso",
        FactorKind::Count("--gso"),
        LevelRule::Integer(0, netperf_wire::extension::MAX_GSO_SEGMENTS as u64),
        "--gso N (UDP stream cells; 0 = off)",
    ),
    (
        "udp_gro",
        FactorKind::Switch("--gro"),
        LevelRule::OneOf(ON_OFF),
        "--gro (UDP stream cells)",
    ),
    (
        "skip_rx_copy",
        FactorKind::Switch("--skip-rx-copy"),
        LevelRule::OneOf(ON_OFF),
        "--skip-rx-copy (TCP stream cells)",
    ),
];

/// The factor names, for error messages and help.
pub fn factor_names() -> String {
    FACTORS
        .iter()
        .map(|(name, ..)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per factor for `--help`.
pub fn factor_help() -> String {
    let mut text = String::from("Factors (the plan's [factors] table, or --factor NAME=L1,L2):\n");
    text += &FACTORS
        .iter()
        .map(|(name, _, rule, what)| format!("  {name:<14} {:<48} {what}\n", rule_text(rule)))
        .collect::<String>();
    text
}

fn rule_text(rule: &LevelRule) -> String {
    match rule {
        LevelRule::OneOf(words) => words.join("|"),
        LevelRule::Size(lo, hi) => format!("size {lo}..{hi} (64K = 65536)"),
        LevelRule::Integer(lo, hi) => format!("integer {lo}..{hi}"),
        LevelRule::TestName => format!("{}, or NAME*N for N streams", TEST_NAMES.join("|")),
        LevelRule::Label => format!("text of up to {MAX_LABEL} characters"),
    }
}

/// The kind of the factor `name`, or an error naming the known factors.
pub fn kind_of(name: &str) -> Result<FactorKind, String> {
    entry(name).map(|&(_, kind, ..)| kind)
}

/// The table's row of factor `name`, or an error naming the known factors.
fn entry(
    name: &str,
) -> Result<&'static (&'static str, FactorKind, LevelRule, &'static str), String> {
    FACTORS.iter().find(|(n, ..)| *n == name).ok_or_else(|| {
        format!(
            "unknown factor \"{name}\": the factors are {}",
            factor_names()
        )
    })
}

/// The level as it will be recorded (words normalised to the table's
/// spelling), or why it is not a level of `factor`.
pub fn check_level(factor: &str, level: &str) -> Result<String, String> {
    let &(_, _, rule, _) = entry(factor)?;
    let bad = |why: String| format!("factor {factor}: level \"{level}\" {why}");
    match rule {
        LevelRule::OneOf(words) => words
            .iter()
            .find(|w| w.eq_ignore_ascii_case(level.trim()))
            .map(|w| w.to_string())
            .ok_or_else(|| bad(format!("is not one of {}", words.join(", ")))),
        LevelRule::Size(lo, hi) => match parse_size(level.trim()) {
            Ok(v) if (lo..=hi).contains(&v) => Ok(level.trim().to_string()),
            Ok(v) => Err(bad(format!("is {v}, outside {lo}..{hi}"))),
            Err(_) => Err(bad("is not a size (e.g. 1024, 64K)".into())),
        },
        LevelRule::Integer(lo, hi) => match level.trim().parse::<u64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(v.to_string()),
            Ok(v) => Err(bad(format!("is {v}, outside {lo}..{hi}"))),
            Err(_) => Err(bad("is not a whole number".into())),
        },
        LevelRule::TestName => check_test_level(level).map_err(bad),
        LevelRule::Label => {
            let label = level.trim();
            if label.chars().count() > MAX_LABEL {
                Err(bad(format!("is longer than {MAX_LABEL} characters")))
            } else if label.chars().any(char::is_control) {
                Err(bad("has control characters".into()))
            } else {
                Ok(label.to_string())
            }
        }
    }
}

/// A test level: a known test name, then optionally `*N` streams.
fn check_test_level(level: &str) -> Result<String, String> {
    let (name, streams) = match level.trim().split_once('*') {
        Some((name, n)) => (name.trim(), Some(n.trim())),
        None => (level.trim(), None),
    };
    let name = TEST_NAMES
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            format!(
                "is not one of {} (optionally *N for N streams)",
                TEST_NAMES.join(", ")
            )
        })?;
    match streams {
        None => Ok(name.to_string()),
        Some(n) => match n.parse::<u64>() {
            Ok(n) if (1..=MAX_STREAMS).contains(&n) => Ok(format!("{name}*{n}")),
            _ => Err(format!("asks for {n} streams: give 1..{MAX_STREAMS}")),
        },
    }
}

/// The streams a test level asks for: N of `NAME*N`, else 1.
pub fn test_streams(level: &str) -> u64 {
    level
        .split_once('*')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(1)
}

/// The size a size level stands for (levels were checked already).
pub fn size_of(level: &str) -> u64 {
    parse_size(level).unwrap_or(0)
}

/// Omni direction and protocol of a classic test name (or a `NAME*N`
/// test level).
pub fn test_shape(test: &str) -> Option<(&'static str, &'static str)> {
    let name = test.split_once('*').map_or(test, |(name, _)| name);
    TESTS
        .iter()
        .find(|(t, ..)| t.eq_ignore_ascii_case(name))
        .map(|&(_, d, p)| (d, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_checked_and_normalised() {
        assert_eq!(check_level("protocol", "TCP").unwrap(), "tcp");
        assert_eq!(check_level("test", "udp_rr").unwrap(), "UDP_RR");
        assert_eq!(check_level("message_size", "64K").unwrap(), "64K");
        assert_eq!(size_of("64K"), 65_536);
        assert_eq!(check_level("streams", "04").unwrap(), "4");
        assert_eq!(check_level("test", "tcp_rr * 4").unwrap(), "TCP_RR*4");
        assert_eq!(test_streams("TCP_RR*4"), 4);
        assert_eq!(test_streams("TCP_RR"), 1);
        assert_eq!(test_shape("UDP_RR*2"), Some(("rr", "udp")));
        assert_eq!(
            check_level("target", " same node, pod IP ").unwrap(),
            "same node, pod IP"
        );
        for (factor, level) in [
            ("protocol", "sctp"),
            ("message_size", "0"),
            ("message_size", "lots"),
            ("mss", "20"),
            ("streams", "-1"),
            ("offloads", "maybe"),
            ("test", "TCP_RR*0"),
            ("test", "TCP_RR*many"),
            ("test", "SCTP_RR*2"),
            ("target", "bell\u{7}"),
        ] {
            let e = check_level(factor, level).unwrap_err();
            assert!(e.contains(factor) && e.contains(level), "{e}");
        }
    }

    #[test]
    fn unknown_factors_name_the_known_ones() {
        let e = kind_of("colour").unwrap_err();
        assert!(
            e.contains("unknown factor \"colour\"") && e.contains("message_size"),
            "{e}"
        );
        assert_eq!(kind_of("gro").unwrap(), FactorKind::Offload);
        assert_eq!(kind_of("mptcp").unwrap(), FactorKind::Switch("--mptcp"));
    }

    #[test]
    fn every_test_has_a_shape() {
        for name in TEST_NAMES {
            assert!(test_shape(name).is_some(), "{name}");
        }
    }
}
