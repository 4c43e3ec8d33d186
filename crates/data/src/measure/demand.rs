//! Service demand: microseconds of CPU time per unit of work (a KB of 1024
//! bytes, or a transaction), netperf's calc_service_demand. The one place the
//! figure is computed: netperf's classic, omni and Unix-domain reports, netagg's
//! levels and an experiment's multi-stream runs all call [`service_demand_of_rate`]
//! (netperf's reports through [`service_demand`], which is netperf's own
//! arithmetic from the work, the elapsed time and the utilization).
//!
//! The utilization of *all* CPUs is charged to the work:
//! `util% * 10_000 / units_per_second * num_cpus` (100 % of one CPU for one
//! second is 10^6 µs; 10^6 / 100 = 10^4).

/// Bytes per unit of the us/KB figure.
pub const KB: f64 = 1024.0;

/// What a service demand is charged per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemandUnit {
    /// Microseconds per KB (1024 bytes): "us/KB", omni "usec/KB".
    PerKilobyte,
    /// Microseconds per transaction: "us/Tr", omni "usec/Tran".
    PerTransaction,
}

impl DemandUnit {
    /// netperf's rule for omni-based tests: per transaction exactly when the
    /// output unit is 'x', per KB otherwise (even for an RR test run with -f m).
    pub fn for_output_unit(letter: char) -> DemandUnit {
        if letter == 'x' {
            DemandUnit::PerTransaction
        } else {
            DemandUnit::PerKilobyte
        }
    }

    /// The unit an omni SD_UNITS text names ("usec/Tran" or "usec/KB").
    pub fn from_omni_label(text: &str) -> Option<DemandUnit> {
        [DemandUnit::PerKilobyte, DemandUnit::PerTransaction]
            .into_iter()
            .find(|u| u.omni_label() == text)
    }

    /// How many raw units (bytes or transactions) make one charged unit.
    pub fn divisor(self) -> f64 {
        match self {
            DemandUnit::PerKilobyte => KB,
            DemandUnit::PerTransaction => 1.0,
        }
    }

    /// The omni SD_UNITS text.
    pub fn omni_label(self) -> &'static str {
        match self {
            DemandUnit::PerKilobyte => "usec/KB",
            DemandUnit::PerTransaction => "usec/Tran",
        }
    }
}

/// The arithmetic's precision. netperf passes the elapsed time and the
/// utilization as C floats and returns a float, so what netperf prints
/// (`Single`) rounds through `f32`; netagg's own figures (a level, a run of
/// several streams) are no netperf output and keep `f64` (`Double`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    Single,
    Double,
}

impl Precision {
    fn round(self, v: f64) -> f64 {
        match self {
            Precision::Single => f64::from(v as f32),
            Precision::Double => v,
        }
    }
}

/// The CPU count a side's utilization is charged over: its own, or, when it
/// reports none (0), the local count (at least one), as calc_service_demand
/// substitutes it.
pub fn charged_cpus(side: u32, local: u32) -> u32 {
    if side == 0 {
        local.max(1)
    } else {
        side
    }
}

/// Microseconds of CPU per unit of work, from the rate of the work.
///
/// * `raw_per_sec` — bytes per second (for [`DemandUnit::PerKilobyte`]) or
///   transactions per second.
/// * `util_percent` — utilization averaged over all CPUs, 0..100.
/// * `num_cpus` — the CPUs that utilization is averaged over.
///
/// Zero work gives inf (or NaN with zero utilization), as in netperf; nothing
/// panics. Callers with a "not measured" convention apply it themselves.
pub fn service_demand_of_rate(
    raw_per_sec: f64,
    unit: DemandUnit,
    util_percent: f64,
    num_cpus: u32,
    precision: Precision,
) -> f64 {
    let per_sec = raw_per_sec / unit.divisor();
    let util_percent = precision.round(util_percent);
    let cpus = precision.round(f64::from(num_cpus));
    precision.round((util_percent * 10_000.0 / per_sec) * cpus)
}

