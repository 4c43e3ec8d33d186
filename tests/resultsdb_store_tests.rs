//! Writing to the results database: concurrent writers (threads and
//! processes) lose nothing; a read-only, corrupt, truncated, garbled or
//! newer database is one clear line and exit 2, never changed, nothing
//! half-written; netperf's and netagg's `--store` against a netserver on
//! loopback leave netperf's output as it was.

mod common;

use common::results::{
    code, experiment, ids, is_root, netagg, one_error_line, run_as, uuid, TempDir, NOBODY,
};
use common::{skip, text, Server, NETPERF};
use netperf_ng::resultsdb::{self, query, Db, DbError, Filter, Kind};
use std::path::Path;
use std::process::Output;

const PER_WRITER: usize = 40;

fn digest(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("read the database file")
}

/// One writer: PER_WRITER experiments, each its own transaction, tagged.
fn write_many(db_path: &Path, tag: &str) {
    let db = Db::open(db_path).expect("open for writing");
    for _ in 0..PER_WRITER {
        let mut rec = experiment(1.0, 1);
        rec.tags = vec![tag.to_string()];
        resultsdb::store_experiment(&db, &rec).expect("store");
    }
}

/// Four writer processes and four writer threads start together on a
/// database none has created yet (the creation and migration race too).
/// The processes are netagg's own: four sequences of `netagg results
/// import`, one record each, of records saved beforehand.
#[test]
fn concurrent_writers_lose_nothing() {
    let dir = TempDir::new();
    let path = dir.db();
    let sequences: Vec<Vec<String>> = (0..4)
        .map(|p| {
            (0..PER_WRITER)
                .map(|n| {
                    let mut rec = experiment(1.0, 1);
                    rec.tags = vec![format!("process-{p}")];
                    let file = dir.0.join(format!("record-{p}-{n}.json"));
                    std::fs::write(&file, serde_json::to_string(&rec).unwrap()).unwrap();
                    file.display().to_string()
                })
                .collect()
        })
        .collect();
    let processes: Vec<_> = sequences
        .into_iter()
        .map(|files| {
            let path = path.clone();
            std::thread::spawn(move || {
                for file in files {
                    let out = netagg(&path, &["import", &file]);
                    assert_eq!(code(&out), 0, "import {file}: {}", text(&out.stderr));
                }
            })
        })
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || write_many(&path, &format!("thread-{i}")))
        })
        .collect();
    for t in threads {
        t.join().expect("a writer thread failed");
    }
    for p in processes {
        p.join().expect("a writer process failed");
    }
    let db = Db::open_read_only(&path).unwrap();
    let all = query::list(&db, &Filter::default()).unwrap();
    assert_eq!(all.len(), 8 * PER_WRITER, "every store is there");
    let tags: std::collections::BTreeSet<_> = all.iter().map(|r| r.tags[0].clone()).collect();
    assert_eq!(tags.len(), 8);
    assert!(all.iter().all(|r| r.runs == 5));
    assert_eq!(db.user_version().unwrap(), resultsdb::schema::VERSION);
}

#[test]
fn a_failed_store_leaves_nothing_behind() {
    let dir = TempDir::new();
    let db = Db::open(&dir.db()).unwrap();
    let mut rec = experiment(1.0, 2);
    let first = rec.runs[0].id.clone();
    rec.runs[3].id = first;
    assert!(matches!(
        resultsdb::store_experiment(&db, &rec),
        Err(DbError::Duplicate(_))
    ));
    let mut bad = experiment(1.0, 1);
    bad.runs[2].id = "not-a-uuid".into();
    assert!(matches!(
        resultsdb::store_experiment(&db, &bad),
        Err(DbError::Invalid(_))
    ));
    assert!(query::list(&db, &Filter::default()).unwrap().is_empty());
    assert!(matches!(
        query::load(&db, &rec.id),
        Err(DbError::UnknownId(_))
    ));
    // A database opened for reading refuses to write, and says so.
    resultsdb::store_experiment(&db, &experiment(1.0, 1)).unwrap();
    drop(db);
    let reader = Db::open_read_only(&dir.db()).unwrap();
    assert!(matches!(
        resultsdb::store_experiment(&reader, &experiment(1.0, 1)),
        Err(DbError::ReadOnly { .. })
    ));
    assert_eq!(query::list(&reader, &Filter::default()).unwrap().len(), 1);
}

