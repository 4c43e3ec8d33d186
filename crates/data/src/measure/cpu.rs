//! CPU utilization the way netperf's method 'S' measures it: two snapshots of the
//! jiffy counters in /proc/stat, the share of non-idle ticks per CPU and the busiest
//! CPU (`demand` turns utilization into CPU time per unit of work).
//!
//! The arithmetic mirrors netperf 2.7.1 (netcpu_procstat.c, netlib.c), including
//! its single-precision floats, so that printed numbers round the same way.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::time::Instant;

use super::outcome::CpuUsage;

const PROC_STAT_PATH: &str = "/proc/stat";

/// netperf's letter for the /proc/stat method, printed as "% S" and LOCAL_CPU_METHOD=S.
const METHOD_PROC_STAT: char = 'S';

/// Jiffy counters of one "cpu" line of /proc/stat, in the kernel's column order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

/// Columns netperf reads from a cpu line; later kernels may print more (ignored).
const COLUMNS_READ: usize = 10;

/// Without user, nice, system and idle there is no utilization to compute; kernels
/// older than the later columns (iowait, irq, ..., guest_nice) leave them zero, as
/// netperf's zero-filled sscanf does.
const COLUMNS_REQUIRED: usize = 4;

impl CpuTicks {
    fn from_columns(c: &[u64; COLUMNS_READ]) -> Self {
        CpuTicks {
            user: c[0],
            nice: c[1],
            system: c[2],
            idle: c[3],
            iowait: c[4],
            irq: c[5],
            softirq: c[6],
            steal: c[7],
            guest: c[8],
            guest_nice: c[9],
        }
    }

    /// Ticks elapsed from `start` to `self`, column by column.
    fn since(&self, start: &CpuTicks) -> CpuTicks {
        CpuTicks {
            user: tick_subtract(start.user, self.user),
            nice: tick_subtract(start.nice, self.nice),
            system: tick_subtract(start.system, self.system),
            idle: tick_subtract(start.idle, self.idle),
            iowait: tick_subtract(start.iowait, self.iowait),
            irq: tick_subtract(start.irq, self.irq),
            softirq: tick_subtract(start.softirq, self.softirq),
            steal: tick_subtract(start.steal, self.steal),
            guest: tick_subtract(start.guest, self.guest),
            guest_nice: tick_subtract(start.guest_nice, self.guest_nice),
        }
    }

    /// All ten columns summed: netperf's denominator (it counts guest time twice,
    /// as the kernel already includes it in user; we keep that for equal numbers).
    fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.guest,
            self.guest_nice,
        ]
        .iter()
        .fold(0u64, |sum, &v| sum.wrapping_add(v))
    }
}

