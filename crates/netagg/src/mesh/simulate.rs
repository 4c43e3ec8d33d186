//! Simulated mesh grids with known faults, for judging `localise`: its unit
//! tests and the simulation (examples/mesh_sim.rs, bench/mesh-sim) draw
//! their grids here, so both judge the same thing. Seeded (ChaCha8), so a
//! figure can be reproduced exactly.
//!
//! Noise, on the log scale (a relative change): each cell normal with
//! `noise`, a `tail` fraction of cells with `tail_scale` times that (heavy
//! tails); each node a little faster or slower by nature, sending and
//! receiving apart (`node_spread`); every pair of a schedule round moved
//! together (`round_noise`: what the round shares, a host's hiccup).
//! A confirmation round (`measure_again`) measures chosen cells once more:
//! the same truth (nature, zones, faults), fresh noise, tail included.

use std::collections::BTreeSet;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::localise::{Better, Finding, Place, Side};
use super::schedule::{rounds, Pair};

/// What to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub n: usize,
    /// Zones (endpoints dealt round-robin into them); 0: none known.
    pub zones: usize,
    /// The metric's typical value (its unit is the caller's).
    pub base: f64,
    pub better: Better,
    pub noise: f64,
    pub tail: f64,
    pub tail_scale: f64,
    pub node_spread: f64,
    pub round_noise: f64,
    /// Every cross-zone cell's log change by design (latency across zones).
    pub cross_zone: f64,
    /// The fraction of cells not measured (failed pairs).
    pub missing: f64,
    /// Random faults: bad nodes, bad paths, bad zone links.
    pub nodes: usize,
    pub paths: usize,
    pub links: usize,
    /// Each fault's size, drawn uniformly: 0.2 is 20 % lower throughput or
    /// 20 % higher latency.
    pub size: (f64, f64),
}

impl Scenario {
    /// A clean grid: 3 % normal noise per cell, nodes 2 % apart by nature,
    /// 1 % shared by a round; no heavy tail (set `tail`).
    pub fn clean(n: usize, zones: usize, better: Better) -> Scenario {
        Scenario {
            n,
            zones,
            base: if better == Better::Higher {
                9400.0
            } else {
                50.0
            },
            better,
            noise: 0.03,
            tail: 0.0,
            tail_scale: 3.0,
            node_spread: 0.02,
            round_noise: 0.01,
            cross_zone: 0.0,
            missing: 0.0,
            nodes: 0,
            paths: 0,
            links: 0,
            size: (0.2, 0.5),
        }
    }
}

/// One injected fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub place: Place,
    pub size: f64,
}

/// A drawn grid: the input of `localise`, and what it should name.
#[derive(Debug, Clone, PartialEq)]
pub struct SimGrid {
    pub values: Vec<Option<f64>>,
    pub zones: Vec<Option<String>>,
    pub faults: Vec<Fault>,
    /// Each cell's log value without noise (NaN on the diagonal).
    pub truth: Vec<f64>,
}

/// Zone names as the simulation deals them.
pub fn zone_name(z: usize) -> String {
    format!("zone-{}", (b'a' + (z % 26) as u8) as char)
}

