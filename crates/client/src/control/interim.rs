//! The interim sampler (-D): a thread that wakes at fixed instants (start +
//! k x interval, so errors never accumulate), reads the work units the data
//! thread publishes in its `StopFlag`, and prints the rate over the interval
//! that really elapsed, flushed line by line. The data thread is never asked
//! for anything, so the intervals are as exact as the wake-ups. An interval
//! in which no work completed is not reported on its own: it becomes part of
//! the next one, as netperf's intervals end only when work completes.
//! Each interval costs one getsockopt(TCP_INFO) of the TCP data socket,
//! when there is one; the previous reading is kept.

use crate::report::interim::{render_interim_with, Interim, InterimStyle};
use crate::report::omni::table::Selector;
use crate::report::units::throughput;
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::measure::tcp_info::TcpInterval;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What -D asked for and how the test counts its work.
#[derive(Debug, Clone)]
pub struct InterimOptions {
    pub interval: Duration,
    pub style: InterimStyle,
    /// The -f letter the rate is shown in ('x' for transactions).
    pub unit: char,
    /// Keyval lines are numbered across iterations of a confidence run.
    pub next_index: Arc<AtomicUsize>,
    /// When a timed test ends, from the start of its data phase: the last
    /// interval then runs to the end instead of leaving a sliver after the
    /// last tick.
    pub test_end: Option<Duration>,
    /// The TCP data socket whose TCP_INFO each interval reads (set by the
    /// test for a single TCP connection; it stays open until the sampler
    /// has finished).
    pub tcp_info_fd: Option<std::os::fd::RawFd>,
    /// Print `Interim TCP:` under each human line (-v 2).
    pub tcp_lines: bool,
    /// TCP_INFO selectors (-o/-k) each CSV or keyval interim shows after
    /// netperf's fields, in selection order; none: netperf's lines as they
    /// are.
    pub columns: Vec<&'static Selector>,
    /// Print the interim lines after the test rather than live: a
    /// REMOTE_TCP_* column is known only once the netserver's series has
    /// arrived with its results.
    pub deferred: bool,
}

impl InterimOptions {
    fn units_label(&self) -> String {
        format!("{}/s", crate::report::units::label(self.unit))
    }

    /// Bytes (or transactions, with 'x') over `secs` in the -f unit.
    fn rate(&self, units: u64, secs: f64) -> f64 {
        throughput(units as f64, secs, self.unit)
    }
}

