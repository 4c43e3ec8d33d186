//! netagg: synchronized aggregate network tests over many load generators.
//! Parses its options (clap) and calls the library; see `netagg::agg`.

use clap::{CommandFactory, FromArgMatches, Parser};
use netagg::agg::{cli, commands};
use std::process::ExitCode;

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
netagg --k8s-selector app.kubernetes.io/name=netserver --kind tps  # the ready pods of a label, via the API\n  \
netagg post netperf_tps.log --intervals                            # post_proc.py on real netperf runs"
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ramp: cli::RampArgs,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    Results(netperf_results::cli::ResultsArgs),
    /// Run an experiment: factors and levels (protocol, message size,
    /// offloads, ...) from a TOML plan or --factor, every cell repeated in
    /// a seeded random order as netperf omni tests, with statistics per
    /// cell, ratios between levels, tables, CSV/JSON and an HTML report
    Experiment(Box<netagg::experiment::cli::ExperimentArgs>),
    /// Run the scenario matrix: the same tests (TCP_STREAM, TCP_RR with
    /// percentiles, UDP_RR, a short aggregate) from here to a netserver on
    /// this node, another node in the zone and another zone, over the pod
    /// network, the host network and a Service; one table, CSV/JSON, an
    /// HTML report, the results database
    Matrix(Box<netagg::matrix::cli::MatrixArgs>),
    /// Latency under working load: an open-loop request/response probe
    /// at a fixed rate, idle, then beside bulk TCP flows loading the path
    /// upload, download and both; idle and loaded P50/P90/P99, the
    /// inflation beyond noise, the bulk throughput, the probe's losses;
    /// text, JSON, an HTML report, the results database
    Responsiveness(Box<netagg::responsiveness::cli::ResponsivenessArgs>),
    /// Every endpoint to every endpoint: TCP_STREAM throughput and TCP_RR
    /// latency (by default) measured from each endpoint's own netserver
    /// (the operator's opt-in, netserver --mesh-key) in rounds where no
    /// endpoint is in two tests; the node, path or zone link that stands
    /// out named first; text, CSV, JSON, heatmaps, the results database
    Mesh(Box<netagg::mesh::cli::MeshArgs>),
    Watch(Box<netagg::watch::cli::WatchArgs>),
    /// Draw a saved run's page and charts again from its JSON alone: a
    /// ramp's netagg_KIND.json, `netagg post`'s NAME_series.json, an
    /// experiment's or the matrix's experiment.json, `netagg
    /// responsiveness`'s responsiveness.json, `netagg mesh`'s mesh.json, or what `netperf --
    /// --report` saved beside its page; byte for byte what the run wrote,
    /// into --out
    Report(netagg::redraw::ReportArgs),
    /// Read netperf_<type>.log and its .out files from runemomniaggdemo.sh (real
    /// netperf runs) and print post_proc.py's summary; write the series (CSV,
    /// JSON), the chart and the report
    Post(commands::PostArgs),
}

fn main() -> ExitCode {
    let matches = Args::command().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    let command_line = std::env::args().collect();
    match &args.command {
        // The old spelling of `netagg report FILE --out DIR`.
        Some(Command::Experiment(experiment)) if experiment.render.is_some() => {
            netagg::args::deprecated("experiment --render FILE", "netagg report FILE --out DIR");
            netagg::redraw::run(&netagg::redraw::ReportArgs {
                json: experiment.render.clone().unwrap_or_default(),
                out: experiment.out.dir("experiment"),
            })
        }
        Some(Command::Experiment(experiment)) => {
            netagg::experiment::cli::run(experiment, command_line)
        }
        Some(Command::Matrix(matrix)) => netagg::matrix::cli::run(matrix, command_line),
        Some(Command::Responsiveness(args)) => netagg::responsiveness::cli::run(args, command_line),
        Some(Command::Mesh(args)) => netagg::mesh::cli::run(args, command_line),
        Some(Command::Post(post)) => commands::post(post, command_line),
        Some(Command::Report(report)) => netagg::redraw::run(report),
        Some(Command::Watch(args)) => netagg::watch::cli::run(args),
        Some(Command::Results(results)) => netperf_results::cli::run(results),
        None => {
            let port_given =
                matches.value_source("port") == Some(clap::parser::ValueSource::CommandLine);
            cli::run(&args.ramp, port_given, command_line)
        }
    }
}
