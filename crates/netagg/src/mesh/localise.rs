//! Localisation: from a metric's N×N grid (source rows, destination
//! columns), which node, path or zone link stands out. Pure computation,
//! deterministic.
//!
//! The model, on log values (so that every effect is a ratio): cell i→j =
//! overall + row i (how i sends) + column j (how j receives) + the link
//! between their zones + residual. Fitted by Tukey's median polish, with
//! missing cells left out of every median, so that a few bad rows, columns,
//! blocks or cells do not move the rest. Zone links are fitted relative to
//! the paths within the zones (one block per ordered pair of zones); with
//! zones the polish runs twice, blocks first and rows first, and the fit
//! with the smaller sum of absolute residuals (the criterion median polish
//! approximates) is kept: blocks first find a slow link whose cells are
//! most of its zones' rows, rows first a slow node in a small zone. Zones
//! leave one choice open per zone, settled to the sparser explanation
//! (`Grid::normalise`).
//!
//! Judging: the noise σ is the robust scale (1.4826 × median absolute
//! value) of 2×2 contrasts of the residuals, in which row and column
//! effects cancel (the residuals' own scale is too small: the medians pull
//! them to 0). A row or column is judged against the noise of a median of
//! its k cells (1.2533·σ/√k), or the spread of the rows' effects when that
//! is larger (nodes differ a little by nature); a zone link against the
//! noise of its block's median; a cell against σ widened by its row's and
//! column's medians. Something is named only when it is worse (lower for
//! Higher, higher for Lower), its relative effect is at least `min_effect`,
//! and its log effect is at least `sigmas` × its noise — or, with many
//! things judged at once, the one-sided Student t quantile (residual
//! degrees of freedom) that keeps a grid's chance of naming anything by
//! noise to 1 % per kind. A node whose row and column are both named is one
//! finding (Side::Both).
//!
//! What cannot be told apart: with two endpoints, anything (two values,
//! each the other's only comparison): nothing is named. With three, one
//! residual degree of freedom: the noise is barely known, so only a node
//! far out is named, never a single cell; from five to eight a bad cell
//! gives some of its effect to its row and column. A zone of one endpoint
//! is that endpoint (its node, never a link); a row or column of one
//! measured cell is that cell (a path, never a node), so in a star
//! (`--pairs node=NAME`) the partners' paths are named, never the node
//! (its sending slowly is there the same as all others receiving slowly).
//! With two zones a link is judged against the paths within the zones, so
//! a link slower by design is named; with three or more, against the
//! typical link, so the usual cost of crossing zones is not.

use netperf_results::stats::t_quantile;

/// Which way is good: throughput Higher, latency Lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// When something is named.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The smallest relative effect named (0.10: 10 % worse).
    pub min_effect: f64,
    /// How many times its noise an effect must be (raised for many tests).
    pub sigmas: f64,
}

impl Default for Settings {
    fn default() -> Settings {
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

/// What a finding names (endpoints by their index, zones as given).
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
    /// Relative change of the metric: -0.35 = 35 % lower.
    pub effect: f64,
    /// The robust relative (log) noise scale it was judged against.
    pub noise: f64,
    /// |ln(1 + effect)| / noise.
    pub score: f64,
    /// The measured cells it covers.
    pub cells: usize,
}

/// The fitted model and what it names.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The typical value, in the metric's unit (exp of the fitted overall
    /// log); 0 when no cell was measured.
    pub overall: f64,
    /// Each source's effect as a relative change (0 when it has fewer than
    /// two measured cells).
    pub row: Vec<f64>,
    /// Each destination's effect as a relative change.
    pub column: Vec<f64>,
    /// Each cell's residual as a relative change, None where not measured.
    pub residual: Vec<Option<f64>>,
    /// The cells' robust relative noise (log scale); 0 when it cannot be
    /// estimated (no residual degrees of freedom).
    pub noise: f64,
    /// Sorted by score, highest first.
    pub findings: Vec<Finding>,
    /// What judging a second measurement of one cell needs (`confirms`).
    pub cells: CellModel,
}

