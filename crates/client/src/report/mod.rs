//! Output: the classic netperf result blocks, banners, units and warnings.
//!
//! * `banner` — the first line of every test.
//! * `classic` — renders the titles and result rows of the classic tests.
//! * `layouts` — the classic tests (`ClassicKind`) and their printf layouts, as data.
//! * `confidence` — the "Desired confidence was not achieved" warning.
//! * `histogram` — the -v 2 histogram print.
//! * `open_loop` — the -v 2 lines of an open-loop test (`--rate`).
//! * `units` — the -f letters, their labels and divisors.
//! * `unix` — the Unix-domain tests' output (layouts in `unix_layouts`).
//! * `cfmt` — the printf subset the templates are written in.

pub mod banner;
pub mod cfmt;
pub mod classic;
pub mod confidence;
pub mod histogram;
pub mod interim;
mod layouts;
pub mod omni;
pub mod open_loop;
pub mod units;
pub mod unix;
mod unix_layouts;

#[cfg(test)]
mod stock_tests;
#[cfg(test)]
mod test_outcomes;
#[cfg(test)]
mod transcript_tests;

pub use banner::{render_banner, Banner, BannerConfidence, BannerEndpoint, BannerFeatures};
pub use classic::{render_classic, ClassicOptions, HeadlineFigures};
pub use confidence::{render_confidence_warning, ConfidenceWidths};
pub use layouts::ClassicKind;