/// netperf --store into `db`, against a port nobody listens on: the test
/// never starts when the database cannot be opened.
fn netperf_store_as(db: &Path, uid: Option<u32>) -> Option<Output> {
    let store = format!("--store={}", db.display());
    run_as(
        &NETPERF,
        &["-H", "127.0.0.1", "-p", "9", "-l", "1", "--", &store],
        &[],
        uid,
    )
}

#[test]
fn read_only_files_and_directories_are_refused_before_the_test() {
    let dir = TempDir::new();
    let path = dir.db();
    let db = Db::open(&path).unwrap();
    resultsdb::store_experiment(&db, &experiment(1.0, 1)).unwrap();
    drop(db);
    let uid = is_root().then_some(NOBODY);
    let chmod = |p: &Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    // A write-protected file in a writable directory.
    chmod(&dir.0, 0o777);
    chmod(&path, 0o444);
    let before = digest(&path);
    let Some(out) = netperf_store_as(&path, uid) else {
        return skip("read-only checks: netperf cannot run as an unprivileged user here");
    };
    assert_eq!(code(&out), 2, "{}", text(&out.stderr));
    one_error_line(&out, "is read-only (the file is not writable)");
    assert!(out.stdout.is_empty(), "the test did not run");
    // Reading it still works.
    let list = run_as(
        &common::NETAGG,
        &["results", "--db", path.to_str().unwrap(), "list"],
        &[],
        uid,
    )
    .unwrap();
    assert_eq!(code(&list), 0, "{}", text(&list.stderr));
    // A directory that cannot be written: neither a new file nor the
    // journal of an existing one can be made; the existing one is read
    // as immutable.
    chmod(&dir.0, 0o555);
    for db in [dir.0.join("new.db"), path.clone()] {
        let out = netperf_store_as(&db, uid).unwrap();
        assert_eq!(code(&out), 2);
        one_error_line(&out, "is not writable");
        assert!(!dir.0.join("new.db").exists());
    }
    let list = run_as(
        &common::NETAGG,
        &["results", "--db", path.to_str().unwrap(), "list"],
        &[],
        uid,
    )
    .unwrap();
    assert_eq!(code(&list), 0, "{}", text(&list.stderr));
    assert_eq!(text(&list.stdout).lines().count(), 2);
    assert_eq!(digest(&path), before, "nothing changed the file");
}

#[test]
fn corrupt_truncated_and_garbled_files_are_reported_not_trusted() {
    let dir = TempDir::new();
    // Not SQLite at all.
    let junk = dir.0.join("junk.db");
    std::fs::write(&junk, "this is not a database\n".repeat(300)).unwrap();
    let before = digest(&junk);
    let out = netagg(&junk, &["list"]);
    assert_eq!(code(&out), 2);
    one_error_line(&out, "is not a netperf-ng results database or is damaged");
    let out = netperf_store_as(&junk, None).unwrap();
    assert_eq!(code(&out), 2);
    one_error_line(&out, "is not a netperf-ng results database or is damaged");
    assert_eq!(digest(&junk), before);

    // A real one, truncated to half, and another garbled past page 1.
    let path = dir.db();
    let db = Db::open(&path).unwrap();
    let mut id = String::new();
    for _ in 0..20 {
        id = resultsdb::store_experiment(&db, &experiment(1.0, 3)).unwrap();
    }
    drop(db);
    let whole = digest(&path);
    assert!(whole.len() > 8 * 4096, "several pages: {}", whole.len());
    let truncated = dir.0.join("truncated.db");
    std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
    let mut garbled_bytes = whole.clone();
    for (i, b) in garbled_bytes.iter_mut().enumerate().skip(4096) {
        *b = (i as u8).wrapping_mul(31) ^ 0xa5;
    }
    let garbled = dir.0.join("garbled.db");
    std::fs::write(&garbled, &garbled_bytes).unwrap();
    let out = netperf_store_as(&garbled, None).unwrap();
    assert_eq!(
        code(&out),
        2,
        "refused before the test: {}",
        text(&out.stderr)
    );
    one_error_line(&out, "is damaged");
    for damaged in [&truncated, &garbled] {
        for args in [
            &["list"][..],
            &["show", &id[..8]],
            &["export", &id, "--format", "openmetrics"],
        ] {
            let out = netagg(damaged, args);
            assert_eq!(code(&out), 2, "{args:?}: {}", text(&out.stdout));
            let err = text(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains("damaged") || err.contains("no result with id"),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"));
        }
    }
}

#[test]
fn a_database_from_a_newer_netperf_ng_is_refused_and_left_alone() {
    let dir = TempDir::new();
    let path = dir.db();
    let db = Db::open(&path).unwrap();
    resultsdb::store_experiment(&db, &experiment(1.0, 1)).unwrap();
    drop(db);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA user_version = 99").unwrap();
    }
    let before = digest(&path);
    assert!(matches!(
        Db::open(&path),
        Err(DbError::TooNew { found: 99, .. })
    ));
    let out = netagg(&path, &["list"]);
    assert_eq!(code(&out), 2);
    one_error_line(&out, "has schema version 99, newer than");
    let out = netperf_store_as(&path, None).unwrap();
    assert_eq!(code(&out), 2);
    one_error_line(&out, "the file was not changed");
    assert_eq!(digest(&path), before);
}