/// The fitted model on the log scale and the cells' threshold, as kept for
/// judging a cell measured again: its prediction for a cell is overall +
/// row + column + the zones' link, and a value stands out as a cell of the
/// grid did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CellModel {
    mu: f64,
    row: Vec<f64>,
    col: Vec<f64>,
    /// Each endpoint's modelled zone, and the k×k link effects.
    zone_of: Vec<Option<usize>>,
    link: Vec<f64>,
    row_cells: Vec<usize>,
    col_cells: Vec<usize>,
    sigma: f64,
    dof: f64,
}

/// The chance, per kind (rows and columns, links, cells), that a grid of
/// pure noise names something.
const FALSE_ALARM: f64 = 0.01;
/// Normal-consistency of the median absolute deviation.
const MAD_SCALE: f64 = 1.4826;
/// Standard error of a median over that of a mean (normal data).
const MEDIAN_SE: f64 = 1.2533;
/// Below this many rows (links) their spread says little about nature.
const SPREAD_FROM: usize = 8;
/// A row or column with fewer measured cells has no effect of its own: with
/// one cell, its node and its path cannot be told apart, and the cell is
/// judged as a path (so `--pairs node=NAME`, a star, names partners' paths).
const MIN_LINE: usize = 2;
/// Median polish sweeps; it settles in a few.
const SWEEPS: usize = 12;
/// Fewer contrasts than this, and the noise comes from the residuals.
const MIN_CONTRASTS: usize = 8;
/// The least noise a score is divided by, so an exact grid scores finitely.
const NOISE_FLOOR: f64 = 1e-6;

/// `values`: n*n row-major (row = source, column = destination), None for
/// the diagonal, a pair not measured or one that failed (and values that
/// are not finite and positive are taken as not measured). `zones`: each
/// endpoint's zone when known. Short inputs are read as missing.
pub fn localise(
    n: usize,
    values: &[Option<f64>],
    zones: &[Option<String>],
    better: Better,
    settings: &Settings,
) -> Analysis {
    let logs: Vec<f64> = (0..n * n)
        .map(|k| match values.get(k).copied().flatten() {
            Some(v) if k / n != k % n && v.is_finite() && v > 0.0 => v.ln(),
            _ => f64::NAN,
        })
        .collect();
    let grid = Grid::new(n, logs, zones);
    let fit = grid.fit();
    let judge = Judge::new(&grid, &fit, better, settings);
    let cells = CellModel {
        mu: fit.mu,
        row: fit.row.clone(),
        col: fit.col.clone(),
        zone_of: grid.zone_of.clone(),
        link: fit.link.clone(),
        row_cells: (0..n).map(|i| grid.row_cells(i)).collect(),
        col_cells: (0..n).map(|j| grid.col_cells(j)).collect(),
        sigma: judge.sigma,
        dof: judge.dof,
    };
    let mut findings = judge.nodes(&grid, &fit);
    findings.extend(judge.links(&grid, &fit));
    findings.extend(judge.cells(&grid, &fit));
    findings.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| order(&a.place, &b.place))
    });
    let relative = |x: f64| x.exp_m1();
    Analysis {
        overall: if grid.cells == 0 { 0.0 } else { fit.mu.exp() },
        row: fit.row.iter().map(|&x| relative(x)).collect(),
        column: fit.col.iter().map(|&x| relative(x)).collect(),
        residual: fit
            .resid
            .iter()
            .map(|&e| (!e.is_nan()).then(|| relative(e)))
            .collect(),
        noise: judge.sigma,
        findings,
        cells,
    }
}

