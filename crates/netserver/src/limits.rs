//! The operator's bounds on what one client may ask of netserver and on how
//! long netserver waits for it: one table of `--name value` options, their
//! defaults, and the text `netserver -h` shows for them.

use netperf_data::engine::sizing::{MAX_MESSAGE, MAX_WIDTH};
use std::time::Duration;

/// Bounds a request must fit and the waits that free a session's resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Control connections served at once; more are closed at accept.
    pub max_connections: usize,
    /// Tests (data phases) running at once; more are refused with EBUSY.
    pub max_tests: usize,
    /// Largest send/receive/request/response size of one call, in bytes.
    pub max_message: i32,
    /// Largest socket buffer (SO_SNDBUF/SO_RCVBUF) a client may request.
    pub max_socket_buffer: i32,
    /// Largest ring of buffers (netperf's -W) per direction.
    pub max_ring_width: u32,
    /// Largest memory of one direction's ring of buffers, in bytes.
    pub max_ring_bytes: u64,
    /// Longest timed test, in seconds.
    pub max_test_seconds: i32,
    /// How long a control connection may wait for its next request.
    pub idle_timeout: Duration,
    /// How long a test waits for its data connection.
    pub accept_timeout: Duration,
    /// How long a test (or a started control message) goes on without any
    /// progress from the client before netserver ends it.
    pub silent_timeout: Duration,
}

/// Compiled-in bounds: the defaults of [`Limits`] (the message and ring
/// bounds both ends share are `engine::sizing`'s).
pub mod defaults {
    /// Largest socket buffer request.
    pub const MAX_SOCKET_BUFFER: i32 = 1 << 30;
    /// Longest timed test, in seconds (one week).
    pub const MAX_TEST_SECONDS: i32 = 7 * 24 * 3600;
    /// Largest alignment and offset, as netperf's MAXALIGNMENT and MAXOFFSET.
    pub const MAX_ALIGNMENT: u32 = 16384;
    pub const MAX_OFFSET: u32 = 4096;
    /// How long to wait for a test's data connection, in seconds.
    pub const ACCEPT_WAIT_SECS: u64 = 60;
}

impl Default for Limits {
    fn default() -> Self {
        // Room for what clients really run at once against one netserver
        // (flent's tcp_upload_1000 is 1,003 tests; netagg's thousand
        // streams over two hosts, 512 each); stock netserver has no limit.
        Limits {
            max_connections: 4096,
            max_tests: 2048,
            max_message: MAX_MESSAGE,
            max_socket_buffer: defaults::MAX_SOCKET_BUFFER,
            max_ring_width: MAX_WIDTH,
            max_ring_bytes: 64 << 20,
            max_test_seconds: defaults::MAX_TEST_SECONDS,
            idle_timeout: Duration::from_secs(3600),
            accept_timeout: Duration::from_secs(defaults::ACCEPT_WAIT_SECS),
            silent_timeout: Duration::from_secs(120),
        }
    }
}

impl Limits {
    /// The clock of a test that asks for `test_length` (> 0: seconds;
    /// else a count, or nothing): its length, at most --max-test-length,
    /// plus `pad`. A counted test gets the longest length as its clock: it
    /// ends with its count, or there, however long its client keeps it
    /// going — a request does not lift the operator's bound.
    pub fn test_clock(&self, test_length: i32, pad: u32) -> Duration {
        let secs = match test_length {
            asked @ 1.. => asked.min(self.max_test_seconds),
            _ => self.max_test_seconds,
        };
        Duration::from_secs(secs.max(0) as u64 + u64::from(pad))
    }
}

/// How an option's value is read.
#[derive(Clone, Copy)]
enum Kind {
    /// A count: 1 or more.
    Count,
    /// Bytes, with an optional K, M or G suffix (powers of 1024).
    Bytes,
    /// Seconds, fractions allowed.
    Seconds,
    /// Whole seconds (netperf's test length is an integer).
    WholeSeconds,
}

/// One limit option: its long name, how it is read, the range it accepts,
/// what `-h` says of it, and where the value goes.
struct LimitOption {
    name: &'static str,
    kind: Kind,
    min: f64,
    max: f64,
    help: &'static str,
    set: fn(&mut Limits, f64),
    get: fn(&Limits) -> f64,
}

const GIB: f64 = (1u64 << 30) as f64;