#[test]
fn netperf_store_records_what_it_printed_and_changes_nothing_it_prints() {
    let server = Server::start("127.0.0.1");
    let dir = TempDir::new();
    let db_path = dir.db();
    let port = server.port.to_string();
    let base = ["-H", "127.0.0.1", "-p", port.as_str(), "-l", "1"];
    let netperf = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        run_as(&NETPERF, &args, env, None).unwrap()
    };
    let plain = netperf(&[], &[]);
    let id = uuid(ids());
    let store = format!("--store={}", db_path.display());
    let stored = netperf(&["--", "-u", &id, &store, "--tag", "e2e,classic"], &[]);
    assert_eq!(code(&stored), 0, "{}", text(&stored.stderr));
    assert!(stored.stderr.is_empty(), "{}", text(&stored.stderr));
    let (a, b) = (text(&plain.stdout), text(&stored.stdout));
    assert_eq!(a.lines().count(), b.lines().count());
    for (x, y) in a.lines().zip(b.lines()).take(6) {
        assert_eq!(x, y, "the banner and headers are the same");
    }
    let figures: Vec<f64> = common::numbers(b.lines().last().unwrap());
    let db = Db::open_read_only(&db_path).unwrap();
    let r = query::load(&db, &id).unwrap();
    assert_eq!(
        (r.kind, r.test.as_str(), r.host.as_str()),
        (Kind::Netperf, "TCP_STREAM", "127.0.0.1")
    );
    assert_eq!(r.tags, ["e2e", "classic"]);
    assert!(!r.kernel.is_empty());
    let m = &r.runs[0].metrics;
    // Throughput printed with two decimals: the stored value rounds to it.
    assert!(
        (m["THROUGHPUT"] - figures[4]).abs() < 0.006,
        "{m:?} {figures:?}"
    );
    assert_eq!(m["LOCAL_SEND_SIZE"], figures[2]);
    assert_eq!(r.runs[0].facts["THROUGHPUT_UNITS"], "10^6bits/s");
    drop(db);

    // omni with a selection, the default database from NETPERF_NG_DB, and
    // the UUID netperf printed is the stored id.
    let env = [("NETPERF_NG_DB", db_path.to_str().unwrap())];
    let omni = netperf(
        &[
            "-t",
            "omni",
            "--",
            "-d",
            "rr",
            "-o",
            "THROUGHPUT,MEAN_LATENCY,PROTOCOL,UUID",
            "--store",
        ],
        &env,
    );
    assert_eq!(code(&omni), 0, "{}", text(&omni.stderr));
    let line = text(&omni.stdout).lines().last().unwrap().to_string();
    let printed_uuid = line.rsplit(',').next().unwrap().to_string();
    let list = netagg(&db_path, &["list", "--kind", "netperf", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert_eq!(listed[0]["id"], printed_uuid.as_str());
    let show = netagg(&db_path, &["show", &printed_uuid[..8]]);
    let page = text(&show.stdout);
    assert!(
        page.contains("MEAN_LATENCY") && page.contains("TCP"),
        "{page}"
    );
    let export = netagg(
        &db_path,
        &["export", &printed_uuid, "--format", "openmetrics"],
    );
    assert!(text(&export.stdout).contains("netperf_ng_mean_latency{"));

    // A store that fails after the test: the output is all there, one
    // line says why, exit 2.
    let again = netperf(&["--", "-u", &id, &store], &[]);
    assert_eq!(code(&again), 2);
    one_error_line(&again, "already stored");
    assert_eq!(text(&again.stdout).lines().count(), a.lines().count());

    // The Unix-domain tests store their figures too.
    let unix = netperf(&["-t", "STREAM_RR", "--", &store, "--tag", "unix"], &[]);
    assert_eq!(code(&unix), 0, "{}", text(&unix.stderr));
    let db = Db::open_read_only(&db_path).unwrap();
    let tagged = Filter {
        tags: vec!["unix".into()],
        test: Some("stream_rr".into()),
        ..Filter::default()
    };
    let listed = query::list(&db, &tagged).unwrap();
    assert_eq!(listed.len(), 1);
    let r = query::load(&db, &listed[0].id).unwrap();
    assert!(r.runs[0].metrics["THROUGHPUT"] > 0.0);
    assert_eq!(r.runs[0].facts["THROUGHPUT_UNITS"], "Trans/s");
    // A test that measures no traffic has nothing to store: refused first.
    let cpu = netperf(&["-t", "LOC_CPU", "--", &store], &[]);
    assert_eq!(code(&cpu), 2);
    one_error_line(&cpu, "no result to store");
    assert!(cpu.stdout.is_empty());
}

#[test]
fn netagg_store_records_each_level() {
    let server = Server::start("127.0.0.1");
    let dir = TempDir::new();
    let db_path = dir.db();
    let out_dir = dir.0.join("out");
    let port = server.port.to_string();
    let store = format!("--store={}", db_path.display());
    let out = run_as(
        &common::NETAGG,
        &[
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--kind",
            "outbound",
            "--streams",
            "1",
            "--duration",
            "2",
            "--interval",
            "0.5",
            "--out",
            out_dir.to_str().unwrap(),
            &store,
            "--tag",
            "agg",
        ],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let db = Db::open_read_only(&db_path).unwrap();
    let listed = query::list(
        &db,
        &Filter {
            kind: Some(Kind::Netagg),
            tags: vec!["agg".into()],
            ..Filter::default()
        },
    )
    .unwrap();
    assert_eq!(listed.len(), 1);
    let r = query::load(&db, &listed[0].id).unwrap();
    assert_eq!(r.test, "TCP_STREAM");
    assert_eq!(r.runs.len(), 1);
    assert_eq!(
        r.runs[0].cell,
        vec![("streams".to_string(), "1".to_string())]
    );
    assert!(r.runs[0].metrics["THROUGHPUT"] > 0.0);
    let doc: serde_json::Value = serde_json::from_str(r.document.as_deref().unwrap()).unwrap();
    assert!(doc.is_object());
    drop(db);
    let cmp = netagg(&db_path, &["compare", &r.id, &r.id]);
    assert_eq!(code(&cmp), 0);
    assert!(text(&cmp.stdout).contains("insufficient data (n=1)"));
    // --tag without --store is refused by clap.
    let bad = run_as(
        &common::NETAGG,
        &["--host", "127.0.0.1", "--tag", "x"],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(code(&bad), 2);
}

#[test]
fn nothing_is_stored_without_store_and_no_store_says_so_everywhere() {
    let server = Server::start("127.0.0.1");
    let dir = TempDir::new();
    let default_db = dir.db();
    let env = [("NETPERF_NG_DB", default_db.to_str().unwrap())];
    let port = server.port.to_string();
    // netperf: stock behaviour without --store; --no-store spells it out.
    for extra in [&[][..], &["--", "--no-store"]] {
        let mut args = vec!["-H", "127.0.0.1", "-p", &port, "-l", "1"];
        args.extend_from_slice(extra);
        let out = run_as(&NETPERF, &args, &env, None).unwrap();
        assert_eq!(code(&out), 0, "{extra:?}: {}", text(&out.stderr));
    }
    let both = run_as(
        &NETPERF,
        &[
            "-H",
            "127.0.0.1",
            "-p",
            &port,
            "--",
            "--store",
            "--no-store",
        ],
        &env,
        None,
    )
    .unwrap();
    assert_ne!(code(&both), 0);
    assert!(text(&both.stderr).contains("--no-store: cannot be used with --store"));
    // netagg's ramp: one short level, --no-store and nothing said alike.
    let out_dir = dir.0.join("out");
    for extra in [&[][..], &["--no-store"]] {
        let mut args = vec![
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--kind",
            "outbound",
            "--streams",
            "1",
            "--duration",
            "2",
            "--out",
            out_dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = run_as(&common::NETAGG, &args, &env, None).unwrap();
        assert_eq!(code(&out), 0, "{extra:?}: {}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("stored"),
            "{}",
            text(&out.stderr)
        );
    }
    assert!(!default_db.exists(), "stored without --store");
}
