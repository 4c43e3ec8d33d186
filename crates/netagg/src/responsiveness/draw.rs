//! A responsiveness run drawn: the phase table as text (stdout and
//! responsiveness.txt) and the page (responsiveness.html) with the probe's
//! latency over time across the phases — all from the run as its saved
//! JSON holds it, so `netagg report` draws them again byte for byte.

use super::model::{Latency, Run, Verdict, HOST_BUSY_PERCENT};
use netperf_pages::chart::{Axis, Bands, Look, Note, Plot, Series, BLACK_INK, BLUE, VERMILLION};
use netperf_pages::page::{Page, Table};
use std::fmt::Write as _;

/// The files of a run: (name, contents).
pub fn files(run: &Run) -> Vec<(String, String)> {
    vec![
        ("responsiveness.txt".into(), text(run)),
        ("responsiveness.html".into(), page(run)),
    ]
}

fn ms(us: Option<f64>) -> String {
    us.map_or("-".into(), |v| format!("{:.3}", v / 1000.0))
}

fn mbps(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.1}"))
}

/// The verdict's words.
fn verdict_text(run: &Run, k: usize) -> String {
    match run.verdict(k) {
        Verdict::Inflated {
            ratio,
            raw_ratio,
            p50_diff_ms,
        } => {
            let busy = match run.phases[k].cpu_busy.filter(|c| *c >= HOST_BUSY_PERCENT) {
                Some(cpu) => format!("; this host's CPUs {cpu:.0}% busy: part may be here"),
                None => String::new(),
            };
            format!("inflated: P99 x{ratio:.1} (raw x{raw_ratio:.1}), P50 {p50_diff_ms:+.3} ms{busy}")
        }
        Verdict::WithinNoise => "no inflation beyond noise".into(),
        Verdict::SenderSlip { late } => format!(
            "no inflation beyond noise on the path (raw P99 within it; this host's sends slipped, {late} late)"
        ),
        Verdict::OnThisHost { raw_ratio } => format!(
            "no path to inflate over loopback (raw P99 x{raw_ratio:.1}: this host's own contention)"
        ),
        Verdict::NotCompared if run.phases[k].name == "idle" => "(the reference)".into(),
        Verdict::NotCompared => "not compared".into(),
    }
}

/// The columns of the phase table: heading and the cell of phase k.
type Column = (&'static str, fn(&Run, usize) -> String);

const COLUMNS: [Column; 12] = [
    ("phase", |r, k| r.phases[k].name.clone()),
    ("P50 ms", |r, k| ms(r.phases[k].probe.co_p50)),
    ("P90 ms", |r, k| ms(r.phases[k].probe.co_p90)),
    ("P99 ms", |r, k| ms(r.phases[k].probe.co_p99)),
    ("raw P99 ms", |r, k| ms(r.phases[k].probe.raw_p99)),
    ("sent", |r, k| r.phases[k].probe.sent.to_string()),
    ("lost", |r, k| r.phases[k].probe.lost.to_string()),
    ("untimed", |r, k| r.phases[k].probe.unanswered.to_string()),
    ("up Mb/s", |r, k| mbps(r.phases[k].up_mbps)),
    ("down Mb/s", |r, k| mbps(r.phases[k].down_mbps)),
    ("CPU %", |r, k| {
        r.phases[k]
            .cpu_busy
            .map_or("-".into(), |c| format!("{c:.0}"))
    }),
    ("against idle", verdict_text),
];

/// What the run was, in one line.
fn heading(run: &Run) -> String {
    format!(
        "{} probe at {} requests/s to {}; bulk: {} TCP flows per direction per load generator ({}); {} s of probing per phase, {} s settle after the bulk flows start",
        run.probe_test,
        run.probe_rate,
        run.hosts.first().map_or("-", String::as_str),
        run.flows,
        run.hosts.join(", "),
        run.duration,
        run.settle
    )
}

/// The noise rule as it applied to this run.
fn noise_line(run: &Run) -> String {
    match (run.idle_noise(Latency::Raw), run.idle_noise(Latency::Corrected)) {
        (Some((raw, raw_spread)), Some((co, co_spread))) => format!(
            "Noise: idle raw P99 {} ms, its seconds' raw P99s spread over {} ms (corrected: {} and {} ms). A loaded phase counts as inflated only when its raw P99 is above {} ms (the path, not this host's late sends), and never over loopback, where the only path is this host; an inflated phase with this host's CPUs {:.0}% busy or more may also have waited for a CPU here.",
            ms(Some(raw)),
            ms(Some(raw_spread)),
            ms(Some(co)),
            ms(Some(co_spread)),
            ms(Some(raw + raw_spread)),
            HOST_BUSY_PERCENT
        ),
        _ => "Noise: no idle phase with answered probes, so no phase is compared.".into(),
    }
}

const EXPLAINED: &str = "Latencies are the probe's corrected ones (from each request's intended send time on the open-loop schedule), percentiles of the phase's merged histograms; raw P99 is from the actual send. Untimed: requests still in flight when a probe test ended (neither timed nor lost). Throughput: the bulk flows' over their whole test, summed over the load generators.";

const INTERRUPTED: &str =
    "Interrupted: stopped by a signal; the phases above are those measured until then.";

/// The phase table as text, the noise rule and any problems.
pub fn text(run: &Run) -> String {
    let rows: Vec<Vec<String>> = (0..run.phases.len())
        .map(|k| COLUMNS.iter().map(|(_, cell)| cell(run, k)).collect())
        .collect();
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(c, (head, _))| rows.iter().map(|r| r[c].len()).fold(head.len(), usize::max))
        .collect();
    let mut out = format!("{}\n\n", heading(run));
    let mut line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (t, w))| match c {
                0 => format!("{t:<w$}"),
                _ if c == COLUMNS.len() - 1 => t.clone(),
                _ => format!("{t:>w$}"),
            })
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(COLUMNS.iter().map(|(h, _)| h.to_string()).collect());
    for row in rows {
        line(row);
    }
    let _ = writeln!(out, "\n{}", noise_line(run));
    if run.interrupted {
        let _ = writeln!(out, "{INTERRUPTED}");
    }
    for phase in &run.phases {
        for p in &phase.problems {
            let _ = writeln!(out, "problem in {}: {p}", phase.name);
        }
    }
    out
}

