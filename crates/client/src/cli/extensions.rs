//! netperf-ng's own test-specific options. They are long options (`--name`
//! or `--name=value`, after the `--` that starts the test options) so they
//! can never collide with a netperf letter or change what an existing
//! netperf command line means.

use super::config::TestOptions;
use super::error::CliError;
use super::test_opts::TEST_OPTIONS;
use netperf_data::spec::OpenLoop;

/// Text of `netperf -- --help-ext`.
pub const EXTENSIONS_USAGE: &str = "\
netperf-ng extensions (test-specific, after --):
    --mmsg N          Move UDP messages N at a time with sendmmsg/recvmmsg
                      on both ends (UDP_STREAM, UDP_RR with -b). 1..1024
    --zerocopy        Send stream data with MSG_ZEROCOPY (TCP_STREAM, and
                      netserver's sends in TCP_MAERTS)
    --gso N           Send UDP_STREAM datagrams N per system call with
                      UDP_SEGMENT (netserver's sends too, -d recv); -m of
                      at most 1472 bytes, N x size at most 65507. 1..64
    --gro             Receive UDP_STREAM datagrams the kernel kept together
                      (UDP_GRO), counting each (netserver's receives too).
                      With --gso and --gro, message and call counts stay in
                      datagrams: a system call moving 44 counts 44. Both
                      run with --flows too
    --skip-rx-copy    Receive TCP_STREAM/TCP_MAERTS data with MSG_TRUNC:
                      bytes counted, never copied (on whichever end
                      receives; netserver's needs netperf-ng's)
    --busy-poll USECS Set SO_BUSY_POLL on both ends' data sockets. 0..1000000
    --notsent-lowat BYTES
                      Set TCP_NOTSENT_LOWAT on both ends' data sockets
                      (K and M allowed; 0 = the kernel's default). Default:
                      256K on the senders of TCP bulk with --flows (not
                      over MPTCP), where less data waits in the kernel;
                      else untouched. On netserver's end it needs
                      netperf-ng's netserver
    --mptcp           Open the data connections as MPTCP (IPPROTO_MPTCP) on
                      both ends (TCP tests; also -T mptcp); needs our
                      netserver and a kernel with MPTCP on. Selectors
                      LOCAL_/REMOTE_MPTCP_SUBFLOWS; -v 1 or more prints
                      the subflows and the bytes each carried
    --tcp-info        With -D: our end's TCP_INFO (rtt, cwnd, retransmits)
                      under each interim line, and the netserver's after
                      the test (ours only); -J and LOCAL_/REMOTE_TCP_*
                      selectors carry them without it
    --seq             Number UDP datagrams (first 8 payload bytes) and count
                      lost, duplicated and out-of-order ones on each receiver
                      (selectors LOCAL_/REMOTE_DGRAMS_LOST, _DUPLICATED,
                      _OUT_OF_ORDER). Messages must be at least 8 bytes
    --store[=DBPATH]  Record the finished test in the results database
                      (default $NETPERF_NG_DB, else
                      $XDG_DATA_HOME/netperf-ng/results.db, else
                      ~/.local/share/netperf-ng/results.db): every number
                      the output reported, its texts, the test, host,
                      kernel and the -u UUID (or a new one). The output is
                      unchanged; a database that cannot be opened stops
                      netperf before the test (exit 2), a failure to store
                      after it is one line on stderr (exit 2). See
                      `netagg results --help`
    --no-store        Store nothing: the default, as in netagg (refused
                      with --store)
    --tag TAG[,TAG]   Tag the stored result (repeatable; needs --store)
    --data-ports MIN-MAX
                      Open the local data socket on the first free port of
                      MIN-MAX (firewall egress rules); refuse the test when
                      all are in use. A -P lport must lie in the range. The
                      netserver's ports: `netserver --data-ports MIN-MAX`
    --latency-histogram FILE
                      Keep every request/response (or send) time and write
                      them after the test to FILE as an HdrHistogram
                      interval log (values in nanoseconds), for merging the
                      histograms of concurrent streams with HdrHistogram's
                      tools. The output is unchanged; a file that cannot be
                      written is one line on stderr (exit 2)
    --report FILE.html
                      Draw the test's -D interim results as one
                      self-contained page: the context (hosts, kernels,
                      CPUs, interfaces, command line, version), the rate
                      over time and every interval. Needs -D INTERVAL. The
                      output is unchanged; a file that cannot be written is
                      one line on stderr (exit 2)
    --flows N         Run N data connections (or UDP flows) in one test,
                      over --threads T threads on each end: TCP_RR,
                      TCP_CRR, UDP_RR, TCP_STREAM, TCP_MAERTS, UDP_STREAM
                      and omni. The result block is
                      the aggregate; selectors FLOWS THREADS FLOW_RATE_MIN
                      _MEDIAN _MAX FLOW_JAIN FLOWS_STALLED FLOWS_FAILED add
                      the per-flow view, and the latency selectors come
                      from every flow's transactions. TCP bulk (STREAM,
                      MAERTS) sends 128K messages unless -m gives a size
                      (TCP_MAERTS: -m ,SIZE), iperf3's write: a single
                      stream's socket-buffer default (16K on Linux) costs
                      more CPU per byte over many flows. Needs netperf-ng's
                      netserver. 1..1000000
    --threads T       Threads per end for --flows. Default: TCP bulk
                      (STREAM, MAERTS) of up to 64 flows a thread per
                      flow, each blocking on its flow as iperf3's do (on
                      loopback a woken reader copies data still in its
                      CPU's cache); else the online CPUs. Never more than
                      N; a thread holding one TCP bulk flow blocks on it,
                      others multiplex with epoll. 1..1024
    --flow-samples FILE
                      With --flows: one CSV row per flow per interval (-D
                      INTERVAL, else 1 s): flow, thread, interval end,
                      work, P50/P99/max latency in us
    --rate R          Open-loop request/response (TCP_RR, UDP_RR, omni -d
                      rr): requests leave R a second on a fixed schedule,
                      whether or not earlier responses have come back, and
                      each response is timed from its request's intended
                      send time (corrected) and its actual one (raw);
                      selectors OPEN_* CO_P*_LATENCY RAW_P*_LATENCY, -v 2
                      prints both. netperf alone keeps the schedule: any
                      netserver serves TCP_RR; UDP needs netperf-ng's (it
                      echoes each request's number: -r 8 or more). Sets
                      TCP_NODELAY. With --flows, R is spread evenly over
                      the flows. Up to 10000000 (decimals allowed)
    --max-inflight N  With --rate: most requests in flight (per flow with
                      --flows); one due beyond it waits for room and is
                      counted held back. 1..1000000 (default 1024)
    --help-ext        Display this text

and one test-specific letter netperf does not use:
    -J [list|file]    JSON output of the selection, like -o/-O/-k (one object
                      per test; schema in docs/omni-output.schema.json)

Selectors beyond netperf's (name them in -o/-O/-k/-J lists; see
docs/omni-output.md): P99_9_LATENCY P99_99_LATENCY P99_999_LATENCY
LATENCY_SAMPLES LATENCY_STDERR LATENCY_CI99_LOW LATENCY_CI99_HIGH
LOCAL_/REMOTE_DGRAMS_LOST _DUPLICATED _OUT_OF_ORDER (with --seq)
LOCAL_/REMOTE_IF_TX_PACKETS _RX_PACKETS _TX_BYTES _RX_BYTES _TX_PPS _RX_PPS
PACKETS_PER_TRANSACTION
OPEN_OFFERED_RATE OPEN_ACHIEVED_RATE OPEN_SLIP_P50 _P99 _MAX OPEN_LATE
OPEN_HELD_BACK OPEN_LOST OPEN_MAX_IN_FLIGHT CO_/RAW_P50 _P90 _P99 _P99_9
_P99_99 _P99_999_LATENCY (with --rate)
";

type Apply = fn(&mut TestOptions, Option<&str>) -> Result<(), String>;

/// netperf's exit status when `--store` cannot store (the database cannot
/// be opened or written, or this netperf was built without storing): the
/// same as the `netagg results` commands' "error".
pub const EXIT_STORE_FAILED: i32 = 2;

/// netperf's exit status when `--report` cannot draw its page.
pub const EXIT_REPORT_FAILED: i32 = 2;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    /// `--name value` or `--name=value`.
    Value,
    /// Only as `--name=value`; a bare `--name` leaves the next word alone.
    OptionalValue,
}

/// (name, what it takes, how it applies)
const EXTENSIONS: &[(&str, Takes, Apply)] = &[
    ("mmsg", Takes::Value, |t, v| {
        t.mmsg_batch = Some(number(v, 1, 1024)?);
        Ok(())
    }),
    ("zerocopy", Takes::Nothing, |t, _| {
        t.zerocopy = true;
        Ok(())
    }),
    ("mptcp", Takes::Nothing, |t, _| {
        t.mptcp = true;
        Ok(())
    }),
    ("gso", Takes::Value, |t, v| {
        t.gso_segments = Some(number(v, 1, netperf_wire::extension::MAX_GSO_SEGMENTS)?);
        Ok(())
    }),
    ("gro", Takes::Nothing, |t, _| {
        t.gro = true;
        Ok(())
    }),
    ("skip-rx-copy", Takes::Nothing, |t, _| {
        t.skip_rx_copy = true;
        Ok(())
    }),
    ("tcp-info", Takes::Nothing, |t, _| {
        t.tcp_info = true;
        Ok(())
    }),
    ("seq", Takes::Nothing, |t, _| {
        t.sequence = true;
        Ok(())
    }),
    ("notsent-lowat", Takes::Value, |t, v| {
        t.notsent_lowat = Some(bytes(v, netperf_wire::extension::MAX_NOTSENT_LOWAT)?);
        Ok(())
    }),
    ("busy-poll", Takes::Value, |t, v| {
        t.busy_poll_usecs = Some(number(v, 0, 1_000_000)?);
        Ok(())
    }),
    ("store", Takes::OptionalValue, |t, v| {
        if v.is_some_and(str::is_empty) {
            return Err("the database path is empty".into());
        }
        t.store = Some(v.map(String::from));
        Ok(())
    }),
    ("no-store", Takes::Nothing, |t, _| {
        t.no_store = true;
        Ok(())
    }),
    ("data-ports", Takes::Value, |t, v| {
        let range = netperf_data::net::port_range::PortRange::parse(v.unwrap_or_default())?;
        t.data_ports = Some(range);
        Ok(())
    }),
    ("latency-histogram", Takes::Value, |t, v| {
        match v.filter(|p| !p.is_empty()) {
            Some(path) => t.latency_histogram = Some(path.into()),
            None => return Err("the file name is empty".into()),
        }
        Ok(())
    }),
    ("report", Takes::Value, |t, v| {
        match v.filter(|p| !p.is_empty()) {
            Some(path) => t.report = Some(path.into()),
            None => return Err("the file name is empty".into()),
        }
        Ok(())
    }),
    ("flows", Takes::Value, |t, v| {
        t.flows = Some(number(v, 1, netperf_wire::extension::MAX_FLOWS)?);
        Ok(())
    }),
    ("threads", Takes::Value, |t, v| {
        t.flow_threads = Some(number(v, 1, netperf_wire::extension::MAX_FLOW_THREADS)?);
        Ok(())
    }),
    ("flow-samples", Takes::Value, |t, v| {
        match v.filter(|p| !p.is_empty()) {
            Some(path) => t.flow_samples = Some(path.into()),
            None => return Err("the file name is empty".into()),
        }
        Ok(())
    }),
    ("rate", Takes::Value, |t, v| {
        t.rate = Some(rate(v)?);
        Ok(())
    }),
    ("max-inflight", Takes::Value, |t, v| {
        t.max_inflight = Some(number(v, 1, OpenLoop::MAX_INFLIGHT)?);
        Ok(())
    }),
    ("tag", Takes::Value, |t, v| {
        for tag in v.unwrap_or_default().split(',') {
            t.store_tags.push(checked_tag(tag)?);
        }
        Ok(())
    }),
];

/// The longest tag accepted.
const MAX_TAG: usize = 128;

/// A tag: printable, no comma (the list separator), not empty, at most
/// [`MAX_TAG`] bytes; surrounding blanks are dropped.
pub fn checked_tag(tag: &str) -> Result<String, String> {
    let tag = tag.trim();
    if tag.is_empty() {
        return Err("a tag is empty".into());
    }
    if tag.len() > MAX_TAG {
        return Err(format!("a tag is longer than {MAX_TAG} bytes"));
    }
    if tag.chars().any(char::is_control) {
        return Err("a tag holds a control character".into());
    }
    Ok(tag.to_string())
}

fn number(value: Option<&str>, min: u32, max: u32) -> Result<u32, String> {
    let text = value.unwrap_or_default();
    match text.trim().parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        Ok(_) => Err(format!("must be between {min} and {max}")),
        Err(_) => Err("not a number".into()),
    }
}

