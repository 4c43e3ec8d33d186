//! What a responsiveness run measured, as its saved JSON holds it and read
//! back from it (every member checked), and the one verdict rule: a loaded
//! phase's latency counts as inflated only beyond the idle phase's own
//! noise.

use netperf_base::saved::{count, list, number, seconds, text, RESPONSIVENESS};
use serde_json::{json, Value};

/// The probe's figures over one phase (or one second of it): corrected
/// percentiles from the merged histograms of its probe tests, never an
/// average of percentiles. Latencies in µs; None when nothing was answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    pub co_p50: Option<f64>,
    pub co_p90: Option<f64>,
    pub co_p99: Option<f64>,
    pub raw_p50: Option<f64>,
    pub raw_p99: Option<f64>,
    /// Requests sent, answered (timed), lost (UDP: unanswered after the
    /// loss timeout) and still in flight when a probe test ended (neither
    /// timed nor lost).
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    pub unanswered: u64,
    /// Requests sent a schedule interval or more after their intended
    /// time: the probe's own sender was held up (this host's CPU).
    pub late: u64,
}

/// One phase: idle, or the probe beside bulk flows in some direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phase {
    pub name: String,
    /// Seconds from the run's start: the phase's start (its bulk tests
    /// set up from here), the probe's start (the bulk flows moving and
    /// settled) and the phase's end.
    pub start: f64,
    pub probe_start: f64,
    pub end: f64,
    pub probe: Probe,
    /// The bulk flows' throughput, Mb/s, summed over the load generators;
    /// None in a direction the phase does not load.
    pub up_mbps: Option<f64>,
    pub down_mbps: Option<f64>,
    /// This host's CPU utilization (%) over the bulk tests, the busiest
    /// test's; None in the idle phase.
    pub cpu_busy: Option<f64>,
    /// What went wrong (a test that failed), one line each.
    pub problems: Vec<String>,
}

/// One probe test (a second, by default) in the series over time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Second {
    /// Index of its phase in `Run::phases`.
    pub phase: usize,
    /// Seconds from the run's start at the probe test's end.
    pub t: f64,
    pub probe: Probe,
}

/// A whole run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// UTC text and epoch seconds of the start (the phases' offsets count
    /// from it).
    pub started: String,
    pub start_epoch: f64,
    pub command_line: String,
    /// The load generators; the probe goes to the first.
    pub hosts: Vec<String>,
    /// Whether the probe's load generator is this host (a loopback address).
    pub loopback: bool,
    pub probe_test: String,
    pub probe_rate: f64,
    pub flows: u32,
    /// Seconds of probing per phase, and the wait after the bulk flows
    /// start before probing.
    pub duration: f64,
    pub settle: f64,
    pub phases: Vec<Phase>,
    pub seconds: Vec<Second>,
    /// Stopped by a signal before every phase ran.
    pub interrupted: bool,
}

/// This host's CPU utilization from which a page warns that an inflated
/// phase's probe may also have waited for a CPU here.
pub const HOST_BUSY_PERCENT: f64 = 80.0;

/// How a loaded phase compares with the idle one. The path is judged by
/// the raw P99 (from each request's actual send): the corrected one also
/// holds how late this host sent each request, which is this host's noise,
/// not the path's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Raw P99 beyond the idle raw P99 plus its seconds' spread: the
    /// ratios of the corrected and the raw P99s, and the corrected P50's
    /// difference in ms.
    Inflated {
        ratio: f64,
        raw_ratio: f64,
        p50_diff_ms: f64,
    },
    /// Corrected and raw P99 within the idle phase's own second-to-second
    /// spread.
    WithinNoise,
    /// Corrected P99 beyond the noise but raw P99 within it: corrected and
    /// raw differ only by when each request left, so the excess is the
    /// probe's own sends slipping behind the schedule on this host (CPU
    /// contention), not the path. `late`: sends a whole interval behind.
    SenderSlip { late: u64 },
    /// Raw P99 beyond the noise over loopback: there is no path but this
    /// host, so the excess is its own contention (the bulk flows and the
    /// probe share its CPUs), not a queue on a path.
    OnThisHost { raw_ratio: f64 },
    /// No idle phase, or a phase with no answered probe: nothing to compare.
    NotCompared,
}

