//! Holds the classic output against netperf 2.7.1's own: every classic
//! transcript in tests/fixtures is rebuilt from an `Outcome` carrying the
//! transcript's numbers and compared byte for byte (banner included).

use super::banner::{render_banner, Banner, BannerConfidence};
use super::classic::{render_classic, ClassicOptions, HeadlineFigures};
use super::confidence::ConfidenceWidths;
use super::layouts::ClassicKind;
use super::test_outcomes::{
    ipv4_banner, maerts, rr, run_options, stream, udp_buffers, udp_stream, with_cpu,
};
use netperf_data::measure::outcome::{LatencyHistogram, Outcome};

/// Stock netperf 2.7.1's transcripts (scripts/record-stock-fixtures).
const TRANSCRIPT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/netperf-2.7.1-transcripts.txt"
));

/// The output of `command` in the transcript (between its `$ ` line and `[exit`).
fn transcript_output(text: &str, command: &str) -> Option<String> {
    let start = text.find(&format!("$ {command}\n"))? + command.len() + 3;
    let end = start + text[start..].find("[exit ")?;
    Some(text[start..end].to_string())
}

/// Parses the histogram rows of a netperf -v 2 print back into counts.
fn histogram_from(text: &str) -> Option<LatencyHistogram> {
    let mut h = LatencyHistogram::default();
    let mut rows = 0;
    for line in text.lines() {
        let mut parts = line.split(':').map(str::trim);
        let title = parts.next()?;
        if super::histogram::ROW_TITLES
            .iter()
            .any(|t| t.trim() == title)
            && rows < 8
        {
            for (slot, value) in h.rows[rows].iter_mut().zip(parts) {
                *slot = value.parse().ok()?;
            }
            rows += 1;
        } else if title == "HIST_TOTAL" {
            h.total = parts.next()?.parse().ok()?;
        }
    }
    (rows == 8).then_some(h)
}

/// One transcript command rebuilt.
struct Case {
    command: &'static str,
    kind: ClassicKind,
    opts: ClassicOptions,
    outcome: Outcome,
    banner: Banner,
}

impl Case {
    /// The case of `command`, whose test and output options it reads.
    fn new(command: &'static str, outcome: Outcome) -> Case {
        let (kind, opts) = run_options(command);
        Case {
            command,
            kind,
            opts,
            outcome,
            banner: ipv4_banner(kind.title()),
        }
    }

    fn with(mut self, change: impl FnOnce(&mut ClassicOptions)) -> Case {
        change(&mut self.opts);
        self
    }

    /// Banner (when headers are on) and result block; interim lines, which
    /// another module prints, are dropped from the expected text.
    fn check(&self, transcript: &str) {
        let Some(expected) = transcript_output(transcript, self.command) else {
            panic!("transcript has no command {:?}", self.command);
        };
        let expected: String = expected
            .split_inclusive('\n')
            .filter(|line| !line.starts_with("Interim result:"))
            .collect();
        let mut actual = String::new();
        if self.opts.print_headers {
            actual.push_str(&render_banner(&self.banner));
        }
        actual.push_str(&render_classic(self.kind, &self.outcome, &self.opts));
        assert_eq!(actual, expected, "command: {}", self.command);
    }
}