/// Whether `value`, a second measurement of the cell `src`→`dst`, also
/// stands out against the model's prediction for that cell by the rule a
/// path finding is named by: worse, at least `min_effect`, and clear of
/// the cell's noise × the threshold for the cells judged — here the path
/// findings measured again, not every cell of the grid (the first
/// threshold, kept, would drop a true path near it about half the time).
/// A cell far off by chance (a heavy tail's draw) is rarely far off twice;
/// a bad path is. False for a cell outside the grid or a value that is not
/// a measurement.
pub fn confirms(
    analysis: &Analysis,
    src: usize,
    dst: usize,
    value: f64,
    better: Better,
    settings: &Settings,
) -> bool {
    let m = &analysis.cells;
    let n = m.row.len();
    if src >= n || dst >= n || src == dst || !(value.is_finite() && value > 0.0) {
        return false;
    }
    let k = (m.link.len() as f64).sqrt() as usize;
    let link = match (m.zone_of[src], m.zone_of[dst]) {
        (Some(a), Some(b)) if a != b => m.link[a * k + b],
        _ => 0.0,
    };
    let x = value.ln() - (m.mu + m.row[src] + m.col[dst] + link);
    let judge = Judge {
        sigma: m.sigma,
        dof: m.dof,
        worse: if better == Better::Higher { -1.0 } else { 1.0 },
        settings: *settings,
    };
    let place = Place::Path { src, dst };
    let noise = m.sigma * cell_spread(m.row_cells[src], m.col_cells[dst]).sqrt();
    let again = analysis
        .findings
        .iter()
        .filter(|f| matches!(f.place, Place::Path { .. }))
        .count();
    judge
        .judge(place, x, noise, judge.sigmas(again), 1)
        .is_some()
}

/// A residual's variance over the cells' own: the cell's noise and that of
/// its row's and column's medians, which it is measured from.
fn cell_spread(row_cells: usize, col_cells: usize) -> f64 {
    let (r, c) = (row_cells.max(1) as f64, col_cells.max(1) as f64);
    1.0 + MEDIAN_SE * MEDIAN_SE * (1.0 / r + 1.0 / c)
}

/// A fixed order among places of equal score, so output is deterministic.
fn order(a: &Place, b: &Place) -> std::cmp::Ordering {
    let key = |p: &Place| match p {
        Place::ZoneLink { from, to } => (0, 0, 0, from.clone(), to.clone()),
        Place::Node { endpoint, side } => {
            (1, *endpoint, *side as usize, String::new(), String::new())
        }
        Place::Path { src, dst } => (2, *src, *dst, String::new(), String::new()),
    };
    key(a).cmp(&key(b))
}

/// The log grid and its zones as the model sees them.
struct Grid {
    n: usize,
    /// ln(value), NaN where not measured.
    logs: Vec<f64>,
    cells: usize,
    /// The zones that take part in the link model (at least two endpoints
    /// each), by name, and each endpoint's index among them.
    zone_names: Vec<String>,
    zone_of: Vec<Option<usize>>,
    /// Members of each modelled zone.
    members: Vec<Vec<usize>>,
}

impl Grid {
    fn new(n: usize, logs: Vec<f64>, zones: &[Option<String>]) -> Grid {
        let cells = logs.iter().filter(|x| !x.is_nan()).count();
        let mut all: Vec<&String> = zones.iter().take(n).flatten().collect();
        all.sort();
        all.dedup();
        let given = |i: usize| zones.get(i).and_then(Option::as_ref);
        // A zone of one endpoint is that endpoint: no link of its own.
        let (names, members): (Vec<String>, Vec<Vec<usize>>) = all
            .into_iter()
            .map(|z| {
                (
                    z.clone(),
                    (0..n).filter(|&i| given(i) == Some(z)).collect::<Vec<_>>(),
                )
            })
            .filter(|(_, m)| m.len() >= 2)
            .unzip();
        let mut grid = Grid {
            n,
            logs,
            cells,
            zone_names: names,
            zone_of: vec![None; n],
            members,
        };
        for (z, m) in grid.members.iter().enumerate() {
            for &i in m {
                grid.zone_of[i] = Some(z);
            }
        }
        // Links are relative to the paths within zones: without those in at
        // least two zones, or without a measured link, there is no model.
        let within = (0..grid.members.len())
            .filter(|&z| grid.block_cells(z, z) > 0)
            .count();
        let links = grid.measured_links();
        if within < 2 || links == 0 {
            grid.zone_names.clear();
            grid.members.clear();
            grid.zone_of = vec![None; n];
        }
        grid
    }

    /// The ordered pairs of different modelled zones.
    /// How many zone links have a measured cell.
    fn measured_links(&self) -> usize {
        self.links()
            .iter()
            .filter(|&&(a, b)| self.block_cells(a, b) > 0)
            .count()
    }

