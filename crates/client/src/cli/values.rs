//! Parsers for the option values that are words rather than sizes: address
//! families, test directions, IP TOS names, socket types, protocols and the
//! `-f` unit letters. Each follows netperf 2.7.1's own parser, except that
//! netperf's silent fallbacks (AF_UNSPEC, IPPROTO_IP, -1) are errors here.

use netperf_data::net::resolve::Family;

/// netperf's direction bits (`NETPERF_XMIT`, `NETPERF_RECV`).
pub const DIRECTION_XMIT: u32 = 0x2;
pub const DIRECTION_RECV: u32 = 0x4;

/// Words `-d` accepts, case-insensitively, and their direction bits.
const DIRECTION_WORDS: [(&str, u32); 8] = [
    ("xmit", DIRECTION_XMIT),
    ("send", DIRECTION_XMIT),
    ("stream", DIRECTION_XMIT),
    ("transmit", DIRECTION_XMIT),
    ("recv", DIRECTION_RECV),
    ("receive", DIRECTION_RECV),
    ("maerts", DIRECTION_RECV),
    ("rr", DIRECTION_XMIT | DIRECTION_RECV),
];

/// netperf's `parse_direction()`: words or numbers (C syntax: `6`, `0x6`)
/// OR-ed together with `|`, so the `Send|Recv` netperf prints reads back.
pub fn parse_direction(text: &str) -> Result<u32, String> {
    let mut mask = 0;
    for part in text.split('|') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let word_bits = DIRECTION_WORDS
            .iter()
            .find(|(word, _)| word.eq_ignore_ascii_case(part))
            .map(|(_, bits)| *bits);
        let bits = match word_bits {
            Some(bits) => bits,
            None => parse_c_integer(part)
                .filter(|bits| bits & !(DIRECTION_XMIT | DIRECTION_RECV) == 0)
                .ok_or_else(|| {
                    format!("unknown direction '{part}' (use send, recv, rr or a mask of 0x2|0x4)")
                })?,
        };
        mask |= bits;
    }
    Ok(mask)
}

