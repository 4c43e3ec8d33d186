//! The mesh (`netagg mesh`): every endpoint to every other, throughput and
//! latency, measured from each endpoint's own netserver (the operator's
//! opt-in, `netserver --mesh-key`) in rounds where no endpoint is in two
//! tests at once (`schedule`), asked for and authenticated over the control
//! connection (`remote`), run and collected (`run`), and the N×N grids read
//! for the node, path or zone link that stands out (`localise`); its
//! text, CSV, saved run, page and stored results (`cli`, `model`, `output`).

pub mod cli;
pub mod localise;
pub mod model;
pub mod output;
pub mod remote;
pub mod run;
pub mod schedule;
pub mod simulate;
