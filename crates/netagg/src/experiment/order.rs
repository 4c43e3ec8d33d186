//! The run order: every (cell, replicate) pair once, shuffled by a seeded
//! ChaCha8 Fisher-Yates shuffle. It plays the part of the write-up's coin
//! flips (`$RANDOM` per iteration) without their imbalance: every cell gets
//! exactly its replicates, and the same seed gives the same order.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// (cell index, replicate from 1) in the order they run.
pub fn run_order(cells: usize, replicates: u32, seed: u64) -> Vec<(usize, u32)> {
    let mut order: Vec<(usize, u32)> = (0..cells)
        .flat_map(|cell| (1..=replicates).map(move |r| (cell, r)))
        .collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    // Replicate numbers follow the order they run in, within each cell.
    let mut seen = vec![0u32; cells];
    for (cell, replicate) in order.iter_mut() {
        seen[*cell] += 1;
        *replicate = seen[*cell];
    }
    order
}

/// A seed for an experiment that was given none (recorded, so the order
/// can be repeated).
pub fn new_seed() -> u64 {
    uuid::Uuid::new_v4().as_u64_pair().0 >> 11
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_gets_its_replicates_once_in_a_seeded_order() {
        let order = run_order(8, 5, 42);
        assert_eq!(order.len(), 40);
        for cell in 0..8 {
            let reps: Vec<u32> = order
                .iter()
                .filter(|(c, _)| *c == cell)
                .map(|(_, r)| *r)
                .collect();
            assert_eq!(reps, [1, 2, 3, 4, 5]);
        }
        assert_eq!(order, run_order(8, 5, 42));
        assert_ne!(order, run_order(8, 5, 43));
        let sorted: Vec<(usize, u32)> = (0..8).flat_map(|c| (1..=5).map(move |r| (c, r))).collect();
        assert_ne!(order, sorted, "shuffled");
        assert!(run_order(0, 5, 1).is_empty());
    }

    #[test]
    fn new_seeds_differ_and_fit_a_json_number() {
        let (a, b) = (new_seed(), new_seed());
        assert_ne!(a, b);
        assert!(a < 1 << 53 && b < 1 << 53);
    }
}
