//! Classic (non-omni) result output of the migrated BSD tests, text for text
//! with netperf 2.7.1: the optional confidence warning, the column titles
//! (-P 1), the result row(s) at -v 0 or -v 1/2, and the -v 2 blocks with the
//! histogram. The banner line is separate (see `banner.rs`) because netperf
//! prints it before the test runs.
//!
//! The numbers netperf shows are computed here from an [`Outcome`] exactly as
//! netperf computes them (which side's bytes, which elapsed time, which unit);
//! the layouts and the test kinds themselves are data in `layouts.rs`.

use super::cfmt::{sprintf, Arg};
use super::confidence::{render_confidence_warning, ConfidenceWidths};
use super::histogram::render_histogram;
use super::layouts::{layout, ClassicKind, Counter, Field, Layout, Row};
use super::units::{label, throughput};
use netperf_data::measure::demand::{charged_cpus, service_demand, DemandUnit};
use netperf_data::measure::outcome::{CpuUsage, LatencyHistogram, Outcome, SideStats};

/// How the caller ran the test, as far as the output depends on it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassicOptions {
    /// -P: print the column titles (and leave the brand out of result rows).
    pub print_headers: bool,
    /// -v: 0 brief, 1 normal, 2 adds the verbose blocks; netperf prints no
    /// result row at all above 2 (or below 0) but still the verbose blocks.
    pub verbosity: i32,
    /// The effective -f letter (see `units::resolve_unit`).
    pub unit: char,
    /// -B: shown at the end of result rows when headers are off.
    pub brand: Option<String>,
    /// -c / -C: CPU utilization was asked for on this end.
    pub local_cpu: bool,
    pub remote_cpu: bool,
    /// Set when `-i max>1` was given and confidence was not reached: the
    /// achieved widths for the "!!! WARNING" block.
    pub confidence_warning: Option<ConfidenceWidths>,
    /// For multi-iteration runs: the means netperf reports instead of the
    /// last iteration's figures (see [`HeadlineFigures::mean`]).
    pub averaged: Option<HeadlineFigures>,
}

impl Default for ClassicOptions {
    fn default() -> Self {
        ClassicOptions {
            print_headers: true,
            verbosity: 1,
            unit: 'm',
            brand: None,
            local_cpu: false,
            remote_cpu: false,
            confidence_warning: None,
            averaged: None,
        }
    }
}

/// The six figures netperf averages over confidence iterations.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HeadlineFigures {
    pub elapsed: f64,
    /// Bytes or transactions per second in the -f units (TCP_CC: transactions).
    pub throughput: f64,
    /// Percent, or -1 when that end's CPU was not measured.
    pub local_cpu_util: f64,
    pub remote_cpu_util: f64,
    /// µs per KB or per transaction, or -1 when not measured.
    pub local_service_demand: f64,
    pub remote_service_demand: f64,
}

/// netperf's placeholder for a figure that was not measured.
const NOT_MEASURED: f64 = -1.0;

impl HeadlineFigures {
    /// The figures of one iteration, computed the way netperf does for `kind`.
    pub fn from_outcome(
        kind: ClassicKind,
        outcome: &Outcome,
        opts: &ClassicOptions,
    ) -> HeadlineFigures {
        let elapsed = outcome.elapsed;
        let (work, demand_unit) = service_demand_work(kind, outcome, opts.unit);
        let local_cpus = measured(opts.local_cpu, &outcome.local).map_or(0, |c| c.num_cpus);
        let demand = |cpu: Option<&CpuUsage>| match cpu {
            Some(cpu) => {
                let cpus = charged_cpus(cpu.num_cpus, local_cpus);
                (
                    cpu.util,
                    service_demand(work, demand_unit, elapsed, cpu.util, cpus),
                )
            }
            None => (NOT_MEASURED, NOT_MEASURED),
        };
        let (local_cpu_util, local_service_demand) =
            demand(measured(opts.local_cpu, &outcome.local));
        let (remote_cpu_util, remote_service_demand) =
            demand(measured(opts.remote_cpu, &outcome.remote));
        HeadlineFigures {
            elapsed,
            throughput: headline_throughput(kind, outcome, opts.unit),
            local_cpu_util,
            remote_cpu_util,
            local_service_demand,
            remote_service_demand,
        }
    }