#[rustfmt::skip]
const LIMIT_OPTIONS: &[LimitOption] = &[
    LimitOption { name: "max-connections", kind: Kind::Count, min: 1.0, max: 100_000.0,
        help: "Control connections served at once",
        set: |l, v| l.max_connections = v as usize, get: |l| l.max_connections as f64 },
    LimitOption { name: "max-tests", kind: Kind::Count, min: 1.0, max: 100_000.0,
        help: "Tests running at once; more are refused",
        set: |l, v| l.max_tests = v as usize, get: |l| l.max_tests as f64 },
    LimitOption { name: "max-message", kind: Kind::Bytes, min: 1.0, max: GIB,
        help: "Largest send/recv/request/response size",
        set: |l, v| l.max_message = v as i32, get: |l| f64::from(l.max_message) },
    LimitOption { name: "max-socket-buffer", kind: Kind::Bytes, min: 1.0, max: 2.0 * GIB - 1.0,
        help: "Largest socket buffer a client may ask for",
        set: |l, v| l.max_socket_buffer = v as i32, get: |l| f64::from(l.max_socket_buffer) },
    LimitOption { name: "max-ring-width", kind: Kind::Count, min: 1.0, max: 1_048_576.0,
        help: "Most buffers in a send or receive ring",
        set: |l, v| l.max_ring_width = v as u32, get: |l| f64::from(l.max_ring_width) },
    LimitOption { name: "max-ring-memory", kind: Kind::Bytes, min: 4096.0, max: 64.0 * GIB,
        help: "Most memory of one send or receive ring",
        set: |l, v| l.max_ring_bytes = v as u64, get: |l| l.max_ring_bytes as f64 },
    LimitOption { name: "max-test-length", kind: Kind::WholeSeconds, min: 1.0, max: 2_147_483_647.0,
        help: "Longest test (counted ones too)",
        set: |l, v| l.max_test_seconds = v as i32, get: |l| f64::from(l.max_test_seconds) },
    LimitOption { name: "idle-timeout", kind: Kind::Seconds, min: 0.01, max: 31_536_000.0,
        help: "Close an idle control connection after",
        set: |l, v| l.idle_timeout = Duration::from_secs_f64(v), get: |l| l.idle_timeout.as_secs_f64() },
    LimitOption { name: "accept-timeout", kind: Kind::Seconds, min: 0.01, max: 86_400.0,
        help: "Wait this long for a data connection",
        set: |l, v| l.accept_timeout = Duration::from_secs_f64(v), get: |l| l.accept_timeout.as_secs_f64() },
    LimitOption { name: "silent-timeout", kind: Kind::Seconds, min: 0.01, max: 86_400.0,
        help: "End a test whose client is silent for",
        set: |l, v| l.silent_timeout = Duration::from_secs_f64(v), get: |l| l.silent_timeout.as_secs_f64() },
];

/// Whether `name` (without the leading `--`) is a limit option.
pub fn is_limit_option(name: &str) -> bool {
    LIMIT_OPTIONS.iter().any(|o| o.name == name)
}

/// Set the limit `name` from its command-line text, or say why not.
pub fn set_limit(limits: &mut Limits, name: &str, text: &str) -> Result<(), String> {
    let option = LIMIT_OPTIONS
        .iter()
        .find(|o| o.name == name)
        .ok_or_else(|| format!("unknown option --{name}"))?;
    let value = parse_value(option.kind, text)
        .ok_or_else(|| format!("invalid value '{text}' for --{name}"))?;
    if !(option.min..=option.max).contains(&value) {
        return Err(format!(
            "--{name} {text} is outside {}..{}",
            show(option.kind, option.min),
            show(option.kind, option.max)
        ));
    }
    (option.set)(limits, value);
    Ok(())
}

fn parse_value(kind: Kind, text: &str) -> Option<f64> {
    let text = text.trim();
    let value = match kind {
        Kind::Count => text.parse::<u64>().ok()? as f64,
        Kind::Seconds => text.strip_suffix('s').unwrap_or(text).parse::<f64>().ok()?,
        Kind::WholeSeconds => text.strip_suffix('s').unwrap_or(text).parse::<u64>().ok()? as f64,
        Kind::Bytes => {
            let (digits, scale) = match text.char_indices().last()? {
                (i, 'k' | 'K') => (&text[..i], 1024.0),
                (i, 'm' | 'M') => (&text[..i], 1024.0 * 1024.0),
                (i, 'g' | 'G') => (&text[..i], GIB),
                _ => (text, 1.0),
            };
            digits.parse::<u64>().ok()? as f64 * scale
        }
    };
    value.is_finite().then_some(value)
}

fn show(kind: Kind, value: f64) -> String {
    match kind {
        Kind::Count => format!("{value}"),
        Kind::Seconds | Kind::WholeSeconds => format!("{value}s"),
        Kind::Bytes => {
            let v = value as u64;
            [(30, "G"), (20, "M"), (10, "K")]
                .iter()
                .find(|(shift, _)| v >= 1 << shift && v.is_multiple_of(1 << shift))
                .map_or_else(
                    || format!("{v}"),
                    |(shift, unit)| format!("{}{unit}", v >> shift),
                )
        }
    }
}

