//! What `--report`'s page is drawn from, as the test hands it over: the
//! same whether this netperf draws pages (`report_file`) or was built
//! without them.

use netperf_client::control::client::Iteration;
use netperf_client::report::omni::record::OmniRecord;

/// What the page is drawn from.
pub struct Drawn<'a> {
    pub last: &'a Iteration,
    /// The test's figure in the -f unit (the interims' unit).
    pub result: f64,
    /// What netperf printed.
    pub text: &'a str,
    /// The record with every fact (`select::all()`).
    pub record: &'a OmniRecord,
}
