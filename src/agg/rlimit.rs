//! netagg's own open-file limit: each stream holds three descriptors (its
//! control connection, a second handle on it, its data socket), so a
//! thousand streams need more than the usual soft limit of 1,024. netagg
//! raises the soft limit to the hard one at start and says so when even
//! that is too low for the streams asked for.

/// Descriptors one stream holds.
pub const FILES_PER_STREAM: u64 = 3;
/// Descriptors netagg uses besides its streams: stdio, /proc readers,
/// the output files, a margin.
const BASE_FILES: u64 = 64;

/// The open-file limit before and after raising it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilesLimit {
    pub soft_before: u64,
    pub soft: u64,
    pub hard: u64,
}

/// Descriptors `streams` streams need at once.
pub fn files_needed(streams: u32) -> u64 {
    u64::from(streams) * FILES_PER_STREAM + BASE_FILES
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

/// What to tell the user when `limit` is too low for `streams` streams.
pub fn too_low(limit: &FilesLimit, streams: u32) -> Option<String> {
    let needed = files_needed(streams);
    (limit.soft < needed).then(|| {
        format!(
            "{streams} streams need about {needed} open files, but this process may have only {} \
             (its hard limit): streams beyond that will fail; raise the hard limit \
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
        assert_eq!(files_needed(1024), 3136);
        let text = too_low(&low, 1024).unwrap();
        assert!(
            text.starts_with("1024 streams need about 3136 open files"),
            "{text}"
        );
        assert!(too_low(&low, 300).is_none());
    }
}
