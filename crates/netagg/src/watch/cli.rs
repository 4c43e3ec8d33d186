//! `netagg watch`: the options, the plan they make (a plan file or the
//! simple form), everything checked before the first run (exit 2, nothing
//! run), the plan and the schedule printed, then the loop.

use super::plan::{self, Job, PlanFile, Simple, Span};
use super::schedule::{self, Settings};
use super::spool::Keeper;
use super::state::{Shared, Status};
use crate::args::{DurationArgs, HostArgs, K8sArgs, StoreArgs, Storing};
use netperf_results::Db;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status for bad options, a bad plan or a database that cannot be
/// opened: nothing was run.
const EXIT_ERROR: u8 = 2;

const DEFAULT_TESTS: &str = "TCP_STREAM,TCP_RR";
const DEFAULT_DURATION: u32 = 10;
const DEFAULT_EVERY: &str = "15m";
/// Three months of history: a season's change points with their context.
const DEFAULT_KEEP: &str = "90d";
/// A week of full records to draw and compare; older ones keep what the
/// change points read (metrics, facts, offloads, environment).
const DEFAULT_COMPACT: &str = "7d";
const DEFAULT_NAME: &str = "watch";

/// Measure a plan on a schedule until stopped: every run stored in the
/// results database with its context (always: `--store=DB` chooses the
/// file, else the default database), an absence stored with its reason,
/// the change points of the watch's series searched after each run, old
/// results deleted (--keep) or compacted (--compact-after); with --listen,
/// /metrics, a live page and a JSON API
#[derive(clap::Args, Debug, Default)]
#[command(mut_arg("store", |a| a.help(
    "the results database: DB, else $NETPERF_NG_DB, else $XDG_DATA_HOME/netperf-ng/results.db, else ~/.local/share/netperf-ng/results.db; a watch always stores, with or without --store"
)))]
#[command(mut_arg("no_store", |a| a.hide(true)))]
#[command(after_help = "Examples:\n  \
netagg watch --host lg1 --tests TCP_STREAM,TCP_RR --duration 10 --every 15m --store=watch.db\n  \
netagg watch plan.toml --listen 127.0.0.1:9464\n\n\
A plan file has a [schedule] table (every, keep, compact_after, name, runs) and one or more\n\
[[run]] entries, each netagg = [\"experiment\", \"p.toml\", \"--host\", \"x\"] (or mesh, matrix,\n\
responsiveness, a ramp's options) or netperf = [\"-H\", \"x\", \"-t\", \"TCP_RR\"], with an optional\n\
timeout. SIGTERM or SIGINT cut the current run, store what it measured (marked interrupted) and\n\
exit 0. See docs/watch.md.")]
pub struct WatchArgs {
    /// the plan (TOML): [schedule] and [[run]] entries; without it the
    /// options below make one run, an experiment over --tests
    #[arg(value_name = "PLAN.toml")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub hosts: HostArgs,
    #[command(flatten)]
    pub k8s: K8sArgs,
    /// the netservers' control port (netperf -p)
    #[arg(long)]
    pub port: Option<u16>,
    /// the netperf tests each run measures (default TCP_STREAM,TCP_RR)
    #[arg(long, value_name = "T1,T2", value_delimiter = ',')]
    pub tests: Vec<String>,
    #[command(flatten)]
    pub duration: DurationArgs,
    /// time between run starts: seconds, or with a unit (30s, 15m, 1h, 1d);
    /// default 15m
    #[arg(long, value_name = "DUR")]
    pub every: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// the watch's name: every result is tagged watch=NAME (default watch)
    #[arg(long)]
    pub name: Option<String>,
    /// serve /metrics, a live page and a JSON API on ADDR (host:port)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// delete this watch's results older than DUR (default 90d)
    #[arg(long, value_name = "DUR")]
    pub keep: Option<String>,
    /// compact this watch's results older than DUR to what the change
    /// points read (default 7d)
    #[arg(long, value_name = "DUR")]
    pub compact_after: Option<String>,
    /// stop after N rounds of the plan (default: until stopped)
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    /// where runs wait to be stored (default: beside the database,
    /// watch-NAME.spool)
    #[arg(long, value_name = "DIR")]
    pub spool: Option<PathBuf>,
}

