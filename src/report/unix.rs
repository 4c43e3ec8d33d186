//! The output of the Unix-domain tests: what a run measured ([`Measured`]),
//! the figures netperf derives from it (throughput, CPU utilization and
//! service demand by these tests' own rules), and the conversion into what
//! the classic renderer prints through the layouts of `unix_layouts.rs`.

use super::classic::{render_layout, render_titles, ClassicOptions, HeadlineFigures};
use super::units;
use super::unix_layouts::{unix_layout, LOCAL_CPU_WARNING};
use crate::measure::cpu::service_demand;
use crate::measure::outcome::{Outcome, SideStats};
pub use crate::spec::UnixTest;

/// One end's CPU figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cpu {
    /// Utilization in percent over all CPUs.
    pub util: f64,
    /// CPUs the utilization is averaged over (0: unknown, use ours).
    pub num_cpus: u32,
    /// The CPU rate the end reported (netperf warns when it is 0).
    pub rate: f32,
}

/// Everything one run measured that the output shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub test: UnixTest,
    /// Socket buffer sizes as each end's getsockopt reported them.
    pub local_send_buf: i32,
    pub local_recv_buf: i32,
    pub remote_send_buf: i32,
    pub remote_recv_buf: i32,
    /// Bytes per send (STREAM_STREAM) or per datagram (DG_STREAM).
    pub send_size: i32,
    pub request_size: i32,
    pub response_size: i32,
    /// netperf's own elapsed seconds: every rate is per this time.
    pub elapsed: f32,
    pub bytes_sent: f64,
    pub messages_sent: u64,
    pub failed_sends: u64,
    /// DG_STREAM: datagrams netserver received.
    pub remote_messages: u64,
    /// STREAM_STREAM: netserver's receive calls (shown at `-v 2`).
    pub remote_recv_calls: i64,
    pub transactions: u64,
    /// None when that end did not measure CPU.
    pub local_cpu: Option<Cpu>,
    pub remote_cpu: Option<Cpu>,
    pub local_send_align: u32,
    pub remote_recv_align: u32,
    pub local_send_offset: u32,
    pub remote_recv_offset: u32,
}

/// How the result block is printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportOptions {
    pub verbosity: i32,
    /// The `-f` letter in effect, as `units::resolve_unit` settles it ('x'
    /// only for the request/response tests: DG_STREAM's rows show 'x' as 'm').
    pub unit: char,
    /// The local CPU count, used when netserver does not give one.
    pub local_num_cpus: u32,
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
    let mut out = String::new();
    if m.local_cpu.is_some_and(|c| c.rate == 0.0) {
        out.push_str(LOCAL_CPU_WARNING);
    }
    if m.remote_cpu.is_some_and(|c| c.rate == 0.0) {
        out.push_str(unix.remote_cpu_warning);
    }
    let opts = ClassicOptions {
        // The titles went out before the run (see `header`).
        print_headers: false,
        verbosity: o.verbosity,
        unit: o.unit,
        local_cpu: m.local_cpu.is_some(),
        remote_cpu: m.remote_cpu.is_some(),
        ..ClassicOptions::default()
    };
    out.push_str(&render_layout(
        &unix.layout,
        &m.outcome(),
        &opts,
        m.figures(o),
    ));
    out
}

