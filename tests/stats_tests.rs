//! The statistics core checked against independent computations: Python's
//! `statistics` module (exact-rational mean and standard deviation, its
//! median and inclusive quantiles), a Python Student-t quantile from the
//! closed-form CDF for integer degrees of freedom (Abramowitz & Stegun
//! 26.7.3/26.7.4, inverted by bisection), a printed table of t critical
//! values, and the bootstrap's own contract (reproducible, interval around
//! the estimate, verdicts on clearly different and identical samples).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use netperf_ng::stats::{t_quantile, Bootstrap, Statistic, Summary, Verdict};

/// Fixed data sets; each has n ≥ 2 (Python's quantiles needs two points).
fn data_sets() -> Vec<Vec<f64>> {
    vec![
        vec![1.0, 2.0],
        vec![3.0, 1.0, 2.0],
        (1..=10).map(f64::from).collect(),
        // Throughput-like repetitions (Mbit/s).
        vec![
            941.23, 939.87, 942.01, 940.55, 938.12, 941.78, 940.02, 939.44, 941.9, 940.66, 937.5,
            942.3,
        ],
        // Latency-like with one outlier (µs).
        vec![
            52.1, 49.8, 50.3, 51.7, 48.9, 50.0, 250.4, 49.5, 50.8, 51.2, 49.9, 50.6, 50.1, 49.7,
            50.4, 51.0, 50.2, 49.6, 50.9, 51.3, 50.5,
        ],
        // A large offset, where a naive variance loses digits.
        vec![1e9 + 0.1, 1e9 + 0.25, 1e9 + 0.17, 1e9 + 0.31, 1e9 + 0.05],
        // Negative and mixed values.
        vec![-3.5, -1.25, 0.75, 2.0, -0.5, 4.25, -2.0],
        // Ties and an even count.
        vec![5.0, 5.0, 5.0, 7.0, 7.0, 9.0, 1.0, 5.0],
        // Thirty pseudo-random values from a fixed linear congruential sequence.
        (0..30u64)
            .map(|i| {
                let x = i
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                100.0 + (x >> 40) as f64 / 1e5
            })
            .collect(),
    ]
}

/// Per input line (space-separated repr floats), prints mean, median,
/// stdev, p5, p25, p75, p95, p99, t(0.975, n-1) and stdev/√n.
/// The Student-t 97.5 % quantile in plain Python (no scipy here).
const STUDENT_T: &str = include_str!("python/student_t.py");

const PYTHON_REFERENCE: &str = r#"
import math, statistics, sys

for line in sys.stdin:
    xs = [float(v) for v in line.split()]
    if not xs:
        continue
    q = statistics.quantiles(xs, n=100, method="inclusive")
    sd = statistics.stdev(xs)
    out = [statistics.mean(xs), statistics.median(xs), sd,
           q[4], q[24], q[74], q[94], q[98], t_975(len(xs) - 1), sd / math.sqrt(len(xs))]
    print(" ".join(repr(float(v)) for v in out))
"#;

/// Runs the Python reference on the data sets; `None` if python3 is missing.
fn python_reference(sets: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let mut child = match Command::new("python3")
        .args(["-c", &format!("{STUDENT_T}\n{PYTHON_REFERENCE}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            common::skip(format!(
                "python3 is not available ({e}); the Python comparison did not run"
            ));
            return None;
        }
    };
    let input: String = sets
        .iter()
        .map(|xs| {
            let line: Vec<String> = xs.iter().map(|v| format!("{v:?}")).collect();
            line.join(" ") + "\n"
        })
        .collect();
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write to python3");
    let out = child.wait_with_output().expect("python3 output");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Vec<f64>> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| l.split(' ').map(|v| v.parse().expect("float")).collect())
        .collect();
    assert_eq!(rows.len(), sets.len(), "one Python row per data set");
    Some(rows)
}

fn assert_close(what: &str, ours: f64, reference: f64, data: &[f64]) {
    let tolerance = 1e-9 * ours.abs().max(reference.abs());
    assert!(
        (ours - reference).abs() <= tolerance,
        "{what}: ours {ours:?}, Python {reference:?} (data {data:?})"
    );
}

