//! The mesh's schedule: which ordered pairs `--pairs` asks for, and the
//! rounds they run in, so that no endpoint takes part in two tests at once
//! (two bulk tests sharing a node disturb each other). Pure computation,
//! deterministic: the same endpoints and pairs give the same rounds.
//!
//! The full mesh (every ordered pair among the endpoints of a connected
//! set) is a round-robin tournament by the circle method, played twice,
//! once each way: 2(N−1) rounds of N/2 pairs for N even, 2N rounds of
//! (N−1)/2 for N odd — both the least possible, since every endpoint is in
//! 2(N−1) pairs and a round of N odd leaves one out. Any other set of pairs
//! is an edge colouring: first fit, and when the two ends have no round
//! free in common, the two rounds' alternating path is swapped (Kempe), which
//! reaches the endpoints' most pairs (the least possible) whenever the pairs
//! form a bipartite graph (across two zones, one node against all); the
//! circle method's rounds restricted to the set are kept when they are fewer.

use std::fmt;
use std::str::FromStr;

/// One test: from endpoint `src` to endpoint `dst` (indices into the
/// endpoint list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    pub src: usize,
    pub dst: usize,
}

/// Which ordered pairs `--pairs` asks for: all (default), same-zone,
/// cross-zone, node=NAME (that endpoint to and from all), parsed from the
/// option's text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PairFilter {
    #[default]
    All,
    SameZone,
    CrossZone,
    Node(String),
}

const FORMS: &str = "all, same-zone, cross-zone or node=NAME";

impl FromStr for PairFilter {
    type Err = String;

    fn from_str(text: &str) -> Result<PairFilter, String> {
        let text = text.trim();
        if let Some(name) = text.strip_prefix("node=") {
            let name = name.trim();
            if name.is_empty() {
                return Err("node= needs an endpoint's name (node=NAME, NAME as given)".into());
            }
            return Ok(PairFilter::Node(name.to_string()));
        }
        match text.to_ascii_lowercase().as_str() {
            "all" => Ok(PairFilter::All),
            "same-zone" => Ok(PairFilter::SameZone),
            "cross-zone" => Ok(PairFilter::CrossZone),
            _ => Err(format!("unknown pair set '{text}': expected {FORMS}")),
        }
    }
}

impl fmt::Display for PairFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairFilter::All => f.write_str("all"),
            PairFilter::SameZone => f.write_str("same-zone"),
            PairFilter::CrossZone => f.write_str("cross-zone"),
            PairFilter::Node(name) => write!(f, "node={name}"),
        }
    }
}

impl PairFilter {
    /// The ordered pairs, sorted by source then destination. `names` and
    /// `zones` are per endpoint. An error (one line, saying why) when the
    /// set is empty or cannot be made: a zone filter with endpoints whose
    /// zone is unknown, a node that no endpoint (or more than one) is named.
    pub fn pairs(&self, names: &[String], zones: &[Option<String>]) -> Result<Vec<Pair>, String> {
        let n = names.len();
        if zones.len() != n {
            return Err(format!("{n} endpoints but {} zones", zones.len()));
        }
        if n < 2 {
            return Err(format!("a mesh needs at least two endpoints ({n} given)"));
        }
        if matches!(self, PairFilter::SameZone | PairFilter::CrossZone) {
            let unknown: Vec<&str> = (0..n)
                .filter(|&i| zones[i].is_none())
                .map(|i| names[i].as_str())
                .collect();
            if !unknown.is_empty() {
                return Err(format!(
                    "--pairs {self} needs every endpoint's zone; {} of {n} have none ({})",
                    unknown.len(),
                    list_some(&unknown)
                ));
            }
        }
        let keep: Box<dyn Fn(usize, usize) -> bool> = match self {
            PairFilter::All => Box::new(|_, _| true),
            PairFilter::SameZone => Box::new(|i, j| zones[i] == zones[j]),
            PairFilter::CrossZone => Box::new(|i, j| zones[i] != zones[j]),
            PairFilter::Node(name) => {
                let matching: Vec<usize> = (0..n).filter(|&i| names[i] == *name).collect();
                let node = match matching[..] {
                    [one] => one,
                    [] => {
                        let all: Vec<&str> = names.iter().map(String::as_str).collect();
                        return Err(format!(
                            "--pairs node={name}: no endpoint is named {name} (the endpoints: {})",
                            list_some(&all)
                        ));
                    }
                    _ => {
                        return Err(format!(
                            "--pairs node={name}: {} endpoints are named {name}",
                            matching.len()
                        ))
                    }
                };
                Box::new(move |i, j| i == node || j == node)
            }
        };
        let pairs: Vec<Pair> = (0..n)
            .flat_map(|src| (0..n).map(move |dst| Pair { src, dst }))
            .filter(|p| p.src != p.dst && keep(p.src, p.dst))
            .collect();
        if pairs.is_empty() {
            let why = match self {
                PairFilter::SameZone => "every zone has a single endpoint",
                _ => "every endpoint is in the same zone",
            };
            return Err(format!("--pairs {self}: no pairs to measure ({why})"));
        }
        Ok(pairs)
    }
}

