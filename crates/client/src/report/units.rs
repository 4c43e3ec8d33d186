//! netperf's output units: the `-f` letter, its label and its divisor.
//!
//! netperf names a unit once (`format_units()`: "10^6bits", "MBytes", "Trans")
//! and every place that prints it appends its own suffix: the classic stream
//! title says "10^6bits/sec", the classic CPU title and the RR verbose block
//! say "10^6bits/s" (cut to 8 characters first, hence "GBytes  /s"), and the
//! omni THROUGHPUT_UNITS / interim lines say "10^6bits/s" or "Trans/s".
//! Lower-case letters are powers of ten of *bits*, upper-case powers of two of
//! *bytes*.

/// One `-f` letter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputUnit {
    pub letter: char,
    /// netperf's `format_units()` text.
    pub label: &'static str,
    /// Bytes (or transactions, for 'x') per displayed unit.
    pub divisor: f64,
}

/// Every letter netperf knows; anything else falls back to [`FALLBACK_UNIT`].
pub const OUTPUT_UNITS: &[OutputUnit] = &[
    OutputUnit {
        letter: 'g',
        label: "10^9bits",
        divisor: 1e9 / 8.0,
    },
    OutputUnit {
        letter: 'm',
        label: "10^6bits",
        divisor: 1e6 / 8.0,
    },
    OutputUnit {
        letter: 'k',
        label: "10^3bits",
        divisor: 1e3 / 8.0,
    },
    OutputUnit {
        letter: 'b',
        label: "10^0bits",
        divisor: 1.0,
    },
    OutputUnit {
        letter: 'G',
        label: "GBytes",
        divisor: 1024.0 * 1024.0 * 1024.0,
    },
    OutputUnit {
        letter: 'M',
        label: "MBytes",
        divisor: 1024.0 * 1024.0,
    },
    OutputUnit {
        letter: 'K',
        label: "KBytes",
        divisor: 1024.0,
    },
    OutputUnit {
        letter: 'B',
        label: "Bytes",
        divisor: 1.0,
    },
    OutputUnit {
        letter: 'x',
        label: "Trans",
        divisor: 1.0,
    },
    // 'u' is latency: computed by inversion, see `throughput`.
    OutputUnit {
        letter: 'u',
        label: "Usec",
        divisor: 1.0,
    },
];

/// What netperf uses for a letter it does not know (`format_units` default).
pub const FALLBACK_UNIT: OutputUnit = OutputUnit {
    letter: 'K',
    label: "KBytes",
    divisor: 1024.0,
};

/// The table row of a letter, or the KBytes fallback netperf applies.
pub fn unit(letter: char) -> OutputUnit {
    OUTPUT_UNITS
        .iter()
        .copied()
        .find(|u| u.letter == letter)
        .unwrap_or(FALLBACK_UNIT)
}

/// netperf's `format_units()`: "10^6bits", "MBytes", "Trans", ...
pub fn label(letter: char) -> &'static str {
    unit(letter).label
}

/// The per-second form of omni output and interim lines: "10^6bits/s", "Trans/s".
pub fn per_second_label(letter: char) -> String {
    format!("{}/s", label(letter))
}

/// The form of the classic stream titles: "10^6bits/sec".
pub fn classic_title_label(letter: char) -> String {
    format!("{}/sec", label(letter))
}

/// The letter a test really uses, as netperf settles it: without `-f` an RR
/// test (name containing "RR", any case) reports transactions ('x') and
/// everything else 10^6 bits ('m'); 'x' on a non-RR test silently becomes 'm'.
pub fn resolve_unit(requested: Option<char>, is_request_response: bool) -> char {
    match requested {
        None if is_request_response => 'x',
        None => 'm',
        Some('x') if !is_request_response => 'm',
        Some(letter) => letter,
    }
}

/// Amount per second in the units of `letter`: `units / divisor / elapsed`.
///
/// `units` is bytes, or transactions for 'x'. 'u' inverts to microseconds per
/// unit as netperf does. Zero elapsed or zero units give inf/NaN, never a panic.
pub fn throughput(units: f64, elapsed: f64, letter: char) -> f64 {
    if letter == 'u' {
        return (1.0 / (units / elapsed)) * 1_000_000.0;
    }
    units / unit(letter).divisor / elapsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_match_netperf() {
        assert_eq!(label('m'), "10^6bits");
        assert_eq!(label('G'), "GBytes");
        assert_eq!(label('x'), "Trans");
        assert_eq!(label('?'), "KBytes");
        assert_eq!(per_second_label('m'), "10^6bits/s");
        assert_eq!(per_second_label('x'), "Trans/s");
        assert_eq!(classic_title_label('M'), "MBytes/sec");
    }

    #[test]
    fn throughput_uses_the_divisor() {
        assert!((throughput(125_000_000.0, 1.0, 'm') - 1000.0).abs() < 1e-9);
        assert!((throughput(2.0 * 1024.0 * 1024.0, 2.0, 'M') - 1.0).abs() < 1e-12);
        assert!((throughput(16056.0, 2.0, 'x') - 8028.0).abs() < 1e-12);
        assert!((throughput(1000.0, 1.0, 'u') - 1000.0).abs() < 1e-9);
        assert!(throughput(1.0, 0.0, 'm').is_infinite());
        assert!(throughput(0.0, 0.0, 'm').is_nan());
    }

    #[test]
    fn resolve_unit_follows_netperf_defaults() {
        assert_eq!(resolve_unit(None, true), 'x');
        assert_eq!(resolve_unit(None, false), 'm');
        assert_eq!(resolve_unit(Some('x'), false), 'm');
        assert_eq!(resolve_unit(Some('M'), true), 'M');
    }
}
