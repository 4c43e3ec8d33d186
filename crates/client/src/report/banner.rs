//! The first line of every test: title, both endpoints, and the option suffixes.
//!
//! `MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to
//! 127.0.0.1 () port 0 AF_INET : histogram : interval : demo`
//!
//! Two netperf quirks are reproduced on purpose because scripts see them:
//! the parenthesised numeric address is formatted into an 8-byte buffer, so
//! any address of 8 characters or more prints as `()`; and the port is the one
//! known before the data connection exists, normally 0.

/// Banner titles of the classic test names; OMNI titles come from [`omni_title`].
pub const CLASSIC_TITLES: &[(&str, &str)] = &[
    ("TCP_STREAM", "MIGRATED TCP STREAM TEST"),
    ("TCP_MAERTS", "MIGRATED TCP MAERTS TEST"),
    ("TCP_SENDFILE", "TCP SENDFILE TEST"),
    ("UDP_STREAM", "MIGRATED UDP STREAM TEST"),
    ("TCP_RR", "MIGRATED TCP REQUEST/RESPONSE TEST"),
    ("UDP_RR", "MIGRATED UDP REQUEST/RESPONSE TEST"),
    ("TCP_CRR", "MIGRATED TCP Connect/Request/Response TEST"),
    ("TCP_CC", "TCP Connect/Close TEST"),
];

/// The title for a classic test name (any case), if it is one of ours.
pub fn classic_title(test_name: &str) -> Option<&'static str> {
    CLASSIC_TITLES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(test_name))
        .map(|(_, title)| *title)
}

/// netperf's direction words for OMNI titles.
pub const OMNI_DIRECTIONS: &[(OmniDirection, &str)] = &[
    (OmniDirection::Send, "Send"),
    (OmniDirection::Receive, "Receive"),
    (OmniDirection::SendRecv, "Send|Recv"),
    (OmniDirection::Connection, "Connection"),
    (OmniDirection::ConnectSendRecv, "Connect|Send|Recv"),
];

/// Which way an OMNI test moves data, as its title names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OmniDirection {
    Send,
    Receive,
    SendRecv,
    /// Connect/close only (`-c` without request/response data).
    Connection,
    /// A connection test that also sends requests and responses.
    ConnectSendRecv,
}

/// netperf builds OMNI titles in a 32-byte buffer: at most 31 characters survive.
const OMNI_TITLE_MAX: usize = 31;

/// "OMNI Send TEST", "OMNI Receive TEST", "OMNI Send|Recv TEST", ...
pub fn omni_title(direction: OmniDirection) -> String {
    let word = OMNI_DIRECTIONS
        .iter()
        .find(|(d, _)| *d == direction)
        .map_or("Send", |(_, w)| *w);
    format!("OMNI {word} TEST")
        .chars()
        .take(OMNI_TITLE_MAX)
        .collect()
}

/// One end of the data connection as the caller resolved it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BannerEndpoint {
    /// The canonical name netperf prints first: the -H/-L text or its resolution.
    pub name: String,
    /// The numeric address; see the module note on the 8-byte buffer.
    pub address: String,
    pub port: u16,
    /// "AF_INET", "AF_INET6" or "AF_UNSPEC" (`net::resolve::af_text`).
    pub family: String,
}

/// The `-i`/`-I` suffix " : +/-2.500% @ 99% conf. ".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BannerConfidence {
    /// The -I confidence level (95 or 99).
    pub level: i32,
    /// The full -I interval width in percent as given (netperf prints half of it).
    pub interval_percent: f64,
    /// -r: confidence is required of the result only.
    pub result_only: bool,
}

/// Compile-time features netperf 2.7.1 announces in every banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BannerFeatures {
    pub histogram: bool,
    pub interval: bool,
    pub demo: bool,
    pub first_burst: bool,
}

/// The reference build (the transcripts) has all four.
impl Default for BannerFeatures {
    fn default() -> Self {
        BannerFeatures {
            histogram: true,
            interval: true,
            demo: true,
            first_burst: true,
        }
    }
}

/// Everything the banner line shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Banner {
    pub title: String,
    pub local: BannerEndpoint,
    pub remote: BannerEndpoint,
    /// Present when more than one iteration was allowed (`-i max>1`).
    pub confidence: Option<BannerConfidence>,
    /// TCP_NODELAY asked for on either end.
    pub nodelay: bool,
    /// Copy avoidance asked for on either end.
    pub copy_avoidance: bool,
    /// -N: no control connection.
    pub no_control: bool,
    pub features: BannerFeatures,
    /// The -b first burst size, shown for REQUEST/RESPONSE titles.
    pub first_burst: i32,
    /// -T: CPU binding was requested.
    pub cpu_bind: bool,
}

