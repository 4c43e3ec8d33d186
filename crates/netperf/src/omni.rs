//! When netperf prints omni output instead of the classic block (`-t omni`, or
//! any test given `-o`, `-O`, `-k` or our `-J`), what that output needs
//! measured, and the record it prints: the glue between a run and
//! `report::omni`.

use netperf_client::cli::config::Config;
use netperf_client::control::client::Iteration;
use netperf_client::control::request::RunOptions;
use netperf_client::report::omni::build::{build, Averaged, EndFacts, RecordInput};
use netperf_client::report::omni::record::{
    ConfidenceRecord, EndpointRecord, InterfaceRecord, SystemRecord, ID_NOT_AVAILABLE,
};
use netperf_client::report::omni::select::{self, Selection, TestShape};
use netperf_client::report::omni::table::Need;
use netperf_client::report::omni::{render_omni, OmniRecord, Style};
use netperf_data::measure::cpu;
use netperf_data::net::resolve::Family;
use netperf_data::spec::{TestName, TestSpec};
use netperf_wire::omni::{flag, OmniResults};
use netperf_wire::system_facts::SystemFacts;
use std::net::SocketAddr;

/// The omni output a command line asks for.
pub struct OmniOutput {
    pub style: Style,
    pub selection: Selection,
}

/// The selector list of the last -o/-O/-k/-J, if any: (style, list or "").
fn requested(config: &Config) -> Option<(Style, &str)> {
    let t = &config.test;
    [
        (Style::Keyval, &t.keyval_output),
        (Style::Csv, &t.csv_output),
        (Style::Human, &t.human_output),
        (Style::Json, &t.json_output),
    ]
    .into_iter()
    .find_map(|(style, list)| list.as_deref().map(|l| (style, l)))
}

/// `-o ?` and friends: the list netperf prints instead of running (exit 1).
pub fn choices_listing(config: &Config) -> Option<String> {
    match requested(config)? {
        (Style::Human, "?") => Some(select::list_choices(false)),
        (_, "?") => Some(select::list_choices(true)),
        _ => None,
    }
}

/// The omni output of this command line, or `None` for classic output.
pub fn choose(config: &Config, spec: &TestSpec) -> Result<Option<OmniOutput>, String> {
    let (style, list) = match requested(config) {
        Some(r) => r,
        None if spec.test == TestName::Omni => (Style::Human, ""),
        None => return Ok(None),
    };
    let selection = if list.is_empty() {
        default_selection(config, spec)
    } else {
        select::parse(list).map_err(|e| e.to_string())?
    };
    for name in &selection.unknown {
        eprintln!("netperf: ignoring unknown output selector '{name}'");
    }
    Ok(Some(OmniOutput { style, selection }))
}

/// netperf's selection for this test when no list is given: what the
/// classic output of the same test shows.
pub fn default_selection(config: &Config, spec: &TestSpec) -> Selection {
    let cpu = config.global.local_cpu || config.global.remote_cpu;
    select::by_test(shape(spec), cpu)
}

fn shape(spec: &TestSpec) -> TestShape {
    match (spec.xmit(), spec.recv()) {
        (true, false) => TestShape::Send,
        (false, true) => TestShape::Receive,
        _ => TestShape::RequestResponse,
    }
}

impl OmniOutput {
    /// Switch on what the selection needs measured: per-operation timing for
    /// the latency selectors (netperf's OMNI_WANT_STATS).
    pub fn prepare_spec(&self, spec: &mut TestSpec) {
        if self.selection.needs(Need::Latency) {
            spec.keep_histogram = true;
        }
        if self.selection.needs(Need::System) {
            spec.extension.system_facts = true;
        }
        if self.selection.needs(Need::InterfaceCounters) {
            spec.extension.interface_counters = true;
        }
    }

    /// Ask the netserver for its interface facts, and count ours.
    pub fn prepare_run(&self, run: &mut RunOptions, spec: &TestSpec) {
        if self.selection.needs(Need::Interface) {
            run.extra_flags |=
                flag::WANT_IFNAME | flag::WANT_IFSLOT | flag::WANT_IFIDS | flag::WANT_DRVINFO;
        }
        if self.selection.needs(Need::InterfaceCounters) {
            run.count_interface = local_interface(spec);
        }
    }
}