/// Which P99 a noise band is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Latency {
    Corrected,
    Raw,
}

impl Latency {
    fn p99(self, p: &Probe) -> Option<f64> {
        match self {
            Latency::Corrected => p.co_p99,
            Latency::Raw => p.raw_p99,
        }
    }
}

impl Run {
    fn idle(&self) -> Option<usize> {
        self.phases.iter().position(|p| p.name == "idle")
    }

    /// The idle phase's P99 and its noise: the spread (highest less
    /// lowest) of its seconds' P99s.
    pub fn idle_noise(&self, latency: Latency) -> Option<(f64, f64)> {
        let idle = self.idle()?;
        let p99 = latency.p99(&self.phases[idle].probe)?;
        let per_second: Vec<f64> = self
            .seconds
            .iter()
            .filter(|s| s.phase == idle)
            .filter_map(|s| latency.p99(&s.probe))
            .collect();
        let spread = per_second.iter().copied().fold(f64::MIN, f64::max)
            - per_second.iter().copied().fold(f64::MAX, f64::min);
        Some((p99, spread.max(0.0)))
    }

    /// Phase `k`'s P99 over the idle one, and whether it is beyond the
    /// idle noise.
    fn against_idle(&self, k: usize, latency: Latency) -> Option<(f64, bool)> {
        let (idle_p99, spread) = self.idle_noise(latency)?;
        let p99 = latency.p99(&self.phases[k].probe)?;
        (idle_p99 > 0.0).then(|| (p99 / idle_p99, p99 > idle_p99 + spread))
    }

    /// The verdict on phase `k` against the idle phase.
    pub fn verdict(&self, k: usize) -> Verdict {
        let phase = &self.phases[k];
        let compared = (
            self.against_idle(k, Latency::Corrected),
            self.against_idle(k, Latency::Raw),
        );
        let ((ratio, co_beyond), (raw_ratio, raw_beyond)) = match compared {
            (Some(co), Some(raw)) if Some(k) != self.idle() => (co, raw),
            _ => return Verdict::NotCompared,
        };
        match (raw_beyond, co_beyond) {
            (false, false) => return Verdict::WithinNoise,
            (false, true) => {
                return Verdict::SenderSlip {
                    late: phase.probe.late,
                }
            }
            _ => {}
        }
        if self.loopback {
            return Verdict::OnThisHost { raw_ratio };
        }
        let idle_p50 = self.idle().and_then(|i| self.phases[i].probe.co_p50);
        Verdict::Inflated {
            ratio,
            raw_ratio,
            p50_diff_ms: match (phase.probe.co_p50, idle_p50) {
                (Some(a), Some(b)) => (a - b) / 1000.0,
                _ => f64::NAN,
            },
        }
    }

    /// The saved document.
    pub fn to_json(&self) -> Value {
        RESPONSIVENESS.stamped(json!({
            "started": self.started,
            "start_epoch": self.start_epoch,
            "command_line": self.command_line,
            "hosts": self.hosts,
            "loopback": self.loopback,
            "probe_test": self.probe_test,
            "probe_rate": self.probe_rate,
            "flows": self.flows,
            "duration": self.duration,
            "settle": self.settle,
            "interrupted": self.interrupted,
            "phases": self.phases.iter().map(phase_json).collect::<Vec<_>>(),
            "seconds": self.seconds.iter().map(|s| json!({
                "phase": s.phase,
                "t": s.t,
                "probe": probe_json(&s.probe),
            })).collect::<Vec<_>>(),
        }))
    }