#[test]
fn summary_matches_python_statistics() {
    let sets = data_sets();
    let Some(reference) = python_reference(&sets) else {
        return;
    };
    for (xs, py) in sets.iter().zip(&reference) {
        let s = Summary::of(xs).expect("summary");
        let p = s.percentiles;
        let stdev = s.stdev.expect("n >= 2 has a stdev");
        assert_eq!(s.n, xs.len());
        assert_close("mean", s.mean, py[0], xs);
        assert_close("median", s.median, py[1], xs);
        assert_close("stdev", stdev, py[2], xs);
        for (name, ours, theirs) in [
            ("p5", p.p5, py[3]),
            ("p25", p.p25, py[4]),
            ("p75", p.p75, py[5]),
            ("p95", p.p95, py[6]),
            ("p99", p.p99, py[7]),
        ] {
            assert_close(name, ours, theirs, xs);
        }
        let t = t_quantile(0.975, (xs.len() - 1) as f64).expect("t");
        assert_close("t(0.975)", t, py[8], xs);
        let ci = s.mean_ci95.expect("n >= 2 has a CI");
        assert_close("CI low", ci.low, py[0] - py[8] * py[9], xs);
        assert_close("CI high", ci.high, py[0] + py[8] * py[9], xs);
        assert_eq!(s.min, xs.iter().copied().fold(f64::INFINITY, f64::min));
        assert_eq!(s.max, xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    }
}

#[test]
fn t_quantile_matches_the_printed_table() {
    // t(0.975, df), as printed in standard tables (and by scipy.stats.t.ppf).
    let table = [
        (1, 12.7062),
        (2, 4.3027),
        (3, 3.1824),
        (4, 2.7764),
        (5, 2.5706),
        (6, 2.4469),
        (7, 2.3646),
        (8, 2.3060),
        (9, 2.2622),
        (10, 2.2281),
        (20, 2.0860),
        (30, 2.0423),
    ];
    for (df, expected) in table {
        let t = t_quantile(0.975, f64::from(df)).expect("t");
        assert!((t - expected).abs() < 1e-3, "df {df}: {t} vs {expected}");
    }
}

fn baseline() -> Vec<f64> {
    vec![
        940.1, 941.5, 939.2, 942.8, 940.9, 938.7, 941.1, 940.4, 939.9, 941.8,
    ]
}

fn improved() -> Vec<f64> {
    baseline().iter().map(|v| v * 1.05 + 0.3).collect()
}

#[test]
fn bootstrap_is_reproducible_with_a_seed() {
    let (a, b) = (baseline(), improved());
    let run = |seed| {
        Bootstrap::with_seed(seed)
            .ratio(&a, &b, Statistic::Median)
            .unwrap()
    };
    assert_eq!(run(7), run(7));
    assert_eq!(
        Bootstrap::with_seed(7).median_ci(&a).unwrap(),
        Bootstrap::with_seed(7).median_ci(&a).unwrap()
    );
    // Another seed draws other resamples: the interval moves a little.
    assert_ne!(run(7).ratio, run(8).ratio);
    assert_eq!(Bootstrap::default().resamples, 10_000);
}

#[test]
fn bootstrap_intervals_contain_their_estimates() {
    let a = baseline();
    let m = Bootstrap::default().median_ci(&a).unwrap();
    let sorted_median = Summary::of(&a).unwrap().median;
    assert_eq!(m.estimate, sorted_median);
    assert!(m.low <= m.estimate && m.estimate <= m.high, "{m:?}");
    assert!(
        m.low < m.high,
        "a spread sample has a non-empty interval: {m:?}"
    );
    let min = a.iter().copied().fold(f64::INFINITY, f64::min);
    let max = a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(min <= m.low && m.high <= max, "{m:?}");
    for statistic in [Statistic::Mean, Statistic::Median] {
        let r = Bootstrap::default()
            .ratio(&a, &improved(), statistic)
            .unwrap();
        assert!(
            r.ratio.low <= r.ratio.estimate && r.ratio.estimate <= r.ratio.high,
            "{r:?}"
        );
    }
}

#[test]
fn clearly_different_samples_are_significant_both_ways() {
    let (a, b) = (baseline(), improved());
    for statistic in [Statistic::Mean, Statistic::Median] {
        let up = Bootstrap::default().ratio(&a, &b, statistic).unwrap();
        assert_eq!(up.verdict, Verdict::Higher, "{up:?}");
        assert!((up.ratio.estimate - 1.05).abs() < 0.01, "{up:?}");
        let down = Bootstrap::default().ratio(&b, &a, statistic).unwrap();
        assert_eq!(down.verdict, Verdict::Lower, "{down:?}");
    }
}

#[test]
fn a_sample_against_itself_is_no_significant_difference() {
    let a = baseline();
    for statistic in [Statistic::Mean, Statistic::Median] {
        let r = Bootstrap::default().ratio(&a, &a, statistic).unwrap();
        assert_eq!(r.ratio.estimate, 1.0);
        assert_eq!(r.verdict, Verdict::NoSignificantDifference, "{r:?}");
        assert_eq!(r.verdict.label(), "no significant difference");
    }
    // Overlapping samples whose means differ by less than their spread.
    let b: Vec<f64> = a.iter().map(|v| v + 0.2).collect();
    let r = Bootstrap::default().ratio(&a, &b, Statistic::Mean).unwrap();
    assert_eq!(r.verdict, Verdict::NoSignificantDifference, "{r:?}");
}

mod properties {
    use netperf_ng::stats::{Bootstrap, Statistic, StatsError, Summary};
    use proptest::prelude::*;

    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: 128,
            ..ProptestConfig::default()
        }
    }

    /// Any f64 bit pattern, NaN and infinities included.
    fn any_values() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(any::<u64>().prop_map(f64::from_bits), 0..20)
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn summary_never_panics_and_orders_its_quantiles(xs in any_values()) {
            match Summary::of(&xs) {
                Ok(s) => {
                    let p = s.percentiles;
                    let order = [s.min, p.p5, p.p25, s.median, p.p75, p.p95, p.p99, s.max];
                    prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "{:?}", order);
                    prop_assert!(s.mean.is_finite() && s.min <= s.mean && s.mean <= s.max);
                    if let Some(ci) = s.mean_ci95 {
                        prop_assert!(ci.low <= s.mean && s.mean <= ci.high);
                    }
                    prop_assert_eq!(s.mean_ci95.is_none(), s.n == 1);
                }
                Err(StatsError::Empty) => prop_assert!(xs.is_empty()),
                Err(StatsError::NonFinite { index, .. }) => prop_assert!(!xs[index].is_finite()),
                Err(StatsError::Overflow { .. }) => {}
                Err(other) => prop_assert!(false, "unexpected {:?}", other),
            }
        }

        #[test]
        fn bootstrap_never_panics(a in any_values(), b in any_values(), median in any::<bool>()) {
            let statistic = if median { Statistic::Median } else { Statistic::Mean };
            let quick = Bootstrap { resamples: 50, ..Bootstrap::default() };
            if let Ok(r) = quick.ratio(&a, &b, statistic) {
                prop_assert!(r.ratio.low <= r.ratio.high);
            }
            if let Ok(m) = quick.median_ci(&a) {
                prop_assert!(m.low <= m.high);
            }
        }
    }
}
