//! The mesh's schedule and localisation on simulated endpoints: how long
//! they take for 1,000 endpoints, and how well the findings match faults
//! injected into grids under realistic noise (precision: findings that
//! name an injected fault exactly, node side included; recall: faults
//! named), each without and with the confirmation round (every path
//! finding's cell measured once more, kept only when that measurement
//! stands out too). bench/mesh-sim runs it; docs/performance.md ("The mesh:
//! schedule and localisation, simulated") has its figures.
//!
//!     cargo run --release -p netagg --example mesh_sim [-- --quick] [--seed S]

use std::time::{Duration, Instant};

use netagg::mesh::localise::{confirms, localise, Analysis, Better, Finding, Place, Settings};
use netagg::mesh::schedule::{rounds, Pair, PairFilter};
use netagg::mesh::simulate::{draw, measure_again, zone_name, Scenario, SimGrid, Tally};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let seed: u64 = match args.iter().position(|a| a == "--seed") {
        Some(i) => match args.get(i + 1).and_then(|s| s.parse().ok()) {
            Some(seed) => seed,
            None => {
                eprintln!("mesh_sim: --seed needs a number");
                std::process::exit(2);
            }
        },
        None => 1,
    };
    if let Some(bad) = args
        .iter()
        .find(|a| a.starts_with("--") && *a != "--quick" && *a != "--seed")
    {
        eprintln!("mesh_sim: unknown option {bad} (--quick, --seed S)");
        std::process::exit(2);
    }
    schedules(if quick { 200 } else { 1000 });
    timing(if quick { 200 } else { 1000 }, seed);
    accuracy(quick, seed);
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Rounds and time for the full mesh and the zone subsets, against the
/// least possible (the busiest endpoint's pairs; a round holds n/2).
fn schedules(n: usize) {
    println!("## Schedule, {n} endpoints\n");
    println!("| pairs | zones | ordered pairs | rounds | least possible | time |");
    println!("|---|---|---:|---:|---:|---:|");
    let names: Vec<String> = (0..n).map(|i| format!("node-{i}")).collect();
    for (filter, zones) in [
        (PairFilter::All, 0),
        (PairFilter::SameZone, 4),
        (PairFilter::CrossZone, 2),
        (PairFilter::CrossZone, 4),
        (PairFilter::Node("node-7".into()), 0),
    ] {
        let zone_of: Vec<Option<String>> = (0..n)
            .map(|i| (zones > 0).then(|| zone_name(i % zones)))
            .collect();
        let start = Instant::now();
        let pairs = filter.pairs(&names, &zone_of).expect("pairs");
        let r = rounds(n, &pairs, None);
        let took = start.elapsed();
        println!(
            "| {filter} | {zones} | {} | {} | {} | {} |",
            pairs.len(),
            r.len(),
            least(n, &pairs),
            ms(took)
        );
    }
    // An odd count: the circle method's 2N.
    let odd = n - 1;
    let pairs = PairFilter::All
        .pairs(&names[..odd], &vec![None; odd])
        .expect("pairs");
    let start = Instant::now();
    let r = rounds(odd, &pairs, None);
    println!(
        "| all, {odd} endpoints | 0 | {} | {} | {} | {} |\n",
        pairs.len(),
        r.len(),
        least(odd, &pairs),
        ms(start.elapsed())
    );
}

fn least(n: usize, pairs: &[Pair]) -> usize {
    let mut degree = vec![0usize; n];
    for p in pairs {
        degree[p.src] += 1;
        degree[p.dst] += 1;
    }
    let busiest = degree.into_iter().max().unwrap_or(0);
    busiest.max(pairs.len().div_ceil((n / 2).max(1)))
}

/// Localisation's time on a full grid with faults, both metrics.
fn timing(n: usize, seed: u64) {
    println!(
        "## Localisation time, {n} endpoints ({} cells)\n",
        n * (n - 1)
    );
    println!("| metric | zones | time (median of 3) | findings |");
    println!("|---|---:|---:|---:|");
    for (better, zones) in [(Better::Higher, 0), (Better::Higher, 4), (Better::Lower, 4)] {
        let mut s = Scenario::clean(n, zones, better);
        (s.nodes, s.paths, s.links) = (n / 100, n / 10, usize::from(zones > 0));
        let grid = draw(&s, &[], seed);
        let mut times = Vec::new();
        let mut found = 0;
        for _ in 0..3 {
            let start = Instant::now();
            let a = localise(n, &grid.values, &grid.zones, better, &Settings::default());
            times.push(start.elapsed());
            found = a.findings.len();
        }
        times.sort();
        println!("| {better:?} | {zones} | {} | {found} |", ms(times[1]));
    }
    println!();
}

/// One accuracy row's grids.
struct Row {
    label: &'static str,
    n: usize,
    zones: usize,
    grids: u64,
    tweak: fn(&mut Scenario),
}