/// A byte count as netperf reads sizes (`256K` is 262144), at most `max`.
fn bytes(value: Option<&str>, max: u32) -> Result<u32, String> {
    let text = value.unwrap_or_default().trim();
    match super::sizespec::parse_size(text) {
        Ok(n) if n <= u64::from(max) => Ok(n as u32),
        Ok(_) => Err(format!("must be at most {max} bytes")),
        Err(_) => Err("not a byte count (a number, K or M allowed)".into()),
    }
}

/// `--rate`'s requests per second: a positive decimal number, at most
/// [`OpenLoop::MAX_RATE`] (no sign, exponent, infinity or NaN to hide a 0).
fn rate(value: Option<&str>) -> Result<f64, String> {
    let text = value.unwrap_or_default().trim();
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.');
    match text.parse::<f64>() {
        Ok(r) if plain && r > 0.0 && r <= OpenLoop::MAX_RATE => Ok(r),
        Ok(_) if plain => Err(format!(
            "requests per second must be above 0 and at most {}",
            OpenLoop::MAX_RATE
        )),
        _ => Err("not a number of requests per second".into()),
    }
}

/// What the test section asked of the extensions.
#[derive(Debug, PartialEq)]
pub enum Extracted {
    /// The remaining words, for the netperf option scanner.
    Rest(Vec<String>),
    /// `--help-ext` was given.
    Help,
}

