//! How the experiment reports write numbers: a mean with enough digits to
//! show its interval's half-width, and short SI labels for chart ticks
//! (18k, 2.5M, 0.25) instead of "18000.0".

/// Decimals that show `value` to `significant` digits (0 to 6).
fn decimals_for(value: f64, significant: i32) -> usize {
    if value == 0.0 || !value.is_finite() {
        return 0;
    }
    let magnitude = value.abs().log10().floor() as i32;
    (significant - 1 - magnitude).clamp(0, 6) as usize
}

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

/// A tick label: k, M, G, T above a thousand, plain decimals below, never
/// more than three significant digits and no trailing zeros.
pub fn si_label(value: f64) -> String {
    const PREFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let (scaled, suffix) = PREFIXES
        .iter()
        .find(|(scale, _)| value.abs() >= *scale)
        .map_or((value, ""), |(scale, s)| (value / scale, *s));
    let text = format!("{scaled:.*}", decimals_for(scaled, 3));
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    let text = if text == "-0" { "0".to_string() } else { text };
    format!("{text}{suffix}")
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

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(si_label(18000.0), "18k");
        assert_eq!(si_label(2500.0), "2.5k");
        assert_eq!(si_label(25_000_000.0), "25M");
        assert_eq!(si_label(0.25), "0.25");
        assert_eq!(si_label(0.0), "0");
        assert_eq!(si_label(1.5), "1.5");
        assert_eq!(si_label(12345.0), "12.3k");
        assert_eq!(si_label(-2000.0), "-2k");
    }
}