/// The interface our data traffic leaves by.
fn local_interface(spec: &TestSpec) -> Option<String> {
    let (remote, _) = netperf_client::control::client::data_endpoints(spec).ok()?;
    netperf_data::net::interface::egress_interface(&remote)
}

/// netperf's output unit: -f as given, except that transactions ('x') only
/// make sense for request/response tests, which default to them.
pub fn resolved_unit(config: &Config, spec: &TestSpec) -> char {
    let g = &config.global;
    let rr = spec.is_rr();
    match g.format_units {
        'x' if !rr => 'm',
        u if g.format_units_explicit => u,
        _ if rr => 'x',
        _ => 'm',
    }
}

/// What the run produced, for the record.
pub struct Measured<'a> {
    pub last: &'a Iteration,
    pub iterations: u32,
    pub averaged: Option<Averaged>,
    /// Confidence widths in percent (throughput, local CPU, remote CPU) of a
    /// confidence run.
    pub widths: Option<(f64, f64, f64)>,
}

/// Print the omni output of a finished test.
pub fn render(output: &OmniOutput, config: &Config, spec: &TestSpec, m: &Measured) -> String {
    let record = record(&output.selection, config, spec, m);
    render_record(output, config, spec, m, &record)
}

/// The record of a finished test, with the facts `selection` needs.
pub fn record(selection: &Selection, config: &Config, spec: &TestSpec, m: &Measured) -> OmniRecord {
    let g = &config.global;
    let unit = resolved_unit(config, spec);
    let confidence_run = g.iterations_max > 1;
    let (t_width, l_width, r_width) = m.widths.unwrap_or((-1.0, -1.0, -1.0));
    let confidence = ConfidenceRecord {
        level: if confidence_run {
            i64::from(g.confidence_level)
        } else {
            0
        },
        interval: if confidence_run {
            g.confidence_width
        } else {
            -1.0
        },
        iterations: i64::from(m.iterations),
        throughput: t_width,
    };
    let want = |need| selection.needs(need);
    let local = EndFacts {
        cong_control: m.last.local_cong_control.clone(),
        fill_file: g.local_fill_file.clone().unwrap_or_default(),
        cpu_bind: g.local_cpu_bind,
        system: if want(Need::System) {
            local_system()
        } else {
            SystemRecord::default()
        },
        interface: local_interface_record(spec, m, want(Need::Interface)),
    };
    let remote = EndFacts {
        cong_control: m.last.results.cong_control.clone(),
        fill_file: g.remote_fill_file.clone().unwrap_or_default(),
        cpu_bind: g.remote_cpu_bind,
        system: m
            .last
            .remote_system
            .as_ref()
            .map(remote_system)
            .unwrap_or_default(),
        interface: remote_interface_record(&m.last.results, m.last.remote_interface_delta),
    };
    let record = build(RecordInput {
        test_name: &g.test_name,
        command_line: as_typed(&g.command_line),
        uuid: config
            .test
            .uuid
            .clone()
            .unwrap_or_else(netperf_base::ids::new_uuid),
        brand: g.brand.clone(),
        spec,
        outcome: &m.last.outcome,
        unit,
        local_cpu: g.local_cpu,
        remote_cpu: g.remote_cpu,
        local_cpu_count: g.num_cpus.unwrap_or_else(cpu::num_cpus),
        source: source_endpoint(config, spec),
        dest: dest_endpoint(spec, &m.last.endpoints.remote),
        confidence,
        cpu_confidence: (l_width, r_width),
        averaged: m.averaged,
        local,
        remote,
    });
    let mut record = record;
    fill_datagrams(&mut record, m.last, spec);
    fill_flows(&mut record, m.last, unit);
    for (end, side) in [
        (&mut record.local, &m.last.outcome.local),
        (&mut record.remote, &m.last.outcome.remote),
    ] {
        end.mptcp_subflows = side.mptcp.as_ref().map_or(-1, |s| i64::from(s.total));
        end.tcp = side.tcp_info;
    }
    if let Some(o) = &m.last.open_loop {
        record.open_loop =
            netperf_client::report::omni::record::OpenLoopRecord::of(o, m.last.outcome.elapsed);
    }
    record.interims = m.last.interims.clone();
    record.local.interval_usecs = i64::from(g.interval_usecs);
    record.local.interval_burst = i64::from(g.interval_burst);
    record.remote.interval_usecs = i64::from(g.remote_interval_usecs);
    record.remote.interval_burst = i64::from(g.remote_interval_burst);
    if g.no_control {
        // Nothing is known of the far end's sockets (netperf prints -1).
        use netperf_client::report::omni::record::BufferSizes;
        record.remote.send_buffer = BufferSizes::default();
        record.remote.recv_buffer = BufferSizes::default();
    }
    record
}

