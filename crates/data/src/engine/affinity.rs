//! Pinning the thread that runs a data loop to one CPU (netperf's -T).

/// Bind the calling thread to `cpu`; a negative cpu means no binding.
pub fn bind_current_thread(cpu: i32) -> std::io::Result<()> {
    if cpu < 0 {
        return Ok(());
    }
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is out of range"),
        ));
    }
    // SAFETY: cpu_set_t is plain data manipulated with the libc helpers;
    // cpu is below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_to_cpu_zero_and_rejects_nonsense() {
        std::thread::spawn(|| {
            bind_current_thread(0).unwrap();
            assert!(bind_current_thread(1 << 20).is_err());
            assert!(bind_current_thread(-1).is_ok());
        })
        .join()
        .unwrap();
    }
}
