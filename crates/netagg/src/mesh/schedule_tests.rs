use super::*;
use std::collections::BTreeSet;

/// Every wanted pair exactly once, nothing else, no endpoint twice in a
/// round, no round empty or over `cap`.
fn check(n: usize, wanted: &[Pair], rounds: &[Vec<Pair>], cap: Option<usize>) {
    let mut seen = BTreeSet::new();
    for (k, round) in rounds.iter().enumerate() {
        assert!(!round.is_empty(), "round {k} is empty");
        if let Some(cap) = cap {
            assert!(round.len() <= cap, "round {k} has {} pairs", round.len());
        }
        let mut busy = vec![false; n];
        for p in round {
            for end in [p.src, p.dst] {
                assert!(!busy[end], "endpoint {end} twice in round {k}: {round:?}");
                busy[end] = true;
            }
            assert!(seen.insert(*p), "{p:?} scheduled twice");
        }
    }
    let wanted: BTreeSet<Pair> = wanted.iter().copied().collect();
    assert_eq!(seen, wanted);
}

fn all_pairs(n: usize) -> Vec<Pair> {
    let names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    PairFilter::All.pairs(&names, &vec![None; n]).unwrap()
}

/// The most pairs any one endpoint is in: no schedule has fewer rounds.
fn degree(n: usize, pairs: &[Pair]) -> usize {
    let mut d = vec![0; n];
    for p in pairs {
        d[p.src] += 1;
        d[p.dst] += 1;
    }
    d.into_iter().max().unwrap_or(0)
}

fn zoned(sizes: &[usize]) -> (Vec<String>, Vec<Option<String>>) {
    let mut names = Vec::new();
    let mut zones = Vec::new();
    for (z, &size) in sizes.iter().enumerate() {
        for i in 0..size {
            names.push(format!("z{z}n{i}"));
            zones.push(Some(format!("zone-{z}")));
        }
    }
    (names, zones)
}

#[test]
fn the_full_mesh_takes_2n_minus_2_rounds_for_n_even_and_2n_for_n_odd() {
    for n in 2..=21 {
        let pairs = all_pairs(n);
        let rounds = rounds(n, &pairs, None);
        check(n, &pairs, &rounds, None);
        let (expected, per_round) = if n % 2 == 0 {
            (2 * (n - 1), n / 2)
        } else {
            (2 * n, (n - 1) / 2)
        };
        assert_eq!(rounds.len(), expected, "n = {n}");
        assert!(rounds.iter().all(|r| r.len() == per_round), "n = {n}");
        // Each unordered pair's two directions are in different rounds.
        for round in &rounds {
            for p in round {
                let back = Pair {
                    src: p.dst,
                    dst: p.src,
                };
                assert!(!round.contains(&back));
            }
        }
    }
}

#[test]
fn a_thousand_endpoints_are_scheduled_in_1998_rounds() {
    let pairs = all_pairs(1000);
    let rounds = rounds(1000, &pairs, None);
    assert_eq!(rounds.len(), 1998);
    check(1000, &pairs, &rounds, None);
}

#[test]
fn no_pairs_no_rounds_and_bad_pairs_are_left_out() {
    assert!(rounds(0, &[], None).is_empty());
    assert!(rounds(1, &[], None).is_empty());
    let p = |src, dst| Pair { src, dst };
    let given = [p(0, 1), p(0, 1), p(2, 2), p(0, 7), p(1, 0)];
    let rounds = rounds(3, &given, None);
    check(3, &[p(0, 1), p(1, 0)], &rounds, None);
    assert_eq!(rounds.len(), 2);
}

#[test]
fn same_zone_runs_the_zones_side_by_side() {
    let (names, zones) = zoned(&[5, 3, 4]);
    let n = names.len();
    let pairs = PairFilter::SameZone.pairs(&names, &zones).unwrap();
    assert_eq!(pairs.len(), 5 * 4 + 3 * 2 + 4 * 3);
    assert!(pairs.iter().all(|p| zones[p.src] == zones[p.dst]));
    let rounds = rounds(n, &pairs, None);
    check(n, &pairs, &rounds, None);
    // The largest zone's own full mesh: 5 endpoints, 2·5 rounds.
    assert_eq!(rounds.len(), 10);
}

#[test]
fn cross_zone_between_two_zones_takes_the_least_rounds() {
    for sizes in [[4, 6], [5, 5], [1, 7], [8, 3]] {
        let (names, zones) = zoned(&sizes);
        let n = names.len();
        let pairs = PairFilter::CrossZone.pairs(&names, &zones).unwrap();
        assert_eq!(pairs.len(), 2 * sizes[0] * sizes[1]);
        let rounds = rounds(n, &pairs, None);
        check(n, &pairs, &rounds, None);
        // Bipartite: as many rounds as the busiest endpoint has pairs.
        assert_eq!(rounds.len(), degree(n, &pairs), "{sizes:?}");
    }
}

#[test]
fn cross_zone_among_three_zones_is_near_the_least() {
    for sizes in [[4, 4, 4], [3, 5, 6], [10, 10, 10]] {
        let (names, zones) = zoned(&sizes);
        let n = names.len();
        let pairs = PairFilter::CrossZone.pairs(&names, &zones).unwrap();
        let rounds = rounds(n, &pairs, None);
        check(n, &pairs, &rounds, None);
        let least = degree(n, &pairs).max(pairs.len().div_ceil(n / 2));
        assert!(
            rounds.len() <= least + 2,
            "{sizes:?}: {} rounds, least {least}",
            rounds.len()
        );
    }
}

