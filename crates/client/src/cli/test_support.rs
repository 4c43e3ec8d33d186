//! Shared helpers for the parser's unit tests: parse a command line written
//! as one string into its words, a Config, or its error text.

use crate::cli::config::Config;
use crate::cli::{parse_netperf, Invocation};

/// A command line written as one string, word by word.
pub fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

pub fn run(line: &str) -> Config {
    match parse_netperf(&words(line)) {
        Ok(Invocation::Run(config)) => config,
        other => panic!("`{line}` gave {other:?}"),
    }
}

pub fn error(line: &str) -> String {
    match parse_netperf(&words(line)) {
        Err(error) => error.to_string(),
        other => panic!("`{line}` gave {other:?}"),
    }
}

/// The stderr notes parsing `line` leaves (how values were read).
pub fn notes(line: &str) -> Vec<String> {
    run(line).notes
}