    fn links(&self) -> Vec<(usize, usize)> {
        let k = self.members.len();
        (0..k)
            .flat_map(|a| (0..k).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect()
    }

    fn block_cells(&self, a: usize, b: usize) -> usize {
        let mut count = 0;
        for &i in &self.members[a] {
            for &j in &self.members[b] {
                count += usize::from(!self.logs[i * self.n + j].is_nan());
            }
        }
        count
    }

    fn row_cells(&self, i: usize) -> usize {
        (0..self.n)
            .filter(|&j| !self.logs[i * self.n + j].is_nan())
            .count()
    }

    fn col_cells(&self, j: usize) -> usize {
        (0..self.n)
            .filter(|&i| !self.logs[i * self.n + j].is_nan())
            .count()
    }

    /// The better of the two polish orders (see the module's comment).
    fn fit(&self) -> Fit {
        let first = self.polish(true);
        if self.members.is_empty() {
            return first;
        }
        let second = self.polish(false);
        let mut fit = if second.l1() < first.l1() {
            second
        } else {
            first
        };
        self.normalise(&mut fit);
        fit
    }

    /// The one thing zones leave open, settled. Moving every member of a
    /// zone's row up by δ and its column down by δ, the zone's links out
    /// down by δ and in up by δ, changes no cell: a link slow one way is
    /// also "the zone's nodes send a little slower and receive a little
    /// faster, and the link is slow both ways by half". The δ kept is the
    /// one that leaves the members' effects least (the median of their
    /// −row and column effects; of an interval of medians, the point
    /// nearest 0), so what is named is the sparser explanation.
    fn normalise(&self, fit: &mut Fit) {
        let k = self.members.len();
        let mut buf = Vec::new();
        for (z, members) in self.members.iter().enumerate() {
            buf.clear();
            buf.extend(members.iter().flat_map(|&i| [-fit.row[i], fit.col[i]]));
            buf.sort_unstable_by(f64::total_cmp);
            let len = buf.len();
            let delta = 0.0f64.clamp(buf[(len - 1) / 2], buf[len / 2]);
            for &i in members {
                fit.row[i] += delta;
                fit.col[i] -= delta;
            }
            for other in (0..k).filter(|&o| o != z) {
                fit.link[z * k + other] -= delta;
                fit.link[other * k + z] += delta;
            }
        }
        for rows in [true, false] {
            let fitted: Vec<usize> = (0..self.n)
                .filter(|&i| if rows { self.row_cells(i) } else { self.col_cells(i) } >= MIN_LINE)
                .collect();
            let effects = if rows { &mut fit.row } else { &mut fit.col };
            if fitted.len() < 2 {
                continue;
            }
            if let Some(centre) = median_of(fitted.iter().map(|&i| effects[i]), &mut buf) {
                fitted.iter().for_each(|&i| effects[i] -= centre);
                fit.mu += centre;
            }
        }
    }

    fn polish(&self, blocks_first: bool) -> Fit {
        let n = self.n;
        let k = self.members.len();
        let mut resid = self.logs.clone();
        let mut buf: Vec<f64> = Vec::with_capacity(n.max(16));
        let mu = median_of(resid.iter().copied(), &mut buf).unwrap_or(0.0);
        resid.iter_mut().for_each(|e| *e -= mu);
        let mut fit = Fit {
            mu,
            row: vec![0.0; n],
            col: vec![0.0; n],
            link: vec![0.0; k * k],
            resid,
        };
        for sweep in 0..SWEEPS {
            let mut moved = 0.0;
            if blocks_first || sweep > 0 {
                moved += self.sweep_blocks(&mut fit, &mut buf);
            }
            moved += self.sweep_rows(&mut fit, &mut buf, true);
            moved += self.sweep_rows(&mut fit, &mut buf, false);
            if !blocks_first && sweep == 0 {
                moved += self.sweep_blocks(&mut fit, &mut buf);
            }
            if moved <= 1e-12 * (1 + self.cells) as f64 {
                break;
            }
        }
        fit
    }

    /// Each link block's median residual into its effect.
    fn sweep_blocks(&self, fit: &mut Fit, buf: &mut Vec<f64>) -> f64 {
        let (n, k) = (self.n, self.members.len());
        let mut moved = 0.0;
        for (a, b) in self.links() {
            let cells = || {
                self.members[a]
                    .iter()
                    .flat_map(move |&i| self.members[b].iter().map(move |&j| i * n + j))
            };
            if let Some(m) = median_of(cells().map(|c| fit.resid[c]), buf) {
                fit.link[a * k + b] += m;
                cells().for_each(|c| fit.resid[c] -= m);
                moved += m.abs();
            }
        }
        moved
    }

    /// Each row's (or column's) median residual into its effect, then the
    /// effects' median into the overall value.
    fn sweep_rows(&self, fit: &mut Fit, buf: &mut Vec<f64>, rows: bool) -> f64 {
        let n = self.n;
        let at = |line: usize, x: usize| if rows { line * n + x } else { x * n + line };
        let mut moved = 0.0;
        let mut fitted = Vec::with_capacity(n);
        for line in 0..n {
            let median = median_of((0..n).map(|x| fit.resid[at(line, x)]), buf);
            if let Some(m) = median.filter(|_| buf.len() >= MIN_LINE) {
                let effects = if rows { &mut fit.row } else { &mut fit.col };
                effects[line] += m;
                (0..n).for_each(|x| fit.resid[at(line, x)] -= m);
                moved += m.abs();
                fitted.push(line);
            }
        }
        // Effects are relative to the other lines: with one, there are
        // none (and it keeps its level, which the overall value cannot
        // hold for both a row and a column).
        let effects = if rows { &mut fit.row } else { &mut fit.col };
        if fitted.len() >= 2 {
            if let Some(centre) = median_of(fitted.iter().map(|&l| effects[l]), buf) {
                fitted.iter().for_each(|&l| effects[l] -= centre);
                fit.mu += centre;
            }
        }
        moved
    }
}

/// The fitted effects, all on the log scale.
struct Fit {
    mu: f64,
    row: Vec<f64>,
    col: Vec<f64>,
    /// k×k, link[a*k+b] for zone a to zone b (0 within a zone).
    link: Vec<f64>,
    /// NaN where not measured.
    resid: Vec<f64>,
}

impl Fit {
    fn l1(&self) -> f64 {
        self.resid
            .iter()
            .filter(|e| !e.is_nan())
            .map(|e| e.abs())
            .sum()
    }
}

/// The median of the values that are not NaN (reorders `buf`), or None.
fn median_of(values: impl Iterator<Item = f64>, buf: &mut Vec<f64>) -> Option<f64> {
    buf.clear();
    buf.extend(values.filter(|x| !x.is_nan()));
    let len = buf.len();
    if len == 0 {
        return None;
    }
    let (lower, &mut mid, _) = buf.select_nth_unstable_by(len / 2, f64::total_cmp);
    if len % 2 == 1 {
        return Some(mid);
    }
    let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((below + mid) / 2.0)
}

/// Residual contrasts e(i,j) − e(i,k) − e(l,j) + e(l,k), one from each cell
/// where a partner row l and column k (picked by a hash, so deterministic)
/// give four measured cells. Row and column effects cancel in them, so
/// unlike the residuals themselves (which the medians pull towards 0, many
/// exactly) their spread is the cells' noise, whatever the fit.
fn contrasts(n: usize, resid: &[f64]) -> Vec<f64> {
    let at = |i: usize, j: usize| resid[i * n + j];
    let mut out = Vec::new();
    if n < 3 {
        return out;
    }
    for i in 0..n {
        for j in 0..n {
            if at(i, j).is_nan() {
                continue;
            }
            // From a hashed start, the first partners that work: all of
            // them for a small grid, a few tries for a large one.
            let h = mix((i * n + j) as u64);
            let (start_l, start_k) = (
                (h % (n as u64 - 1)) as usize,
                ((h >> 32) % (n as u64 - 1)) as usize,
            );
            let tries = if n <= 32 { n - 1 } else { 2 };
            let found = (0..tries)
                .flat_map(|a| (0..tries).map(move |b| (a, b)))
                .map(|(a, b)| {
                    let l = (i + 1 + (start_l + a) % (n - 1)) % n;
                    let k = (j + 1 + (start_k + b) % (n - 1)) % n;
                    at(i, j) - at(i, k) - at(l, j) + at(l, k)
                })
                .find(|c| !c.is_nan());
            out.extend(found);
        }
    }
    out
}

/// SplitMix64's finaliser: a well-spread hash of a cell's number.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The noise and the thresholds things are judged by.
struct Judge {
    sigma: f64,
    dof: f64,
    worse: f64,
    settings: Settings,
}

impl Judge {
    fn new(grid: &Grid, fit: &Fit, better: Better, settings: &Settings) -> Judge {
        let rows = (0..grid.n)
            .filter(|&i| grid.row_cells(i) >= MIN_LINE)
            .count();
        let cols = (0..grid.n)
            .filter(|&j| grid.col_cells(j) >= MIN_LINE)
            .count();
        let links = grid.measured_links();
        // The overall value, the links, and each side's effects less the
        // one their centring takes (none when a side has a single line).
        let params =
            (1 + links + rows + cols - usize::from(rows >= 2) - usize::from(cols >= 2)) as f64;
        // Two endpoints: two values, each the other's only comparison.
        let dof = if grid.n < 3 {
            0.0
        } else {
            grid.cells as f64 - params
        };
        let mut buf = Vec::new();
        let contrasts = contrasts(grid.n, &fit.resid);
        let sigma = if dof < 1.0 {
            0.0
        } else if contrasts.len() >= MIN_CONTRASTS {
            // A 2×2 contrast of four independent cells has twice their
            // spread.
            MAD_SCALE * median_of(contrasts.iter().map(|c| c.abs()), &mut buf).unwrap_or(0.0) / 2.0
        } else {
            let mad = median_of(fit.resid.iter().map(|e| e.abs()), &mut buf).unwrap_or(0.0);
            MAD_SCALE * mad * (grid.cells as f64 / dof).sqrt()
        };
        Judge {
            sigma,
            dof,
            worse: if better == Better::Higher { -1.0 } else { 1.0 },
            settings: *settings,
        }
    }

