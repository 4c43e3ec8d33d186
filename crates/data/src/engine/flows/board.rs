//! Each flow's running counts where someone outside the test can read them
//! at any instant (netagg's coordinator, whose streams are the flows of a
//! shared test): its units of work and its lost requests, stored by the
//! thread that drives it and read without asking that thread for anything.
//!
//! The slots are laid out thread by thread (flow f of T threads runs on
//! thread f % T), so each thread stores into its own run of cache lines and
//! two threads never write the same line but at the runs' edges.

use std::sync::atomic::{AtomicU64, Ordering};

/// The running counts of `flows` flows spread over `threads` threads.
#[derive(Debug)]
pub struct FlowBoard {
    flows: u32,
    threads: u32,
    /// Flows per thread, rounded up: the length of each thread's run.
    per_thread: u32,
    units: Box<[AtomicU64]>,
    timeouts: Box<[AtomicU64]>,
}

impl FlowBoard {
    /// A board for `flows` flows on `threads` threads (as the test runs
    /// them: `threads` clamped to 1..=flows).
    pub fn new(flows: u32, threads: u32) -> FlowBoard {
        let threads = threads.clamp(1, flows.max(1));
        let per_thread = flows.div_ceil(threads);
        let slots = (threads * per_thread) as usize;
        let zeros = || (0..slots).map(|_| AtomicU64::new(0)).collect();
        FlowBoard {
            flows,
            threads,
            per_thread,
            units: zeros(),
            timeouts: zeros(),
        }
    }

    /// Whether the board fits a test of `flows` flows on `threads` threads.
    pub fn fits(&self, flows: u32, threads: u32) -> bool {
        let threads = threads.clamp(1, flows.max(1));
        flows == self.flows && threads == self.threads
    }

    fn slot(&self, flow: u32) -> Option<usize> {
        (flow < self.flows)
            .then(|| ((flow % self.threads) * self.per_thread + flow / self.threads) as usize)
    }

    /// Stores `flow`'s units of work so far (its driving thread only).
    #[inline]
    pub fn store_units(&self, flow: u32, units: u64) {
        if let Some(at) = self.slot(flow) {
            self.units[at].store(units, Ordering::Relaxed);
        }
    }

    /// Stores `flow`'s lost requests so far (after each loss, never per
    /// call).
    pub fn store_timeouts(&self, flow: u32, timeouts: u64) {
        if let Some(at) = self.slot(flow) {
            self.timeouts[at].store(timeouts, Ordering::Relaxed);
        }
    }

    /// `flow`'s units of work as last stored.
    pub fn units(&self, flow: u32) -> u64 {
        self.slot(flow)
            .map_or(0, |at| self.units[at].load(Ordering::Relaxed))
    }

    /// `flow`'s lost requests as last stored.
    pub fn timeouts(&self, flow: u32) -> u64 {
        self.slot(flow)
            .map_or(0, |at| self.timeouts[at].load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flow_has_its_own_slot_in_its_threads_run() {
        for (flows, threads) in [(1, 1), (7, 3), (10, 2), (5, 8), (1000, 7)] {
            let board = FlowBoard::new(flows, threads);
            let mut seen = std::collections::HashSet::new();
            for f in 0..flows {
                let at = board.slot(f).expect("in range");
                assert!(seen.insert(at), "{flows}/{threads}: slot {at} twice");
                let t = f % board.threads;
                let run = (t * board.per_thread) as usize..((t + 1) * board.per_thread) as usize;
                assert!(run.contains(&at), "flow {f} outside thread {t}'s run");
                board.store_units(f, u64::from(f) + 1);
            }
            for f in 0..flows {
                assert_eq!(board.units(f), u64::from(f) + 1);
            }
            assert!(board.fits(flows, threads));
            assert!(!board.fits(flows + board.threads * 2, threads));
        }
        let board = FlowBoard::new(4, 2);
        board.store_timeouts(3, 9);
        assert_eq!((board.timeouts(3), board.timeouts(2)), (9, 0));
        // A flow the board has no room for reads as nothing.
        assert_eq!(board.units(99), 0);
    }
}