/// The first few of a list, and how many more.
fn list_some(items: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut text = items[..items.len().min(SHOWN)].join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

/// Rounds: each pair exactly once, no endpoint in two pairs of a round; for
/// all N(N−1) ordered pairs 2(N−1) rounds (N even) or 2N (N odd) by the
/// circle method, each unordered pair's two directions in different rounds;
/// a subset by edge colouring (see the module's comment); `concurrency`
/// caps pairs per round (`Some(1)`: one at a time; `Some(0)` is taken as 1).
/// A pair listed twice is scheduled once; one with `src == dst` or an index
/// not below `n` cannot be a test and is left out. Each round's pairs are
/// sorted. Deterministic.
pub fn rounds(n: usize, pairs: &[Pair], concurrency: Option<usize>) -> Vec<Vec<Pair>> {
    let mut pairs: Vec<Pair> = pairs
        .iter()
        .copied()
        .filter(|p| p.src != p.dst && p.src < n && p.dst < n)
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let sets = components(n, &pairs);
    let mut set_of = vec![0usize; n];
    for (k, set) in sets.iter().enumerate() {
        for &i in set {
            set_of[i] = k;
        }
    }
    let mut owned: Vec<Vec<Pair>> = vec![Vec::new(); sets.len()];
    for &p in &pairs {
        owned[set_of[p.src]].push(p);
    }
    let mut rounds = Vec::new();
    for (component, own) in sets.iter().zip(owned) {
        let full = circle(component);
        let scheduled = if own.len() == component.len() * (component.len() - 1) {
            full
        } else {
            let circle = project(&full, &own);
            // Coloured in the circle's order (which starts it near a good
            // colouring: for 1,000 endpoints in 4 zones, cross-zone, the
            // same rounds as the sorted order in a seventeenth of the time),
            // and the circle's own rounds kept when they are as few.
            let in_circle_order: Vec<Pair> = circle.iter().flatten().copied().collect();
            let coloured = colour(n, &in_circle_order);
            if coloured.len() < circle.len() {
                coloured
            } else {
                circle
            }
        };
        // Components share no endpoint: their k-th rounds run together.
        for (k, round) in scheduled.into_iter().enumerate() {
            if k == rounds.len() {
                rounds.push(Vec::new());
            }
            rounds[k].extend(round);
        }
    }
    for round in &mut rounds {
        round.sort_unstable();
    }
    match concurrency {
        Some(cap) => limit(rounds, cap.max(1)),
        None => rounds,
    }
}

/// The endpoints of each connected set of pairs (direction ignored), each
/// sorted, in order of their lowest endpoint.
fn components(n: usize, pairs: &[Pair]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut used = vec![false; n];
    for p in pairs {
        used[p.src] = true;
        used[p.dst] = true;
        let (a, b) = (root(&mut parent, p.src), root(&mut parent, p.dst));
        parent[a.max(b)] = a.min(b);
    }
    let mut sets: Vec<Vec<usize>> = Vec::new();
    let mut index_of_root = vec![usize::MAX; n];
    for i in (0..n).filter(|&i| used[i]) {
        let r = root(&mut parent, i);
        if index_of_root[r] == usize::MAX {
            index_of_root[r] = sets.len();
            sets.push(Vec::new());
        }
        sets[index_of_root[r]].push(i);
    }
    sets
}

/// The full mesh among `members` by the circle method: one endpoint fixed
/// (a stand-in "bye" when their number is odd), the others rotating; the
/// first M−1 rounds one way, the next M−1 the other way round.
fn circle(members: &[usize]) -> Vec<Vec<Pair>> {
    let m = members.len();
    let even = m + m % 2;
    if m < 2 {
        return Vec::new();
    }
    let turns = even - 1;
    let mut half = Vec::with_capacity(turns);
    for r in 0..turns {
        let mut round = Vec::with_capacity(even / 2);
        // The fixed endpoint alternates sending and receiving, so that the
        // first half's rounds are not all it sending.
        let fixed = if r % 2 == 0 {
            (even - 1, r)
        } else {
            (r, even - 1)
        };
        round.push(fixed);
        for k in 1..even / 2 {
            round.push(((r + k) % turns, (r + turns - k) % turns));
        }
        half.push(round);
    }
    let to_pairs = |round: &Vec<(usize, usize)>, flip: bool| -> Vec<Pair> {
        round
            .iter()
            .filter(|&&(a, b)| a < m && b < m)
            .map(|&(a, b)| {
                let (a, b) = if flip { (b, a) } else { (a, b) };
                Pair {
                    src: members[a],
                    dst: members[b],
                }
            })
            .collect()
    };
    let mut all: Vec<Vec<Pair>> = half.iter().map(|r| to_pairs(r, false)).collect();
    all.extend(half.iter().map(|r| to_pairs(r, true)));
    all
}

/// `rounds` restricted to `wanted` (sorted), empty rounds dropped.
fn project(rounds: &[Vec<Pair>], wanted: &[Pair]) -> Vec<Vec<Pair>> {
    rounds
        .iter()
        .map(|round| {
            round
                .iter()
                .copied()
                .filter(|p| wanted.binary_search(p).is_ok())
                .collect::<Vec<Pair>>()
        })
        .filter(|round| !round.is_empty())
        .collect()
}

/// An edge colouring of `pairs` (a multigraph: i→j and j→i are two edges),
/// each colour a round. First fit; when the two ends have no free colour in
/// common, swap the alternating path of a colour free at one end and one
/// free at the other, which frees the first at both unless the path joins
/// the two ends (never in a bipartite graph); else a new colour.
fn colour(n: usize, pairs: &[Pair]) -> Vec<Vec<Pair>> {
    const TRIES: usize = 4;
    let mut slots = Slots::new(n);
    let mut colour_of = vec![0usize; pairs.len()];
    let other = |e: usize, v: usize| {
        if pairs[e].src == v {
            pairs[e].dst
        } else {
            pairs[e].src
        }
    };
    let mut path: Vec<usize> = Vec::new();
    for (e, p) in pairs.iter().enumerate() {
        let (u, v) = (p.src, p.dst);
        let mut chosen = slots.free_at_both(u, v);
        if chosen.is_none() {
            // A few colours free at each end; the first pair of them whose
            // alternating path from v does not reach u.
            let at_u = slots.free_at(u, TRIES);
            let at_v = slots.free_at(v, TRIES);
            'found: for &a in &at_u {
                'pair: for &b in &at_v {
                    // Walk from v along a, b, a, ...; v has no b edge, so
                    // this is a path, and it can reach u only at its end.
                    path.clear();
                    let (mut x, mut want) = (v, a);
                    while let Some(edge) = slots.edge(x, want) {
                        path.push(edge);
                        x = other(edge, x);
                        if x == u {
                            continue 'pair;
                        }
                        want = if want == a { b } else { a };
                    }
                    for &edge in &path {
                        slots.clear(pairs[edge], colour_of[edge]);
                    }
                    for &edge in &path {
                        colour_of[edge] = if colour_of[edge] == a { b } else { a };
                        slots.set(pairs[edge], colour_of[edge], edge);
                    }
                    chosen = Some(a);
                    break 'found;
                }
            }
        }
        let c = chosen.unwrap_or_else(|| slots.add_colour());
        slots.set(*p, c, e);
        colour_of[e] = c;
    }
    let mut rounds = vec![Vec::new(); slots.colours];
    for (e, &c) in colour_of.iter().enumerate() {
        rounds[c].push(pairs[e]);
    }
    rounds.retain(|r| !r.is_empty());
    rounds
}

