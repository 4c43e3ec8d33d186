//! netperf-ng's foundations, below everything else and free of it: the
//! identifiers it hands out (`ids`), files and arguments read bounded
//! (`input`), UTC timestamps as text (`timefmt`), the open-file limit
//! (`rlimit`) and the one format of a saved run (`saved`).

pub mod ids;
pub mod input;
pub mod rlimit;
pub mod saved;
pub mod timefmt;