    /// The per-field mean of several iterations, as netperf reports after a
    /// confidence run; `None` for no iterations.
    pub fn mean(iterations: &[HeadlineFigures]) -> Option<HeadlineFigures> {
        if iterations.is_empty() {
            return None;
        }
        let n = iterations.len() as f64;
        let avg = |get: fn(&HeadlineFigures) -> f64| iterations.iter().map(get).sum::<f64>() / n;
        Some(HeadlineFigures {
            elapsed: avg(|f| f.elapsed),
            throughput: avg(|f| f.throughput),
            local_cpu_util: avg(|f| f.local_cpu_util),
            remote_cpu_util: avg(|f| f.remote_cpu_util),
            local_service_demand: avg(|f| f.local_service_demand),
            remote_service_demand: avg(|f| f.remote_service_demand),
        })
    }
}

/// CPU figures of a side, if they were asked for and measured.
fn measured(asked: bool, side: &SideStats) -> Option<&CpuUsage> {
    side.cpu.as_ref().filter(|_| asked)
}

fn total_bytes(side: &SideStats) -> f64 {
    side.bytes_sent as f64 + side.bytes_received as f64
}

/// What netperf calls the test's throughput.
fn headline_throughput(kind: ClassicKind, outcome: &Outcome, unit: char) -> f64 {
    let transactions = outcome.local.transactions as f64;
    match kind {
        // TCP_CC prints connections per second whatever -f says.
        ClassicKind::TcpCc => transactions / outcome.elapsed,
        ClassicKind::TcpSendfile => {
            throughput(outcome.remote.bytes_received as f64, outcome.elapsed, unit)
        }
        _ if unit == 'x' => throughput(transactions, outcome.elapsed, 'x'),
        // A receive-only test trusts its own byte count ...
        ClassicKind::TcpMaerts => throughput(total_bytes(&outcome.local), outcome.elapsed, unit),
        // ... everything else what the remote end saw.
        _ => throughput(total_bytes(&outcome.remote), outcome.elapsed, unit),
    }
}

/// The work service demand is charged for, and its unit.
fn service_demand_work(kind: ClassicKind, outcome: &Outcome, unit: char) -> (f64, DemandUnit) {
    let transactions = outcome.local.transactions as f64;
    match kind {
        ClassicKind::TcpCc => (transactions, DemandUnit::PerTransaction),
        ClassicKind::TcpSendfile => (
            outcome.remote.bytes_received as f64,
            DemandUnit::PerKilobyte,
        ),
        _ => match DemandUnit::for_output_unit(unit) {
            DemandUnit::PerTransaction => (transactions, DemandUnit::PerTransaction),
            DemandUnit::PerKilobyte => (total_bytes(&outcome.local), DemandUnit::PerKilobyte),
        },
    }
}

/// The header and result block of one classic test (everything after the banner).
pub fn render_classic(kind: ClassicKind, outcome: &Outcome, opts: &ClassicOptions) -> String {
    let figures = opts
        .averaged
        .unwrap_or_else(|| HeadlineFigures::from_outcome(kind, outcome, opts));
    render_layout(layout(kind), outcome, opts, figures)
}