/// The size of the buffer netperf formats the numeric address into.
const NETPERF_ADDRESS_BUFFER: usize = 8;

/// The parenthesised address as netperf prints it: empty unless it fits,
/// with its terminating NUL, in netperf's 8-byte buffer.
pub fn shown_address(address: &str) -> &str {
    if address.len() < NETPERF_ADDRESS_BUFFER {
        address
    } else {
        ""
    }
}

/// The banner line, with its newline.
pub fn render_banner(banner: &Banner) -> String {
    let mut out = banner.title.clone();
    for (word, end) in [("from", &banner.local), ("to", &banner.remote)] {
        out.push_str(&format!(
            " {word} {} ({}) port {} {}",
            end.name,
            shown_address(&end.address),
            end.port,
            end.family
        ));
    }
    if let Some(confidence) = &banner.confidence {
        // netperf stores the width as a fraction and prints fraction / 0.02.
        let half_width = confidence.interval_percent / 100.0 / 0.02;
        out.push_str(&format!(
            " : +/-{half_width:.3}% @ {:2}% conf. {}",
            confidence.level,
            if confidence.result_only {
                " on result only"
            } else {
                ""
            }
        ));
    }
    let suffixes = [
        (banner.nodelay, " : nodelay"),
        (banner.copy_avoidance, " : copy avoidance"),
        (banner.no_control, " : no control"),
        (banner.features.histogram, " : histogram"),
        (banner.features.interval, " : interval"),
        (banner.features.demo, " : demo"),
    ];
    for (shown, text) in suffixes {
        if shown {
            out.push_str(text);
        }
    }
    if banner.features.first_burst && banner.title.contains("REQUEST/RESPONSE") {
        out.push_str(&format!(" : first burst {}", banner.first_burst));
    }
    if banner.cpu_bind {
        out.push_str(" : cpu bind");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_outcomes::ipv4_banner;

    #[test]
    fn stream_banner_matches_transcript() {
        let banner = ipv4_banner(classic_title("tcp_stream").unwrap_or_default());
        assert_eq!(
            render_banner(&banner),
            "MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () \
port 0 AF_INET : histogram : interval : demo\n"
        );
    }

    #[test]
    fn rr_banner_has_first_burst_and_confidence() {
        let mut banner = ipv4_banner(classic_title("TCP_RR").unwrap_or_default());
        banner.confidence = Some(BannerConfidence {
            level: 99,
            interval_percent: 5.0,
            result_only: true,
        });
        banner.nodelay = true;
        banner.first_burst = 3;
        assert_eq!(
            render_banner(&banner),
            "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to \
127.0.0.1 () port 0 AF_INET : +/-2.500% @ 99% conf.  on result only : nodelay : histogram \
: interval : demo : first burst 3\n"
        );
    }

    #[test]
    fn confidence_suffix_matches_transcript() {
        let mut banner = ipv4_banner("MIGRATED TCP STREAM TEST");
        banner.confidence = Some(BannerConfidence {
            level: 99,
            interval_percent: 5.0,
            result_only: false,
        });
        assert!(render_banner(&banner)
            .contains("AF_INET : +/-2.500% @ 99% conf.  : histogram : interval : demo\n"));
    }

    #[test]
    fn omni_titles_and_ipv6_addresses() {
        assert_eq!(omni_title(OmniDirection::SendRecv), "OMNI Send|Recv TEST");
        assert_eq!(omni_title(OmniDirection::Receive), "OMNI Receive TEST");
        let mut banner = ipv4_banner(&omni_title(OmniDirection::Send));
        banner.local = BannerEndpoint {
            name: "::0".into(),
            address: "::".into(),
            port: 0,
            family: "AF_INET6".into(),
        };
        banner.remote.address = "::1".into();
        banner.remote.name = "::1".into();
        banner.remote.family = "AF_INET6".into();
        banner.features = BannerFeatures {
            interval: false,
            ..BannerFeatures::default()
        };
        banner.cpu_bind = true;
        assert_eq!(
            render_banner(&banner),
            "OMNI Send TEST from ::0 (::) port 0 AF_INET6 to ::1 (::1) port 0 AF_INET6 \
: histogram : demo : cpu bind\n"
        );
    }

    #[test]
    fn address_buffer_quirk() {
        assert_eq!(shown_address("0.0.0.0"), "0.0.0.0");
        assert_eq!(shown_address("10.0.0.1"), "");
        assert_eq!(shown_address("fe80::1"), "fe80::1");
    }
}
