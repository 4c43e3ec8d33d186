//! The classic output of the Unix-domain tests, as netperf 2.7.1 prints it:
//! a title line, the column titles, and the result block for each `-v`
//! level, in netperf's own printf templates (kept in C notation so they can
//! be checked against its source column for column), plus the figures
//! behind them: throughput, CPU utilization and service demand.

use crate::measure::cpu::service_demand;
use crate::report::cfmt::{sprintf, Arg};
use crate::report::units;
use crate::wire::unix::UnixTest;

/// The first line each test prints (netperf prints no addresses for these).
fn title(test: UnixTest) -> &'static str {
    match test {
        UnixTest::StreamStream => "STREAM STREAM TEST\n",
        UnixTest::StreamRr => "STREAM REQUEST/RESPONSE TEST\n",
        UnixTest::DgStream => "DG UNIDIRECTIONAL SEND TEST\n",
        UnixTest::DgRr => "DG REQUEST/RESPONSE TEST\n",
    }
}

const STREAM_TPUT_TITLE: &str = concat!(
    "Recv   Send    Send                          \n",
    "Socket Socket  Message  Elapsed              \n",
    "Size   Size    Size     Time     Throughput  \n",
    "bytes  bytes   bytes    secs.    %s/sec  \n\n",
);
const STREAM_TPUT_FMT_1: &str = "%5d  %5d  %6d    %-6.2f   %7.2f   \n";
const STREAM_CPU_TITLE: &str = concat!(
    "Recv   Send    Send                          Utilization    Service Demand\n",
    "Socket Socket  Message  Elapsed              Send   Recv    Send    Recv\n",
    "Size   Size    Size     Time     Throughput  local  remote  local   remote\n",
    "bytes  bytes   bytes    secs.    %-8.8s/s  %%      %%       us/KB   us/KB\n\n",
);
const STREAM_CPU_FMT_1: &str =
    "%5d  %5d  %6d    %-6.2f     %7.2f   %-6.2f %-6.2f  %-6.3f  %-6.3f\n";
const STREAM_KSINK_FMT: &str = concat!(
    "\n",
    "Alignment      Offset         %-8.8s %-8.8s    Sends   %-8.8s Recvs\n",
    "Local  Remote  Local  Remote  Xfered   Per                 Per\n",
    "Send   Recv    Send   Recv             Send (avg)          Recv (avg)\n",
    "%5d   %5d  %5d   %5d %6.4g  %6.2f     %6d %6.2f   %6d\n",
);

const RR_TPUT_TITLE: &str = concat!(
    "Local /Remote\n",
    "Socket Size   Request  Resp.   Elapsed  Trans.\n",
    "Send   Recv   Size     Size    Time     Rate         \n",
    "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n",
);
const RR_TPUT_FMT_1: &str = "%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   \n";
const RR_CPU_TITLE: &str = concat!(
    "Local /Remote\n",
    "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n",
    "Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n",
    "bytes  bytes  bytes   bytes  secs.   per sec  %%      %%      us/Tr   us/Tr\n\n",
);
const RR_CPU_FMT_1: &str = "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f\n";
const RR_FMT_LINE_2: &str = "%-6d %-6d\n";
/// STREAM_RR's `-v 2` block. netperf prints it with "%s", so its "%5d"
/// directives come out literally; so do they here.
const STREAM_RR_KSINK_TEXT: &str = concat!(
    "Alignment      Offset\n",
    "Local  Remote  Local  Remote\n",
    "Send   Recv    Send   Recv\n",
    "%5d  %5d   %5d  %5d\n",
);
/// DG_RR's `-v 2` line (netperf built with interval support, as the
/// reference build is).
const DG_RR_AVERAGE_FMT: &str = "Average response time %d usecs\n";

