//! The comma rules of two-value options (netperf's `break_args()` and
//! `break_args_explicit()`), and a strict sizespec reader (`32K`, `32k`)
//! for values that are ours, not netperf's (netagg's experiment factors),
//! where a malformed number is an error. netperf's own option values are
//! read as netperf reads them, garbage included, by `cnum`.

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
