//! Fills the `OmniRecord` from what a test measured, computing every derived
//! figure the way netperf's omni code does: which side's bytes make the
//! headline, round-trip latency from the transaction rate and burst, service
//! demand per KB or per transaction, bytes per call.

use super::record::{
    BufferSizes, ConfidenceRecord, CpuRecord, EndRecord, EndpointRecord, InterfaceRecord,
    LatencyRecord, OmniRecord, SystemRecord,
};
use crate::report::units::{label, throughput};
use netperf_data::measure::demand::{charged_cpus, service_demand, DemandUnit};
use netperf_data::measure::outcome::{CpuUsage, LatencyHistogram, Outcome, SideStats};
use netperf_data::spec::TestSpec;

/// Facts about one end that the counters do not carry.
#[derive(Debug, Clone, Default)]
pub struct EndFacts {
    pub cong_control: String,
    pub fill_file: String,
    pub cpu_bind: i32,
    pub system: SystemRecord,
    pub interface: InterfaceRecord,
}

/// Confidence-run figures (means over the iterations) that replace the last
/// iteration's headline figures, as netperf's retrieve_confident_values does:
/// the same six figures the classic output averages.
pub use crate::report::classic::HeadlineFigures as Averaged;

/// Everything the record is made from.
pub struct RecordInput<'a> {
    pub test_name: &'a str,
    pub command_line: String,
    pub uuid: String,
    pub brand: Option<String>,
    pub spec: &'a TestSpec,
    pub outcome: &'a Outcome,
    /// The resolved -f letter: 'x' for request/response tests.
    pub unit: char,
    pub local_cpu: bool,
    pub remote_cpu: bool,
    /// Number of local CPUs, for service demand when a side reports none.
    pub local_cpu_count: u32,
    pub source: EndpointRecord,
    pub dest: EndpointRecord,
    pub confidence: ConfidenceRecord,
    pub cpu_confidence: (f64, f64),
    pub averaged: Option<Averaged>,
    pub local: EndFacts,
    pub remote: EndFacts,
}

/// netperf keeps these figures in single precision; printing them from a
/// float rounds differently at the last digit now and then.
fn single(v: f64) -> f64 {
    f64::from(v as f32)
}

/// The record of one test, every figure computed as netperf computes it.
pub fn build(input: RecordInput) -> OmniRecord {
    let f = Figures::of(&input);
    let shown = input.averaged.unwrap_or_else(|| f.measured());
    let (rt_latency, transaction_rate) = f.round_trip();
    let (o, spec) = (f.o, f.spec);
    let local = local_end(&f, input.local, &shown, input.cpu_confidence.0);
    let remote = remote_end(&f, input.remote, &shown, input.cpu_confidence.1);
    OmniRecord {
        test_name: input.test_name.to_string(),
        command_line: input.command_line,
        uuid: input.uuid,
        brand: input.brand,
        socket_type: socket_type_text(spec),
        protocol: match spec.protocol {
            netperf_data::spec::Protocol::Tcp => "TCP",
            netperf_data::spec::Protocol::Udp if spec.udp_lite => "UDPLite",
            netperf_data::spec::Protocol::Udp => "UDP",
        },
        direction: direction_text(spec),
        elapsed: shown.elapsed,
        source: input.source,
        dest: input.dest,
        throughput: shown.throughput,
        throughput_units: label(input.unit).to_string(),
        directional_units: label(f.directional_unit()).to_string(),
        confidence: input.confidence,
        transaction_rate,
        rt_latency,
        request_size: i64::from(spec.request_size),
        response_size: i64::from(spec.response_size),
        burst_size: i64::from(spec.first_burst_given),
        transport_mss: i64::from(o.transport_mss),
        sd_units: DemandUnit::for_output_unit(input.unit).omni_label(),
        latency: o.histogram.as_ref().map(latency_record).unwrap_or_default(),
        local,
        remote,
        rr_timeouts: o.local.timeouts as i64,
        interims: Vec::new(),
        flows: Default::default(),
        open_loop: Default::default(),
    }
}

/// What the record's figures are computed from: the outcome, the test, the
/// -f unit, the time in single precision, and the CPU usage of each end
/// that was asked for.
struct Figures<'a> {
    o: &'a Outcome,
    spec: &'a TestSpec,
    unit: char,
    /// The unit is transactions ('x'): a request/response test.
    x: bool,
    elapsed: f64,
    local_cpu: Option<&'a CpuUsage>,
    remote_cpu: Option<&'a CpuUsage>,
    /// Number of local CPUs, for service demand when a side reports none.
    local_cpu_count: u32,
}