/// The figures the result block reports, under the omni selector names
/// of the same quantities (for `--store`), and the throughput's unit.
pub fn figures(m: &Measured, o: &ReportOptions) -> (Vec<(&'static str, f64)>, String) {
    let f = m.figures(o);
    let mut out = vec![("ELAPSED_TIME", f.elapsed)];
    let [lss, lsr, rss, rsr] = [
        ("LSS_SIZE_END", m.local_send_buf),
        ("LSR_SIZE_END", m.local_recv_buf),
        ("RSS_SIZE_END", m.remote_send_buf),
        ("RSR_SIZE_END", m.remote_recv_buf),
    ]
    .map(|(k, v)| (k, f64::from(v)));
    let unit = if m.test.is_request_response() {
        out.extend([
            ("THROUGHPUT", f.throughput),
            ("REQUEST_SIZE", f64::from(m.request_size)),
            ("RESPONSE_SIZE", f64::from(m.response_size)),
            lss,
            lsr,
            rss,
            rsr,
        ]);
        'x'
    } else {
        if m.test == UnixTest::DgStream {
            let (sent, received) = m.work();
            let received = m.throughput(received, o.unit);
            out.push(("LOCAL_SEND_THROUGHPUT", m.throughput(sent, o.unit)));
            out.push(("REMOTE_RECV_THROUGHPUT", received));
            // What arrived is the throughput, as for UDP_STREAM.
            out.push(("THROUGHPUT", received));
        } else {
            out.push(("THROUGHPUT", f.throughput));
        }
        out.extend([("LOCAL_SEND_SIZE", f64::from(m.send_size)), lss, rsr]);
        o.unit
    };
    if m.local_cpu.is_some() {
        out.extend([
            ("LOCAL_CPU_UTIL", f.local_cpu_util),
            ("LOCAL_SD", f.local_service_demand),
        ]);
    }
    if m.remote_cpu.is_some() {
        out.extend([
            ("REMOTE_CPU_UTIL", f.remote_cpu_util),
            ("REMOTE_SD", f.remote_service_demand),
        ]);
    }
    (out, units::per_second_label(unit))
}

impl Measured {
    /// The bytes (or, for request/response, transactions times 1024: netperf
    /// charges per KB) each end's service demand is charged for.
    fn work(&self) -> (f64, f64) {
        match self.test {
            UnixTest::StreamStream => (self.bytes_sent, self.bytes_sent),
            UnixTest::DgStream => (
                f64::from(self.send_size) * self.messages_sent as f64,
                f64::from(self.send_size) * self.remote_messages as f64,
            ),
            UnixTest::StreamRr | UnixTest::DgRr => {
                let work = self.transactions as f64 * 1024.0;
                (work, work)
            }
        }
    }

    fn throughput(&self, bytes: f64, unit: char) -> f64 {
        units::throughput(bytes, f64::from(self.elapsed), unit)
    }

    /// Throughput, utilization and service demand (-1 for an end that was
    /// not measured), as netperf computes them for these tests.
    fn figures(&self, o: &ReportOptions) -> HeadlineFigures {
        let elapsed = f64::from(self.elapsed);
        let (local_work, remote_work) = self.work();
        let local_util = self.local_cpu.map_or(0.0, |c| c.util);
        let local_cpus = self
            .local_cpu
            .map_or(o.local_num_cpus, |c| c.num_cpus)
            .max(1);
        let (local_cpu_util, local_service_demand) = match self.local_cpu {
            Some(_) => (
                local_util,
                service_demand(local_work, true, elapsed, local_util, local_cpus),
            ),
            None => (-1.0, -1.0),
        };
        let (remote_cpu_util, remote_service_demand) = match self.remote_cpu {
            Some(c) => {
                // netperf's calc_service_demand takes 0 to mean "use the
                // local figure", for the utilization and the CPU count.
                let util = if c.util == 0.0 { local_util } else { c.util };
                let cpus = if c.num_cpus == 0 {
                    local_cpus
                } else {
                    c.num_cpus
                };
                (
                    c.util,
                    service_demand(remote_work, true, elapsed, util, cpus),
                )
            }
            None => (-1.0, -1.0),
        };
        let throughput = match self.test {
            // Transactions per second in single precision, as netperf's
            // `nummessages/elapsed_time`.
            UnixTest::StreamRr | UnixTest::DgRr => {
                f64::from(self.transactions as f32 / self.elapsed)
            }
            _ => self.throughput(local_work, o.unit),
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

    /// The counters in the shape the classic layouts read them.
    fn outcome(&self) -> Outcome {
        let (sent, received) = self.work();
        let remote_recv_calls = match self.test {
            UnixTest::DgStream => self.remote_messages,
            _ => u64::try_from(self.remote_recv_calls).unwrap_or(0),
        };
        Outcome {
            elapsed: f64::from(self.elapsed),
            local: SideStats {
                bytes_sent: sent as u64,
                send_calls: self.messages_sent,
                failed_sends: self.failed_sends,
                transactions: self.transactions,
                send_buf: self.local_send_buf,
                recv_buf: self.local_recv_buf,
                send_size: self.send_size,
                send_align: self.local_send_align,
                send_offset: self.local_send_offset,
                ..SideStats::default()
            },
            remote: SideStats {
                bytes_received: received as u64,
                recv_calls: remote_recv_calls,
                send_buf: self.remote_send_buf,
                recv_buf: self.remote_recv_buf,
                recv_align: self.remote_recv_align,
                recv_offset: self.remote_recv_offset,
                ..SideStats::default()
            },
            request_size: self.request_size,
            response_size: self.response_size,
            ..Outcome::default()
        }
    }
}

#[cfg(test)]
#[path = "unix_tests.rs"]
mod tests;