/// netperf's calc_service_demand: `work` (bytes or transactions) done in
/// `elapsed` seconds at `util_percent` of `num_cpus` CPUs, in single precision
/// as netperf computes it (what its classic, omni and Unix-domain reports print).
///
/// netperf substitutes its own local elapsed time, utilization and CPU count
/// when passed zero; callers pass the real values. Zero elapsed time or work
/// gives inf or NaN (no panic). netperf's classic RR tests pass
/// transactions * 1024 per KB, which is the same number as per transaction.
pub fn service_demand(
    work: f64,
    unit: DemandUnit,
    elapsed: f64,
    util_percent: f64,
    num_cpus: u32,
) -> f64 {
    let elapsed = Precision::Single.round(elapsed);
    // Dividing by the unit's 1024 before or after the elapsed time is the
    // same (a power of two): this is netperf's units / divisor / elapsed.
    service_demand_of_rate(
        work / elapsed,
        unit,
        util_percent,
        num_cpus,
        Precision::Single,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_kilobyte_matches_a_netperf_run() {
        // TCP_STREAM -c -C: 23786.34 10^6bits/s over 1.00 s at 71.72 % of 2 CPUs -> 0.494 us/KB.
        let bytes = 23786.34e6 / 8.0;
        let sd = service_demand(bytes, DemandUnit::PerKilobyte, 1.0, 71.72, 2);
        assert_eq!(format!("{sd:.3}"), "0.494");
    }

    #[test]
    fn per_transaction_matches_a_netperf_run() {
        // TCP_RR -c -C printed 14511.81 trans/s at 29.88 % of 2 CPUs and 41.182 us/Tr;
        // from the rounded figures we get 41.180.
        let sd = service_demand(14511.81, DemandUnit::PerTransaction, 1.0, 29.88, 2);
        assert_eq!(format!("{sd:.3}"), "41.180");
        // The classic RR form (transactions * 1024 per KB) is the same number.
        let classic = service_demand(14511.81 * 1024.0, DemandUnit::PerKilobyte, 1.0, 29.88, 2);
        assert_eq!(sd, classic);
    }

    #[test]
    fn the_formula_on_hand_computed_inputs() {
        // 1 MiB in 2 s = 512 KB/s; 25 % of 4 CPUs = 1 CPU-second/s -> 10^6/512 us/KB.
        let sd = service_demand(1024.0 * 1024.0, DemandUnit::PerKilobyte, 2.0, 25.0, 4);
        assert_eq!(sd, 1_953.125);
        // 2000 tran/s at 50 % of 2 CPUs: 10^6 us of CPU per second / 2000 = 500 us/Tr.
        let rate = service_demand_of_rate(
            2_000.0,
            DemandUnit::PerTransaction,
            50.0,
            2,
            Precision::Double,
        );
        assert_eq!(rate, 500.0);
        // 10 MB/s = 10^7/1024 KB/s at 10 % of 1 CPU: 10^5 us/s over that.
        let kb = service_demand_of_rate(1e7, DemandUnit::PerKilobyte, 10.0, 1, Precision::Double);
        assert!((kb - 1e5 / (1e7 / 1024.0)).abs() < 1e-12, "{kb}");
        // Single precision rounds inputs and result through f32, as netperf.
        let third =
            service_demand_of_rate(3.0, DemandUnit::PerTransaction, 1.0, 1, Precision::Single);
        assert_eq!(third, f64::from((f64::from(1.0f32) * 1e4 / 3.0) as f32));
        assert_ne!(
            third,
            service_demand_of_rate(3.0, DemandUnit::PerTransaction, 1.0, 1, Precision::Double)
        );
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        for precision in [Precision::Single, Precision::Double] {
            let of_rate =
                |r, u, n| service_demand_of_rate(r, DemandUnit::PerKilobyte, u, n, precision);
            assert!(of_rate(0.0, 50.0, 2).is_infinite());
            assert!(of_rate(0.0, 0.0, 2).is_nan());
            assert_eq!(of_rate(1024.0, 0.0, 2), 0.0);
            assert_eq!(of_rate(1024.0, 50.0, 0), 0.0);
            assert!(of_rate(f64::NAN, 50.0, 2).is_nan());
            assert!(of_rate(1024.0, f64::NAN, 2).is_nan());
        }
        assert!(service_demand(0.0, DemandUnit::PerKilobyte, 1.0, 50.0, 2).is_infinite());
        assert_eq!(
            service_demand(1.0, DemandUnit::PerKilobyte, 0.0, 50.0, 2),
            0.0
        );
        assert!(service_demand(0.0, DemandUnit::PerKilobyte, 0.0, 0.0, 0).is_nan());
    }

    #[test]
    fn a_side_without_a_cpu_count_is_charged_the_local_one() {
        assert_eq!(charged_cpus(8, 2), 8);
        assert_eq!(charged_cpus(0, 2), 2);
        assert_eq!(charged_cpus(0, 0), 1);
    }

    #[test]
    fn units_and_their_names() {
        assert_eq!(DemandUnit::for_output_unit('x'), DemandUnit::PerTransaction);
        assert_eq!(DemandUnit::for_output_unit('m').omni_label(), "usec/KB");
        assert_eq!(
            DemandUnit::from_omni_label("usec/Tran"),
            Some(DemandUnit::PerTransaction)
        );
        assert_eq!(
            DemandUnit::from_omni_label("usec/KB"),
            Some(DemandUnit::PerKilobyte)
        );
        assert_eq!(DemandUnit::from_omni_label("furlongs"), None);
        assert_eq!(DemandUnit::PerKilobyte.divisor(), 1024.0);
    }
}
