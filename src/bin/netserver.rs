//! netserver: parse the command line, listen, and serve control connections.

use netperf_ng::cli::usage::{NETSERVER_USAGE, VERSION_TEXT};
use netperf_ng::server::{self, options};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match options::parse_netserver(&args) {
        Ok(options::ServerInvocation::Run(o)) => o,
        Ok(options::ServerInvocation::Usage) => {
            print!("{NETSERVER_USAGE}");
            return ExitCode::from(1);
        }
        Ok(options::ServerInvocation::Version) => {
            print!("{VERSION_TEXT}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{e}");
            eprint!("{NETSERVER_USAGE}");
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
    if !opts.foreground {
        if let Err(e) = server::daemonize() {
            eprintln!("netserver: cannot daemonize: {e}");
            return ExitCode::from(1);
        }
    }
    match server::serve(listener, opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netserver: accept failed: {e}");
            ExitCode::from(1)
        }
    }
}