/// Difference of two counter readings. A reading that went backwards while the
/// start fit in 32 bits is a 32-bit kernel counter that wrapped: the difference is
/// taken modulo 2^32. Every other case is plain (wrapping) unsigned subtraction.
///
/// netperf means the same but adds 0xffffffff00000000 instead of 2^32, which
/// leaves a huge tick count; we keep the intent, not that slip.
fn tick_subtract(start: u64, end: u64) -> u64 {
    const HIGH_WORD: u64 = 0xffff_ffff_0000_0000;
    if end >= start || (start & HIGH_WORD) != 0 {
        end.wrapping_sub(start)
    } else {
        end.wrapping_sub(start) & !HIGH_WORD
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Parses the counters of one "cpu..." line (label included).
fn parse_cpu_line(line: &str) -> io::Result<CpuTicks> {
    let mut fields = line.split_ascii_whitespace();
    let label = fields.next().unwrap_or("");
    if !label.starts_with("cpu") {
        return Err(invalid(format!(
            "{PROC_STAT_PATH}: expected a cpu line, found {line:?}"
        )));
    }
    let mut columns = [0u64; COLUMNS_READ];
    let mut seen = 0;
    for (slot, field) in columns.iter_mut().zip(fields) {
        *slot = field.parse().map_err(|_| {
            invalid(format!(
                "{PROC_STAT_PATH}: bad counter {field:?} in line {line:?}"
            ))
        })?;
        seen += 1;
    }
    if seen < COLUMNS_REQUIRED {
        return Err(invalid(format!(
            "{PROC_STAT_PATH}: {seen} counters in line {line:?}, need at least {COLUMNS_REQUIRED}"
        )));
    }
    Ok(CpuTicks::from_columns(&columns))
}

/// Reads the cpu lines netperf reads from one /proc/stat snapshot into `out`
/// (cleared first; its capacity is reused).
///
/// With one CPU netperf reads the first line, the system total; with more it skips
/// the total and reads the first `num_cpus` per-CPU lines in file order. A CPU is
/// therefore known by its position among the listed (online) CPUs, not by the
/// number in its label.
pub fn parse_proc_stat(text: &str, num_cpus: u32, out: &mut Vec<CpuTicks>) -> io::Result<()> {
    out.clear();
    let mut lines = text.lines();
    if num_cpus > 1 {
        match lines.next() {
            Some(total) if total.split_ascii_whitespace().next() == Some("cpu") => {}
            other => {
                return Err(invalid(format!(
                    "{PROC_STAT_PATH}: first line should be the \"cpu\" total, found {:?}",
                    other.unwrap_or("")
                )))
            }
        }
    }
    for index in 0..num_cpus.max(1) {
        let line = lines.next().ok_or_else(|| {
            invalid(format!(
                "{PROC_STAT_PATH}: {num_cpus} CPUs expected, only {index} cpu lines"
            ))
        })?;
        out.push(parse_cpu_line(line)?);
    }
    Ok(())
}

/// netperf's `100 * (x / total)` where the quotient is taken in single precision.
fn percentize(ticks: u64, total_ticks: u64) -> f64 {
    100.0 * f64::from(ticks as f32 / total_ticks as f32)
}

/// Utilization between two sets of counters, as netperf's calc_cpu_util computes it.
///
/// `correction` scales every figure (netperf's correction factor: the sampler's own
/// elapsed time over the test's elapsed time; 1.0 when they are the same).
/// Per-CPU and summed figures are kept in `f32` like netperf's globals.
pub fn usage_from_ticks(start: &[CpuTicks], end: &[CpuTicks], correction: f32) -> CpuUsage {
    let num_cpus = start.len().min(end.len());
    let mut util = 0f32;
    let mut user = 0f32;
    let mut system = 0f32;
    let mut iowait = 0f32;
    let mut irq = 0f32;
    let mut softirq = 0f32;
    // netperf zeroes its stats before the scan and replaces the peak only on a
    // strictly greater value: an idle machine reports peak 0 on CPU 0.
    let mut peak_util = 0f32;
    let mut peak_id = 0i32;

    for (index, (s, e)) in start.iter().zip(end).enumerate() {
        let diff = e.since(s);
        let total_ticks = diff.total();
        // A CPU whose counters did not move is charged nothing, but still counts
        // in the average below.
        let mut cpu_util = 0f32;
        if total_ticks != 0 {
            cpu_util = (100.0 - percentize(diff.idle, total_ticks)) as f32;
            util += cpu_util;
            user = (f64::from(user) + percentize(diff.user, total_ticks)) as f32;
            system = (f64::from(system) + percentize(diff.system, total_ticks)) as f32;
            iowait = (f64::from(iowait) + percentize(diff.iowait, total_ticks)) as f32;
            irq = (f64::from(irq) + percentize(diff.irq, total_ticks)) as f32;
            softirq = (f64::from(softirq) + percentize(diff.softirq, total_ticks)) as f32;
        }
        cpu_util *= correction;
        if cpu_util > peak_util {
            peak_util = cpu_util;
            peak_id = i32::try_from(index).unwrap_or(i32::MAX);
        }
    }

    let cpus = num_cpus as f32;
    let average = |sum: f32| -> f64 {
        if num_cpus == 0 {
            0.0
        } else {
            f64::from(correction * sum / cpus)
        }
    };
    CpuUsage {
        util: average(util),
        user: average(user),
        system: average(system),
        iowait: average(iowait),
        irq: average(irq),
        softirq: average(softirq),
        peak_util: f64::from(peak_util),
        peak_id,
        num_cpus: u32::try_from(num_cpus).unwrap_or(u32::MAX),
        method: METHOD_PROC_STAT,
    }
}

/// Utilization between two /proc/stat snapshots (pure; the unit-testable core).
pub fn usage_between(start_text: &str, end_text: &str, num_cpus: u32) -> io::Result<CpuUsage> {
    let mut start = Vec::new();
    let mut end = Vec::new();
    parse_proc_stat(start_text, num_cpus, &mut start)?;
    parse_proc_stat(end_text, num_cpus, &mut end)?;
    Ok(usage_from_ticks(&start, &end, 1.0))
}

/// The number of CPUs netperf counts: sysconf(_SC_NPROCESSORS_ONLN), the online
/// CPUs (not the affinity mask or cgroup quota). At least 1.
pub fn num_cpus() -> u32 {
    // SAFETY: sysconf only reads system configuration; no memory is passed.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(online).ok().filter(|&n| n > 0).unwrap_or(1)
}

/// What netperf reports as the CPU "rate" with method 'S' (LOC_CPU, REM_CPU, and
/// the calibration exchanged with netserver): no calibration at all, just the
/// kernel's clock tick rate, sysconf(_SC_CLK_TCK) — 100 on Linux.
pub fn calibrate_rate() -> f32 {
    // SAFETY: sysconf only reads system configuration; no memory is passed.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f32
    } else {
        100.0
    }
}

/// Measures CPU utilization over an interval: `start` snaps /proc/stat, `stop`
/// snaps it again and computes netperf's numbers. The file stays open and the read
/// buffer and counter arrays are reused, so a stop allocates nothing once warm.
#[derive(Debug)]
pub struct CpuSampler {
    file: File,
    text: Vec<u8>,
    num_cpus: u32,
    start_ticks: Vec<CpuTicks>,
    end_ticks: Vec<CpuTicks>,
    started_at: Instant,
}

impl CpuSampler {
    /// Opens /proc/stat and takes the starting snapshot.
    ///
    /// `num_cpus_override` is `-n`: how many CPU lines to read and average over
    /// (`None` or `Some(0)` = the online CPUs). Note that stock netperf 2.7.1 on
    /// Linux ignores `-n` (its CPU count comes from sysconf whenever that exists);
    /// pass `None` to reproduce that exactly.
    pub fn start(num_cpus_override: Option<u32>) -> io::Result<Self> {
        let num_cpus = num_cpus_override
            .filter(|&n| n > 0)
            .unwrap_or_else(num_cpus);
        let lines = num_cpus as usize;
        let mut sampler = CpuSampler {
            file: File::open(PROC_STAT_PATH)?,
            text: Vec::with_capacity(4096),
            num_cpus,
            start_ticks: Vec::with_capacity(lines),
            end_ticks: Vec::with_capacity(lines),
            started_at: Instant::now(),
        };
        sampler.restart()?;
        Ok(sampler)
    }

    /// Takes a new starting snapshot (e.g. for the next confidence iteration).
    pub fn restart(&mut self) -> io::Result<()> {
        // netperf takes its start time just before the first reading.
        self.started_at = Instant::now();
        let text = read_snapshot(&mut self.file, &mut self.text)?;
        parse_proc_stat(text, self.num_cpus, &mut self.start_ticks)
    }

    /// CPUs this sampler averages over.
    pub fn num_cpus(&self) -> u32 {
        self.num_cpus
    }

    /// Snaps /proc/stat again and returns the utilization since the start.
    pub fn stop(&mut self) -> io::Result<CpuUsage> {
        self.snapshot_end()?;
        Ok(usage_from_ticks(&self.start_ticks, &self.end_ticks, 1.0))
    }

    /// Like `stop`, but scales the figures to a test whose elapsed time differs
    /// from the sampler's own (netperf's correction factor: netserver subtracts
    /// the padding of a timer-ended UDP test and assumes it was idle meanwhile).
    pub fn stop_scaled_to(&mut self, test_elapsed_secs: f64) -> io::Result<CpuUsage> {
        // ... and its stop time just after the last one.
        self.snapshot_end()?;
        let sampler_elapsed = self.started_at.elapsed().as_secs_f32();
        let test_elapsed = test_elapsed_secs as f32;
        let correction = if test_elapsed != 0.0 {
            1.0 + (sampler_elapsed - test_elapsed) / test_elapsed
        } else {
            1.0
        };
        Ok(usage_from_ticks(
            &self.start_ticks,
            &self.end_ticks,
            correction,
        ))
    }

    fn snapshot_end(&mut self) -> io::Result<()> {
        let text = read_snapshot(&mut self.file, &mut self.text)?;
        parse_proc_stat(text, self.num_cpus, &mut self.end_ticks)
    }
}

/// Rereads the open /proc/stat from the top into the reused buffer.
fn read_snapshot<'a>(file: &mut File, buf: &'a mut Vec<u8>) -> io::Result<&'a str> {
    file.seek(SeekFrom::Start(0))?;
    buf.clear();
    file.read_to_end(buf)?;
    std::str::from_utf8(buf).map_err(|_| invalid(format!("{PROC_STAT_PATH} is not text")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const START_2CPU: &str = "\
cpu  2000 0 1000 7000 0 0 0 0 0 0
cpu0 1000 0 500 3500 0 0 0 0 0 0
cpu1 1000 0 500 3500 0 0 0 0 0 0
intr 1 2 3
ctxt 42
";
    // cpu0: +100 user, +50 sys, +30 iowait, +10 irq, +10 softirq, +800 idle (of 1000).
    // cpu1: +500 sys, +300 softirq, +200 idle (of 1000).
    const END_2CPU: &str = "\
cpu  2100 0 1550 8000 30 10 310 0 0 0
cpu0 1100 0 550 4300 30 10 10 0 0 0
cpu1 1000 0 1000 3700 0 0 300 0 0 0
intr 1 2 3
ctxt 43
";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn two_cpus_average_and_peak() {
        let u = usage_between(START_2CPU, END_2CPU, 2).unwrap();
        // cpu0 20 % busy, cpu1 80 % busy.
        assert!(close(u.util, 50.0), "{u:?}");
        assert!(close(u.user, 5.0));
        assert!(close(u.system, 27.5));
        assert!(close(u.iowait, 1.5));
        assert!(close(u.irq, 0.5));
        assert!(close(u.softirq, 15.5));
        assert!(close(u.peak_util, 80.0));
        assert_eq!(u.peak_id, 1);
        assert_eq!(u.num_cpus, 2);
        assert_eq!(u.method, 'S');
    }

    #[test]
    fn one_cpu_reads_the_total_line() {
        // Total line: +100 user +550 sys +1000 idle +30 iowait +10 irq +310 softirq.
        let u = usage_between(START_2CPU, END_2CPU, 1).unwrap();
        let total = 100.0 + 550.0 + 1000.0 + 30.0 + 10.0 + 310.0;
        assert!(close(u.util, 100.0 - 100.0 * 1000.0 / total), "{u:?}");
        assert_eq!(u.peak_id, 0);
        assert_eq!(u.num_cpus, 1);
    }

    #[test]
    fn idle_machine_peaks_at_zero_on_cpu_zero() {
        let u = usage_between(START_2CPU, START_2CPU, 2).unwrap();
        assert_eq!(u.util, 0.0);
        assert_eq!(u.peak_util, 0.0);
        assert_eq!(u.peak_id, 0);
    }

    #[test]
    fn peak_prefers_the_first_of_equals() {
        let start = "cpu 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\n";
        let end = "cpu 0 0 0 0\ncpu0 10 0 0 90\ncpu1 50 0 0 50\ncpu2 50 0 0 50\n";
        let u = usage_between(start, end, 3).unwrap();
        assert_eq!(u.peak_id, 1);
        assert!(close(u.peak_util, 50.0));
        assert!(close(u.util, 110.0 / 3.0));
    }

    #[test]
    fn peak_id_is_the_position_not_the_label() {
        // cpu1 offline: the kernel lists cpu0 and cpu2; netperf calls cpu2 "1".
        let start = "cpu 0 0 0 0\ncpu0 0 0 0 0\ncpu2 0 0 0 0\n";
        let end = "cpu 0 0 0 0\ncpu0 0 0 0 100\ncpu2 100 0 0 0\n";
        let u = usage_between(start, end, 2).unwrap();
        assert_eq!(u.peak_id, 1);
    }

    #[test]
    fn short_lines_are_zero_filled_down_to_four_columns() {
        let u = usage_between("cpu 0 0 0 0\n", "cpu 25 0 25 50\n", 1).unwrap();
        assert!(close(u.util, 50.0));
        let err = usage_between("cpu 0 0 0\n", "cpu 1 1 1\n", 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let bad = [
            "",
            "\n",
            "intr 1 2 3\n",
            "cpu 1 2 x 4\n",
            "cpu 1 2 3 99999999999999999999999\n",
            "cpu -1 2 3 4\n",
            "cpu0 1 2 3 4\n",
        ];
        for text in bad {
            // "cpu0 ..." is fine for one CPU; make the multi-CPU reading fail too.
            let one = usage_between(text, text, 1);
            let two = usage_between(text, text, 2);
            assert!(two.is_err(), "{text:?}");
            if !text.starts_with("cpu0") {
                assert!(one.is_err(), "{text:?}");
            }
        }
        // Fewer per-CPU lines than CPUs asked for.
        assert!(usage_between(START_2CPU, END_2CPU, 3).is_err());
    }

    #[test]
    fn extra_columns_are_ignored() {
        let u = usage_between(
            "cpu 0 0 0 0 0 0 0 0 0 0 7 7\n",
            "cpu 10 0 0 10 0 0 0 0 0 0 9 9\n",
            1,
        )
        .unwrap();
        assert!(close(u.util, 50.0));
    }

    #[test]
    fn no_ticks_charges_nothing_but_still_divides() {
        let start = "cpu 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n";
        let end = "cpu 0 0 0 0\ncpu0 100 0 0 0\ncpu1 0 0 0 0\n";
        let u = usage_between(start, end, 2).unwrap();
        assert!(close(u.util, 50.0));
        assert!(close(u.user, 50.0));
    }

    #[test]
    fn correction_factor_scales_everything() {
        let mut s = Vec::new();
        let mut e = Vec::new();
        parse_proc_stat(START_2CPU, 2, &mut s).unwrap();
        parse_proc_stat(END_2CPU, 2, &mut e).unwrap();
        let u = usage_from_ticks(&s, &e, 1.5);
        assert!(close(u.util, 75.0));
        assert!(close(u.peak_util, 120.0));
        assert!(close(u.system, 27.5 * 1.5));
    }

    #[test]
    fn counters_wrap_modulo_32_bits() {
        assert_eq!(tick_subtract(5, 7), 2);
        // 32-bit counter wrapped: 0xffff_fff0 -> 0x10 is 0x20 ticks.
        assert_eq!(tick_subtract(0xffff_fff0, 0x10), 0x20);
        // A 64-bit counter going backwards wraps as unsigned arithmetic.
        assert_eq!(tick_subtract(1 << 40, 0), 0u64.wrapping_sub(1 << 40));
    }

    #[test]
    fn live_sampler_reads_this_machine() {
        if std::fs::metadata(PROC_STAT_PATH).is_err() {
            return;
        }
        let mut sampler = CpuSampler::start(None).unwrap();
        let u = sampler.stop().unwrap();
        assert_eq!(u.num_cpus, num_cpus());
        assert!(u.util >= 0.0 && u.util <= 100.0 + 1e-3, "{u:?}");
        assert_eq!(u.method, 'S');
        assert!(calibrate_rate() > 0.0);
    }
}