#[test]
fn one_node_against_all_is_one_pair_a_round() {
    let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
    let pairs = PairFilter::Node("c".into())
        .pairs(&names, &[None, None, None, None, None])
        .unwrap();
    assert_eq!(pairs.len(), 8);
    assert!(pairs.iter().all(|p| p.src == 2 || p.dst == 2));
    let rounds = rounds(5, &pairs, None);
    check(5, &pairs, &rounds, None);
    assert_eq!(rounds.len(), 8);
}

#[test]
fn arbitrary_subsets_are_valid_and_within_the_greedy_bound() {
    // A fixed pseudo-random walk over subsets (no rand needed for this).
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..200 {
        let n = 2 + (next() % 24) as usize;
        let keep = 1 + next() % 9; // keep about keep/10 of the pairs
        let pairs: Vec<Pair> = all_pairs(n)
            .into_iter()
            .filter(|_| next() % 10 < keep)
            .collect();
        let r = rounds(n, &pairs, None);
        check(n, &pairs, &r, None);
        let d = degree(n, &pairs);
        assert!(
            r.len() <= (2 * d).saturating_sub(1).max(d),
            "n {n}: {} rounds, degree {d}",
            r.len()
        );
        assert_eq!(r, rounds(n, &pairs, None), "deterministic");
    }
}

#[test]
fn concurrency_caps_the_pairs_of_a_round() {
    let pairs = all_pairs(10);
    let one = rounds(10, &pairs, Some(1));
    check(10, &pairs, &one, Some(1));
    assert_eq!(one.len(), 90);
    assert_eq!(rounds(10, &pairs, Some(0)), one, "0 is taken as 1");
    for cap in [2, 3, 4] {
        let r = rounds(10, &pairs, Some(cap));
        check(10, &pairs, &r, Some(cap));
        let least = 90usize.div_ceil(cap);
        assert!(
            r.len() <= least + least / 10 + 1,
            "cap {cap}: {} rounds",
            r.len()
        );
    }
    assert_eq!(rounds(10, &pairs, Some(5)), rounds(10, &pairs, None));
    assert_eq!(rounds(10, &pairs, Some(99)), rounds(10, &pairs, None));
}

#[test]
fn pair_sets_parse_from_the_options_text() {
    assert_eq!("all".parse(), Ok(PairFilter::All));
    assert_eq!(" Same-Zone ".parse(), Ok(PairFilter::SameZone));
    assert_eq!("cross-zone".parse(), Ok(PairFilter::CrossZone));
    assert_eq!(
        "node=gke-a-1".parse(),
        Ok(PairFilter::Node("gke-a-1".into()))
    );
    assert_eq!(
        "node=10.0.0.7".parse(),
        Ok(PairFilter::Node("10.0.0.7".into()))
    );
    for text in ["all", "same-zone", "cross-zone", "node=x"] {
        assert_eq!(text.parse::<PairFilter>().unwrap().to_string(), text);
    }
    let err = "node=".parse::<PairFilter>().unwrap_err();
    assert!(err.contains("node=NAME"), "{err}");
    let err = "zones".parse::<PairFilter>().unwrap_err();
    assert_eq!(
        err,
        "unknown pair set 'zones': expected all, same-zone, cross-zone or node=NAME"
    );
    assert!("".parse::<PairFilter>().is_err());
}

#[test]
fn pair_sets_that_cannot_be_made_say_why() {
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let some = |z: &str| Some(z.to_string());
    let err = PairFilter::SameZone
        .pairs(&names, &[some("x"), None, None])
        .unwrap_err();
    assert_eq!(
        err,
        "--pairs same-zone needs every endpoint's zone; 2 of 3 have none (b, c)"
    );
    let err = PairFilter::CrossZone
        .pairs(&names, &[some("x"), some("x"), some("x")])
        .unwrap_err();
    assert_eq!(
        err,
        "--pairs cross-zone: no pairs to measure (every endpoint is in the same zone)"
    );
    let err = PairFilter::SameZone
        .pairs(&names, &[some("x"), some("y"), some("z")])
        .unwrap_err();
    assert!(err.contains("every zone has a single endpoint"), "{err}");
    let err = PairFilter::Node("d".into())
        .pairs(&names, &[None, None, None])
        .unwrap_err();
    assert_eq!(
        err,
        "--pairs node=d: no endpoint is named d (the endpoints: a, b, c)"
    );
    let twice: Vec<String> = ["a", "a", "b"].map(String::from).to_vec();
    let err = PairFilter::Node("a".into())
        .pairs(&twice, &[None, None, None])
        .unwrap_err();
    assert!(err.contains("2 endpoints are named a"), "{err}");
    let err = PairFilter::All.pairs(&names, &[None]).unwrap_err();
    assert!(err.contains("3 endpoints but 1 zones"), "{err}");
    let err = PairFilter::All.pairs(&names[..1], &[None]).unwrap_err();
    assert!(err.contains("at least two endpoints"), "{err}");
    let many: Vec<String> = (0..8).map(|i| format!("n{i}")).collect();
    let err = PairFilter::SameZone
        .pairs(&many, &vec![None; 8])
        .unwrap_err();
    assert!(err.ends_with("(n0, n1, n2, n3, n4 and 3 more)"), "{err}");
}
