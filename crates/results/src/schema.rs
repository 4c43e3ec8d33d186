//! The schema and its migrations, as data. `PRAGMA user_version` is the
//! number of steps applied; [`MIGRATIONS`] holds the SQL of each step, in
//! order, and is only ever appended to. `db` applies the missing steps in
//! one transaction with the version bump, so a file is at one version or the
//! next, never between; each applied step is also logged in the
//! `migrations` table.

/// Step `i` takes a database from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: results, their runs, tags.
    "CREATE TABLE migrations (
        version INTEGER PRIMARY KEY,
        applied TEXT NOT NULL,
        tool_version TEXT NOT NULL
    ) STRICT;
    CREATE TABLE results (
        id TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('netperf', 'netagg', 'experiment')),
        test TEXT NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        title TEXT NOT NULL,
        started TEXT NOT NULL,
        ended TEXT NOT NULL,
        status TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        command_line TEXT NOT NULL,
        factors TEXT NOT NULL,
        document TEXT,
        stored TEXT NOT NULL
    ) STRICT;
    CREATE INDEX results_started ON results (started);
    CREATE INDEX results_kind ON results (kind, started);
    CREATE INDEX results_test ON results (test COLLATE NOCASE);
    CREATE INDEX results_host ON results (host COLLATE NOCASE);
    CREATE INDEX results_kernel ON results (kernel);
    CREATE TABLE runs (
        id TEXT PRIMARY KEY NOT NULL,
        result_id TEXT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
        run_order INTEGER NOT NULL,
        cell TEXT NOT NULL,
        replicate INTEGER NOT NULL,
        started TEXT NOT NULL,
        ended TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'interrupted')),
        reason TEXT,
        metrics TEXT NOT NULL,
        facts TEXT NOT NULL,
        offloads TEXT NOT NULL,
        commands TEXT NOT NULL
    ) STRICT;
    CREATE INDEX runs_result ON runs (result_id);
    CREATE TABLE tags (
        result_id TEXT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (result_id, tag)
    ) STRICT;
    CREATE INDEX tags_tag ON tags (tag);",
];

/// The schema version this build writes and reads.
pub const VERSION: i64 = MIGRATIONS.len() as i64;
