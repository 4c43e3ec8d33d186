//! The start gate of a level: set-up turns per load generator (at most
//! `setup_concurrency` at once), the tests waiting at the gate once set up,
//! and the coordinator opening it when every test is set up or has failed,
//! or the level's set-up limit passed. Slots are the level's tests.

use super::{lock, LaunchSettings, Stream, LOOK_EVERY, RUN_WAIT, SETUP_LIMIT, SETUP_WAIT};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Where a stream of a starting level is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Slot {
    /// Waiting for a set-up turn, or setting up.
    SettingUp,
    /// Set up; waiting at the gate since then.
    Ready(Instant),
    /// Its thread ended before the gate opened (an error).
    Ended,
    /// Given up by the coordinator: it must not start.
    CalledOff(Why),
}

/// Why the coordinator gave a stream up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Why {
    /// Its set-up took longer than SETUP_WAIT.
    Slow,
    /// The level's SETUP_LIMIT passed before it had a turn or was done.
    Limit,
}

impl Why {
    pub(super) fn detail(self) -> String {
        match self {
            Why::Slow => format!("no answer within {} s of its set-up", SETUP_WAIT.as_secs()),
            Why::Limit => format!(
                "not set up within the {} s set-up limit of a level",
                SETUP_LIMIT.as_secs()
            ),
        }
    }
}

pub(super) struct GateState {
    slots: Vec<Slot>,
    /// When each stream got its set-up turn.
    turn_taken: Vec<Option<Instant>>,
    open: bool,
    /// Set-ups in flight, per load generator.
    in_setup: Vec<usize>,
}

/// One level's start: the streams' slots, the set-up turns per host and
/// the gate. Each condition variable has its own waiters, so one arrival
/// wakes only the coordinator and one finished set-up only its host's next.
pub(super) struct Gate {
    state: Mutex<GateState>,
    /// The coordinator waits here for arrivals and ends.
    arrived: Condvar,
    /// Streams wait here for the gate.
    opened: Condvar,
    /// Streams of each host wait here for a set-up turn.
    turns: Vec<Condvar>,
    concurrency: usize,
    deadline: Instant,
}

impl Gate {
    pub(super) fn set(&self, slot: usize, to: Slot) {
        let mut st = lock(&self.state);
        if st.slots[slot] == Slot::SettingUp {
            st.slots[slot] = to;
        }
        drop(st);
        self.arrived.notify_one();
    }

    /// Wait for a set-up turn on `host`; false when called off or too late.
    pub(super) fn take_turn(&self, slot: usize, host: usize) -> bool {
        let mut st = lock(&self.state);
        loop {
            if matches!(st.slots[slot], Slot::CalledOff(_)) {
                return false;
            }
            if st.in_setup[host] < self.concurrency {
                st.in_setup[host] += 1;
                st.turn_taken[slot] = Some(Instant::now());
                return true;
            }
            // The coordinator calls the stream off at the deadline; this
            // bound only keeps the wait finite if it never does.
            let left = (self.deadline + RUN_WAIT).saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self.turns[host]
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    pub(super) fn give_back_turn(&self, host: usize) {
        let mut st = lock(&self.state);
        st.in_setup[host] = st.in_setup[host].saturating_sub(1);
        drop(st);
        self.turns[host].notify_one();
    }

    /// At the gate: say so, and wait until it opens (true) or the stream is
    /// called off (false). Bounded: the coordinator decides by the deadline.
    pub(super) fn arrive_and_wait(&self, slot: usize) -> bool {
        let mut st = lock(&self.state);
        if st.slots[slot] != Slot::SettingUp {
            return false;
        }
        st.slots[slot] = Slot::Ready(Instant::now());
        self.arrived.notify_one();
        let until = self.deadline + RUN_WAIT;
        while !st.open && !matches!(st.slots[slot], Slot::CalledOff(_)) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self
                .opened
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        st.open && !matches!(st.slots[slot], Slot::CalledOff(_))
    }
}

/// A set-up turn, given back once, whichever comes first: the stream
/// reaching the gate, or its thread ending.
pub(super) struct Turn {
    pub(super) gate: Arc<Gate>,
    pub(super) host: usize,
    pub(super) held: Mutex<bool>,
}

impl Turn {
    pub(super) fn give_back(&self) {
        let mut held = lock(&self.held);
        if *held {
            *held = false;
            self.gate.give_back_turn(self.host);
        }
    }
}

/// Marks the slot ended when the stream's thread ends, however it ends.
pub(super) struct EndGuard {
    pub(super) gate: Arc<Gate>,
    pub(super) slot: usize,
    pub(super) turn: Arc<Turn>,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.turn.give_back();
        self.gate.set(self.slot, Slot::Ended);
    }
}

impl Gate {
    /// A closed gate for `streams` set-ups spread over `settings`' hosts;
    /// the level's set-up limit runs from now.
    pub(super) fn new(streams: usize, settings: &LaunchSettings) -> Gate {
        let setup_start = Instant::now();
        Gate {
            state: Mutex::new(GateState {
                slots: vec![Slot::SettingUp; streams],
                turn_taken: vec![None; streams],
                open: false,
                in_setup: vec![0; settings.hosts.len()],
            }),
            arrived: Condvar::new(),
            opened: Condvar::new(),
            turns: settings.hosts.iter().map(|_| Condvar::new()).collect(),
            concurrency: settings.setup_concurrency.max(1),
            deadline: setup_start + SETUP_LIMIT,
        }
    }