const DG_TPUT_TITLE: &str = concat!(
    "Socket  Message  Elapsed      Messages                \n",
    "Size    Size     Time         Okay Errors   Throughput\n",
    "bytes   bytes    secs            #      #   %s/sec\n\n",
);
const DG_TPUT_FMT_1: &str = concat!(
    "%5d   %5d    %-7.2f   %7d %6d    %7.2f\n",
    "%5d            %-7.2f   %7d           %7.2f\n\n",
);
const DG_CPU_TITLE: &str = concat!(
    "Socket  Message  Elapsed      Messages                   CPU     Service\n",
    "Size    Size     Time         Okay Errors   Throughput   Util    Demand\n",
    "bytes   bytes    secs            #      #   %s/sec   %%       us/KB\n\n",
);
const DG_CPU_FMT_1: &str = concat!(
    "%5d   %5d    %-7.2f   %7d %6d    %7.1f      %-6.2f  %-6.3f\n",
    "%5d            %-7.2f   %7d           %7.1f      %-6.2f  %-6.3f\n\n",
);

const LOCAL_WARNING: &str = concat!(
    "WARNING WARNING WARNING  WARNING WARNING WARNING  WARNING!\n",
    "Local CPU usage numbers based on process information only!\n",
);

/// netperf's warning when netserver reports a CPU rate of 0 (each test
/// spaces its banner of DANGERs its own way).
fn remote_warning(test: UnixTest) -> &'static str {
    match test {
        UnixTest::StreamStream => concat!(
            "DANGER   DANGER  DANGER   DANGER   DANGER  DANGER   DANGER!\n",
            "Remote CPU usage numbers based on process information only!\n",
        ),
        UnixTest::StreamRr | UnixTest::DgRr => concat!(
            "DANGER  DANGER  DANGER    DANGER  DANGER  DANGER    DANGER!\n",
            "Remote CPU usage numbers based on process information only!\n",
        ),
        UnixTest::DgStream => concat!(
            "DANGER   DANGER  DANGER   DANGER  DANGER   DANGER   DANGER!\n",
            "REMOTE CPU usage numbers based on process information only!\n",
        ),
    }
}

/// The title line and the column titles, printed before the test runs.
/// `cpu`: either end measures CPU; `unit`: the `-f` letter in effect.
pub fn header(test: UnixTest, cpu: bool, unit: char) -> String {
    let columns = match (test, cpu) {
        (UnixTest::StreamStream, false) => STREAM_TPUT_TITLE,
        (UnixTest::StreamStream, true) => STREAM_CPU_TITLE,
        (UnixTest::DgStream, false) => DG_TPUT_TITLE,
        (UnixTest::DgStream, true) => DG_CPU_TITLE,
        (_, false) => RR_TPUT_TITLE,
        (_, true) => RR_CPU_TITLE,
    };
    let mut out = title(test).to_string();
    out.push_str(&sprintf(columns, &[Arg::Str(units::label(unit))]));
    out
}

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
    /// The `-f` letter in effect.
    pub unit: char,
    /// The local CPU count, used when netserver does not give one.
    pub local_num_cpus: u32,
}

/// The CPU columns of one run: utilization and service demand of each end,
/// -1 for an end that was not measured (as netperf prints them).
struct CpuFigures {
    local_util: f64,
    remote_util: f64,
    local_sd: f64,
    remote_sd: f64,
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

    fn cpu(&self, o: &ReportOptions) -> CpuFigures {
        let elapsed = f64::from(self.elapsed);
        let (local_work, remote_work) = self.work();
        let local_util = self.local_cpu.map_or(0.0, |c| c.util);
        let local_cpus = self
            .local_cpu
            .map_or(o.local_num_cpus, |c| c.num_cpus)
            .max(1);
        let (local_util_shown, local_sd) = match self.local_cpu {
            Some(_) => (
                local_util,
                service_demand(local_work, true, elapsed, local_util, local_cpus),
            ),
            None => (-1.0, -1.0),
        };
        let (remote_util, remote_sd) = match self.remote_cpu {
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
        CpuFigures {
            local_util: local_util_shown,
            remote_util,
            local_sd,
            remote_sd,
        }
    }

    fn throughput(&self, bytes: f64, unit: char) -> f64 {
        units::throughput(bytes, f64::from(self.elapsed), unit)
    }

    /// Transactions per second, computed in single precision as netperf's
    /// `nummessages/elapsed_time` is.
    fn rate(&self) -> f64 {
        f64::from(self.transactions as f32 / self.elapsed)
    }
}

fn int(v: impl Into<i64>) -> Arg<'static> {
    Arg::Int(v.into())
}

fn count(v: u64) -> Arg<'static> {
    Arg::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

