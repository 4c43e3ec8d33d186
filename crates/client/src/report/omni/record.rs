//! Everything the omni output selectors can show about one test, as plain data:
//! the `OmniRecord` is filled once after the test (see `build.rs`) and every
//! selector reads one field of it. Numbers are already in the form netperf
//! prints them (its units, its "not measured" values such as -1).

/// One end of the test (local = netperf, remote = netserver).
#[derive(Debug, Clone, PartialEq)]
pub struct EndRecord {
    pub send_buffer: BufferSizes,
    pub recv_buffer: BufferSizes,
    /// Bytes per send/recv call (-1 = this end does not send/receive).
    pub send_size: i64,
    pub recv_size: i64,
    pub send_calls: u64,
    pub recv_calls: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_per_send: f64,
    pub bytes_per_recv: f64,
    pub bytes_xferd: f64,
    pub send_throughput: f64,
    pub recv_throughput: f64,
    pub send_offset: i64,
    pub recv_offset: i64,
    pub send_align: i64,
    pub recv_align: i64,
    pub send_width: i64,
    pub recv_width: i64,
    pub dirty_count: i64,
    pub clean_count: i64,
    pub nodelay: i64,
    pub cork: i64,
    pub retransmits: i64,
    pub cpu: CpuRecord,
    pub service_demand: f64,
    pub cpu_confid: f64,
    pub cpu_bind: i64,
    pub interval_usecs: i64,
    pub interval_burst: i64,
    pub socket_prio: i64,
    pub socket_tos: i64,
    pub cong_control: String,
    pub fill_file: String,
    pub system: SystemRecord,
    pub interface: InterfaceRecord,
    /// Datagrams lost, duplicated and out of order as this end received them
    /// (-1 = not counted: not a UDP test, or no sequence numbers asked for).
    pub datagrams: DatagramRecord,
    /// Subflows of the MPTCP data connection (-1 = not MPTCP).
    pub mptcp_subflows: i64,
    /// What TCP did over the test, or over one interval when the record
    /// stands for an interim result (none: not TCP, or a stock netserver).
    pub tcp: Option<netperf_data::measure::tcp_info::TcpInterval>,
}

impl Default for EndRecord {
    fn default() -> Self {
        EndRecord {
            send_buffer: BufferSizes::default(),
            recv_buffer: BufferSizes::default(),
            send_size: -1,
            recv_size: -1,
            send_calls: 0,
            recv_calls: 0,
            bytes_sent: 0,
            bytes_received: 0,
            bytes_per_send: 0.0,
            bytes_per_recv: 0.0,
            bytes_xferd: 0.0,
            send_throughput: 0.0,
            recv_throughput: 0.0,
            send_offset: 0,
            recv_offset: 0,
            send_align: 8,
            recv_align: 8,
            send_width: 0,
            recv_width: 0,
            dirty_count: -1,
            clean_count: -1,
            nodelay: 0,
            cork: 0,
            retransmits: -1,
            cpu: CpuRecord::default(),
            service_demand: -1.0,
            cpu_confid: -1.0,
            cpu_bind: -1,
            interval_usecs: 0,
            interval_burst: 0,
            socket_prio: -1,
            socket_tos: -1,
            cong_control: String::new(),
            fill_file: String::new(),
            system: SystemRecord::default(),
            interface: InterfaceRecord::default(),
            datagrams: DatagramRecord::default(),
            mptcp_subflows: -1,
            tcp: None,
        }
    }
}

/// Socket buffer sizes: what was asked for (-1 = the system default), what the
/// socket had after set-up, and at the end of the test (autotuning grows them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferSizes {
    pub requested: i64,
    pub initial: i64,
    pub final_: i64,
}

impl Default for BufferSizes {
    fn default() -> Self {
        BufferSizes {
            requested: -1,
            initial: -1,
            final_: -1,
        }
    }
}

/// CPU utilization of one end (percent of all CPUs; -1 when not measured).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuRecord {
    pub util: f64,
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub peak_util: f64,
    pub peak_id: i64,
    pub count: i64,
    pub method: char,
}

impl Default for CpuRecord {
    fn default() -> Self {
        CpuRecord {
            util: -1.0,
            user: -1.0,
            system: -1.0,
            iowait: -1.0,
            irq: -1.0,
            softirq: -1.0,
            peak_util: -1.0,
            peak_id: -1,
            count: 0,
            method: 'S',
        }
    }
}

