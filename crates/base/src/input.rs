//! Files named on a command line or in a request, of any kind: regular
//! files, character devices (`/dev/urandom`, `/dev/zero`) and FIFOs. Each is
//! read only as far as its user needs and for a bounded time, so an endless
//! source, a FIFO nobody writes to or a terminal never hangs a program.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a named file may take to deliver what is asked of it: a FIFO's
/// writer or a slow device gets this long, then what arrived is used (or,
/// if nothing did, the read fails with `TimedOut`).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// What a read does when a FIFO or device goes quiet past its deadline
/// with part of what was asked read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSilence {
    /// Use what arrived (buffer fill: any bytes will do).
    UseWhatArrived,
    /// Fail (a text whose end matters: a truncated list is a wrong list).
    Fail,
}

/// The first bytes of `path`, at most `max_bytes` of them, fewer if the
/// source ends first. A FIFO or device gets `wait` to deliver them; past
/// it, `on_silence` decides, and with nothing read the error is
/// `TimedOut`. A regular file is read as far as asked, however long that
/// takes (a slow disk is no silent writer). A directory is an error.
pub fn read_prefix(
    path: &Path,
    max_bytes: usize,
    wait: Duration,
    on_silence: OnSilence,
) -> io::Result<Vec<u8>> {
    // O_NONBLOCK: opening a FIFO that has no writer must not block; reads
    // below wait in poll, bounded by the deadline, instead.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    let may_go_quiet = !meta.is_file();
    let deadline = Instant::now() + wait;
    let mut data = Vec::with_capacity(max_bytes.min(1 << 20));
    let mut chunk = vec![0u8; max_bytes.clamp(1, 64 << 10)];
    while data.len() < max_bytes {
        if may_go_quiet {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !readable_within(&file, left)? {
                if data.is_empty() || on_silence == OnSilence::Fail {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no data arrived within {} s", wait.as_secs_f64()),
                    ));
                }
                break;
            }
        }
        let want = (max_bytes - data.len()).min(chunk.len());
        match file.read(&mut chunk[..want]) {
            // The end of a file, or a FIFO whose writer has closed.
            Ok(0) => break,
            Ok(n) => data.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(data)
}

/// Whether `file` has data (or its end) within `wait`.
fn readable_within(file: &std::fs::File, wait: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the duration of the call.
        match unsafe { libc::poll(&mut pfd, 1, ms) } {
            // A signal (a timer's tick) is no sign of data: a read now
            // would take a FIFO without a writer for an empty file.
            -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {
                if left.is_zero() {
                    return Ok(false);
                }
            }
            -1 => return Err(io::Error::last_os_error()),
            0 => return Ok(false),
            _ => return Ok(true),
        }
    }
}

/// Most bytes of a fill file read for a ring; a larger ring repeats them.
/// Keeps a huge `-W` x `-m` ring from doubling its memory in the read.
pub const MAX_FILL_BYTES: usize = 64 << 20;

/// The bytes to fill `need` bytes of buffers with from the fill file
/// `path` (netperf's `-F`): its first `need` bytes (at most
/// `MAX_FILL_BYTES`), fewer if it is shorter. An empty source is an error:
/// netperf would rewind it forever.
pub fn read_fill(path: &Path, need: usize) -> io::Result<Vec<u8>> {
    let data = read_prefix(
        path,
        need.clamp(1, MAX_FILL_BYTES),
        DEFAULT_WAIT,
        OnSilence::UseWhatArrived,
    )?;
    if data.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the file is empty",
        ));
    }
    Ok(data)
}

/// The errno netperf would print for a failed read of a named file (a
/// timed-out read has none of its own).
pub fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(match e.kind() {
        io::ErrorKind::TimedOut => libc::ETIMEDOUT,
        _ => libc::EIO,
    })
}

