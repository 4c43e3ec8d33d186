//! A selector's value and how netperf prints it: the value is typed (for JSON),
//! the format is netperf's printf conversion for that selector.

use crate::report::cfmt::{sprintf, Arg};

/// A selector's value; `Missing` is netperf's NULL display value (printed as
/// an empty column, an empty CSV field, and no keyval line).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Int(i64),
    Real(f64),
    Char(char),
    Missing,
}

/// netperf's printf conversion of a selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// `%s`
    Text,
    /// `"%s"`
    Quoted,
    /// `%s/s`
    PerSecond,
    /// `%d` and `%PRIu64`
    Int,
    /// `%.Nf` (`%f` is `Fixed(6)`)
    Fixed(u8),
    /// `0x%.4x` and `0x%.2x`: C prints an int as unsigned hex.
    Hex4,
    Hex2,
    /// `%c`
    Char,
}

pub fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

/// An integer value; counters beyond i64 (never seen in practice) saturate.
pub fn int<T: TryInto<i64>>(v: T) -> Value {
    Value::Int(v.try_into().unwrap_or(i64::MAX))
}

pub fn real(v: f64) -> Value {
    Value::Real(v)
}

/// Formats a value as netperf would; `None` for a missing value.
pub fn render(value: &Value, fmt: Fmt) -> Option<String> {
    let number = |v: &Value| match v {
        Value::Int(i) => *i as f64,
        Value::Real(r) => *r,
        _ => 0.0,
    };
    let integer = |v: &Value| match v {
        Value::Int(i) => *i,
        Value::Real(r) => *r as i64,
        Value::Char(c) => *c as i64,
        _ => 0,
    };
    let as_text = |v: &Value| match v {
        Value::Text(s) => s.clone(),
        Value::Char(c) => c.to_string(),
        other => render(other, Fmt::Int).unwrap_or_default(),
    };
    if *value == Value::Missing {
        return None;
    }
    Some(match fmt {
        Fmt::Text => as_text(value),
        Fmt::Quoted => format!("\"{}\"", as_text(value)),
        Fmt::PerSecond => format!("{}/s", as_text(value)),
        Fmt::Int => match value {
            Value::Real(r) => sprintf("%.0f", &[Arg::Float(*r)]),
            other => integer(other).to_string(),
        },
        Fmt::Fixed(places) => sprintf(&format!("%.{places}f"), &[Arg::Float(number(value))]),
        // C's %x of an int prints its 32-bit two's complement.
        Fmt::Hex4 => format!("0x{:04x}", integer(value) as u32),
        Fmt::Hex2 => format!("0x{:02x}", integer(value) as u32),
        Fmt::Char => match value {
            Value::Char(c) => c.to_string(),
            other => char::from_u32(integer(other) as u32)
                .unwrap_or('?')
                .to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_netperf_prints() {
        let cases = [
            (real(30192.284), Fmt::Fixed(2), "30192.28"),
            (real(-1.0), Fmt::Fixed(6), "-1.000000"),
            (real(3775250432.0), Fmt::Fixed(0), "3775250432"),
            (int(-1), Fmt::Hex2, "0xffffffff"),
            (int(0xffff_fffe_i64), Fmt::Hex4, "0xfffffffe"),
            (int(0x8086), Fmt::Hex4, "0x8086"),
            (int(5), Fmt::Hex2, "0x05"),
            (text("10^6bits"), Fmt::PerSecond, "10^6bits/s"),
            (text("on"), Fmt::Quoted, "\"on\""),
            (Value::Char('S'), Fmt::Char, "S"),
            (int(65483), Fmt::Int, "65483"),
        ];
        for (value, fmt, want) in cases {
            assert_eq!(
                render(&value, fmt).as_deref(),
                Some(want),
                "{value:?} {fmt:?}"
            );
        }
        assert_eq!(render(&Value::Missing, Fmt::Quoted), None);
    }
}