fn accuracy(quick: bool, seed: u64) {
    let gaussian: fn(&mut Scenario) = |_| {};
    let tails: fn(&mut Scenario) = |s| {
        s.tail = 0.01;
        s.tail_scale = 3.0;
    };
    let rough: fn(&mut Scenario) = |s| {
        s.tail = 0.01;
        s.tail_scale = 3.0;
        s.missing = 0.02;
        s.noise = 0.05;
    };
    let scale = if quick { 5 } else { 1 };
    let rows = [
        Row {
            label: "3 % noise",
            n: 16,
            zones: 2,
            grids: 400 / scale,
            tweak: gaussian,
        },
        Row {
            label: "3 % noise",
            n: 100,
            zones: 4,
            grids: 60 / scale,
            tweak: gaussian,
        },
        Row {
            label: "3 % noise",
            n: 1000,
            zones: 4,
            grids: 6 / scale,
            tweak: gaussian,
        },
        Row {
            label: "heavy tails",
            n: 16,
            zones: 2,
            grids: 400 / scale,
            tweak: tails,
        },
        Row {
            label: "heavy tails",
            n: 100,
            zones: 4,
            grids: 60 / scale,
            tweak: tails,
        },
        Row {
            label: "heavy tails",
            n: 1000,
            zones: 4,
            grids: 6 / scale,
            tweak: tails,
        },
        Row {
            label: "5 %, tails, 2 % missing",
            n: 100,
            zones: 4,
            grids: 60 / scale,
            tweak: rough,
        },
        Row {
            label: "5 %, tails, 2 % missing",
            n: 1000,
            zones: 4,
            grids: 6 / scale,
            tweak: rough,
        },
    ];
    println!("## Findings against injected faults (sizes 20-50 %)\n");
    println!(
        "| noise | n | zones | grids | faults | findings | precision | recall | nodes | paths | links | clean grids naming anything | confirmed: findings | precision | recall | paths | paths dropped | clean grids naming anything |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        for better in [Better::Higher, Better::Lower] {
            let mut s = Scenario::clean(row.n, row.zones, better);
            (row.tweak)(&mut s);
            s.nodes = (row.n / 50).max(1);
            s.paths = (row.n * row.n / 1000).max(2);
            s.links = 1;
            // [without, with confirmation]
            let mut all = [Tally::default(); 2];
            let mut paths = [Tally::default(); 2];
            let mut kinds = [Tally::default(); 3];
            let mut noisy = [0; 2];
            let mut dropped = 0;
            for g in 0..row.grids.max(1) {
                let seed = seed * 1_000_003 + g;
                let grid = draw(&s, &[], seed);
                let a = localise(
                    row.n,
                    &grid.values,
                    &grid.zones,
                    better,
                    &Settings::default(),
                );
                let kept = confirmed(&s, &grid, &a, seed);
                dropped += a.findings.len() - kept.len();
                for (k, findings) in [&a.findings, &kept].into_iter().enumerate() {
                    all[k].add(Tally::of(findings, &grid.faults));
                    paths[k].add(of_kind(findings, &grid.faults, 1));
                }
                for (k, tally) in kinds.iter_mut().enumerate() {
                    tally.add(of_kind(&a.findings, &grid.faults, k));
                }
                let mut clean = s.clone();
                (clean.nodes, clean.paths, clean.links) = (0, 0, 0);
                let grid = draw(&clean, &[], seed);
                let a = localise(
                    row.n,
                    &grid.values,
                    &grid.zones,
                    better,
                    &Settings::default(),
                );
                noisy[0] += usize::from(!a.findings.is_empty());
                noisy[1] += usize::from(!confirmed(&clean, &grid, &a, seed).is_empty());
            }
            let pr = |t: &Tally| format!("{:.2}/{:.2}", t.precision(), t.recall());
            let grids = row.grids.max(1);
            println!(
                "| {} ({}) | {} | {} | {grids} | {} | {} | {:.3} | {:.3} | {} | {} | {} | {} of {grids} | {} | {:.3} | {:.3} | {} | {dropped} | {} of {grids} |",
                row.label,
                if better == Better::Higher { "throughput" } else { "latency" },
                row.n,
                row.zones,
                all[0].right + all[0].missed,
                all[0].right + all[0].wrong,
                all[0].precision(),
                all[0].recall(),
                pr(&kinds[0]),
                pr(&paths[0]),
                pr(&kinds[2]),
                noisy[0],
                all[1].right + all[1].wrong,
                all[1].precision(),
                all[1].recall(),
                pr(&paths[1]),
                noisy[1],
            );
        }
    }
    println!("\n(nodes, paths, links: precision/recall of that kind alone; confirmed: after the confirmation round, which measures every path finding's cell once more with fresh noise and drops the finding unless that measurement stands out too)");
}

/// The findings the confirmation round keeps: every path finding's cell
/// measured again (one schedule, fresh noise), kept when it confirms.
fn confirmed(s: &Scenario, grid: &SimGrid, a: &Analysis, seed: u64) -> Vec<Finding> {
    let cells: Vec<(usize, usize)> = a
        .findings
        .iter()
        .filter_map(|f| match f.place {
            Place::Path { src, dst } => Some((src, dst)),
            _ => None,
        })
        .collect();
    let again = measure_again(s, grid, &cells, seed ^ 0x5eed_c0f1);
    a.findings
        .iter()
        .filter(|f| match f.place {
            Place::Path { src, dst } => {
                let k = cells.iter().position(|&c| c == (src, dst)).unwrap_or(0);
                confirms(a, src, dst, again[k], s.better, &Settings::default())
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// The tally of findings and faults of one kind.
fn of_kind(findings: &[Finding], faults: &[netagg::mesh::simulate::Fault], k: usize) -> Tally {
    let findings: Vec<_> = findings
        .iter()
        .filter(|f| kind(&f.place) == k)
        .cloned()
        .collect();
    let faults: Vec<_> = faults
        .iter()
        .filter(|f| kind(&f.place) == k)
        .cloned()
        .collect();
    Tally::of(&findings, &faults)
}

fn kind(place: &Place) -> usize {
    match place {
        Place::Node { .. } => 0,
        Place::Path { .. } => 1,
        Place::ZoneLink { .. } => 2,
    }
}