/// A named text (a hosts file, a selector file, a log) of at most
/// `max_bytes`, which may be a pipe such as `<(...)`: whole, or an error.
pub fn read_text(path: &Path, max_bytes: usize) -> io::Result<Vec<u8>> {
    read_prefix(path, max_bytes, DEFAULT_WAIT, OnSilence::Fail)
}

/// `len` bytes made of `source` repeated from its start, as netperf fills
/// a ring from a file shorter than the ring (it rewinds at end of file).
/// Empty when `source` is.
pub fn cycled(source: &[u8], len: usize) -> Vec<u8> {
    if source.is_empty() {
        return Vec::new();
    }
    source.iter().copied().cycle().take(len).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fifo(name: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("ng-input-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        path
    }

    /// `read_prefix` with the default wait, failing on silence.
    fn read(path: impl AsRef<Path>, max_bytes: usize) -> io::Result<Vec<u8>> {
        read_prefix(path.as_ref(), max_bytes, DEFAULT_WAIT, OnSilence::Fail)
    }

    #[test]
    fn endless_devices_are_read_only_as_far_as_asked() {
        let zeros = read("/dev/zero", 100_000).unwrap();
        assert_eq!(zeros.len(), 100_000);
        assert!(zeros.iter().all(|&b| b == 0));
        let random = read("/dev/urandom", 4096).unwrap();
        assert_eq!(random.len(), 4096);
        // 4096 random bytes are not all one value.
        assert!(random.iter().any(|&b| b != random[0]));
    }

    #[test]
    fn a_short_regular_file_is_read_whole() {
        let path = std::env::temp_dir().join(format!("ng-input-{}-short", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        let data = read(&path, 1000);
        let _ = std::fs::remove_file(&path);
        assert_eq!(data.unwrap(), b"abc");
    }

    #[test]
    fn a_fifo_without_a_writer_times_out() {
        let path = fifo("silent");
        let err = read_prefix(
            &path,
            10,
            Duration::from_millis(200),
            OnSilence::UseWhatArrived,
        )
        .unwrap_err();
        let _ = std::fs::remove_file(&path);
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(errno_of(&err), libc::ETIMEDOUT);
    }

    #[test]
    fn a_fifo_delivers_what_its_writer_wrote() {
        let path = fifo("writer");
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new()
                .write(true)
                .open(writer_path)
                .unwrap();
            w.write_all(b"hello fifo").unwrap();
        });
        let data = read(&path, 1000);
        writer.join().unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(data.unwrap(), b"hello fifo");
    }

    #[test]
    fn a_fifo_writer_that_stays_open_gives_what_it_sent_by_the_deadline() {
        let path = fifo("open");
        let writer_path = path.clone();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new()
                .write(true)
                .open(writer_path)
                .unwrap();
            w.write_all(b"partial").unwrap();
            let _ = done_rx.recv_timeout(Duration::from_secs(10));
        });
        let data = read_prefix(
            &path,
            1000,
            Duration::from_millis(500),
            OnSilence::UseWhatArrived,
        );
        let text = read_prefix(&path, 1000, Duration::from_millis(200), OnSilence::Fail);
        let _ = done_tx.send(());
        writer.join().unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(data.unwrap(), b"partial");
        // The writer is still there and silent: a text must not be cut short.
        assert_eq!(text.unwrap_err().kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn directories_and_missing_files_are_errors() {
        let dir = read("/", 10).unwrap_err();
        assert_eq!(dir.raw_os_error(), Some(libc::EISDIR));
        let missing = read("/no/such/file", 10).unwrap_err();
        assert_eq!(errno_of(&missing), libc::ENOENT);
    }

    #[test]
    fn an_empty_fill_file_is_an_error() {
        let err = read_fill(Path::new("/dev/null"), 100).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(read_fill(Path::new("/dev/zero"), 10).unwrap(), vec![0; 10]);
    }

    #[test]
    fn cycling_repeats_from_the_start() {
        assert_eq!(cycled(b"abc", 7), b"abcabca");
        assert!(cycled(b"", 7).is_empty());
    }
}
