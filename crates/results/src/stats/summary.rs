//! Descriptive statistics of one cell's repetitions: n, mean, median, sample
//! standard deviation, min/max, percentiles and the 95 % confidence interval
//! of the mean from Student's t distribution (quantile from `statrs`).

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::quantile::{median_of_sorted, quantile_of_sorted};
use super::{sorted_copy, validate, StatsError};

/// A closed interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether `value` lies within the interval (bounds included).
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// Percentiles by linear interpolation between closest ranks (see
/// [`super::quantile`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    pub p5: f64,
    pub p25: f64,
    pub p75: f64,
    pub p95: f64,
    pub p99: f64,
}

/// Descriptive statistics of a non-empty sample of finite values.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (divisor n − 1); `None` for n = 1, where it
    /// is undefined.
    pub stdev: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub percentiles: Percentiles,
    /// `mean ± t(0.975, n − 1) · stdev / √n`; `None` for n = 1.
    pub mean_ci95: Option<Interval>,
}

impl Summary {
    /// Summarises `samples`. Errors on empty input, on NaN or infinite
    /// values, and on values so large that the mean or variance overflows.
    pub fn of(samples: &[f64]) -> Result<Summary, StatsError> {
        validate(samples)?;
        let sorted = sorted_copy(samples);
        let n = sorted.len();
        let mean = mean(samples)?;
        let stdev = match n {
            1 => None,
            _ => Some(sample_stdev(samples, mean)?),
        };
        let mean_ci95 = match stdev {
            Some(s) => {
                let half = t_quantile(0.975, (n - 1) as f64)? * s / (n as f64).sqrt();
                if !half.is_finite() {
                    return Err(StatsError::Overflow {
                        what: "the confidence interval",
                    });
                }
                Some(Interval {
                    low: mean - half,
                    high: mean + half,
                })
            }
            None => None,
        };
        // The slices are non-empty (validated above), so these are Some.
        let q = |p: f64| quantile_of_sorted(&sorted, p).unwrap_or(f64::NAN);
        Ok(Summary {
            n,
            mean,
            median: median_of_sorted(&sorted).unwrap_or(f64::NAN),
            stdev,
            min: sorted[0],
            max: sorted[n - 1],
            percentiles: Percentiles {
                p5: q(0.05),
                p25: q(0.25),
                p75: q(0.75),
                p95: q(0.95),
                p99: q(0.99),
            },
            mean_ci95,
        })
    }
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom
/// (e.g. `t_quantile(0.975, 9.0)` ≈ 2.262).
pub fn t_quantile(p: f64, df: f64) -> Result<f64, StatsError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(StatsError::InvalidSetting(format!(
            "t quantile probability {p} is not strictly between 0 and 1"
        )));
    }
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|e| {
        StatsError::InvalidSetting(format!("Student's t with {df} degrees of freedom: {e}"))
    })?;
    Ok(dist.inverse_cdf(p))
}

/// Compensated (Neumaier) sum, so that the mean of many values of mixed
/// magnitude stays within an ulp or two of the exact one.
fn compensated_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut compensation) = (0.0f64, 0.0f64);
    for v in values {
        let t = sum + v;
        compensation += if sum.abs() >= v.abs() {
            (sum - t) + v
        } else {
            (v - t) + sum
        };
        sum = t;
    }
    sum + compensation
}

/// Arithmetic mean of validated samples. Sums first (exact for subnormal
/// values, which dividing first would flush to zero) and divides each value
/// first only when the sum overflows; the result is clamped into
/// [min, max], where the exact mean lies, so that rounding cannot put it out.
pub(crate) fn mean(samples: &[f64]) -> Result<f64, StatsError> {
    let n = samples.len() as f64;
    let sum = compensated_sum(samples.iter().copied());
    let mean = if sum.is_finite() {
        sum / n
    } else {
        compensated_sum(samples.iter().map(|v| v / n))
    };
    if !mean.is_finite() {
        return Err(StatsError::Overflow { what: "the mean" });
    }
    let (min, max) = samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    Ok(mean.clamp(min, max))
}

