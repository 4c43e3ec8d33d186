//! Parsers for the option values that are words rather than sizes: address
//! families, test directions, IP TOS names, socket types, protocols and the
//! `-f` unit letters. Each reads as netperf 2.7.1's own parser does,
//! fallbacks included; a fallback is reported as not exact, so the caller
//! can say on stderr what runs.

use super::cnum::{self, CRead};
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

/// netperf's `parse_direction()`: words (any case) or numbers in C's
/// `strtol(.., 0)` syntax (`6`, `0x6`; anything else is read as its leading
/// number, so `CRR` is 0), OR-ed together across `|`, so the `Send|Recv`
/// netperf prints reads back. The bits are kept as netperf keeps them,
/// even those that are no direction.
pub fn parse_direction(text: &str) -> CRead<i32> {
    let mut mask = 0;
    let mut exact = true;
    for part in text.split('|') {
        if part.is_empty() {
            continue;
        }
        let word_bits = DIRECTION_WORDS
            .iter()
            .find(|(word, _)| word.eq_ignore_ascii_case(part))
            .map(|(_, bits)| *bits as i32);
        let bits = word_bits.unwrap_or_else(|| {
            let read = cnum::strtol0(part);
            exact &= read.exact;
            read.value
        });
        mask |= bits;
    }
    CRead { value: mask, exact }
}

/// netperf's `parse_address_family()`: it looks, case-sensitively and in
/// the first 10 characters only, for `6`, then `inet` or `4`, then
/// `unspec` or `0`, so `inet6` and `ipv4` work and `AF_INET` does not.
/// None for anything else, which netperf takes as AF_UNSPEC after a
/// warning on stdout ([`family_warning`]).
pub fn parse_family(text: &str) -> Option<Family> {
    let head: String = text.chars().take(10).collect();
    if head.contains('6') {
        Some(Family::Inet6)
    } else if head.contains("inet") || head.contains('4') {
        Some(Family::Inet)
    } else if head.contains("unspec") || head.contains('0') {
        Some(Family::Unspec)
    } else {
        None
    }
}

/// What netperf 2.7.1 prints on stdout for a family it does not know
/// (its own spelling, AF_UNPSEC included).
pub fn family_warning(text: &str) -> String {
    format!(
        "WARNING! {text} not recognized as an address family, using AF_UNPSEC\n\
         Are you sure netperf was configured for that address family?\n"
    )
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

/// netperf's `parse_ipqos()`: a DSCP/TOS name (any case), or a whole
/// number from 0 to 255 in C syntax (`10` is decimal ten, `0x10` sixteen).
/// Anything else is -1, which leaves the TOS alone; that is not exact.
pub fn parse_tos(text: &str) -> CRead<i32> {
    if let Some((_, value)) = TOS_NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
    {
        return CRead {
            value: *value,
            exact: true,
        };
    }
    let read = cnum::strtol0(text);
    // parse_ipqos wants every character used: no whitespace after the number.
    let whole = read.exact && !text.ends_with(|c: char| c.is_ascii_whitespace());
    if whole && (0..=255).contains(&read.value) {
        return read;
    }
    CRead {
        value: -1,
        exact: false,
    }
}

/// The socket types netperf's `parse_socket_type()` recognises: it looks
/// for the word in the value's first 10 characters; we ignore case, where
/// netperf finds nothing in `SOCK_STREAM` and hangs.
const SOCKET_TYPES: [&str; 2] = ["stream", "dgram"];

/// Returns the canonical socket type name, `stream` or `dgram`. Stock
/// netperf never starts a test with any other (it waits for ever), so that
/// is refused.
pub fn parse_socket_type(text: &str) -> Result<&'static str, String> {
    let lower: String = text.to_ascii_lowercase().chars().take(10).collect();
    SOCKET_TYPES
        .iter()
        .find(|name| lower.contains(*name))
        .copied()
        .ok_or_else(|| format!("unknown socket type '{text}' (use stream or dgram)"))
}

/// netperf-ng's own `-T`: TCP over MPTCP sockets (`--mptcp`).
pub const MPTCP: &str = "mptcp";

/// Protocols `-T` accepts (case-insensitively, in the first 10 characters,
/// as netperf's `parse_protocol()`, and netperf-ng's `mptcp`), and the
/// socket type each implies, if any.
/// (No `sdp`: Linux has no IPPROTO_SDP, so netperf built there runs
/// `-T sdp` as it runs any name it does not know.)
const PROTOCOLS: [(&str, Option<&str>); 6] = [
    ("tcp", Some("stream")),
    ("udp", Some("dgram")),
    ("sctp", None),
    ("dccp", None),
    ("udplite", Some("dgram")),
    (MPTCP, Some("stream")),
];