/// `netagg watch ...` until stopped.
pub fn run(args: &WatchArgs) -> ExitCode {
    match prepare(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netagg watch: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// A command-line span, else the plan's, else the default.
fn span(given: &Option<String>, planned: &Option<Span>, default: &str) -> Span {
    match (given, planned) {
        (Some(text), _) => Span::Text(text.clone()),
        (None, Some(span)) => span.clone(),
        (None, None) => Span::Text(default.to_string()),
    }
}

/// The jobs: the plan file's entries, or the simple form's one.
fn jobs(args: &WatchArgs, file: Option<&PlanFile>) -> Result<Vec<Job>, String> {
    let simple_given = !args.hosts.hosts.is_empty()
        || args.hosts.hosts_file.is_some()
        || args.k8s.selector().is_some()
        || args.port.is_some()
        || !args.tests.is_empty()
        || args.duration.duration.is_some();
    if let Some(file) = file {
        if simple_given {
            return Err("a plan file's [[run]] entries say what runs: --host, --hosts-file, --k8s-selector, --port, --tests and --duration are for the simple form without one".into());
        }
        return file
            .run
            .iter()
            .enumerate()
            .map(|(i, r)| Job::of_entry(r, i))
            .collect();
    }
    let hosts = args.hosts.list().map_err(|e| e.to_string())?;
    let k8s = args.k8s.query()?;
    if hosts.is_empty() && k8s.is_none() {
        return Err(
            "nothing to watch: give a plan file, or --host, --hosts-file or --k8s-selector".into(),
        );
    }
    let tests: Vec<String> = match args.tests.is_empty() {
        true => DEFAULT_TESTS.split(',').map(String::from).collect(),
        false => args.tests.iter().map(|t| t.trim().to_string()).collect(),
    };
    for test in &tests {
        crate::experiment::factors::check_level("test", test)
            .map_err(|e| format!("--tests {test}: {e}"))?;
    }
    let duration = args.duration.duration.unwrap_or(DEFAULT_DURATION);
    if duration == 0 {
        return Err("--duration 0: give seconds of at least 1".into());
    }
    Ok(vec![Job::of_simple(Simple {
        hosts,
        k8s,
        port: args.port,
        tests,
        duration,
    })])
}

/// Everything checked, then the loop; an error means nothing ran.
fn prepare(args: &WatchArgs) -> Result<(), String> {
    let file = args.plan.as_deref().map(plan::read_plan).transpose()?;
    let schedule = file
        .as_ref()
        .map(|f| f.schedule.clone())
        .unwrap_or_default();
    let jobs = jobs(args, file.as_ref())?;
    let spans = [
        span(&args.every, &schedule.every, DEFAULT_EVERY),
        span(&args.keep, &schedule.keep, DEFAULT_KEEP),
        span(
            &args.compact_after,
            &schedule.compact_after,
            DEFAULT_COMPACT,
        ),
    ];
    let every = spans[0].seconds("--every")?;
    let keep = spans[1].seconds("--keep")?;
    let compact = spans[2].seconds("--compact-after")?;
    let name = args
        .name
        .clone()
        .or(schedule.name)
        .unwrap_or_else(|| DEFAULT_NAME.to_string());
    // It names the spool directory too: no path separators, no spaces.
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with('.');
    if !name_ok {
        return Err(format!(
            "--name {name:?}: up to 64 letters, digits, '.', '_' or '-', not starting with '.'"
        ));
    }
    let tag = netperf_client::cli::extensions::checked_tag(&format!("watch={name}"))?;
    for job in &jobs {
        let program = super::child::program(job.program.name())?;
        if !program.is_file() {
            return Err(format!(
                "{} is missing: a watch runs the {} beside it",
                program.display(),
                job.program.name()
            ));
        }
    }
    let rounds = args.runs.or(schedule.runs);
    if rounds == Some(0) {
        return Err("--runs 0: give at least 1, or leave it out to run until stopped".into());
    }
    if args.store.no_store {
        return Err("--no-store: a watch stores every run (--store=DB chooses the file)".into());
    }
    let db_path = match args.store.storing()? {
        Storing::No | Storing::Default => Storing::Default.path()?,
        at => at.path()?,
    }
    .ok_or("no database")?;
    let db = Db::open(&db_path).map_err(|e| e.to_string())?;
    let spool = args.spool.clone().unwrap_or_else(|| {
        db_path
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join(format!("watch-{name}.spool"))
    });
    let settings = Settings {
        name,
        every: std::time::Duration::from_secs(every),
        rounds,
        keep_seconds: keep,
        compact_seconds: compact,
        jobs,
    };
    let labels: Vec<String> = settings.jobs.iter().map(Job::label).collect();
    let shared = Shared::new(Status::new(
        &settings.name,
        db_path.clone(),
        every as f64,
        labels.clone(),
    ));
    let mut tags = vec![tag];
    for t in &args.store.tags {
        if !tags.contains(t) {
            tags.push(t.clone());
        }
    }
    let keeper = Keeper::open(db, &spool, tags, shared.clone())?;
    let server = match &args.listen {
        Some(addr) => Some(super::serve::start(addr, shared.clone())?),
        None => None,
    };
    let stop = crate::experiment::interrupt::install();
    say!(
        "netagg watch {}: every {}, {}, keep {}, compact after {}",
        settings.name,
        spans[0].text(),
        rounds.map_or("until stopped".into(), |n| format!("{n} round(s)")),
        spans[1].text(),
        spans[2].text()
    );
    say!("  database {}", db_path.display());
    say!("  spool {}", spool.display());
    if let Some(server) = &server {
        say!("  serving http://{}/", server.local_addr());
    }
    for (i, label) in labels.iter().enumerate() {
        say!("  [[run]] {}: {label}", i + 1);
    }
    // The server (when listening) serves until the loop ends.
    schedule::watch(&settings, keeper, shared, stop);
    Ok(())
}
