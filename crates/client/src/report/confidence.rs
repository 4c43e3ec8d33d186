//! The "!!! WARNING ... Desired confidence was not achieved" block.
//!
//! netperf prints it (even with -P 0) before the result titles when more than
//! one iteration was allowed (`-i max>1`) and the last iteration still missed
//! the requested confidence. When confidence *is* met netperf prints nothing
//! extra in classic output, so there is no "met" line to render.

use super::cfmt::{sprintf, Arg};

/// The achieved confidence-interval widths, in percent, netperf reports for
/// throughput and each end's CPU utilization (`100 * (interval - x_confid)`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConfidenceWidths {
    pub throughput: f64,
    pub local_cpu: f64,
    pub remote_cpu: f64,
}

const WARNING_TEMPLATE: &str = "\
!!! WARNING
!!! Desired confidence was not achieved within the specified iterations.
!!! This implies that there was variability in the test environment that
!!! must be investigated before going further.
!!! Confidence intervals: Throughput      : %4.3f%%
!!!                       Local CPU util  : %4.3f%%
!!!                       Remote CPU util : %4.3f%%

";

/// The warning block, ending with its blank line.
pub fn render_confidence_warning(widths: &ConfidenceWidths) -> String {
    sprintf(
        WARNING_TEMPLATE,
        &[
            Arg::Float(widths.throughput),
            Arg::Float(widths.local_cpu),
            Arg::Float(widths.remote_cpu),
        ],
    )
}

/// Whether netperf shows the warning: only when iterating was allowed
/// (`iteration_max > 1`) and the confidence target was missed.
pub fn should_warn(iteration_max: u32, confidence_met: bool) -> bool {
    iteration_max > 1 && !confidence_met
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_block_matches_transcript() {
        let text = render_confidence_warning(&ConfidenceWidths {
            throughput: 11.102,
            local_cpu: 0.0,
            remote_cpu: 0.0,
        });
        let expected = "!!! WARNING\n\
!!! Desired confidence was not achieved within the specified iterations.\n\
!!! This implies that there was variability in the test environment that\n\
!!! must be investigated before going further.\n\
!!! Confidence intervals: Throughput      : 11.102%\n\
!!!                       Local CPU util  : 0.000%\n\
!!!                       Remote CPU util : 0.000%\n\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn non_finite_widths_do_not_panic() {
        let text = render_confidence_warning(&ConfidenceWidths {
            throughput: f64::NAN,
            local_cpu: f64::INFINITY,
            remote_cpu: -0.0,
        });
        assert!(text.contains("Throughput      :  nan%"));
        assert!(text.contains("Local CPU util  :  inf%"));
        assert!(text.contains("Remote CPU util : -0.000%"));
    }

    #[test]
    fn warns_only_when_iterating_and_missed() {
        assert!(should_warn(5, false));
        assert!(!should_warn(5, true));
        assert!(!should_warn(1, false));
    }
}
