//! Confidence intervals over repeated iterations of a test (global `-i` and `-I`),
//! as netperf 2.7.1 computes them: after each iteration, the width of the interval
//! around the mean of throughput, local CPU and remote CPU, relative to the mean,
//! compared with the width the user asked for.

/// Student's t, two-sided, by degrees of freedom 1..=30 (netperf's table: it has
/// only these two levels, and never more than 30 iterations).
const T_95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, //
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, //
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];
const T_99: [f64; 30] = [
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, //
    3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, //
    2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750,
];

/// netperf's `confidence` before two iterations exist: negative, i.e. "not yet".
const NOT_YET: f64 = -10.0;

/// The t value for `level` percent and `freedom` degrees of freedom. Levels other
/// than 95 and 99 give 0, as in netperf (an interval of zero width); freedoms past
/// the table use its last row, freedom 0 gives 0.
pub fn t_value(level: u32, freedom: u32) -> f64 {
    let table = match level {
        95 => &T_95,
        99 => &T_99,
        _ => return 0.0,
    };
    match freedom {
        0 => 0.0,
        f => table[(f as usize).min(table.len()) - 1],
    }
}

/// netperf's `min` macro: `a < b ? a : b`. Kept literally because it decides
/// what a NaN width does (a NaN `a` is skipped, a NaN `b` wins).
fn c_min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// Running sum and sum of squares of one measured quantity.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    sum: f64,
    sum_sq: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.sum_sq += x * x;
    }

    fn mean(&self, n: f64) -> f64 {
        self.sum / n
    }

    /// Population variance E[x^2] - E[x]^2, as netperf computes it. Rounding can
    /// push it a hair below zero for equal samples; netperf would then take the
    /// square root of a negative number (NaN), we clamp to the true answer, 0.
    fn variance(&self, n: f64) -> f64 {
        let mean = self.mean(n);
        (self.sum_sq / n - mean * mean).max(0.0)
    }

    /// netperf's `interval - 2 t sqrt(var / (n - 1)) / mean`: how much room is left
    /// between the requested width and the achieved one (negative = too wide).
    fn room(&self, n: f64, t: f64, interval: f64) -> f64 {
        interval - 2.0 * t * (self.variance(n) / (n - 1.0)).sqrt() / self.mean(n)
    }
}

/// The confidence state of a test run: feed it each iteration's results, ask
/// whether another iteration is needed.
#[derive(Debug, Clone)]
pub struct Confidence {
    level: u32,
    /// The requested full width as a fraction of the mean (`-I 99,5` -> 0.05).
    interval: f64,
    result_only: bool,
    iterations: u32,
    throughput: Moments,
    local_cpu: Moments,
    remote_cpu: Moments,
}

impl Confidence {
    /// `level` is 95 or 99 (percent); `width_percent` the full width of the
    /// interval in percent of the mean (`-I 99,5`: the mean within +/- 2.5 %).
    pub fn new(level: u32, width_percent: f64) -> Self {
        Confidence {
            level,
            interval: width_percent / 100.0,
            result_only: false,
            iterations: 0,
            throughput: Moments::default(),
            local_cpu: Moments::default(),
            remote_cpu: Moments::default(),
        }
    }

    /// `-r`: declare confidence on the throughput alone, ignoring CPU widths.
    pub fn with_result_only(mut self, result_only: bool) -> Self {
        self.result_only = result_only;
        self
    }

    /// Records one iteration. Pass -1.0 for a CPU utilization that is not being
    /// measured, as netperf does: a constant has zero width and never holds
    /// confidence back.
    pub fn add(&mut self, throughput: f64, local_cpu: f64, remote_cpu: f64) {
        self.iterations = self.iterations.saturating_add(1);
        self.throughput.add(throughput);
        self.local_cpu.add(local_cpu);
        self.remote_cpu.add(remote_cpu);
    }

    /// Iterations recorded so far.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    /// The means netperf reports after a confidence run (retrieve_confident_values):
    /// (throughput, local CPU, remote CPU); zeros before any iteration.
    pub fn means(&self) -> (f64, f64, f64) {
        if self.iterations == 0 {
            return (0.0, 0.0, 0.0);
        }
        let n = f64::from(self.iterations);
        (
            self.throughput.mean(n),
            self.local_cpu.mean(n),
            self.remote_cpu.mean(n),
        )
    }

