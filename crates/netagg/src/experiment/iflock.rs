//! One experiment at a time per local interface: an advisory lock file per
//! (network namespace, interface), held while an experiment may switch that
//! interface's offloads. Without it a second experiment would take the
//! first one's changed state for the original and "restore" it for good
//! (netserver does the same for the remote end with its holds). The kernel
//! drops the lock when the process ends, even by SIGKILL.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Where the lock files live, best first.
const LOCK_DIRS: [&str; 2] = ["/run/lock", "/tmp"];

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct InterfaceLock {
    _file: File,
}

fn lock_path(interface: &str) -> PathBuf {
    // Interface names are per namespace: the namespace's inode keeps two
    // namespaces' "eth0" apart.
    let namespace = std::fs::read_link("/proc/self/ns/net")
        .map(|p| {
            p.to_string_lossy()
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
        })
        .unwrap_or_default();
    let dir = LOCK_DIRS
        .iter()
        .find(|d| std::fs::metadata(d).is_ok_and(|m| m.is_dir()))
        .copied()
        .unwrap_or("/tmp");
    PathBuf::from(dir).join(format!("netperf-ng-offloads-{namespace}-{interface}.lock"))
}

/// Takes the lock of `interface`, or says who holds it.
pub fn lock(interface: &str) -> Result<InterfaceLock, String> {
    let path = lock_path(interface);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if !locked {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        let who = if holder.is_empty() {
            String::new()
        } else {
            format!(" (pid {holder})")
        };
        return Err(format!(
            "another experiment{who} is switching the offloads of {interface}: wait for it to end"
        ));
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}", std::process::id());
    Ok(InterfaceLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_of_the_same_interface_is_refused_until_the_first_is_dropped() {
        let name = format!("nglk{}", std::process::id() % 100_000);
        let first = lock(&name).unwrap();
        let e = lock(&name).unwrap_err();
        assert!(e.contains("another experiment") && e.contains(&name), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(first);
        // A child another test of this binary spawns at this moment holds
        // a copy of the descriptor, and so the lock, from its fork to its
        // exec (close-on-exec): a few bounded tries.
        let mut again = lock(&name);
        for _ in 0..100 {
            if again.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            again = lock(&name);
        }
        drop(again.unwrap());
        let _ = std::fs::remove_file(lock_path(&name));
    }
}
