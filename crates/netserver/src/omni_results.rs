//! What netserver sends back at the end of an omni test: its counts, the
//! socket buffers, the CPU it measured, and the facts the client asked for
//! (this host's system, the interface toward the client, its packet
//! counters, the datagram counts, MPTCP's subflows) and, after them, its
//! data connection's TCP_INFO series; or, for a test whose data phase
//! failed, the errno alone.

use netperf_data::engine::sequence::Sequence;
use netperf_data::engine::{Counters, DataError};
use netperf_data::measure::outcome::CpuUsage;
use netperf_wire::extension::Extension;
use netperf_wire::omni::{self, OmniRequest, OmniResults};
use netperf_wire::system_facts::{self, InterfaceDelta, SystemFacts};
use netperf_wire::Message;
use std::net::SocketAddr;

/// What a test's data phase gave back.
#[derive(Default)]
pub struct DataOutcome {
    pub counters: Counters,
    /// The data socket's send and receive buffer sizes at its end, when
    /// there was one.
    pub end_buffers: Option<(i32, i32)>,
    /// TCP's retransmissions, -1 when not known.
    pub retrans: i32,
    /// The congestion control the data socket used (TCP), or empty.
    pub cong: String,
    /// Subflows of an MPTCP data connection (`--mptcp`).
    pub mptcp_subflows: Option<u32>,
    /// The data connection's TCP_INFO over the test (asked by the client).
    pub tcp_series: Option<netperf_wire::tcp_series::TcpSeries>,
}

/// Everything the results of a test that ran are made from.
pub struct Measured<'a> {
    pub outcome: DataOutcome,
    /// The data socket's send and receive buffer sizes at set-up.
    pub buffers: (i32, i32),
    pub elapsed: f64,
    pub usage: Option<CpuUsage>,
    /// The datagram sequence, when the client asked for its counts.
    pub seq: Option<&'a Sequence>,
    pub interface_delta: Option<InterfaceDelta>,
}

/// The results message of a test that ran, with the extensions `ext` asks
/// for.
pub fn message(r: &OmniRequest, ext: &Extension, client: &SocketAddr, m: Measured) -> Message {
    let subflows = m.outcome.mptcp_subflows;
    let mut results = counted(r, m.outcome, m.buffers, m.elapsed);
    report_interface(&mut results, r.flags, client);
    if let Some(u) = &m.usage {
        report_cpu(&mut results, u);
    }
    let mut message = results.encode();
    if ext.system_facts {
        system_facts().encode_into(&mut message);
    }
    if let Some(s) = m.seq {
        system_facts::encode_datagrams(&mut message, &s.counts());
    }
    if let Some(d) = &m.interface_delta {
        system_facts::encode_interface(&mut message, d);
    }
    if let Some(n) = subflows {
        system_facts::encode_mptcp_subflows(&mut message, n);
    }
    message
}

/// After the results, the TCP_INFO series a client asked for: empty when
/// the test had no one TCP connection, so that it always follows.
pub fn send_tcp_series(
    chan: &mut netperf_data::net::channel::Channel,
    ext: &Extension,
    series: Option<netperf_wire::tcp_series::TcpSeries>,
) -> Result<(), netperf_data::net::channel::ChannelError> {
    if ext.tcp_info_ms.is_none() {
        return Ok(());
    }
    for m in netperf_wire::tcp_series::encode(&series.unwrap_or_default()) {
        chan.send(&m)?;
    }
    Ok(())
}

/// The results of a test whose data phase failed: the errno of `e` and
/// nothing else, and that errno.
pub fn failure(e: &DataError) -> (Message, i32) {
    let errno = match e {
        DataError::Send(io) | DataError::Recv(io) | DataError::Connect(io) => {
            io.raw_os_error().unwrap_or(libc::EIO)
        }
    };
    let results = OmniResults {
        serv_errno: errno,
        ..Default::default()
    };
    (results.encode(), errno)
}

/// The results from the counts, the buffers and the time; no CPU or
/// interface yet. A buffer the client let the kernel size (negative
/// request) is reported as it ended, else as it was set up.
fn counted(r: &OmniRequest, o: DataOutcome, buffers: (i32, i32), elapsed: f64) -> OmniResults {
    let (lss, lsr) = buffers;
    let (end_ss, end_sr) = o.end_buffers.unwrap_or((lss, lsr));
    let counters = o.counters;
    OmniResults {
        bytes_received: counters.bytes_received,
        recv_calls: counters.recv_calls as u32,
        recv_buf_size: if r.recv_buf_size < 0 { end_sr } else { lsr },
        bytes_sent: counters.bytes_sent,
        send_calls: counters.send_calls as u32,
        send_buf_size: if r.send_buf_size < 0 { end_ss } else { lss },
        failed_sends: counters.failed_sends as u32,
        trans_received: counters.transactions as u32,
        elapsed_time: elapsed as f32,
        serv_dem: -1.0,
        peak_cpu_id: -1,
        vendor: -2,
        device: -2,
        subvendor: -2,
        subdevice: -2,
        transport_retrans: o.retrans,
        cong_control: if r.flags & omni::flag::ROUTING_ALLOWED != 0 {
            o.cong
        } else {
            String::new()
        },
        ..Default::default()
    }
}

/// The CPU figures netserver measured (method 8: /proc/stat).
fn report_cpu(results: &mut OmniResults, u: &CpuUsage) {
    results.cpu_util = u.util as f32;
    results.cpu_percent_user = u.user as f32;
    results.cpu_percent_system = u.system as f32;
    results.cpu_percent_iowait = u.iowait as f32;
    results.cpu_percent_irq = u.irq as f32;
    results.cpu_percent_swintr = u.softirq as f32;
    results.cpu_method = 8;
    results.num_cpus = u.num_cpus;
    results.peak_cpu_id = u.peak_id;
    results.peak_cpu_util = u.peak_util as f32;
}

/// This host's OS and CPU facts for our netperf's remote system selectors.
fn system_facts() -> SystemFacts {
    let s = netperf_data::net::sysinfo::SystemInfo::collect();
    SystemFacts {
        sysname: s.sysname,
        machine: s.machine,
        release: s.release,
        version: s.version,
        model: s.system_model,
        cpu_model: s.cpu_model,
        cpu_mhz: s.cpu_mhz,
        cpu_count: s.cpu_count,
    }
}

/// The interface facts a client asked for (netperf's OMNI_WANT_REM_*), of
/// the interface this host reaches the client by.
fn report_interface(results: &mut OmniResults, flags: u32, peer: &SocketAddr) {
    use netperf_data::net::interface::{egress_interface, InterfaceInfo};
    let wanted = omni::flag::WANT_IFNAME
        | omni::flag::WANT_IFSLOT
        | omni::flag::WANT_IFIDS
        | omni::flag::WANT_DRVINFO;
    if flags & wanted == 0 {
        return;
    }
    let Some(name) = egress_interface(peer) else {
        return;
    };
    let info = InterfaceInfo::for_interface(&name);
    if flags & omni::flag::WANT_IFIDS != 0 {
        results.vendor = info.vendor as i32;
        results.device = info.device as i32;
        results.subvendor = info.subvendor as i32;
        results.subdevice = info.subdevice as i32;
    }
    if flags & omni::flag::WANT_DRVINFO != 0 {
        results.driver = info.driver;
        results.version = info.driver_version;
        results.firmware = info.firmware_version;
        results.bus = info.bus_info;
    }
    if flags & omni::flag::WANT_IFSLOT != 0 {
        results.ifslot = info.slot;
    }
    if flags & omni::flag::WANT_IFNAME != 0 {
        results.ifname = name;
    }
}