    /// Room left in each quantity: (throughput, local CPU, remote CPU), or `None`
    /// before two iterations (netperf computes nothing until then).
    fn rooms(&self) -> Option<(f64, f64, f64)> {
        if self.iterations < 2 {
            return None;
        }
        let n = f64::from(self.iterations);
        let t = t_value(self.level, self.iterations - 1);
        Some((
            self.throughput.room(n, t, self.interval),
            self.local_cpu.room(n, t, self.interval),
            self.remote_cpu.room(n, t, self.interval),
        ))
    }

    /// Achieved full widths in percent of the mean, as netperf prints them in its
    /// "!!! Confidence intervals" warning and THROUGHPUT_CONFID, LOCAL_CPU_CONFID,
    /// REMOTE_CPU_CONFID: (throughput, local CPU, remote CPU). -1.0 each before two
    /// iterations (netperf never prints them then: with -i it runs at least three).
    pub fn interval_widths(&self) -> (f64, f64, f64) {
        match self.rooms() {
            // netperf stores the room and prints 100 * (interval - room); the same
            // subtraction keeps the last digit identical.
            Some((r, l, c)) => (
                100.0 * (self.interval - r),
                100.0 * (self.interval - l),
                100.0 * (self.interval - c),
            ),
            None => (-1.0, -1.0, -1.0),
        }
    }

    /// netperf's `confidence`: the smallest room (throughput's alone with -r).
    fn confidence(&self) -> f64 {
        match self.rooms() {
            None => NOT_YET,
            Some((r, _, _)) if self.result_only => r,
            Some((r, l, c)) => c_min(c_min(r, l), c),
        }
    }

    /// Whether every width (or the throughput's, with -r) is within the request.
    /// netperf tests `confidence < 0`, so a NaN width (e.g. a mean of zero over
    /// equal samples) counts as met, here too.
    pub fn met(&self) -> bool {
        let confidence = self.confidence();
        confidence >= 0.0 || confidence.is_nan()
    }

    /// netperf's loop condition for the omni tests (including the migrated
    /// TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM, UDP_RR): whether to run
    /// `iteration` (1-based, the one about to run). Always at least `min`
    /// iterations, and up to `max` while confidence is not met.
    pub fn should_continue(&self, iteration: u32, min: u32, max: u32) -> bool {
        (!self.met() && iteration <= max) || iteration <= min
    }

