//! The netperf command line of one run: a cell's levels turned into omni
//! options, the selectors every run reports, and the plan's extra options.

use super::factors::{self, FactorKind};
use super::plan::{level_of, shape_of, Plan};
use netperf_results::model::Cell;

/// What every run reports (netperf -k): the write-up's selectors
/// (throughput, send/receive calls, CPU and peak per-CPU utilization,
/// service demand on both ends, MSS, bytes), latency for request/response
/// tests, and the environment facts that can change between runs.
pub const SELECTORS: &[&str] = &[
    "THROUGHPUT",
    "THROUGHPUT_UNITS",
    "PROTOCOL",
    "DIRECTION",
    "RESULT_BRAND",
    "ELAPSED_TIME",
    "LOCAL_SEND_SIZE",
    "REMOTE_RECV_SIZE",
    "REQUEST_SIZE",
    "RESPONSE_SIZE",
    "TRANSPORT_MSS",
    "LOCAL_SEND_THROUGHPUT",
    "LOCAL_RECV_THROUGHPUT",
    "REMOTE_SEND_THROUGHPUT",
    "REMOTE_RECV_THROUGHPUT",
    "LOCAL_SEND_CALLS",
    "LOCAL_RECV_CALLS",
    "REMOTE_SEND_CALLS",
    "REMOTE_RECV_CALLS",
    "LOCAL_BYTES_SENT",
    "LOCAL_BYTES_RECVD",
    "REMOTE_BYTES_SENT",
    "REMOTE_BYTES_RECVD",
    "LOCAL_CPU_UTIL",
    "LOCAL_CPU_PEAK_UTIL",
    "LOCAL_CPU_PEAK_ID",
    "LOCAL_SD",
    "REMOTE_CPU_UTIL",
    "REMOTE_CPU_PEAK_UTIL",
    "REMOTE_CPU_PEAK_ID",
    "REMOTE_SD",
    "SD_UNITS",
    "TRANSACTION_RATE",
    "MEAN_LATENCY",
    "P50_LATENCY",
    "P90_LATENCY",
    "P99_LATENCY",
    "LOCAL_TRANSPORT_RETRANS",
    "REMOTE_TRANSPORT_RETRANS",
    "LOCAL_SOCKET_PRIO",
    "LOCAL_RELEASE",
    "LOCAL_CPU_MODEL",
    "LOCAL_CPU_COUNT",
    "LOCAL_INTERFACE_NAME",
    "LOCAL_DRIVER_NAME",
    "LOCAL_CONG_CONTROL",
    "REMOTE_RELEASE",
    "REMOTE_CPU_MODEL",
    "REMOTE_CPU_COUNT",
    "REMOTE_INTERFACE_NAME",
    "REMOTE_DRIVER_NAME",
    "REMOTE_CONG_CONTROL",
    "UUID",
];

/// Longest result brand (-B) a run gets. netperf takes a brand of any
/// length; this keeps netperf's brief output lines readable, and holds every
/// built-in matrix scenario with its test.
const BRAND_LEN: usize = 80;

/// The streams a cell runs at once: its streams level times its test
/// level's `*N`.
pub fn streams_of(cell: &Cell) -> usize {
    let streams: u64 = level_of(cell, "streams")
        .and_then(|l| l.parse().ok())
        .unwrap_or(1);
    let per_test = level_of(cell, "test").map_or(1, factors::test_streams);
    usize::try_from(streams.saturating_mul(per_test)).unwrap_or(usize::MAX)
}

/// The netserver a cell's runs go to: its target's, else the plan's.
pub fn endpoint_of<'a>(plan: &'a Plan, cell: &Cell) -> (&'a str, u16) {
    level_of(cell, "target")
        .and_then(|label| plan.targets.iter().find(|t| t.label == label))
        .map_or((plan.host.as_str(), plan.port), |t| {
            (t.host.as_str(), t.port)
        })
}

