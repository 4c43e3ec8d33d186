//! The suite's one way to skip. A test that cannot run, in whole or in
//! part, calls `skip` with the reason: it is said on stderr and written to
//! the ledger `scripts/test` reads, so the run counts the test as skipped,
//! not as passed (libtest has no skipped outcome of its own). Also the fast
//! tier's switch: `scripts/test --fast` sets NETPERF_NG_FAST=1 and the tests
//! that need root, a package install, a container build, a browser or
//! minutes skip themselves through `fast_tier_skips`.
//!
//! The library's unit tests include this file too (src/lib.rs), so it uses
//! nothing but std.

use std::io::Write;

/// The ledger's path, set by the runner (scripts/test); unset, a skip is
/// only said on stderr.
pub const LEDGER_ENV: &str = "NETPERF_NG_SKIP_LEDGER";
/// Set to 1 by `scripts/test --fast`.
pub const FAST_ENV: &str = "NETPERF_NG_FAST";

/// The running test as the runner names it: this test binary's crate and
/// the test's path, which libtest gives the thread it runs the test on.
fn test_name() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("(a thread a test started)");
    format!("{}::{name}", env!("CARGO_CRATE_NAME"))
}

/// Records that the running test skips (all of itself, or the part the
/// reason names) because of `reason`; the caller then returns or goes on
/// without that part. A test that skipped any part counts as skipped.
pub fn skip(reason: impl std::fmt::Display) {
    let test = test_name();
    let reason = reason.to_string();
    eprintln!("SKIPPED: {test}: {reason}");
    let Some(ledger) = std::env::var_os(LEDGER_ENV) else {
        return;
    };
    // One line per skip, the reason on that line; a single append-mode
    // write keeps the lines of parallel tests and processes whole.
    let one_line = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = format!("{test}\t{one_line}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&ledger)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    // Unrecorded, the skip would be counted as a pass: fail instead.
    if let Err(e) = written {
        panic!(
            "cannot record the skip in {}: {e}",
            ledger.to_string_lossy()
        );
    }
}

/// Whether this is the fast tier (`scripts/test --fast`).
pub fn fast_tier() -> bool {
    std::env::var_os(FAST_ENV).is_some_and(|v| v == "1")
}

/// In the fast tier, skips the running test with "fast tier: `why`"
/// ("needs root", "slow (40 s)") and returns true: the caller returns.
/// Outside it, false.
pub fn fast_tier_skips(why: &str) -> bool {
    let fast = fast_tier();
    if fast {
        skip(format!("fast tier: {why}"));
    }
    fast
}
