//! One run as a child process of our own programs: started so that it
//! dies with the watch (PR_SET_PDEATHSIG), its stderr passed through with
//! the last line kept (an absence's reason), waited for while the stop
//! flag is watched — a stop is forwarded as SIGTERM, so the child ends its
//! run, restores what it changed and writes what it measured — and cut
//! when it overruns (SIGTERM, then SIGKILL).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a child has to finish after SIGTERM before SIGKILL, beyond
/// the test it may be in the middle of: to put back what it changed and
/// write what it measured.
pub const GRACE: Duration = Duration::from_secs(30);
/// How often the wait looks at the child and the stop flag.
const POLL: Duration = Duration::from_millis(50);
/// Longest stderr line kept as a reason.
const MAX_REASON: usize = 400;

/// How a child ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// Its exit status (None: killed by a signal).
    pub code: Option<i32>,
    /// Its last non-empty stderr line.
    pub last_line: String,
    /// The stop flag was forwarded to it.
    pub stopped: bool,
    /// It overran its time and was cut.
    pub timed_out: bool,
}

/// Runs `program args`, waiting at most `timeout` (then SIGTERM, and
/// SIGKILL after `grace`); a raised `stop` is forwarded as SIGTERM;
/// `spawned` is told the child's pid. An error is a child that could not
/// start.
pub fn run(
    program: &Path,
    args: &[String],
    timeout: Duration,
    grace: Duration,
    stop: &AtomicBool,
    spawned: impl FnOnce(u32),
) -> Result<Ended, String> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork
    // and exec.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    spawned(child.id());
    let last = Arc::new(Mutex::new(String::new()));
    let (done, finished) = std::sync::mpsc::channel::<()>();
    if let Some(stderr) = child.stderr.take() {
        let last = Arc::clone(&last);
        std::thread::spawn(move || {
            pass_through(stderr, &last);
            let _ = done.send(());
        });
    }
    let pid = child.id() as libc::pid_t;
    let signal = |s: libc::c_int| {
        // SAFETY: the child is ours and not yet reaped (try_wait has not
        // returned its status), so the pid is still its.
        unsafe { libc::kill(pid, s) };
    };
    let started = Instant::now();
    let (mut stopped, mut timed_out) = (false, false);
    let mut kill_at: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let now = Instant::now();
        if kill_at.is_none() && (stop.load(Ordering::Relaxed) || now - started > timeout) {
            stopped = stop.load(Ordering::Relaxed);
            timed_out = !stopped;
            signal(libc::SIGTERM);
            kill_at = Some(now + grace);
        }
        if kill_at.is_some_and(|at| now > at) {
            signal(libc::SIGKILL);
            kill_at = Some(now + grace * 100);
        }
        std::thread::sleep(POLL);
    };
    // A grandchild left running may hold the pipe open: its last lines
    // are not waited for beyond a moment.
    let _ = finished.recv_timeout(Duration::from_secs(2));
    let last_line = last.lock().map(|l| l.clone()).unwrap_or_default();
    Ok(Ended {
        code: status.and_then(|s| s.code()),
        last_line,
        stopped,
        timed_out,
    })
}

/// Copies the child's stderr to ours line by line, keeping the last
/// non-empty one.
fn pass_through(stderr: impl std::io::Read, last: &Mutex<String>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line is bounded by what the child writes; netagg's are short.
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let _ = std::io::stderr().write_all(&line);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if !text.is_empty() {
            if let Ok(mut l) = last.lock() {
                *l = text.chars().take(MAX_REASON).collect();
            }
        }
    }
}

/// The path of our program `name`: this one for netagg, the one beside it
/// for netperf.
pub fn program(name: &str) -> Result<std::path::PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    Ok(match name {
        "netagg" => me,
        other => me.with_file_name(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sh -c script` as a run.
    fn sh(script: &str, timeout: Duration) -> Ended {
        let args = ["-c".to_string(), script.to_string()];
        let stop = AtomicBool::new(false);
        run(Path::new("/bin/sh"), &args, timeout, GRACE, &stop, |_| {}).unwrap()
    }

    #[test]
    fn the_last_line_and_the_status_come_back() {
        let ended = sh(
            "echo one >&2; echo two >&2; exit 3",
            Duration::from_secs(60),
        );
        assert_eq!(ended.code, Some(3));
        assert_eq!(ended.last_line, "two");
        assert!(!ended.stopped && !ended.timed_out);
    }

    #[test]
    fn an_overrun_is_cut_and_a_stop_passed_on() {
        let ended = sh("exec sleep 30", Duration::from_millis(200));
        assert!(ended.timed_out);
        assert_eq!(ended.code, None);
        // The child's own SIGTERM handler runs: it ends as it chooses. The
        // stop is raised once the handler is in place.
        let ready = std::env::temp_dir().join(format!("watch-child-{}", std::process::id()));
        let _ = std::fs::remove_file(&ready);
        let script = format!(
            "trap 'echo saved >&2; exit 0' TERM; touch {}; sleep 30 & wait",
            ready.display()
        );
        static STOP: AtomicBool = AtomicBool::new(false);
        let marker = ready.clone();
        std::thread::spawn(move || {
            for _ in 0..600 {
                if marker.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            STOP.store(true, Ordering::Relaxed);
        });
        let args = ["-c".to_string(), script];
        let ended = run(
            Path::new("/bin/sh"),
            &args,
            Duration::from_secs(120),
            GRACE,
            &STOP,
            |_| {},
        );
        let ended = ended.unwrap();
        let _ = std::fs::remove_file(&ready);
        assert!(ended.stopped && !ended.timed_out);
        assert_eq!((ended.code, ended.last_line.as_str()), (Some(0), "saved"));
    }
}
