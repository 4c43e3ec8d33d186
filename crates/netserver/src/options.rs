//! netserver's command line (`netserver -h` lists it), parsed getopt-style.

use super::allow::AllowList;
use super::limits::{self, Limits};
use super::mesh::{self, MeshOptions};
use super::offload_scope::OffloadScope;
use netperf_data::net::port_range::PortRange;
use netperf_data::net::resolve::Family;

/// What netserver was asked to do.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// -p portnum. Default 12865.
    pub port: u16,
    /// -L name[,family]: listen address.
    pub listen_host: Option<String>,
    pub family: Family,
    /// -D: stay in the foreground (do not daemonize). -f implies it too.
    pub foreground: bool,
    /// -f: netperf's "do not spawn children": we always use one thread per
    /// control connection; -f only keeps us in the foreground.
    pub serial: bool,
    pub debug: i32,
    /// -N: never raise debugging at a client's request.
    pub suppress_debug: bool,
    /// -v level: 1 or more logs one line per test.
    pub verbosity: i32,
    pub verbosity_given: bool,
    /// -Z passphrase expected as the first message of each control connection.
    pub passphrase: Option<String>,
    /// The operator's bounds on requests and waits (`--max-*`, `--*-timeout`).
    pub limits: Limits,
    /// --allow networks (netperf-ng): the only clients served; empty = all.
    pub allow: AllowList,
    /// -F dir / --fill-dir dir (netperf-ng): the only directory remote fill
    /// files (netperf's `-F ,file`) are read from; none are served without it.
    pub fill_dir: Option<std::path::PathBuf>,
    /// --pid-file path (netperf-ng): where the serving process writes its pid.
    pub pid_file: Option<std::path::PathBuf>,
    /// --log-json (netperf-ng): log lines as JSON objects.
    pub log_json: bool,
    /// --allow-offload-changes[=IF[,IF]] (netperf-ng): clients may change
    /// the offloads (tso, gso, gro, lro) of the interface toward them, and
    /// of the interfaces listed; each connection's changes are put back
    /// when it closes. Reading them is always allowed.
    pub offload_changes: OffloadScope,
    /// --data-ports MIN-MAX (netperf-ng): every data socket is opened on a
    /// free port of this range (a Service or firewall names it); none = the
    /// kernel's ephemeral ports.
    pub data_ports: Option<PortRange>,
    /// --mesh-* (netperf-ng): the operator's opt-in to tests this netserver
    /// originates toward its peers, for a coordinator holding the key.
    pub mesh: MeshOptions,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            port: 12865,
            listen_host: None,
            family: Family::Unspec,
            foreground: false,
            serial: false,
            debug: 0,
            suppress_debug: false,
            verbosity: 1,
            verbosity_given: false,
            passphrase: None,
            limits: Limits::default(),
            allow: AllowList::default(),
            fill_dir: None,
            pid_file: None,
            log_json: false,
            offload_changes: OffloadScope::Off,
            data_ports: None,
            mesh: MeshOptions::new(),
        }
    }
}

