//! `netagg watch`: a plan measured on a schedule until stopped, every run
//! stored in the results database with its context (an absence with its
//! reason when an endpoint cannot be reached), the history searched for
//! change points after each run, the database kept bounded, and, with
//! `--listen`, the latest values, change points and history served over
//! HTTP (`/metrics`, a live page, a JSON API).
//!
//! Rooms: `state` is what the loop knows that the database does not (the
//! last runs, the next one, a store that fails, the open change points),
//! shared with the HTTP side, which reads it and the database and never
//! writes either; `serve` is that HTTP side (`--listen`: `/metrics`, the
//! live page, the JSON API), bounded against hostile clients.

pub mod serve;
pub mod state;
