//! Remote fill files (netperf's `-F ,file`): served only from the directory
//! the operator names with `netserver -F DIR`, by plain name, never through
//! a link out of it, and only as many bytes as a ring can use.

use super::omni_checks::{refuse, Refusal};

/// Most bytes of a remote fill file read (the ring only needs its first
/// bytes; a larger ring repeats them).
const MAX_FILL_BYTES: u64 = 16 << 20;

/// A fill file name as a client may send it: one entry of the directory,
/// never a path (the fuzzer checks that what passes is one component).
pub fn check_name(name: &str) -> Result<(), Refusal> {
    let plain = !name.is_empty()
        && !name.contains('/')
        && name != "."
        && name != ".."
        && !name.contains('\0');
    if plain {
        return Ok(());
    }
    Err(refuse(
        libc::EPERM,
        format!("fill file '{name}' is not a plain file name"),
    ))
}

/// The bytes of a remote fill file the client named (netperf's `-F ,file`):
/// only a plain file name inside the operator's `-F` directory, never a
/// path, never following a link out of it; none without the directory.
pub fn read(name: &str, dir: Option<&std::path::Path>) -> Result<Option<Vec<u8>>, Refusal> {
    if name.is_empty() {
        return Ok(None);
    }
    let Some(dir) = dir else {
        return Err(refuse(
            libc::EPERM,
            "remote fill files are not served (netserver -F DIR names a directory for them)",
        ));
    };
    check_name(name)?;
    let inside = |p: &std::path::Path| {
        let (Ok(file), Ok(root)) = (p.canonicalize(), dir.canonicalize()) else {
            return None;
        };
        file.starts_with(&root).then_some(file)
    };
    let Some(path) = inside(&dir.join(name)) else {
        return Err(refuse(
            libc::ENOENT,
            format!("no fill file '{name}' in the fill directory"),
        ));
    };
    // A FIFO or a device in the directory is read as far as a ring needs
    // and for a bounded time: a session thread must never hang on it.
    netperf_base::input::read_fill(&path, MAX_FILL_BYTES as usize)
        .map(Some)
        .map_err(|e| {
            refuse(
                netperf_base::input::errno_of(&e),
                format!("fill file '{name}': {e}"),
            )
        })
}
