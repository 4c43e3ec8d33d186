//! `netagg experiment`: the options, and the sequence from a plan to a
//! written and stored experiment (validate everything, check the offload
//! ends and the database before the first run, run, restore, write, store).

use super::offloads::OffloadSwitch;
use super::plan::{parse_factor_arg, read_plan_file, Plan, PlanFile};
use super::runner::{run_experiment, NoOffloads, RunSettings};
use super::{args, environment, order};
use super::{text_report, write_analysed, Analysis};
use crate::args::{HostArgs, OutArgs, RunsArgs, StoreArgs, Storing};
use netperf_results::model::{cell_label, ExperimentRecord};
use netperf_results::{self as resultsdb, Db};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status when some runs failed (their results are still written).
const EXIT_RUNS_FAILED: u8 = 1;
/// Exit status for a bad plan, option, interface, inventory or database, or
/// a matrix with no scenario.
const EXIT_ERROR: u8 = 2;

/// Run an experiment: every cell of the factors' levels, repeated, in a
/// seeded random order, as netperf omni tests; statistics, tables, charts
/// and the results database.
#[derive(clap::Args, Debug, Default)]
#[command(after_help = super::factors::factor_help())]
pub struct ExperimentArgs {
    /// the plan (TOML); options below override its keys
    #[arg(value_name = "PLAN.toml")]
    pub plan: Option<PathBuf>,
    /// a factor and its levels, e.g. message_size=1024,8192 (repeatable;
    /// replaces the plan's levels of that factor)
    #[arg(long = "factor", value_name = "NAME=L1,L2")]
    pub factors: Vec<String>,
    // The netserver (netperf -H): one --host, or a remote_hosts file
    // naming one.
    #[command(flatten)]
    pub hosts: HostArgs,
    /// the netserver's control port (netperf -p)
    #[arg(long)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub runs: RunsArgs,
    /// local interface whose offloads the plan switches
    #[arg(long)]
    pub interface: Option<String>,
    /// the netserver's interface whose offloads the plan switches
    #[arg(long)]
    pub remote_interface: Option<String>,
    /// where offload factors apply: both, local or remote
    #[arg(long, value_name = "ENDS")]
    pub offload_ends: Option<String>,
    /// what the offloads factor switches, e.g. tso,gso,gro
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub offload_set: Option<Vec<String>>,
    /// title of the tables and the report
    #[arg(long)]
    pub title: Option<String>,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// deprecated spelling of `netagg report experiment.json --out DIR`
    #[arg(long, value_name = "experiment.json", hide = true,
          conflicts_with_all = ["plan", "factors", "dry_run", "store", "no_store", "tags", "db"])]
    pub render: Option<PathBuf>,
    /// print the run order and the netperf command lines; run nothing
    #[arg(long)]
    pub dry_run: bool,
}

impl ExperimentArgs {
    /// The plan file with the command line's keys laid over it.
    fn plan_file(&self) -> Result<PlanFile, String> {
        let mut file = match &self.plan {
            Some(path) => read_plan_file(path)?,
            None => PlanFile::default(),
        };
        set(&mut file.host, &self.host()?);
        set(&mut file.port, &self.port);
        set_runs(&mut file, &self.runs);
        set(&mut file.interface, &self.interface);
        set(&mut file.remote_interface, &self.remote_interface);
        set(&mut file.offload_ends, &self.offload_ends);
        set(&mut file.offload_set, &self.offload_set);
        set(&mut file.title, &self.title);
        if !self.store.tags.is_empty() {
            file.tags
                .get_or_insert_with(Vec::new)
                .extend(self.store.tags.iter().cloned());
        }
        Ok(file)
    }

    /// The one netserver --host or --hosts-file names, if any.
    fn host(&self) -> Result<Option<String>, String> {
        let mut hosts = self.hosts.list().map_err(|e| e.to_string())?;
        match hosts.len() {
            0 | 1 => Ok(hosts.pop()),
            n => Err(format!(
                "an experiment runs against one netserver, and {n} hosts were given; compare several with a target factor (--factor target=HOST1,HOST2)"
            )),
        }
    }

