//! netagg: synchronized aggregate network tests over many load generators.
//! Parses its options (clap) and calls the library; see `netperf_ng::agg`.

use clap::Parser;
use netperf_ng::agg::{charts, hosts, plan, runner, summary};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Ramp 1, 2, 4, ... streams up to twice the CPUs of this system (the system
/// under test) against netservers on the load generators, sample every
/// stream at the same instants, and report per level.
#[derive(Parser, Debug)]
#[command(
    name = "netagg",
    version,
    after_help = "Examples:\n  \
netagg --hosts-file remote_hosts --kind tps --duration 30\n  \
netagg --host lg1 --host lg2 --kind outbound --max-streams 8 --out results/\n  \
netagg --host 127.0.0.1 --kind tps --duration 3 --max-streams 4   # a quick look on loopback"
)]
struct Args {
    /// remote_hosts file in the seed's format (REMOTE_HOSTS[i]=..., NUM_REMOTE_HOSTS=N)
    #[arg(long, value_name = "FILE")]
    hosts_file: Option<String>,
    /// a load generator (repeatable); used when no --hosts-file is given
    #[arg(long = "host", value_name = "HOST")]
    hosts: Vec<String>,
    /// the test kind
    #[arg(long, value_enum, default_value = "tps")]
    kind: plan::Kind,
    /// seconds each level of the ramp runs
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..=86400))]
    duration: u64,
    /// the last level's stream count (default: 2 x this system's CPUs)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_streams: Option<u32>,
    /// transactions in flight per stream (-b); for tps without it, the burst
    /// is searched as find_max_burst.sh does
    #[arg(long)]
    burst: Option<u32>,
    /// seconds per trial of the burst search
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=600))]
    search_seconds: u64,
    /// netserver control port on the load generators
    #[arg(long, default_value_t = 12865)]
    port: u16,
    /// seconds between samples
    #[arg(long, default_value_t = 1.0)]
    interval: f64,
    /// directory for the series (CSV, JSON), the summary, the charts and the report
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// title of the charts and the report
    #[arg(long, default_value = "")]
    title: String,
    /// a note drawn on the overall chart
    #[arg(long, default_value = "")]
    annotation: String,
    /// also draw every stream's rate (netagg_<kind>_streams.svg)
    #[arg(long)]
    individual: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let hosts = match (&args.hosts_file, args.hosts.is_empty()) {
        (Some(file), _) => hosts::read(file),
        (None, false) => Ok(args.hosts.clone()),
        (None, true) => Err(hosts::HostsError::None),
    };
    let hosts = match hosts {
        Ok(h) => h,
        Err(e) => {
            eprintln!("netagg: {e}");
            return ExitCode::from(2);
        }
    };
    if !(0.1..=60.0).contains(&args.interval) {
        eprintln!("netagg: --interval must be between 0.1 and 60 seconds");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("netagg: cannot create {}: {e}", args.out.display());
        return ExitCode::from(2);
    }
    let cpus = netperf_ng::measure::cpu::num_cpus();
    let kind = plan::spec_of(args.kind);
    let cfg = runner::RunConfig {
        hosts,
        port: args.port,
        kind,
        burst: args.burst.unwrap_or(kind.default_burst),
        max_streams: args.max_streams.unwrap_or(2 * cpus),
        level_duration: Duration::from_secs(args.duration),
        sample_interval: Duration::from_secs_f64(args.interval),
    };
    netperf_ng::engine::signals::install();
    let mut cfg = cfg;
    let mut search = None;
    if args.kind == plan::Kind::Tps && args.burst.is_none() {
        let (trials, best) = runner::search_burst(&cfg, Duration::from_secs(args.search_seconds));
        for t in &trials {
            eprintln!("netagg: burst {:>5}: {:.1} {}", t.burst, t.rate, kind.units);
        }
        eprintln!("netagg: using burst {best}");
        cfg.burst = best;
        search = Some(trials);
    }
    let total = plan::ramp(cfg.max_streams).len() as u64 * args.duration;
    let terminal = std::io::stderr().is_terminal();
    let recording = runner::run(&cfg, |sample, level| {
        if terminal {
            let left = total.saturating_sub(sample.t as u64);
            eprint!(
                "\r{:>5}s left  level {} ({} streams)  {:.1} {}   ",
                left,
                sample.level + 1,
                level.streams,
                sample.aggregate,
                kind.units
            );
            let _ = std::io::stderr().flush();
        }
    });
    if terminal {
        eprintln!();
    }
    let levels = summary::summarize(&recording, cpus, kind.units.starts_with("10^6bits"));
    let mut text = summary::text(&recording, &levels, kind.units);
    if let Some(trials) = &search {
        text.push_str(&summary::burst_search_text(trials, cfg.burst, kind.units));
    }
    print!("{text}");
    let files = [
        (format!("netagg_{}.txt", kind.name), text.clone()),
        (
            format!("netagg_{}.csv", kind.name),
            summary::csv(&recording, &levels),
        ),
        (
            format!("netagg_{}.json", kind.name),
            summary::json(
                &recording,
                &levels,
                kind.name,
                kind.units,
                cfg.burst,
                search.as_deref(),
            ),
        ),
    ];
    let chart_text = charts::ChartText {
        title: if args.title.is_empty() {
            format!("netagg {}", kind.name)
        } else {
            args.title.clone()
        },
        annotation: args.annotation.clone(),
        units: kind.units.to_string(),
    };
    let mut svgs = vec![charts::overall(&recording, &levels, &chart_text)];
    if args.individual {
        svgs.push(charts::individual(&recording, &chart_text));
    }
    let mut files = files.to_vec();
    files.push((format!("netagg_{}_overall.svg", kind.name), svgs[0].clone()));
    if let Some(streams) = svgs.get(1) {
        files.push((format!("netagg_{}_streams.svg", kind.name), streams.clone()));
    }
    files.push((
        format!("netagg_{}.html", kind.name),
        charts::html(&text, &svgs, &levels, &chart_text),
    ));
    for (name, body) in files {
        let path = args.out.join(name);
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("netagg: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    if recording.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
