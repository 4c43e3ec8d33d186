//! netagg: synchronized aggregate network tests over many load generators.
//! Parses its options (clap) and calls the library; see `netperf_ng::agg`.

use clap::{CommandFactory, FromArgMatches, Parser};
use netperf_ng::agg::{charts, compat, health, hosts, plan, post, report, runner, summary};
use netperf_ng::{k8s, rlimit};
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
    args_conflicts_with_subcommands = true,
    version,
    after_help = "Examples:\n  \
netagg --hosts-file remote_hosts --kind tps --duration 30\n  \
netagg --host lg1 --host lg2 --kind outbound --max-streams 8 --out results/\n  \
netagg --host 127.0.0.1 --kind tps --duration 3 --max-streams 4   # a quick look on loopback\n  \
netagg --hosts-k8s app.kubernetes.io/name=netserver --kind tps     # the ready pods of a label, via the API\n  \
netagg post netperf_tps.log --intervals                            # post_proc.py on real netperf runs"
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// remote_hosts file in the seed's format (REMOTE_HOSTS[i]=..., NUM_REMOTE_HOSTS=N)
    #[arg(long, value_name = "FILE")]
    hosts_file: Option<String>,
    /// a load generator (repeatable); used when no --hosts-file is given
    #[arg(long = "host", value_name = "HOST")]
    hosts: Vec<String>,
    /// every address of this DNS name is a load generator (all its A and
    /// AAAA records, e.g. a Kubernetes headless Service)
    #[arg(long, value_name = "NAME", conflicts_with_all = ["hosts_file", "hosts"])]
    hosts_dns: Option<String>,
    /// every ready pod this label selector picks is a load generator, found
    /// through the Kubernetes API ($KUBECONFIG or ~/.kube/config, else the
    /// in-cluster service account); their control port is the container
    /// port named control (else 12865), the same on every pod
    #[arg(long, value_name = "SELECTOR", conflicts_with_all = ["hosts_file", "hosts", "hosts_dns"])]
    hosts_k8s: Option<String>,
    /// the namespace --hosts-k8s looks in (default: the kubeconfig context's,
    /// or this pod's)
    #[arg(long, value_name = "NS", requires = "hosts_k8s", conflicts_with_all = ["hosts_file", "hosts", "hosts_dns"])]
    k8s_namespace: Option<String>,
    /// the kubeconfig --hosts-k8s uses, instead of $KUBECONFIG, ~/.kube/config
    /// or the in-cluster service account
    #[arg(long, value_name = "PATH", requires = "hosts_k8s", conflicts_with_all = ["hosts_file", "hosts", "hosts_dns"])]
    kubeconfig: Option<PathBuf>,
    /// the test kind
    #[arg(long, value_enum, default_value = "tps")]
    kind: plan::Kind,
    /// seconds each level of the ramp runs
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..=86400))]
    duration: u64,
    /// the last level's stream count (default: 2 x this system's CPUs)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_streams: Option<u32>,
    /// no ramp: one level with exactly this many streams
    #[arg(long, conflicts_with = "max_streams", value_parser = clap::value_parser!(u32).range(1..=4096))]
    streams: Option<u32>,
    /// transactions in flight per stream (-b); for tps without it, the burst
    /// is searched as find_max_burst.sh does
    #[arg(long)]
    burst: Option<u32>,
    /// seconds a tps (UDP_RR) stream waits for a lost request or response
    /// before it counts a timeout and restarts its burst: netperf's -- -e,
    /// 1 by default as in runemomniaggdemo.sh; 0 turns recovery off, and a
    /// stream then stalls for the rest of the run once every request it has
    /// in flight is lost. Only tps streams have datagrams to lose
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(0..=3600))]
    loss_timeout: Option<u32>,
    /// seconds per trial of the burst search
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=600))]
    search_seconds: u64,
    /// netserver control port on the load generators
    #[arg(long, default_value_t = 12865)]
    port: u16,
    /// stream set-ups (control connection, request, answer) in flight at
    /// once per load generator
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    setup_concurrency: u32,
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
    /// also print every interval (level), as post_proc.py --intervals does
    #[arg(long)]
    intervals: bool,
    #[command(flatten)]
    store: netperf_ng::resultsdb::cli::StoreArgs,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    Results(netperf_ng::resultsdb::cli::ResultsArgs),
    /// Run an experiment: factors and levels (protocol, message size,
    /// offloads, ...) from a TOML plan or --factor, every cell repeated in
    /// a seeded random order as netperf omni tests, with statistics per
    /// cell, ratios between levels, tables, CSV/JSON and an HTML report
    Experiment(Box<netperf_ng::experiment::cli::ExperimentArgs>),
    /// Run the scenario matrix: the same tests (TCP_STREAM, TCP_RR with
    /// percentiles, UDP_RR, a short aggregate) from here to a netserver on
    /// this node, another node in the zone and another zone, over the pod
    /// network, the host network and a Service; one table, CSV/JSON, an
    /// HTML report, the results database
    Matrix(Box<netperf_ng::matrix::cli::MatrixArgs>),
    /// Draw a saved run's charts and page again from its JSON (what netagg
    /// wrote as netagg_KIND.json, or `netperf -- --report` beside its
    /// page): the same context, summary, charts and tables, into --out.
    Report {
        /// the saved run: netagg_KIND.json, or the FILE.json of `netperf -- --report FILE.html`
        json: PathBuf,
        /// directory for the page and its charts
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
    },
    /// Read netperf_<type>.log and its .out files from runemomniaggdemo.sh (real
    /// netperf runs) and print post_proc.py's summary; write the series (CSV,
    /// JSON), the chart and the report
    Post {
        /// the run log, e.g. netperf_tps.log (the .out files beside it are read)
        log: PathBuf,
        /// also print every interval, as post_proc.py --intervals does
        #[arg(long)]
        intervals: bool,
        /// directory for the series, chart and report
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
        /// title of the chart and the report
        #[arg(long, default_value = "")]
        title: String,
        /// a note drawn on the chart
        #[arg(long, default_value = "")]
        annotation: String,
    },
}