/// The canonical (lower-case) protocol name and the socket type it
/// implies; None for a name netperf does not know, which it runs as
/// IPPROTO_IP: the socket type's own protocol.
pub fn parse_protocol(text: &str) -> Option<(&'static str, Option<&'static str>)> {
    let head: String = text.chars().take(10).collect();
    PROTOCOLS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(&head))
        .copied()
}

/// Letters `-f` knows: the ones netperf's `format_units()` knows.
/// Upper case are bytes (2^n), lower case bits (10^n), `x` transactions.
const FORMAT_UNITS: [char; 10] = ['B', 'K', 'M', 'G', 'b', 'k', 'm', 'g', 'x', 'u'];

/// netperf's `-f`: the first letter of the value; one it does not know
/// (or none) reports in KBytes, as netperf's default case does.
pub fn parse_format_units(text: &str) -> CRead<char> {
    let mut letters = text.chars();
    match (letters.next(), letters.next()) {
        (Some(letter), None) if FORMAT_UNITS.contains(&letter) => CRead {
            value: letter,
            exact: true,
        },
        (Some(letter), _) if FORMAT_UNITS.contains(&letter) => CRead {
            value: letter,
            exact: false,
        },
        _ => CRead {
            value: 'K',
            exact: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(text: &str) -> (i32, bool) {
        let read = parse_direction(text);
        (read.value, read.exact)
    }

    #[test]
    fn directions() {
        assert_eq!(bits("send"), (2, true));
        assert_eq!(bits("STREAM"), (2, true));
        assert_eq!(bits("maerts"), (4, true));
        assert_eq!(bits("rr"), (6, true));
        assert_eq!(bits("Send|Recv"), (6, true));
        assert_eq!(bits("0x2|4"), (6, true));
        assert_eq!(bits("6"), (6, true));
        assert_eq!(bits("0"), (0, true));
        assert_eq!(bits("8"), (8, true));
        // strtol reads no number in these: 0, a send test once defaulted
        assert_eq!(bits("CRR"), (0, false));
        assert_eq!(bits("sideways"), (0, false));
        assert_eq!(bits("send|junk"), (2, false));
        assert_eq!(bits("3s"), (3, false));
        assert_eq!(bits(""), (0, true));
    }

    #[test]
    fn families() {
        assert_eq!(parse_family("4"), Some(Family::Inet));
        assert_eq!(parse_family("inet"), Some(Family::Inet));
        assert_eq!(parse_family("ipv4"), Some(Family::Inet));
        assert_eq!(parse_family("6"), Some(Family::Inet6));
        assert_eq!(parse_family("inet6"), Some(Family::Inet6));
        assert_eq!(parse_family("0"), Some(Family::Unspec));
        assert_eq!(parse_family("unspec"), Some(Family::Unspec));
        // case matters to netperf
        assert_eq!(parse_family("AF_INET"), None);
        assert_eq!(parse_family("appletalk"), None);
        assert!(family_warning("ipx").starts_with("WARNING! ipx not recognized"));
    }

    #[test]
    fn tos_values() {
        let tos = |text| parse_tos(text).value;
        assert_eq!(tos("0x10"), 0x10);
        assert_eq!(tos("10"), 10);
        assert_eq!(tos("010"), 8);
        assert_eq!(tos("EF"), 0xb8);
        assert_eq!(tos("lowdelay"), 0x10);
        for unset in ["256", "0x", "fast", "", "-1", "5 "] {
            assert_eq!(
                parse_tos(unset),
                CRead {
                    value: -1,
                    exact: false
                },
                "{unset}"
            );
        }
    }

    #[test]
    fn socket_types_and_protocols() {
        assert_eq!(parse_socket_type("stream"), Ok("stream"));
        assert_eq!(parse_socket_type("SOCK_DGRAM"), Ok("dgram"));
        assert!(parse_socket_type("raw").is_err());
        assert_eq!(parse_protocol("TCP"), Some(("tcp", Some("stream"))));
        assert_eq!(parse_protocol("udp"), Some(("udp", Some("dgram"))));
        assert_eq!(parse_protocol("sctp"), Some(("sctp", None)));
        assert_eq!(parse_protocol("icmp"), None);
    }

    #[test]
    fn format_letters() {
        for letter in FORMAT_UNITS {
            assert_eq!(parse_format_units(&letter.to_string()).value, letter);
        }
        assert_eq!(
            parse_format_units("q"),
            CRead {
                value: 'K',
                exact: false
            }
        );
        assert_eq!(
            parse_format_units("mb"),
            CRead {
                value: 'm',
                exact: false
            }
        );
        assert_eq!(
            parse_format_units(""),
            CRead {
                value: 'K',
                exact: false
            }
        );
    }
}
