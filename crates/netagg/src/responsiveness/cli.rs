//! `netagg responsiveness`'s options, checked into a plan before any
//! traffic, and the sequence from them to a written and stored run: the
//! phases, the table on stdout, the JSON, text and page in `--out`, the
//! results database.

use super::measure::{self, Plan, PROBES};
use super::model::Run;
use super::{draw, phase_kind, PHASES};
use crate::agg::cli::{open_store, raise_open_files};
use crate::args::{DurationArgs, HostArgs, OutArgs, StoreArgs};
use netperf_base::saved::write_files;
use std::process::ExitCode;

/// The phases a run has unless --phases says otherwise.
const DEFAULT_PHASES: &str = "idle,upload,download,both";
/// Most bulk flows per direction per load generator.
const MAX_FLOWS: u32 = 10_000;
/// Highest probe rate: a probe measures latency, it is not a load.
const MAX_PROBE_RATE: f64 = 100_000.0;
/// Longest phase.
const MAX_DURATION: u32 = 3600;

/// Latency under working load: an open-loop request/response probe at a
/// fixed rate, idle, then beside bulk TCP flows upload, download and both
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
netagg responsiveness --host lg1 --duration 10 --flows 4\n  \
netagg responsiveness --host lg1 --host lg2 --probe udp --probe-rate 200 --out resp/ --store\n  \
netagg responsiveness --host 127.0.0.1 --duration 2 --flows 2 --phases idle,upload")]
pub struct ResponsivenessArgs {
    // The load generators (--host, --hosts-file); the probe goes to the first.
    #[command(flatten)]
    pub hosts: HostArgs,
    /// netserver control port on the load generators
    #[arg(long, default_value_t = 12865)]
    pub port: u16,
    #[command(flatten)]
    pub duration: DurationArgs,
    /// bulk TCP flows per direction per load generator (one many-flow test
    /// each; needs netperf-ng's netserver)
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_FLOWS)))]
    pub flows: u32,
    /// the probe's requests per second (open loop, netperf -- --rate)
    #[arg(long, value_name = "R", default_value = "100")]
    pub probe_rate: String,
    /// the probe's protocol: tcp (TCP_RR, 1-byte requests) or udp (UDP_RR,
    /// 8 bytes; lost requests counted)
    #[arg(long, default_value = "tcp", value_parser = PROBES.map(|p| p.name))]
    pub probe: String,
    /// seconds of each probe test: the series' step
    #[arg(long, value_name = "SECS", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=60))]
    pub probe_seconds: u32,
    /// seconds between the bulk flows moving and the probe starting
    #[arg(long, value_name = "SECS", default_value = "1")]
    pub settle: String,
    /// the phases, in order: idle, upload, download, both
    #[arg(long, value_name = "LIST", default_value = DEFAULT_PHASES)]
    pub phases: String,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// A number in `range`, given as plain decimal text.
