//! Why streams failed, in words a user can act on: each failure is sorted
//! into a reason (refused, netserver's --max-tests, its --max-connections,
//! timeouts, this host's own limits, ...), grouped per load generator, and
//! the limit-type reasons carry the hint how to raise the limit.

use netperf_client::control::client::ClientError;
use netperf_data::engine::DataError;
use netperf_data::net::channel::ChannelError;
use serde_json::json;
use std::fmt::Write as _;

/// When in a stream's life it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Before its data phase: control connection, request, netserver's answer.
    Setup,
    /// Its data phase.
    Run,
    /// After netagg stopped it: the results.
    Stop,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "set-up",
            Phase::Run => "data phase",
            Phase::Stop => "stop",
        }
    }
}

/// What went wrong, as far as the cure goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// Nothing listens there (ECONNREFUSED).
    Refused,
    /// netserver answered EBUSY: its --max-tests tests already run.
    MaxTests,
    /// netserver closed the control connection without answering: our
    /// netserver's --max-connections (or --allow) does that.
    ClosedUnanswered,
    /// Our netserver refused a shared test's flows: more than its
    /// --max-connections (EUSERS).
    FlowsOverMaxConnections,
    /// No answer in time (connect, netserver's answer, the set-up limit).
    Timeout,
    /// This host ran out of descriptors (EMFILE, ENFILE).
    LocalFiles,
    /// netserver ran out of descriptors.
    RemoteFiles,
    /// This host could not start a thread for the stream.
    Threads,
    /// The stream ended without results after the stop and was cut off.
    NoResults,
    /// Anything else (the detail says what).
    Other,
}

/// One reason's label and, for limits, how to raise them; `{host}`,
/// `{streams}`, `{port}` and our netserver's defaults (`{default_tests}`,
/// `{default_connections}`) are filled in.
struct ReasonText {
    reason: Reason,
    key: &'static str,
    label: &'static str,
    hint: &'static str,
}

#[rustfmt::skip]
const REASONS: &[ReasonText] = &[
    ReasonText { reason: Reason::Refused, key: "refused",
        label: "connection refused",
        hint: "is a netserver listening on {host} port {port} (netagg --port)?" },
    ReasonText { reason: Reason::MaxTests, key: "ebusy_max_tests",
        label: "EBUSY: netserver runs no more tests at once (its --max-tests)",
        hint: "start our netserver on {host} with `netserver --max-tests {streams}` or more (default {default_tests}); a stock netserver has no such limit" },
    ReasonText { reason: Reason::ClosedUnanswered, key: "closed_max_connections",
        label: "netserver closed the control connection without answering (its --max-connections, or --allow)",
        hint: "start our netserver on {host} with `netserver --max-connections {streams}` or more (default {default_connections}), and check its --allow" },
    ReasonText { reason: Reason::FlowsOverMaxConnections, key: "flows_max_connections",
        label: "netserver refused the shared test's flows: more than its --max-connections",
        hint: "start our netserver on {host} with `netserver --max-connections {streams}` or more (default {default_connections}): each flow of a shared test is a connection" },
    ReasonText { reason: Reason::Timeout, key: "timeout",
        label: "timed out",
        hint: "netserver on {host} is overloaded or unreachable; fewer streams, or a lower --setup-concurrency, may help" },
    ReasonText { reason: Reason::LocalFiles, key: "local_open_files",
        label: "this host ran out of file descriptors (EMFILE/ENFILE)",
        hint: "raise the open-file limit of netagg's host (`ulimit -n`; the hard limit in /etc/security/limits.conf or systemd's LimitNOFILE): each stream holds 3" },
    ReasonText { reason: Reason::RemoteFiles, key: "remote_open_files",
        label: "netserver ran out of file descriptors (EMFILE/ENFILE)",
        hint: "raise the open-file limit (`ulimit -n`) of netserver on {host}: each test holds 3 or more" },
    ReasonText { reason: Reason::Threads, key: "threads",
        label: "cannot start a thread",
        hint: "raise this host's thread limits (`ulimit -u`, kernel.threads-max, the cgroup's pids.max): each stream is a thread" },
    ReasonText { reason: Reason::NoResults, key: "no_results",
        label: "no results from netserver after the stop; cut off",
        hint: "" },
    ReasonText { reason: Reason::Other, key: "other",
        label: "failed",
        hint: "" },
];

impl Reason {
    /// The reason's name in the JSON.
    pub fn key(self) -> &'static str {
        text_of(self).key
    }
}

fn text_of(reason: Reason) -> &'static ReasonText {
    REASONS
        .iter()
        .find(|r| r.reason == reason)
        .unwrap_or(&REASONS[REASONS.len() - 1])
}

