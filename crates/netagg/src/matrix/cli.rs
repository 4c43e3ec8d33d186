//! `netagg matrix`: the options, the inventory (Kubernetes API, an
//! inventory file, or scenarios named by hand), the scenarios chosen from
//! it, and the experiment they become — factors `target` (the scenarios)
//! and `test` — run, reported and stored by the experiment runner.

use super::inventory::{read_inventory, Inventory};
use super::placement::{choose, scenario_labels};
use crate::args::{K8sArgs, OutArgs, RunsArgs, StoreArgs, Storing};
use crate::experiment::cli::{exit_code, run_plan, set_runs, Outputs};
use crate::experiment::plan::PlanFile;
use crate::experiment::targets::{split_address, target_toml};
use netperf_results::model::Target;
use std::path::PathBuf;
use std::process::ExitCode;

/// The tests every scenario runs unless --tests says otherwise: bulk
/// throughput, latency with percentiles, UDP request/response, and a short
/// four-stream aggregate (its percentiles from the merged histograms).
const DEFAULT_TESTS: &str = "TCP_STREAM,TCP_RR,UDP_RR,TCP_RR*4";

/// Run the scenario matrix: the same tests from here to a netserver on
/// this node, another node in the zone, another zone; over the pod
/// network, the host network and a Service; one table, JSON/CSV, an HTML
/// report, and the results database.
#[derive(clap::Args, Debug, Default)]
#[command(after_help = after_help())]
pub struct MatrixArgs {
    #[command(flatten)]
    pub k8s: K8sArgs,
    /// the netservers and this host's place from a TOML file ([me] node and
    /// zone; [[endpoint]] name, address, port, node, zone, network =
    /// pod|host|service|service-local)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["k8s_selector", "hosts_k8s"])]
    pub inventory: Option<PathBuf>,
    /// a scenario of your own, LABEL=HOST[:PORT] (repeatable; added after
    /// the placement scenarios)
    #[arg(long = "scenario", value_name = "LABEL=HOST[:PORT]")]
    pub scenarios: Vec<String>,
    /// the tests each scenario runs; NAME*N runs N streams at once
    #[arg(long, value_name = "LIST", default_value = DEFAULT_TESTS)]
    pub tests: String,
    #[command(flatten)]
    pub runs: RunsArgs,
    /// also measure CPU on both ends (-c -C)
    #[arg(long)]
    pub cpu: bool,
    /// extra global netperf options for every run, e.g. --netperf-arg=-4
    /// (repeatable)
    #[arg(long = "netperf-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub netperf_args: Vec<String>,
    /// title of the table and the report
    #[arg(long)]
    pub title: Option<String>,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// print the scenarios, the run order and the netperf command lines;
    /// run nothing
    #[arg(long)]
    pub dry_run: bool,
}

fn after_help() -> String {
    format!(
        "Scenarios chosen by placement (rows that cannot run here say why):\n  {}\n",
        scenario_labels().join("\n  ")
    )
}

/// `netagg matrix ...` from start to finish.
pub fn run(args: &MatrixArgs, command_line: Vec<String>) -> ExitCode {
    exit_code("matrix", run_inner(args, command_line))
}

fn run_inner(args: &MatrixArgs, command_line: Vec<String>) -> Result<ExitCode, String> {
    let (inventory, source) = inventory(args)?;
    let mut targets = match &inventory {
        Some(inv) => choose(inv),
        None => Vec::new(),
    };
    targets.extend(own_scenarios(&args.scenarios)?);
    print_scenarios(&targets, &source);
    let available: Vec<String> = targets
        .iter()
        .filter(|t| t.unavailable.is_none())
        .map(|t| t.label.clone())
        .collect();
    if available.is_empty() {
        return Err(match targets.is_empty() {
            true => "no scenarios: give --k8s-selector, --inventory or --scenario".into(),
            false => "no scenario can run here (each says why above)".into(),
        });
    }
    let plan = plan_file(args, &inventory, &source, &targets, available)?.validate(&[])?;
    let storing = args.store.storing()?;
    let outputs = Outputs {
        program: "matrix",
        out: args.out.dir("matrix"),
        storing: if args.dry_run { Storing::No } else { storing },
        note_unstored: !args.store.said() && old_default_stored(),
        dry_run: args.dry_run,
    };
    run_plan(&plan, &outputs, command_line)
}