/// Everything after the banner in `layout`, showing `figures` (computed by
/// the caller by its test's rules).
pub(super) fn render_layout(
    layout: &Layout,
    outcome: &Outcome,
    opts: &ClassicOptions,
    figures: HeadlineFigures,
) -> String {
    let context = Context {
        outcome,
        opts,
        figures,
    };
    let mut out = String::new();

    if layout.warns_on_confidence {
        if let Some(widths) = &opts.confidence_warning {
            out.push_str(&render_confidence_warning(widths));
        }
    }

    let with_cpu = opts.local_cpu || opts.remote_cpu;
    match opts.verbosity {
        0 => {
            let row = match (with_cpu, opts.local_cpu) {
                (false, _) => &layout.brief,
                (true, true) => &layout.cpu_brief_local,
                (true, false) => &layout.cpu_brief_remote,
            };
            out.push_str(&context.render(row));
        }
        v if v >= 1 && v <= layout.last_result_verbosity => {
            if opts.print_headers {
                out.push_str(&context.render(title_row(layout, with_cpu, opts.unit)));
            }
            let row = if with_cpu {
                &layout.cpu_result
            } else {
                &layout.result
            };
            out.push_str(&context.render(row));
        }
        _ => {}
    }

    if opts.verbosity > 1 {
        for row in layout.verbose {
            out.push_str(&context.render(row));
        }
        if layout.histogram {
            let empty = LatencyHistogram::default();
            out.push_str(&render_histogram(
                outcome.histogram.as_ref().unwrap_or(&empty),
            ));
        }
    }
    out
}

/// The column titles of `layout` alone, for the tests that print them before
/// they run (so a method letter in them would show 'U'); `opts.local_cpu` or
/// `remote_cpu` chooses the CPU titles.
pub(super) fn render_titles(layout: &Layout, opts: &ClassicOptions) -> String {
    let context = Context {
        outcome: &Outcome::default(),
        opts,
        figures: HeadlineFigures::default(),
    };
    let with_cpu = opts.local_cpu || opts.remote_cpu;
    context.render(title_row(layout, with_cpu, opts.unit))
}

/// RR tests reporting in anything but transactions get netperf's "band" titles.
fn title_row(layout: &Layout, with_cpu: bool, unit: char) -> &Row {
    let (plain, non_trans) = if with_cpu {
        (&layout.cpu_title, &layout.cpu_title_non_trans)
    } else {
        (&layout.title, &layout.title_non_trans)
    };
    match non_trans {
        Some(row) if unit != 'x' => row,
        _ => plain,
    }
}

/// Everything a template value can come from.
struct Context<'a> {
    outcome: &'a Outcome,
    opts: &'a ClassicOptions,
    figures: HeadlineFigures,
}

