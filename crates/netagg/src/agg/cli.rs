//! `netagg`'s ramp (no subcommand): its options, and the sequence from them
//! to a written and stored run — the load generators, the checks, the
//! burst search, the run with its progress on stderr, the summary and its
//! warnings, the files, the results database.

use super::burst::{self, BurstTrial};
use super::runner::{self, Progress, Recording, RunConfig};
use super::summary::LevelSummary;
use super::{charts, compat, health, hosts, plan, report, summary};
use crate::args::{DurationArgs, HostArgs, K8sArgs, OutArgs, StoreArgs};
use netperf_base::rlimit;
use netperf_k8s as k8s;
use netperf_results::cli::PendingNetaggStore;
use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// The most streams a ramp runs: as the flows of shared tests, each a
/// socket on each end.
pub const MAX_STREAMS: u32 = 100_000;
/// The most with a thread per stream (--separate-tests).
const MAX_SEPARATE_STREAMS: u32 = 4096;
use std::process::ExitCode;
use std::time::Duration;

// The ramp's options; the command's doc is the binary's.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("listed_hosts")
    .args(["hosts", "hosts_file"])
    .multiple(true)
    .conflicts_with_all(["k8s_selector", "hosts_k8s", "k8s_namespace", "kubeconfig"])))]
pub struct RampArgs {
    // The load generators (--host, --hosts-file).
    #[command(flatten)]
    pub hosts: HostArgs,
    /// every address of this DNS name is a load generator (all its A and
    /// AAAA records, e.g. a Kubernetes headless Service)
    #[arg(long, value_name = "NAME", conflicts_with_all = ["hosts_file", "hosts", "k8s_selector", "hosts_k8s", "k8s_namespace", "kubeconfig"])]
    pub hosts_dns: Option<String>,
    // The load generators' pods (--k8s-selector): their control port is
    // the container port named control (else 12865), the same on every pod.
    #[command(flatten)]
    pub k8s: K8sArgs,
    /// the test kind
    #[arg(long, value_enum, default_value = "tps")]
    pub kind: plan::Kind,
    #[command(flatten)]
    pub duration: DurationArgs,
    /// the last level's stream count (default: 2 x this system's CPUs)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_STREAMS)))]
    pub max_streams: Option<u32>,
    /// no ramp: one level with exactly this many streams
    #[arg(long, conflicts_with = "max_streams", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_STREAMS)))]
    pub streams: Option<u32>,
    /// one netperf test (and thread) per stream, as runemomniaggdemo.sh
    /// runs them; by default a level's streams to a load generator running
    /// our netserver are the flows of one test on a few threads
    #[arg(long)]
    pub separate_tests: bool,
    /// transactions in flight per stream (-b); for tps without it, the burst
    /// is searched as find_max_burst.sh does
    #[arg(long)]
    pub burst: Option<u32>,
    /// seconds a tps (UDP_RR) stream waits for a lost request or response
    /// before it counts a timeout and restarts its burst: netperf's -- -e,
    /// 1 by default as in runemomniaggdemo.sh; 0 turns recovery off, and a
    /// stream then stalls for the rest of the run once every request it has
    /// in flight is lost. Only tps streams have datagrams to lose
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(0..=3600))]
    pub loss_timeout: Option<u32>,
    /// seconds per trial of the burst search
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub search_seconds: u64,
    /// netserver control port on the load generators
    #[arg(long, default_value_t = 12865)]
    pub port: u16,
    /// stream set-ups (control connection, request, answer) in flight at
    /// once per load generator
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub setup_concurrency: u32,
    /// seconds between samples
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
    #[command(flatten)]
    pub out: OutArgs,
    /// title of the charts and the report
    #[arg(long, default_value = "")]
    pub title: String,
    /// a note drawn on the overall chart
    #[arg(long, default_value = "")]
    pub annotation: String,
    /// also draw every stream's rate (netagg_<kind>_streams.svg)
    #[arg(long)]
    pub individual: bool,
    /// also print every interval (level), as post_proc.py --intervals does
    #[arg(long)]
    pub intervals: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Seconds each level runs: --duration, else 10.
fn duration(args: &RampArgs) -> u32 {
    args.duration.duration.unwrap_or(10)
}

/// The database `--store` names, opened before any traffic; `Ok(None)`
/// without `--store`. `--tag` tags the stored run, and needs `--store`.
pub(crate) fn open_store(args: &StoreArgs) -> Result<Option<PendingNetaggStore>, ExitCode> {
    let refuse = |e: String| {
        eprintln!("netagg: --store: {e}");
        ExitCode::from(2)
    };
    let path = args.storing().and_then(|s| s.path()).map_err(refuse)?;
    match path {
        Some(path) => PendingNetaggStore::open(&path, args.tags.clone())
            .map(Some)
            .map_err(|e| refuse(e.to_string())),
        None if !args.tags.is_empty() => {
            eprintln!("netagg: --tag tags the stored run, and needs --store");
            Err(ExitCode::from(2))
        }
        None => Ok(None),
    }
}

