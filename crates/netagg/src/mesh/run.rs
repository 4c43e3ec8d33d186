//! The mesh run: round after round, test after test, every pair of the
//! round asked at once to start on one clock (`start_in_ms` to a common
//! instant), each from its source endpoint's netserver (`remote`); the
//! answers become the pairs' outcomes. A signal stops it between answers:
//! what finished is kept, the rest is marked missing. Then, unless told
//! not to, the confirmation round: every pair a path finding names is
//! measured once more (scheduled as the mesh is, no endpoint in two tests
//! at once), and a path finding stays only when its second measurement
//! stands out too (`Mesh::analyse`): a cell far off by chance rarely is
//! twice.

use super::model::{metrics_of, read_record, Endpoint, FindingKind, Mesh, Outcome, PairRun};
use super::remote::{run_origin, MeshKey, OriginRequest, RemoteError};
use super::schedule::{rounds, Pair};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The lead from the requests to the round's common start: room for every
/// source to be reached and to authenticate first; longer for a big round.
const LEAD_MS: u64 = 500;
const LEAD_PER_PAIR_MS: u64 = 10;
const LEAD_MAX_MS: u64 = 10_000;
/// Beyond its length and lead, how long an answer is waited for (the
/// netserver ends its child at its length + 30 s).
const ANSWER_GRACE: Duration = Duration::from_secs(45);
/// What a test costs beyond its length and lead: the netperf set-up and
/// the answer (for the time printed before the start).
const OVERHEAD_SECS: f64 = 0.5;
/// How often the wait for answers looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

/// Everything checked, before any traffic.
pub struct Plan {
    pub endpoints: Vec<Endpoint>,
    /// Each endpoint's netserver (control port), where it is asked.
    pub controls: Vec<SocketAddr>,
    pub tests: Vec<String>,
    pub duration: u32,
    pub pairs_asked: String,
    pub concurrency: Option<usize>,
    pub rounds: Vec<Vec<Pair>>,
    pub key: Arc<MeshKey>,
    /// Measure every pair a path finding names once more (not --no-confirm).
    pub confirm: bool,
}

fn lead(pairs: usize) -> Duration {
    Duration::from_millis((LEAD_MS + LEAD_PER_PAIR_MS * pairs as u64).min(LEAD_MAX_MS))
}

impl Plan {
    /// Seconds the mesh should take: every round, every test, each its
    /// length, its lead and the overhead.
    pub fn expected_seconds(&self) -> f64 {
        let per_test: f64 = self
            .rounds
            .iter()
            .map(|r| f64::from(self.duration) + lead(r.len()).as_secs_f64() + OVERHEAD_SECS)
            .sum();
        per_test * self.tests.len() as f64
    }

    fn name(&self, i: usize) -> &str {
        &self.endpoints[i].name
    }
}

/// One answer: the pair's index in the mesh, when it was asked and
/// answered, and the answer.
type Answer = (usize, f64, f64, Result<serde_json::Value, RemoteError>);

/// Runs the mesh; `tell` gets the progress lines. Always returns the mesh
/// (interrupted or not), its grids and findings made.
pub fn run(
    plan: Plan,
    command_line: String,
    stop: &AtomicBool,
    tell: &mut dyn FnMut(&str),
) -> Mesh {
    let start = Instant::now();
    let epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut mesh = Mesh {
        started: netperf_base::timefmt::utc_timestamp(epoch),
        start_epoch: epoch.as_secs_f64(),
        command_line,
        duration: plan.duration,
        tests: plan.tests.clone(),
        pairs_asked: plan.pairs_asked.clone(),
        concurrency: plan.concurrency,
        rounds: plan.rounds.len(),
        elapsed: 0.0,
        endpoints: plan.endpoints.clone(),
        pairs: Vec::new(),
        grids: Vec::new(),
        findings: Vec::new(),
        interrupted: false,
        not_confirmed: 0,
    };
    // Every pair's test, in the order it runs, missing until it answers.
    let mut steps: Vec<(usize, Vec<usize>)> = Vec::new();
    for (r, round) in plan.rounds.iter().enumerate() {
        for test in &plan.tests {
            let first = mesh.pairs.len();
            mesh.pairs.extend(
                round
                    .iter()
                    .map(|p| PairRun::waiting(p.src, p.dst, test, r + 1)),
            );
            steps.push((r, (first..mesh.pairs.len()).collect()));
        }
    }
    // Sources whose netserver does not run mesh tests: not asked again.
    let mut not_mesh: Vec<Option<String>> = vec![None; plan.endpoints.len()];
    let clock = Clock { start, stop };
    let total = plan.rounds.len();
    for (r, members) in &steps {
        let label = format!("round {}/{total}", r + 1);
        if !run_step(
            &plan,
            &clock,
            &mut mesh.pairs,
            members,
            &label,
            &mut not_mesh,
            tell,
        ) {
            break;
        }
    }
    mesh.interrupted = mesh
        .pairs
        .iter()
        .any(|p| matches!(p.outcome, Outcome::Missing(_)));
    mesh.analyse();
    if plan.confirm && !stop.load(Ordering::Relaxed) {
        confirm(&plan, &clock, &mut mesh, &mut not_mesh, tell);
    }
    mesh.elapsed = start.elapsed().as_secs_f64();
    mesh
}

/// The mesh's start and its stop flag.
struct Clock<'a> {
    start: Instant,
    stop: &'a AtomicBool,
}