impl Context<'_> {
    fn render(&self, row: &Row) -> String {
        let args: Vec<Arg> = row.fields.iter().map(|f| self.value(*f)).collect();
        sprintf(row.template, &args)
    }

    fn value(&self, field: Field) -> Arg<'_> {
        let o = self.outcome;
        let (local, remote) = (&o.local, &o.remote);
        let f = &self.figures;
        match field {
            Field::Text(text) => Arg::Str(text),
            Field::Units => Arg::Str(label(self.opts.unit)),
            Field::SinkUnits => Arg::Str(label(self.sink_unit())),
            Field::Brand => Arg::Str(self.brand()),
            Field::LocalCpuMethod => Arg::Char(method(self.opts.local_cpu, local)),
            Field::RemoteCpuMethod => Arg::Char(method(self.opts.remote_cpu, remote)),
            Field::LocalSendBuf => Arg::Int(local.send_buf.into()),
            Field::LocalRecvBuf => Arg::Int(local.recv_buf.into()),
            Field::RemoteSendBuf => Arg::Int(remote.send_buf.into()),
            Field::RemoteRecvBuf => Arg::Int(remote.recv_buf.into()),
            Field::LocalSendSize => Arg::Int(local.send_size.into()),
            Field::RemoteSendSize => Arg::Int(remote.send_size.into()),
            Field::RequestSize => Arg::Int(o.request_size.into()),
            Field::ResponseSize => Arg::Int(o.response_size.into()),
            Field::Elapsed => Arg::Float(f.elapsed),
            Field::Throughput => Arg::Float(f.throughput),
            Field::LocalCpuUtil => Arg::Float(f.local_cpu_util),
            Field::RemoteCpuUtil => Arg::Float(f.remote_cpu_util),
            Field::LocalServiceDemand => Arg::Float(f.local_service_demand),
            Field::RemoteServiceDemand => Arg::Float(f.remote_service_demand),
            Field::Count(counter) => {
                Arg::Int(i64::try_from(self.count(counter)).unwrap_or(i64::MAX))
            }
            Field::CountAsFloat(counter) => Arg::Float(self.count(counter) as f64),
            Field::Ratio(over, under) => {
                Arg::Float(self.count(over) as f64 / self.count(under) as f64)
            }
            Field::LocalSendThroughput => Arg::Float(self.per_second(local.bytes_sent)),
            Field::RemoteRecvThroughput => Arg::Float(self.per_second(remote.bytes_received)),
            Field::LocalSendAlign => Arg::Int(local.send_align.into()),
            Field::LocalRecvAlign => Arg::Int(local.recv_align.into()),
            Field::RemoteRecvAlign => Arg::Int(remote.recv_align.into()),
            Field::LocalSendOffset => Arg::Int(local.send_offset.into()),
            Field::LocalRecvOffset => Arg::Int(local.recv_offset.into()),
            Field::RemoteRecvOffset => Arg::Int(remote.recv_offset.into()),
            Field::TransportMss => Arg::Int(o.transport_mss.into()),
            Field::RoundTripLatency => {
                let burst = f64::from(o.first_burst);
                Arg::Float(1.0 / self.transaction_rate() * 1_000_000.0 * (1.0 + burst))
            }
            Field::TransactionRate => Arg::Float(self.transaction_rate()),
            Field::OutboundThroughput => Arg::Float(self.rr_direction_rate(o.request_size)),
            Field::InboundThroughput => Arg::Float(self.rr_direction_rate(o.response_size)),
            Field::MeanTransactionUsecs => match local.transactions {
                0 => Arg::Int(0),
                n => Arg::Int(((o.elapsed * 1e6 / n as f64) as i32).into()),
            },
        }
    }

    fn brand(&self) -> &str {
        match (&self.opts.brand, self.opts.print_headers) {
            (Some(brand), false) => brand,
            _ => "",
        }
    }

    /// netperf reports per-direction byte rates in 'm' when the test unit is 'x'.
    fn sink_unit(&self) -> char {
        if self.opts.unit == 'x' {
            'm'
        } else {
            self.opts.unit
        }
    }

    fn per_second(&self, bytes: u64) -> f64 {
        throughput(bytes as f64, self.outcome.elapsed, self.sink_unit())
    }

    fn transaction_rate(&self) -> f64 {
        self.outcome.local.transactions as f64 / self.outcome.elapsed
    }

    fn rr_direction_rate(&self, message_size: i32) -> f64 {
        throughput(
            self.transaction_rate() * f64::from(message_size),
            1.0,
            self.sink_unit(),
        )
    }

    fn count(&self, counter: Counter) -> u64 {
        let (local, remote) = (&self.outcome.local, &self.outcome.remote);
        match counter {
            Counter::LocalBytesSent => local.bytes_sent,
            Counter::LocalBytesReceived => local.bytes_received,
            Counter::RemoteBytesSent => remote.bytes_sent,
            Counter::RemoteBytesReceived => remote.bytes_received,
            Counter::LocalSendCalls => local.send_calls,
            Counter::LocalRecvCalls => local.recv_calls,
            Counter::RemoteSendCalls => remote.send_calls,
            Counter::RemoteRecvCalls => remote.recv_calls,
            Counter::LocalFailedSends => local.failed_sends,
        }
    }
}

/// The CPU method letter of a side: netperf shows 'U' (unknown) for a side
/// whose CPU was not measured.
fn method(asked: bool, side: &SideStats) -> char {
    measured(asked, side).map_or('U', |cpu| cpu.method)
}
