//! The options netagg's ramp, `netagg experiment` and `netagg matrix` share,
//! as clap argument groups with one meaning each: storing (`--store[=DB]`,
//! `--no-store`, `--tag`), the output directory (`--out`), host selection
//! (`--host`, `--hosts-file`, read in `hosts_file`), Kubernetes selection
//! (`--k8s-selector`), duration and replicates; and the old spellings they
//! replace, accepted hidden with a one-line note.

pub mod hosts_file;

use netperf_k8s as k8s;
use std::path::{Path, PathBuf};

/// Says on stderr that `old` is an old spelling, once per use.
pub fn deprecated(old: &str, new: &str) {
    eprintln!("netagg: {old} is deprecated; use {new}");
}

/// Storing in the results database: nothing is stored unless `--store`
/// is given, the same in netagg, `netagg experiment`, `netagg matrix` and
/// `netperf -- --store`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// record the results in the results database: DB, else $NETPERF_NG_DB,
    /// else $XDG_DATA_HOME/netperf-ng/results.db, else
    /// ~/.local/share/netperf-ng/results.db (created if missing); without
    /// --store nothing is stored. See `netagg results --help`
    #[arg(long, value_name = "DB", num_args = 0..=1, require_equals = true)]
    pub store: Option<Option<PathBuf>>,
    /// do not store (the default; refused together with --store)
    #[arg(long, conflicts_with_all = ["store", "db"])]
    pub no_store: bool,
    /// tag the record (repeatable or a comma list)
    #[arg(long = "tag", value_name = "TAG", value_delimiter = ',',
          value_parser = |t: &str| netperf_client::cli::extensions::checked_tag(t))]
    pub tags: Vec<String>,
    /// old spelling of --store=PATH
    #[arg(long = "db", value_name = "PATH", hide = true)]
    pub db: Option<PathBuf>,
}

/// Where results go, as asked: nowhere, the default database, or this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storing {
    No,
    Default,
    At(PathBuf),
}

impl StoreArgs {
    /// Where results go; the old `--db PATH` told on stderr as it is
    /// taken. `--db` beside `--store=OTHER` is refused.
    pub fn storing(&self) -> Result<Storing, String> {
        if let Some(db) = &self.db {
            deprecated("--db", "--store=PATH");
            return match &self.store {
                Some(Some(other)) if other != db => {
                    Err("--db and --store=DB name two databases: give one".into())
                }
                _ => Ok(Storing::At(db.clone())),
            };
        }
        Ok(match &self.store {
            None => Storing::No,
            Some(None) => Storing::Default,
            Some(Some(path)) => Storing::At(path.clone()),
        })
    }

    /// Whether the command line said anything about storing (`--store`,
    /// `--no-store` or the old `--db`).
    pub fn said(&self) -> bool {
        self.store.is_some() || self.no_store || self.db.is_some()
    }
}

/// The one line for commands that used to store by default (experiment,
/// matrix), when nothing was said about storing and the old default would
/// have stored.
pub fn note_unstored(program: &str) {
    eprintln!(
        "netagg {program}: results are no longer stored unless --store is given (--no-store silences this note)"
    );
}

