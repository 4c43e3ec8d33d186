//! The socket files of the Unix-domain tests: which directory they go in,
//! fresh names in it (netperf's `tempnam(dir, "netperf.")`), binding a
//! socket to one, and removing it again when the test ends, however it ends.

use socket2::{SockAddr, Socket};
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Prefix of every socket file name, as netperf's tempnam() call.
pub const PREFIX: &str = "netperf.";
/// Random characters after the prefix (tempnam uses six).
const RANDOM_CHARS: usize = 6;
/// Longest socket path the kernel takes: `sun_path` less its NUL.
pub const SOCKET_PATH_MAX: usize = netperf_wire::unix::PATH_FIELD_MAX - 1;
/// How many fresh names to try before giving up on a crowded directory.
const NAME_ATTEMPTS: usize = 64;

/// The directory used when `-p` is not given: where tempnam() would put
/// the file (TMPDIR, else /tmp).
pub fn default_dir() -> PathBuf {
    std::env::temp_dir()
}

/// Check that `dir` can hold our socket files: an absolute path to an
/// existing directory, short enough for a name inside it. The error is the
/// errno netserver reports and a reason for the log.
pub fn check_dir(dir: &Path) -> Result<(), (i32, String)> {
    let shown = dir.display();
    if !dir.is_absolute() {
        return Err((libc::EINVAL, format!("{shown} is not an absolute path")));
    }
    if dir.as_os_str().len() + 1 + PREFIX.len() + RANDOM_CHARS > SOCKET_PATH_MAX {
        return Err((
            libc::ENAMETOOLONG,
            format!("{shown} is too long for a socket path"),
        ));
    }
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err((libc::ENOTDIR, format!("{shown} is not a directory"))),
        Err(e) => Err((
            e.raw_os_error().unwrap_or(libc::ENOENT),
            format!(
                "{shown}: {}",
                crate::net::strerror(e.raw_os_error().unwrap_or(0))
            ),
        )),
    }
}

/// The directory a user named with `-p`, made absolute (netserver may run
/// in another working directory) and checked; the error is printable
/// after "netperf: ".
pub fn resolve_user_dir(text: &str) -> Result<PathBuf, String> {
    let fail = |reason: String| format!("-p {text}: {reason}");
    let dir = std::fs::canonicalize(text).map_err(|e| {
        fail(crate::net::strerror(
            e.raw_os_error().unwrap_or(libc::ENOENT),
        ))
    })?;
    check_dir(&dir).map_err(|(errno, _)| fail(crate::net::strerror(errno)))?;
    Ok(dir)
}

/// A random name suffix from the kernel's generator, falling back to the
/// clock and pid (names need only be unlikely to collide; bind() checks).
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut raw = [0u8; RANDOM_CHARS];
    // SAFETY: getrandom writes at most raw.len() bytes into raw.
    let filled = unsafe { libc::getrandom(raw.as_mut_ptr().cast(), raw.len(), 0) };
    if filled != raw.len() as isize {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let seed = t.as_nanos() as u64 ^ (u64::from(std::process::id()) << 20);
        raw.copy_from_slice(&seed.to_le_bytes()[..RANDOM_CHARS]);
    }
    raw.iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

/// A socket file this process created; removed when dropped, so that every
/// way out of a test (results, refusal, error, panic unwinding) cleans up.
#[derive(Debug)]
pub struct SocketFile {
    path: PathBuf,
}

impl SocketFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.path.as_os_str().as_bytes()
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        // Only ever remove a socket: never whatever else took the name since.
        let is_socket = std::fs::symlink_metadata(&self.path)
            .map(|m| m.file_type().is_socket())
            .unwrap_or(false);
        if is_socket {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Bind `socket` to a fresh `netperf.XXXXXX` name in `dir`, readable and
/// writable by everyone as netserver makes it (netperf may run as another
/// user than netserver).
pub fn bind_fresh(socket: &Socket, dir: &Path) -> io::Result<SocketFile> {
    let mut last = io::Error::from_raw_os_error(libc::EADDRINUSE);
    for _ in 0..NAME_ATTEMPTS {
        let path = dir.join(format!("{PREFIX}{}", random_suffix()));
        if path.as_os_str().len() > SOCKET_PATH_MAX {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        let addr = SockAddr::unix(&path)?;
        match socket.bind(&addr) {
            Ok(()) => {
                let file = SocketFile { path };
                let _ =
                    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o666));
                return Ok(file);
            }
            Err(e) if e.raw_os_error() == Some(libc::EADDRINUSE) => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// The address of a socket path that came off the wire.
pub fn address(bytes: &[u8]) -> io::Result<SockAddr> {
    if bytes.is_empty() || bytes.len() > SOCKET_PATH_MAX || bytes.contains(&0) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    SockAddr::unix(OsStr::from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::{Domain, Type};

    #[test]
    fn directories_are_checked() {
        assert!(check_dir(&default_dir()).is_ok());
        assert_eq!(
            check_dir(Path::new("relative")).unwrap_err().0,
            libc::EINVAL
        );
        assert_eq!(
            check_dir(Path::new("/no/such/netperf-ng/dir"))
                .unwrap_err()
                .0,
            libc::ENOENT
        );
        assert_eq!(
            check_dir(Path::new("/dev/null")).unwrap_err().0,
            libc::ENOTDIR
        );
        let long = format!("/{}", "d".repeat(100));
        assert_eq!(
            check_dir(Path::new(&long)).unwrap_err().0,
            libc::ENAMETOOLONG
        );
        let e = resolve_user_dir("/no/such/netperf-ng/dir").unwrap_err();
        assert_eq!(e, "-p /no/such/netperf-ng/dir: No such file or directory");
    }

    #[test]
    fn fresh_names_are_sockets_and_go_away() {
        let s = Socket::new(Domain::UNIX, Type::DGRAM, None).unwrap();
        let file = bind_fresh(&s, &default_dir()).unwrap();
        let path = file.path().to_path_buf();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(PREFIX) && name.len() == PREFIX.len() + RANDOM_CHARS);
        assert!(std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_socket());
        drop(file);
        assert!(!path.exists());
        assert_ne!(random_suffix(), random_suffix());
    }

    #[test]
    fn wire_addresses_are_bounded() {
        assert!(address(b"").is_err());
        assert!(address(b"/tmp/a\0b").is_err());
        assert!(address(&[b'x'; SOCKET_PATH_MAX + 1]).is_err());
        assert!(address(b"/tmp/netperf.abcdef").is_ok());
    }
}