/// The confirmation round: each pair a path finding names, for that
/// finding's test, measured once more; its answer is kept as the pair's
/// `confirmation` and the findings made again.
fn confirm(
    plan: &Plan,
    clock: &Clock,
    mesh: &mut Mesh,
    not_mesh: &mut [Option<String>],
    tell: &mut dyn FnMut(&str),
) {
    let named: Vec<(usize, usize, &str)> = mesh
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Path)
        .filter_map(|f| {
            let (src, dst) = (mesh.index(&f.endpoints[0])?, mesh.index(&f.endpoints[1])?);
            let test = plan
                .tests
                .iter()
                .find(|t| metrics_of(t).any(|m| m.id == f.metric))?;
            Some((src, dst, test.as_str()))
        })
        .collect();
    if named.is_empty() {
        return;
    }
    let pairs: Vec<Pair> = named
        .iter()
        .map(|&(src, dst, _)| Pair { src, dst })
        .collect();
    let schedule = rounds(plan.endpoints.len(), &pairs, plan.concurrency);
    tell(&format!(
        "confirmation: {} path finding(s) measured again in {} round(s)",
        named.len(),
        schedule.len()
    ));
    let mut again: Vec<PairRun> = Vec::new();
    let mut steps = Vec::new();
    for (r, round) in schedule.iter().enumerate() {
        for test in &plan.tests {
            let first = again.len();
            for p in round {
                if named.contains(&(p.src, p.dst, test.as_str()))
                    && !again[first..]
                        .iter()
                        .any(|a| (a.src, a.dst) == (p.src, p.dst))
                {
                    again.push(PairRun::waiting(p.src, p.dst, test, r + 1));
                }
            }
            if again.len() > first {
                steps.push((r, (first..again.len()).collect::<Vec<_>>()));
            }
        }
    }
    for (r, members) in &steps {
        let label = format!("confirmation {}/{}", r + 1, schedule.len());
        if !run_step(plan, clock, &mut again, members, &label, not_mesh, tell) {
            break;
        }
    }
    for a in again {
        if let Some(p) = mesh
            .pairs
            .iter_mut()
            .find(|p| (p.src, p.dst, &p.test) == (a.src, a.dst, &a.test))
        {
            p.confirmation = Some((a.span, a.outcome));
        }
    }
    mesh.analyse();
    if mesh.not_confirmed > 0 {
        tell(&format!(
            "{} path finding(s) not confirmed by the second measurement: dropped",
            mesh.not_confirmed
        ));
    }
}

/// One test of one round: every member pair asked at once to start on one
/// clock, their answers written into `pairs`. False when a signal stopped
/// it (what had not answered is marked missing).
fn run_step(
    plan: &Plan,
    clock: &Clock,
    pairs: &mut [PairRun],
    members: &[usize],
    label: &str,
    not_mesh: &mut [Option<String>],
    tell: &mut dyn FnMut(&str),
) -> bool {
    let (start, stop) = (clock.start, clock.stop);
    if stop.load(Ordering::Relaxed) {
        return false;
    }
    let test = &pairs[members[0]].test;
    let list: Vec<String> = members
        .iter()
        .map(|&k| format!("{} -> {}", plan.name(pairs[k].src), plan.name(pairs[k].dst)))
        .collect();
    tell(&format!("{label} {test}: {}", list.join(", ")));
    let at = Instant::now() + lead(members.len());
    let (send, answers) = mpsc::channel::<Answer>();
    let mut waiting = 0;
    for &k in members {
        let pair = &pairs[k];
        if let Some(why) = &not_mesh[pair.src] {
            pairs[k].outcome = Outcome::Failed(why.clone());
            continue;
        }
        let request = OriginRequest {
            test: pair.test.clone(),
            destination: plan.controls[pair.dst].ip(),
            port: plan.controls[pair.dst].port(),
            duration_secs: plan.duration,
            start_in_ms: 0,
        };
        let (control, key, send) = (plan.controls[pair.src], Arc::clone(&plan.key), send.clone());
        let timeout =
            lead(members.len()) + Duration::from_secs(u64::from(plan.duration)) + ANSWER_GRACE;
        waiting += 1;
        std::thread::spawn(move || {
            let asked = start.elapsed().as_secs_f64();
            let request = OriginRequest {
                start_in_ms: u32::try_from(
                    at.saturating_duration_since(Instant::now()).as_millis(),
                )
                .unwrap_or(u32::MAX),
                ..request
            };
            let answer = run_origin(control, &key, &request, timeout);
            let _ = send.send((k, asked, start.elapsed().as_secs_f64(), answer));
        });
    }
    drop(send);
    while waiting > 0 {
        if stop.load(Ordering::Relaxed) {
            for &k in members {
                if pairs[k].span.is_none() && matches!(pairs[k].outcome, Outcome::Missing(_)) {
                    pairs[k].outcome = Outcome::Missing("interrupted while it ran".into());
                }
            }
            break;
        }
        let (k, asked, answered, answer) = match answers.recv_timeout(POLL) {
            Ok(a) => a,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        waiting -= 1;
        let pair = &mut pairs[k];
        pair.span = Some((asked, answered));
        pair.outcome = match answer {
            Ok(record) => match read_record(&pair.test, &record) {
                Ok(figures) => Outcome::Ok(figures),
                Err(why) => Outcome::Failed(why),
            },
            Err(RemoteError::NotMesh(why)) => {
                not_mesh[pair.src] = Some(why.clone());
                Outcome::Failed(why)
            }
            Err(e) => Outcome::Failed(e.to_string()),
        };
        if let Outcome::Failed(why) = &pair.outcome {
            let (s, d) = (plan.name(pair.src), plan.name(pair.dst));
            tell(&format!("{s} -> {d} {} failed: {why}", pair.test));
        }
    }
    true
}