/// Which pair each endpoint is in at each colour, with a bit set per busy
/// colour so that a free one is found a word at a time.
struct Slots {
    colours: usize,
    /// at[v][c]: the pair (index) endpoint v is in at colour c.
    at: Vec<Vec<u32>>,
    busy: Vec<Vec<u64>>,
}

impl Slots {
    const NONE: u32 = u32::MAX;

    fn new(n: usize) -> Slots {
        Slots {
            colours: 0,
            at: vec![Vec::new(); n],
            busy: vec![Vec::new(); n],
        }
    }

    fn add_colour(&mut self) -> usize {
        self.colours += 1;
        let words = self.colours.div_ceil(64);
        for v in 0..self.at.len() {
            self.at[v].resize(self.colours, Slots::NONE);
            self.busy[v].resize(words, 0);
        }
        self.colours - 1
    }

    fn edge(&self, v: usize, c: usize) -> Option<usize> {
        let e = self.at[v][c];
        (e != Slots::NONE).then_some(e as usize)
    }

    fn set(&mut self, p: Pair, c: usize, e: usize) {
        for v in [p.src, p.dst] {
            self.at[v][c] = e as u32;
            self.busy[v][c / 64] |= 1 << (c % 64);
        }
    }

    fn clear(&mut self, p: Pair, c: usize) {
        for v in [p.src, p.dst] {
            self.at[v][c] = Slots::NONE;
            self.busy[v][c / 64] &= !(1 << (c % 64));
        }
    }

