//! The files the seed's runemomniaggdemo.sh leaves behind, written from a
//! netagg run so that existing post-processing (post_proc.py, and `netagg
//! post`) keeps working: `netperf_<type>.log` with its start, pause, resume
//! and stop lines, and one `netperf_<type>_<NNNNN>_to_<host>.out` per stream
//! with netperf's interim CSV lines and then its final `-o all` line.

use super::runner::{Event, Recording};
use netperf_client::report::interim::{render_interim, Interim, InterimStyle};
use std::fmt::Write as _;
use std::path::Path;

/// `date +%s.%N`, as the script stamps its lines.
fn stamp(epoch: f64) -> String {
    let secs = epoch.floor();
    let nanos = ((epoch - secs) * 1e9).round().clamp(0.0, 999_999_999.0) as u64;
    format!("{}.{nanos:09}", secs as i64)
}

/// The run log's text for test type `test`.
pub fn log_text(rec: &Recording, test: &str) -> String {
    let mut out = String::new();
    for event in &rec.events {
        let _ = match event {
            Event::Started(at) => writeln!(out, "Starting netperfs at {} for {test}", stamp(*at)),
            Event::StreamStarted(host) => {
                writeln!(
                    out,
                    "Starting netperfs on localhost targeting {host} for {test}"
                )
            }
            Event::Pausing { secs, streams, at } => writeln!(
                out,
                "Pausing for {secs} seconds at {} with {streams} netperfs running for {test}",
                stamp(*at)
            ),
            Event::Resuming(at) => writeln!(out, "Resuming at {} for {test}", stamp(*at)),
            Event::StartedBy(at) => writeln!(out, "Netperfs started by {} for {test}", stamp(*at)),
            Event::Stopping(at) => writeln!(out, "Netperfs stopping {} for {test}", stamp(*at)),
            Event::Stopped(at) => writeln!(out, "Netperfs stopped {} for {test}", stamp(*at)),
        };
    }
    out
}

/// One stream's .out text: its interim CSV lines, then its final line.
pub fn out_text(rec: &Recording, stream: usize, units: &str) -> String {
    let mut out = String::new();
    for &(_, interval, ending, rate) in rec.stream_samples.iter().filter(|s| s.0 == stream) {
        let interim = Interim {
            value: rate,
            units: units.to_string(),
            interval_secs: interval,
            ending_epoch_secs: ending,
            tcp: None,
            remote_tcp: None,
        };
        out.push_str(&render_interim(&interim, InterimStyle::Csv, 0));
    }
    if let Some(line) = rec.streams.get(stream).and_then(|s| s.final_line.as_ref()) {
        out.push_str(line);
    }
    out
}

/// Write the log and the .out files into `dir`; returns the log's path.
pub fn write(
    rec: &Recording,
    dir: &Path,
    test: &str,
    units: &str,
) -> std::io::Result<std::path::PathBuf> {
    let log = dir.join(format!("netperf_{test}.log"));
    std::fs::write(&log, log_text(rec, test))?;
    for (i, s) in rec.streams.iter().enumerate() {
        // A stream that was never set up ran no netperf to leave a file;
        // its failure is in the summary.
        if s.ready_s.is_none() {
            continue;
        }
        // Host names become part of a file name: keep them tame.
        let host: String = s
            .host
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("netperf_{test}_{i:05}_to_{host}.out");
        std::fs::write(dir.join(name), out_text(rec, i, units))?;
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_lines_as_the_script_writes_them() {
        assert_eq!(stamp(1_700_000_000.25), "1700000000.250000000");
        let rec = Recording {
            port: 12865,
            events: vec![
                Event::Started(10.5),
                Event::StreamStarted("lg1".into()),
                Event::Pausing {
                    secs: 30,
                    streams: 1,
                    at: 11.0,
                },
                Event::Resuming(41.0),
                Event::StartedBy(41.1),
                Event::Stopping(71.1),
                Event::Stopped(71.2),
            ],
            streams: vec![super::super::runner::StreamEnd {
                host: "lg1".into(),
                final_line: Some("Stream,UDP\n".into()),
                remote: None,
                level: 0,
                ready_s: Some(0.5),
                running_s: Some(0.6),
                flow: None,
            }],
            stream_samples: vec![(0, 1.0, 12.0, 99.5)],
            start_epoch: 10.5,
            sample_interval: 1.0,
            ..Recording::default()
        };
        let log = log_text(&rec, "tps");
        assert!(log.starts_with("Starting netperfs at 10.500000000 for tps\n"));
        assert!(log
            .contains("Pausing for 30 seconds at 11.000000000 with 1 netperfs running for tps\n"));
        assert!(log.ends_with("Netperfs stopped 71.200000000 for tps\n"));
        assert_eq!(
            out_text(&rec, 0, "Trans/s"),
            "  99.50,Trans/s,1.000,12.000\nStream,UDP\n"
        );
    }
}