fn decimal(name: &str, text: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.');
    match text.parse::<f64>() {
        Ok(x) if plain && range.contains(&x) => Ok(x),
        _ => Err(format!(
            "{name} {text:?}: expected a number from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

/// The phases named in `list`: known, each once.
fn phases(list: &str) -> Result<Vec<&'static super::PhaseKind>, String> {
    let mut out: Vec<&'static super::PhaseKind> = Vec::new();
    for name in list.split(',').map(str::trim) {
        let kind = phase_kind(name).ok_or_else(|| {
            let known: Vec<&str> = PHASES.iter().map(|p| p.name).collect();
            format!("--phases: {name:?} is not a phase ({})", known.join(", "))
        })?;
        if out.contains(&kind) {
            return Err(format!("--phases: {name} is named twice"));
        }
        out.push(kind);
    }
    Ok(out)
}

/// Whether `host` names this host's loopback (every address it resolves
/// to is one): then there is no path to judge but this host.
fn is_loopback(host: &str) -> bool {
    use std::net::ToSocketAddrs;
    match (host, 0).to_socket_addrs() {
        Ok(addrs) => {
            let addrs: Vec<_> = addrs.collect();
            !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback())
        }
        Err(_) => false,
    }
}

/// Everything checked, before any traffic.
fn plan(args: &ResponsivenessArgs) -> Result<Plan, String> {
    let hosts = args.hosts.list().map_err(|e| e.to_string())?;
    if hosts.is_empty() {
        return Err("give a load generator: --host HOST (or --hosts-file FILE)".into());
    }
    let duration = args.duration.duration.unwrap_or(10);
    if !(1..=MAX_DURATION).contains(&duration) {
        return Err(format!("--duration must be 1 to {MAX_DURATION} seconds"));
    }
    Ok(Plan {
        port: args.port,
        phases: phases(&args.phases)?,
        flows: args.flows,
        probe_rate: decimal("--probe-rate", &args.probe_rate, 0.001..=MAX_PROBE_RATE)?,
        probe: PROBES
            .iter()
            .find(|p| p.name == args.probe)
            .expect("clap keeps --probe to the table"),
        duration: f64::from(duration),
        probe_seconds: args.probe_seconds,
        settle: decimal("--settle", &args.settle, 0.0..=60.0)?,
        loopback: is_loopback(&hosts[0]),
        hosts,
    })
}

/// `netagg responsiveness` from start to finish: 0 when every phase ran
/// cleanly, 1 when a test failed, 2 for options refused.
pub fn run(args: &ResponsivenessArgs, command_line: Vec<String>) -> ExitCode {
    let refuse = |e: String| {
        eprintln!("netagg responsiveness: {e}");
        ExitCode::from(2)
    };
    let plan = match plan(args) {
        Ok(plan) => plan,
        Err(e) => return refuse(e),
    };
    let store = match open_store(&args.store) {
        Ok(store) => store,
        Err(code) => return code,
    };
    let out = args.out.dir("responsiveness");
    let bulk_flows = plan.flows * plan.hosts.len() as u32 * 2;
    raise_open_files(bulk_flows, true);
    netperf_data::engine::signals::install();
    let measured = measure::run(&plan, command_line.join(" "), &mut |line| {
        eprintln!("netagg responsiveness: {line}");
    });
    // Drawn from the JSON as written, so `netagg report` draws the same.
    let json = match serde_json::to_string_pretty(&measured.to_json()) {
        Ok(json) => json + "\n",
        Err(e) => return refuse(e.to_string()),
    };
    let run = match serde_json::from_str(&json)
        .map_err(|e| e.to_string())
        .and_then(|doc| Run::from_json(&doc))
    {
        Ok(run) => run,
        Err(e) => return refuse(format!("the run's own JSON does not read back: {e}")),
    };
    print!("{}", draw::text(&run));
    let mut files = vec![("responsiveness.json".to_string(), json.clone())];
    files.extend(draw::files(&run));
    match write_files(&out, &files) {
        Ok(paths) => {
            for path in paths {
                eprintln!("netagg responsiveness: wrote {}", path.display());
            }
        }
        Err(e) => {
            eprintln!("netagg responsiveness: cannot write {e}");
            return ExitCode::from(1);
        }
    }
    if let Some(store) = store {
        match store.finish_result(super::store::result_of(&run, json, command_line)) {
            Ok(id) => eprintln!("netagg responsiveness: stored as {id}"),
            Err(code) => return code,
        }
    }
    let clean =
        run.phases.len() == plan.phases.len() && run.phases.iter().all(|p| p.problems.is_empty());
    match clean {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_phases_are_checked() {
        assert_eq!(decimal("--probe-rate", "100", 0.001..=1e5), Ok(100.0));
        for bad in ["0", "-5", "1e3", "nan", "inf", "", "200000", "1,5"] {
            assert!(decimal("--probe-rate", bad, 0.001..=1e5).is_err(), "{bad}");
        }
        assert_eq!(phases("idle,both").unwrap().len(), 2);
        assert!(is_loopback("127.0.0.1") && is_loopback("::1"));
        assert!(!is_loopback("198.18.1.2"));
        for bad in ["idle,idle", "sideways", "", "idle,"] {
            assert!(phases(bad).is_err(), "{bad}");
        }
    }
}
