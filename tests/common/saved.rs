//! Saved runs drawn again: `netagg report JSON --out DIR` must write every
//! file the run drew, byte for byte, from the JSON alone.

use super::{run_with_limit, text, NETAGG};
use std::path::Path;
use std::time::Duration;

/// Redraws `json` into a fresh directory beside it and checks that each of
/// `names` (files the run wrote beside `json`) comes back the same, and
/// that `netagg report` names every file it wrote.
pub fn redraws_identically(json: &Path, names: &[&str]) {
    let again = json.with_file_name("redrawn");
    let _ = std::fs::remove_dir_all(&again);
    let run = run_with_limit(
        &NETAGG,
        &[
            "report",
            &json.to_string_lossy(),
            "--out",
            &again.to_string_lossy(),
        ],
        Duration::from_secs(60),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let listed = text(&run.stdout);
    for name in names {
        let first = std::fs::read(json.with_file_name(name)).unwrap();
        let second = std::fs::read(again.join(name))
            .unwrap_or_else(|e| panic!("{name} not drawn again: {e}; listed {listed}"));
        assert!(first == second, "{name} differs when drawn from the JSON");
        assert!(listed.contains(name), "{name} not listed: {listed}");
    }
    let _ = std::fs::remove_dir_all(&again);
}

/// `netagg report` of `body` (a hostile or foreign document) exits 2 with
/// a line containing `why`, and writes nothing.
pub fn refused(dir: &Path, body: &str, why: &str) {
    let file = dir.join("hostile.json");
    let out = dir.join("hostile-out");
    std::fs::write(&file, body).unwrap();
    let run = run_with_limit(
        &NETAGG,
        &[
            "report",
            &file.to_string_lossy(),
            "--out",
            &out.to_string_lossy(),
        ],
        Duration::from_secs(30),
    );
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{why}: {stderr}");
    assert!(stderr.contains(why), "{why}: {stderr}");
    assert!(!out.exists(), "{why}: wrote {}", out.display());
    let _ = std::fs::remove_file(&file);
}
