//! Datagram sequence numbers (netperf-ng `--seq`, like sockperf's): the
//! sender writes a 64-bit counter into the first 8 bytes of every UDP
//! payload, the receiver counts what went missing, arrived twice or arrived
//! late. Only used when asked for: a stamp and a check are a store and a few
//! bit operations per datagram, no allocation.

use netperf_wire::system_facts::DatagramCounts;

/// Smallest message that can carry a sequence number.
pub const SEQ_BYTES: usize = 8;

/// How far back (in datagrams) a late arrival can still be told from a
/// duplicate. 64 Ki datagrams is ~0.1 s at line rate on 10 GbE small packets.
const WINDOW: u64 = 1 << 16;
const WINDOW_WORDS: usize = (WINDOW / 64) as usize;

/// Sender and receiver state of one end.
#[derive(Debug, Clone)]
pub struct Sequence {
    next_out: u64,
    /// Number outgoing messages with the last number received instead of
    /// our own count: netserver's echo for an open loop over UDP (`--rate`).
    echo: bool,
    counts: DatagramCounts,
    /// Bit per recent sequence number: received or not.
    seen: Box<[u64; WINDOW_WORDS]>,
}

impl Default for Sequence {
    fn default() -> Self {
        Self::new()
    }
}

impl Sequence {
    pub fn new() -> Self {
        Sequence {
            next_out: 0,
            echo: false,
            counts: DatagramCounts::default(),
            seen: Box::new([0; WINDOW_WORDS]),
        }
    }

    /// A receiver that answers each message with its number (and counts
    /// what went missing as `new`'s does).
    pub fn echoing() -> Self {
        Sequence {
            echo: true,
            ..Sequence::new()
        }
    }

    /// Write the next sequence number (echoing: the last one received) into
    /// an outgoing message of `len` bytes at `buf` (messages shorter than 8
    /// bytes are refused at set-up).
    ///
    /// # Safety
    /// `buf` must be valid for writes of `len` bytes.
    #[inline]
    pub unsafe fn stamp(&mut self, buf: *mut u8, len: usize) {
        if len >= SEQ_BYTES {
            let bytes = self.next_out.to_le_bytes();
            // SAFETY: the caller guarantees len >= 8 writable bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, SEQ_BYTES) };
        }
    }

    /// The stamped message was sent.
    #[inline]
    pub fn sent(&mut self) {
        self.next_out += 1;
    }

    /// The last `n` stamped messages never left (a refused batch): their
    /// numbers go out again.
    #[inline]
    pub fn unsend(&mut self, n: u64) {
        self.next_out = self.next_out.saturating_sub(n);
    }

    /// Datagrams numbered so far.
    pub fn numbered(&self) -> u64 {
        self.next_out
    }

    /// Account for a received message of `len` bytes at `buf`.
    ///
    /// # Safety
    /// `buf` must be valid for reads of `len` bytes.
    #[inline]
    pub unsafe fn check(&mut self, buf: *const u8, len: usize) {
        if len < SEQ_BYTES {
            return;
        }
        let mut bytes = [0u8; SEQ_BYTES];
        // SAFETY: the caller guarantees len >= 8 readable bytes.
        unsafe { std::ptr::copy_nonoverlapping(buf, bytes.as_mut_ptr(), SEQ_BYTES) };
        self.receive(u64::from_le_bytes(bytes));
    }

    fn bit(seq: u64) -> (usize, u64) {
        let slot = seq % WINDOW;
        ((slot / 64) as usize, 1u64 << (slot % 64))
    }

