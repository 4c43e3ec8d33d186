//! Service demand: CPU microseconds spent per unit of work, as netperf computes it.
//!
//! netperf divides the work into units (KB = 1024 bytes for bulk tests, one
//! transaction for request/response tests reported in 'x' units), turns it
//! into a rate over the elapsed time, and charges the utilization of *all*
//! CPUs to it: `util% * 10_000 / units_per_second * num_cpus` gives µs/unit
//! (100 % of one CPU for one second is 1e6 µs; 1e6 / 100 = 1e4).

/// Bytes per unit in the us/KB figure.
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

/// Microseconds of CPU per unit of work.
///
/// * `work` — bytes (for [`DemandUnit::PerKilobyte`]) or transactions.
/// * `elapsed` — seconds the work took.
/// * `cpu_util_percent` — utilization over all CPUs, 0..100.
/// * `num_cpus` — CPUs the utilization is averaged over.
///
/// Zero work or zero elapsed time yield inf or NaN, as in netperf; nothing panics.
pub fn service_demand(
    work: f64,
    unit: DemandUnit,
    elapsed: f64,
    cpu_util_percent: f64,
    num_cpus: u32,
) -> f64 {
    netperf_data::measure::cpu::service_demand(
        work,
        unit == DemandUnit::PerKilobyte,
        elapsed,
        cpu_util_percent,
        num_cpus,
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
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        assert!(service_demand(0.0, DemandUnit::PerKilobyte, 1.0, 50.0, 2).is_infinite());
        assert!(service_demand(1.0, DemandUnit::PerKilobyte, 0.0, 50.0, 2) == 0.0);
        assert!(service_demand(0.0, DemandUnit::PerKilobyte, 0.0, 0.0, 0).is_nan());
        assert_eq!(DemandUnit::for_output_unit('x'), DemandUnit::PerTransaction);
        assert_eq!(DemandUnit::for_output_unit('m').omni_label(), "usec/KB");
    }
}