/// Result of parsing netserver's argv.
#[derive(Debug)]
pub enum ServerInvocation {
    Run(Box<ServerOptions>),
    Usage,
    Version,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ServerArgError {
    #[error("netserver: {0}")]
    Long(String),
    #[error("netserver: option -{0} requires an argument")]
    MissingValue(char),
    #[error("netserver: invalid option -- '{0}'")]
    Unknown(char),
    #[error("netserver: invalid value '{value}' for -{option}: {why}")]
    Invalid {
        option: char,
        value: String,
        why: String,
    },
}

/// What a short option does.
enum Short {
    /// Print the usage: the rest of the command line is not read.
    Usage,
    /// Print the version: the rest of the command line is not read.
    Version,
    Flag(fn(&mut ServerOptions)),
    /// Takes a value: the rest of its argument, or the next argument.
    Value(fn(&mut ServerOptions, String) -> Result<(), ServerArgError>),
}

/// netserver's short options.
const SHORT: &[(char, Short)] = &[
    ('p', Short::Value(set_port)),
    ('L', Short::Value(set_listen)),
    ('v', Short::Value(set_verbosity)),
    (
        'Z',
        Short::Value(|o, v| {
            o.passphrase = Some(v);
            Ok(())
        }),
    ),
    (
        'F',
        Short::Value(|o, v| {
            o.fill_dir = Some(std::path::PathBuf::from(v));
            Ok(())
        }),
    ),
    ('h', Short::Usage),
    ('V', Short::Version),
    ('D', Short::Flag(|o| o.foreground = true)),
    ('d', Short::Flag(|o| o.debug += 1)),
    (
        'f',
        Short::Flag(|o| {
            o.serial = true;
            o.foreground = true;
        }),
    ),
    ('N', Short::Flag(|o| o.suppress_debug = true)),
    ('4', Short::Flag(|o| o.family = Family::Inet)),
    ('6', Short::Flag(|o| o.family = Family::Inet6)),
];

/// What a long option (netperf-ng's own) does. An error is the text after
/// "netserver: ".
enum Long {
    /// A flag: a value given with `=` is ignored.
    Flag(fn(&mut ServerOptions)),
    /// An optional value, only ever given with `=` (never the next argument).
    Inline(fn(&mut ServerOptions, Option<&str>) -> Result<(), String>),
    /// A value, given with `=` or as the next argument; the text says what
    /// it is when it is missing.
    Value(
        &'static str,
        fn(&mut ServerOptions, String) -> Result<(), String>,
    ),
}

/// netserver's long options, besides the limits (`limits::LIMIT_OPTIONS`).
const LONG: &[(&str, Long)] = &[
    (
        "pid-file",
        Long::Value("a path", |o, v| {
            o.pid_file = Some(v.into());
            Ok(())
        }),
    ),
    (
        "fill-dir",
        Long::Value("a directory", |o, v| {
            o.fill_dir = Some(v.into());
            Ok(())
        }),
    ),
    ("log-json", Long::Flag(|o| o.log_json = true)),
    (
        "data-ports",
        Long::Value("a port range MIN-MAX", set_data_ports),
    ),
    (
        "allow-offload-changes",
        Long::Inline(|o, v| o.offload_changes.add(v)),
    ),
    ("allow", Long::Value("networks", |o, v| o.allow.add(&v))),
];

fn set_port(o: &mut ServerOptions, value: String) -> Result<(), ServerArgError> {
    o.port = value.trim().parse().map_err(|_| ServerArgError::Invalid {
        option: 'p',
        value: value.clone(),
        why: "not a port number".into(),
    })?;
    Ok(())
}

/// -L name[,family]: either part may be empty.
fn set_listen(o: &mut ServerOptions, value: String) -> Result<(), ServerArgError> {
    let (host, fam) = value.split_once(',').unwrap_or((value.as_str(), ""));
    if !host.is_empty() {
        o.listen_host = Some(host.to_string());
    }
    if !fam.is_empty() {
        o.family = family_from(fam, 'L')?;
    }
    Ok(())
}

fn set_verbosity(o: &mut ServerOptions, value: String) -> Result<(), ServerArgError> {
    o.verbosity = value.trim().parse().map_err(|_| ServerArgError::Invalid {
        option: 'v',
        value: value.clone(),
        why: "not a number".into(),
    })?;
    o.verbosity_given = true;
    Ok(())
}

fn set_data_ports(o: &mut ServerOptions, text: String) -> Result<(), String> {
    let range = PortRange::parse(&text).map_err(|why| format!("--data-ports: {why}"))?;
    o.data_ports = Some(range);
    Ok(())
}

fn family_from(text: &str, option: char) -> Result<Family, ServerArgError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "4" | "inet" | "af_inet" => Ok(Family::Inet),
        "6" | "inet6" | "af_inet6" => Ok(Family::Inet6),
        "0" | "unspec" | "af_unspec" | "" => Ok(Family::Unspec),
        _ => Err(ServerArgError::Invalid {
            option,
            value: text.into(),
            why: "unknown address family".into(),
        }),
    }
}

