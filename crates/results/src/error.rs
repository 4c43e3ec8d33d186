//! What can go wrong with the results database, each as one line a user can
//! act on; SQLite's own codes are sorted into them by [`DbError::from_sqlite`].

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("results database: cannot find a home for it: set NETPERF_NG_DB, XDG_DATA_HOME or HOME, or give --db PATH")]
    NoDefaultPath,
    #[error("results database {}: cannot create the directory {}: {source}", path.display(), dir.display())]
    CreateDir {
        path: PathBuf,
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("no results database at {} (store a result with --store first, or give --db PATH)", .0.display())]
    Missing(PathBuf),
    #[error("results database {} cannot be opened: {detail}", path.display())]
    CannotOpen { path: PathBuf, detail: String },
    #[error("results database {} is read-only ({detail}); nothing was stored", path.display())]
    ReadOnly { path: PathBuf, detail: String },
    #[error("{} is not a netperf-ng results database or is damaged ({detail})", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("results database {} has schema version {found}, newer than the {supported} this netperf-ng knows; use a newer netperf-ng (the file was not changed)", path.display())]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("results database {} has schema version {found} and needs upgrading to {supported}, but it is opened read-only; store a result into it once to upgrade", path.display())]
    NeedsUpgrade {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("results database {} is busy: another writer held it for longer than {seconds} s", path.display())]
    Busy { path: PathBuf, seconds: u64 },
    #[error("no result with id {0}")]
    UnknownId(String),
    #[error("id {prefix} is ambiguous: it begins {}", candidates.join(", "))]
    Ambiguous {
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("a result with id {0} is already stored")]
    Duplicate(String),
    #[error("{0}")]
    Invalid(String),
    #[error("results database {}: {detail}", path.display())]
    Sqlite { path: PathBuf, detail: String },
}

impl DbError {
    /// Sorts an SQLite error on `path` into the case a user can act on.
    pub fn from_sqlite(path: &Path, e: rusqlite::Error) -> DbError {
        use rusqlite::ErrorCode as C;
        let path = path.to_path_buf();
        let detail = e.to_string();
        if let rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..) = e
        {
            return DbError::Corrupt { path, detail };
        }
        match e.sqlite_error_code() {
            Some(C::NotADatabase | C::DatabaseCorrupt) => DbError::Corrupt { path, detail },
            Some(C::ReadOnly) => DbError::ReadOnly { path, detail },
            Some(C::CannotOpen | C::PermissionDenied) => DbError::CannotOpen { path, detail },
            Some(C::DatabaseBusy | C::DatabaseLocked) => DbError::Busy {
                path,
                seconds: super::db::BUSY_TIMEOUT.as_secs(),
            },
            _ => DbError::Sqlite { path, detail },
        }
    }

    /// The exit status of the `netagg results` commands for this error.
    pub const EXIT_STATUS: u8 = 2;
}