/// runemomniaggdemo.sh's `-e 1` for its tps streams.
const DEFAULT_LOSS_TIMEOUT: u32 = 1;

/// A ramp checked and ready to run, and what its outputs need besides the
/// recording.
struct Ramp<'a> {
    args: &'a RampArgs,
    cfg: RunConfig,
    /// The output directory (--out, else a new one).
    out: PathBuf,
    /// What the Kubernetes API said, with --k8s-selector.
    discovery: Option<k8s::Discovery>,
    /// The streams' loss timeout, for kinds that recover loss.
    loss_timeout: Option<u32>,
    cpus: u32,
    /// The burst search's trials, when the burst was searched.
    search: Option<Vec<BurstTrial>>,
}

/// Run the ramp `args` ask for: `port_given` says whether --port was on
/// the command line (it then overrides the pods' port with --k8s-selector).
pub fn run(args: &RampArgs, port_given: bool, command_line: Vec<String>) -> ExitCode {
    let (mut ramp, store) = match Ramp::prepare(args, port_given) {
        Ok(ready) => ready,
        Err(code) => return code,
    };
    raise_open_files(ramp.cfg.max_streams, ramp.cfg.shared_tests);
    netperf_data::engine::signals::install();
    ramp.search_burst();
    let recording = ramp.run();
    let levels = ramp.summarize(&recording);
    let summary_json = match ramp.write(&recording, &levels, command_line.clone()) {
        Ok(json) => json,
        Err(code) => return code,
    };
    if let Some(store) = store {
        let run = super::store::stored_run(
            ramp.cfg.kind,
            &recording,
            &levels,
            &summary_json,
            command_line,
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

impl<'a> Ramp<'a> {
    /// Everything checked before any traffic, in order: the load
    /// generators, --interval, the output directory, the database, the
    /// loss timeout; a failure is told on stderr and gives its exit status.
    fn prepare(
        args: &'a RampArgs,
        port_given: bool,
    ) -> Result<(Self, Option<PendingNetaggStore>), ExitCode> {
        let (hosts, port, discovery) = load_generators(args, port_given).map_err(|e| {
            eprintln!("netagg: {e}");
            ExitCode::from(2)
        })?;
        for line in discovery.iter().flat_map(hosts::k8s_lines) {
            eprintln!("netagg: {line}");
        }
        if !(0.1..=60.0).contains(&args.interval) {
            eprintln!("netagg: --interval must be between 0.1 and 60 seconds");
            return Err(ExitCode::from(2));
        }
        if !(2..=86400).contains(&duration(args)) {
            eprintln!("netagg: --duration must be between 2 and 86400 seconds");
            return Err(ExitCode::from(2));
        }
        let asked = args.streams.or(args.max_streams).unwrap_or(0);
        if args.separate_tests && asked > MAX_SEPARATE_STREAMS {
            eprintln!(
                "netagg: --separate-tests runs a thread per stream: at most {MAX_SEPARATE_STREAMS} streams (without it, streams to our netserver share a test and up to {MAX_STREAMS} run)"
            );
            return Err(ExitCode::from(2));
        }
        let out = args.out.dir_or_here();
        if let Err(e) = std::fs::create_dir_all(&out) {
            eprintln!("netagg: cannot create {}: {e}", out.display());
            return Err(ExitCode::from(2));
        }
        let store = open_store(&args.store)?;
        let cpus = netperf_data::measure::cpu::num_cpus();
        let kind = plan::spec_of(args.kind);
        let loss_timeout = loss_timeout(args, kind)?;
        let cfg = RunConfig {
            hosts,
            port,
            kind,
            burst: args.burst.unwrap_or(kind.default_burst),
            max_streams: args.streams.or(args.max_streams).unwrap_or(2 * cpus),
            single_level: args.streams.is_some(),
            level_duration: Duration::from_secs(duration(args).into()),
            sample_interval: Duration::from_secs_f64(args.interval),
            setup_concurrency: args.setup_concurrency as usize,
            loss_timeout: loss_timeout.unwrap_or(0),
            shared_tests: !args.separate_tests,
        };
        let ramp = Ramp {
            args,
            out,
            cfg,
            discovery,
            loss_timeout,
            cpus,
            search: None,
        };
        Ok((ramp, store))
    }

    /// For tps without --burst, find_max_burst.sh's search, its trials told
    /// on stderr; the best burst is the one the ramp runs.
    fn search_burst(&mut self) {
        if self.args.kind != plan::Kind::Tps || self.args.burst.is_some() {
            return;
        }
        let trial = Duration::from_secs(self.args.search_seconds);
        let (trials, best) = burst::search_burst(&self.cfg, trial);
        for t in &trials {
            eprintln!(
                "netagg: burst {:>5}: {:.1} {}",
                t.burst, t.rate, self.cfg.kind.units
            );
        }
        eprintln!("netagg: using burst {best}");
        self.cfg.burst = best;
        self.search = Some(trials);
    }

    /// Run the ramp, telling its progress on stderr: failures as each level
    /// starts, the rest after the run.
    fn run(&self) -> Recording {
        let mut teller = Teller::new(self.args, &self.cfg);
        let recording = runner::run(&self.cfg, |event| teller.tell(event));
        if teller.terminal {
            eprintln!();
        }
        for line in summary::failure_lines_of(&recording, &teller.untold(&recording)) {
            eprintln!("netagg: {line}");
        }
        recording
    }

    /// The levels' summaries; streams that stalled or moved nothing are
    /// named where they cannot be missed, besides the summary and the JSON.
    fn summarize(&self, recording: &Recording) -> Vec<LevelSummary> {
        let units = self.cfg.kind.units;
        let levels = summary::summarize(recording, self.cpus, units.starts_with("10^6bits"));
        let healths: Vec<(u32, &health::LevelHealth)> =
            levels.iter().map(|l| (l.streams, &l.health)).collect();
        for line in health::warnings(&healths, health::work_name(units)) {
            eprintln!("netagg: warning: {line}");
        }
        levels
    }

    /// Print the summary and write every file into --out: the summary
    /// (text, CSV, JSON), the charts and page, runemomniaggdemo.sh's
    /// files; gives the summary JSON, as stored.
    fn write(
        &self,
        recording: &Recording,
        levels: &[LevelSummary],
        command_line: Vec<String>,
    ) -> Result<String, ExitCode> {
        let kind = self.cfg.kind;
        let mut text = summary::text(recording, levels, kind.units, self.args.intervals);
        if let Some(trials) = &self.search {
            text.push_str(&summary::burst_search_text(
                trials,
                self.cfg.burst,
                kind.units,
            ));
        }
        print!("{text}");
        let drawing = self.drawing(recording, &text, command_line);
        let summary_json = drawing.add_to_json(&self.summary_json(recording, levels));
        let mut files = vec![
            (format!("netagg_{}.txt", kind.name), text),
            (
                format!("netagg_{}.csv", kind.name),
                summary::csv(recording, levels),
            ),
            (format!("netagg_{}.json", kind.name), summary_json.clone()),
        ];
        files.extend(drawing.files(kind.name, recording, levels));
        // The files runemomniaggdemo.sh would have left, for existing tools.
        if let Err(e) = compat::write(recording, &self.out, kind.name, kind.units) {
            eprintln!("netagg: cannot write the netperf log files: {e}");
            return Err(ExitCode::from(1));
        }
        if let Err(e) = netperf_base::saved::write_files(&self.out, &files) {
            eprintln!("netagg: cannot write {e}");
            return Err(ExitCode::from(1));
        }
        Ok(summary_json)
    }

    /// The summary as JSON, with what the Kubernetes API said.
    fn summary_json(&self, recording: &Recording, levels: &[LevelSummary]) -> String {
        let kind = self.cfg.kind;
        let json = summary::json(
            recording,
            levels,
            kind.name,
            kind.units,
            self.cfg.burst,
            self.search.as_deref(),
            self.loss_timeout,
        );
        match &self.discovery {
            Some(found) => summary::with_kubernetes(&json, found),
            None => json,
        }
    }

    /// How the charts and page are drawn: the run's context, the summary
    /// text, the titles (--title, else the kind's), --individual.
    fn drawing(
        &self,
        recording: &Recording,
        text: &str,
        command_line: Vec<String>,
    ) -> report::Drawing {
        report::Drawing {
            context: report::context(&self.cfg, recording, command_line),
            summary_text: text.to_string(),
            chart_text: charts::ChartText {
                title: if self.args.title.is_empty() {
                    format!("netagg {}", self.cfg.kind.name)
                } else {
                    self.args.title.clone()
                },
                annotation: self.args.annotation.clone(),
                units: self.cfg.kind.units.to_string(),
            },
            individual: self.args.individual,
        }
    }
}

/// The load generators from whichever source was given, the control port
/// (the pods' own with --k8s-selector) and, with --k8s-selector, what the API said.
fn load_generators(
    args: &RampArgs,
    port_given: bool,
) -> Result<(Vec<String>, u16, Option<k8s::Discovery>), hosts::HostsError> {
    if let Some(query) = args.k8s.query().map_err(hosts::HostsError::Usage)? {
        let found = k8s::discover(&query).map_err(|e| hosts::HostsError::K8s(e.to_string()))?;
        let given_port = port_given.then_some(args.port);
        let (list, port) = hosts::from_k8s(&found, &query.selector, given_port)?;
        return Ok((list, port, Some(found)));
    }
    let list = match &args.hosts_dns {
        Some(name) => hosts::from_dns(name, args.port)?,
        None => args.hosts.list()?,
    };
    if list.is_empty() {
        return Err(hosts::HostsError::None);
    }
    Ok((list, args.port, None))
}

/// The streams' loss timeout: --loss-timeout (else runemomniaggdemo.sh's)
/// for a kind that recovers loss, refused for the others; a note when it
/// is long enough for a recovered loss to look like a stall.
fn loss_timeout(args: &RampArgs, kind: &plan::KindSpec) -> Result<Option<u32>, ExitCode> {
    if args.loss_timeout.is_some() && !kind.recovers_loss {
        eprintln!(
            "netagg: --loss-timeout applies to --kind tps only ({} streams are {}, with no datagrams to lose)",
            kind.name, kind.test
        );
        return Err(ExitCode::from(2));
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
    Ok(loss_timeout)
}

/// A stream of its own holds three descriptors, a flow of a shared test
/// one: a thousand streams need more than the usual soft limit. Raised to
/// the hard limit, with a warning when even that is too low for `streams`.
pub(crate) fn raise_open_files(streams: u32, shared: bool) {
    let per_stream = match shared {
        true => rlimit::FILES_PER_FLOW,
        false => rlimit::FILES_PER_STREAM,
    };
    match rlimit::raise_open_files() {
        Ok(limit) => {
            if let Some(warning) = rlimit::too_low(&limit, streams, per_stream) {
                eprintln!("netagg: {warning}");
            }
        }
        Err(e) => eprintln!("netagg: cannot read or raise the open-file limit: {e}"),
    }
}

/// Tells the run's progress on stderr: each level's failures and late
/// streams as it starts and, on a terminal, a countdown line per sample.
struct Teller<'c> {
    cfg: &'c RunConfig,
    terminal: bool,
    /// Seconds the whole ramp runs.
    total: u64,
    planned: Vec<usize>,
    /// The streams whose failures were told.
    told: HashSet<usize>,
}

impl<'c> Teller<'c> {
    fn new(args: &RampArgs, cfg: &'c RunConfig) -> Self {
        let level_count = match (args.kind, cfg.single_level) {
            (plan::Kind::Sync, _) => cfg.hosts.len(),
            (_, true) => 1,
            _ => plan::ramp(cfg.max_streams).len(),
        };
        Teller {
            cfg,
            terminal: std::io::stderr().is_terminal(),
            total: level_count as u64 * u64::from(duration(args)),
            planned: runner::planned_per_host(cfg),
            told: HashSet::new(),
        }
    }

    fn tell(&mut self, event: Progress<'_>) {
        match event {
            Progress::LevelStarted(level, failures) => {
                if self.terminal && (!failures.is_empty() || level.late > 0) {
                    eprintln!();
                }
                let groups = summary::group_failures(
                    failures,
                    &self.cfg.hosts,
                    &self.planned,
                    self.cfg.port,
                );
                for group in groups {
                    eprintln!("netagg: {}", group.line(level.requested));
                }
                self.told.extend(failures.iter().map(|f| f.stream));
                if level.late > 0 {
                    eprintln!(
                        "netagg: {} of {} streams had done no work when the level's window started",
                        level.late, level.streams
                    );
                }
            }
            Progress::Sample(sample, level) if self.terminal => {
                let left = self.total.saturating_sub(sample.t as u64);
                eprint!(
                    "\r{:>5}s left  level {} ({} streams)  {:.1} {}   ",
                    left,
                    sample.level + 1,
                    level.streams,
                    sample.aggregate,
                    self.cfg.kind.units
                );
                let _ = std::io::stderr().flush();
            }
            Progress::Sample(..) => {}
        }
    }

    /// The run's failures not told as their level started.
    fn untold(&self, recording: &Recording) -> Vec<super::failures::StreamFailure> {
        recording
            .failures
            .iter()
            .filter(|f| !self.told.contains(&f.stream))
            .cloned()
            .collect()
    }
}