/// Apply and remove the extension options from the test section `args`
/// (the words after the first `--`). A lone `--` ends the scan, as it ends
/// the test options.
pub fn extract(args: &[String], test: &mut TestOptions) -> Result<Extracted, CliError> {
    let mut rest = Vec::with_capacity(args.len());
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            rest.push(word.clone());
            rest.extend(words.cloned());
            break;
        }
        // `-m --3` gives -m the value "--3", as netperf's getopt does.
        let is_a_value = rest
            .last()
            .is_some_and(|before: &String| super::getopt::wants_next_word(before, TEST_OPTIONS));
        let Some(body) = word.strip_prefix("--").filter(|_| !is_a_value) else {
            rest.push(word.clone());
            continue;
        };
        if body == "help-ext" {
            return Ok(Extracted::Help);
        }
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let bad = |reason: String| CliError::Extension(format!("option --{name}: {reason}"));
        let Some((_, takes, apply)) = EXTENSIONS.iter().find(|(n, _, _)| *n == name) else {
            return Err(bad("unknown netperf-ng option (see -- --help-ext)".into()));
        };
        let value = match (takes, inline) {
            (Takes::Value | Takes::OptionalValue, Some(v)) => Some(v.to_string()),
            (Takes::Value, None) => Some(
                words
                    .next()
                    .ok_or_else(|| bad("needs a value".into()))?
                    .clone(),
            ),
            (Takes::Nothing, Some(_)) => return Err(bad("takes no value".into())),
            (Takes::Nothing | Takes::OptionalValue, None) => None,
        };
        apply(test, value.as_deref()).map_err(|reason| {
            bad(format!(
                "invalid value '{}': {reason}",
                value.unwrap_or_default()
            ))
        })?;
    }
    if test.no_store && test.store.is_some() {
        return Err(CliError::Extension(
            "option --no-store: cannot be used with --store".into(),
        ));
    }
    if !test.store_tags.is_empty() && test.store.is_none() {
        return Err(CliError::Extension(
            "option --tag: tags a stored result, and needs --store".into(),
        ));
    }
    for (given, name) in [
        (test.flow_threads.is_some(), "--threads"),
        (test.flow_samples.is_some(), "--flow-samples"),
    ] {
        if given && test.flows.is_none() {
            return Err(CliError::Extension(format!(
                "option {name}: goes with --flows N"
            )));
        }
    }
    if test.max_inflight.is_some() && test.rate.is_none() {
        return Err(CliError::Extension(
            "option --max-inflight: goes with --rate R".into(),
        ));
    }
    Ok(Extracted::Rest(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    /// `--help-ext` fits an 80-column terminal, as netperf's own usage does.
    #[test]
    fn the_extensions_usage_fits_80_columns() {
        let wide: Vec<&str> = EXTENSIONS_USAGE
            .lines()
            .filter(|l| l.chars().count() > 80)
            .collect();
        assert!(wide.is_empty(), "{wide:#?}");
    }

    #[test]
    fn options_apply_and_leave_netperf_words_alone() {
        let mut t = TestOptions::default();
        let got = extract(
            &words("-m 64 --mmsg 32 --zerocopy --busy-poll=50 -D"),
            &mut t,
        )
        .unwrap();
        assert_eq!(got, Extracted::Rest(words("-m 64 -D")));
        assert_eq!(
            (t.mmsg_batch, t.zerocopy, t.busy_poll_usecs),
            (Some(32), true, Some(50))
        );
    }

    #[test]
    fn errors_name_the_option() {
        let mut t = TestOptions::default();
        let e = |line: &str, t: &mut TestOptions| extract(&words(line), t).unwrap_err().to_string();
        assert!(e("--mmsg 0", &mut t).contains("--mmsg"));
        assert!(e("--mmsg", &mut t).contains("needs a value"));
        assert!(e("--zerocopy=1", &mut t).contains("takes no value"));
        assert!(e("--bogus", &mut t).contains("unknown netperf-ng option"));
        for bad in ["--gso 0", "--gso 65", "--gso x", "--gso -1"] {
            assert!(
                e(bad, &mut t).contains("option --gso: invalid value"),
                "{bad}"
            );
        }
        assert!(e("--gro=1", &mut t).contains("takes no value"));
        assert!(e("--skip-rx-copy=yes", &mut t).contains("takes no value"));
        for bad in [
            "--notsent-lowat 2G",
            "--notsent-lowat x",
            "--notsent-lowat -1",
        ] {
            assert!(
                e(bad, &mut t).contains("option --notsent-lowat: invalid value"),
                "{bad}"
            );
        }
        extract(&words("--notsent-lowat 256K"), &mut t).unwrap();
        assert_eq!(t.notsent_lowat, Some(256 * 1024));
        assert_eq!(
            extract(&words("--help-ext"), &mut t).unwrap(),
            Extracted::Help
        );
    }

    #[test]
    fn store_takes_an_optional_inline_path_and_tags() {
        let mut t = TestOptions::default();
        let got = extract(&words("--store -m 64 --tag a,b --tag c"), &mut t).unwrap();
        assert_eq!(got, Extracted::Rest(words("-m 64")));
        assert_eq!(t.store, Some(None));
        assert_eq!(t.store_tags, ["a", "b", "c"]);
        let mut t = TestOptions::default();
        extract(&words("--store=/tmp/r.db"), &mut t).unwrap();
        assert_eq!(t.store, Some(Some("/tmp/r.db".into())));
        let e = |line: &str| {
            extract(&words(line), &mut TestOptions::default())
                .unwrap_err()
                .to_string()
        };
        assert!(e("--tag x").contains("needs --store"));
        assert!(e("--store --tag a,,b").contains("a tag is empty"));
        assert!(e("--store=").contains("path is empty"));
        assert!(e("--store --tag").contains("needs a value"));
    }

    #[test]
    fn no_store_is_the_default_spelled_out_and_refused_with_store() {
        let mut t = TestOptions::default();
        let got = extract(&words("--no-store -m 64"), &mut t).unwrap();
        assert_eq!(got, Extracted::Rest(words("-m 64")));
        assert_eq!((t.store, t.no_store), (None, true));
        for line in ["--store --no-store", "--no-store --store=/tmp/r.db"] {
            let e = extract(&words(line), &mut TestOptions::default()).unwrap_err();
            assert!(
                e.to_string()
                    .contains("--no-store: cannot be used with --store"),
                "{e}"
            );
        }
        let e = extract(&words("--no-store --tag a"), &mut TestOptions::default()).unwrap_err();
        assert!(e.to_string().contains("needs --store"), "{e}");
    }

    #[test]
    fn data_ports_take_a_range() {
        let mut t = TestOptions::default();
        let got = extract(&words("--data-ports 42424-42427 -P 42425"), &mut t).unwrap();
        assert_eq!(got, Extracted::Rest(words("-P 42425")));
        assert_eq!(t.data_ports.map(|r| (r.min, r.max)), Some((42424, 42427)));
        let e = |line: &str| {
            extract(&words(line), &mut TestOptions::default())
                .unwrap_err()
                .to_string()
        };
        assert!(e("--data-ports=5-1").contains("above MAX"));
        assert!(e("--data-ports 0-9").contains("outside 1..65535"));
        assert!(e("--data-ports").contains("needs a value"));
    }

    #[test]
    fn latency_histogram_takes_a_file() {
        let mut t = TestOptions::default();
        let got = extract(&words("--latency-histogram /tmp/a.hlog -r 1,1"), &mut t).unwrap();
        assert_eq!(got, Extracted::Rest(words("-r 1,1")));
        assert_eq!(t.latency_histogram, Some("/tmp/a.hlog".into()));
        let e = |line: &str| {
            extract(&words(line), &mut TestOptions::default())
                .unwrap_err()
                .to_string()
        };
        assert!(e("--latency-histogram=").contains("file name is empty"));
        assert!(e("--latency-histogram").contains("needs a value"));
    }

    #[test]
    fn rate_takes_a_positive_number_within_bounds() {
        let mut t = TestOptions::default();
        let got = extract(&words("--rate 2500.5 --max-inflight=8 -r 1,1"), &mut t).unwrap();
        assert_eq!(got, Extracted::Rest(words("-r 1,1")));
        assert_eq!((t.rate, t.max_inflight), (Some(2500.5), Some(8)));
        let e = |line: &str| {
            extract(&words(line), &mut TestOptions::default())
                .unwrap_err()
                .to_string()
        };
        for bad in ["0", "0.0", "10000001", "1e9"] {
            assert!(e(&format!("--rate {bad}")).contains("--rate"), "{bad}");
        }
        for bad in ["-5", "abc", "inf", "NaN", "1e3", "", "0x10"] {
            assert!(
                e(&format!("--rate={bad}")).contains("invalid value"),
                "{bad}"
            );
        }
        assert!(e("--rate 0").contains("above 0"));
        assert!(e("--max-inflight 4").contains("goes with --rate"));
        assert!(e("--rate 10 --max-inflight 0").contains("between 1 and"));
    }

    #[test]
    fn a_second_double_dash_ends_the_scan() {
        let mut t = TestOptions::default();
        let got = extract(&words("-m 1 -- --mmsg 4"), &mut t).unwrap();
        assert_eq!(got, Extracted::Rest(words("-m 1 -- --mmsg 4")));
        assert_eq!(t.mmsg_batch, None);
    }
}
