//! Typed, range-checked readers of option values shared by the global and
//! test-specific option handlers: each turns a malformed or out-of-range
//! value into a [`CliError`] that names the option and the text.

use super::error::{CliError, OptionName};
use super::sizespec::{self, Halves};

/// netperf keeps sizes, counts and ids in C `int`s and sends them as 32-bit
/// signed fields, so nothing larger is accepted.
pub const INT_MAX: u64 = i32::MAX as u64;

/// Why `value` is outside `min..=max`, in the words a user needs.
fn range_reason(value: i128, min: i128, max: i128) -> String {
    if max < i128::from(i32::MAX) {
        format!("must be between {min} and {max}")
    } else if value > max {
        format!("must be at most {max}")
    } else {
        format!("must be at least {min}")
    }
}

/// A sizespec (`32K`, `1m`, `7`) between `min` and `max`.
pub fn size(option: OptionName, text: &str, min: u64, max: u64) -> Result<u64, CliError> {
    let value =
        sizespec::parse_size(text).map_err(|reason| CliError::invalid(option, text, reason))?;
    if value < min || value > max {
        return Err(CliError::invalid(
            option,
            text,
            range_reason(value.into(), min.into(), max.into()),
        ));
    }
    Ok(value)
}

/// A sizespec that fits netperf's `int`, as `u32`.
pub fn size_u32(option: OptionName, text: &str, min: u32) -> Result<u32, CliError> {
    let value = size(option, text, u64::from(min), INT_MAX)?;
    u32::try_from(value).map_err(|_| CliError::invalid(option, text, "number too large"))
}

/// A sizespec that fits netperf's `int`, as `i32`.
pub fn size_i32(option: OptionName, text: &str, min: u32) -> Result<i32, CliError> {
    let value = size(option, text, u64::from(min), INT_MAX)?;
    i32::try_from(value).map_err(|_| CliError::invalid(option, text, "number too large"))
}

/// A socket buffer request (`-s`, `-S`) as netperf reads it: a sizespec,
/// 0 (netperf asks the kernel for 0 bytes: its smallest buffer), or a
/// negative number (the system default, shown as given). netperf's own
/// example scripts pass `-s 0` and `-s -1`.
pub fn buffer_request(option: OptionName, text: &str) -> Result<i32, CliError> {
    if text.trim_start().starts_with('-') {
        let value = plain_int(option, text, i64::from(i32::MIN), -1)?;
        return Ok(value as i32);
    }
    size_i32(option, text, 0)
}

/// A plain integer (netperf reads these with `atoi()`, so no unit suffix)
/// between `min` and `max`.
pub fn plain_int(option: OptionName, text: &str, min: i64, max: i64) -> Result<i64, CliError> {
    let value = sizespec::parse_plain_int(text)
        .map_err(|reason| CliError::invalid(option, text, reason))?;
    if value < min || value > max {
        let reason = range_reason(value.into(), min.into(), max.into());
        return Err(CliError::invalid(option, text, reason));
    }
    Ok(value)
}

/// A plain integer that fits `T` and lies in `min..=max`.
pub fn plain<T: TryFrom<i64>>(
    option: OptionName,
    text: &str,
    min: i64,
    max: i64,
) -> Result<T, CliError> {
    let value = plain_int(option, text, min, max)?;
    T::try_from(value).map_err(|_| CliError::invalid(option, text, "number too large"))
}

/// A finite decimal number.
pub fn decimal(option: OptionName, text: &str) -> Result<f64, CliError> {
    sizespec::parse_decimal(text).map_err(|reason| CliError::invalid(option, text, reason))
}

/// A flag written as `0` or `1` (netperf's `-P`, `-R`).
pub fn zero_or_one(option: OptionName, text: &str) -> Result<bool, CliError> {
    match text.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(CliError::invalid(option, text, "must be 0 or 1")),
    }
}

/// Splits a two-value option with `split` and refuses a value with neither
/// half (`""` or `","`): netperf's usage says at least one must be given.
pub fn pair<'a>(
    option: OptionName,
    text: &'a str,
    split: fn(&str) -> Halves<'_>,
) -> Result<Halves<'a>, CliError> {
    let halves = split(text);
    if halves.is_empty() {
        return Err(CliError::invalid(
            option,
            text,
            "at least one of the two values must be given",
        ));
    }
    Ok(halves)
}

/// Applies `read` to each present half of a two-value option.
pub fn pair_of<T>(
    option: OptionName,
    text: &str,
    split: fn(&str) -> Halves<'_>,
    read: impl Fn(&str) -> Result<T, CliError>,
) -> Result<(Option<T>, Option<T>), CliError> {
    let halves = pair(option, text, split)?;
    let first = halves.first.map(&read).transpose()?;
    let second = halves.second.map(&read).transpose()?;
    Ok((first, second))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::error::Section;

    const M: OptionName = OptionName {
        letter: 'm',
        section: Section::Test,
    };

    #[test]
    fn sizes_are_range_checked() {
        assert_eq!(size_u32(M, "32K", 1), Ok(32768));
        assert_eq!(
            size_u32(M, "0", 1).map_err(|e| e.to_string()),
            Err("invalid value '0' for test option -m: must be at least 1".into())
        );
        assert_eq!(
            size_u32(M, "abc", 1).map_err(|e| e.to_string()),
            Err("invalid value 'abc' for test option -m: not a number".into())
        );
        assert!(size_u32(M, "4G", 1).is_err());
        assert_eq!(size_i32(M, "2g", 1), Ok(2_000_000_000));
    }

    #[test]
    fn plain_ints_are_range_checked() {
        assert_eq!(plain::<u16>(M, "5000", 0, 65535), Ok(5000));
        assert_eq!(
            plain::<u16>(M, "70000", 0, 65535).map_err(|e| e.to_string()),
            Err("invalid value '70000' for test option -m: must be between 0 and 65535".into())
        );
        assert!(plain::<u16>(M, "1K", 0, 65535).is_err());
    }

    #[test]
    fn pairs_need_one_half() {
        assert!(pair(M, ",", sizespec::split_pair).is_err());
        assert!(pair(M, "", sizespec::split_pair_explicit).is_err());
        assert_eq!(
            pair_of(M, "1,2K", sizespec::split_pair, |t| size_u32(M, t, 1)),
            Ok((Some(1), Some(2048)))
        );
        assert_eq!(
            pair_of(M, "8", sizespec::split_pair_explicit, |t| size_u32(M, t, 1)),
            Ok((Some(8), None))
        );
    }
}
