//! How netperf 2.7.1 reads the numbers of its command line, to the bit:
//! C's `atoi`, `strtol(.., 0)` and `strtod`, and netperf's own `convert()`
//! (sizespecs) and `convert_timespec()` (intervals), with the wrap-around of
//! C's 32-bit `int` and `unsigned int` that the built netperf shows.
//!
//! Each reader returns the value netperf would hold and whether the text was
//! a plain number that means just that (`exact`): a leading number followed by
//! other text (`3s`), garbage read as 0, or a value that wrapped is read the
//! same, and the parser says so in one line on stderr.

/// A value as netperf holds it, and whether the text said exactly that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CRead<T> {
    pub value: T,
    pub exact: bool,
}

/// C's `isspace` in the C locale.
fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// What `strtol` consumed: the value (saturated to `i64` as glibc's `long`
/// does) and the bytes it used (0 when no digits).
struct Strtol {
    value: i64,
    used: usize,
    overflow: bool,
}

fn digit_value(byte: u8) -> Option<u32> {
    (byte as char).to_digit(36)
}

/// glibc's `strtol(text, &end, base)` for base 0 or 10.
fn strtol(text: &str, base: u32) -> Strtol {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && is_c_space(bytes[i]) {
        i += 1;
    }
    let negative = bytes.get(i) == Some(&b'-');
    if matches!(bytes.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut radix = base;
    let hex_prefix = bytes.get(i) == Some(&b'0')
        && matches!(bytes.get(i + 1), Some(b'x' | b'X'))
        && bytes
            .get(i + 2)
            .and_then(|b| digit_value(*b))
            .is_some_and(|d| d < 16);
    if base == 0 {
        radix = if hex_prefix {
            i += 2;
            16
        } else if bytes.get(i) == Some(&b'0') {
            8
        } else {
            10
        };
    }
    let start = i;
    let mut magnitude: u128 = 0;
    let mut overflow = false;
    while let Some(d) = bytes.get(i).and_then(|b| digit_value(*b)) {
        if d >= radix {
            break;
        }
        magnitude = magnitude * u128::from(radix) + u128::from(d);
        if magnitude > u128::from(u64::MAX) {
            overflow = true;
            magnitude = u128::from(u64::MAX);
        }
        i += 1;
    }
    if i == start {
        // No digits: nothing is consumed, not even the sign. ("0x" alone
        // never gets here: it reads as the octal 0 before the x.)
        return Strtol {
            value: 0,
            used: 0,
            overflow: false,
        };
    }
    let value = if negative {
        if magnitude > (i64::MAX as u128) + 1 {
            overflow = true;
            i64::MIN
        } else {
            (magnitude as i128).wrapping_neg() as i64
        }
    } else if magnitude > i64::MAX as u128 {
        overflow = true;
        i64::MAX
    } else {
        magnitude as i64
    };
    Strtol {
        value,
        used: i,
        overflow,
    }
}

/// True when `text` is all C whitespace.
fn only_spaces(text: &str) -> bool {
    text.bytes().all(is_c_space)
}

/// C's `atoi`: glibc's `(int) strtol(text, NULL, 10)`, so a number past a
/// `long` saturates and the `long` is then cut to its low 32 bits.
pub fn atoi(text: &str) -> CRead<i32> {
    let read = strtol(text, 10);
    let value = read.value as i32;
    let exact = read.used > 0
        && !read.overflow
        && i64::from(value) == read.value
        && only_spaces(&text[read.used..]);
    CRead { value, exact }
}

/// C's `strtol(text, NULL, 0)` cut to an `int` (netperf's `parse_direction`
/// and `parse_ipqos` keep the result in an `int`): `0x` hex, leading-`0`
/// octal, decimal.
pub fn strtol0(text: &str) -> CRead<i32> {
    let read = strtol(text, 0);
    let value = read.value as i32;
    let exact = read.used > 0
        && !read.overflow
        && i64::from(value) == read.value
        && only_spaces(&text[read.used..]);
    CRead { value, exact }
}

/// Multipliers netperf's `convert()` applies for each letter found
/// ANYWHERE in the value (`strstr`), one after the other, in this order.
const SIZE_LETTERS: [(char, u32); 6] = [
    ('K', 1 << 10),
    ('M', 1 << 20),
    ('G', 1 << 30),
    ('k', 1_000),
    ('m', 1_000_000),
    ('g', 1_000_000_000),
];

/// netperf's `convert()`: `atoi`, then times 2^10, 2^20, 2^30, 10^3, 10^6,
/// 10^9 for each of K M G k m g the text contains, in `unsigned int`
/// arithmetic; the caller stores the result in an `int`, as netperf does,
/// so `10G` is -2147483648 and `4294967297` is 1.
pub fn convert(text: &str) -> CRead<i32> {
    let read = strtol(text, 10);
    let mut value = read.value as i32 as u32;
    let mut wide = i128::from(read.value);
    let mut letters = 0;
    for (letter, factor) in SIZE_LETTERS {
        if text.contains(letter) {
            value = value.wrapping_mul(factor);
            wide *= i128::from(factor);
            letters += 1;
        }
    }
    let value = value as i32;
    let rest = text[read.used..].trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let one_suffix = rest.is_empty()
        || (rest.len() == 1 && SIZE_LETTERS.iter().any(|(l, _)| rest.starts_with(*l)));
    let exact =
        read.used > 0 && !read.overflow && letters <= 1 && one_suffix && wide == i128::from(value);
    CRead { value, exact }
}

/// netperf's `convert_timespec()`: `atoi`, then microseconds by the first
/// of `m` (milliseconds), `u` (microseconds), `s` (seconds) the text holds
/// anywhere; without one, milliseconds. `unsigned int` arithmetic.
pub fn convert_timespec(text: &str) -> CRead<u32> {
    let read = strtol(text, 10);
    let factor: u32 = if text.contains('m') {
        1000
    } else if text.contains('u') {
        1
    } else if text.contains('s') {
        1_000_000
    } else {
        1000
    };
    let value = (read.value as i32 as u32).wrapping_mul(factor);
    let rest = text[read.used..].trim();
    let known = ["", "m", "ms", "u", "us", "s"].contains(&rest);
    let exact = read.used > 0
        && !read.overflow
        && read.value >= 0
        && known
        && i128::from(read.value) * i128::from(factor) == i128::from(value);
    CRead { value, exact }
}

/// C's `strtod` (and `atof`): the longest prefix that is a decimal or
/// hexadecimal floating-point number, `inf`/`infinity` or `nan`, after
/// leading whitespace; 0 when there is none.
pub fn strtod(text: &str) -> CRead<f64> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && is_c_space(bytes[i]) {
        i += 1;
    }
    let number_start = i;
    if matches!(bytes.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let lower = text[i..].to_ascii_lowercase();
    let special = ["infinity", "inf", "nan"]
        .into_iter()
        .find(|word| lower.starts_with(word));
    let end = if let Some(word) = special {
        i + word.len()
    } else {
        let digits = |from: usize, radix: u32| {
            bytes[from..]
                .iter()
                .take_while(|b| digit_value(**b).is_some_and(|d| d < radix))
                .count()
        };
        let hex = lower.starts_with("0x");
        let (radix, exponent_letter, mut j) = if hex {
            (16, b'p', i + 2)
        } else {
            (10, b'e', i)
        };
        let whole = digits(j, radix);
        j += whole;
        let mut fraction = 0;
        if bytes.get(j) == Some(&b'.') {
            fraction = digits(j + 1, radix);
            j += 1 + fraction;
        }
        if whole + fraction == 0 {
            // "0x" with no hex digits is the 0 before the x.
            if hex {
                i + 1
            } else {
                number_start
            }
        } else {
            if bytes.get(j).map(u8::to_ascii_lowercase) == Some(exponent_letter) {
                let mut k = j + 1;
                if matches!(bytes.get(k), Some(b'-' | b'+')) {
                    k += 1;
                }
                let exponent_digits = digits(k, 10);
                if exponent_digits > 0 {
                    j = k + exponent_digits;
                }
            }
            j
        }
    };
    if end == number_start {
        return CRead {
            value: 0.0,
            exact: false,
        };
    }
    let number = &text[number_start..end];
    let value = parse_c_float(number);
    let exact = special.is_none() && value.is_finite() && only_spaces(&text[end..]);
    CRead { value, exact }
}

/// A number `strtod` accepted, as an `f64` (Rust's parser takes the
/// decimal forms and the special words; hexadecimal ones are summed here).
fn parse_c_float(number: &str) -> f64 {
    let (negative, body) = match number.as_bytes().first() {
        Some(b'-') => (true, &number[1..]),
        Some(b'+') => (false, &number[1..]),
        _ => (false, number),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude = if let Some(hex) = lower.strip_prefix("0x") {
        let (mantissa, exponent) = match hex.split_once('p') {
            Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
            None => (hex, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut value = 0.0f64;
        for c in whole.chars() {
            value = value * 16.0 + f64::from(c.to_digit(16).unwrap_or(0));
        }
        let mut scale = 1.0 / 16.0;
        for c in fraction.chars() {
            value += f64::from(c.to_digit(16).unwrap_or(0)) * scale;
            scale /= 16.0;
        }
        value * 2f64.powi(exponent)
    } else if lower.starts_with("inf") {
        f64::INFINITY
    } else if lower.starts_with("nan") {
        f64::NAN
    } else {
        lower.parse::<f64>().unwrap_or(0.0)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact<T>(value: T) -> CRead<T> {
        CRead { value, exact: true }
    }
    fn loose<T>(value: T) -> CRead<T> {
        CRead {
            value,
            exact: false,
        }
    }

    #[test]
    fn atoi_reads_the_leading_number() {
        assert_eq!(atoi("3"), exact(3));
        assert_eq!(atoi(" -7"), exact(-7));
        assert_eq!(atoi("+5"), exact(5));
        assert_eq!(atoi("3s"), loose(3));
        assert_eq!(atoi("abc"), loose(0));
        assert_eq!(atoi(""), loose(0));
        assert_eq!(atoi("- 3"), loose(0));
        assert_eq!(atoi("0x10"), loose(0));
        // a long cut to an int
        assert_eq!(atoi("2147483648"), loose(i32::MIN));
        assert_eq!(atoi("4294967297"), loose(1));
        // past a long: LONG_MAX, whose low 32 bits are -1
        assert_eq!(atoi("99999999999999999999"), loose(-1));
        assert_eq!(atoi("-99999999999999999999"), loose(0));
    }

    #[test]
    fn strtol_base_zero() {
        assert_eq!(strtol0("0x6"), exact(6));
        assert_eq!(strtol0("06"), exact(6));
        assert_eq!(strtol0("010"), exact(8));
        assert_eq!(strtol0("08"), loose(0));
        assert_eq!(strtol0("0x"), loose(0));
        assert_eq!(strtol0("CRR"), loose(0));
        assert_eq!(strtol0("6 "), exact(6));
    }

    #[test]
    fn convert_multiplies_by_every_letter_it_finds() {
        assert_eq!(convert("32K"), exact(32768));
        assert_eq!(convert("32k"), exact(32000));
        assert_eq!(convert("1M"), exact(1 << 20));
        assert_eq!(convert("2KB"), loose(2048));
        assert_eq!(convert("1Kk"), loose(1_024_000));
        assert_eq!(convert("3x"), loose(3));
        assert_eq!(convert("abc"), loose(0));
        assert_eq!(convert("K"), loose(0));
        // 10 * 2^30 wraps in 32 bits, and the int holding it is negative
        assert_eq!(convert("10G"), loose(i32::MIN));
        assert_eq!(convert("3G"), loose(-1_073_741_824));
        assert_eq!(convert("-1"), exact(-1));
        assert_eq!(convert("2147483647"), exact(i32::MAX));
        assert_eq!(convert("2147483648"), loose(i32::MIN));
        assert_eq!(convert("3ms"), loose(3_000_000));
    }

    #[test]
    fn timespecs() {
        assert_eq!(convert_timespec("10"), exact(10_000));
        assert_eq!(convert_timespec("10ms"), exact(10_000));
        assert_eq!(convert_timespec("250u"), exact(250));
        assert_eq!(convert_timespec("2s"), exact(2_000_000));
        assert_eq!(convert_timespec("2h"), loose(2000));
        assert_eq!(convert_timespec("x"), loose(0));
        // "us" holds an s, but the u is looked for first
        assert_eq!(convert_timespec("5us"), exact(5));
    }

    #[test]
    fn any_text_reads_without_a_panic() {
        for text in [
            "５", "1é", "é1", "\0", "1\u{0}", "0xé", "-", "+", " ", "1e+", "0x.p1", "ﬀ",
        ] {
            let _ = (
                atoi(text),
                strtol0(text),
                convert(text),
                convert_timespec(text),
                strtod(text),
            );
        }
        assert_eq!(convert("1é"), loose(1));
        assert_eq!(strtod("0x.8").value, 0.5);
    }

    #[test]
    fn strtod_reads_the_longest_number() {
        assert_eq!(strtod("1.5"), exact(1.5));
        assert_eq!(strtod("-0.5"), exact(-0.5));
        assert_eq!(strtod("1e3"), exact(1000.0));
        assert_eq!(strtod("1s"), loose(1.0));
        assert_eq!(strtod("soon"), loose(0.0));
        assert_eq!(strtod(".5"), exact(0.5));
        assert_eq!(strtod("1e"), loose(1.0));
        assert_eq!(strtod("0x10"), exact(16.0));
        assert!(strtod("inf").value.is_infinite());
        assert!(!strtod("inf").exact);
    }
}