/// Operating system and CPU facts of one end ("" where unknown).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemRecord {
    pub sysname: String,
    pub release: String,
    pub version: String,
    pub machine: String,
    pub model: String,
    pub cpu_model: String,
    pub cpu_mhz: i64,
}

/// The network interface of one end's data traffic and its driver.
#[derive(Debug, Clone, PartialEq)]
pub struct InterfaceRecord {
    pub name: String,
    pub driver: String,
    pub driver_version: String,
    pub firmware: String,
    pub bus: String,
    pub slot: String,
    /// PCI ids; netperf's "not available" is 0xfffffffe.
    pub vendor: i64,
    pub device: i64,
    pub subvendor: i64,
    pub subdevice: i64,
    /// Packets and bytes through the interface over the test (-1 = not read).
    pub tx_packets: i64,
    pub rx_packets: i64,
    pub tx_bytes: i64,
    pub rx_bytes: i64,
}

/// netperf's value for an interface id it could not find.
pub const ID_NOT_AVAILABLE: i64 = 0xffff_fffe;

impl Default for InterfaceRecord {
    fn default() -> Self {
        InterfaceRecord {
            name: String::new(),
            driver: String::new(),
            driver_version: String::new(),
            firmware: String::new(),
            bus: String::new(),
            slot: String::new(),
            vendor: ID_NOT_AVAILABLE,
            device: ID_NOT_AVAILABLE,
            subvendor: ID_NOT_AVAILABLE,
            subdevice: ID_NOT_AVAILABLE,
            tx_packets: -1,
            rx_packets: -1,
            tx_bytes: -1,
            rx_bytes: -1,
        }
    }
}

/// Datagram accounting from sequence numbers (-1 = not counted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DatagramRecord {
    pub lost: i64,
    pub duplicated: i64,
    pub out_of_order: i64,
}

impl Default for DatagramRecord {
    fn default() -> Self {
        DatagramRecord {
            lost: -1,
            duplicated: -1,
            out_of_order: -1,
        }
    }
}

/// Address, port and family of one end of the data connection as netperf
/// prints them (the port as text: it may be a service name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointRecord {
    pub address: String,
    pub port: String,
    pub family: i64,
}

/// Confidence-interval facts (`-i`, `-I`); -1 where not computed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfidenceRecord {
    pub level: i64,
    pub interval: f64,
    pub iterations: i64,
    pub throughput: f64,
}

impl Default for ConfidenceRecord {
    fn default() -> Self {
        ConfidenceRecord {
            level: 0,
            interval: -1.0,
            iterations: 1,
            throughput: -1.0,
        }
    }
}

/// Latency statistics in microseconds (`-j` and our percentile selectors).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyRecord {
    pub min: i64,
    pub max: i64,
    pub p50: i64,
    pub p90: i64,
    pub p99: i64,
    pub mean: f64,
    pub stddev: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub p99_999: f64,
    pub std_error: f64,
    pub ci99_low: f64,
    pub ci99_high: f64,
    pub samples: u64,
}

/// One test's results for the omni output.
#[derive(Debug, Clone, PartialEq)]
pub struct OmniRecord {
    /// The -t name as given ("omni", "TCP_RR", ...), for JSON.
    pub test_name: String,
    pub command_line: String,
    pub uuid: String,
    pub brand: Option<String>,
    pub socket_type: &'static str,
    pub protocol: &'static str,
    pub direction: &'static str,
    pub elapsed: f64,
    pub source: EndpointRecord,
    pub dest: EndpointRecord,
    pub throughput: f64,
    /// netperf's unit text without "/s": "10^6bits", "Trans", "KBytes", ...
    pub throughput_units: String,
    /// Units of the per-direction throughputs: as above, but bits or bytes
    /// where the headline is transactions.
    pub directional_units: String,
    pub confidence: ConfidenceRecord,
    pub transaction_rate: f64,
    pub rt_latency: f64,
    pub request_size: i64,
    pub response_size: i64,
    pub burst_size: i64,
    pub transport_mss: i64,
    pub sd_units: &'static str,
    pub latency: LatencyRecord,
    pub local: EndRecord,
    pub remote: EndRecord,
    /// Receive timeouts of a UDP request/response test with -e (each one
    /// restarts the burst); 0 otherwise.
    pub rr_timeouts: i64,
    /// Interim results (-D) of the last iteration, for the JSON output.
    pub interims: Vec<crate::report::interim::Interim>,
    pub flows: FlowsRecord,
    pub open_loop: OpenLoopRecord,
}

