//! Number and pair syntax of netperf option values: sizespecs with unit
//! suffixes (netperf's `convert()`), interval timespecs (`convert_timespec()`)
//! and the comma rules of two-value options (`break_args()` and
//! `break_args_explicit()`).
//!
//! netperf parses numbers with `atoi()` and silently turns garbage into 0;
//! here every malformed number is an error, which is the one deliberate
//! difference.

use thiserror::Error;

/// Why a number in an option value was rejected. The caller adds the option
/// name and the offending text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NumberError {
    #[error("empty value")]
    Empty,
    #[error("not a number")]
    NotANumber,
    #[error("unknown unit suffix '{0}' (use K, M, G for 2^10, 2^20, 2^30 or k, m, g for 10^3, 10^6, 10^9)")]
    UnknownSizeSuffix(String),
    #[error(
        "unknown time suffix '{0}' (use u for microseconds, m for milliseconds or s for seconds)"
    )]
    UnknownTimeSuffix(String),
    #[error("number too large")]
    TooLarge,
}

/// Unit suffixes of a sizespec: upper case are powers of two, lower case
/// powers of ten, exactly as the netperf manual describes them.
const SIZE_SUFFIXES: [(&str, u64); 7] = [
    ("", 1),
    ("K", 1 << 10),
    ("M", 1 << 20),
    ("G", 1 << 30),
    ("k", 1_000),
    ("m", 1_000_000),
    ("g", 1_000_000_000),
];

/// Suffixes of a timespec and the microseconds each unit holds. netperf
/// looks for the letters `m`, `u`, `s` (in that order), so `ms` and `us`
/// mean the same as `m` and `u`; no suffix means milliseconds.
const TIME_SUFFIXES: [(&str, u64); 6] = [
    ("", 1_000),
    ("m", 1_000),
    ("ms", 1_000),
    ("u", 1),
    ("us", 1),
    ("s", 1_000_000),
];

/// Splits `text` into its leading ASCII digits and the rest.
fn split_digits(text: &str) -> (&str, &str) {
    let end = text
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(text.len(), |(i, _)| i);
    text.split_at(end)
}

/// Parses a non-negative decimal count with an optional multiplier suffix
/// looked up in `suffixes`; `unknown` builds the error for a bad suffix.
fn parse_with_suffix(
    text: &str,
    suffixes: &[(&str, u64)],
    unknown: fn(String) -> NumberError,
) -> Result<u64, NumberError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(NumberError::Empty);
    }
    let (digits, suffix) = split_digits(text);
    if digits.is_empty() {
        return Err(NumberError::NotANumber);
    }
    let base: u64 = digits.parse().map_err(|_| NumberError::TooLarge)?;
    let multiplier = suffixes
        .iter()
        .find(|(name, _)| *name == suffix)
        .map(|(_, factor)| *factor);
    match multiplier {
        Some(factor) => base.checked_mul(factor).ok_or(NumberError::TooLarge),
        None if suffix.chars().all(|c| c.is_ascii_alphabetic()) => Err(unknown(suffix.to_string())),
        None => Err(NumberError::NotANumber),
    }
}

/// netperf's `convert()` for values that cannot be negative: `"32K"` is
/// 32768, `"32k"` is 32000, `"7"` is 7.
pub fn parse_size(text: &str) -> Result<u64, NumberError> {
    parse_with_suffix(text, &SIZE_SUFFIXES, NumberError::UnknownSizeSuffix)
}

