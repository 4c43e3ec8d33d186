//! STAND-IN
//! for M2's schedule (the lead replaces it at merge): the pairs
//! `--pairs` asks for, and rounds in which no endpoint is in two pairs, by
//! a greedy colouring (not the circle method: more rounds than the real one
//! on a full mesh).

/// One ordered pair: the test runs from `src` to `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    pub src: usize,
    pub dst: usize,
}

/// Which ordered pairs `--pairs` asks for: all (default), same-zone,
/// cross-zone, node=NAME (that endpoint to and from all), parsed from the
/// option's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairFilter {
    All,
    SameZone,
    CrossZone,
    Node(String),
}

impl std::str::FromStr for PairFilter {
    type Err = String;
    fn from_str(text: &str) -> Result<PairFilter, String> {
        match text {
            "all" => Ok(PairFilter::All),
            "same-zone" => Ok(PairFilter::SameZone),
            "cross-zone" => Ok(PairFilter::CrossZone),
            _ => match text.strip_prefix("node=") {
                Some(name) if !name.is_empty() => Ok(PairFilter::Node(name.to_string())),
                _ => Err(format!(
                    "{text:?}: expected all, same-zone, cross-zone or node=NAME"
                )),
            },
        }
    }
}

impl PairFilter {
    /// The ordered pairs of `names` this filter keeps.
    pub fn pairs(&self, names: &[String], zones: &[Option<String>]) -> Result<Vec<Pair>, String> {
        let n = names.len();
        let node = match self {
            PairFilter::Node(name) => Some(
                names
                    .iter()
                    .position(|x| x == name)
                    .ok_or_else(|| format!("node={name}: no endpoint of that name"))?,
            ),
            _ => None,
        };
        if matches!(self, PairFilter::SameZone | PairFilter::CrossZone)
            && zones.iter().any(Option::is_none)
        {
            return Err("same-zone and cross-zone need every endpoint's zone".into());
        }
        let mut out = Vec::new();
        for src in 0..n {
            for dst in (0..n).filter(|&d| d != src) {
                let keep = match self {
                    PairFilter::All => true,
                    PairFilter::SameZone => zones[src] == zones[dst],
                    PairFilter::CrossZone => zones[src] != zones[dst],
                    PairFilter::Node(_) => node == Some(src) || node == Some(dst),
                };
                if keep {
                    out.push(Pair { src, dst });
                }
            }
        }
        Ok(out)
    }
}

/// Rounds: each pair exactly once, no endpoint in two pairs of a round,
/// at most `concurrency` pairs per round. Deterministic.
pub fn rounds(n: usize, pairs: &[Pair], concurrency: Option<usize>) -> Vec<Vec<Pair>> {
    let cap = concurrency.unwrap_or(usize::MAX).max(1);
    let mut left: Vec<Pair> = pairs.to_vec();
    let mut out = Vec::new();
    while !left.is_empty() {
        let mut busy = vec![false; n];
        let mut round = Vec::new();
        left.retain(|p| {
            if round.len() < cap && !busy[p.src] && !busy[p.dst] {
                busy[p.src] = true;
                busy[p.dst] = true;
                round.push(*p);
                false
            } else {
                true
            }
        });
        out.push(round);
    }
    out
}