/// An open-loop test's schedule and its two latencies (`--rate`); -1
/// everywhere for a closed-loop test.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoopRecord {
    /// Requests per second asked for, and responses per second achieved.
    pub offered_rate: f64,
    pub achieved_rate: f64,
    /// Actual minus intended send time, microseconds: P50, P99, max.
    pub slip: [f64; 3],
    pub late: i64,
    /// Requests sent several to a system call, catching up.
    pub caught_up: i64,
    /// Responses that matched no request in flight (not timed).
    pub unmatched: i64,
    pub held_back: i64,
    pub lost: i64,
    pub max_in_flight: i64,
    /// P50, P90, P99, P99.9, P99.99, P99.999 in microseconds, from each
    /// request's intended send (corrected) and its actual one (raw).
    pub corrected: [f64; 6],
    pub raw: [f64; 6],
}

impl Default for OpenLoopRecord {
    fn default() -> Self {
        OpenLoopRecord {
            offered_rate: -1.0,
            achieved_rate: -1.0,
            slip: [-1.0; 3],
            late: -1,
            caught_up: -1,
            unmatched: -1,
            held_back: -1,
            lost: -1,
            max_in_flight: -1,
            corrected: [-1.0; 6],
            raw: [-1.0; 6],
        }
    }
}

impl OpenLoopRecord {
    /// The record of an open loop that ran `elapsed` seconds.
    pub fn of(o: &netperf_data::measure::open_loop::OpenLoopReport, elapsed: f64) -> Self {
        let (corrected, raw) = o.latencies();
        let tail = |s: &netperf_data::measure::latency::LatencySummary| {
            [
                s.p50_us,
                s.p90_us,
                s.p99_us,
                s.p99_9_us,
                s.p99_99_us,
                s.p99_999_us,
            ]
        };
        let slip = o.slip.summary();
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        OpenLoopRecord {
            offered_rate: o.offered_rate,
            achieved_rate: o.achieved_rate(elapsed),
            slip: [slip.p50_us, slip.p99_us, slip.max_us],
            late: count(o.late),
            caught_up: count(o.caught_up),
            unmatched: count(o.unmatched),
            held_back: count(o.held_back),
            lost: count(o.lost),
            max_in_flight: count(o.max_in_flight),
            corrected: tail(&corrected),
            raw: tail(&raw),
        }
    }
}

/// The flows of the test: one, or those of `--flows` with how their rates
/// spread (in the throughput's units) and how many stalled or failed.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowsRecord {
    pub flows: i64,
    pub threads: i64,
    pub rate_min: f64,
    pub rate_median: f64,
    pub rate_max: f64,
    pub jain: f64,
    /// -1 where not watched (one flow).
    pub stalled: i64,
    pub failed: i64,
}

impl Default for FlowsRecord {
    fn default() -> Self {
        FlowsRecord {
            flows: 1,
            threads: 1,
            rate_min: -1.0,
            rate_median: -1.0,
            rate_max: -1.0,
            jain: -1.0,
            stalled: -1,
            failed: -1,
        }
    }
}

impl Default for OmniRecord {
    fn default() -> Self {
        OmniRecord {
            test_name: String::new(),
            command_line: String::new(),
            uuid: String::new(),
            brand: None,
            socket_type: "Stream",
            protocol: "TCP",
            direction: "Send",
            elapsed: 0.0,
            source: EndpointRecord::default(),
            dest: EndpointRecord::default(),
            throughput: 0.0,
            throughput_units: "10^6bits".to_string(),
            directional_units: "10^6bits".to_string(),
            confidence: ConfidenceRecord::default(),
            transaction_rate: 1.0,
            rt_latency: -1.0,
            request_size: -1,
            response_size: -1,
            burst_size: 0,
            transport_mss: -1,
            sd_units: "usec/KB",
            latency: LatencyRecord::default(),
            local: EndRecord::default(),
            remote: EndRecord::default(),
            rr_timeouts: 0,
            interims: Vec::new(),
            flows: FlowsRecord::default(),
            open_loop: OpenLoopRecord::default(),
        }
    }
}