/// netperf's `convert()` where a sign is meaningful (`-l -100K` is a byte
/// count of 102400): an optional leading `-` or `+`, then a sizespec.
pub fn parse_signed_size(text: &str) -> Result<i64, NumberError> {
    let text = text.trim();
    let (negative, magnitude_text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if magnitude_text.is_empty() && !text.is_empty() {
        return Err(NumberError::NotANumber);
    }
    let magnitude = parse_size(magnitude_text)?;
    let magnitude = i64::try_from(magnitude).map_err(|_| NumberError::TooLarge)?;
    Ok(if negative { -magnitude } else { magnitude })
}

/// netperf's `convert_timespec()`: an interval in microseconds from a count
/// with an optional `u`/`us`, `m`/`ms` or `s` suffix (milliseconds without one).
pub fn parse_timespec_usecs(text: &str) -> Result<u64, NumberError> {
    parse_with_suffix(text, &TIME_SUFFIXES, NumberError::UnknownTimeSuffix)
}

/// A plain integer as netperf reads with `atoi()` (no unit suffix), with
/// an optional sign.
pub fn parse_plain_int(text: &str) -> Result<i64, NumberError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(NumberError::Empty);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if unsigned.is_empty() || !unsigned.chars().all(|c| c.is_ascii_digit()) {
        return Err(NumberError::NotANumber);
    }
    text.parse().map_err(|_| NumberError::TooLarge)
}

/// A finite decimal number as netperf reads with `atof()`/`strtod()`.
pub fn parse_decimal(text: &str) -> Result<f64, NumberError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(NumberError::Empty);
    }
    // Rust also accepts "inf" and "nan"; netperf users never mean those.
    let looks_numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    if !looks_numeric {
        return Err(NumberError::NotANumber);
    }
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        Ok(_) => Err(NumberError::TooLarge),
        Err(_) => Err(NumberError::NotANumber),
    }
}

/// The two halves of a two-value option. An empty half is `None`: netperf
/// leaves that parameter at its previous value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Halves<'a> {
    pub first: Option<&'a str>,
    pub second: Option<&'a str>,
}

impl<'a> Halves<'a> {
    /// True when neither half holds a value (`""` or `","`).
    pub fn is_empty(&self) -> bool {
        self.first.is_none() && self.second.is_none()
    }
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// Splits at the first `separator`; everything after it, further separators
/// included, is the second half (as netperf's `strchr` split does).
fn split_at_first(text: &str, separator: char) -> Option<(&str, &str)> {
    text.split_once(separator)
}

/// netperf's `break_args()`, the rule for most two-value options: `"a,b"`
/// sets both, `"a,"` only the first, `",b"` only the second, and `"a"`
/// without a comma sets both to `a`.
pub fn split_pair(text: &str) -> Halves<'_> {
    match split_at_first(text, ',') {
        Some((first, second)) => Halves {
            first: non_empty(first),
            second: non_empty(second),
        },
        None => Halves {
            first: non_empty(text),
            second: non_empty(text),
        },
    }
}

/// netperf's `break_args_explicit_sep()`: like [`split_pair`] except that a
/// value without the separator sets only the first half.
pub fn split_pair_explicit_sep(text: &str, separator: char) -> Halves<'_> {
    match split_at_first(text, separator) {
        Some((first, second)) => Halves {
            first: non_empty(first),
            second: non_empty(second),
        },
        None => Halves {
            first: non_empty(text),
            second: None,
        },
    }
}