    /// The run read back from its saved document.
    pub fn from_json(doc: &Value) -> Result<Run, String> {
        match netperf_base::saved::identify(doc)? {
            &RESPONSIVENESS => {}
            other => return Err(format!("not a responsiveness run but {}", other.format)),
        }
        let phases = list(doc, "phases")?
            .iter()
            .map(read_phase)
            .collect::<Result<Vec<_>, _>>()?;
        let series = list(doc, "seconds")?
            .iter()
            .map(|s| {
                let phase = count(s, "phase")?;
                match phase < phases.len() {
                    true => Ok(Second {
                        phase,
                        t: seconds(s, "t")?,
                        probe: read_probe(member(s, "probe")?)?,
                    }),
                    false => Err(format!("a second names phase {phase}, which is not there")),
                }
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Run {
            started: text(doc, "started")?,
            start_epoch: measured(doc, "start_epoch")?.unwrap_or(0.0),
            command_line: text(doc, "command_line")?,
            hosts: list(doc, "hosts")?
                .iter()
                .map(|h| h.as_str().map(str::to_string).ok_or("a host is not text"))
                .collect::<Result<_, _>>()?,
            loopback: doc
                .get("loopback")
                .and_then(Value::as_bool)
                .ok_or("\"loopback\" is missing or not true or false")?,
            probe_test: text(doc, "probe_test")?,
            probe_rate: positive(doc, "probe_rate")?,
            flows: u32::try_from(count(doc, "flows")?).map_err(|e| e.to_string())?,
            duration: seconds(doc, "duration")?,
            settle: seconds(doc, "settle")?,
            interrupted: doc
                .get("interrupted")
                .and_then(Value::as_bool)
                .ok_or("\"interrupted\" is missing or not true or false")?,
            phases,
            seconds: series,
        })
    }
}

fn phase_json(p: &Phase) -> Value {
    json!({
        "name": p.name,
        "start": p.start,
        "probe_start": p.probe_start,
        "end": p.end,
        "probe": probe_json(&p.probe),
        "up_mbps": p.up_mbps,
        "down_mbps": p.down_mbps,
        "cpu_busy_percent": p.cpu_busy,
        "problems": p.problems,
    })
}

fn probe_json(p: &Probe) -> Value {
    json!({
        "co_p50_us": p.co_p50, "co_p90_us": p.co_p90, "co_p99_us": p.co_p99,
        "raw_p50_us": p.raw_p50, "raw_p99_us": p.raw_p99,
        "sent": p.sent, "answered": p.answered, "lost": p.lost, "unanswered": p.unanswered,
        "late": p.late,
    })
}

fn member<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("\"{key}\" is missing"))
}

/// A number a run measures (finite, not negative, below a bound far past
/// any real one), or null for "not measured".
fn measured(v: &Value, key: &str) -> Result<Option<f64>, String> {
    match member(v, key)? {
        Value::Null => Ok(None),
        _ => {
            let x = number(v, key)?;
            match (0.0..=1e12).contains(&x) {
                true => Ok(Some(x)),
                false => Err(format!("\"{key}\" is not a figure a run measures: {x}")),
            }
        }
    }
}

fn positive(v: &Value, key: &str) -> Result<f64, String> {
    match measured(v, key)? {
        Some(x) if x > 0.0 => Ok(x),
        _ => Err(format!("\"{key}\" is not a positive number")),
    }
}

fn read_probe(v: &Value) -> Result<Probe, String> {
    let whole = |key: &str| count(v, key).map(|n| n as u64);
    Ok(Probe {
        co_p50: measured(v, "co_p50_us")?,
        co_p90: measured(v, "co_p90_us")?,
        co_p99: measured(v, "co_p99_us")?,
        raw_p50: measured(v, "raw_p50_us")?,
        raw_p99: measured(v, "raw_p99_us")?,
        sent: whole("sent")?,
        answered: whole("answered")?,
        lost: whole("lost")?,
        unanswered: whole("unanswered")?,
        late: whole("late")?,
    })
}