/// An unsigned integer in C's `strtol(.., 0)` syntax: `0x` hex, leading-`0`
/// octal, or decimal.
pub fn parse_c_integer(text: &str) -> Option<u32> {
    let (digits, radix) =
        if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (hex, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// netperf's `parse_address_family()`: it looks for `6`, then `inet` or
/// `4`, then `unspec` or `0` anywhere in the word (so `inet6`, `AF_INET`,
/// `ipv4` all work); matching here ignores case.
pub fn parse_family(text: &str) -> Result<Family, String> {
    let lower = text.to_ascii_lowercase();
    if lower.contains('6') {
        Ok(Family::Inet6)
    } else if lower.contains("inet") || lower.contains('4') {
        Ok(Family::Inet)
    } else if lower.contains("unspec") || lower.contains('0') {
        Ok(Family::Unspec)
    } else {
        Err(format!(
            "unknown address family '{text}' (use 4, 6, inet, inet6 or 0)"
        ))
    }
}

/// Names `-Y` accepts for IP TOS / traffic class values (netperf's dscp.c).
const TOS_NAMES: [(&str, i32); 24] = [
    ("af11", 0x28),
    ("af12", 0x30),
    ("af13", 0x38),
    ("af21", 0x48),
    ("af22", 0x50),
    ("af23", 0x58),
    ("af31", 0x68),
    ("af32", 0x70),
    ("af33", 0x78),
    ("af41", 0x88),
    ("af42", 0x90),
    ("af43", 0x98),
    ("cs0", 0x00),
    ("cs1", 0x20),
    ("cs2", 0x40),
    ("cs3", 0x60),
    ("cs4", 0x80),
    ("cs5", 0xa0),
    ("cs6", 0xc0),
    ("cs7", 0xe0),
    ("ef", 0xb8),
    ("lowdelay", 0x10),
    ("throughput", 0x08),
    ("reliability", 0x04),
];

/// netperf's `parse_ipqos()`: a DSCP/TOS name, or a number from 0 to 255
/// in C syntax. The usage says "Use hexadecimal" but netperf reads `10` as
/// decimal ten; hexadecimal needs the `0x` prefix.
pub fn parse_tos(text: &str) -> Result<i32, String> {
    if let Some((_, value)) = TOS_NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
    {
        return Ok(*value);
    }
    parse_c_integer(text)
        .filter(|value| *value <= 255)
        .and_then(|value| i32::try_from(value).ok())
        .ok_or_else(|| {
            "not a TOS value (0 to 255, e.g. 0x10, or a name such as af11, cs1, ef, lowdelay)"
                .to_string()
        })
}

/// The socket types netperf's `parse_socket_type()` recognises (it looks
/// for the word anywhere in the value, so `SOCK_STREAM` works too).
const SOCKET_TYPES: [&str; 2] = ["stream", "dgram"];

/// Returns the canonical socket type name, `stream` or `dgram`.
pub fn parse_socket_type(text: &str) -> Result<&'static str, String> {
    let lower = text.to_ascii_lowercase();
    SOCKET_TYPES
        .iter()
        .find(|name| lower.contains(*name))
        .copied()
        .ok_or_else(|| format!("unknown socket type '{text}' (use stream or dgram)"))
}

/// netperf-ng's own `-T`: TCP over MPTCP sockets (`--mptcp`).
pub const MPTCP: &str = "mptcp";

/// Protocols `-T` accepts (case-insensitively, as netperf's
/// `parse_protocol()`, and netperf-ng's `mptcp`), and the socket type each
/// implies, if any.
const PROTOCOLS: [(&str, Option<&str>); 7] = [
    ("tcp", Some("stream")),
    ("udp", Some("dgram")),
    ("sctp", None),
    ("sdp", Some("stream")),
    ("dccp", None),
    ("udplite", Some("dgram")),
    (MPTCP, Some("stream")),
];

/// Returns the canonical (lower-case) protocol name and the socket type it
/// implies.
pub fn parse_protocol(text: &str) -> Result<(&'static str, Option<&'static str>), String> {
    PROTOCOLS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .copied()
        .ok_or_else(|| {
            format!("unknown protocol '{text}' (use tcp, udp, sctp, sdp, dccp, udplite or mptcp)")
        })
}

/// Letters `-f` accepts: the ones netperf's `format_units()` knows.
/// Upper case are bytes (2^n), lower case bits (10^n), `x` transactions.
const FORMAT_UNITS: [char; 10] = ['B', 'K', 'M', 'G', 'b', 'k', 'm', 'g', 'x', 'u'];

/// One of netperf's output unit letters.
pub fn parse_format_units(text: &str) -> Result<char, String> {
    let mut letters = text.chars();
    match (letters.next(), letters.next()) {
        (Some(letter), None) if FORMAT_UNITS.contains(&letter) => Ok(letter),
        _ => Err("unknown output units (use one of G M K B g m k b x u)".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        assert_eq!(parse_direction("send"), Ok(2));
        assert_eq!(parse_direction("STREAM"), Ok(2));
        assert_eq!(parse_direction("maerts"), Ok(4));
        assert_eq!(parse_direction("rr"), Ok(6));
        assert_eq!(parse_direction("Send|Recv"), Ok(6));
        assert_eq!(parse_direction("0x2|4"), Ok(6));
        assert_eq!(parse_direction("6"), Ok(6));
        assert_eq!(parse_direction("0"), Ok(0));
        assert!(parse_direction("sideways").is_err());
        assert!(parse_direction("8").is_err());
        assert!(parse_direction("1").is_err());
    }

    #[test]
    fn families() {
        assert_eq!(parse_family("4"), Ok(Family::Inet));
        assert_eq!(parse_family("inet"), Ok(Family::Inet));
        assert_eq!(parse_family("AF_INET"), Ok(Family::Inet));
        assert_eq!(parse_family("6"), Ok(Family::Inet6));
        assert_eq!(parse_family("inet6"), Ok(Family::Inet6));
        assert_eq!(parse_family("0"), Ok(Family::Unspec));
        assert_eq!(parse_family("unspec"), Ok(Family::Unspec));
        assert!(parse_family("appletalk").is_err());
    }

    #[test]
    fn tos_values() {
        assert_eq!(parse_tos("0x10"), Ok(0x10));
        assert_eq!(parse_tos("10"), Ok(10));
        assert_eq!(parse_tos("010"), Ok(8));
        assert_eq!(parse_tos("EF"), Ok(0xb8));
        assert_eq!(parse_tos("lowdelay"), Ok(0x10));
        assert!(parse_tos("256").is_err());
        assert!(parse_tos("0x").is_err());
        assert!(parse_tos("fast").is_err());
    }

    #[test]
    fn socket_types_and_protocols() {
        assert_eq!(parse_socket_type("stream"), Ok("stream"));
        assert_eq!(parse_socket_type("SOCK_DGRAM"), Ok("dgram"));
        assert!(parse_socket_type("raw").is_err());
        assert_eq!(parse_protocol("TCP"), Ok(("tcp", Some("stream"))));
        assert_eq!(parse_protocol("udp"), Ok(("udp", Some("dgram"))));
        assert_eq!(parse_protocol("sctp"), Ok(("sctp", None)));
        assert!(parse_protocol("icmp").is_err());
    }

    #[test]
    fn format_letters() {
        for letter in FORMAT_UNITS {
            assert_eq!(parse_format_units(&letter.to_string()), Ok(letter));
        }
        assert!(parse_format_units("q").is_err());
        assert!(parse_format_units("mb").is_err());
        assert!(parse_format_units("").is_err());
    }
}
