//! STAND-IN
//! for M2's localisation (the lead replaces it at merge): one pass of a
//! median two-way fit on log values — overall, row and column effects,
//! residuals — naming rows, columns and cells that are worse than the noise
//! allows. No zone blocks here; the real one fits them first.

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// When a deviation is a finding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Smallest relative effect named (0.10: 10 %).
    pub min_effect: f64,
    /// How many noise scales an effect must exceed.
    pub sigmas: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_effect: 0.10,
            sigmas: 4.0,
        }
    }
}

/// Which of a node's directions stands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Sending,
    Receiving,
    Both,
}

/// What a finding names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Node { endpoint: usize, side: Side },
    Path { src: usize, dst: usize },
    ZoneLink { from: String, to: String },
}

/// One thing that stands out.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub place: Place,
    /// Relative change: -0.35 is 35 % lower.
    pub effect: f64,
    /// The robust relative noise scale it was judged against.
    pub noise: f64,
    /// |log effect| / noise.
    pub score: f64,
    pub cells: usize,
}

/// The fit and what stands out.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub overall: f64,
    pub row: Vec<f64>,
    pub column: Vec<f64>,
    pub residual: Vec<Option<f64>>,
    pub noise: f64,
    pub findings: Vec<Finding>,
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    match v.len() % 2 {
        1 => v[m],
        _ => (v[m - 1] + v[m]) / 2.0,
    }
}

/// `values`: n*n row-major (row = source), None for the diagonal, a pair
/// not measured or one that failed.
pub fn localise(
    n: usize,
    values: &[Option<f64>],
    _zones: &[Option<String>],
    better: Better,
    settings: &Settings,
) -> Analysis {
    let logs: Vec<Option<f64>> = values
        .iter()
        .map(|v| v.filter(|x| *x > 0.0 && x.is_finite()).map(f64::ln))
        .collect();
    let at = |i: usize, j: usize| logs.get(i * n + j).copied().flatten();
    let overall = median(logs.iter().flatten().copied().collect());
    let row: Vec<f64> = (0..n)
        .map(|i| {
            median(
                (0..n)
                    .filter_map(|j| at(i, j))
                    .map(|x| x - overall)
                    .collect(),
            )
        })
        .collect();
    let column: Vec<f64> = (0..n)
        .map(|j| {
            median(
                (0..n)
                    .filter_map(|i| at(i, j).map(|x| x - overall - row[i]))
                    .collect(),
            )
        })
        .collect();
    let residual: Vec<Option<f64>> = (0..n * n)
        .map(|k| at(k / n, k % n).map(|x| x - overall - row[k / n] - column[k % n]))
        .collect();
    let mad = median(residual.iter().flatten().map(|r| r.abs()).collect());
    let noise = (1.4826 * mad).max(0.005);
    let worse = |effect: f64| match better {
        Better::Higher => effect < 0.0,
        Better::Lower => effect > 0.0,
    };
    let judge = |log_effect: f64, cells: usize| -> Option<(f64, f64)> {
        let scale = noise / (cells.max(1) as f64).sqrt();
        let effect = log_effect.exp() - 1.0;
        (worse(effect)
            && effect.abs() >= settings.min_effect
            && log_effect.abs() > settings.sigmas * scale)
            .then_some((effect, log_effect.abs() / scale))
    };
    let mut findings = Vec::new();
    let count = |f: &dyn Fn(usize) -> Option<f64>| (0..n).filter(|&k| f(k).is_some()).count();
    for e in 0..n {
        let sent = judge(row[e], count(&|j| at(e, j)));
        let received = judge(column[e], count(&|i| at(i, e)));
        let (side, (effect, score), cells) = match (sent, received) {
            (Some(s), Some(r)) => (Side::Both, if s.1 >= r.1 { s } else { r }, 2 * (n - 1)),
            (Some(s), None) => (Side::Sending, s, count(&|j| at(e, j))),
            (None, Some(r)) => (Side::Receiving, r, count(&|i| at(i, e))),
            (None, None) => continue,
        };
        let place = Place::Node { endpoint: e, side };
        findings.push(Finding {
            place,
            effect,
            noise,
            score,
            cells,
        });
    }
    for (k, r) in residual.iter().enumerate() {
        if let Some((effect, score)) = r.and_then(|r| judge(r, 1)) {
            let place = Place::Path {
                src: k / n,
                dst: k % n,
            };
            findings.push(Finding {
                place,
                effect,
                noise,
                score,
                cells: 1,
            });
        }
    }
    findings.sort_by(|a, b| b.score.total_cmp(&a.score));
    Analysis {
        overall: overall.exp(),
        row,
        column,
        residual,
        noise,
        findings,
    }
}
