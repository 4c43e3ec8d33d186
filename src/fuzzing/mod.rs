//! What the cargo-fuzz targets in `fuzz/` check, kept in the library so the
//! stable tests can replay the fuzz corpora with the same code (CI has no
//! nightly toolchain) and so the checks are built and linted with the rest.
//! Not part of the public API. docs/fuzzing.md describes the targets.

pub mod client;
pub mod decode;
pub mod script;
pub mod session;
pub mod templates;