/// The lines `netserver -h` adds after netperf's usage: every netperf-ng
/// option, the limits with their defaults.
pub fn usage_text() -> String {
    let defaults = Limits::default();
    let mut text = String::from("netperf-ng options:\n");
    for (option, help) in OPERATION_OPTIONS {
        text.push_str(&format!("    {option:<27} {help}\n"));
    }
    for o in LIMIT_OPTIONS {
        let option = format!("--{} {}", o.name, argument_name(o.kind));
        let help = format!("{} ({})", o.help, show(o.kind, (o.get)(&defaults)));
        text.push_str(&format!("    {option:<27} {help}\n"));
    }
    text.push('\n');
    text
}

fn argument_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Count => "n",
        Kind::Bytes => "bytes",
        Kind::Seconds | Kind::WholeSeconds => "secs",
    }
}

/// The netperf-ng options that are not limits, as `-h` shows them.
const OPERATION_OPTIONS: &[(&str, &str)] = &[
    (
        "-F, --fill-dir dir",
        "Serve remote fill files (-F ,name) from dir only",
    ),
    (
        "--allow net[,net...]",
        "Accept clients from these networks only (a/len)",
    ),
    ("--pid-file path", "Write the server's pid to path"),
    ("--log-json", "Log lines as JSON objects"),
    (
        "--data-ports min-max",
        "Data sockets on free ports of min-max only",
    ),
    (
        "--allow-offload-changes",
        "Clients may change the offloads of the",
    ),
    ("", "interface toward them (undone at close)"),
    (
        "--allow-offload-changes=IF",
        "... and of IF too (IF[,IF...])",
    ),
    (
        "--mesh-key file",
        "Run mesh tests for coordinators with this key",
    ),
    (
        "--mesh-peers net[,net...]",
        "... toward these networks only (both needed)",
    ),
    ("--mesh-max-duration secs", "Longest mesh test (60)"),
    ("--mesh-concurrency n", "Mesh tests at once (1)"),
    ("--mesh-rate n", "Mesh tests per minute (60)"),
    (
        "--mesh-netperf path",
        "The netperf mesh tests run (default: the one",
    ),
    ("", "beside netserver, else PATH's)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_with_units_and_ranges() {
        let mut l = Limits::default();
        set_limit(&mut l, "max-message", "64K").unwrap();
        assert_eq!(l.max_message, 65536);
        set_limit(&mut l, "max-ring-memory", "1G").unwrap();
        assert_eq!(l.max_ring_bytes, 1 << 30);
        set_limit(&mut l, "silent-timeout", "0.5").unwrap();
        assert_eq!(l.silent_timeout, Duration::from_millis(500));
        set_limit(&mut l, "idle-timeout", "30s").unwrap();
        assert_eq!(l.idle_timeout, Duration::from_secs(30));
        set_limit(&mut l, "max-tests", "3").unwrap();
        assert_eq!(l.max_tests, 3);
        for (name, bad) in [
            ("max-tests", "0"),
            ("max-tests", "-1"),
            ("max-tests", "1.5"),
            ("max-message", "2G"),
            ("max-message", "12X"),
            ("max-test-length", "1.5"),
            ("silent-timeout", "nan"),
            ("silent-timeout", "inf"),
            ("silent-timeout", "0"),
            ("max-socket-buffer", ""),
            ("nonsense", "1"),
        ] {
            assert!(set_limit(&mut l, name, bad).is_err(), "{name} {bad}");
        }
    }

    #[test]
    fn every_test_has_a_clock_within_the_longest_length() {
        let l = Limits {
            max_test_seconds: 10,
            ..Limits::default()
        };
        let secs = |length: i32, pad: u32| l.test_clock(length, pad).as_secs();
        assert_eq!(secs(3, 4), 7);
        assert_eq!(secs(30, 4), 14);
        for counted in [0, -1, i32::MIN] {
            assert_eq!(secs(counted, 0), 10);
        }
        let widest = Limits {
            max_test_seconds: i32::MAX,
            ..Limits::default()
        };
        assert_eq!(
            widest.test_clock(i32::MAX, 4).as_secs(),
            i32::MAX as u64 + 4
        );
    }

    #[test]
    fn usage_lists_every_limit_with_its_default() {
        let text = usage_text();
        for o in LIMIT_OPTIONS {
            assert!(text.contains(&format!("--{} ", o.name)), "{}", o.name);
        }
        assert!(
            text.contains("--max-connections n         Control connections served at once (4096)")
        );
        assert!(text.contains("(64M)"));
        assert!(text.contains("    --allow-offload-changes=IF  ... and of IF too (IF[,IF...])\n"));
        assert!(text.lines().all(|l| l.len() <= 80), "{text}");
    }
}