fn float(v: impl Into<f64>) -> Arg<'static> {
    Arg::Float(v.into())
}

/// The figures the result block reports, under the omni selector names
/// of the same quantities (for `--store`), and the throughput's unit.
pub fn figures(m: &Measured, o: &ReportOptions) -> (Vec<(&'static str, f64)>, String) {
    let cpu = m.cpu(o);
    let mut out = vec![("ELAPSED_TIME", f64::from(m.elapsed))];
    let buffers = [
        ("LSS_SIZE_END", m.local_send_buf),
        ("LSR_SIZE_END", m.local_recv_buf),
        ("RSS_SIZE_END", m.remote_send_buf),
        ("RSR_SIZE_END", m.remote_recv_buf),
    ];
    let unit = match m.test {
        UnixTest::StreamStream => {
            out.push(("THROUGHPUT", m.throughput(m.bytes_sent, o.unit)));
            out.push(("LOCAL_SEND_SIZE", f64::from(m.send_size)));
            out.extend([buffers[0], buffers[3]].map(|(k, v)| (k, f64::from(v))));
            units::per_second_label(o.unit)
        }
        UnixTest::DgStream => {
            let (sent, received) = m.work();
            out.push(("LOCAL_SEND_THROUGHPUT", m.throughput(sent, o.unit)));
            out.push(("REMOTE_RECV_THROUGHPUT", m.throughput(received, o.unit)));
            // What arrived is the throughput, as for UDP_STREAM.
            out.push(("THROUGHPUT", m.throughput(received, o.unit)));
            out.push(("LOCAL_SEND_SIZE", f64::from(m.send_size)));
            out.extend([buffers[0], buffers[3]].map(|(k, v)| (k, f64::from(v))));
            units::per_second_label(o.unit)
        }
        UnixTest::StreamRr | UnixTest::DgRr => {
            out.push(("THROUGHPUT", m.rate()));
            out.push(("REQUEST_SIZE", f64::from(m.request_size)));
            out.push(("RESPONSE_SIZE", f64::from(m.response_size)));
            out.extend(buffers.map(|(k, v)| (k, f64::from(v))));
            units::per_second_label('x')
        }
    };
    if m.local_cpu.is_some() {
        out.extend([
            ("LOCAL_CPU_UTIL", cpu.local_util),
            ("LOCAL_SD", cpu.local_sd),
        ]);
    }
    if m.remote_cpu.is_some() {
        out.extend([
            ("REMOTE_CPU_UTIL", cpu.remote_util),
            ("REMOTE_SD", cpu.remote_sd),
        ]);
    }
    (out, unit)
}

/// The result block netperf prints after the test, warnings included.
pub fn result(m: &Measured, o: &ReportOptions) -> String {
    let mut out = String::new();
    let measured_cpu = m.local_cpu.is_some() || m.remote_cpu.is_some();
    if m.local_cpu.is_some_and(|c| c.rate == 0.0) {
        out.push_str(LOCAL_WARNING);
    }
    if m.remote_cpu.is_some_and(|c| c.rate == 0.0) {
        out.push_str(remote_warning(m.test));
    }
    let cpu = m.cpu(o);
    // With CPU at -v 0 netperf prints one service demand: ours if measured.
    let demand_only = if m.local_cpu.is_some() {
        cpu.local_sd
    } else {
        cpu.remote_sd
    };
    let v = o.verbosity;
    match m.test {
        UnixTest::StreamStream => {
            let tput = m.throughput(m.bytes_sent, o.unit);
            let sizes = [
                int(m.remote_recv_buf),
                int(m.local_send_buf),
                int(m.send_size),
                float(m.elapsed),
                float(tput),
            ];
            match (v, measured_cpu) {
                (0, false) => out.push_str(&sprintf("%7.2f\n", &[float(tput)])),
                (0, true) => out.push_str(&sprintf("%6.3f\n", &[float(demand_only)])),
                (1 | 2, false) => out.push_str(&sprintf(STREAM_TPUT_FMT_1, &sizes)),
                (1 | 2, true) => {
                    let mut args = sizes.to_vec();
                    args.extend([
                        float(cpu.local_util),
                        float(cpu.remote_util),
                        float(cpu.local_sd),
                        float(cpu.remote_sd),
                    ]);
                    out.push_str(&sprintf(STREAM_CPU_FMT_1, &args));
                }
                _ => {}
            }
            if v > 1 {
                let per = |calls: f64| m.bytes_sent / calls;
                out.push_str(&sprintf(
                    STREAM_KSINK_FMT,
                    &[
                        Arg::Str("Bytes"),
                        Arg::Str("Bytes"),
                        Arg::Str("Bytes"),
                        int(m.local_send_align),
                        int(m.remote_recv_align),
                        int(m.local_send_offset),
                        int(m.remote_recv_offset),
                        float(m.bytes_sent),
                        float(per(m.messages_sent as f64)),
                        count(m.messages_sent),
                        float(per(m.remote_recv_calls as f64)),
                        int(m.remote_recv_calls),
                    ],
                ));
            }
        }
        UnixTest::StreamRr | UnixTest::DgRr => {
            let rate = m.rate();
            let line_2 = sprintf(
                RR_FMT_LINE_2,
                &[int(m.remote_send_buf), int(m.remote_recv_buf)],
            );
            let sizes = [
                int(m.local_send_buf),
                int(m.local_recv_buf),
                int(m.request_size),
                int(m.response_size),
                float(m.elapsed),
                float(rate),
            ];
            // STREAM_RR prints its result lines at -v 1 only, DG_RR at 1 and 2.
            let lines = v == 1 || (v == 2 && m.test == UnixTest::DgRr);
            match (v, measured_cpu) {
                (0, false) => out.push_str(&sprintf("%7.2f\n", &[float(rate)])),
                (0, true) => out.push_str(&sprintf("%6.3f\n", &[float(demand_only)])),
                (_, false) if lines => {
                    out.push_str(&sprintf(RR_TPUT_FMT_1, &sizes));
                    out.push_str(&line_2);
                }
                (_, true) if lines => {
                    let mut args = sizes.to_vec();
                    args.extend([
                        float(cpu.local_util),
                        float(cpu.remote_util),
                        float(cpu.local_sd),
                        float(cpu.remote_sd),
                    ]);
                    out.push_str(&sprintf(RR_CPU_FMT_1, &args));
                    out.push_str(&line_2);
                }
                _ => {}
            }
            if v > 1 {
                if m.test == UnixTest::StreamRr {
                    out.push_str(STREAM_RR_KSINK_TEXT);
                } else {
                    // netperf averages per-transaction times; with one
                    // transaction in flight that is the elapsed time per
                    // transaction, which needs no clock read per transaction.
                    let usecs = if m.transactions > 0 {
                        f64::from(m.elapsed) * 1e6 / m.transactions as f64
                    } else {
                        0.0
                    };
                    out.push_str(&sprintf(DG_RR_AVERAGE_FMT, &[int(usecs as i32)]));
                }
            }
        }
        UnixTest::DgStream => {
            let (sent_bytes, recvd_bytes) = m.work();
            let local_tput = m.throughput(sent_bytes, o.unit);
            let remote_tput = m.throughput(recvd_bytes, o.unit);
            match (v, measured_cpu) {
                (0, false) => out.push_str(&sprintf("%7.2f\n", &[float(local_tput)])),
                (0, true) => out.push_str(&sprintf("%6.2f\n", &[float(demand_only)])),
                (1, false) => out.push_str(&sprintf(
                    DG_TPUT_FMT_1,
                    &[
                        int(m.local_send_buf),
                        int(m.send_size),
                        float(m.elapsed),
                        count(m.messages_sent),
                        count(m.failed_sends),
                        float(local_tput),
                        int(m.remote_recv_buf),
                        float(m.elapsed),
                        count(m.remote_messages),
                        float(remote_tput),
                    ],
                )),
                (1, true) => out.push_str(&sprintf(
                    DG_CPU_FMT_1,
                    &[
                        int(m.local_send_buf),
                        int(m.send_size),
                        float(m.elapsed),
                        count(m.messages_sent),
                        count(m.failed_sends),
                        float(local_tput),
                        float(cpu.local_util),
                        float(cpu.local_sd),
                        int(m.remote_recv_buf),
                        float(m.elapsed),
                        count(m.remote_messages),
                        float(remote_tput),
                        float(cpu.remote_util),
                        float(cpu.remote_sd),
                    ],
                )),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