/// `netagg post`: post_proc.py's work, with our outputs.
fn post(log: &PathBuf, intervals: bool, out: &PathBuf, title: &str, annotation: &str) -> ExitCode {
    let analysis = match post::analyze(log) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("netagg: {e}");
            return ExitCode::from(1);
        }
    };
    let text = analysis.summary_text(intervals);
    print!("{text}");
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("netagg: cannot create {}: {e}", out.display());
        return ExitCode::from(2);
    }
    let base = log
        .file_stem()
        .map_or("netperf".to_string(), |s| s.to_string_lossy().into_owned());
    let (recording, levels) = post_as_recording(&analysis);
    let chart_text = charts::ChartText {
        title: if title.is_empty() {
            base.clone()
        } else {
            title.to_string()
        },
        annotation: annotation.to_string(),
        units: analysis.units.to_string(),
    };
    let svg = charts::overall(&recording, &levels, &chart_text);
    let mut context =
        netperf_ng::page::context::RunContext::new("netagg post", std::env::args().collect());
    context.setting("netperf log", log.display());
    context.setting("Units", analysis.units);
    context.setting("Hosts", "not in netperf's logs");
    let json = serde_json::to_string_pretty(&analysis.to_json()).unwrap_or_default() + "\n";
    let json = report::with_context(&json, &context);
    let files = [
        (format!("{base}_series.csv"), analysis.series_csv()),
        (format!("{base}_series.json"), json),
        (format!("{base}_overall.svg"), svg.clone()),
        (
            format!("{base}.html"),
            report::page(
                &context,
                &text,
                &[(svg, report::OVERALL_CAPTION.to_string())],
                &levels,
                &chart_text,
            ),
        ),
    ];
    for (name, body) in files {
        let path = out.join(name);
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("netagg: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// `netagg report`: a saved netagg run's charts and page, or a saved
/// `netperf -- --report` series page, drawn again.
fn redraw(json: &PathBuf, out: &PathBuf) -> ExitCode {
    use netperf_ng::page::series::{SeriesRun, FORMAT};
    let files = std::fs::read_to_string(json)
        .map_err(|e| format!("cannot read {}: {e}", json.display()))
        .and_then(|text| {
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| format!("{}: not JSON: {e}", json.display()))
        })
        .and_then(|doc| {
            let files = match doc.get("format").and_then(|f| f.as_str()) {
                Some(FORMAT) => SeriesRun::from_json(&doc).map(|run| {
                    let stem = json
                        .file_stem()
                        .map_or("series".into(), |s| s.to_string_lossy());
                    vec![(format!("{stem}.html"), run.page())]
                }),
                _ => netperf_ng::agg::saved::read(&doc)
                    .map(|s| s.drawing.files(&s.kind, &s.recording, &s.levels)),
            };
            files.map_err(|e| format!("{}: {e}", json.display()))
        });
    let files = match files {
        Ok(files) => files,
        Err(e) => {
            eprintln!("netagg: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("netagg: cannot create {}: {e}", out.display());
        return ExitCode::from(2);
    }
    for (name, body) in files {
        let path = out.join(&name);
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("netagg: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
        println!("{}", path.display());
    }
    ExitCode::SUCCESS
}

/// The analysis of real netperf runs in the shape the charts draw.
fn post_as_recording(a: &post::Analysis) -> (runner::Recording, Vec<summary::LevelSummary>) {
    let t0 = a.series.first().map_or(0, |p| p.time);
    let level_of = |time: i64| {
        a.levels
            .iter()
            .position(|l| time >= l.window.start && time < l.window.end)
            .unwrap_or(0)
    };
    let samples = a
        .series
        .iter()
        .map(|p| runner::Sample {
            t: (p.time - t0) as f64,
            epoch: p.time as f64,
            level: level_of(p.time),
            aggregate: p.value * a.multiplier,
            cpu_util: -1.0,
            cpu_peak: -1.0,
            packets_out: -1.0,
            packets_in: -1.0,
            ..runner::Sample::default()
        })
        .collect();
    let runs = a
        .levels
        .iter()
        .map(|l| runner::LevelRun {
            streams: l.streams,
            requested: l.streams,
            setup_start: (l.window.start - t0) as f64,
            start: (l.window.start - t0) as f64,
            end: (l.window.end - t0) as f64,
            ..runner::LevelRun::default()
        })
        .collect();
    let levels = a
        .levels
        .iter()
        .map(|l| summary::LevelSummary {
            streams: l.streams,
            window: ((l.start - t0) as f64, (l.end - t0) as f64),
            samples: 0,
            sample_indices: vec![],
            average: l.average * a.multiplier,
            min: l.minimum * a.multiplier,
            max: l.maximum * a.multiplier,
            cpu_util: -1.0,
            cpu_peak: -1.0,
            packets_out: -1.0,
            packets_in: -1.0,
            service_demand: -1.0,
            stream_rates: vec![],
            min_over_max: 0.0,
            jain: 0.0,
            // netperf's logs say nothing of a stream's progress per sample.
            health: health::LevelHealth::default(),
        })
        .collect();
    let recording = runner::Recording {
        levels: runs,
        samples,
        start_epoch: t0 as f64,
        // post_proc.py's series is resampled to one point a second.
        sample_interval: 1.0,
        ..runner::Recording::default()
    };
    (recording, levels)
}

/// runemomniaggdemo.sh's `-e 1` for its tps streams.
const DEFAULT_LOSS_TIMEOUT: u32 = 1;

/// The load generators from whichever source was given, the control port
/// (the pods' own with --hosts-k8s) and, with --hosts-k8s, what the API said.
fn load_generators(
    args: &Args,
    port_given: bool,
) -> Result<(Vec<String>, u16, Option<k8s::Discovery>), hosts::HostsError> {
    if let Some(selector) = &args.hosts_k8s {
        let query = k8s::Query {
            selector: selector.clone(),
            namespace: args.k8s_namespace.clone(),
            kubeconfig: args.kubeconfig.clone(),
        };
        let found = k8s::discover(&query).map_err(|e| hosts::HostsError::K8s(e.to_string()))?;
        let (list, port) = hosts::from_k8s(&found, selector, port_given.then_some(args.port))?;
        return Ok((list, port, Some(found)));
    }
    let list = match (&args.hosts_file, args.hosts.is_empty(), &args.hosts_dns) {
        (Some(file), _, _) => hosts::read(file),
        (None, _, Some(name)) => hosts::from_dns(name, args.port),
        (None, false, None) => Ok(args.hosts.clone()),
        (None, true, None) => Err(hosts::HostsError::None),
    }?;
    Ok((list, args.port, None))
}

fn main() -> ExitCode {
    let matches = Args::command().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    let port_given = matches.value_source("port") == Some(clap::parser::ValueSource::CommandLine);
    match &args.command {
        Some(Command::Experiment(experiment)) => {
            return netperf_ng::experiment::cli::run(experiment, std::env::args().collect())
        }
        Some(Command::Matrix(matrix)) => {
            return netperf_ng::matrix::cli::run(matrix, std::env::args().collect())
        }
        Some(Command::Post {
            log,
            intervals,
            out,
            title,
            annotation,
        }) => return post(log, *intervals, out, title, annotation),
        Some(Command::Report { json, out }) => return redraw(json, out),
        Some(Command::Results(results)) => return netperf_ng::resultsdb::cli::run(results),
        None => {}
    }
    let (hosts, port, discovery) = match load_generators(&args, port_given) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("netagg: {e}");
            return ExitCode::from(2);
        }
    };
    for line in discovery.iter().flat_map(hosts::k8s_lines) {
        eprintln!("netagg: {line}");
    }
    if !(0.1..=60.0).contains(&args.interval) {
        eprintln!("netagg: --interval must be between 0.1 and 60 seconds");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("netagg: cannot create {}: {e}", args.out.display());
        return ExitCode::from(2);
    }
    let store = match args.store.open() {
        Ok(store) => store,
        Err(code) => return code,
    };
    let cpus = netperf_ng::measure::cpu::num_cpus();
    let kind = plan::spec_of(args.kind);
    if args.loss_timeout.is_some() && !kind.recovers_loss {
        eprintln!(
            "netagg: --loss-timeout applies to --kind tps only ({} streams are {}, with no datagrams to lose)",
            kind.name, kind.test
        );
        return ExitCode::from(2);
    }
    let loss_timeout = kind
        .recovers_loss
        .then_some(args.loss_timeout.unwrap_or(DEFAULT_LOSS_TIMEOUT));
    if let Some(secs) =
        loss_timeout.filter(|&s| f64::from(s) > health::STALL_INTERVALS * args.interval)
    {
        eprintln!(
            "netagg: note: streams wait {secs} s after a loss, more than {} sampling intervals of {} s: a recovered loss may be reported as a stall",
            health::STALL_INTERVALS, args.interval
        );
    }
    let cfg = runner::RunConfig {
        hosts,
        port,
        kind,
        burst: args.burst.unwrap_or(kind.default_burst),
        max_streams: args.streams.or(args.max_streams).unwrap_or(2 * cpus),
        single_level: args.streams.is_some(),
        level_duration: Duration::from_secs(args.duration),
        sample_interval: Duration::from_secs_f64(args.interval),
        setup_concurrency: args.setup_concurrency as usize,
        loss_timeout: loss_timeout.unwrap_or(0),
    };
    // Each stream holds three descriptors: a thousand streams need more
    // than the usual soft limit.
    match rlimit::raise_open_files() {
        Ok(limit) => {
            if let Some(warning) = rlimit::too_low(&limit, cfg.max_streams) {
                eprintln!("netagg: {warning}");
            }
        }
        Err(e) => eprintln!("netagg: cannot read or raise the open-file limit: {e}"),
    }
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
    let level_count = match (args.kind, cfg.single_level) {
        (plan::Kind::Sync, _) => cfg.hosts.len(),
        (_, true) => 1,
        _ => plan::ramp(cfg.max_streams).len(),
    };
    let total = level_count as u64 * args.duration;
    let terminal = std::io::stderr().is_terminal();
    let planned = runner::planned_per_host(&cfg);
    // Failures are told as each level starts, the rest after the run.
    let mut told = std::collections::HashSet::new();
    let recording = runner::run(&cfg, |event| match event {
        runner::Progress::LevelStarted(level, failures) => {
            if terminal && (!failures.is_empty() || level.late > 0) {
                eprintln!();
            }
            for group in summary::group_failures(failures, &cfg.hosts, &planned, cfg.port) {
                eprintln!("netagg: {}", group.line(level.requested));
            }
            told.extend(failures.iter().map(|f| f.stream));
            if level.late > 0 {
                eprintln!(
                    "netagg: {} of {} streams had done no work when the level's window started",
                    level.late, level.streams
                );
            }
        }
        runner::Progress::Sample(sample, level) if terminal => {
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
        runner::Progress::Sample(..) => {}
    });
    if terminal {
        eprintln!();
    }
    let untold: Vec<_> = recording
        .failures
        .iter()
        .filter(|f| !told.contains(&f.stream))
        .cloned()
        .collect();
    for line in summary::failure_lines_of(&recording, &untold) {
        eprintln!("netagg: {line}");
    }
    let levels = summary::summarize(&recording, cpus, kind.units.starts_with("10^6bits"));
    // Streams that stalled or moved nothing are named where they cannot be
    // missed, besides the summary and the JSON.
    let healths: Vec<(u32, &health::LevelHealth)> =
        levels.iter().map(|l| (l.streams, &l.health)).collect();
    for line in health::warnings(&healths, health::work_name(kind.units)) {
        eprintln!("netagg: warning: {line}");
    }
    let mut text = summary::text(&recording, &levels, kind.units, args.intervals);
    if let Some(trials) = &search {
        text.push_str(&summary::burst_search_text(trials, cfg.burst, kind.units));
    }
    print!("{text}");
    let summary_json = summary::json(
        &recording,
        &levels,
        kind.name,
        kind.units,
        cfg.burst,
        search.as_deref(),
        loss_timeout,
    );
    let summary_json = match &discovery {
        Some(found) => summary::with_kubernetes(&summary_json, found),
        None => summary_json,
    };
    let drawing = report::Drawing {
        context: report::context(&cfg, &recording, std::env::args().collect()),
        summary_text: text.clone(),
        chart_text: charts::ChartText {
            title: if args.title.is_empty() {
                format!("netagg {}", kind.name)
            } else {
                args.title.clone()
            },
            annotation: args.annotation.clone(),
            units: kind.units.to_string(),
        },
        individual: args.individual,
    };
    let summary_json = drawing.add_to_json(&summary_json);
    let mut files = vec![
        (format!("netagg_{}.txt", kind.name), text.clone()),
        (
            format!("netagg_{}.csv", kind.name),
            summary::csv(&recording, &levels),
        ),
        (format!("netagg_{}.json", kind.name), summary_json.clone()),
    ];
    files.extend(drawing.files(kind.name, &recording, &levels));
    // The files runemomniaggdemo.sh would have left, for existing tools.
    if let Err(e) = compat::write(&recording, &args.out, kind.name, kind.units) {
        eprintln!("netagg: cannot write the netperf log files: {e}");
        return ExitCode::from(1);
    }
    for (name, body) in files {
        let path = args.out.join(name);
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("netagg: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    if let Some(store) = store {
        let run = netperf_ng::agg::store::stored_run(
            kind,
            &recording,
            &levels,
            &summary_json,
            std::env::args().collect(),
        );
        if let Err(code) = store.finish(&run) {
            return code;
        }
    }
    if recording.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
