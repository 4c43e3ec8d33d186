//! A small C `printf` work-alike for the output templates.
//!
//! netperf's classic output is defined by its printf format strings; keeping
//! our templates in the same notation (`%-6.2f`, `%-8.8s`, `%6.4g`, ...) makes
//! the layout tables easy to check against netperf column for column. Only the
//! subset netperf's classic output uses is supported: flags `-`, `0`, `+`,
//! space; width; precision; conversions `d i u f e g s c %`. Length modifiers
//! (`l`, `h`, ...) are accepted and ignored because [`Arg`] carries its own type.
//!
//! Never panics: a missing argument prints nothing, a mismatched one is
//! converted, and non-finite floats print as C does (`inf`, `-inf`, `nan`, `-nan`).

/// One value handed to [`sprintf`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    Int(i64),
    Float(f64),
    Str(&'a str),
    Char(char),
}

/// Parsed `%[flags][width][.precision]conv` directive.
#[derive(Debug, Clone, Copy, Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    width: usize,
    precision: Option<usize>,
}

/// Caps widths and precisions so a bad template cannot ask for gigabytes.
const MAX_FIELD: usize = 4096;

/// Formats `args` into `template` the way C's printf would.
pub fn sprintf(template: &str, args: &[Arg]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut chars = template.chars().peekable();
    let mut next_arg = args.iter();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&flag) = chars.peek() {
            match flag {
                '-' => spec.left = true,
                '0' => spec.zero = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => {}
                _ => break,
            }
            chars.next();
        }
        spec.width = read_number(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.precision = Some(read_number(&mut chars));
        }
        while matches!(chars.peek(), Some('l' | 'h' | 'q' | 'j' | 'z' | 't' | 'L')) {
            chars.next();
        }
        let Some(conv) = chars.next() else {
            out.push('%');
            break;
        };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = next_arg.next().copied();
        let body = match conv {
            'd' | 'i' | 'u' => format_integer(arg, &spec),
            'f' | 'F' => format_float(as_float(arg), &spec, FloatStyle::Fixed),
            'e' | 'E' => format_float(as_float(arg), &spec, FloatStyle::Exponent),
            'g' | 'G' => format_float(as_float(arg), &spec, FloatStyle::General),
            's' => format_string(arg, &spec),
            'c' => format_char(arg),
            other => {
                // Unknown conversion: print it literally, as glibc does.
                let mut literal = String::from('%');
                literal.push(other);
                literal
            }
        };
        pad_into(&mut out, &body, &spec, conv);
    }
    out
}

fn read_number(chars: &mut std::iter::Peekable<std::str::Chars>) -> usize {
    let mut value: usize = 0;
    while let Some(digit) = chars.peek().and_then(|c| c.to_digit(10)) {
        value = value.saturating_mul(10).saturating_add(digit as usize);
        chars.next();
    }
    value.min(MAX_FIELD)
}

fn as_float(arg: Option<Arg>) -> Option<f64> {
    match arg? {
        Arg::Float(v) => Some(v),
        Arg::Int(v) => Some(v as f64),
        Arg::Char(c) => Some(c as u32 as f64),
        Arg::Str(_) => None,
    }
}

fn format_integer(arg: Option<Arg>, spec: &Spec) -> String {
    let value: i64 = match arg {
        Some(Arg::Int(v)) => v,
        // Truncation toward zero mirrors a C cast; NaN/inf become 0 (saturating `as`).
        Some(Arg::Float(v)) => v as i64,
        Some(Arg::Char(c)) => c as i64,
        Some(Arg::Str(_)) | None => return String::new(),
    };
    let mut digits = value.unsigned_abs().to_string();
    if let Some(precision) = spec.precision {
        while digits.len() < precision {
            digits.insert(0, '0');
        }
    }
    sign_prefix(value < 0, spec) + &digits
}

