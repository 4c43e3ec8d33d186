//! How the experiment reports write numbers: a value to three significant
//! digits, and a mean with enough digits to show its interval's half-width.

use netperf_pages::units::decimals_for;

/// `value` to three significant digits, more whole digits kept as they are
/// ("4805", "18.3", "1.69", "0.430").
pub fn format_value(value: f64) -> String {
    format!("{value:.*}", decimals_for(value, 3))
}

/// "mean ± half" where the decimals show both the mean to three
/// significant digits and the half-width to two ("940.12 ± 0.40").
pub fn format_mean_ci(mean: f64, half_width: f64) -> String {
    let decimals = decimals_for(mean, 3).max(decimals_for(half_width, 2));
    format!("{mean:.decimals$} ± {half_width:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_three_significant_digits() {
        assert_eq!(format_value(4805.3), "4805");
        assert_eq!(format_value(18.345), "18.3");
        assert_eq!(format_value(1.6912), "1.69");
        assert_eq!(format_value(0.43), "0.430");
        assert_eq!(format_value(0.0), "0");
    }

    #[test]
    fn means_show_their_half_width() {
        assert_eq!(format_mean_ci(940.123, 0.4), "940.12 ± 0.40");
        assert_eq!(format_mean_ci(18314.2, 250.7), "18314 ± 251");
        assert_eq!(format_mean_ci(1.6912, 0.0213), "1.691 ± 0.021");
        assert_eq!(format_mean_ci(3.0, 0.0), "3.00 ± 0.00");
    }
}