/// The omni output of `record`, with the histogram at -v 2.
pub fn render_record(
    output: &OmniOutput,
    config: &Config,
    spec: &TestSpec,
    m: &Measured,
    record: &OmniRecord,
) -> String {
    let g = &config.global;
    let mut text = render_omni(output.style, &output.selection, record, g.print_headers);
    if g.verbosity > 1 {
        if let Some(h) = &m.last.outcome.histogram {
            text.push_str(&format!(
                "\nHistogram of {} times\n",
                histogram_subject(spec)
            ));
            text.push_str(&netperf_client::report::histogram::render_histogram(h));
        }
    }
    text
}

/// Lost datagrams of each receiver: what its peer numbered and sent minus
/// the distinct datagrams it received (so the tail lost when the test
/// stopped counts too); duplicates and late arrivals from its sequence check.
fn fill_datagrams(
    record: &mut netperf_client::report::omni::OmniRecord,
    it: &Iteration,
    spec: &TestSpec,
) {
    use netperf_client::report::omni::record::DatagramRecord;
    let o = &it.outcome;
    let record_of =
        |c: &netperf_wire::system_facts::DatagramCounts, peer_sent: u64, received: u64| {
            let distinct = received.saturating_sub(c.duplicated);
            DatagramRecord {
                lost: peer_sent.saturating_sub(distinct) as i64,
                duplicated: c.duplicated as i64,
                out_of_order: c.out_of_order as i64,
            }
        };
    if let Some(c) = it.local_datagrams.as_ref().filter(|_| spec.recv()) {
        record.local.datagrams = record_of(c, o.remote.send_calls, o.local.recv_calls);
    }
    if let Some(c) = it.remote_datagrams.as_ref().filter(|_| spec.xmit()) {
        record.remote.datagrams = record_of(c, o.local.send_calls, o.remote.recv_calls);
    }
}

/// The flows: those of `--flows`, their rates in the throughput's unit;
/// or the one flow of a classic test, whose rate is the test's.
fn fill_flows(record: &mut netperf_client::report::omni::OmniRecord, it: &Iteration, unit: char) {
    use netperf_client::report::omni::record::FlowsRecord;
    let Some(flows) = &it.flows else {
        let rate = record.throughput;
        record.flows = FlowsRecord {
            rate_min: rate,
            rate_median: rate,
            rate_max: rate,
            jain: 1.0,
            failed: 0,
            ..FlowsRecord::default()
        };
        return;
    };
    let per_unit = netperf_client::report::units::throughput(1.0, 1.0, unit);
    let spread = flows.spread(it.outcome.elapsed, per_unit);
    record.flows = FlowsRecord {
        flows: flows.flows.len() as i64,
        threads: i64::from(flows.threads),
        rate_min: spread.min,
        rate_median: spread.median,
        rate_max: spread.max,
        jain: spread.jain,
        stalled: i64::from(spread.stalled),
        failed: i64::from(spread.failed),
    };
}

/// What netperf's omni histogram timed.
fn histogram_subject(spec: &TestSpec) -> &'static str {
    match (spec.xmit(), spec.recv(), spec.connection) {
        (false, true, _) => "recv",
        (true, false, _) => "send",
        (false, false, _) => "connect/close",
        (true, true, true) => "connect/request/response/close",
        (true, true, false) => "request/response",
    }
}