    /// The multiple of the noise needed when `tests` things are judged.
    fn sigmas(&self, tests: usize) -> f64 {
        let p = 1.0 - FALSE_ALARM / tests.max(1) as f64;
        // t with more than 1,000 degrees of freedom is the normal's.
        let t = t_quantile(p, self.dof.min(1000.0)).unwrap_or(f64::INFINITY);
        self.settings.sigmas.max(t)
    }

    /// A finding when `x` (log effect) is worse, big enough and clear of
    /// `noise` × `sigmas`.
    fn judge(
        &self,
        place: Place,
        x: f64,
        noise: f64,
        sigmas: f64,
        cells: usize,
    ) -> Option<Finding> {
        let noise = noise.max(NOISE_FLOOR);
        let effect = x.exp_m1();
        let named = self.dof >= 1.0
            && x * self.worse > 0.0
            && effect.abs() >= self.settings.min_effect
            && x.abs() >= sigmas * noise;
        named.then(|| Finding {
            place,
            effect,
            noise,
            score: x.abs() / noise,
            cells,
        })
    }

    /// Rows and columns; a node named both ways is one finding.
    fn nodes(&self, grid: &Grid, fit: &Fit) -> Vec<Finding> {
        let n = grid.n;
        let counts: [Vec<usize>; 2] = [
            (0..n).map(|i| grid.row_cells(i)).collect(),
            (0..n).map(|j| grid.col_cells(j)).collect(),
        ];
        let effects = [&fit.row, &fit.col];
        // A side with one line has no others to stand out from.
        let lines = |side: usize| counts[side].iter().filter(|&&c| c >= MIN_LINE).count();
        let tests = lines(0) + lines(1);
        let sigmas = self.sigmas(tests);
        let mut named: [Vec<Option<Finding>>; 2] = [vec![None; n], vec![None; n]];
        for (side, found) in named.iter_mut().enumerate() {
            let mut buf = Vec::new();
            let judged = if lines(side) >= 2 {
                MIN_LINE
            } else {
                usize::MAX
            };
            let with_cells = (0..n).filter(|&i| counts[side][i] >= judged);
            let spread = if with_cells.clone().count() >= SPREAD_FROM {
                let centre = median_of(with_cells.clone().map(|i| effects[side][i]), &mut buf)
                    .unwrap_or(0.0);
                MAD_SCALE
                    * median_of(
                        with_cells
                            .clone()
                            .map(|i| (effects[side][i] - centre).abs()),
                        &mut buf,
                    )
                    .unwrap_or(0.0)
            } else {
                0.0
            };
            for i in with_cells {
                let k = counts[side][i];
                let noise = (MEDIAN_SE * self.sigma / (k as f64).sqrt()).max(spread);
                let node_side = if side == 0 {
                    Side::Sending
                } else {
                    Side::Receiving
                };
                let place = Place::Node {
                    endpoint: i,
                    side: node_side,
                };
                found[i] = self.judge(place, effects[side][i], noise, sigmas, k);
            }
        }
        let [sending, receiving] = named;
        let mut out = Vec::new();
        for (i, (s, r)) in sending.into_iter().zip(receiving).enumerate() {
            match (s, r) {
                (Some(s), Some(r)) => {
                    // One node, both ways: the mean of the two log effects,
                    // judged against the noise of their mean.
                    let x = (fit.row[i] + fit.col[i]) / 2.0;
                    let noise = (s.noise.hypot(r.noise) / 2.0).max(NOISE_FLOOR);
                    out.push(Finding {
                        place: Place::Node {
                            endpoint: i,
                            side: Side::Both,
                        },
                        effect: x.exp_m1(),
                        noise,
                        score: x.abs() / noise,
                        cells: s.cells + r.cells,
                    });
                }
                (s, r) => out.extend(s.or(r)),
            }
        }
        out
    }

