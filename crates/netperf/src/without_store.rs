//! `--store` in a netperf built without the `store` feature: the option is
//! parsed as always, and refused before any traffic with the reason, so
//! nothing is measured that could not be kept.

use netperf_client::cli::config::Config;
use netperf_client::cli::extensions::EXIT_STORE_FAILED;
use netperf_client::report::omni::{OmniRecord, Selection};

/// Never made: there is no database in this build.
pub enum PendingStore {}

impl PendingStore {
    /// `Ok(None)` without `--store`; with it, one line and the error status.
    pub fn open(config: &Config) -> Result<Option<PendingStore>, i32> {
        if config.test.store.is_none() {
            return Ok(None);
        }
        eprintln!(
            "netperf: --store: this netperf was built without the results store \
             (build it with the default features: cargo install --path crates/netperf)"
        );
        Err(EXIT_STORE_FAILED)
    }

    pub fn finish(self, _config: &Config, _finished: Option<&(OmniRecord, Selection)>) -> i32 {
        match self {}
    }

    pub fn finish_figures(self, _config: &Config, _figures: &[(&str, f64)], _unit: &str) -> i32 {
        match self {}
    }
}
