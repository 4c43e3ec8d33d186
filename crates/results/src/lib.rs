//! The results database: every netperf-ng result (a netperf test stored
//! with `-- --store`, a netagg run with `--store`, every experiment) kept in
//! one SQLite file, and the `netagg results` commands that list, show,
//! compare and export what it holds.
//!
//! Rooms: `model` is the results themselves (experiment, runs, cells,
//! metrics and which way is better), `db` opens the file (path, pragmas,
//! errors), `schema` migrates it, `record` is the shape every kind is
//! stored in, `store` writes and `query`
//! reads it; `netperf` and `netagg` turn their programs' results into
//! records; `compare` and `render` answer the commands; `history` reads series over
//! time and `changes` finds their change points; `retain` keeps a
//! watch's results bounded (old ones deleted or compacted); `export` writes
//! OpenMetrics, OpenSearch `_bulk` and perfdash; `cli` is the commands;
//! `stats` is the statistics over repeated measurements that experiments
//! and comparisons share.
//!
//! Every value is in SQL columns a user can query with the `sqlite3` shell:
//! `results` (one row per result, kind `netperf`, `netagg` or `experiment`),
//! `runs` (one row per netperf run, metrics and facts as JSON objects:
//! `SELECT r.id, m.value FROM runs r, json_each(r.metrics) m WHERE m.key =
//! 'THROUGHPUT'`), `tags`, and `migrations` (the schema's history).

pub mod changes;
pub mod cli;
pub mod compare;
pub mod db;
pub mod error;
pub mod export;
pub mod history;
pub mod model;
pub mod netagg;
pub mod netperf;
pub mod query;
pub mod record;
pub mod render;
pub mod retain;
pub mod schema;
pub mod stats;
pub mod store;

pub use db::{default_path, Db};
pub use error::DbError;
pub use query::{Filter, ResultSummary};
pub use record::{Kind, StoredResult};
pub use store::{store_experiment, store_result};