impl<'a> Figures<'a> {
    fn of(input: &RecordInput<'a>) -> Figures<'a> {
        let o = input.outcome;
        Figures {
            o,
            spec: input.spec,
            unit: input.unit,
            x: input.unit == 'x',
            elapsed: single(o.elapsed),
            local_cpu: o.local.cpu.as_ref().filter(|_| input.local_cpu),
            remote_cpu: o.remote.cpu.as_ref().filter(|_| input.remote_cpu),
            local_cpu_count: input.local_cpu_count,
        }
    }

    /// The headline figures as this test measured them (a confidence run
    /// shows its means instead). The headline counts transactions, or the
    /// bytes of the end that received them: this one in a receive test,
    /// the netserver otherwise.
    fn measured(&self) -> Averaged {
        let work = if self.x {
            self.transactions()
        } else if self.spec.direction == netperf_data::spec::RECV {
            self.local_xferd()
        } else {
            (self.o.remote.bytes_sent + self.o.remote.bytes_received) as f64
        };
        Averaged {
            elapsed: self.elapsed,
            throughput: throughput(work, self.elapsed, self.unit),
            local_cpu_util: self.local_cpu.map_or(-1.0, |c| single(c.util)),
            remote_cpu_util: self.remote_cpu.map_or(-1.0, |c| single(c.util)),
            local_service_demand: self.demand(self.local_cpu),
            remote_service_demand: self.demand(self.remote_cpu),
        }
    }

    fn transactions(&self) -> f64 {
        self.o.local.transactions as f64
    }

    fn local_xferd(&self) -> f64 {
        (self.o.local.bytes_sent + self.o.local.bytes_received) as f64
    }

    /// Service demand of an end's CPU usage, per KB or per transaction of
    /// this end's work; -1 when not measured.
    fn demand(&self, cpu: Option<&CpuUsage>) -> f64 {
        let demand_unit = DemandUnit::for_output_unit(self.unit);
        let work = if self.x {
            self.transactions()
        } else {
            self.local_xferd()
        };
        cpu.map_or(-1.0, |c| {
            let cpus = charged_cpus(c.num_cpus, self.local_cpu_count);
            single(service_demand(
                work,
                demand_unit,
                self.elapsed,
                c.util,
                cpus,
            ))
        })
    }

    /// Round-trip latency in µs (-1 when not a request/response test or
    /// nothing was counted) and the transaction rate (1 then).
    fn round_trip(&self) -> (f64, f64) {
        let (o, spec, elapsed) = (self.o, self.spec, self.elapsed);
        let transactions = self.transactions();
        if !(spec.is_rr() && transactions > 0.0 && elapsed > 0.0) {
            return (-1.0, 1.0);
        }
        // Time spent waiting for pacing ticks is not round-trip time.
        let latency_elapsed = (elapsed - o.local.paced_wait_secs).max(f64::MIN_POSITIVE);
        let per_transaction_us = 1_000_000.0 / (transactions / latency_elapsed);
        let in_flight = if spec.connection {
            1.0
        } else {
            1.0 + f64::from(spec.first_burst)
        };
        (per_transaction_us * in_flight, transactions / elapsed)
    }

    /// Per-direction throughputs are bits or bytes even in a transactions
    /// test.
    fn directional_unit(&self) -> char {
        if self.x {
            'm'
        } else {
            self.unit
        }
    }

    fn rate(&self, bytes: u64) -> f64 {
        throughput(bytes as f64, self.elapsed, self.directional_unit())
    }
}

/// This end's record. Its message sizes are those of a stream test's
/// directions (0 in a request/response test), and a UDP socket's buffers
/// are reported as they were at set-up, as netperf does.
fn local_end(f: &Figures, facts: EndFacts, shown: &Averaged, cpu_confid: f64) -> EndRecord {
    let (side, spec, rr) = (&f.o.local, f.spec, f.spec.is_rr());
    let mut local = end_record(side, facts, f.local_cpu, -1.0);
    local.cpu.util = shown.local_cpu_util;
    local.service_demand = shown.local_service_demand;
    if f.local_cpu.is_some() {
        local.cpu.count = i64::from(f.local_cpu_count);
    }
    local.send_size = if !rr && spec.xmit() {
        i64::from(side.send_size)
    } else {
        0
    };
    local.recv_size = if !rr && spec.recv() {
        i64::from(side.recv_size)
    } else {
        0
    };
    local.send_throughput = f.rate(side.bytes_sent);
    local.recv_throughput = f.rate(side.bytes_received);
    local.nodelay = i64::from(spec.local_nodelay);
    local.cork = i64::from(spec.cork);
    local.socket_prio = i64::from(spec.local_socket_prio);
    local.socket_tos = i64::from(spec.local_socket_tos);
    local.cpu_confid = cpu_confid;
    if spec.protocol == netperf_data::spec::Protocol::Udp {
        local.send_buffer.final_ = local.send_buffer.initial;
        local.recv_buffer.final_ = local.recv_buffer.initial;
    }
    local
}

/// The netserver's record.
fn remote_end(f: &Figures, facts: EndFacts, shown: &Averaged, cpu_confid: f64) -> EndRecord {
    let (side, spec) = (&f.o.remote, f.spec);
    let mut remote = end_record(side, facts, f.remote_cpu, 0.0);
    remote.cpu.util = shown.remote_cpu_util;
    remote.service_demand = shown.remote_service_demand;
    remote.send_size = i64::from(side.send_size);
    remote.recv_size = i64::from(side.recv_size);
    remote.send_throughput = f.rate(side.bytes_sent);
    remote.recv_throughput = f.rate(side.bytes_received);
    remote.nodelay = i64::from(spec.remote_nodelay);
    remote.socket_prio = i64::from(spec.remote_socket_prio);
    remote.socket_tos = i64::from(spec.remote_socket_tos);
    remote.cpu_confid = cpu_confid;
    remote
}

/// netperf's direction names (also the word of the OMNI banner title).
pub fn direction_text(spec: &TestSpec) -> &'static str {
    match (spec.xmit(), spec.recv(), spec.connection) {
        (false, true, _) => "Receive",
        (true, false, _) => "Send",
        (false, false, _) => "Connection",
        (true, true, true) => "Connect|Send|Recv",
        (true, true, false) => "Send|Recv",
    }
}