/// netperf's command line starts with its argv[0] as typed ("./netperf").
fn as_typed(command_line: &str) -> String {
    match std::env::args().next() {
        Some(argv0) => command_line.replacen("netperf", &argv0, 1),
        None => command_line.to_string(),
    }
}

/// netperf shows the data connection's source as asked for: the -L name or
/// the wildcard address, the -P port or 0, the -4/-6 family or AF_UNSPEC.
fn source_endpoint(config: &Config, spec: &TestSpec) -> EndpointRecord {
    let family = match spec.data_family {
        Family::Inet => libc::AF_INET,
        Family::Inet6 => libc::AF_INET6,
        _ => libc::AF_UNSPEC,
    };
    let address = spec.data_local.clone().unwrap_or_else(|| {
        if family == libc::AF_INET6 {
            "::".to_string()
        } else {
            "0.0.0.0".to_string()
        }
    });
    let _ = config;
    EndpointRecord {
        address,
        port: spec.local_data_port.to_string(),
        family: i64::from(family),
    }
}

fn dest_endpoint(spec: &TestSpec, remote: &SocketAddr) -> EndpointRecord {
    EndpointRecord {
        address: remote.ip().to_string(),
        port: spec.remote_data_port.to_string(),
        family: i64::from(if remote.is_ipv6() {
            libc::AF_INET6
        } else {
            libc::AF_INET
        }),
    }
}

fn local_system() -> SystemRecord {
    let s = netperf_data::net::sysinfo::SystemInfo::collect();
    SystemRecord {
        sysname: s.sysname,
        release: s.release,
        version: s.version,
        machine: s.machine,
        model: s.system_model,
        cpu_model: s.cpu_model,
        cpu_mhz: i64::from(s.cpu_mhz),
    }
}

fn remote_system(s: &SystemFacts) -> SystemRecord {
    SystemRecord {
        sysname: s.sysname.clone(),
        release: s.release.clone(),
        version: s.version.clone(),
        machine: s.machine.clone(),
        model: s.model.clone(),
        cpu_model: s.cpu_model.clone(),
        cpu_mhz: i64::from(s.cpu_mhz),
    }
}

fn local_interface_record(spec: &TestSpec, m: &Measured, want_facts: bool) -> InterfaceRecord {
    let mut record = InterfaceRecord::default();
    if want_facts {
        if let Some(name) = local_interface(spec) {
            let info = netperf_data::net::interface::InterfaceInfo::for_interface(&name);
            record = InterfaceRecord {
                name,
                driver: info.driver,
                driver_version: info.driver_version,
                firmware: info.firmware_version,
                bus: info.bus_info,
                slot: info.slot,
                vendor: i64::from(info.vendor),
                device: i64::from(info.device),
                subvendor: i64::from(info.subvendor),
                subdevice: i64::from(info.subdevice),
                ..InterfaceRecord::default()
            };
        }
    }
    if let Some(d) = &m.last.interface_delta {
        record.tx_packets = d.tx_packets as i64;
        record.rx_packets = d.rx_packets as i64;
        record.tx_bytes = d.tx_bytes as i64;
        record.rx_bytes = d.rx_bytes as i64;
    }
    record
}

/// The netserver's interface facts as its results carry them.
fn remote_interface_record(
    r: &OmniResults,
    delta: Option<netperf_wire::system_facts::InterfaceDelta>,
) -> InterfaceRecord {
    let id = |v: i32| {
        if v == -1 {
            ID_NOT_AVAILABLE
        } else {
            i64::from(v as u32)
        }
    };
    InterfaceRecord {
        name: r.ifname.clone(),
        driver: r.driver.clone(),
        driver_version: r.version.clone(),
        firmware: r.firmware.clone(),
        bus: r.bus.clone(),
        slot: r.ifslot.clone(),
        vendor: id(r.vendor),
        device: id(r.device),
        subvendor: id(r.subvendor),
        subdevice: id(r.subdevice),
        tx_packets: delta.map_or(-1, |d| d[0] as i64),
        rx_packets: delta.map_or(-1, |d| d[1] as i64),
        tx_bytes: delta.map_or(-1, |d| d[2] as i64),
        rx_bytes: delta.map_or(-1, |d| d[3] as i64),
    }
}
