//! How many bytes each send/recv call moves and how wide the buffer ring is,
//! chosen as netperf chooses them — the same rule on both ends — and the
//! bounds on them both ends apply.

/// Largest message per send/recv call: netserver's default bound, and what
/// our netperf asks of a peer at most.
pub const MAX_MESSAGE: i32 = 16 << 20;
/// Largest ring width, on both ends.
pub const MAX_WIDTH: u32 = 4096;
/// Largest total ring memory per direction that our netperf asks for.
pub const MAX_RING_BYTES: u64 = 256 << 20;

/// Largest UDP payload netperf picks by itself (0xFFFF minus IP and UDP headers).
pub const UDP_LENGTH_MAX: i32 = 0xFFFF - 28;

/// One direction's bytes per call and ring width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    pub size: i32,
    pub width: u32,
}

/// For a request/response direction (`message > 0`) the message size and a
/// width of at least one. For a stream: the requested size, else the socket
/// buffer size (capped at `cap`), else 4096; the requested width, else one
/// more than the buffers that fit the socket buffer, at least two.
pub fn choose(message: i32, requested: i32, width: u32, sock_buf: i32, cap: i32) -> Sizing {
    if message > 0 {
        return Sizing {
            size: message,
            width: width.max(1),
        };
    }
    let size = if requested > 0 {
        requested
    } else if sock_buf > 0 {
        sock_buf.min(cap)
    } else {
        4096
    };
    let width = if width > 0 {
        width
    } else {
        ((sock_buf.max(0) / size) as u32 + 1).max(2)
    };
    Sizing { size, width }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netperf_choices() {
        // TCP_STREAM send side with a 16 KiB socket buffer: 16384 bytes, width 2.
        assert_eq!(
            choose(-1, 0, 0, 16384, i32::MAX),
            Sizing {
                size: 16384,
                width: 2
            }
        );
        // The receive side of the capture: 131072-byte buffer, width 2.
        assert_eq!(
            choose(-1, -1, 0, 131072, i32::MAX),
            Sizing {
                size: 131072,
                width: 2
            }
        );
        // UDP sends are capped at the largest datagram.
        assert_eq!(choose(-1, 0, 0, 212992, UDP_LENGTH_MAX).size, 65507);
        // Small messages in a big buffer give a wide ring.
        assert_eq!(choose(-1, 1024, 0, 16384, i32::MAX).width, 17);
        // RR: the message size, width one.
        assert_eq!(
            choose(1, 0, 0, 16384, i32::MAX),
            Sizing { size: 1, width: 1 }
        );
        // No socket buffer known.
        assert_eq!(
            choose(-1, 0, 0, -1, i32::MAX),
            Sizing {
                size: 4096,
                width: 2
            }
        );
    }
}