fn is_timeout(errno: i32) -> bool {
    errno == libc::ETIMEDOUT
}

fn is_out_of_files(errno: i32) -> bool {
    errno == libc::EMFILE || errno == libc::ENFILE
}

fn of_io(e: &std::io::Error) -> Reason {
    match e.raw_os_error() {
        Some(libc::ECONNREFUSED) => Reason::Refused,
        Some(n) if is_out_of_files(n) => Reason::LocalFiles,
        Some(n) if is_timeout(n) => Reason::Timeout,
        _ if matches!(
            e.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        ) =>
        {
            Reason::Timeout
        }
        _ => Reason::Other,
    }
}

/// The reason of a stream's error in `phase`.
pub fn classify(e: &ClientError, phase: Phase) -> Reason {
    match e {
        ClientError::NoServer(_, errno) => match *errno {
            libc::ECONNREFUSED => Reason::Refused,
            n if is_timeout(n) => Reason::Timeout,
            n if is_out_of_files(n) => Reason::LocalFiles,
            _ => Reason::Other,
        },
        ClientError::Remote { errno, .. } => match *errno {
            libc::EBUSY => Reason::MaxTests,
            libc::EUSERS => Reason::FlowsOverMaxConnections,
            n if is_out_of_files(n) => Reason::RemoteFiles,
            _ => Reason::Other,
        },
        // Before netserver answered anything, a closed connection is its
        // refusal; after the stop, the results never came.
        ClientError::Control(ChannelError::Closed) if phase == Phase::Setup => {
            Reason::ClosedUnanswered
        }
        ClientError::Control(ChannelError::TimedOut(_)) => Reason::Timeout,
        ClientError::Control(ChannelError::Io(io)) => match of_io(io) {
            Reason::Other if phase == Phase::Setup => Reason::ClosedUnanswered,
            r => r,
        },
        ClientError::Data(DataError::Connect(io) | DataError::Send(io) | DataError::Recv(io)) => {
            of_io(io)
        }
        ClientError::Setup(text) if text.contains("Too many open files") => Reason::LocalFiles,
        _ => Reason::Other,
    }
}

/// The reason of a shared test's flow that failed, from the error the
/// engine wrote for it (the flow's socket error, as the OS words it).
pub fn classify_flow(why: &str) -> Reason {
    const WORDS: &[(&str, Reason)] = &[
        ("Too many open files", Reason::LocalFiles),
        ("Connection refused", Reason::Refused),
        ("timed out", Reason::Timeout),
    ];
    WORDS
        .iter()
        .find(|(words, _)| why.contains(words))
        .map_or(Reason::Other, |(_, reason)| *reason)
}

/// One stream that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamFailure {
    pub stream: usize,
    pub host: String,
    /// The level whose start or run it failed in.
    pub level: usize,
    pub phase: Phase,
    pub reason: Reason,
    /// The error as it was reported (first line).
    pub detail: String,
}

impl StreamFailure {
    pub fn new(
        stream: usize,
        host: &str,
        level: usize,
        phase: Phase,
        reason: Reason,
        detail: &str,
    ) -> Self {
        StreamFailure {
            stream,
            host: host.to_string(),
            level,
            phase,
            reason,
            detail: detail.lines().next().unwrap_or("").to_string(),
        }
    }

    pub fn from_error(
        stream: usize,
        host: &str,
        level: usize,
        phase: Phase,
        e: &ClientError,
    ) -> Self {
        Self::new(
            stream,
            host,
            level,
            phase,
            classify(e, phase),
            &e.to_string(),
        )
    }
}

/// Failures of one host, level, phase and reason, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureGroup {
    pub host: String,
    pub level: usize,
    pub phase: Phase,
    pub reason: Reason,
    pub count: usize,
    /// The first stream's error, as an example.
    pub detail: String,
    pub hint: String,
}

