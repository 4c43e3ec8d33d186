//! A TCP connection's TCP_INFO over a test, for an end that reports it
//! after the test (netserver, asked by our netperf): a thread of its own
//! wakes at start + k x interval (no drift) and reads TCP_INFO once per
//! interval — one getsockopt, the previous reading is kept — so the data
//! loop never sees it. At most `MAX_RECORDS` intervals are kept, the first
//! ones; later ones are counted as dropped.

use crate::net::socket::tcp_info;
use netperf_wire::tcp_series::{TcpInterval, TcpRecord, TcpSeries, MAX_RECORDS};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running sampler; `finish` ends it and returns the series.
pub struct TcpSampler {
    fd: i32,
    started: Instant,
    done: Option<Sender<()>>,
    thread: Option<JoinHandle<Sampled>>,
}

/// What the thread kept, and the reading its last interval ended with.
#[derive(Default)]
struct Sampled {
    records: Vec<TcpRecord>,
    dropped: u32,
    last: Option<(Instant, libc::tcp_info)>,
}

impl Sampled {
    /// Keep the interval from the last reading to `now` (read at `at`).
    fn add(&mut self, started: Instant, at: Instant, now: libc::tcp_info) {
        if let Some((before_at, before)) = &self.last {
            let secs = at.duration_since(*before_at).as_secs_f64();
            if self.records.len() < MAX_RECORDS {
                self.records.push(TcpRecord {
                    end_secs: at.duration_since(started).as_secs_f64(),
                    interval_secs: secs,
                    tcp: TcpInterval::between(before, &now, secs),
                });
            } else {
                self.dropped = self.dropped.saturating_add(1);
            }
        }
        self.last = Some((at, now));
    }
}

impl TcpSampler {
    /// Start on TCP socket `fd`, which must stay open until `finish`; every
    /// `interval`, or (None) only the whole test at `finish`.
    pub fn start(fd: i32, interval: Option<Duration>) -> TcpSampler {
        let started = Instant::now();
        let (done, finished) = mpsc::channel::<()>();
        let thread = interval.and_then(|interval| {
            let interval = interval.max(Duration::from_millis(1));
            std::thread::Builder::new()
                .name("tcp-info".into())
                .spawn(move || {
                    let mut sampled = Sampled::default();
                    if let Some(first) = tcp_info(fd) {
                        sampled.last = Some((started, first));
                    }
                    let mut tick: u32 = 1;
                    loop {
                        let deadline = started + interval * tick;
                        let wait = deadline.saturating_duration_since(Instant::now());
                        match finished.recv_timeout(wait) {
                            Err(RecvTimeoutError::Timeout) => {}
                            _ => return sampled,
                        }
                        let at = Instant::now();
                        // The one getsockopt of the interval.
                        if let Some(now) = tcp_info(fd) {
                            sampled.add(started, at, now);
                        }
                        tick = tick.saturating_add(1);
                        // After a stall, skip the instants already past.
                        while started + interval * tick <= Instant::now() {
                            tick = tick.saturating_add(1);
                        }
                    }
                })
                .ok()
        });
        TcpSampler {
            fd,
            started,
            done: Some(done),
            thread,
        }
    }

    /// Stop, and return the intervals with the last partial one (unless it
    /// is a sliver of under a millisecond) and the whole test.
    pub fn finish(mut self) -> TcpSeries {
        self.done.take();
        let mut sampled = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let at = Instant::now();
        let Some(now) = tcp_info(self.fd) else {
            return TcpSeries::default();
        };
        let tail = sampled
            .last
            .is_some_and(|(before, _)| at.duration_since(before) >= Duration::from_millis(1));
        if tail {
            sampled.add(self.started, at, now);
        }
        let secs = at.duration_since(self.started).as_secs_f64();
        TcpSeries {
            records: sampled.records,
            dropped: sampled.dropped,
            whole: Some(TcpRecord {
                end_secs: secs,
                interval_secs: secs,
                tcp: TcpInterval::whole(&now, secs),
            }),
        }
    }
}

impl Drop for TcpSampler {
    fn drop(&mut self) {
        self.done.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn samples_a_connection_every_interval_and_over_its_life() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut served, _) = listener.accept().unwrap();
        let sampler = TcpSampler::start(served.as_raw_fd(), Some(Duration::from_millis(20)));
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut n = 0;
            while let Ok(k) = c.read(&mut buf) {
                if k == 0 {
                    break;
                }
                n += k;
            }
            n
        });
        let chunk = vec![7u8; 1 << 16];
        let until = Instant::now() + Duration::from_millis(150);
        while Instant::now() < until {
            served.write_all(&chunk).unwrap();
        }
        let series = sampler.finish();
        served.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(reader.join().unwrap() > 0);
        assert!(series.records.len() >= 2, "{series:?}");
        assert!(series.records.iter().all(|r| r.tcp.snd_cwnd > 0));
        let whole = series.whole.unwrap();
        assert!(whole.tcp.rtt_us > 0 && whole.tcp.busy > 0.0, "{whole:?}");
        // Without an interval: the whole test alone, and no thread.
        let quiet = TcpSampler::start(served.as_raw_fd(), None).finish();
        assert!(quiet.records.is_empty() && quiet.whole.is_some());
    }
}