fn read_phase(v: &Value) -> Result<Phase, String> {
    let name = text(v, "name")?;
    // The name picks a row of the phase table; anything else is refused.
    if !super::PHASES.iter().any(|p| p.name == name) {
        return Err(format!("\"{name}\" is not a phase"));
    }
    let (start, probe_start, end) = (
        seconds(v, "start")?,
        seconds(v, "probe_start")?,
        seconds(v, "end")?,
    );
    if !(start <= probe_start && probe_start <= end) {
        return Err(format!("phase {name}'s times are out of order"));
    }
    Ok(Phase {
        name,
        start,
        probe_start,
        end,
        probe: read_probe(member(v, "probe")?)?,
        up_mbps: measured(v, "up_mbps")?,
        down_mbps: measured(v, "down_mbps")?,
        cpu_busy: measured(v, "cpu_busy_percent")?,
        problems: list(v, "problems")?
            .iter()
            .map(|p| {
                p.as_str()
                    .map(str::to_string)
                    .ok_or("a problem is not text")
            })
            .collect::<Result<_, _>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(p50: f64, p99: f64) -> Probe {
        Probe {
            co_p50: Some(p50),
            co_p99: Some(p99),
            raw_p99: Some(p99 - 10.0),
            answered: 100,
            sent: 100,
            ..Probe::default()
        }
    }

    fn run(loaded_p99: f64) -> Run {
        let phase = |name: &str, p: Probe| Phase {
            name: name.into(),
            probe: p,
            ..Phase::default()
        };
        Run {
            probe_rate: 100.0,
            phases: vec![
                phase("idle", probe(50.0, 100.0)),
                phase("upload", probe(5050.0, loaded_p99)),
            ],
            seconds: [80.0, 120.0, 100.0]
                .iter()
                .map(|&p99| Second {
                    phase: 0,
                    t: 1.0,
                    probe: probe(50.0, p99),
                })
                .collect(),
            ..Run::default()
        }
    }

    #[test]
    fn inflation_counts_only_beyond_the_idle_seconds_spread() {
        // Idle P99s 100 µs (raw 90), the seconds spread over 40 µs: up to
        // 140 (raw 130) is noise.
        let with_raw = |co: f64, raw: f64| {
            let mut r = run(co);
            r.phases[1].probe.raw_p99 = Some(raw);
            r.phases[1].probe.late = 12;
            r
        };
        assert_eq!(with_raw(139.0, 129.0).verdict(1), Verdict::WithinNoise);
        assert_eq!(with_raw(100.0, 90.0).verdict(0), Verdict::NotCompared);
        // Beyond it in corrected times only: the sends slipped, here.
        assert_eq!(
            with_raw(400.0, 100.0).verdict(1),
            Verdict::SenderSlip { late: 12 }
        );
        match with_raw(400.0, 360.0).verdict(1) {
            Verdict::Inflated {
                ratio,
                raw_ratio,
                p50_diff_ms,
            } => {
                assert_eq!((ratio, raw_ratio, p50_diff_ms), (4.0, 4.0, 5.0));
            }
            other => panic!("{other:?}"),
        }
        // Beyond it in raw times too, over loopback: this host, no path.
        let mut here = with_raw(400.0, 360.0);
        here.loopback = true;
        assert_eq!(here.verdict(1), Verdict::OnThisHost { raw_ratio: 4.0 });
    }

    #[test]
    fn a_run_reads_back_as_it_was_written() {
        let mut r = run(400.0);
        r.hosts = vec!["198.18.1.2".into()];
        r.probe_test = "TCP_RR".into();
        r.phases[1].up_mbps = Some(19.5);
        r.phases[1].problems = vec!["x".into()];
        r.interrupted = true;
        let back = Run::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let mut bad = r.to_json();
        bad["phases"][0]["name"] = json!("sideways");
        assert!(Run::from_json(&bad).unwrap_err().contains("not a phase"));
        let mut bad = r.to_json();
        bad["seconds"][0]["phase"] = json!(7);
        assert!(Run::from_json(&bad).is_err());
        let mut bad = r.to_json();
        bad["phases"][1]["probe"]["co_p99_us"] = json!(-3.0);
        assert!(Run::from_json(&bad).is_err());
    }
}
