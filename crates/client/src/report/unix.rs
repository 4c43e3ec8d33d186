//! The output of the Unix-domain tests: what a run measured ([`Measured`]),
//! the figures netperf derives from it (throughput, CPU utilization and
//! service demand by these tests' own rules), and the conversion into what
//! the classic renderer prints through the layouts of `unix_layouts.rs`.

use super::classic::{render_layout, render_titles, ClassicOptions, HeadlineFigures};
use super::units;
use super::unix_layouts::{unix_layout, LOCAL_CPU_WARNING};
use netperf_data::measure::demand::{service_demand, DemandUnit};
use netperf_data::measure::outcome::{CpuUsage, Outcome};
pub use netperf_data::spec::UnixTest;

/// What one run measured: the counters in the shape the classic layouts
/// read them, and the CPU rate each end reported (netperf warns of a 0).
///
/// Each end's bytes are the work its service demand is charged for: bytes
/// for the streams (DG_STREAM's datagrams times their size, on each end),
/// transactions times 1024 for request/response, as netperf charges per KB.
/// An end's CPU count is settled: netserver's, or ours when it gives none.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub test: UnixTest,
    pub outcome: Outcome,
    pub local_cpu_rate: f32,
    pub remote_cpu_rate: f32,
}

/// How the result block is printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportOptions {
    pub verbosity: i32,
    /// The `-f` letter in effect, as `units::resolve_unit` settles it ('x'
    /// only for the request/response tests: DG_STREAM's rows show 'x' as 'm').
    pub unit: char,
}

/// The title line and the column titles, printed before the test runs.
/// `cpu`: either end measures CPU; `unit`: the `-f` letter in effect.
pub fn header(test: UnixTest, cpu: bool, unit: char) -> String {
    let unix = unix_layout(test);
    let opts = ClassicOptions {
        unit,
        local_cpu: cpu,
        ..ClassicOptions::default()
    };
    format!("{}{}", unix.title, render_titles(&unix.layout, &opts))
}

/// The result block netperf prints after the test, warnings included.
pub fn result(m: &Measured, o: &ReportOptions) -> String {
    let unix = unix_layout(m.test);
    let (local, remote) = (&m.outcome.local, &m.outcome.remote);
    let mut out = String::new();
    if local.cpu.is_some() && m.local_cpu_rate == 0.0 {
        out.push_str(LOCAL_CPU_WARNING);
    }
    if remote.cpu.is_some() && m.remote_cpu_rate == 0.0 {
        out.push_str(unix.remote_cpu_warning);
    }
    let opts = ClassicOptions {
        // The titles went out before the run (see `header`).
        print_headers: false,
        verbosity: o.verbosity,
        unit: o.unit,
        local_cpu: local.cpu.is_some(),
        remote_cpu: remote.cpu.is_some(),
        ..ClassicOptions::default()
    };
    out.push_str(&render_layout(
        &unix.layout,
        &m.outcome,
        &opts,
        m.figures(o.unit),
    ));
    out
}

/// The figures the result block reports, under the omni selector names
/// of the same quantities (for `--store`), and the throughput's unit.
pub fn figures(m: &Measured, o: &ReportOptions) -> (Vec<(&'static str, f64)>, String) {
    let f = m.figures(o.unit);
    let (local, remote) = (&m.outcome.local, &m.outcome.remote);
    let mut out = vec![("ELAPSED_TIME", f.elapsed)];
    let [lss, lsr, rss, rsr] = [
        ("LSS_SIZE_END", local.send_buf),
        ("LSR_SIZE_END", local.recv_buf),
        ("RSS_SIZE_END", remote.send_buf),
        ("RSR_SIZE_END", remote.recv_buf),
    ]
    .map(|(k, v)| (k, f64::from(v)));
    let unit = if m.test.is_request_response() {
        out.extend([
            ("THROUGHPUT", f.throughput),
            ("REQUEST_SIZE", f64::from(m.outcome.request_size)),
            ("RESPONSE_SIZE", f64::from(m.outcome.response_size)),
            lss,
            lsr,
            rss,
            rsr,
        ]);
        'x'
    } else {
        if m.test == UnixTest::DgStream {
            let received = m.throughput(remote.bytes_received, o.unit);
            out.push((
                "LOCAL_SEND_THROUGHPUT",
                m.throughput(local.bytes_sent, o.unit),
            ));
            out.push(("REMOTE_RECV_THROUGHPUT", received));
            // What arrived is the throughput, as for UDP_STREAM.
            out.push(("THROUGHPUT", received));
        } else {
            out.push(("THROUGHPUT", f.throughput));
        }
        out.extend([("LOCAL_SEND_SIZE", f64::from(local.send_size)), lss, rsr]);
        o.unit
    };
    if local.cpu.is_some() {
        out.extend([
            ("LOCAL_CPU_UTIL", f.local_cpu_util),
            ("LOCAL_SD", f.local_service_demand),
        ]);
    }
    if remote.cpu.is_some() {
        out.extend([
            ("REMOTE_CPU_UTIL", f.remote_cpu_util),
            ("REMOTE_SD", f.remote_service_demand),
        ]);
    }
    (out, units::per_second_label(unit))
}

impl Measured {
    fn throughput(&self, bytes: u64, unit: char) -> f64 {
        units::throughput(bytes as f64, self.outcome.elapsed, unit)
    }

    /// Throughput, utilization and service demand (-1 for an end that was
    /// not measured), as netperf computes them for these tests.
    fn figures(&self, unit: char) -> HeadlineFigures {
        let o = &self.outcome;
        let elapsed = o.elapsed;
        let local_util = o.local.cpu.as_ref().map_or(0.0, |c| c.util);
        // netperf's calc_service_demand takes a remote utilization of 0 to
        // mean "use the local figure".
        let demand = |cpu: Option<&CpuUsage>, work: u64| match cpu {
            Some(c) => {
                let util = if c.util == 0.0 { local_util } else { c.util };
                let cpus = c.num_cpus.max(1);
                (
                    c.util,
                    service_demand(work as f64, DemandUnit::PerKilobyte, elapsed, util, cpus),
                )
            }
            None => (-1.0, -1.0),
        };
        let (local_cpu_util, local_service_demand) =
            demand(o.local.cpu.as_ref(), o.local.bytes_sent);
        let (remote_cpu_util, remote_service_demand) =
            demand(o.remote.cpu.as_ref(), o.remote.bytes_received);
        let throughput = if self.test.is_request_response() {
            // Transactions per second in single precision, as netperf's
            // `nummessages/elapsed_time`.
            f64::from(o.local.transactions as f32 / elapsed as f32)
        } else {
            self.throughput(o.local.bytes_sent, unit)
        };
        HeadlineFigures {
            elapsed,
            throughput,
            local_cpu_util,
            remote_cpu_util,
            local_service_demand,
            remote_service_demand,
        }
    }
}

#[cfg(test)]
#[path = "unix_tests.rs"]
mod tests;
