//! The open loop's clock (`-- --rate R`): request i is due at start + i/R on
//! CLOCK_MONOTONIC, each deadline computed from the start so that neither
//! rounding nor a late wake-up ever accumulates, and the wait for one is an
//! absolute sleep (clock_nanosleep with TIMER_ABSTIME) that ends a short spin
//! before it: a timer wake-up is late by tens of microseconds, the spin is not.
//! How short is learnt from the machine (`Lead`).

/// The least lead: how long before a deadline the sleep ends and the spin
/// on the clock starts, about a timer wake-up's lateness on an idle machine.
pub const SPIN_NS: u64 = 30_000;

/// The most lead. A virtual machine's timer wake-ups are late by 20 to 30
/// us at the median and hundreds at the P99 when its CPUs are shared; past
/// this the lateness is preemption, which a longer spin does not cure.
pub const MAX_LEAD_NS: u64 = 250_000;

/// How long before each deadline the thread stops sleeping and spins,
/// learnt from how late its timer wake-ups are: the lead follows the P99 of
/// the lateness (a frugal streaming quantile: up a step when a wake-up is
/// later than the estimate, down a 99th of a step when not, so the estimate
/// settles where 1 % are later), kept between SPIN_NS and MAX_LEAD_NS. A
/// fixed lead either misses the deadline on a busy machine or burns a core
/// on a quiet one.
#[derive(Debug, Clone, Copy)]
pub struct Lead {
    estimate_ns: f64,
}

/// The estimate's step up; the step down is a 99th of it.
const LEAD_STEP_NS: f64 = 2_000.0;
/// Spin this much beyond the estimated lateness: the sends and clock reads
/// between the wake-up and the deadline.
const LEAD_MARGIN_NS: u64 = 5_000;

impl Default for Lead {
    fn default() -> Lead {
        Lead {
            estimate_ns: (SPIN_NS - LEAD_MARGIN_NS) as f64,
        }
    }
}

impl Lead {
    /// The lead now, in ns.
    #[inline]
    pub fn ns(&self) -> u64 {
        (self.estimate_ns as u64 + LEAD_MARGIN_NS).clamp(SPIN_NS, MAX_LEAD_NS)
    }

    /// A timer wake-up came `late_ns` after the time it was set for.
    #[inline]
    pub fn woke_late_by(&mut self, late_ns: u64) {
        let step = if late_ns as f64 > self.estimate_ns {
            LEAD_STEP_NS
        } else {
            -LEAD_STEP_NS / 99.0
        };
        self.estimate_ns = (self.estimate_ns + step).clamp(0.0, MAX_LEAD_NS as f64);
    }
}

/// Now on CLOCK_MONOTONIC, in nanoseconds (a vDSO read, no system call).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until `deadline_ns` on CLOCK_MONOTONIC. A signal (the end of the
/// test) ends the sleep early; the caller looks at its stop flag and the
/// clock again either way.
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid clock id and timespec; no remainder is asked for.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Spin on the clock until `deadline_ns`: the last few microseconds before
/// a send, where a sleep would wake up too late.
#[inline]
pub fn spin_until(deadline_ns: u64) {
    while now_ns() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// The calling thread's timer slack at 1 ns for as long as this lives.
/// Linux lets a sleep of an ordinary thread end up to 50 us late (the
/// default slack) to batch wake-ups; a schedule of 10^5 a second cannot
/// afford that.
pub struct FineTimers {
    before: libc::c_ulong,
}

impl FineTimers {
    pub fn set() -> FineTimers {
        // SAFETY: prctl with PR_GET/SET_TIMERSLACK reads or sets a number
        // of the calling thread; nothing else is touched.
        let before = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) }.max(1) as libc::c_ulong;
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        FineTimers { before }
    }
}

impl Drop for FineTimers {
    fn drop(&mut self) {
        // SAFETY: as in `set`.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, self.before) };
    }
}

/// A fixed schedule of `rate` events a second from `start_ns`.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    start_ns: u64,
    period_ns: f64,
}

impl Schedule {
    /// `rate` must be positive and finite (the command line sees to it).
    pub fn new(start_ns: u64, rate: f64) -> Schedule {
        Schedule {
            start_ns,
            period_ns: 1e9 / rate,
        }
    }

    /// When event `i` (from 0) is due. In f64 the product stays exact to a
    /// nanosecond for any test shorter than a century at 10^7 a second.
    #[inline]
    pub fn due(&self, i: u64) -> u64 {
        self.start_ns + (i as f64 * self.period_ns) as u64
    }

    /// The interval between two events, in whole nanoseconds (at least 1).
    pub fn period_ns(&self) -> u64 {
        (self.period_ns as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_come_from_the_start_not_from_each_other() {
        let s = Schedule::new(1_000, 3.0);
        // 1/3 s does not divide into nanoseconds: adding the period up
        // would drift, computing from the start does not.
        assert_eq!(s.due(0), 1_000);
        assert_eq!(s.due(3), 1_000_001_000);
        assert_eq!(s.due(3_000_000), 1_000_000_000_001_000);
        assert_eq!(s.period_ns(), 333_333_333);
    }

    #[test]
    fn the_lead_settles_where_one_wake_up_in_a_hundred_is_later() {
        let mut lead = Lead::default();
        assert_eq!(lead.ns(), SPIN_NS);
        // 98 wake-ups 10 us late, 2 of 100 at 1 ms: the P99 is 1 ms, and
        // the lead goes to its most.
        for i in 0..100_000u64 {
            lead.woke_late_by(if i % 50 == 0 { 1_000_000 } else { 10_000 });
        }
        assert_eq!(lead.ns(), MAX_LEAD_NS);
        // Every wake-up 60 us late: the lead comes down to just above it.
        for _ in 0..1_000_000 {
            lead.woke_late_by(60_000);
        }
        assert!((60_000..=70_000).contains(&lead.ns()), "{}", lead.ns());
        // On time: back to the least.
        for _ in 0..1_000_000 {
            lead.woke_late_by(0);
        }
        assert_eq!(lead.ns(), SPIN_NS);
    }

    #[test]
    fn an_absolute_sleep_ends_at_its_deadline() {
        let start = now_ns();
        sleep_until(start + 2_000_000);
        spin_until(start + 2_100_000);
        assert!(now_ns() >= start + 2_100_000);
        // A deadline already past returns at once.
        sleep_until(start);
    }
}
