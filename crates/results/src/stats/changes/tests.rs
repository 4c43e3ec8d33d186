//! Change points found where they are, and not where they are not: steps
//! of 2–50 % at their index, stationary normal and heavy-tailed noise at
//! the stated rate, several changes, outliers, a slow drift, a change of
//! spread alone; settings checked; the same seed the same answer.

use super::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seeded noise: standard normal (Box–Muller) or Student's t with 3
/// degrees of freedom (heavy tails: no fourth moment).
struct Noise(ChaCha8Rng);

impl Noise {
    fn new(seed: u64) -> Noise {
        Noise(ChaCha8Rng::seed_from_u64(seed))
    }

    fn normal(&mut self) -> f64 {
        let u: f64 = self.0.random_range(f64::MIN_POSITIVE..1.0);
        let v: f64 = self.0.random_range(0.0..1.0);
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    fn t3(&mut self) -> f64 {
        let chi2: f64 = (0..3).map(|_| self.normal().powi(2)).sum();
        self.normal() / (chi2 / 3.0).sqrt()
    }
}

/// `levels` as (first index, level) steps over `n` points, with relative
/// noise `cv` drawn by `draw`.
fn series(n: usize, steps: &[(usize, f64)], cv: f64, noise: &mut Noise, t3: bool) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let level = steps.iter().rev().find(|s| s.0 <= i).map_or(100.0, |s| s.1);
            let e = if t3 { noise.t3() } else { noise.normal() };
            level * (1.0 + cv * e)
        })
        .collect()
}

fn indices(points: &[ChangePoint]) -> Vec<usize> {
    points.iter().map(|c| c.index).collect()
}

#[test]
fn steps_of_2_to_50_percent_are_found_at_their_index() {
    let opts = ChangeOptions::default();
    for (k, step) in [0.02, 0.05, 0.1, 0.2, 0.5, -0.02, -0.3]
        .into_iter()
        .enumerate()
    {
        let mut noise = Noise::new(k as u64);
        let x = series(
            300,
            &[(180, 100.0 * (1.0 + step))],
            0.005,
            &mut noise,
            false,
        );
        let found = change_points(&x, &opts).unwrap();
        assert_eq!(found.len(), 1, "{step}: {found:?}");
        let c = &found[0];
        assert!(c.index.abs_diff(180) <= 1, "{step}: at {}", c.index);
        assert!(c.p_value <= opts.alpha && c.local_p_value <= opts.alpha);
        let r = c.ratio.unwrap();
        assert!((r.estimate - 1.0 - step).abs() < 0.005, "{step}: {r:?}");
        assert!(
            r.low <= r.estimate && r.estimate <= r.high && r.high - r.low < 0.02,
            "{r:?}"
        );
        assert!((c.median_after / c.median_before - 1.0 - step).abs() < 0.005);
        assert_eq!((c.n_before, c.n_after), (c.index, 300 - c.index));
    }
}

#[test]
fn stationary_noise_gives_changes_at_about_the_stated_rate() {
    let opts = ChangeOptions::default();
    for t3 in [false, true] {
        let mut noise = Noise::new(u64::from(t3) + 100);
        let runs = 300;
        let with_change = (0..runs)
            .filter(|_| {
                let x = series(120, &[], 0.02, &mut noise, t3);
                !change_points(&x, &opts).unwrap().is_empty()
            })
            .count();
        // alpha = 1 %: 3 expected; 9 would be beyond chance (p < 0.005).
        assert!(with_change <= 8, "t3={t3}: {with_change} of {runs}");
    }
}

#[test]
fn several_changes_are_each_found() {
    let mut noise = Noise::new(7);
    let steps = [(100, 110.0), (250, 95.0), (400, 120.0), (480, 100.0)];
    let x = series(600, &steps, 0.01, &mut noise, true);
    let found = change_points(&x, &ChangeOptions::default()).unwrap();
    let at = indices(&found);
    assert_eq!(at.len(), steps.len(), "{at:?}");
    for (got, want) in at.iter().zip(steps) {
        assert!(got.abs_diff(want.0) <= 2, "{at:?}");
    }
    // Each median is its own segment's.
    assert!((found[1].median_before - 110.0).abs() < 1.0);
    assert!((found[1].median_after - 95.0).abs() < 1.0);
}

