//! netperf-compatible command-line parsing: global options, test-specific options, sizespecs, usage texts.
//!
//! `parse_netperf` turns netperf 2.7.1's argv into an [`Invocation`]: a
//! [`config::Config`] to run, a usage text to print, or the version.

pub mod checked;
pub mod cnum;
pub mod config;
pub mod error;
pub mod extensions;
pub mod fast_paths;
pub mod getopt;
pub mod global_opts;
mod global_setters;
pub mod parse;
pub mod sizespec;
pub mod test_opts;
/// Parser helpers for the unit tests of this crate and the ones above it.
#[doc(hidden)]
pub mod test_support;
pub mod to_spec;
pub mod usage;
pub mod values;

pub use error::CliError;
pub use parse::{command_line, parse_netperf, Invocation};
