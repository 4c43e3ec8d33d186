//! Identifiers for what netperf-ng hands out and keeps: the UUID netperf's
//! UUID test prints and the omni UUID selector reports, and the ids of the
//! results and runs the results database stores. It sits at the bottom so
//! the program that makes a run and the store that keeps it name one maker.

/// A time-based (version 1) UUID like netperf's, with a random node id.
pub fn new_uuid() -> String {
    let mut node = [0u8; 6];
    // SAFETY: getrandom fills the buffer it is given.
    let filled = unsafe { libc::getrandom(node.as_mut_ptr() as *mut libc::c_void, node.len(), 0) };
    if filled != node.len() as isize {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        node.copy_from_slice(
            &(t.as_nanos() as u64 ^ u64::from(std::process::id())).to_le_bytes()[..6],
        );
    }
    node[0] |= 0x01; // multicast bit: not a real MAC address (RFC 4122 4.5)
    uuid::Uuid::now_v1(&node).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_looks_like_netperfs() {
        let u = new_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "1", "version 1 (time-based): {u}");
        assert_ne!(new_uuid(), u);
    }
}
