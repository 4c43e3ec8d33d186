//! `netagg mesh`'s options, checked into a plan before any traffic (the
//! endpoints as every netagg command finds them, the key, the tests, the
//! pairs and their rounds), and the sequence from it to a written and
//! stored mesh: the rounds and the time told first, the run, the text on
//! stdout, mesh.json/.txt/.csv/.html in `--out`, the results database.

use super::model::{self, Endpoint, Mesh, Outcome};
use super::remote::MeshKey;
use super::run::{self, Plan};
use super::schedule::{self, PairFilter};
use crate::agg::cli::open_store;
use crate::args::{DurationArgs, HostArgs, K8sArgs, OutArgs, StoreArgs};
use netperf_base::saved::write_files;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;

/// The tests unless --tests says otherwise.
const DEFAULT_TESTS: &str = "TCP_STREAM,TCP_RR";
/// Longest test.
const MAX_DURATION: u32 = 3600;
/// Most endpoints one mesh takes.
const MAX_ENDPOINTS: usize = 4096;
/// The longest test a netserver runs for a mesh unless its operator set
/// --mesh-max-duration: longer ones are told before the start.
const NETSERVER_MAX_DURATION: u32 = 60;
/// Exit status of options refused or a mesh that cannot start.
const EXIT_USAGE: u8 = 2;

/// Every endpoint to every endpoint: throughput and latency measured from
/// each endpoint's own netserver, in rounds where no endpoint is in two
/// tests, and the node, path or zone link that stands out named
#[derive(clap::Args, Debug, Default)]
#[command(after_help = "Examples:\n  \
netagg mesh --host A --host B --host C --mesh-key mesh.key --duration 3 --out mesh/\n  \
netagg mesh --k8s-selector app=netserver --mesh-key /etc/mesh/key --pairs cross-zone --store\n  \
netagg mesh --inventory hosts.toml --mesh-key mesh.key --tests TCP_STREAM,UDP_RR --pairs node=n7\n\
Every endpoint runs netperf-ng's netserver with --mesh-key FILE --mesh-peers NET (see docs/mesh.md).")]
pub struct MeshArgs {
    // The endpoints (--host, --hosts-file).
    #[command(flatten)]
    pub hosts: HostArgs,
    /// every address of this DNS name is an endpoint (all its A and AAAA
    /// records, e.g. a Kubernetes headless Service)
    #[arg(long, value_name = "NAME")]
    pub hosts_dns: Option<String>,
    // The endpoints' pods (--k8s-selector), with their nodes and zones.
    #[command(flatten)]
    pub k8s: K8sArgs,
    /// the endpoints from a TOML inventory (as `netagg matrix --inventory`:
    /// [[endpoint]] name, address, port, node, zone, network = pod|host)
    #[arg(long, value_name = "FILE")]
    pub inventory: Option<PathBuf>,
    /// netserver control port on the endpoints (a --host HOST:PORT or a
    /// pod's own port wins)
    #[arg(long, default_value_t = 12865)]
    pub port: u16,
    /// the operator's shared key, the file every endpoint's netserver was
    /// started with (netserver --mesh-key FILE)
    #[arg(long, value_name = "FILE")]
    pub mesh_key: Option<PathBuf>,
    /// the tests every pair runs (TCP_STREAM, TCP_RR, UDP_RR)
    #[arg(long, value_name = "LIST", default_value = DEFAULT_TESTS)]
    pub tests: String,
    #[command(flatten)]
    pub duration: DurationArgs,
    /// which ordered pairs: all, same-zone, cross-zone, node=NAME (that
    /// endpoint to and from every other)
    #[arg(long, value_name = "WHICH", default_value = "all")]
    pub pairs: String,
    /// at most N tests at once (1: strictly one at a time); default: every
    /// pair of a round, no endpoint in two
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: Option<u32>,
    /// skip the confirmation round (by default every pair a path finding
    /// names is measured once more, and the finding kept only when that
    /// measurement stands out too)
    #[arg(long)]
    pub no_confirm: bool,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The tests of `list`: each a mesh test (as `netagg matrix --tests`
/// names them, one stream), each once.
pub fn tests(list: &str) -> Result<Vec<String>, String> {
    let known = model::tests();
    let mut out: Vec<String> = Vec::new();
    for given in list.split(',').map(str::trim) {
        let test = crate::experiment::factors::check_level("test", given)
            .map_err(|e| format!("--tests: {e}"))?;
        if test.contains('*') {
            return Err(format!(
                "--tests: {test}: a mesh test is one stream from one endpoint's netserver; drop the *N"
            ));
        }
        if !known.contains(&test.as_str()) {
            return Err(format!(
                "--tests: the mesh measures {}, not {test}",
                known.join(", ")
            ));
        }
        if out.contains(&test) {
            return Err(format!("--tests: {test} is named twice"));
        }
        out.push(test);
    }
    Ok(out)
}

/// An address as an IP: a literal, else the name's first address.
fn resolve(host: &str, port: u16) -> Result<IpAddr, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(ip);
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .map(|a| a.ip())
        .ok_or_else(|| format!("{host} has no address"))
}

fn endpoint(
    name: String,
    host: &str,
    port: u16,
    node: Option<String>,
    zone: Option<String>,
) -> Result<Endpoint, String> {
    Ok(Endpoint {
        address: resolve(host, port)?.to_string(),
        name,
        port,
        node,
        zone,
    })
}

/// The endpoints from the one source given.
fn endpoints(args: &MeshArgs) -> Result<Vec<Endpoint>, String> {
    let query = args.k8s.query()?;
    let listed = !args.hosts.hosts.is_empty() || args.hosts.hosts_file.is_some();
    let given = [
        query.is_some(),
        args.inventory.is_some(),
        args.hosts_dns.is_some(),
        listed,
    ];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err("give the endpoints one way: --host/--hosts-file, --hosts-dns, --k8s-selector or --inventory".into());
    }
    if let Some(query) = query {
        let found = netperf_k8s::discover(&query).map_err(|e| e.to_string())?;
        return found
            .pods
            .iter()
            .map(|p| {
                endpoint(
                    p.pod.clone(),
                    &p.address.to_string(),
                    p.port,
                    p.placement.node.clone(),
                    p.placement.zone.clone(),
                )
            })
            .collect();
    }
    if let Some(path) = &args.inventory {
        let inventory = crate::matrix::inventory::read_inventory(path)?;
        use crate::matrix::inventory::Network;
        let (nodes, services): (Vec<_>, Vec<_>) = inventory
            .endpoints
            .into_iter()
            .partition(|e| matches!(e.network, Network::Pod | Network::Host));
        for s in services {
            eprintln!(
                "netagg mesh: {} is a {}, not an endpoint on a node: left out",
                s.name,
                s.network.describe()
            );
        }
        return nodes
            .into_iter()
            .map(|e| endpoint(e.name, &e.address, e.port, e.node, e.zone))
            .collect();
    }
    let hosts = match &args.hosts_dns {
        Some(name) => crate::agg::hosts::from_dns(name, args.port).map_err(|e| e.to_string())?,
        None => args.hosts.list().map_err(|e| e.to_string())?,
    };
    hosts
        .into_iter()
        .map(|given| {
            let (host, port) = crate::experiment::targets::split_address(&given, args.port)?;
            endpoint(given, &host, port, None, None)
        })
        .collect()
}