fn sign_prefix(negative: bool, spec: &Spec) -> String {
    if negative {
        "-".into()
    } else if spec.plus {
        "+".into()
    } else if spec.space {
        " ".into()
    } else {
        String::new()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum FloatStyle {
    Fixed,
    Exponent,
    General,
}

fn format_float(value: Option<f64>, spec: &Spec, style: FloatStyle) -> String {
    let Some(value) = value else {
        return String::new();
    };
    let negative = value.is_sign_negative();
    if value.is_nan() {
        return sign_prefix(negative, spec) + "nan";
    }
    if value.is_infinite() {
        return sign_prefix(negative, spec) + "inf";
    }
    let precision = spec.precision.unwrap_or(6);
    let magnitude = value.abs();
    let body = match style {
        FloatStyle::Fixed => format!("{magnitude:.precision$}"),
        FloatStyle::Exponent => c_exponent(magnitude, precision),
        FloatStyle::General => c_general(magnitude, precision),
    };
    sign_prefix(negative, spec) + &body
}

/// C's `%.Pe`: mantissa with P decimals, exponent signed and at least two digits.
fn c_exponent(magnitude: f64, precision: usize) -> String {
    let rust = format!("{magnitude:.precision$e}");
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// C's `%.Pg`: P significant digits, fixed or exponent form, trailing zeros removed.
fn c_general(magnitude: f64, precision: usize) -> String {
    let significant = precision.max(1);
    // The exponent after rounding to P significant digits decides the form.
    let rounded = format!("{magnitude:.prec$e}", prec = significant - 1);
    let exponent: i64 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if exponent < -4 || exponent >= significant as i64 {
        let text = c_exponent(magnitude, significant - 1);
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "+00"));
        format!("{}e{exp}", strip_fraction_zeros(mantissa))
    } else {
        let decimals = (significant as i64 - 1 - exponent).max(0) as usize;
        strip_fraction_zeros(&format!("{magnitude:.decimals$}")).to_string()
    }
}

fn strip_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

fn format_string(arg: Option<Arg>, spec: &Spec) -> String {
    let text: String = match arg {
        Some(Arg::Str(s)) => s.to_string(),
        Some(Arg::Char(c)) => c.to_string(),
        Some(Arg::Int(v)) => v.to_string(),
        Some(Arg::Float(v)) => v.to_string(),
        None => return String::new(),
    };
    match spec.precision {
        Some(limit) => text.chars().take(limit).collect(),
        None => text,
    }
}

fn format_char(arg: Option<Arg>) -> String {
    match arg {
        Some(Arg::Char(c)) => c.to_string(),
        Some(Arg::Str(s)) => s.chars().next().map(String::from).unwrap_or_default(),
        Some(Arg::Int(v)) => u32::try_from(v)
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_default(),
        Some(Arg::Float(_)) | None => String::new(),
    }
}

/// Applies the field width: left-justify, zero-pad after the sign, or space-pad.
fn pad_into(out: &mut String, body: &str, spec: &Spec, conv: char) {
    let len = body.chars().count();
    if len >= spec.width {
        out.push_str(body);
        return;
    }
    let fill = spec.width - len;
    let numeric = matches!(conv, 'd' | 'i' | 'u' | 'f' | 'F' | 'e' | 'E' | 'g' | 'G');
    let finite = !body.ends_with("inf") && !body.ends_with("nan");
    if spec.left {
        out.push_str(body);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if spec.zero && numeric && finite {
        let sign_len = usize::from(body.starts_with(['-', '+', ' ']));
        out.push_str(&body[..sign_len]);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(&body[sign_len..]);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_widths_and_justification() {
        let text = sprintf(
            "%6d %-6d|%7.2f|%-6.2f|%-6.3f",
            &[
                Arg::Int(131072),
                Arg::Int(1),
                Arg::Float(2223.478),
                Arg::Float(1.0),
                Arg::Float(0.4944),
            ],
        );
        assert_eq!(text, "131072 1     |2223.48|1.00  |0.494 ");
    }

    #[test]
    fn strings_with_precision_and_percent() {
        let text = sprintf("%-8.8s/s %% %c", &[Arg::Str("GBytes"), Arg::Char('S')]);
        assert_eq!(text, "GBytes  /s % S");
        assert_eq!(sprintf("%-8.8s|", &[Arg::Str("10^6bits/sec")]), "10^6bits|");
    }

    #[test]
    fn general_format_matches_c() {
        let g = |v: f64| sprintf("%6.4g", &[Arg::Float(v)]);
        assert_eq!(g(5.453e9), "5.453e+09");
        assert_eq!(g(5_452_998_656.0), "5.453e+09");
        assert_eq!(g(1234.0), "  1234");
        assert_eq!(g(12345.0), "1.234e+04");
        assert_eq!(g(0.5), "   0.5");
        assert_eq!(g(0.0), "     0");
        assert_eq!(g(0.00001234), "1.234e-05");
        assert_eq!(g(99999.0), " 1e+05");
    }

    #[test]
    fn non_finite_values_print_like_c() {
        assert_eq!(sprintf("%7.2f", &[Arg::Float(f64::INFINITY)]), "    inf");
        assert_eq!(sprintf("%-6.2f|", &[Arg::Float(-f64::NAN)]), "-nan  |");
        assert_eq!(sprintf("%6d", &[Arg::Float(f64::NAN)]), "     0");
    }

    #[test]
    fn missing_and_extra_arguments_do_not_panic() {
        assert_eq!(sprintf("%d %s %f|", &[]), "  |");
        assert_eq!(sprintf("x", &[Arg::Int(3)]), "x");
        assert_eq!(sprintf("trailing %", &[]), "trailing %");
        assert_eq!(sprintf("%05.1f", &[Arg::Float(-2.25)]), "-02.2");
    }
}