    /// The lowest colour free at both.
    fn free_at_both(&self, u: usize, v: usize) -> Option<usize> {
        let words = self.busy[u].iter().zip(&self.busy[v]);
        for (w, (a, b)) in words.enumerate() {
            let c = w * 64 + (!(a | b)).trailing_zeros() as usize;
            if (a | b) != u64::MAX && c < self.colours {
                return Some(c);
            }
        }
        None
    }

    /// The lowest `most` colours free at v.
    fn free_at(&self, v: usize, most: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(most);
        for (w, &word) in self.busy[v].iter().enumerate() {
            let mut free = !word;
            while free != 0 && out.len() < most {
                let c = w * 64 + free.trailing_zeros() as usize;
                if c >= self.colours {
                    return out;
                }
                out.push(c);
                free &= free - 1;
            }
        }
        out
    }
}

/// At most `cap` pairs a round: the rounds' pairs in order, each added to
/// the round being filled unless it is full or holds one of the pair's
/// endpoints (only possible across a boundary of the original rounds).
fn limit(rounds: Vec<Vec<Pair>>, cap: usize) -> Vec<Vec<Pair>> {
    let mut out: Vec<Vec<Pair>> = Vec::new();
    let mut current: Vec<Pair> = Vec::new();
    for p in rounds.into_iter().flatten() {
        let clash = current
            .iter()
            .any(|q| q.src == p.src || q.src == p.dst || q.dst == p.src || q.dst == p.dst);
        if current.len() == cap || clash {
            out.push(std::mem::take(&mut current));
        }
        current.push(p);
    }
    if !current.is_empty() {
        out.push(current);
    }
    for round in &mut out {
        round.sort_unstable();
    }
    out
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