/// Sample standard deviation (divisor n − 1) by the two-pass formula, which
/// avoids the cancellation of the Σx² − n·mean² shortcut.
fn sample_stdev(samples: &[f64], mean: f64) -> Result<f64, StatsError> {
    let squares = compensated_sum(samples.iter().map(|v| (v - mean) * (v - mean)));
    let stdev = (squares / (samples.len() - 1) as f64).sqrt();
    if stdev.is_finite() {
        Ok(stdev)
    } else {
        Err(StatsError::Overflow {
            what: "the variance",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_an_error() {
        assert_eq!(Summary::of(&[]), Err(StatsError::Empty));
    }

    #[test]
    fn nan_and_infinity_are_errors_naming_the_index() {
        match Summary::of(&[1.0, f64::NAN]) {
            Err(StatsError::NonFinite { index: 1, value }) => assert!(value.is_nan()),
            other => panic!("expected NonFinite, got {other:?}"),
        }
        assert_eq!(
            Summary::of(&[f64::NEG_INFINITY, 1.0]),
            Err(StatsError::NonFinite {
                index: 0,
                value: f64::NEG_INFINITY
            })
        );
    }

    #[test]
    fn single_value_has_no_stdev_or_interval() {
        let s = Summary::of(&[42.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (1, 42.0, 42.0, 42.0, 42.0)
        );
        assert_eq!(s.stdev, None);
        assert_eq!(s.mean_ci95, None);
        assert_eq!(s.percentiles.p99, 42.0);
    }

    #[test]
    fn constant_values_have_zero_width_interval() {
        let s = Summary::of(&[3.0; 5]).unwrap();
        assert_eq!(s.stdev, Some(0.0));
        assert_eq!(
            s.mean_ci95,
            Some(Interval {
                low: 3.0,
                high: 3.0
            })
        );
    }

    #[test]
    fn two_values_use_twelve_point_seven() {
        // mean 2, s = √2, half-width = 12.7062 · √2 / √2
        let s = Summary::of(&[1.0, 3.0]).unwrap();
        let ci = s.mean_ci95.unwrap();
        assert!((ci.high - 2.0 - 12.706_204_736).abs() < 1e-6, "{ci:?}");
        assert!((2.0 - ci.low - 12.706_204_736).abs() < 1e-6, "{ci:?}");
    }

    #[test]
    fn huge_values_overflow_cleanly() {
        let s = Summary::of(&[f64::MAX, f64::MAX]).unwrap();
        assert_eq!(s.mean, f64::MAX);
        assert!(matches!(
            Summary::of(&[f64::MAX, -f64::MAX]),
            Err(StatsError::Overflow { .. })
        ));
    }

    #[test]
    fn subnormal_values_keep_their_mean() {
        let tiny = f64::from_bits(1); // the smallest subnormal
        let s = Summary::of(&[tiny; 3]).unwrap();
        assert_eq!((s.mean, s.median), (tiny, tiny));
    }

    #[test]
    fn t_quantile_rejects_bad_arguments() {
        assert!(t_quantile(0.0, 5.0).is_err());
        assert!(t_quantile(1.0, 5.0).is_err());
        assert!(t_quantile(f64::NAN, 5.0).is_err());
        assert!(t_quantile(0.975, 0.0).is_err());
        assert!(t_quantile(0.975, f64::NAN).is_err());
    }

    #[test]
    fn t_quantile_is_symmetric() {
        let hi = t_quantile(0.975, 4.0).unwrap();
        let lo = t_quantile(0.025, 4.0).unwrap();
        assert!((hi + lo).abs() < 1e-9);
        assert!((hi - 2.776_445_105).abs() < 1e-6);
    }
}