    /// Every stream set up or ended, or the limit: then the gate opens. A
    /// set-up that takes too long is given up and its connection cut, so
    /// that its turn goes to the next stream. Gives the slots as the gate
    /// opened.
    pub(super) fn open_when_set_up(&self, pending: &[(usize, Stream)]) -> Vec<Slot> {
        let slots = {
            let mut st = lock(&self.state);
            loop {
                if !st.slots.contains(&Slot::SettingUp) {
                    break;
                }
                let now = Instant::now();
                if now >= self.deadline {
                    for s in st.slots.iter_mut() {
                        if *s == Slot::SettingUp {
                            *s = Slot::CalledOff(Why::Limit);
                        }
                    }
                    break;
                }
                for (slot, stream) in pending {
                    let slow =
                        st.turn_taken[*slot].is_some_and(|t| now.duration_since(t) > SETUP_WAIT);
                    if slow && st.slots[*slot] == Slot::SettingUp {
                        st.slots[*slot] = Slot::CalledOff(Why::Slow);
                        stream.cut();
                    }
                }
                let left = self.deadline.saturating_duration_since(now).min(LOOK_EVERY);
                st = self
                    .arrived
                    .wait_timeout(st, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            st.open = true;
            st.slots.clone()
        };
        self.opened.notify_all();
        for cv in &self.turns {
            cv.notify_all();
        }
        slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn gate(slots: usize, concurrency: usize) -> Arc<Gate> {
        Arc::new(Gate {
            state: Mutex::new(GateState {
                slots: vec![Slot::SettingUp; slots],
                turn_taken: vec![None; slots],
                open: false,
                in_setup: vec![0],
            }),
            arrived: Condvar::new(),
            opened: Condvar::new(),
            turns: vec![Condvar::new()],
            concurrency,
            deadline: Instant::now() + SETUP_LIMIT,
        })
    }

    #[test]
    fn set_ups_take_turns_and_wait_at_the_gate() {
        let g = gate(4, 2);
        assert!(g.take_turn(0, 0) && g.take_turn(1, 0));
        assert_eq!(lock(&g.state).in_setup[0], 2);
        // The third waits for a turn until one is given back.
        let third = {
            let g = g.clone();
            std::thread::spawn(move || g.take_turn(2, 0) && g.arrive_and_wait(2))
        };
        // Called off while waiting at the gate: it does not start.
        let fourth = {
            let g = g.clone();
            std::thread::spawn(move || g.arrive_and_wait(3))
        };
        g.give_back_turn(0);
        for _ in 0..5000 {
            let st = lock(&g.state);
            if matches!(st.slots[2], Slot::Ready(_)) && matches!(st.slots[3], Slot::Ready(_)) {
                break;
            }
            drop(st);
            std::thread::sleep(Duration::from_millis(1));
        }
        {
            let mut st = lock(&g.state);
            assert!(matches!(st.slots[2], Slot::Ready(_)), "{:?}", st.slots);
            st.slots[3] = Slot::CalledOff(Why::Slow);
            st.open = true;
        }
        g.opened.notify_all();
        assert!(third.join().unwrap(), "the gate opened");
        assert!(!fourth.join().unwrap(), "called off");
        // A stream called off before its turn never takes one.
        let g = gate(1, 1);
        lock(&g.state).slots[0] = Slot::CalledOff(Why::Limit);
        assert!(!g.take_turn(0, 0));
    }
}