    /// Zone links: with two zones against the paths within them, with more
    /// against the typical link.
    fn links(&self, grid: &Grid, fit: &Fit) -> Vec<Finding> {
        let k = grid.members.len();
        let measured: Vec<(usize, usize, usize)> = grid
            .links()
            .into_iter()
            .map(|(a, b)| (a, b, grid.block_cells(a, b)))
            .filter(|&(_, _, cells)| cells > 0)
            .collect();
        let mut buf = Vec::new();
        let effects = || measured.iter().map(|&(a, b, _)| fit.link[a * k + b]);
        let (typical, spread) = if k >= 3 {
            let centre = median_of(effects(), &mut buf).unwrap_or(0.0);
            let spread = if measured.len() >= SPREAD_FROM {
                MAD_SCALE
                    * median_of(effects().map(|x| (x - centre).abs()), &mut buf).unwrap_or(0.0)
            } else {
                0.0
            };
            (centre, spread)
        } else {
            (0.0, 0.0)
        };
        let sigmas = self.sigmas(measured.len());
        measured
            .iter()
            .filter_map(|&(a, b, cells)| {
                let noise = (MEDIAN_SE * self.sigma / (cells as f64).sqrt()).max(spread);
                let place = Place::ZoneLink {
                    from: grid.zone_names[a].clone(),
                    to: grid.zone_names[b].clone(),
                };
                self.judge(place, fit.link[a * k + b] - typical, noise, sigmas, cells)
            })
            .collect()
    }

    /// Single cells, against the noise of a residual: the cell's own and
    /// that of its row's and column's medians, which it is measured from.
    fn cells(&self, grid: &Grid, fit: &Fit) -> Vec<Finding> {
        let n = grid.n;
        let sigmas = self.sigmas(grid.cells);
        let rows: Vec<usize> = (0..n).map(|i| grid.row_cells(i)).collect();
        let cols: Vec<usize> = (0..n).map(|j| grid.col_cells(j)).collect();
        (0..n * n)
            .filter(|&c| !fit.resid[c].is_nan())
            .filter_map(|c| {
                let (i, j) = (c / n, c % n);
                let spread = cell_spread(rows[i], cols[j]);
                let place = Place::Path { src: i, dst: j };
                self.judge(place, fit.resid[c], self.sigma * spread.sqrt(), sigmas, 1)
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "localise_tests.rs"]
mod tests;