/// The page: the table, the chart, the rule, the context.
pub fn page(run: &Run) -> String {
    let mut page = Page::new("netagg responsiveness: latency under working load");
    let mut table = Table::new(COLUMNS.iter().map(|(h, _)| *h));
    for k in 0..run.phases.len() {
        table.row(COLUMNS.iter().enumerate().map(|(c, (_, cell))| {
            let t = cell(run, k);
            match c {
                0 => netperf_pages::page::Cell::label(t),
                _ if c == COLUMNS.len() - 1 => netperf_pages::page::Cell::text(t),
                _ => netperf_pages::page::Cell::number(t),
            }
        }));
    }
    page.section("phases", "Phases", |p| {
        p.paragraph(&heading(run)).table(&table).note(EXPLAINED);
        p.paragraph(&noise_line(run));
        if run.interrupted {
            p.caution(INTERRUPTED);
        }
        for phase in &run.phases {
            for problem in &phase.problems {
                p.caution(&format!("{}: {problem}", phase.name));
            }
        }
    });
    page.section("over-time", "Latency over time", |p| {
        p.figure(
            &chart(run).svg(),
            "Each probe test's corrected P50 and P99 at its end; the phases marked, the bulk flows' set-up and settling shaded.",
        );
    });
    page.section("context", "Context", |p| {
        p.context_list(
            [
                ("Started (UTC)", run.started.clone()),
                ("Load generators", run.hosts.join(", ")),
                (
                    "Probe",
                    format!("{} at {} requests/s", run.probe_test, run.probe_rate),
                ),
                (
                    "Bulk flows",
                    format!("{} per direction per load generator", run.flows),
                ),
            ],
            &run.command_line,
        );
    });
    page.reproduce(&[(
        "Draw this page again from the saved run:",
        "netagg report responsiveness.json --out DIR",
    )]);
    page.finish()
}

/// Per-probe-test corrected P99 and P50 in ms over the run, the phases
/// named at their middle and ruled at their start.
fn chart(run: &Run) -> Plot {
    let points = |pick: fn(&super::model::Probe) -> Option<f64>| -> Vec<(f64, f64)> {
        run.seconds
            .iter()
            .filter_map(|s| pick(&s.probe).map(|us| (s.t, us / 1000.0)))
            .collect()
    };
    let mut plot = Plot::new(
        "Probe latency (corrected) over the phases",
        Axis::si("seconds from the start"),
        Axis::si("latency, ms"),
    );
    plot.series = vec![
        Series::line(points(|p| p.co_p99), Look::new(VERMILLION, 0))
            .named("P99")
            .dotted(),
        Series::line(points(|p| p.co_p50), Look::new(BLUE, 1))
            .named("P50")
            .dotted(),
    ];
    plot.rules = run.phases.iter().map(|p| p.start).collect();
    plot.notes = run
        .phases
        .iter()
        .map(|p| Note {
            text: p.name.clone(),
            x: (p.start + p.end) / 2.0,
            height: 0.95,
            colour: BLACK_INK,
            size: 16,
        })
        .collect();
    let settling: Vec<(f64, f64)> = run
        .phases
        .iter()
        .filter(|p| super::phase_kind(&p.name).is_some_and(|k| !k.bulk.is_empty()))
        .map(|p| (p.start, p.probe_start))
        .collect();
    if !settling.is_empty() {
        plot.bands = Some(Bands {
            name: "bulk flows setting up and settling (no probe)".into(),
            spans: settling,
        });
    }
    let end = run.phases.last().map_or(1.0, |p| p.end.max(1.0));
    plot.x = plot.x.range(0.0, end);
    plot
}