pub fn parse_netserver(args: &[String]) -> Result<ServerInvocation, ServerArgError> {
    let mut o = ServerOptions::default();
    let mut argv = args.iter();
    while let Some(arg) = argv.next() {
        if let Some(long) = arg.strip_prefix("--").filter(|l| !l.is_empty()) {
            parse_long(long, &mut argv, &mut o)?;
        } else if let Some(body) = arg.strip_prefix('-').filter(|b| !b.is_empty()) {
            if let Some(stop) = parse_short(body, &mut argv, &mut o)? {
                return Ok(stop);
            }
        } // netserver ignores stray operands
    }
    check_data_ports(&o)?;
    o.mesh.finish().map_err(ServerArgError::Long)?;
    Ok(ServerInvocation::Run(Box::new(o)))
}

/// One `--name[=value]` argument (`long` without its dashes), its value
/// taken from `argv` when it needs one and none is given with `=`.
fn parse_long(
    long: &str,
    argv: &mut std::slice::Iter<String>,
    o: &mut ServerOptions,
) -> Result<(), ServerArgError> {
    let (name, inline) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let mut value = |what: &str| -> Result<String, ServerArgError> {
        inline
            .or_else(|| argv.next().map(String::as_str))
            .map(str::to_string)
            .ok_or_else(|| ServerArgError::Long(format!("--{name} needs {what}")))
    };
    let done = match LONG.iter().find(|(n, _)| *n == name).map(|(_, l)| l) {
        Some(Long::Flag(set)) => {
            set(o);
            Ok(())
        }
        Some(Long::Inline(set)) => set(o, inline),
        Some(Long::Value(what, set)) => set(o, value(what)?),
        None if mesh::OPTIONS.iter().any(|(n, _)| *n == name) => {
            let what = mesh::OPTIONS
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("", |o| o.1);
            o.mesh.set(name, &value(what)?)
        }
        None if limits::is_limit_option(name) => {
            limits::set_limit(&mut o.limits, name, &value("a value")?)
        }
        None => Err(format!("unknown option --{name}")),
    };
    done.map_err(ServerArgError::Long)
}

/// One `-abc` argument (`body` without its dash): flags, the last of which
/// may take a value, the rest of the argument or else the next one from
/// `argv`. -h and -V end the parse: they are what netserver does.
fn parse_short(
    body: &str,
    argv: &mut std::slice::Iter<String>,
    o: &mut ServerOptions,
) -> Result<Option<ServerInvocation>, ServerArgError> {
    for (at, c) in body.char_indices() {
        let Some((_, option)) = SHORT.iter().find(|(name, _)| *name == c) else {
            return Err(ServerArgError::Unknown(c));
        };
        match option {
            Short::Usage => return Ok(Some(ServerInvocation::Usage)),
            Short::Version => return Ok(Some(ServerInvocation::Version)),
            Short::Flag(set) => set(o),
            Short::Value(set) => {
                let rest = &body[at + c.len_utf8()..];
                let value = match rest.is_empty() {
                    false => rest.to_string(),
                    true => argv
                        .next()
                        .cloned()
                        .ok_or(ServerArgError::MissingValue(c))?,
                };
                set(o, value)?;
                return Ok(None);
            }
        }
    }
    Ok(None)
}