#[test]
fn outliers_are_not_changes() {
    let mut noise = Noise::new(11);
    let mut x = series(400, &[], 0.01, &mut noise, false);
    for i in (0..x.len()).step_by(37) {
        x[i] *= if i % 2 == 0 { 10.0 } else { 0.05 };
    }
    // A burst of five together.
    for v in &mut x[200..205] {
        *v *= 3.0;
    }
    let found = change_points(&x, &ChangeOptions::default()).unwrap();
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_slow_drift_is_not_a_step() {
    for seed in 0..5 {
        let mut noise = Noise::new(200 + seed);
        // 10 % over 1,000 points under 1 % noise: clearly moving, never jumping.
        let x: Vec<f64> = (0..1000)
            .map(|i| 100.0 * (1.0 + 0.1 * i as f64 / 1000.0) * (1.0 + 0.01 * noise.normal()))
            .collect();
        let found = change_points(&x, &ChangeOptions::default()).unwrap();
        assert!(found.is_empty(), "seed {seed}: {found:?}");
    }
}

#[test]
fn a_step_on_a_drift_is_found() {
    let mut noise = Noise::new(5);
    let x: Vec<f64> = (0..1000)
        .map(|i| {
            let level = 100.0 * (1.0 + 0.05 * i as f64 / 1000.0) + if i >= 600 { 8.0 } else { 0.0 };
            level * (1.0 + 0.01 * noise.normal())
        })
        .collect();
    let found = change_points(&x, &ChangeOptions::default()).unwrap();
    let at = indices(&found);
    assert_eq!(at.len(), 1, "{found:#?}");
    assert!(at[0].abs_diff(600) <= 2, "{at:?}");
}

#[test]
fn a_change_of_spread_alone_is_found() {
    let mut noise = Noise::new(9);
    let x: Vec<f64> = (0..600)
        .map(|i| 100.0 * (1.0 + if i < 300 { 0.005 } else { 0.04 } * noise.normal()))
        .collect();
    let found = change_points(&x, &ChangeOptions::default()).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].index.abs_diff(300) <= 10, "{found:?}");
}

#[test]
fn the_same_seed_gives_the_same_answer_and_a_change_is_reproducible() {
    let mut noise = Noise::new(3);
    let x = series(500, &[(250, 103.0)], 0.01, &mut noise, true);
    let opts = ChangeOptions::default();
    assert_eq!(
        change_points(&x, &opts).unwrap(),
        change_points(&x, &opts).unwrap()
    );
}

#[test]
fn short_constant_and_bad_input() {
    let opts = ChangeOptions::default();
    assert_eq!(change_points(&[], &opts).unwrap(), vec![]);
    assert_eq!(change_points(&[1.0; 9], &opts).unwrap(), vec![]);
    assert_eq!(change_points(&[5.0; 500], &opts).unwrap(), vec![]);
    assert!(matches!(
        change_points(&[1.0, f64::NAN], &opts),
        Err(StatsError::NonFinite { index: 1, .. })
    ));
    // A step from 0: found, its ratio undefined.
    let x: Vec<f64> = (0..40).map(|i| if i < 20 { 0.0 } else { 1.0 }).collect();
    let found = change_points(&x, &opts).unwrap();
    assert_eq!(indices(&found), [20]);
    assert_eq!(found[0].ratio, None);
    for bad in [
        ChangeOptions {
            alpha: 0.0,
            ..opts.clone()
        },
        ChangeOptions {
            alpha: 0.001,
            ..opts.clone()
        },
        ChangeOptions {
            min_size: 1,
            ..opts.clone()
        },
        ChangeOptions {
            min_change: -1.0,
            ..opts.clone()
        },
    ] {
        assert!(matches!(
            change_points(&[1.0; 20], &bad),
            Err(StatsError::InvalidSetting(_))
        ));
    }
}

#[test]
fn small_changes_can_be_left_out() {
    let mut noise = Noise::new(4);
    let x = series(400, &[(200, 102.0)], 0.002, &mut noise, false);
    let opts = ChangeOptions::default();
    assert_eq!(change_points(&x, &opts).unwrap().len(), 1);
    let coarse = ChangeOptions {
        min_change: 0.05,
        ..opts
    };
    assert!(change_points(&x, &coarse).unwrap().is_empty());
}