/// Group failures per host, level, phase and reason; `port` and the most
/// streams netagg asked each host for at once go into the hints.
pub fn group(
    failures: &[StreamFailure],
    port: u16,
    streams_per_host: impl Fn(&str) -> usize,
) -> Vec<FailureGroup> {
    let defaults = netserver::limits::Limits::default();
    let mut groups: Vec<FailureGroup> = Vec::new();
    for f in failures {
        match groups.iter_mut().find(|g| {
            (g.host.as_str(), g.level, g.phase, g.reason)
                == (f.host.as_str(), f.level, f.phase, f.reason)
        }) {
            Some(g) => g.count += 1,
            None => groups.push(FailureGroup {
                host: f.host.clone(),
                level: f.level,
                phase: f.phase,
                reason: f.reason,
                count: 1,
                detail: f.detail.clone(),
                hint: text_of(f.reason)
                    .hint
                    .replace("{host}", &f.host)
                    .replace("{port}", &port.to_string())
                    .replace("{streams}", &streams_per_host(&f.host).to_string())
                    .replace("{default_tests}", &defaults.max_tests.to_string())
                    .replace(
                        "{default_connections}",
                        &defaults.max_connections.to_string(),
                    ),
            }),
        }
    }
    groups.sort_by(|a, b| {
        (a.level, &a.host, a.phase, a.reason).cmp(&(b.level, &b.host, b.phase, b.reason))
    });
    groups
}

impl FailureGroup {
    /// One line: who, how many, why, and what to do.
    pub fn line(&self, level_streams: u32) -> String {
        let t = text_of(self.reason);
        let mut out = format!(
            "{} stream{} to {} failed at {} of level {} ({} streams): {}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            self.host,
            self.phase.name(),
            self.level,
            level_streams,
            t.label
        );
        if self.reason == Reason::Other || self.reason == Reason::Timeout {
            let _ = write!(out, " ({})", self.detail);
        }
        if !self.hint.is_empty() {
            let _ = write!(out, "; {}", self.hint);
        }
        out
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "host": self.host,
            "level": self.level,
            "phase": self.phase.name(),
            "reason": text_of(self.reason).key,
            "reason_text": text_of(self.reason).label,
            "count": self.count,
            "example": self.detail,
            "hint": self.hint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(errno: i32) -> std::io::Error {
        std::io::Error::from_raw_os_error(errno)
    }

    #[test]
    fn errors_are_sorted_into_reasons() {
        let cases: Vec<(ClientError, Phase, Reason)> = vec![
            (
                ClientError::NoServer("x".into(), libc::ECONNREFUSED),
                Phase::Setup,
                Reason::Refused,
            ),
            (
                ClientError::NoServer("x".into(), libc::ETIMEDOUT),
                Phase::Setup,
                Reason::Timeout,
            ),
            (
                ClientError::NoServer("x".into(), libc::EMFILE),
                Phase::Setup,
                Reason::LocalFiles,
            ),
            (
                ClientError::Remote {
                    errno: libc::EBUSY,
                    text: "busy".into(),
                },
                Phase::Setup,
                Reason::MaxTests,
            ),
            (
                ClientError::Remote {
                    errno: libc::EMFILE,
                    text: "files".into(),
                },
                Phase::Setup,
                Reason::RemoteFiles,
            ),
            (
                ClientError::Control(ChannelError::Closed),
                Phase::Setup,
                Reason::ClosedUnanswered,
            ),
            (
                ClientError::Control(ChannelError::Closed),
                Phase::Stop,
                Reason::Other,
            ),
            (
                ClientError::Control(ChannelError::Io(io(libc::ECONNRESET))),
                Phase::Setup,
                Reason::ClosedUnanswered,
            ),
            (
                ClientError::Control(ChannelError::TimedOut(std::time::Duration::from_secs(1))),
                Phase::Setup,
                Reason::Timeout,
            ),
            (
                ClientError::Data(DataError::Connect(io(libc::ECONNREFUSED))),
                Phase::Run,
                Reason::Refused,
            ),
        ];
        for (e, phase, reason) in cases {
            assert_eq!(classify(&e, phase), reason, "{e}");
        }
    }

    #[test]
    fn failures_are_grouped_per_host_with_the_hint() {
        let f = |stream, host: &str, reason| {
            StreamFailure::new(
                stream,
                host,
                2,
                Phase::Setup,
                reason,
                "netperf: remote error 16\nmore",
            )
        };
        let failures = vec![
            f(5, "lg2", Reason::MaxTests),
            f(3, "lg1", Reason::Refused),
            f(7, "lg2", Reason::MaxTests),
        ];
        let groups = group(&failures, 12865, |h| if h == "lg2" { 512 } else { 1 });
        assert_eq!(groups.len(), 2);
        assert_eq!((groups[1].host.as_str(), groups[1].count), ("lg2", 2));
        let line = groups[1].line(1024);
        assert!(
            line.starts_with("2 streams to lg2 failed at set-up of level 2 (1024 streams): EBUSY")
                && line.contains("`netserver --max-tests 512`"),
            "{line}"
        );
        assert!(groups[0].line(4).contains("port 12865"));
        let json = groups[1].to_json();
        assert_eq!(json["reason"], "ebusy_max_tests");
        assert_eq!(json["example"], "netperf: remote error 16");
    }
}
