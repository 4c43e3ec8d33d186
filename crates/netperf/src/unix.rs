//! A Unix-domain test run as netperf runs it: control connection, the
//! column titles, the test (`control::unix`), then netperf's result block.

use super::EXIT_FAILURE;
use netperf_client::cli::config::Config;
use netperf_client::control::{client, unix};
use netperf_client::report::units;
use netperf_client::report::unix::{self as report, ReportOptions};
use netperf_data::spec::TestSpec;
use netperf_wire::unix::UnixTest;
use std::io::Write;

/// Run `spec`'s Unix-domain test and print its output; the exit status.
pub fn run(config: &Config, spec: &TestSpec, test: UnixTest) -> i32 {
    let g = &config.global;
    if g.no_control {
        super::out("The UNIX tests do not know how to run with no control connection\n");
        return EXIT_FAILURE;
    }
    let store = match super::classic::prepare(config) {
        Ok(store) => store,
        Err(code) => return code,
    };
    let mut chan = match client::establish(g) {
        Ok(chan) => chan,
        Err(e) => {
            eprintln!("{e}");
            return EXIT_FAILURE;
        }
    };
    let requested = g.format_units_explicit.then_some(g.format_units);
    let unit = units::resolve_unit(requested, test.is_request_response());
    if g.print_headers {
        super::out(&report::header(test, g.local_cpu || g.remote_cpu, unit));
    }
    let outcome = unix::run_test(&mut chan, test, spec, g);
    chan.shutdown();
    match outcome {
        Ok(measured) => {
            let opts = ReportOptions {
                verbosity: g.verbosity,
                unit,
            };
            super::out(&report::result(&measured, &opts));
            match store {
                Some(store) => {
                    let (figures, unit) = report::figures(&measured, &opts);
                    store.finish_figures(config, &figures, &unit)
                }
                None => 0,
            }
        }
        Err(f) => {
            super::out(&f.stdout);
            let _ = std::io::stdout().flush();
            eprintln!("{}", f.message);
            1
        }
    }
}
