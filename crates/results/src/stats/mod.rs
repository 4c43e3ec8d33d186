//! Statistics over repeated measurements of one experiment cell: a
//! descriptive [`Summary`] (n, mean, median, standard deviation, percentiles,
//! a Student-t confidence interval of the mean) and a seeded percentile
//! [`Bootstrap`] for the median's interval and for the ratio between two
//! levels of a factor, with a [`Verdict`] that says "no significant
//! difference" when the ratio's interval spans 1.
//!
//! Pure functions over `&[f64]`: no I/O, no global state, reproducible.

pub mod bootstrap;
pub mod changes;
pub mod quantile;
pub mod summary;

pub use bootstrap::{
    Bootstrap, Estimate, RatioEstimate, Statistic, Verdict, MIN_BOOTSTRAP_SAMPLES,
};
pub use changes::{change_points, ChangeOptions, ChangePoint};
pub use quantile::{median_of_sorted, quantile_of_sorted};
pub use summary::{t_quantile, Interval, Percentiles, Summary};

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("no samples: a statistic needs at least one value")]
    Empty,
    #[error("sample {index} is {value}: only finite values can be summarised")]
    NonFinite { index: usize, value: f64 },
    #[error("{what} needs at least {needed} samples, got {got}")]
    TooFewSamples {
        what: &'static str,
        needed: usize,
        got: usize,
    },
    #[error("the values are too large: {what} overflows a 64-bit float")]
    Overflow { what: &'static str },
    #[error("invalid setting: {0}")]
    InvalidSetting(String),
    #[error("ratio undefined: the baseline's {statistic} is 0 in {resamples} of the resamples (or the sample itself)")]
    ZeroDenominator {
        statistic: &'static str,
        resamples: usize,
    },
}

/// Rejects empty input and NaN or infinite values, naming the first offender.
pub(crate) fn validate(samples: &[f64]) -> Result<(), StatsError> {
    if samples.is_empty() {
        return Err(StatsError::Empty);
    }
    match samples.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            index,
            value: samples[index],
        }),
        None => Ok(()),
    }
}

/// A sorted copy of already validated (finite) samples.
pub(crate) fn sorted_copy(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    sorted
}