/// A normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Draws the scenario's grid with `seed`, its random faults and `extra`.
pub fn draw(scenario: &Scenario, extra: &[Fault], seed: u64) -> SimGrid {
    let s = scenario;
    let n = s.n;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let zones: Vec<Option<String>> = (0..n)
        .map(|i| (s.zones > 0).then(|| zone_name(i % s.zones)))
        .collect();
    let mut faults = extra.to_vec();
    let size = |rng: &mut ChaCha8Rng| s.size.0 + (s.size.1 - s.size.0) * rng.random::<f64>();
    let mut taken = BTreeSet::new();
    while faults.len() < extra.len() + s.nodes.min(n) {
        let endpoint = rng.random_range(0..n);
        if taken.insert(endpoint) {
            let side = [Side::Sending, Side::Receiving, Side::Both][rng.random_range(0..3usize)];
            let place = Place::Node { endpoint, side };
            faults.push(Fault {
                place,
                size: size(&mut rng),
            });
        }
    }
    let mut cells = BTreeSet::new();
    let want = faults.len() + s.paths.min(n * n.saturating_sub(1) / 2);
    while faults.len() < want {
        let (src, dst) = (rng.random_range(0..n), rng.random_range(0..n));
        if src != dst && cells.insert((src, dst)) {
            faults.push(Fault {
                place: Place::Path { src, dst },
                size: size(&mut rng),
            });
        }
    }
    let mut links = BTreeSet::new();
    let want = faults.len() + s.links.min(s.zones * s.zones.saturating_sub(1));
    while faults.len() < want {
        let (a, b) = (rng.random_range(0..s.zones), rng.random_range(0..s.zones));
        if a != b && links.insert((a, b)) {
            let place = Place::ZoneLink {
                from: zone_name(a),
                to: zone_name(b),
            };
            faults.push(Fault {
                place,
                size: size(&mut rng),
            });
        }
    }
    // Log changes per cell: by nature, by the round, by noise, by faults.
    let send: Vec<f64> = (0..n).map(|_| s.node_spread * normal(&mut rng)).collect();
    let recv: Vec<f64> = (0..n).map(|_| s.node_spread * normal(&mut rng)).collect();
    let mut truth = vec![f64::NAN; n * n];
    for (c, x) in truth.iter_mut().enumerate() {
        let (i, j) = (c / n, c % n);
        if i != j {
            *x = s.base.ln() + send[i] + recv[j];
            if zones[i] != zones[j] {
                *x += s.cross_zone;
            }
        }
    }
    let worse = |size: f64| match s.better {
        Better::Higher => (1.0 - size).ln(),
        Better::Lower => (1.0 + size).ln(),
    };
    for f in &faults {
        let hit = |i: usize, j: usize| match &f.place {
            Place::Node { endpoint, side } => match side {
                Side::Sending => i == *endpoint,
                Side::Receiving => j == *endpoint,
                Side::Both => i == *endpoint || j == *endpoint,
            },
            Place::Path { src, dst } => i == *src && j == *dst,
            Place::ZoneLink { from, to } => {
                zones[i].as_ref() == Some(from) && zones[j].as_ref() == Some(to)
            }
        };
        for (c, x) in truth.iter_mut().enumerate() {
            if c / n != c % n && hit(c / n, c % n) {
                *x += worse(f.size);
            }
        }
    }
    let all: Vec<Pair> = (0..n)
        .flat_map(|src| (0..n).map(move |dst| Pair { src, dst }))
        .filter(|p| p.src != p.dst)
        .collect();
    let logs = noisy(s, &truth, &all, &mut rng);
    let values = logs
        .iter()
        .map(|&x| (!x.is_nan() && rng.random::<f64>() >= s.missing).then(|| x.exp()))
        .collect();
    SimGrid {
        values,
        zones,
        faults,
        truth,
    }
}

/// `pairs` measured round by round as a mesh schedules them: each the
/// truth plus its round's shared noise and its own (n*n logs, NaN where
/// not measured).
fn noisy(s: &Scenario, truth: &[f64], pairs: &[Pair], rng: &mut ChaCha8Rng) -> Vec<f64> {
    let n = s.n;
    let mut logs = vec![f64::NAN; n * n];
    for round in rounds(n, pairs, None) {
        let shared = s.round_noise * normal(rng);
        for p in round {
            let scale = if rng.random::<f64>() < s.tail {
                s.noise * s.tail_scale
            } else {
                s.noise
            };
            let c = p.src * n + p.dst;
            logs[c] = truth[c] + shared + scale * normal(rng);
        }
    }
    logs
}

/// The confirmation round: `cells` (src, dst) of `grid` measured once
/// more with `seed`'s noise; one value per cell, in their order.
pub fn measure_again(
    scenario: &Scenario,
    grid: &SimGrid,
    cells: &[(usize, usize)],
    seed: u64,
) -> Vec<f64> {
    let n = scenario.n;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pairs: Vec<Pair> = cells.iter().map(|&(src, dst)| Pair { src, dst }).collect();
    let logs = noisy(scenario, &grid.truth, &pairs, &mut rng);
    cells.iter().map(|&(i, j)| logs[i * n + j].exp()).collect()
}

/// How findings compare with the faults: a finding is right when it names
/// a fault's place exactly (a node with its side).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub right: usize,
    pub wrong: usize,
    pub missed: usize,
}

impl Tally {
    pub fn of(findings: &[Finding], faults: &[Fault]) -> Tally {
        let right = findings
            .iter()
            .filter(|f| faults.iter().any(|x| x.place == f.place))
            .count();
        let found = faults
            .iter()
            .filter(|x| findings.iter().any(|f| f.place == x.place))
            .count();
        Tally {
            right,
            wrong: findings.len() - right,
            missed: faults.len() - found,
        }
    }

    pub fn add(&mut self, other: Tally) {
        self.right += other.right;
        self.wrong += other.wrong;
        self.missed += other.missed;
    }

    /// Right findings over all findings (1 when none).
    pub fn precision(&self) -> f64 {
        ratio(self.right, self.right + self.wrong)
    }

    /// Faults found over all faults (1 when none).
    pub fn recall(&self) -> f64 {
        ratio(self.right, self.right + self.missed)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}
