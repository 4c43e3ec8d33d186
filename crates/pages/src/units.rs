//! How pages write numbers on charts: short SI labels for ticks (18k, 2.5M,
//! 0.25) instead of "18000.0", never more than three significant digits.

/// Decimals that show `value` to `significant` digits (0 to 6).
pub fn decimals_for(value: f64, significant: i32) -> usize {
    if value == 0.0 || !value.is_finite() {
        return 0;
    }
    let magnitude = value.abs().log10().floor() as i32;
    (significant - 1 - magnitude).clamp(0, 6) as usize
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
