//! `--report` in a netperf built without the `pages` feature: the option is
//! parsed as always, and refused before any traffic with the reason, so a
//! script learns at once that this build draws no page.

pub use crate::drawn::Drawn;
use netperf_client::cli::config::Config;
use netperf_client::cli::extensions::EXIT_REPORT_FAILED;

/// Never made: there is no page to draw in this build.
pub enum ReportFile {}

impl ReportFile {
    /// `Ok(None)` without `--report`; with it, one line and the error status.
    pub fn create(config: &Config) -> Result<Option<ReportFile>, i32> {
        if config.test.report.is_none() {
            return Ok(None);
        }
        eprintln!(
            "netperf: --report: this netperf was built without pages \
             (build it with the default features: cargo install --path crates/netperf)"
        );
        Err(EXIT_REPORT_FAILED)
    }

    pub fn finish(self, _config: &Config, _drawn: &Drawn) -> i32 {
        match self {}
    }

    pub fn abandon(self) {
        match self {}
    }
}