    fn plan(&self) -> Result<Plan, String> {
        let extra = self
            .factors
            .iter()
            .map(|f| parse_factor_arg(f))
            .collect::<Result<Vec<_>, _>>()?;
        let plan = self.plan_file()?.validate(&extra)?;
        if plan.factors.is_empty() {
            return Err(format!(
                "the plan has no factors: give a plan file with a [factors] table or --factor NAME=L1,L2 (factors: {})",
                super::factors::factor_names()
            ));
        }
        Ok(plan)
    }
}

/// The netperf to run: the plan's, else the one beside this program, else PATH's.
fn netperf_program(plan: &Plan) -> Result<PathBuf, String> {
    if let Some(p) = &plan.netperf {
        return executable(p)
            .then(|| p.clone())
            .ok_or_else(|| format!("netperf program {} is not an executable file", p.display()));
    }
    let beside = std::env::current_exe()
        .ok()
        .map(|e| e.with_file_name("netperf"));
    if let Some(p) = beside.filter(|p| executable(p)) {
        return Ok(p);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("netperf"))
        .find(|p| executable(p))
        .ok_or_else(|| {
            "no netperf program beside netagg or on PATH; name one with --netperf".to_string()
        })
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// --duration, --replicates, --seed, --settle and --netperf, when given,
/// replace the plan file's keys (experiment and matrix).
pub fn set_runs(file: &mut PlanFile, runs: &RunsArgs) {
    set(&mut file.duration, &runs.duration.duration);
    set(&mut file.replicates, &runs.replicates.replicates);
    set(&mut file.seed, &runs.seed);
    set(&mut file.settle, &runs.settle);
    if let Some(p) = &runs.netperf {
        file.netperf = Some(p.display().to_string());
    }
}

/// A command-line value, when given, replaces the plan file's.
fn set<T: Clone>(slot: &mut Option<T>, value: &Option<T>) {
    if value.is_some() {
        slot.clone_from(value);
    }
}

/// `netagg experiment ...` from start to finish.
pub fn run(args: &ExperimentArgs, command_line: Vec<String>) -> ExitCode {
    exit_code("experiment", run_inner(args, command_line))
}

/// The exit status of `netagg <program>` (experiment, matrix): the run's
/// own, or its error on stderr and EXIT_ERROR.
pub fn exit_code(program: &str, result: Result<ExitCode, String>) -> ExitCode {
    result.unwrap_or_else(|e| {
        eprintln!("netagg {program}: {e}");
        ExitCode::from(EXIT_ERROR)
    })
}

fn run_inner(args: &ExperimentArgs, command_line: Vec<String>) -> Result<ExitCode, String> {
    let plan = args.plan()?;
    let outputs = Outputs {
        program: "experiment",
        out: args.out.dir("experiment"),
        storing: args.store.storing()?,
        // Experiments stored by default before the one vocabulary.
        note_unstored: !args.store.said(),
        dry_run: args.dry_run,
    };
    run_plan(&plan, &outputs, command_line)
}

/// Where a run of a plan writes: the outputs' directory and the database.
pub struct Outputs {
    /// The subcommand, for messages.
    pub program: &'static str,
    pub out: PathBuf,
    pub storing: Storing,
    /// Say that the results are not stored, where they used to be.
    pub note_unstored: bool,
    /// Print the order and command lines; run nothing.
    pub dry_run: bool,
}

/// Runs a validated plan from start to finish: everything that can refuse
/// is asked before the first run, then the runs, the restore, the outputs
/// and the database. Shared by `netagg experiment` and `netagg matrix`.
pub fn run_plan(
    plan: &Plan,
    outputs: &Outputs,
    command_line: Vec<String>,
) -> Result<ExitCode, String> {
    let program = outputs.program;
    let seed = plan.seed.unwrap_or_else(order::new_seed);
    let cells = plan.cells();
    if outputs.dry_run {
        print_dry_run(plan, seed);
        return Ok(ExitCode::SUCCESS);
    }
    let netperf = netperf_program(plan)?;
    let out_dir = outputs.out.clone();
    check_out_dir(&out_dir)?;
    let (db, db_path) = open_database(&outputs.storing)?;
    // A plan with targets goes to several netservers: no single remote
    // to switch or read offloads on, and none to switch locally.
    let mut switch = match plan.targets.is_empty() {
        true => Some(OffloadSwitch::open(plan)?),
        false => None,
    };
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let stop = super::interrupt::install();
    eprintln!(
        "netagg {program}: {} cells x {} replicates = {} runs of {} s against {}, seed {seed}",
        cells.len(),
        plan.replicates,
        cells.len() * plan.replicates as usize,
        plan.duration,
        destination_text(plan)
    );
    if let Some(switch) = switch.as_ref().filter(|_| plan.changes_offloads()) {
        // Said before anything changes, so that after a SIGKILL (which
        // nothing can catch) the original state is on the terminal.
        for (end, snapshot) in [
            ("local", &switch.local_start),
            ("remote", &switch.remote_start),
        ] {
            if let Some(s) = snapshot {
                eprintln!(
                    "netagg {program}: {end} offloads before: {} {}",
                    s.interface,
                    s.features_text(" ")
                );
            }
        }
    }
    let settings = RunSettings {
        netperf,
        seed,
        command_line,
        stop,
    };
    let mut record = match switch.as_mut() {
        Some(switch) => run_experiment(plan, &settings, switch, &mut std::io::stderr()),
        None => run_experiment(plan, &settings, &mut NoOffloads, &mut std::io::stderr()),
    };
    let restored = switch.as_mut().map_or(Ok(()), |s| s.restore());
    let (local_start, remote_start) = switch.as_ref().map_or((None, None), |s| {
        (s.local_start.as_ref(), s.remote_start.as_ref())
    });
    record.environment = environment::collect(&record.runs, local_start, remote_start);
    if !plan.targets.is_empty() {
        // The first run's far end is one target among several.
        record.environment.remote.clear();
    }
    drop(switch);
    write_outputs(&record, &out_dir)?;
    eprintln!("netagg {program}: outputs in {}", out_dir.display());
    if let Err(e) = restored {
        return Err(format!("the offloads could not all be put back: {e}"));
    }
    if outputs.note_unstored {
        crate::args::note_unstored(program);
    }
    if let (Some(db), Some(path)) = (&db, &db_path) {
        resultsdb::store_experiment(db, &record).map_err(|e| e.to_string())?;
        eprintln!(
            "netagg {program}: stored as {} in {}",
            record.id,
            path.display()
        );
    }
    let failed = record.runs.iter().filter(|r| !r.status.is_ok()).count();
    Ok(if record.status == "interrupted" {
        ExitCode::from(super::interrupt::exit_status())
    } else if failed > 0 {
        ExitCode::from(EXIT_RUNS_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The database `--store` asks for, opened before the first run, and its
/// path; neither without `--store`.
fn open_database(storing: &Storing) -> Result<(Option<Db>, Option<PathBuf>), String> {
    let path = storing.path()?;
    let db = path
        .as_deref()
        .map(Db::open)
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok((db, path))
}

/// The netserver(s) of a plan, for the opening line.
fn destination_text(plan: &Plan) -> String {
    let available = plan
        .targets
        .iter()
        .filter(|t| t.unavailable.is_none())
        .count();
    match available {
        0 => plan.host.clone(),
        n => format!("{n} targets"),
    }
}

/// Prints the tables and writes every output file.
fn write_outputs(record: &ExperimentRecord, dir: &Path) -> Result<(), String> {
    let analysis = Analysis::of(record);
    print!("{}", text_report(record, &analysis));
    write_analysed(record, &analysis, dir)
        .map(drop)
        .map_err(|e| format!("cannot write the outputs in {}: {e}", dir.display()))
}

/// An output directory that would not overwrite another experiment.
fn check_out_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--out {} is not a directory", dir.display()));
    }
    if dir.join("experiment.json").exists() {
        return Err(format!(
            "--out {} already holds an experiment (experiment.json): choose another directory",
            dir.display()
        ));
    }
    Ok(())
}

fn print_dry_run(plan: &Plan, seed: u64) {
    let cells = plan.cells();
    let order = order::run_order(cells.len(), plan.replicates, seed);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "# seed {seed}: {} runs", order.len());
    for (i, (cell, replicate)) in order.iter().enumerate() {
        let cmd = args::netperf_args(plan, &cells[*cell], "UUID");
        let _ = writeln!(
            out,
            "{:>4} {} #{replicate}: netperf {}",
            i + 1,
            cell_label(&cells[*cell]),
            cmd.join(" ")
        );
    }
}
