//! netperf-ng's foundations, below everything else and free of it: the
//! identifiers it hands out (`ids`), files and arguments read bounded
//! (`input`), UTC timestamps as text (`timefmt`) and the open-file limit
//! (`rlimit`).

pub mod ids;
pub mod input;
pub mod rlimit;
pub mod timefmt;