fn end_record(
    side: &SideStats,
    facts: EndFacts,
    cpu: Option<&CpuUsage>,
    unmeasured_peak: f64,
) -> EndRecord {
    let per_call = |bytes: u64, calls: u64| {
        if calls > 0 {
            bytes as f64 / calls as f64
        } else {
            0.0
        }
    };
    EndRecord {
        send_buffer: BufferSizes {
            requested: i64::from(side.send_buf_req),
            initial: i64::from(side.send_buf),
            final_: i64::from(side.send_buf_end),
        },
        recv_buffer: BufferSizes {
            requested: i64::from(side.recv_buf_req),
            initial: i64::from(side.recv_buf),
            final_: i64::from(side.recv_buf_end),
        },
        send_calls: side.send_calls,
        recv_calls: side.recv_calls,
        bytes_sent: side.bytes_sent,
        bytes_received: side.bytes_received,
        bytes_per_send: per_call(side.bytes_sent, side.send_calls),
        bytes_per_recv: per_call(side.bytes_received, side.recv_calls),
        bytes_xferd: (side.bytes_sent + side.bytes_received) as f64,
        send_offset: i64::from(side.send_offset),
        recv_offset: i64::from(side.recv_offset),
        send_align: i64::from(side.send_align),
        recv_align: i64::from(side.recv_align),
        send_width: i64::from(side.send_width),
        recv_width: i64::from(side.recv_width),
        retransmits: i64::from(side.retransmits),
        cpu: cpu.map_or(
            // What netperf prints for an end whose CPU was not measured: the
            // local end's peak is -1, the netserver's 0; method 'U'.
            CpuRecord {
                util: -1.0,
                user: 0.0,
                system: 0.0,
                iowait: 0.0,
                irq: 0.0,
                softirq: 0.0,
                peak_util: unmeasured_peak,
                peak_id: unmeasured_peak as i64,
                count: 0,
                method: 'U',
            },
            |c| CpuRecord {
                util: single(c.util),
                user: single(c.user),
                system: single(c.system),
                iowait: single(c.iowait),
                irq: single(c.irq),
                softirq: single(c.softirq),
                peak_util: single(c.peak_util),
                peak_id: i64::from(c.peak_id),
                count: i64::from(c.num_cpus),
                method: c.method,
            },
        ),
        cpu_bind: i64::from(facts.cpu_bind),
        cong_control: facts.cong_control,
        fill_file: facts.fill_file,
        system: facts.system,
        interface: facts.interface,
        ..EndRecord::default()
    }
}

/// The latency figures, from the HDR summary (exact to 0.1%). netperf prints
/// its own as whole microseconds.
fn latency_record(h: &LatencyHistogram) -> LatencyRecord {
    let l = &h.summary;
    if l.count == 0 {
        return LatencyRecord::default();
    }
    let whole = |us: f64| us.round() as i64;
    LatencyRecord {
        min: whole(l.min_us),
        max: whole(l.max_us),
        p50: whole(l.p50_us),
        p90: whole(l.p90_us),
        p99: whole(l.p99_us),
        mean: l.mean_us,
        stddev: l.stddev_us,
        p99_9: l.p99_9_us,
        p99_99: l.p99_99_us,
        p99_999: l.p99_999_us,
        std_error: l.std_error_us,
        ci99_low: l.ci99_low_us,
        ci99_high: l.ci99_high_us,
        samples: l.count,
    }
}

/// SOCKET_TYPE as netperf 2.7.1 prints it: the socket type of the test
/// name's preset, fixed before the test options are read — "Datagram" for
/// UDP_STREAM and UDP_RR only, so `-t omni -- -T udp` prints "Stream" (as
/// does `-- -t dgram`), whatever socket the test then opens. A
/// Unix-domain test (no omni output in netperf) names its own.
fn socket_type_text(spec: &TestSpec) -> &'static str {
    use netperf_data::spec::{Protocol, TestName};
    match (spec.test, spec.protocol) {
        (TestName::UdpStream | TestName::UdpRr, _) => "Datagram",
        (TestName::Unix(_), Protocol::Udp) => "Datagram",
        _ => "Stream",
    }
}