    fn receive(&mut self, seq: u64) {
        // The echo rides on our own count: the next stamp writes it (and
        // `sent` moves past it, to be overwritten by the next receive).
        if self.echo {
            self.next_out = seq;
        }
        let c = &mut self.counts;
        if seq >= c.next_expected {
            let gap = seq - c.next_expected;
            c.lost += gap;
            if gap >= WINDOW {
                self.seen.fill(0);
            } else {
                for skipped in c.next_expected..seq {
                    let (word, mask) = Self::bit(skipped);
                    self.seen[word] &= !mask;
                }
            }
            let (word, mask) = Self::bit(seq);
            self.seen[word] |= mask;
            c.next_expected = seq.saturating_add(1);
        } else if c.next_expected - seq > WINDOW {
            // Too old to tell apart from a duplicate: count it late.
            c.out_of_order += 1;
            c.lost = c.lost.saturating_sub(1);
        } else {
            let (word, mask) = Self::bit(seq);
            if self.seen[word] & mask != 0 {
                c.duplicated += 1;
            } else {
                self.seen[word] |= mask;
                c.out_of_order += 1;
                c.lost = c.lost.saturating_sub(1);
            }
        }
    }

    pub fn counts(&self) -> DatagramCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(seqs: &[u64]) -> DatagramCounts {
        let mut s = Sequence::new();
        for &n in seqs {
            s.receive(n);
        }
        s.counts()
    }

    #[test]
    fn an_echoing_receiver_answers_with_the_number_it_got() {
        let mut s = Sequence::echoing();
        let (mut request, mut response) = ([0u8; 8], [0u8; 8]);
        for n in [7u64, 9] {
            request.copy_from_slice(&n.to_le_bytes());
            // SAFETY: both buffers hold 8 bytes.
            unsafe {
                s.check(request.as_ptr(), 8);
                s.stamp(response.as_mut_ptr(), 8);
            }
            s.sent();
            assert_eq!(u64::from_le_bytes(response), n);
        }
        // It still counts what went missing: 0..7 and 8.
        assert_eq!(s.counts().lost, 8);
    }

    #[test]
    fn in_order_traffic_counts_nothing() {
        let c = feed(&[0, 1, 2, 3]);
        assert_eq!(
            (c.lost, c.duplicated, c.out_of_order, c.next_expected),
            (0, 0, 0, 4)
        );
    }

    #[test]
    fn gaps_duplicates_and_late_arrivals() {
        // 2 and 5 missing, 3 twice, 2 arrives late.
        let c = feed(&[0, 1, 3, 3, 4, 6, 2]);
        assert_eq!(c.lost, 1, "5 never came");
        assert_eq!(c.duplicated, 1);
        assert_eq!(c.out_of_order, 1);
        assert_eq!(c.next_expected, 7);
        assert_eq!(c.with_sender_total(10).lost, 4, "7, 8, 9 lost at the end");
    }

    #[test]
    fn a_late_duplicate_is_a_duplicate() {
        let c = feed(&[0, 2, 1, 1]);
        assert_eq!((c.lost, c.duplicated, c.out_of_order), (0, 1, 1));
    }

    #[test]
    fn huge_jumps_and_ancient_arrivals_stay_bounded() {
        let c = feed(&[0, 10 * WINDOW, 5, u64::MAX - 1]);
        assert_eq!(c.out_of_order, 1);
        assert_eq!(c.next_expected, u64::MAX);
    }

    #[test]
    fn stamp_and_check_round_trip() {
        let mut tx = Sequence::new();
        let mut rx = Sequence::new();
        let mut buf = [0u8; 16];
        for _ in 0..3 {
            // SAFETY: buf is 16 bytes.
            unsafe { tx.stamp(buf.as_mut_ptr(), buf.len()) };
            tx.sent();
            // SAFETY: as above.
            unsafe { rx.check(buf.as_ptr(), buf.len()) };
        }
        assert_eq!(tx.numbered(), 3);
        assert_eq!(rx.counts().next_expected, 3);
        // Short messages are neither stamped nor checked.
        // SAFETY: reads 4 bytes of buf.
        unsafe { rx.check(buf.as_ptr(), 4) };
        assert_eq!(rx.counts().next_expected, 3);
    }
}
