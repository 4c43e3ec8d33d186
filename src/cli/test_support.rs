//! Shared helpers for the parser's unit tests: parse a command line written
//! as one string into a Config, or into its error text.

use crate::cli::config::Config;
use crate::cli::{parse_netperf, Invocation};

pub fn run(line: &str) -> Config {
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    match parse_netperf(&args) {
        Ok(Invocation::Run(config)) => config,
        other => panic!("`{line}` gave {other:?}"),
    }
}

pub fn error(line: &str) -> String {
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    match parse_netperf(&args) {
        Err(error) => error.to_string(),
        other => panic!("`{line}` gave {other:?}"),
    }
}
