//! netperf's omni output: the selector table, the selection (`-o/-O/-k` lists,
//! `all`, files, per-test defaults), the record every selector reads, and the
//! human, CSV, keyval and JSON writers.

pub mod build;
pub mod json;
pub mod record;
pub mod select;
pub mod table;
pub mod value;
pub mod writers;

pub use record::OmniRecord;
pub use select::{Selection, TestShape};
pub use writers::{render_omni, Style};
