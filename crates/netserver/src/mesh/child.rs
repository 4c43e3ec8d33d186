//! The originated test: our `netperf` program run as a child process, with
//! an argument list built here from checked fields only (never text a
//! client sent, beyond a test name from the allowlist), an empty
//! environment, its output bounded and its life cut at its length + 30 s.
//! Its `-J` record is what goes back to the coordinator.

use netperf_wire::mesh::{self as wire, Origin};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(20);
/// The most of the child's stderr kept for a failure's reason.
const STDERR_KEPT: usize = 4096;

/// The argument list: `-t TEST -H DST -p PORT -l SECS -P 0 -- [-e 1] -J
/// SELECTION` (`-e 1` for UDP_RR: `wire::mesh::test_options`).
pub fn argv(origin: &Origin) -> Vec<String> {
    let selection = wire::selection(&origin.test).unwrap_or("THROUGHPUT");
    let options = wire::test_options(&origin.test);
    let head = [
        "-t",
        &origin.test,
        "-H",
        &origin.destination.to_canonical().to_string(),
        "-p",
        &origin.port.to_string(),
        "-l",
        &origin.duration_secs.to_string(),
        "-P",
        "0",
        "--",
    ];
    head.iter()
        .chain(options)
        .chain(&["-J", selection])
        .map(|s| s.to_string())
        .collect()
}

/// Run the test; the record (a JSON object's text) or why there is none.
pub fn run(netperf: &Path, origin: &Origin) -> Result<String, String> {
    let mut child = Command::new(netperf)
        .args(argv(origin))
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", netperf.display()))?;
    let stdout = drain(child.stdout.take(), wire::MAX_RESULT_LEN);
    let stderr = drain(child.stderr.take(), STDERR_KEPT);
    let limit = Duration::from_secs(u64::from(origin.duration_secs) + u64::from(wire::GRACE_SECS));
    let status = wait_at_most(&mut child, limit);
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let err = netperf_wire::offload::one_line(String::from_utf8_lossy(&err).trim());
    let status = status.map_err(|why| format!("netperf {why}"))?;
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "by a signal".to_string(), |c| format!("with {c}"));
        return Err(format!("netperf exited {code}: {err}"));
    }
    let text = String::from_utf8(out).map_err(|_| "netperf's output is not text".to_string())?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) if v.is_object() => Ok(text.trim().to_string()),
        _ => Err(format!(
            "netperf's output is not one JSON record ({} bytes){}",
            text.len(),
            if err.is_empty() {
                String::new()
            } else {
                format!(": {err}")
            }
        )),
    }
}

/// Read a pipe on a thread of its own, keeping at most `keep` bytes and
/// discarding the rest, so that the child never blocks on a full pipe.
fn drain<R: Read + Send + 'static>(
    pipe: Option<R>,
    keep: usize,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.by_ref().take(keep as u64).read_to_end(&mut kept);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        }
        kept
    })
}

/// The child's exit, or, past `limit`, kill it and say so.
fn wait_at_most(child: &mut Child, limit: Duration) -> Result<std::process::ExitStatus, String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("killed after {} s", limit.as_secs()));
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("could not be waited for: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            test: "TCP_STREAM".into(),
            destination: "::ffff:127.0.0.2".parse().unwrap(),
            port: 12866,
            duration_secs: 2,
            start_in_ms: 0,
        }
    }

    #[test]
    fn the_argv_is_built_from_checked_fields() {
        assert_eq!(
            argv(&origin()).join(" "),
            "-t TCP_STREAM -H 127.0.0.2 -p 12866 -l 2 -P 0 -- -J THROUGHPUT,THROUGHPUT_UNITS,ELAPSED_TIME"
        );
        // Every test the wire allows runs with its own selection; UDP_RR
        // counts its lost requests as timeouts instead of stalling.
        for test in wire::TESTS {
            let origin = Origin {
                test: test.into(),
                ..origin()
            };
            let argv = argv(&origin).join(" ");
            let tail = format!("-J {}", wire::selection(test).unwrap());
            assert!(argv.ends_with(&tail), "{argv}");
            assert_eq!(argv.contains("-- -e 1 -J"), test == "UDP_RR", "{argv}");
        }
        assert!(wire::selection("UDP_RR").unwrap().ends_with(",RR_TIMEOUTS"));
    }

    #[test]
    fn failures_say_why() {
        let missing = run(Path::new("/nonexistent/netperf"), &origin()).unwrap_err();
        assert!(
            missing.contains("cannot run /nonexistent/netperf"),
            "{missing}"
        );
        let failed = run(Path::new("/bin/false"), &origin()).unwrap_err();
        assert!(failed.starts_with("netperf exited with 1"), "{failed}");
        // /bin/echo prints its arguments: not a record.
        let not_json = run(Path::new("/bin/echo"), &origin()).unwrap_err();
        assert!(not_json.contains("not one JSON record"), "{not_json}");
    }

    #[test]
    fn a_child_past_its_time_is_killed() {
        let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
        let why = wait_at_most(&mut sleeper, Duration::from_millis(100)).unwrap_err();
        assert_eq!(why, "killed after 0 s");
        // Reaped: nothing left to wait for.
        assert!(sleeper.try_wait().unwrap().is_some());
    }
}