/// Where the scenarios come from, and a few words saying so.
fn inventory(args: &MatrixArgs) -> Result<(Option<Inventory>, String), String> {
    if let Some(path) = &args.inventory {
        let inv = read_inventory(path)?;
        return Ok((Some(inv), format!("inventory {}", path.display())));
    }
    if let Some(query) = args.k8s.query()? {
        let inv = super::kubernetes::inventory(
            &query.selector,
            query.namespace.as_deref(),
            query.kubeconfig.as_deref(),
        )?;
        return Ok((Some(inv), format!("Kubernetes pods {}", query.selector)));
    }
    Ok((None, "--scenario".into()))
}

/// `--scenario LABEL=HOST[:PORT]` as targets.
fn own_scenarios(given: &[String]) -> Result<Vec<Target>, String> {
    given
        .iter()
        .map(|text| {
            let (label, address) = text
                .split_once('=')
                .ok_or_else(|| format!("--scenario {text}: expected LABEL=HOST[:PORT]"))?;
            let label = crate::experiment::factors::check_level("target", label)
                .map_err(|e| format!("--scenario {text}: {e}"))?;
            let (host, port) =
                split_address(address, 12865).map_err(|e| format!("--scenario {text}: {e}"))?;
            Ok(Target::reachable(&label, host, port))
        })
        .collect()
}

fn print_scenarios(targets: &[Target], source: &str) {
    eprintln!("netagg matrix: scenarios from {source}:");
    for t in targets {
        match &t.unavailable {
            None => eprintln!("  {:<36} {} port {}  {}", t.label, t.host, t.port, t.about),
            Some(why) => eprintln!("  {:<36} not available: {why}", t.label),
        }
    }
}

/// The experiment the matrix is: scenarios x tests.
fn plan_file(
    args: &MatrixArgs,
    inventory: &Option<Inventory>,
    source: &str,
    targets: &[Target],
    available: Vec<String>,
) -> Result<PlanFile, String> {
    let mut labels: Vec<&str> = Vec::new();
    for t in targets {
        if labels.contains(&t.label.as_str()) {
            return Err(format!("scenario \"{}\" is named twice", t.label));
        }
        labels.push(&t.label);
    }
    let tests: Vec<toml::Value> = args
        .tests
        .split(',')
        .map(|t| toml::Value::String(t.trim().to_string()))
        .collect();
    let mut factors = toml::Table::new();
    factors.insert(
        "target".into(),
        toml::Value::Array(available.into_iter().map(toml::Value::String).collect()),
    );
    factors.insert("test".into(), toml::Value::Array(tests));
    let from = inventory
        .as_ref()
        .and_then(|inv| inv.me.node.as_ref().map(|n| (n, &inv.me.zone)))
        .map(|(node, zone)| match zone {
            Some(zone) => format!(" from node {node}, zone {zone}"),
            None => format!(" from node {node}"),
        })
        .unwrap_or_default();
    let mut tags = vec!["matrix".to_string()];
    tags.extend(args.store.tags.iter().cloned());
    let mut file = PlanFile {
        title: Some(
            args.title
                .clone()
                .unwrap_or_else(|| format!("scenario matrix{from} ({source})")),
        ),
        duration: Some(10),
        replicates: Some(3),
        cpu: Some(args.cpu),
        global_args: Some(args.netperf_args.clone()).filter(|a| !a.is_empty()),
        tags: Some(tags),
        factors: Some(factors),
        targets: Some(
            targets
                .iter()
                .map(|t| (t.label.clone(), target_toml(t)))
                .collect(),
        ),
        ..PlanFile::default()
    };
    set_runs(&mut file, &args.runs);
    Ok(file)
}

/// Whether the matrix stored by default before the one vocabulary: it
/// did when the default results database existed.
fn old_default_stored() -> bool {
    netperf_results::db::resolve(None).is_ok_and(|p| p.exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_scenarios_read_label_and_address() {
        let t =
            own_scenarios(&["direct=198.18.152.2:12866".into(), "vip=[2001:2::1]".into()]).unwrap();
        assert_eq!((t[0].label.as_str(), t[0].port), ("direct", 12866));
        assert_eq!((t[1].host.as_str(), t[1].port), ("2001:2::1", 12865));
        for bad in ["nolabel", "x=", "x=h:0"] {
            assert!(own_scenarios(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