/// Print one interim result as `opts` asks, flushed: its line(s), the
/// TCP columns selected, and (-v 2) our end's `Interim TCP:` line.
pub fn emit(interim: &Interim, opts: &InterimOptions) {
    let index = opts.next_index.fetch_add(
        usize::from(opts.style == InterimStyle::Keyval),
        Ordering::Relaxed,
    );
    let mut text = render_interim_with(interim, opts.style, index, &opts.columns);
    if let Some(tcp) = interim.tcp.filter(|_| opts.tcp_lines) {
        if opts.style == InterimStyle::Human {
            text.push_str(&tcp.line());
        }
    }
    if !text.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// A running sampler; `finish` ends it and returns what it reported.
pub struct InterimSampler {
    done: Sender<(u64, Instant)>,
    thread: Option<JoinHandle<Vec<Interim>>>,
}

fn epoch_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

struct Tally {
    opts: InterimOptions,
    previous_units: u64,
    previous_at: Instant,
    /// TCP_INFO as the last interval ended.
    previous_tcp: Option<libc::tcp_info>,
    reported: Vec<Interim>,
}

impl Tally {
    /// Report the interval that ends now with `units` done in all.
    fn report(&mut self, units: u64, at: Instant) {
        let secs = at.duration_since(self.previous_at).as_secs_f64();
        if secs <= 0.0 {
            return;
        }
        let now_tcp = self
            .opts
            .tcp_info_fd
            .and_then(netperf_data::net::socket::tcp_info);
        let tcp = match (&self.previous_tcp, &now_tcp) {
            (Some(before), Some(now)) => Some(TcpInterval::between(before, now, secs)),
            _ => None,
        };
        let interim = Interim {
            value: self
                .opts
                .rate(units.saturating_sub(self.previous_units), secs),
            units: self.opts.units_label(),
            interval_secs: secs,
            ending_epoch_secs: epoch_secs(),
            tcp,
            remote_tcp: None,
        };
        if !self.opts.deferred {
            emit(&interim, &self.opts);
        }
        self.reported.push(interim);
        self.previous_units = units;
        self.previous_at = at;
        self.previous_tcp = now_tcp;
    }
}

impl InterimSampler {
    /// Start sampling `stop`'s published units every `opts.interval`.
    pub fn start(opts: InterimOptions, stop: StopFlag) -> InterimSampler {
        let (done, finished) = mpsc::channel::<(u64, Instant)>();
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("interim".into())
            .spawn(move || {
                let interval = opts.interval.max(Duration::from_millis(1));
                let previous_tcp = opts
                    .tcp_info_fd
                    .and_then(netperf_data::net::socket::tcp_info);
                let mut tally = Tally {
                    opts,
                    previous_units: stop.units(),
                    previous_at: started,
                    previous_tcp,
                    reported: Vec::new(),
                };
                let mut tick: u32 = 1;
                // A tick this close to the end is left to the final report.
                let last_tick_before = tally
                    .opts
                    .test_end
                    .map(|end| end.saturating_sub(interval / 100));
                loop {
                    let offset = interval * tick;
                    let got = if last_tick_before.is_some_and(|last| offset >= last) {
                        finished.recv().map_err(|_| RecvTimeoutError::Disconnected)
                    } else {
                        let deadline = started + offset;
                        finished.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    };
                    match got {
                        Err(RecvTimeoutError::Timeout) => {
                            // As netperf, an interval ends only with work
                            // done: one in which nothing completed (a stall,
                            // a lost datagram) runs on into the next, and no
                            // zero is printed (flent's latency from a UDP_RR
                            // rate of 0 is undefined and stops its run).
                            let units = stop.units();
                            if units > tally.previous_units {
                                tally.report(units, Instant::now());
                            }
                            tick = tick.saturating_add(1);
                            // After a stall, skip the instants already past.
                            while started + interval * tick <= Instant::now() {
                                tick = tick.saturating_add(1);
                            }
                        }
                        Ok((units, at)) => {
                            // The last, partial interval, if it did any work
                            // and is not a sliver of a count test's end.
                            let secs = at.duration_since(tally.previous_at);
                            if units > tally.previous_units && secs >= interval / 100 {
                                tally.report(units, at);
                            }
                            return tally.reported;
                        }
                        Err(RecvTimeoutError::Disconnected) => return tally.reported,
                    }
                }
            })
            .ok();
        InterimSampler { done, thread }
    }

    /// The data phase ended at `at` with `units` done: report the last
    /// partial interval and return every interim result.
    pub fn finish(mut self, units: u64, at: Instant) -> Vec<Interim> {
        let _ = self.done.send((units, at));
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sampler printing nothing every `interval_ms`, and the flag it reads.
    fn silent_sampler(interval_ms: u64) -> (StopFlag, InterimSampler) {
        let stop = StopFlag::new();
        let opts = InterimOptions {
            interval: Duration::from_millis(interval_ms),
            style: InterimStyle::Silent,
            unit: 'x',
            next_index: Arc::new(AtomicUsize::new(0)),
            test_end: None,
            tcp_info_fd: None,
            tcp_lines: false,
            columns: Vec::new(),
            deferred: false,
        };
        (stop.clone(), InterimSampler::start(opts, stop))
    }

    #[test]
    fn samples_at_the_interval_and_reports_the_tail() {
        let (stop, sampler) = silent_sampler(50);
        for n in 1..=40u64 {
            stop.publish(n * 10);
            std::thread::sleep(Duration::from_millis(5));
        }
        let got = sampler.finish(401, Instant::now());
        assert!(got.len() >= 2, "{got:?}");
        assert!(got.iter().all(|i| i.units == "Trans/s" && i.value >= 0.0));
        // The intervals add up to the whole run, the tail included.
        let total: f64 = got.iter().map(|i| i.interval_secs).sum();
        assert!(total > 0.15, "{total}");
    }

    #[test]
    fn a_stall_is_no_zero_but_part_of_the_next_interval() {
        let (stop, sampler) = silent_sampler(20);
        stop.publish(10);
        std::thread::sleep(Duration::from_millis(50));
        // Nothing completes for at least five intervals.
        std::thread::sleep(Duration::from_millis(100));
        stop.publish(20);
        std::thread::sleep(Duration::from_millis(50));
        let got = sampler.finish(20, Instant::now());
        assert!(!got.is_empty());
        assert!(got.iter().all(|i| i.value > 0.0), "{got:?}");
        // Some interval spans the stall: longer than the stall itself.
        assert!(got.iter().any(|i| i.interval_secs >= 0.1), "{got:?}");
        let total: f64 = got.iter().map(|i| i.interval_secs).sum();
        assert!(total >= 0.15, "{total}");
    }
}
