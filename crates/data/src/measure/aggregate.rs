//! The aggregate of concurrent streams: one figure (a rate or a count) summed
//! over the streams that ran at once. The one place the sum is taken: netagg's
//! samples (every stream's rate at one instant) and an experiment's runs of
//! several streams (their rates, counts, and the work service demand is
//! charged for) both call [`sum`]. How evenly the streams shared it is
//! [`jain`]'s index, also taken in one place (netagg's levels, the flows of
//! a many-flow test).

/// The sum of every stream's figure, or `None` when a stream did not measure
/// it: a sum over some of the streams would pass for the whole aggregate.
/// No streams sum to zero. Non-finite figures are the caller's to keep out
/// (they would make the sum non-finite); nothing panics.
pub fn sum(per_stream: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    per_stream.into_iter().sum()
}

/// Jain's fairness index of the streams' rates: (sum x)^2 / (n sum x^2),
/// 1 when all are equal, 1/n when one did everything; 0 with no work.
pub fn jain(rates: &[f64]) -> f64 {
    let sum: f64 = rates.iter().sum();
    let squares: f64 = rates.iter().map(|r| r * r).sum();
    if rates.is_empty() || squares == 0.0 {
        return 0.0;
    }
    sum * sum / (rates.len() as f64 * squares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_add_up() {
        assert_eq!(sum([Some(1.5), Some(2.25), Some(4.0)]), Some(7.75));
        assert_eq!(sum([Some(9412.31)]), Some(9412.31));
        // The same additions, in the same order, as the streams' own sum.
        let rates = [0.1, 0.2, 0.3];
        assert_eq!(sum(rates.map(Some)), Some(rates.iter().sum()));
    }

    #[test]
    fn a_stream_without_the_figure_leaves_no_aggregate() {
        assert_eq!(sum([Some(1.0), None, Some(3.0)]), None);
        assert_eq!(sum([None]), None);
    }

    #[test]
    fn jain_is_one_when_fair_and_one_over_n_when_not() {
        assert_eq!(jain(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert_eq!(jain(&[8.0, 0.0, 0.0, 0.0]), 0.25);
        assert_eq!(jain(&[]), 0.0);
        assert_eq!(jain(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(sum(std::iter::empty()), Some(0.0));
        assert_eq!(sum([Some(0.0), Some(0.0)]), Some(0.0));
        assert!(sum([Some(1.0), Some(f64::NAN)]).unwrap().is_nan());
        assert_eq!(sum([Some(f64::MAX), Some(f64::MAX)]), Some(f64::INFINITY));
    }
}