/// Everything checked, before any traffic.
pub fn plan(args: &MeshArgs) -> Result<Plan, String> {
    let tests = tests(&args.tests)?;
    let duration = args.duration.duration.unwrap_or(10);
    if !(1..=MAX_DURATION).contains(&duration) {
        return Err(format!("--duration must be 1 to {MAX_DURATION} seconds"));
    }
    let filter: PairFilter = args.pairs.parse().map_err(|e| format!("--pairs {e}"))?;
    let Some(key_file) = &args.mesh_key else {
        return Err("give the operator's key: --mesh-key FILE (the file the endpoints' netservers were started with)".into());
    };
    let key = MeshKey::from_file(key_file)
        .map_err(|e| format!("--mesh-key {}: {e}", key_file.display()))?;
    let endpoints = endpoints(args)?;
    match endpoints.len() {
        0 => return Err("no endpoints: give --host (twice or more), --hosts-file, --hosts-dns, --k8s-selector or --inventory".into()),
        1 => return Err(format!("one endpoint ({}): a mesh needs two or more", endpoints[0].name)),
        n if n > MAX_ENDPOINTS => return Err(format!("{n} endpoints: at most {MAX_ENDPOINTS}")),
        _ => {}
    }
    let mut controls: Vec<SocketAddr> = Vec::new();
    for (k, e) in endpoints.iter().enumerate() {
        let control = SocketAddr::new(
            e.address
                .parse()
                .map_err(|_| format!("{}: not an address", e.address))?,
            e.port,
        );
        if let Some(twin) = controls.iter().position(|c| *c == control) {
            return Err(format!(
                "{} and {} are the same netserver ({control})",
                endpoints[twin].name, e.name
            ));
        }
        if endpoints[..k].iter().any(|o| o.name == e.name) {
            return Err(format!("endpoint {} is named twice", e.name));
        }
        controls.push(control);
    }
    let names: Vec<String> = endpoints.iter().map(|e| e.name.clone()).collect();
    let zones: Vec<Option<String>> = endpoints.iter().map(|e| e.zone.clone()).collect();
    let pairs = filter
        .pairs(&names, &zones)
        .map_err(|e| format!("--pairs {}: {e}", args.pairs))?;
    if pairs.is_empty() {
        return Err(format!(
            "--pairs {}: no pair of these endpoints is one",
            args.pairs
        ));
    }
    let concurrency = args.concurrency.map(|c| c as usize);
    Ok(Plan {
        rounds: schedule::rounds(endpoints.len(), &pairs, concurrency),
        endpoints,
        controls,
        tests,
        duration,
        pairs_asked: args.pairs.clone(),
        concurrency,
        key: std::sync::Arc::new(key),
        confirm: !args.no_confirm,
    })
}

