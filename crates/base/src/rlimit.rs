//! The open-file limit of netagg and netserver: a netagg stream holds three
//! descriptors (its control connection, a second handle on it, its data
//! socket), and so does a netserver test (its control connection, its data
//! listener and connection), so a thousand of either need more than the
//! usual soft limit of 1,024. Both raise the soft limit to the hard one at
//! start and say so when even that is too low for what they were asked to
//! run. A many-flow test (`--flows`) holds a socket per flow on each end,
//! and is refused before any traffic when they would not fit.

/// Descriptors one netagg stream holds when it is a test of its own.
pub const FILES_PER_STREAM: u64 = 3;
/// Descriptors one netagg stream holds as a flow of a shared test (its
/// data socket; the test's control connection is shared).
pub const FILES_PER_FLOW: u64 = 1;
/// Descriptors one netserver test holds.
pub const FILES_PER_TEST: u64 = 3;
/// Descriptors used besides the streams or tests: stdio, /proc readers,
/// output files, a margin.
const BASE_FILES: u64 = 64;

/// The open-file limit before and after raising it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilesLimit {
    pub soft_before: u64,
    pub soft: u64,
    pub hard: u64,
}

/// Descriptors `streams` streams need at once, each holding `per_stream`.
pub fn files_needed(streams: u32, per_stream: u64) -> u64 {
    u64::from(streams) * per_stream + BASE_FILES
}

/// Raise the soft open-file limit to the hard one.
pub fn raise_open_files() -> std::io::Result<FilesLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let soft_before = limit.rlim_cur;
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(FilesLimit {
        soft_before,
        soft: limit.rlim_cur,
        hard: limit.rlim_max,
    })
}

/// Descriptors netserver needs for `max_tests` tests at once.
pub fn files_for_tests(max_tests: usize) -> u64 {
    max_tests as u64 * FILES_PER_TEST + BASE_FILES
}

/// What to tell the user when `limit` is too low for `streams` streams
/// each holding `per_stream` descriptors.
pub fn too_low(limit: &FilesLimit, streams: u32, per_stream: u64) -> Option<String> {
    shortfall(
        limit,
        files_needed(streams, per_stream),
        &format!("{streams} streams"),
        "streams",
    )
}

/// What to tell the user when `limit` is too low for netserver's
/// `--max-tests`.
pub fn too_low_for_tests(limit: &FilesLimit, max_tests: usize) -> Option<String> {
    shortfall(
        limit,
        files_for_tests(max_tests),
        &format!("--max-tests {max_tests}"),
        "tests",
    )
}

/// Whether `flows` more sockets fit under this process's open-file limit
/// (raised to the hard limit first), beside what it has open already;
/// else what to tell the user.
pub fn room_for_flows(flows: u32) -> Result<(), String> {
    let limit = raise_open_files().map_err(|e| format!("cannot read the open-file limit: {e}"))?;
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    let needed = u64::from(flows) + open + BASE_FILES;
    match shortfall(&limit, needed, &format!("{flows} flows"), "flows") {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

fn shortfall(limit: &FilesLimit, needed: u64, what: &str, units: &str) -> Option<String> {
    (limit.soft < needed).then(|| {
        format!(
            "{what} need about {needed} open files, but this process may have only {} \
             (its hard limit): {units} beyond that will fail; raise the hard limit \
             (`ulimit -Hn` as root, /etc/security/limits.conf, or systemd's LimitNOFILE)",
            limit.soft
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_raised_and_checked() {
        let limit = raise_open_files().unwrap();
        assert_eq!(limit.soft, limit.hard);
        assert!(limit.soft >= limit.soft_before);
        let low = FilesLimit {
            soft_before: 1024,
            soft: 1024,
            hard: 1024,
        };
        assert_eq!(files_needed(1024, FILES_PER_STREAM), 3136);
        let text = too_low(&low, 1024, FILES_PER_STREAM).unwrap();
        assert!(
            text.starts_with("1024 streams need about 3136 open files"),
            "{text}"
        );
        assert!(too_low(&low, 300, FILES_PER_STREAM).is_none());
        assert!(too_low(&low, 900, FILES_PER_FLOW).is_none());
        assert_eq!(files_for_tests(512), 1600);
        let text = too_low_for_tests(&low, 512).unwrap();
        assert!(
            text.starts_with("--max-tests 512 need about 1600 open files")
                && text.contains("tests beyond that will fail"),
            "{text}"
        );
        assert!(too_low_for_tests(&low, 64).is_none());
    }
}
