//! Opening the results database: where it lives by default, the pragmas
//! that make several writers safe (WAL, a busy timeout, foreign keys), the
//! schema check before anything is written, and the one write transaction
//! every store runs in.

use super::error::DbError;
use super::schema;
use rusqlite::{params, Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before giving up. Stores are
/// small transactions (milliseconds); this only matters under heavy
/// contention or when a process holds the file locked.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Environment variable naming the database file; overrides the default.
pub const DB_ENV: &str = "NETPERF_NG_DB";

/// An open results database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
}

/// The default database file: `$NETPERF_NG_DB`, else
/// `$XDG_DATA_HOME/netperf-ng/results.db` (an absolute XDG_DATA_HOME only,
/// as the XDG base directory specification says), else
/// `~/.local/share/netperf-ng/results.db`.
pub fn default_path() -> Result<PathBuf, DbError> {
    default_path_in(|name| std::env::var_os(name))
}

/// [`default_path`] with the environment given as a lookup.
pub fn default_path_in(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<PathBuf, DbError> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(p) = var(DB_ENV) {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = var("XDG_DATA_HOME").map(PathBuf::from) {
        if p.is_absolute() {
            return Ok(p.join("netperf-ng").join("results.db"));
        }
    }
    match var("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".local/share/netperf-ng/results.db")),
        None => Err(DbError::NoDefaultPath),
    }
}

/// `path` if given, else the default.
pub fn resolve(path: Option<&Path>) -> Result<PathBuf, DbError> {
    match path {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path(),
    }
}

impl Db {
    /// Opens the database for writing, creating the file and its directory
    /// if needed and migrating an older schema. A file from a newer
    /// netperf-ng is refused before anything in it changes.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => d.to_path_buf(),
            None => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|source| DbError::CreateDir {
            path: path.to_path_buf(),
            dir: dir.clone(),
            source,
        })?;
        let read_only = |detail: String| DbError::ReadOnly {
            path: path.to_path_buf(),
            detail,
        };
        // SQLite needs to create its journal beside the file: say so
        // rather than "unable to open database file".
        if !writable(&dir) {
            return Err(read_only(format!(
                "its directory {} is not writable",
                dir.display()
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Db::connect(path, flags)?;
        // SQLite silently opens a write-protected file read-only.
        if db.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(read_only("the file is not writable".into()));
        }
        let found = db.user_version()?;
        db.refuse_newer(found)?;
        db.setup_for_writing()?;
        if found < schema::VERSION {
            migrate(&db)?;
        }
        db.probe()?;
        Ok(db)
    }

    /// Reads the last row of every table: walks each b-tree from its root,
    /// so a damaged file is refused before a test runs. Damage deeper in a
    /// table is found when it is read; a store whose write meets a damaged
    /// page fails and rolls back.
    fn probe(&self) -> Result<(), DbError> {
        for table in ["results", "runs", "tags", "migrations"] {
            self.conn
                .query_row(&format!("SELECT max(rowid) FROM {table}"), [], |_| Ok(()))
                .map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Opens an existing database for reading only: a missing file, an
    /// empty one or one that needs migrating is an error, and nothing in
    /// the file is changed.
    pub fn open_read_only(path: &Path) -> Result<Db, DbError> {
        if !path.exists() {
            return Err(DbError::Missing(path.to_path_buf()));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Db::connect(path, flags)?;
        let (db, found) = match db.user_version() {
            Ok(found) => (db, found),
            // A WAL file in a directory we cannot write has no shared
            // memory file to read through; nobody can be writing it either,
            // so it is read as immutable.
            Err(DbError::CannotOpen { .. } | DbError::ReadOnly { .. })
                if !writable(path.parent().unwrap_or(Path::new("."))) =>
            {
                let db = Db::connect_immutable(path)?;
                let found = db.user_version()?;
                (db, found)
            }
            Err(e) => return Err(e),
        };
        db.refuse_newer(found)?;
        if found == 0 {
            return Err(DbError::Corrupt {
                path: path.to_path_buf(),
                detail: "it holds no netperf-ng schema".into(),
            });
        }
        if found < schema::VERSION {
            return Err(DbError::NeedsUpgrade {
                path: path.to_path_buf(),
                found,
                supported: schema::VERSION,
            });
        }
        db.conn
            .execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(|e| db.error(e))?;
        Ok(db)
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Db, DbError> {
        Db::connect_as(path, path, flags)
    }

    fn connect_as(path: &Path, target: impl AsRef<Path>, flags: OpenFlags) -> Result<Db, DbError> {
        let conn = Connection::open_with_flags(target.as_ref(), flags)
            .map_err(|e| DbError::from_sqlite(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| DbError::from_sqlite(path, e))?;
        Ok(Db {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens `path` read-only as an immutable file (no locks, no WAL).
    fn connect_immutable(path: &Path) -> Result<Db, DbError> {
        let mut uri = String::from("file:");
        for byte in path.as_os_str().as_encoded_bytes() {
            if byte.is_ascii_alphanumeric() || b"/._-~".contains(byte) {
                uri.push(char::from(*byte));
            } else {
                uri.push_str(&format!("%{byte:02X}"));
            }
        }
        uri.push_str("?immutable=1");
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Db::connect_as(path, &uri, flags)
    }

    fn refuse_newer(&self, found: i64) -> Result<(), DbError> {
        if found > schema::VERSION {
            return Err(DbError::TooNew {
                path: self.path.clone(),
                found,
                supported: schema::VERSION,
            });
        }
        Ok(())
    }

    /// WAL lets readers run beside one writer and writers queue on the
    /// busy timeout; NORMAL synchronous is durable across a process crash
    /// (a power cut may lose the last commits, never corrupt the file).
    fn setup_for_writing(&self) -> Result<(), DbError> {
        // A file system without shared memory may keep its rollback
        // journal: still correct, only readers then wait for writers.
        // Switching a new file to WAL returns "busy" at once while another
        // connection reads it, without the busy handler (seen with eight
        // writers racing on a new file), so the wait is ours, bounded by
        // the same timeout.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        let switched = loop {
            let tried = self
                .conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map_err(|e| self.error(e));
            match tried {
                Err(DbError::Busy { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => break other,
            }
        };
        switched?;
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|e| self.error(e))
    }

    /// The schema version in the file's header (0 for a new file).
    pub fn user_version(&self) -> Result<i64, DbError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.error(e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// An SQLite error on this database as a [`DbError`].
    pub(crate) fn error(&self, e: rusqlite::Error) -> DbError {
        DbError::from_sqlite(&self.path, e)
    }

    /// Runs `body` in one write transaction: BEGIN IMMEDIATE takes the
    /// write lock first (waiting up to the busy timeout), so two writers
    /// never deadlock upgrading a read lock; any error rolls everything
    /// back, so nothing is ever half-written.
    pub(crate) fn write<T>(
        &self,
        body: impl FnOnce(&Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.error(e))?;
        let result = body(&self.conn).and_then(|value| {
            self.conn
                .execute_batch("COMMIT")
                .map(|_| value)
                .map_err(|e| self.error(e))
        });
        if result.is_err() && !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        result
    }
}

/// Whether this process may create files in `dir` (access(2), so root,
/// read-only mounts and ACLs are judged as the kernel would).
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Applies the missing steps of `schema`. The version is read again under the write
/// lock: another process may have migrated the file meanwhile.
fn migrate(db: &Db) -> Result<(), DbError> {
    db.write(|conn| {
        let found: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db.error(e))?;
        if found > schema::VERSION {
            return Err(DbError::TooNew {
                path: db.path().to_path_buf(),
                found,
                supported: schema::VERSION,
            });
        }
        for (step, sql) in schema::MIGRATIONS.iter().enumerate().skip(found as usize) {
            let version = step as i64 + 1;
            conn.execute_batch(sql).map_err(|e| db.error(e))?;
            conn.execute(
                "INSERT INTO migrations (version, applied, tool_version) VALUES (?1, ?2, ?3)",
                params![
                    version,
                    netperf_base::timefmt::now_utc(),
                    env!("CARGO_PKG_VERSION")
                ],
            )
            .map_err(|e| db.error(e))?;
        }
        // PRAGMA takes no parameters; schema::VERSION is a constant.
        conn.execute_batch(&format!("PRAGMA user_version = {}", schema::VERSION))
            .map_err(|e| db.error(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_path_follows_the_environment_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        let path = |pairs| default_path_in(env(pairs)).unwrap();
        assert_eq!(
            path(&[
                (DB_ENV, "/x/y.db"),
                ("XDG_DATA_HOME", "/data"),
                ("HOME", "/h")
            ]),
            PathBuf::from("/x/y.db")
        );
        assert_eq!(
            path(&[(DB_ENV, ""), ("XDG_DATA_HOME", "/data"), ("HOME", "/h")]),
            PathBuf::from("/data/netperf-ng/results.db")
        );
        assert_eq!(
            path(&[("XDG_DATA_HOME", "relative"), ("HOME", "/home/u")]),
            PathBuf::from("/home/u/.local/share/netperf-ng/results.db")
        );
        assert!(matches!(
            default_path_in(env(&[])),
            Err(DbError::NoDefaultPath)
        ));
    }
}