/// The data ports must not hold the control port. -p may come after
/// --data-ports: the control port is known only at the end.
fn check_data_ports(o: &ServerOptions) -> Result<(), ServerArgError> {
    if let Some(range) = o.data_ports.filter(|r| r.contains(o.port)) {
        return Err(ServerArgError::Long(format!(
            "--data-ports {range} holds the control port {} (-p)",
            o.port
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> ServerOptions {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse_netserver(&v).unwrap() {
            ServerInvocation::Run(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_parse() {
        let o = run(&[
            "-p",
            "12900",
            "-D",
            "-L",
            "127.0.0.1,4",
            "-Z",
            "secret",
            "-v2",
        ]);
        assert_eq!(o.port, 12900);
        assert!(o.foreground);
        assert_eq!(o.listen_host.as_deref(), Some("127.0.0.1"));
        assert_eq!(o.family, Family::Inet);
        assert_eq!(o.passphrase.as_deref(), Some("secret"));
        assert_eq!(o.verbosity, 2);
        let o = run(&["-6", "-p12901", "-f"]);
        assert!(o.foreground && o.serial && o.family == Family::Inet6 && o.port == 12901);
    }

    #[test]
    fn errors_and_usage() {
        let v = |a: &[&str]| parse_netserver(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(matches!(v(&["-h"]), Ok(ServerInvocation::Usage)));
        assert!(matches!(v(&["-V"]), Ok(ServerInvocation::Version)));
        assert_eq!(v(&["-p"]).unwrap_err(), ServerArgError::MissingValue('p'));
        assert!(v(&["-p", "abc"]).is_err());
        assert!(v(&["-p", "70000"]).is_err());
        assert_eq!(v(&["-x"]).unwrap_err(), ServerArgError::Unknown('x'));
        assert!(v(&["--max-tests", "0"]).is_err());
        assert!(v(&["--max-tests"]).is_err());
        assert!(v(&["--allow", "10.0.0.0/40"]).is_err());
        assert!(v(&["--no-such-option"]).is_err());
    }

    #[test]
    fn limits_and_allow_list_parse() {
        let o = run(&[
            "--max-tests=2",
            "--silent-timeout",
            "1.5",
            "--max-ring-memory",
            "8M",
            "--allow",
            "127.0.0.0/8",
            "--allow=::1",
        ]);
        assert_eq!(o.limits.max_tests, 2);
        assert_eq!(o.limits.silent_timeout.as_millis(), 1500);
        assert_eq!(o.limits.max_ring_bytes, 8 << 20);
        assert!(o.allow.permits("127.9.9.9".parse().unwrap()));
        assert!(o.allow.permits("::1".parse().unwrap()));
        assert!(!o.allow.permits("10.0.0.1".parse().unwrap()));
        assert!(!o.offload_changes.enabled());
    }

    #[test]
    fn data_ports_parse_and_exclude_the_control_port() {
        assert_eq!(ServerOptions::default().data_ports, None);
        let o = run(&["--data-ports", "42424-42439"]);
        assert_eq!(
            o.data_ports,
            Some(PortRange {
                min: 42424,
                max: 42439
            })
        );
        let o = run(&["--data-ports=5000-5000", "-p", "5001"]);
        assert_eq!(o.data_ports.map(|r| r.len()), Some(1));
        let v = |a: &[&str]| parse_netserver(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        for bad in [
            &["--data-ports", "9-3"][..],
            &["--data-ports", "0-3"],
            &["--data-ports", "1-70000"],
            &["--data-ports", "x"],
            &["--data-ports"],
            &["--data-ports", "12860-12870"],
            &["-p", "5002", "--data-ports=5000-5005"],
        ] {
            let e = v(bad).unwrap_err().to_string();
            assert!(e.contains("--data-ports"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn offload_changes_are_opt_in_and_scoped() {
        assert!(!ServerOptions::default().offload_changes.enabled());
        assert_eq!(
            run(&["--allow-offload-changes", "-p", "1"]).offload_changes,
            OffloadScope::TowardClient { listed: vec![] }
        );
        // `=IF` lists interfaces beyond the client's route; the value is
        // never the next argument (the bare form stays bare).
        let o = run(&[
            "--allow-offload-changes=veth1,eth2",
            "--allow-offload-changes",
            "-D",
        ]);
        assert_eq!(
            o.offload_changes,
            OffloadScope::TowardClient {
                listed: vec!["veth1".into(), "eth2".into()]
            }
        );
        assert!(o.foreground);
        let v = |a: &[&str]| parse_netserver(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        for bad in [
            "--allow-offload-changes=",
            "--allow-offload-changes=../eth0",
            "--allow-offload-changes=eth0,,eth1",
            "--allow-offload-changes=abcdefghijklmnop",
        ] {
            let e = v(&[bad]).unwrap_err().to_string();
            assert!(
                e.starts_with("netserver: --allow-offload-changes"),
                "{bad}: {e}"
            );
        }
        assert!(v(&["--allow-offload"]).is_err());
    }
}
