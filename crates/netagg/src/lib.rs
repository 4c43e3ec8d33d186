//! netagg: synchronized aggregate tests over many load generators and what
//! is built on them: the ramps and `netagg post`/`report` (`agg`),
//! randomized experiments with statistics (`experiment`) and the
//! pod/node/zone scenario matrix (`matrix`); the options they share
//! (`args`); latency under working load (`responsiveness`); any saved run
//! drawn again (`redraw`: `netagg report`); a plan measured on a schedule
//! with change points and an HTTP view (`watch`).

pub mod agg;
pub mod args;
pub mod experiment;
pub mod matrix;
pub mod mesh;
pub mod redraw;
pub mod responsiveness;
pub mod watch;