/// "1 h 2 min", "3 min 20 s", "45 s".
fn span_text(seconds: f64) -> String {
    let s = seconds.ceil() as u64;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// `netagg mesh` from start to finish: 0 when the mesh ran (findings or
/// not), 2 when it could not start, 1 when no pair measured anything or
/// its files could not be written, 128 + the signal when interrupted.
pub fn run(args: &MeshArgs, command_line: Vec<String>) -> ExitCode {
    let say = |line: &str| eprintln!("netagg mesh: {line}");
    let plan = match plan(args) {
        Ok(plan) => plan,
        Err(e) => {
            say(&e);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let store = match open_store(&args.store) {
        Ok(store) => store,
        Err(code) => return code,
    };
    let out = args.out.dir("mesh");
    let pairs: usize = plan.rounds.iter().map(Vec::len).sum();
    say(&format!(
        "{} endpoints, {pairs} ordered pairs, {} rounds x {} tests of {} s: about {}",
        plan.endpoints.len(),
        plan.rounds.len(),
        plan.tests.len(),
        plan.duration,
        span_text(plan.expected_seconds())
    ));
    if plan.duration > NETSERVER_MAX_DURATION {
        say(&format!(
            "note: a netserver refuses mesh tests longer than its --mesh-max-duration ({NETSERVER_MAX_DURATION} s unless set)"
        ));
    }
    let stop = crate::experiment::interrupt::install();
    let mesh = run::run(plan, command_line.join(" "), stop, &mut |line| say(line));
    // Drawn from the JSON as written, so `netagg report` draws the same.
    let json = match serde_json::to_string_pretty(&mesh.to_json()) {
        Ok(json) => json + "\n",
        Err(e) => {
            say(&e.to_string());
            return ExitCode::from(1);
        }
    };
    let mesh = match serde_json::from_str(&json)
        .map_err(|e| e.to_string())
        .and_then(|doc| Mesh::from_json(&doc))
    {
        Ok(mesh) => mesh,
        Err(e) => {
            say(&format!("the mesh's own JSON does not read back: {e}"));
            return ExitCode::from(1);
        }
    };
    print!("{}", super::output::text(&mesh));
    let mut files = vec![("mesh.json".to_string(), json.clone())];
    match super::output::files(&mesh) {
        Ok(drawn) => files.extend(drawn),
        Err(e) => say(&e),
    }
    match write_files(&out, &files) {
        Ok(paths) => paths
            .iter()
            .for_each(|p| say(&format!("wrote {}", p.display()))),
        Err(e) => {
            say(&format!("cannot write {e}"));
            return ExitCode::from(1);
        }
    }
    if let Some(store) = store {
        match store.finish_result(super::output::result_of(&mesh, json, command_line)) {
            Ok(id) => say(&format!("stored as {id}")),
            Err(code) => return code,
        }
    }
    if mesh.interrupted {
        let missing = mesh
            .pairs
            .iter()
            .filter(|p| matches!(p.outcome, Outcome::Missing(_)))
            .count();
        say(&format!(
            "interrupted: {missing} pair tests missing (listed above), the finished ones kept"
        ));
        return ExitCode::from(crate::experiment::interrupt::exit_status());
    }
    if !mesh
        .pairs
        .iter()
        .any(|p| matches!(p.outcome, Outcome::Ok(_)))
    {
        say("no pair measured anything (each pair's reason is above)");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_are_mesh_tests_once_each() {
        assert_eq!(
            tests("tcp_stream, TCP_RR").unwrap(),
            ["TCP_STREAM", "TCP_RR"]
        );
        for (bad, why) in [
            ("TCP_RR*4", "drop the *N"),
            ("UDP_STREAM", "the mesh measures"),
            ("TCP_RR,TCP_RR", "twice"),
            ("PING", "is not one of"),
            ("", "is not one of"),
        ] {
            let e = tests(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn spans_read_as_people_say_them() {
        assert_eq!(span_text(45.0), "45 s");
        assert_eq!(span_text(200.2), "3 min 21 s");
        assert_eq!(span_text(3725.0), "1 h 2 min");
    }
}