impl Storing {
    /// The database path, resolved (`--store` without a value: the
    /// default one); `None` when not storing.
    pub fn path(&self) -> Result<Option<PathBuf>, String> {
        let given: Option<&Path> = match self {
            Storing::No => return Ok(None),
            Storing::Default => None,
            Storing::At(p) => Some(p),
        };
        netperf_results::db::resolve(given)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

/// The output directory: `--out DIR` means the same everywhere. Without
/// it, the ramp writes into the working directory, as it always has: its
/// runemomniaggdemo.sh-style logs are read there by the seed's
/// post-processing, and scripts expect them there. An experiment or a
/// matrix, a tree of files per run, gets a new directory named after the
/// command and the UTC start time (`experiment-20261125T011236`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutArgs {
    /// directory for the outputs (default: the working directory for the
    /// ramp; a new <command>-<UTC time> for the other commands)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl OutArgs {
    /// `--out`, else the working directory.
    pub fn dir_or_here(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    /// `--out`, else `<program>-<UTC time>`.
    pub fn dir(&self, program: &str) -> PathBuf {
        self.out.clone().unwrap_or_else(|| default_out_dir(program))
    }
}

fn default_out_dir(program: &str) -> PathBuf {
    let now = netperf_base::timefmt::now_utc();
    let compact: String = now
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    PathBuf::from(format!("{program}-{compact}"))
}

/// Host selection: netservers named on the command line or in the seed's
/// remote_hosts file.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct HostArgs {
    /// a netserver's host (netperf -H): the ramp's load generators (repeatable),
    /// an experiment's one netserver, a mesh's endpoints; used when no
    /// --hosts-file is given
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
    /// the netservers' hosts from a remote_hosts file in the seed's format
    /// (REMOTE_HOSTS[i]=..., NUM_REMOTE_HOSTS=N)
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<String>,
}

impl HostArgs {
    /// The hosts: the file's when --hosts-file is given, else the --host
    /// list (empty when neither is given).
    pub fn list(&self) -> Result<Vec<String>, hosts_file::HostsError> {
        match &self.hosts_file {
            Some(file) => hosts_file::read(file),
            None => Ok(self.hosts.clone()),
        }
    }
}

/// Kubernetes selection: the ready pods a label selector picks, through
/// the API. `--hosts-k8s` is the old spelling of `--k8s-selector`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct K8sArgs {
    /// the netservers are the ready pods this label selector picks, found
    /// through the Kubernetes API ($KUBECONFIG or ~/.kube/config, else the
    /// in-cluster service account), with their nodes, zones and Services
    #[arg(long, value_name = "SELECTOR", conflicts_with = "hosts_k8s")]
    pub k8s_selector: Option<String>,
    /// old spelling of --k8s-selector
    #[arg(long, value_name = "SELECTOR", hide = true)]
    pub hosts_k8s: Option<String>,
    /// the namespace --k8s-selector looks in (default: the kubeconfig
    /// context's, or this pod's)
    #[arg(long, value_name = "NS")]
    pub k8s_namespace: Option<String>,
    /// the kubeconfig --k8s-selector uses, instead of $KUBECONFIG,
    /// ~/.kube/config or the in-cluster service account
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
}

impl K8sArgs {
    /// The selector, under either spelling (the old one told on stderr).
    pub fn selector(&self) -> Option<&str> {
        if let Some(old) = &self.hosts_k8s {
            deprecated("--hosts-k8s", "--k8s-selector");
            return Some(old);
        }
        self.k8s_selector.as_deref()
    }

    /// The API query, when a selector was given; `--k8s-namespace` or
    /// `--kubeconfig` without one is refused.
    pub fn query(&self) -> Result<Option<k8s::Query>, String> {
        let Some(selector) = self.selector() else {
            return match (&self.k8s_namespace, &self.kubeconfig) {
                (Some(_), _) => Err("--k8s-namespace needs --k8s-selector".into()),
                (_, Some(_)) => Err("--kubeconfig needs --k8s-selector".into()),
                _ => Ok(None),
            };
        };
        Ok(Some(k8s::Query {
            selector: selector.to_string(),
            namespace: self.k8s_namespace.clone(),
            kubeconfig: self.kubeconfig.clone(),
        }))
    }
}

/// How a plan's runs go (experiment and matrix): how long, how many, in
/// which order, how spaced, with which netperf.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunsArgs {
    #[command(flatten)]
    pub duration: DurationArgs,
    #[command(flatten)]
    pub replicates: ReplicatesArgs,
    /// seed of the run order (printed and recorded when not given)
    #[arg(long)]
    pub seed: Option<u64>,
    /// seconds to wait before each run
    #[arg(long, value_name = "SECS")]
    pub settle: Option<f64>,
    /// the netperf program (default: the one beside netagg, else PATH)
    #[arg(long, value_name = "PATH")]
    pub netperf: Option<PathBuf>,
}

/// How long each measurement runs.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DurationArgs {
    /// seconds each run measures (netperf -l; a ramp's every level);
    /// default 10
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u32>,
}

/// How often each cell runs.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReplicatesArgs {
    /// runs per cell (scenario and test); the tables show their statistics
    /// (default: experiment 5, matrix 3)
    #[arg(long, value_name = "N")]
    pub replicates: Option<u32>,
}
