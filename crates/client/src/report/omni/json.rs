//! Our JSON output (-J): one object per test, the selected selectors as keys,
//! each with a typed value and its unit, and the interim results as an array.
//! The shape is fixed by docs/omni-output.schema.json.

use super::record::OmniRecord;
use super::select::Selection;
use super::table::Selector;
use super::value::Value;
use crate::report::interim::Interim;
use serde_json::{json, Map, Value as Json};

/// Version of the JSON shape; bumped only for incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// Units of selectors, matched on the name: exact names first, then suffixes.
const EXACT_UNITS: &[(&str, &str)] = &[
    ("ELAPSED_TIME", "s"),
    ("RT_LATENCY", "usec/tran"),
    ("TRANSACTION_RATE", "Trans/s"),
    ("TRANSPORT_MSS", "bytes"),
    ("REQUEST_SIZE", "bytes"),
    ("RESPONSE_SIZE", "bytes"),
    ("BURST_SIZE", "transactions"),
    ("CONFIDENCE_LEVEL", "%"),
    ("CONFIDENCE_INTERVAL", "%"),
    ("LATENCY_SAMPLES", "samples"),
    ("PACKETS_PER_TRANSACTION", "packets/transaction"),
    ("RR_TIMEOUTS", "timeouts"),
    ("FLOWS", "flows"),
    ("THREADS", "threads"),
    ("FLOWS_STALLED", "flows"),
    ("FLOWS_FAILED", "flows"),
    ("OPEN_OFFERED_RATE", "Trans/s"),
    ("OPEN_ACHIEVED_RATE", "Trans/s"),
    ("OPEN_SLIP_P50", "us"),
    ("OPEN_SLIP_P99", "us"),
    ("OPEN_SLIP_MAX", "us"),
    ("OPEN_LATE", "requests"),
    ("OPEN_HELD_BACK", "requests"),
    ("OPEN_LOST", "requests"),
    ("OPEN_MAX_IN_FLIGHT", "requests"),
];
const SUFFIX_UNITS: &[(&str, &str)] = &[
    ("_LATENCY", "us"),
    ("LATENCY_STDERR", "us"),
    ("_CI99_LOW", "us"),
    ("_CI99_HIGH", "us"),
    ("_SIZE_REQ", "bytes"),
    ("_SIZE_END", "bytes"),
    ("SS_SIZE", "bytes"),
    ("SR_SIZE", "bytes"),
    ("_SEND_SIZE", "bytes"),
    ("_RECV_SIZE", "bytes"),
    ("_BYTES_SENT", "bytes"),
    ("_BYTES_RECVD", "bytes"),
    ("_BYTES_XFERD", "bytes"),
    ("_BYTES_PER_SEND", "bytes"),
    ("_BYTES_PER_RECV", "bytes"),
    ("_BYTES", "bytes"),
    ("_CPU_UTIL", "%"),
    ("_PEAK_UTIL", "%"),
    ("_CONFID", "%"),
    ("_CPU_FREQUENCY", "MHz"),
    ("_INTERVAL_USECS", "us"),
    ("_PPS", "packets/s"),
    ("_PACKETS", "packets"),
    ("_CALLS", "calls"),
    ("_TCP_RTT", "us"),
    ("_TCP_RTTVAR", "us"),
    ("_TCP_CWND", "segments"),
    ("_TCP_RETRANSMITS", "segments"),
    ("_TCP_DELIVERY_RATE", "bytes/s"),
    ("_TCP_PACING_RATE", "bytes/s"),
    ("_TCP_BUSY", "%"),
    ("_TCP_RWND_LIMITED", "%"),
    ("_TCP_SNDBUF_LIMITED", "%"),
];

