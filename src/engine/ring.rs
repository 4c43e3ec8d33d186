//! Preallocated send/receive buffer rings (netperf's -W width, -a alignment,
//! -o offset): the hot path cycles through them without allocating.

/// A ring of `width` buffers of `size` bytes, each starting at `offset` past
/// an `align`-byte boundary.
pub struct BufferRing {
    storage: Vec<u8>,
    starts: Vec<usize>,
    size: usize,
    next: usize,
}

/// The byte pattern buffers are filled with when no fill file is given.
const FILL_PATTERN: &[u8] =
    b"netperf-ng data buffer fill pattern: abcdefghijklmnopqrstuvwxyz0123456789\n";

impl BufferRing {
    pub fn new(width: u32, size: usize, align: u32, offset: u32) -> Self {
        let width = width.max(1) as usize;
        let align = (align as usize).clamp(1, 1 << 16);
        let offset = (offset as usize).min(1 << 16);
        let stride = size + align + offset;
        let storage = vec![0u8; stride * width + align];
        let base = storage.as_ptr() as usize;
        let mut starts = Vec::with_capacity(width);
        for i in 0..width {
            let raw = base + i * stride;
            let aligned = raw.next_multiple_of(align);
            starts.push(aligned - base + offset);
        }
        let mut ring = BufferRing {
            storage,
            starts,
            size,
            next: 0,
        };
        ring.fill(FILL_PATTERN);
        ring
    }

    /// Fill every buffer with `pattern`, repeated.
    pub fn fill(&mut self, pattern: &[u8]) {
        if pattern.is_empty() {
            return;
        }
        for &start in &self.starts {
            for (i, b) in self.storage[start..start + self.size]
                .iter_mut()
                .enumerate()
            {
                *b = pattern[i % pattern.len()];
            }
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn width(&self) -> usize {
        self.starts.len()
    }

    /// The next buffer of the ring, advancing it.
    #[inline]
    pub fn next_ptr(&mut self) -> *mut u8 {
        let start = self.starts[self.next];
        self.next += 1;
        if self.next == self.starts.len() {
            self.next = 0;
        }
        // SAFETY: start + size lies within storage by construction.
        unsafe { self.storage.as_mut_ptr().add(start) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_offset_and_cycle() {
        let mut r = BufferRing::new(3, 100, 64, 5);
        let a = r.next_ptr() as usize;
        let b = r.next_ptr() as usize;
        let _c = r.next_ptr();
        assert_eq!(a % 64, 5);
        assert_eq!(b % 64, 5);
        assert_eq!(r.next_ptr() as usize, a);
    }

    #[test]
    fn zero_width_still_has_one_buffer() {
        let mut r = BufferRing::new(0, 1, 0, 0);
        assert_eq!(r.width(), 1);
        let _ = r.next_ptr();
    }
}