fn transcript_cases(transcript: &str) -> Vec<Case> {
    let stream_v2 = {
        let mut o = stream(1.000201, 2395619328);
        o.local.send_calls = 146217;
        o.remote.recv_calls = 40726;
        o.local.send_align = 8;
        o.remote.recv_align = 8;
        o.transport_mss = 65483;
        o.histogram = transcript_output(transcript, "netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -v 2")
            .and_then(|t| histogram_from(&t));
        o
    };
    let rr_v2 = {
        let mut o = rr(16058.0 / 16056.122, 16058);
        o.histogram = transcript_output(transcript, "netperf -H 127.0.0.1 -l 1 -t TCP_RR -v 2")
            .and_then(|t| histogram_from(&t));
        o
    };
    let stream_cpu = with_cpu(stream(1.0, 2973292500), Some(71.72), Some(71.72));
    let stream_mbytes = {
        let mut o = stream(1.0, 2517171078);
        o.local.send_buf = 262144;
        o.remote.recv_buf = 262144;
        o.local.send_size = 32768;
        o
    };
    let udp_cpu = with_cpu(
        udp_stream(1.00017, 275767, 274840),
        Some(70.14),
        Some(70.14),
    );
    let rr_cpu = {
        let mut o = rr(1.0, 14512);
        o.elapsed = 14512.0 / 14511.81;
        o.request_size = 64;
        o.response_size = 1024;
        with_cpu(o, Some(29.8815), Some(29.8815))
    };
    let udp_rr = {
        let mut o = rr(17721.0 / 17721.28, 17721);
        udp_buffers(&mut o);
        o
    };
    let udp_rr_cpu = {
        let mut o = rr(17688.0 / 17687.75, 17688);
        udp_buffers(&mut o);
        with_cpu(o, Some(29.9127), Some(29.9127))
    };
    let confidence_rr = ConfidenceWidths {
        throughput: 55.891,
        local_cpu: 0.0,
        remote_cpu: 0.0,
    };
    let averaged_stream = HeadlineFigures {
        elapsed: 1.0,
        throughput: 24410.22,
        local_cpu_util: -1.0,
        remote_cpu_util: -1.0,
        local_service_demand: -1.0,
        remote_service_demand: -1.0,
    };
    let mut confidence_stream = Case::new(
        "netperf -H 127.0.0.1 -l 1 -i 5,3 -I 99,5 -t TCP_STREAM",
        stream(1.0, 1),
    )
    .with(|o| {
        o.confidence_warning = Some(ConfidenceWidths {
            throughput: 11.102,
            local_cpu: 0.0,
            remote_cpu: 0.0,
        });
        o.averaged = Some(averaged_stream);
    });
    confidence_stream.banner.confidence = Some(BannerConfidence {
        level: 99,
        interval_percent: 5.0,
        result_only: false,
    });
    let mut brand_rr = Case::new(
        "netperf -H 127.0.0.1 -l 1 -t TCP_RR -P 0 -v 0 -B brand here -- -b 8 -D",
        rr(1.0, 172937),
    )
    // The brand is two words.
    .with(|o| o.brand = Some("brand here".into()));
    brand_rr.outcome.elapsed = 172937.0 / 172936.70;
    brand_rr.outcome.first_burst = 8;

    vec![
        Case::new("netperf -H 127.0.0.1 -l 1", stream(1.0, 2960133750)),
        Case::new("netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -c -C", stream_cpu),
        Case::new("netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -v 2", stream_v2),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -v 0",
            stream(1.0, 3073372500),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -P 0",
            stream(1.0, 2602860000),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -f M -- -m 32K -s 128K -S 128K",
            stream_mbytes,
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_MAERTS",
            maerts(1.0, 2849980000),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t UDP_STREAM -- -m 1024",
            udp_stream(1.0000889, 271445, 271135),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t UDP_STREAM -c -C -- -m 1024 -R 1",
            udp_cpu,
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_RR",
            rr(15612.0 / 15612.14, 15612),
        ),
        Case::new("netperf -H 127.0.0.1 -l 1 -t TCP_RR -v 2", rr_v2),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_RR -c -C -- -r 64,1024",
            rr_cpu,
        ),
        brand_rr,
        Case::new("netperf -H 127.0.0.1 -l 1 -t UDP_RR", udp_rr),
        Case::new("netperf -H 127.0.0.1 -l 1 -t UDP_RR -c -C", udp_rr_cpu),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_CRR",
            rr(11507.0 / 11507.36, 11507),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_CC",
            rr(9741.0 / 9741.24, 9741),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_SENDFILE",
            stream(1.0, 3834935000),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 3 -t TCP_STREAM -D 1",
            stream(3.0, 8380200000),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 3 -t TCP_RR -D 1",
            rr(44377.0 / 14792.19, 44377),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 3 -t TCP_RR -D -0.5 -f x",
            rr(43098.0 / 14366.14, 43098),
        ),
        confidence_stream,
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -i 5,3 -t TCP_RR -P 0",
            rr(13011.0 / 13011.35, 13011),
        )
        .with(|o| o.confidence_warning = Some(confidence_rr)),
        Case::new(
            "netperf -H 127.0.0.1 -l -100000 -t TCP_RR",
            rr(100000.0 / 14537.71, 100000),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l -10000000 -t TCP_STREAM",
            stream(10000000.0 * 8.0 / 1e6 / 15632.44, 10000000),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -- -m 0",
            stream(1.0, 2131083750),
        ),
        Case::new(
            "netperf -H 127.0.0.1 -l 1 -t TCP_STREAM -- -m abc",
            stream(1.0, 2504033750),
        ),
    ]
}

#[test]
fn classic_outputs_match_the_transcripts() {
    for case in transcript_cases(TRANSCRIPT) {
        case.check(TRANSCRIPT);
    }
}

#[test]
fn brief_stream_line_has_throughput_as_fifth_field() {
    let outcome = stream(1.0, 2602860000);
    let opts = ClassicOptions {
        print_headers: false,
        ..ClassicOptions::default()
    };
    let text = render_classic(ClassicKind::TcpStream, &outcome, &opts);
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(fields.get(4), Some(&"20822.88"));
}