fn unit_of(s: &Selector, r: &OmniRecord) -> Option<String> {
    let name = s.name;
    let dynamic = match name {
        "THROUGHPUT" | "FLOW_RATE_MIN" | "FLOW_RATE_MEDIAN" | "FLOW_RATE_MAX" => {
            Some(format!("{}/s", r.throughput_units))
        }
        "LOCAL_SEND_THROUGHPUT"
        | "LOCAL_RECV_THROUGHPUT"
        | "REMOTE_SEND_THROUGHPUT"
        | "REMOTE_RECV_THROUGHPUT" => Some(format!("{}/s", r.directional_units)),
        "LOCAL_SD" | "REMOTE_SD" => Some(r.sd_units.to_string()),
        _ if name.contains("_CPU_PERCENT_") => Some("%".to_string()),
        _ => None,
    };
    dynamic.or_else(|| {
        EXACT_UNITS
            .iter()
            .find(|(n, _)| *n == name)
            .or_else(|| {
                SUFFIX_UNITS
                    .iter()
                    .find(|(suffix, _)| name.ends_with(suffix))
            })
            .map(|(_, unit)| unit.to_string())
    })
}

fn typed(v: Value) -> Json {
    match v {
        Value::Text(s) => Json::String(s),
        Value::Int(i) => json!(i),
        Value::Real(r) if r.is_finite() => json!(r),
        Value::Real(_) => Json::Null,
        Value::Char(c) => Json::String(c.to_string()),
        Value::Missing => Json::Null,
    }
}

/// An interval's TCP figures, ours (`tcp`) or the netserver's (`remote_tcp`).
fn tcp_object(t: &netperf_data::measure::tcp_info::TcpInterval) -> Json {
    json!({
        "rtt_us": t.rtt_us, "rttvar_us": t.rttvar_us, "snd_cwnd": t.snd_cwnd,
        "retransmits": t.retransmits,
        "delivery_rate_bytes_per_s": t.delivery_rate,
        "pacing_rate_bytes_per_s": t.pacing_rate,
        "busy": t.busy, "rwnd_limited": t.rwnd_limited,
        "sndbuf_limited": t.sndbuf_limited,
    })
}

/// The JSON object of one test (pretty-printed, newline-terminated).
pub fn render_json(selection: &Selection, record: &OmniRecord, interims: &[Interim]) -> String {
    let mut results = Map::new();
    for s in selection.blocks.iter().flatten() {
        let mut entry = Map::new();
        entry.insert("value".into(), typed(s.value(record)));
        if let Some(unit) = unit_of(s, record) {
            entry.insert("unit".into(), Json::String(unit));
        }
        results.insert(s.name.to_string(), Json::Object(entry));
    }
    let interim: Vec<Json> = interims
        .iter()
        .map(|i| {
            let mut one = json!({
                "value": i.value,
                "unit": i.units,
                "interval_s": i.interval_secs,
                "ending_epoch_s": i.ending_epoch_secs,
            });
            for (key, tcp) in [("tcp", &i.tcp), ("remote_tcp", &i.remote_tcp)] {
                if let Some(t) = tcp {
                    one[key] = tcp_object(t);
                }
            }
            one
        })
        .collect();
    let doc = json!({
        "format": "netperf-ng-omni",
        "version": FORMAT_VERSION,
        "test": record.test_name,
        "results": Json::Object(results),
        "interim": interim,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::super::select::parse;
    use super::*;

    #[test]
    fn values_are_typed_with_units() {
        let r = OmniRecord {
            test_name: "TCP_RR".into(),
            throughput: 13235.354,
            throughput_units: "Trans".into(),
            ..Default::default()
        };
        let s =
            parse("THROUGHPUT,PROTOCOL,RESULT_BRAND,LSS_SIZE_END,LOCAL_CPU_PERCENT_USER").unwrap();
        let doc: Json = serde_json::from_str(&render_json(&s, &r, &[])).unwrap();
        assert_eq!(doc["test"], "TCP_RR");
        assert_eq!(doc["results"]["THROUGHPUT"]["value"], 13235.354);
        assert_eq!(doc["results"]["THROUGHPUT"]["unit"], "Trans/s");
        assert_eq!(doc["results"]["PROTOCOL"]["value"], "TCP");
        assert!(doc["results"]["PROTOCOL"].get("unit").is_none());
        assert!(doc["results"]["RESULT_BRAND"]["value"].is_null());
        assert_eq!(doc["results"]["LSS_SIZE_END"]["unit"], "bytes");
        assert_eq!(doc["results"]["LOCAL_CPU_PERCENT_USER"]["unit"], "%");
        assert_eq!(doc["interim"], json!([]));
    }
}
