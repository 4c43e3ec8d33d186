//! What the `netperf` program does, end to end: parse argv, run the requested
//! test (classic tests in `classic`, the no-traffic ones in `special`), print
//! netperf's output, and give the exit status. The binary only calls `main`.

pub mod classic;
pub mod drawn;
pub mod latency_file;
pub mod mss;
pub mod omni;
pub mod output_file;
#[cfg(feature = "pages")]
pub mod report_file;
#[cfg(not(feature = "pages"))]
#[path = "without_pages.rs"]
pub mod report_file;
#[cfg(feature = "store")]
pub use netperf_results::netperf as store;
pub mod special;
#[cfg(not(feature = "store"))]
#[path = "without_store.rs"]
pub mod store;
pub mod unix;
pub mod unsupported;

use netperf_client::cli::{self, Invocation};
use netperf_data::spec::SpecError;
use std::io::Write;

/// Write to stdout and flush, ignoring errors: a reader that went away
/// (`netperf ... | head`) must not turn into a panic.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// netperf's exit status for failures reported by its library (exit(-1)).
pub const EXIT_FAILURE: i32 = 255;

/// Run netperf with `args` (without argv[0]); returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let config = match cli::parse_netperf(args) {
        Ok(Invocation::Run(c)) => c,
        Ok(inv @ Invocation::Usage { .. }) => {
            let to_stderr = inv.usage_goes_to_stderr();
            if let Invocation::Usage { text, exit_code } = inv {
                if to_stderr {
                    eprint!("{text}");
                } else {
                    out(&text);
                }
                return exit_code;
            }
            return 1;
        }
        Ok(Invocation::Version) => {
            out(cli::usage::VERSION_TEXT);
            return 0;
        }
        Err(e) => {
            eprintln!("netperf: {e}");
            return 1;
        }
    };
    // What netperf 2.7.1 says while reading its options, where it says it.
    out(&config.stdout_text);
    for note in &config.notes {
        eprintln!("netperf: note: {note}");
    }
    netperf_data::engine::signals::install();
    if let Some(list) = omni::choices_listing(&config) {
        out(&list);
        return 1;
    }
    for option in unsupported::in_use(&config) {
        eprintln!(
            "netperf: warning: option {option} is not yet supported by netperf-ng; it is ignored"
        );
    }
    if config.test.store.is_some() && special::lookup(&config.global.test_name).is_some() {
        eprintln!(
            "netperf: --store: {} measures no traffic: there is no result to store",
            config.global.test_name
        );
        return netperf_client::cli::extensions::EXIT_STORE_FAILED;
    }
    // Only the tests that time their operations keep a latency histogram.
    let no_engine = special::lookup(&config.global.test_name).is_some()
        || netperf_wire::unix::UnixTest::lookup(&config.global.test_name).is_some();
    if config.test.latency_histogram.is_some() && no_engine {
        eprintln!(
            "netperf: --latency-histogram: {} keeps no latency histogram",
            config.global.test_name
        );
        return output_file::EXIT_OUTPUT_FILE_FAILED;
    }
    // Nor runs any of these many flows.
    if config.test.flows.is_some() && no_engine {
        eprintln!(
            "netperf: --flows: {} is not a TCP or UDP test over sockets (--flows runs TCP_RR, TCP_CRR, UDP_RR, TCP_STREAM, TCP_MAERTS, UDP_STREAM and omni)",
            config.global.test_name
        );
        return 2;
    }
    // Nor does any of these draw an interim series.
    if config.test.report.is_some() && no_engine {
        eprintln!(
            "netperf: --report: {} reports no interim results to draw",
            config.global.test_name
        );
        return netperf_client::cli::extensions::EXIT_REPORT_FAILED;
    }
    let code = match special::lookup(&config.global.test_name) {
        Some(test) => special::run(test, &config),
        None => match config.test_spec() {
            Ok(spec) => match spec.test {
                netperf_data::spec::TestName::Unix(test) => unix::run(&config, &spec, test),
                _ => classic::run(&config, &spec),
            },
            Err(e @ SpecError::UnknownTest(_)) => {
                out(&format!("{e}\n"));
                1
            }
            Err(e) => {
                eprintln!("{e}");
                1
            }
        },
    };
    let _ = std::io::stdout().flush();
    code
}