    /// The same condition in the tests netperf 2.7.1 still runs from nettest_bsd.c
    /// (TCP_CC, TCP_SENDFILE, ...): `iteration < max`, so they stop one short of
    /// `max` unless `min` reaches it.
    pub fn should_continue_classic(&self, iteration: u32, min: u32, max: u32) -> bool {
        (!self.met() && iteration < max) || iteration <= min
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn t_table_lookups() {
        assert_eq!(t_value(95, 1), 12.706);
        assert_eq!(t_value(95, 2), 4.303);
        assert_eq!(t_value(99, 2), 9.925);
        assert_eq!(t_value(99, 29), 2.756);
        assert_eq!(t_value(99, 30), 2.750);
        assert_eq!(t_value(99, 1000), 2.750);
        assert_eq!(t_value(90, 5), 0.0);
        assert_eq!(t_value(95, 0), 0.0);
    }

    #[test]
    fn widths_hand_computed() {
        // Throughput 90, 100, 110: mean 100, population variance 200/3,
        // sqrt(var / 2) = sqrt(100/3) = 5.7735; 99 %, freedom 2: t = 9.925.
        // width = 2 * 9.925 * 5.7735 / 100 = 1.14604 -> 114.604 %.
        let mut c = Confidence::new(99, 5.0);
        c.add(90.0, -1.0, -1.0);
        c.add(100.0, -1.0, -1.0);
        c.add(110.0, -1.0, -1.0);
        let (tput, loc, rem) = c.interval_widths();
        let expected = 100.0 * 2.0 * 9.925 * (100.0f64 / 3.0).sqrt() / 100.0;
        assert!(close(tput, expected), "{tput} vs {expected}");
        assert!((tput - 114.604).abs() < 0.001);
        // Unmeasured CPUs (-1 each time) have zero width.
        assert!(close(loc, 0.0) && close(rem, 0.0));
        assert!(!c.met());
        assert_eq!(c.means(), (100.0, -1.0, -1.0));
    }

    #[test]
    fn narrow_results_meet_confidence() {
        // 99, 100, 101: sqrt(var/2) = sqrt(1/3); width = 2 * 9.925 * 0.57735 / 100
        // = 11.46 % > 5 %; at 95 % (t = 4.303) 4.97 % <= 5 %.
        let mut c99 = Confidence::new(99, 5.0);
        let mut c95 = Confidence::new(95, 5.0);
        for x in [99.0, 100.0, 101.0] {
            c99.add(x, -1.0, -1.0);
            c95.add(x, -1.0, -1.0);
        }
        assert!(!c99.met());
        assert!(c95.met());
        assert!((c95.interval_widths().0 - 4.9687).abs() < 1e-3);
    }

    #[test]
    fn cpu_width_holds_back_unless_result_only() {
        let samples = [(100.0, 10.0), (100.0, 20.0), (100.0, 30.0)];
        let mut all = Confidence::new(95, 5.0);
        let mut result_only = Confidence::new(95, 5.0).with_result_only(true);
        for (tput, cpu) in samples {
            all.add(tput, cpu, -1.0);
            result_only.add(tput, cpu, -1.0);
        }
        assert!(!all.met());
        assert!(result_only.met());
        // Local CPU: mean 20, var 200/3, sqrt(var/2) = 5.7735, t = 4.303:
        // width = 2 * 4.303 * 5.7735 / 20 = 248.43 %.
        let local = all.interval_widths().1;
        assert!((local - 248.4338).abs() < 1e-3, "{local}");
    }

    #[test]
    fn fewer_than_two_iterations_are_never_confident() {
        let mut c = Confidence::new(99, 5.0);
        assert!(!c.met());
        assert_eq!(c.interval_widths(), (-1.0, -1.0, -1.0));
        c.add(100.0, 1.0, 1.0);
        assert!(!c.met());
        assert_eq!(c.iterations(), 1);
    }

    /// How many iterations a 99 %, 5 % loop runs while `go_on` says so,
    /// iteration i adding `result(i)`.
    fn iterations_run(
        go_on: fn(&Confidence, u32, u32, u32) -> bool,
        (min, max): (u32, u32),
        result: fn(u32) -> f64,
    ) -> u32 {
        let mut c = Confidence::new(99, 5.0);
        let mut iteration = 1;
        while go_on(&c, iteration, min, max) {
            c.add(result(iteration), -1.0, -1.0);
            iteration += 1;
        }
        iteration - 1
    }

    #[test]
    fn omni_loop_runs_between_min_and_max() {
        // Never confident: -i 5,3 runs iterations 1..=5.
        let spread = |i| f64::from(i * 100);
        assert_eq!(
            iterations_run(Confidence::should_continue, (3, 5), spread),
            5
        );
        // Always confident: stops at min.
        let same = |_| 100.0;
        assert_eq!(
            iterations_run(Confidence::should_continue, (3, 10), same),
            3
        );
    }

    #[test]
    fn default_run_is_one_iteration() {
        let mut c = Confidence::new(0, 0.0);
        assert!(c.should_continue(1, 1, 1));
        c.add(100.0, -1.0, -1.0);
        assert!(!c.should_continue(2, 1, 1));
    }

    #[test]
    fn classic_loop_stops_one_short_of_max() {
        let spread = |i| f64::from(i * 100);
        let ran = iterations_run(Confidence::should_continue_classic, (3, 5), spread);
        assert_eq!(ran, 4);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let mut c = Confidence::new(99, 5.0);
        for _ in 0..3 {
            c.add(0.0, 0.0, 0.0);
        }
        // 0/0 widths are NaN; netperf's `confidence < 0` test treats that as met.
        assert!(c.met());
        assert!(c.interval_widths().0.is_nan());
        let mut c = Confidence::new(99, 5.0);
        for x in [f64::INFINITY, 1.0, f64::NAN] {
            c.add(x, x, x);
        }
        let _ = (c.met(), c.interval_widths(), c.means());
    }

    #[test]
    fn equal_samples_have_zero_width() {
        let mut c = Confidence::new(99, 5.0);
        for _ in 0..7 {
            c.add(0.1 + 0.2, 33.3, 71.72);
        }
        let (a, b, d) = c.interval_widths();
        assert!(a.abs() < 1e-6 && b.abs() < 1e-6 && d.abs() < 1e-6);
        assert!(c.met());
    }
}
