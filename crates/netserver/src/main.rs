//! netserver: parse the command line, listen, and serve control connections.

use netperf_wire::VERSION_TEXT;
use netserver::usage::NETSERVER_USAGE;
use netserver::{self as server, limits, options};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match options::parse_netserver(&args) {
        Ok(options::ServerInvocation::Run(o)) => *o,
        Ok(options::ServerInvocation::Usage) => {
            print!("{NETSERVER_USAGE}{}", limits::usage_text());
            return ExitCode::from(1);
        }
        Ok(options::ServerInvocation::Version) => {
            print!("{VERSION_TEXT}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{e}");
            eprint!("{NETSERVER_USAGE}{}", limits::usage_text());
            return ExitCode::from(1);
        }
    };
    let (host, family) = server::describe_listen(&opts);
    let listener = match server::listen(&opts) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "Unable to start netserver with  '{host}' port '{}' and family {family}: {e}",
                opts.port
            );
            return ExitCode::from(1);
        }
    };
    println!(
        "Starting netserver with host '{host}' port '{}' and family {family}",
        opts.port
    );
    // Each test holds three descriptors: a few hundred tests need more than
    // the usual soft limit. A warning only for a --max-tests given on the
    // command line that even the hard limit cannot serve (the default says
    // nothing, so that a plain `netserver` prints what stock netperf's
    // does), and before daemonizing, which closes stderr.
    let raised = netperf_base::rlimit::raise_open_files();
    if opts.limits.max_tests != limits::Limits::default().max_tests {
        match raised {
            Ok(limit) => {
                if let Some(w) =
                    netperf_base::rlimit::too_low_for_tests(&limit, opts.limits.max_tests)
                {
                    eprintln!("netserver: {w}");
                }
            }
            Err(e) => eprintln!("netserver: cannot read or raise the open-file limit: {e}"),
        }
    }
    if !opts.foreground {
        if let Err(e) = server::daemonize() {
            eprintln!("netserver: cannot daemonize: {e}");
            return ExitCode::from(1);
        }
    }
    // SIGTERM (or SIGINT) ends the server gracefully; a second SIGINT at once.
    netperf_data::engine::signals::install();
    let pid_file = opts.pid_file.clone();
    if let Some(path) = &pid_file {
        if let Err(e) = std::fs::write(path, format!("{}\n", std::process::id())) {
            eprintln!("netserver: cannot write pid file {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    let result = server::serve(listener, opts);
    if let Some(path) = &pid_file {
        let _ = std::fs::remove_file(path);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netserver: accept failed: {e}");
            ExitCode::from(1)
        }
    }
}