/// netperf's `break_args_explicit()`, the rule of the starred options
/// (`-D`, `-F`, `-H`, `-L`, `-p`): one value without a comma sets only the
/// first parameter.
pub fn split_pair_explicit(text: &str) -> Halves<'_> {
    split_pair_explicit_sep(text, ',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("16384"), Ok(16384));
        assert_eq!(parse_size(" 7 "), Ok(7));
    }

    #[test]
    fn every_size_suffix() {
        assert_eq!(parse_size("32K"), Ok(32 * 1024));
        assert_eq!(parse_size("2M"), Ok(2 * 1024 * 1024));
        assert_eq!(parse_size("3G"), Ok(3 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("32k"), Ok(32_000));
        assert_eq!(parse_size("2m"), Ok(2_000_000));
        assert_eq!(parse_size("3g"), Ok(3_000_000_000));
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert_eq!(parse_size(""), Err(NumberError::Empty));
        assert_eq!(parse_size("abc"), Err(NumberError::NotANumber));
        assert_eq!(parse_size("K"), Err(NumberError::NotANumber));
        assert_eq!(parse_size("-5"), Err(NumberError::NotANumber));
        assert_eq!(parse_size("1.5M"), Err(NumberError::NotANumber));
        assert_eq!(
            parse_size("32KB"),
            Err(NumberError::UnknownSizeSuffix("KB".into()))
        );
        assert_eq!(
            parse_size("4x"),
            Err(NumberError::UnknownSizeSuffix("x".into()))
        );
        assert_eq!(
            parse_size("99999999999999999999"),
            Err(NumberError::TooLarge)
        );
        assert_eq!(parse_size("99999999999G"), Err(NumberError::TooLarge));
    }

    #[test]
    fn signed_sizes() {
        assert_eq!(parse_signed_size("-100000"), Ok(-100_000));
        assert_eq!(parse_signed_size("-1K"), Ok(-1024));
        assert_eq!(parse_signed_size("+10"), Ok(10));
        assert_eq!(parse_signed_size("10"), Ok(10));
        assert_eq!(parse_signed_size("-"), Err(NumberError::NotANumber));
        assert_eq!(parse_signed_size(""), Err(NumberError::Empty));
    }

    #[test]
    fn timespecs_are_microseconds() {
        assert_eq!(parse_timespec_usecs("10"), Ok(10_000));
        assert_eq!(parse_timespec_usecs("10m"), Ok(10_000));
        assert_eq!(parse_timespec_usecs("10ms"), Ok(10_000));
        assert_eq!(parse_timespec_usecs("250u"), Ok(250));
        assert_eq!(parse_timespec_usecs("250us"), Ok(250));
        assert_eq!(parse_timespec_usecs("2s"), Ok(2_000_000));
        assert_eq!(
            parse_timespec_usecs("2h"),
            Err(NumberError::UnknownTimeSuffix("h".into()))
        );
        assert_eq!(parse_timespec_usecs("x"), Err(NumberError::NotANumber));
    }

    #[test]
    fn plain_ints_and_decimals() {
        assert_eq!(parse_plain_int("-3"), Ok(-3));
        assert_eq!(parse_plain_int("42"), Ok(42));
        assert_eq!(parse_plain_int("4K"), Err(NumberError::NotANumber));
        assert_eq!(parse_plain_int("-"), Err(NumberError::NotANumber));
        assert_eq!(parse_decimal("-0.5"), Ok(-0.5));
        assert_eq!(parse_decimal("1e2"), Ok(100.0));
        assert_eq!(parse_decimal("inf"), Err(NumberError::NotANumber));
        assert_eq!(parse_decimal("1.2.3"), Err(NumberError::NotANumber));
        assert_eq!(parse_decimal("1e999"), Err(NumberError::TooLarge));
    }

    fn halves<'a>(first: Option<&'a str>, second: Option<&'a str>) -> Halves<'a> {
        Halves { first, second }
    }

    #[test]
    fn pair_rules() {
        // one value without a comma sets both
        assert_eq!(split_pair("128K"), halves(Some("128K"), Some("128K")));
        // leading comma sets only the second
        assert_eq!(split_pair(",64K"), halves(None, Some("64K")));
        // trailing comma sets only the first
        assert_eq!(split_pair("32K,"), halves(Some("32K"), None));
        // both
        assert_eq!(split_pair("1,2"), halves(Some("1"), Some("2")));
        // only the first comma splits
        assert_eq!(split_pair("1,2,3"), halves(Some("1"), Some("2,3")));
        assert!(split_pair("").is_empty());
        assert!(split_pair(",").is_empty());
    }

    #[test]
    fn starred_pair_rules() {
        // one value without a comma sets only the first
        assert_eq!(split_pair_explicit("host"), halves(Some("host"), None));
        assert_eq!(split_pair_explicit(",6"), halves(None, Some("6")));
        assert_eq!(split_pair_explicit("host,"), halves(Some("host"), None));
        assert_eq!(
            split_pair_explicit("host,inet"),
            halves(Some("host"), Some("inet"))
        );
        assert_eq!(
            split_pair_explicit_sep("send|recv", '|'),
            halves(Some("send"), Some("recv"))
        );
    }
}