/// The result brand (-B) of a cell: its levels joined, e.g. "udp/1024/on".
/// One longer than `BRAND_LEN` keeps its start and ends in a hash of the
/// whole, so that cells whose levels differ only past the cut (long
/// scenario labels) still carry different brands.
pub fn brand_of(cell: &Cell) -> String {
    let brand = cell
        .iter()
        .map(|(_, level)| level.as_str())
        .collect::<Vec<_>>()
        .join("/");
    if brand.is_empty() {
        return "run".into();
    }
    if brand.chars().count() <= BRAND_LEN {
        return brand;
    }
    let tag = format!("~{:08x}", fnv1a32(brand.as_bytes()));
    let kept: String = brand.chars().take(BRAND_LEN - tag.len()).collect();
    kept + &tag
}

/// FNV-1a: a stable 32-bit hash (std's hasher may change between releases,
/// and a brand is stored with the results).
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// netperf's arguments (without the program) for one stream of a run.
pub fn netperf_args(plan: &Plan, cell: &Cell, uuid: &str) -> Vec<String> {
    let shape = shape_of(cell);
    let (host, port) = endpoint_of(plan, cell);
    let mut args: Vec<String> = [
        "-P",
        "0",
        "-H",
        host,
        "-p",
        &port.to_string(),
        "-l",
        &plan.duration.to_string(),
        "-t",
        "omni",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if plan.cpu {
        args.extend(["-c".to_string(), "-C".to_string()]);
    }
    args.extend(["-B".to_string(), brand_of(cell)]);
    args.extend(plan.global_args.iter().cloned());
    args.push("--".into());
    args.extend(["-d", shape.direction, "-T", shape.protocol].map(String::from));
    let size = level_of(cell, "message_size");
    if let Some(size) = size {
        if shape.direction == "rr" {
            args.extend(["-r".to_string(), format!("{size},{size}")]);
        } else {
            args.extend(["-m".to_string(), size.to_string()]);
        }
    }
    for (name, level) in cell {
        let kind = factors::kind_of(name).ok();
        let option: Option<Vec<String>> = match kind {
            Some(FactorKind::Mss) => Some(vec!["-G".into(), level.clone()]),
            Some(FactorKind::SocketBuffer) => Some(vec![
                "-s".into(),
                format!("{level},{level}"),
                "-S".into(),
                format!("{level},{level}"),
            ]),
            Some(FactorKind::Burst) => Some(vec!["-b".into(), level.clone()]),
            Some(FactorKind::PacingRate) => {
                Some(vec!["-q".into(), factors::size_of(level).to_string()])
            }
            Some(FactorKind::Switch(option)) if level == "on" => Some(vec![option.into()]),
            Some(FactorKind::Count(option)) if level != "0" => {
                Some(vec![option.into(), level.clone()])
            }
            _ => None,
        };
        args.extend(option.into_iter().flatten());
    }
    if let (Some(offset), Some(size), "tcp", false) = (
        plan.mss_offset,
        size,
        shape.protocol,
        level_of(cell, "mss").is_some(),
    ) {
        let mss = factors::size_of(size).saturating_add(u64::from(offset));
        args.extend(["-G".to_string(), mss.to_string()]);
    }
    args.extend(["-u".to_string(), uuid.to_string()]);
    args.extend(["-k".to_string(), SELECTORS.join(",")]);
    args.extend(plan.test_args.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::plan::parse_plan;

    fn cell(pairs: &[(&str, &str)]) -> Cell {
        pairs
            .iter()
            .map(|(f, l)| (f.to_string(), l.to_string()))
            .collect()
    }

    fn plan(text: &str) -> Plan {
        parse_plan(text).unwrap().validate(&[]).unwrap()
    }

    #[test]
    fn the_write_ups_command_line() {
        let p = plan("host = \"mongo\"\nmss_offset = 12\n[factors]\nprotocol = [\"udp\", \"tcp\"]\nmessage_size = [1024, 8192]\noffloads = [\"on\", \"off\"]");
        let c = cell(&[
            ("protocol", "tcp"),
            ("message_size", "1024"),
            ("offloads", "off"),
        ]);
        let args = netperf_args(&p, &c, "u-1").join(" ");
        assert!(args.starts_with("-P 0 -H mongo -p 12865 -l 10 -t omni -c -C -B tcp/1024/off -- -d send -T tcp -m 1024 -G 1036 -u u-1 -k THROUGHPUT,"), "{args}");
        let udp = cell(&[
            ("protocol", "udp"),
            ("message_size", "8192"),
            ("offloads", "on"),
        ]);
        let args = netperf_args(&p, &udp, "u-2").join(" ");
        assert!(
            args.contains("-T udp -m 8192 -u u-2"),
            "no -G for UDP: {args}"
        );
    }

    #[test]
    fn a_switch_factor_adds_its_option_when_on() {
        let p = plan("host = \"h\"\n[factors]\nmptcp = [\"on\", \"off\"]");
        let on = netperf_args(&p, &cell(&[("mptcp", "on")]), "u").join(" ");
        let off = netperf_args(&p, &cell(&[("mptcp", "off")]), "u").join(" ");
        assert!(on.contains(" --mptcp "), "{on}");
        assert!(!off.contains("--mptcp"), "{off}");
        let p = plan("host = \"h\"\n[factors]\nudp_gso = [0, 44]\nudp_gro = [\"on\"]");
        let gso = netperf_args(&p, &cell(&[("udp_gso", "44"), ("udp_gro", "on")]), "u").join(" ");
        let plain = netperf_args(&p, &cell(&[("udp_gso", "0")]), "u").join(" ");
        assert!(
            gso.contains(" --gso 44 ") && gso.contains(" --gro "),
            "{gso}"
        );
        assert!(!plain.contains("--gso"), "{plain}");
    }

    #[test]
    fn every_matrix_cell_has_its_own_brand() {
        // The matrix's longest built-in scenarios (cut at 40 characters, the
        // first two shared one brand per test), and two of an operator's own
        // that differ only past the cut.
        let labels = [
            "other node, same zone, host network",
            "other node, same zone, pod IP",
            "same node, Service (node-local)",
            "a scenario label of the operator's own that runs on and on: node pool A",
            "a scenario label of the operator's own that runs on and on: node pool B",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for target in &labels {
            for test in ["TCP_STREAM", "TCP_RR", "TCP_RR*4", "UDP_RR*16"] {
                let brand = brand_of(&cell(&[("target", target), ("test", test)]));
                assert!(brand.chars().count() <= BRAND_LEN, "{brand}");
                assert!(seen.insert(brand.clone()), "{brand} twice");
                if target.len() + test.len() < BRAND_LEN {
                    assert_eq!(brand, format!("{target}/{test}"));
                }
            }
        }
        assert_eq!(brand_of(&cell(&[])), "run");
    }

    #[test]
    fn request_response_cells_use_r_and_b() {
        let p = plan("[factors]\ntest = [\"UDP_RR\"]\nmessage_size = [64]\nburst = [0, 8]\npacing_rate = [\"1M\"]\nsocket_buffer = [\"128K\"]");
        let c = cell(&[
            ("test", "UDP_RR"),
            ("message_size", "64"),
            ("burst", "8"),
            ("pacing_rate", "1M"),
            ("socket_buffer", "128K"),
        ]);
        let args = netperf_args(&p, &c, "u").join(" ");
        assert!(
            args.contains("-d rr -T udp -r 64,64 -b 8 -q 1048576 -s 128K,128K -S 128K,128K"),
            "{args}"
        );
        assert_eq!(streams_of(&cell(&[("streams", "4")])), 4);
        assert_eq!(streams_of(&c), 1);
        assert_eq!(
            streams_of(&cell(&[("streams", "2"), ("test", "UDP_RR*3")])),
            6
        );
    }

    #[test]
    fn target_cells_go_to_their_target() {
        let p = plan("host = \"h0\"\n[factors]\ntarget = [\"a\", \"b\"]\ntest = [\"TCP_RR*2\"]\n[targets]\na = \"198.18.1.2:5\"\nb = \"198.18.1.3\"");
        let args = netperf_args(&p, &cell(&[("target", "a"), ("test", "TCP_RR*2")]), "u").join(" ");
        assert!(args.starts_with("-P 0 -H 198.18.1.2 -p 5 "), "{args}");
        assert!(args.contains("-d rr -T tcp"), "{args}");
        let args = netperf_args(&p, &cell(&[("target", "b")]), "u").join(" ");
        assert!(args.starts_with("-P 0 -H 198.18.1.3 -p 12865 "), "{args}");
    }
}
