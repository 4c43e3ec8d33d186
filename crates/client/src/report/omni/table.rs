//! The output selectors: netperf 2.7.1's, in its order (the order of `-o ?`,
//! which `all` and the per-test defaults rely on), with their four header
//! lines and printf conversions, then ours. Each row names the one field of
//! the `OmniRecord` it shows.

use super::record::{EndRecord, OmniRecord};
use super::value::{int, real, text, Fmt, Value};
use netperf_data::measure::tcp_info::TcpInterval;

/// What has to be measured for a selector beyond the basic counters;
/// selecting one switches that measurement on (netperf's output groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Nothing,
    /// Per-operation timing: the latency histogram (`-j`).
    Latency,
    /// The congestion control algorithm of the data socket.
    CongestionControl,
    /// The data interface's name, driver and ids.
    Interface,
    /// Operating system and CPU facts.
    System,
    /// The data interface's packet and byte counters over the test.
    InterfaceCounters,
    /// Our data connection's TCP_INFO (read at the end anyway); with -D,
    /// also a column of each interim line.
    LocalTcpInfo,
    /// Our netserver's TCP_INFO, sent after its results when asked; with
    /// -D, also a column of each interim line.
    RemoteTcpInfo,
}

use Need::{
    CongestionControl as CONG, Interface as INTERFACE, InterfaceCounters as IFCOUNTERS,
    Latency as STATS, LocalTcpInfo as LOCALTCP, Nothing as NONE, RemoteTcpInfo as REMOTETCP,
    System as SYSTEM,
};

/// One output selector.
#[derive(Debug, Clone, Copy)]
pub struct Selector {
    pub name: &'static str,
    /// The column title, one word group per header line ("" = none).
    pub lines: [&'static str; 4],
    pub fmt: Fmt,
    pub need: Need,
    pub get: fn(&OmniRecord) -> Value,
}

impl Selector {
    pub fn value(&self, record: &OmniRecord) -> Value {
        (self.get)(record)
    }

    /// The header lines joined by spaces, up to the first empty line: the CSV
    /// title, and the long name a selector file may use instead of the name.
    pub fn title(&self) -> String {
        self.lines
            .iter()
            .take_while(|l| !l.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

const fn sel(
    name: &'static str,
    lines: [&'static str; 4],
    fmt: Fmt,
    need: Need,
    get: fn(&OmniRecord) -> Value,
) -> Selector {
    Selector {
        name,
        lines,
        fmt,
        need,
        get,
    }
}

/// netperf 2.7.1 prints this for the facts it no longer collects.
const DEPRECATED: &str = "Deprecated";

/// netperf 2.7.1's selectors, in its enum order.
#[rustfmt::skip]
pub static NETPERF_SELECTORS: [Selector; 175] = [
    sel("OUTPUT_NONE", [" ", "", "", ""], Fmt::Text, NONE, |_| { text(" ") }),
    sel("SOCKET_TYPE", ["Socket", "Type", "", ""], Fmt::Text, NONE, |r| text(r.socket_type)),
    sel("PROTOCOL", ["Protocol", "", "", ""], Fmt::Text, NONE, |r| { text(r.protocol) }),
    sel("DIRECTION", ["Direction", "", "", ""], Fmt::Text, NONE, |r| text(r.direction)),
    sel("ELAPSED_TIME", ["Elapsed", "Time", "(sec)", ""], Fmt::Fixed(2), NONE, |r| real(r.elapsed)),
    sel("THROUGHPUT", ["Throughput", "", "", ""], Fmt::Fixed(2), NONE, |r| real(r.throughput)),
    sel("THROUGHPUT_UNITS", ["Throughput", "Units", "", ""], Fmt::PerSecond, NONE, |r| text(&r.throughput_units)),
    sel("LSS_SIZE_REQ", ["Local", "Send Socket", "Size", "Requested"], Fmt::Int, NONE, |r| int(r.local.send_buffer.requested)),
    sel("LSS_SIZE", ["Local", "Send Socket", "Size", "Initial"], Fmt::Int, NONE, |r| int(r.local.send_buffer.initial)),
    sel("LSS_SIZE_END", ["Local", "Send Socket", "Size", "Final"], Fmt::Int, NONE, |r| int(r.local.send_buffer.final_)),
    sel("LSR_SIZE_REQ", ["Local", "Recv Socket", "Size", "Requested"], Fmt::Int, NONE, |r| int(r.local.recv_buffer.requested)),
    sel("LSR_SIZE", ["Local", "Recv Socket", "Size", "Initial"], Fmt::Int, NONE, |r| int(r.local.recv_buffer.initial)),
    sel("LSR_SIZE_END", ["Local", "Recv Socket", "Size", "Final"], Fmt::Int, NONE, |r| int(r.local.recv_buffer.final_)),
    sel("RSS_SIZE_REQ", ["Remote", "Send Socket", "Size", "Requested"], Fmt::Int, NONE, |r| int(r.remote.send_buffer.requested)),
    sel("RSS_SIZE", ["Remote", "Send Socket", "Size", "Initial"], Fmt::Int, NONE, |r| int(r.remote.send_buffer.initial)),
    sel("RSS_SIZE_END", ["Remote", "Send Socket", "Size", "Final"], Fmt::Int, NONE, |r| int(r.remote.send_buffer.final_)),
    sel("RSR_SIZE_REQ", ["Remote", "Recv Socket", "Size", "Requested"], Fmt::Int, NONE, |r| int(r.remote.recv_buffer.requested)),
    sel("RSR_SIZE", ["Remote", "Recv Socket", "Size", "Initial"], Fmt::Int, NONE, |r| int(r.remote.recv_buffer.initial)),
    sel("RSR_SIZE_END", ["Remote", "Recv Socket", "Size", "Final"], Fmt::Int, NONE, |r| int(r.remote.recv_buffer.final_)),
    sel("LOCAL_SEND_SIZE", ["Local", "Send", "Size", ""], Fmt::Int, NONE, |r| int(r.local.send_size)),
    sel("LOCAL_RECV_SIZE", ["Local", "Recv", "Size", ""], Fmt::Int, NONE, |r| int(r.local.recv_size)),
    sel("REMOTE_SEND_SIZE", ["Remote", "Send", "Size", ""], Fmt::Int, NONE, |r| int(r.remote.send_size)),
    sel("REMOTE_RECV_SIZE", ["Remote", "Recv", "Size", ""], Fmt::Int, NONE, |r| int(r.remote.recv_size)),
    sel("REQUEST_SIZE", ["Request", "Size", "Bytes", ""], Fmt::Int, NONE, |r| int(r.request_size)),
    sel("RESPONSE_SIZE", ["Response", "Size", "Bytes", ""], Fmt::Int, NONE, |r| int(r.response_size)),
    sel("LOCAL_CPU_UTIL", ["Local", "CPU", "Util", "%"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.util)),
    sel("LOCAL_CPU_PERCENT_USER", ["Local", "CPU", "User", "%"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.user)),
    sel("LOCAL_CPU_PERCENT_SYSTEM", ["Local", "CPU", "System", "%"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.system)),
    sel("LOCAL_CPU_PERCENT_IOWAIT", ["Local", "CPU", "I/O", "%"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.iowait)),
    sel("LOCAL_CPU_PERCENT_IRQ", ["Local", "CPU", "IRQ", "%"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.irq)),
    sel("LOCAL_CPU_PERCENT_SWINTR", ["Local", "CPU", "swintr", "%"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.softirq)),
    sel("LOCAL_CPU_METHOD", ["Local", "CPU", "Util", "Method"], Fmt::Char, NONE, |r| Value::Char(r.local.cpu.method)),
    sel("LOCAL_SD", ["Local", "Service", "Demand", ""], Fmt::Fixed(3), NONE, |r| real(r.local.service_demand)),
    sel("REMOTE_CPU_UTIL", ["Remote", "CPU", "Util", "%"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.util)),
    sel("REMOTE_CPU_PERCENT_USER", ["Remote", "CPU", "User", "%"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.user)),
    sel("REMOTE_CPU_PERCENT_SYSTEM", ["Remote", "CPU", "System", "%"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.system)),
    sel("REMOTE_CPU_PERCENT_IOWAIT", ["Remote", "CPU", "I/O", "%"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.iowait)),
    sel("REMOTE_CPU_PERCENT_IRQ", ["Remote", "CPU", "IRQ", "%"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.irq)),
    sel("REMOTE_CPU_PERCENT_SWINTR", ["Remote", "CPU", "swintr", "%"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.softirq)),
    sel("REMOTE_CPU_METHOD", ["Remote", "CPU", "Util", "Method"], Fmt::Char, NONE, |r| Value::Char(r.remote.cpu.method)),
    sel("REMOTE_SD", ["Remote", "Service", "Demand", ""], Fmt::Fixed(3), NONE, |r| real(r.remote.service_demand)),
    sel("SD_UNITS", ["Service", "Demand", "Units", ""], Fmt::Text, NONE, |r| text(r.sd_units)),
    sel("CONFIDENCE_LEVEL", ["Confidence", "Level", "Percent", ""], Fmt::Int, NONE, |r| int(r.confidence.level)),
    sel("CONFIDENCE_INTERVAL", ["Confidence", "Width", "Target", ""], Fmt::Fixed(6), NONE, |r| real(r.confidence.interval)),
    sel("CONFIDENCE_ITERATION", ["Confidence", "Iterations", "Run", ""], Fmt::Int, NONE, |r| int(r.confidence.iterations)),
    sel("THROUGHPUT_CONFID", ["Throughput", "Confidence", "Width (%)", ""], Fmt::Fixed(3), NONE, |r| real(r.confidence.throughput)),
    sel("LOCAL_CPU_CONFID", ["Local", "CPU", "Confidence", "Width (%)"], Fmt::Fixed(3), NONE, |r| real(r.local.cpu_confid)),
    sel("REMOTE_CPU_CONFID", ["Remote", "CPU", "Confidence", "Width (%)"], Fmt::Fixed(3), NONE, |r| real(r.remote.cpu_confid)),
    sel("TRANSACTION_RATE", ["Transaction", "Rate", "Tran/s", ""], Fmt::Fixed(3), NONE, |r| real(r.transaction_rate)),
    sel("RT_LATENCY", ["Round", "Trip", "Latency", "usec/tran"], Fmt::Fixed(3), NONE, |r| real(r.rt_latency)),
    sel("BURST_SIZE", ["Initial", "Burst", "Requests", ""], Fmt::Int, NONE, |r| int(r.burst_size)),
    sel("LOCAL_TRANSPORT_RETRANS", ["Local", "Transport", "Retransmissions", ""], Fmt::Int, NONE, |r| int(r.local.retransmits)),
    sel("REMOTE_TRANSPORT_RETRANS", ["Remote", "Transport", "Retransmissions", ""], Fmt::Int, NONE, |r| int(r.remote.retransmits)),
    sel("TRANSPORT_MSS", ["Transport", "MSS", "bytes", ""], Fmt::Int, NONE, |r| int(r.transport_mss)),
    sel("LOCAL_SEND_THROUGHPUT", ["Local", "Send", "Throughput", ""], Fmt::Fixed(2), NONE, |r| real(r.local.send_throughput)),
    sel("LOCAL_RECV_THROUGHPUT", ["Local", "Recv", "Throughput", ""], Fmt::Fixed(2), NONE, |r| real(r.local.recv_throughput)),
    sel("REMOTE_SEND_THROUGHPUT", ["Remote", "Send", "Throughput", ""], Fmt::Fixed(2), NONE, |r| real(r.remote.send_throughput)),
    sel("REMOTE_RECV_THROUGHPUT", ["Remote", "Recv", "Throughput", ""], Fmt::Fixed(2), NONE, |r| real(r.remote.recv_throughput)),
    sel("LOCAL_CPU_BIND", ["Local", "CPU", "Bind", ""], Fmt::Int, NONE, |r| int(r.local.cpu_bind)),
    sel("LOCAL_CPU_COUNT", ["Local", "CPU", "Count", ""], Fmt::Int, NONE, |r| int(r.local.cpu.count)),
    sel("LOCAL_CPU_PEAK_UTIL", ["Local", "Peak", "Per CPU", "Util %"], Fmt::Fixed(2), NONE, |r| real(r.local.cpu.peak_util)),
    sel("LOCAL_CPU_PEAK_ID", ["Local", "Peak", "Per CPU", "ID"], Fmt::Int, NONE, |r| int(r.local.cpu.peak_id)),
    sel("LOCAL_CPU_MODEL", ["Local", "CPU", "Model", ""], Fmt::Text, SYSTEM, |r| text(&r.local.system.cpu_model)),
    sel("LOCAL_CPU_FREQUENCY", ["Local", "CPU", "Frequency", "MHz"], Fmt::Int, SYSTEM, |r| int(r.local.system.cpu_mhz)),
    sel("REMOTE_CPU_BIND", ["Remote", "CPU", "Bind", ""], Fmt::Int, NONE, |r| int(r.remote.cpu_bind)),
    sel("REMOTE_CPU_COUNT", ["Remote", "CPU", "Count", ""], Fmt::Int, NONE, |r| int(r.remote.cpu.count)),
    sel("REMOTE_CPU_PEAK_UTIL", ["Remote", "Peak", "Per CPU", "Util %"], Fmt::Fixed(2), NONE, |r| real(r.remote.cpu.peak_util)),
    sel("REMOTE_CPU_PEAK_ID", ["Remote", "Peak", "Per CPU", "ID"], Fmt::Int, NONE, |r| int(r.remote.cpu.peak_id)),
    sel("REMOTE_CPU_MODEL", ["Remote", "CPU", "Model", ""], Fmt::Text, SYSTEM, |r| text(&r.remote.system.cpu_model)),
    sel("REMOTE_CPU_FREQUENCY", ["Remote", "CPU", "Frequency", "MHz"], Fmt::Int, SYSTEM, |r| int(r.remote.system.cpu_mhz)),
    sel("SOURCE_PORT", ["Source", "Port", "", ""], Fmt::Text, NONE, |r| text(&r.source.port)),
    sel("SOURCE_ADDR", ["Source", "Address", "", ""], Fmt::Text, NONE, |r| text(&r.source.address)),
    sel("SOURCE_FAMILY", ["Source", "Family", "", ""], Fmt::Int, NONE, |r| int(r.source.family)),
    sel("DEST_PORT", ["Destination", "Port", "", ""], Fmt::Text, NONE, |r| text(&r.dest.port)),
    sel("DEST_ADDR", ["Destination", "Address", "", ""], Fmt::Text, NONE, |r| text(&r.dest.address)),
    sel("DEST_FAMILY", ["Destination", "Family", "", ""], Fmt::Int, NONE, |r| int(r.dest.family)),
    sel("LOCAL_SEND_CALLS", ["Local", "Send", "Calls", ""], Fmt::Int, NONE, |r| int(r.local.send_calls)),
    sel("LOCAL_RECV_CALLS", ["Local", "Recv", "Calls", ""], Fmt::Int, NONE, |r| int(r.local.recv_calls)),
    sel("LOCAL_BYTES_PER_RECV", ["Local", "Bytes", "Per", "Recv"], Fmt::Fixed(2), NONE, |r| real(r.local.bytes_per_recv)),
    sel("LOCAL_BYTES_PER_SEND", ["Local", "Bytes", "Per", "Send"], Fmt::Fixed(2), NONE, |r| real(r.local.bytes_per_send)),
    sel("LOCAL_BYTES_SENT", ["Local", "Bytes", "Sent", ""], Fmt::Int, NONE, |r| int(r.local.bytes_sent)),
    sel("LOCAL_BYTES_RECVD", ["Local", "Bytes", "Received", ""], Fmt::Int, NONE, |r| int(r.local.bytes_received)),
    sel("LOCAL_BYTES_XFERD", ["Local", "Bytes", "Xferred", ""], Fmt::Fixed(0), NONE, |r| real(r.local.bytes_xferd)),
    sel("LOCAL_SEND_OFFSET", ["Local", "Send", "Offset", ""], Fmt::Int, NONE, |r| int(r.local.send_offset)),
    sel("LOCAL_RECV_OFFSET", ["Local", "Recv", "Offset", ""], Fmt::Int, NONE, |r| int(r.local.recv_offset)),
    sel("LOCAL_SEND_ALIGN", ["Local", "Send", "Alignment", ""], Fmt::Int, NONE, |r| int(r.local.send_align)),
    sel("LOCAL_RECV_ALIGN", ["Local", "Recv", "Alignment", ""], Fmt::Int, NONE, |r| int(r.local.recv_align)),
    sel("LOCAL_SEND_WIDTH", ["Local", "Send", "Width", ""], Fmt::Int, NONE, |r| int(r.local.send_width)),
    sel("LOCAL_RECV_WIDTH", ["Local", "Recv", "Width", ""], Fmt::Int, NONE, |r| int(r.local.recv_width)),
    sel("LOCAL_SEND_DIRTY_COUNT", ["Local", "Send", "Dirty", "Count"], Fmt::Int, NONE, |r| int(r.local.dirty_count)),
    sel("LOCAL_RECV_DIRTY_COUNT", ["Local", "Recv", "Dirty", "Count"], Fmt::Int, NONE, |r| int(r.local.dirty_count)),
    sel("LOCAL_RECV_CLEAN_COUNT", ["Local", "Recv", "Clean", "Count"], Fmt::Int, NONE, |r| int(r.local.clean_count)),
    sel("LOCAL_NODELAY", ["Local", "NODELAY", "", ""], Fmt::Int, NONE, |r| int(r.local.nodelay)),
    sel("LOCAL_CORK", ["Local", "Cork", "", ""], Fmt::Int, NONE, |r| int(r.local.cork)),
    sel("REMOTE_SEND_CALLS", ["Remote", "Send", "Calls", ""], Fmt::Int, NONE, |r| int(r.remote.send_calls)),
    sel("REMOTE_RECV_CALLS", ["Remote", "Recv", "Calls", ""], Fmt::Int, NONE, |r| int(r.remote.recv_calls)),
    sel("REMOTE_BYTES_PER_RECV", ["Remote", "Bytes", "Per", "Recv"], Fmt::Fixed(2), NONE, |r| real(r.remote.bytes_per_recv)),
    sel("REMOTE_BYTES_PER_SEND", ["Remote", "Bytes", "Per", "Send"], Fmt::Fixed(2), NONE, |r| real(r.remote.bytes_per_send)),
    sel("REMOTE_BYTES_SENT", ["Remote", "Bytes", "Sent", ""], Fmt::Int, NONE, |r| int(r.remote.bytes_sent)),
    sel("REMOTE_BYTES_RECVD", ["Remote", "Bytes", "Received", ""], Fmt::Int, NONE, |r| int(r.remote.bytes_received)),
    sel("REMOTE_BYTES_XFERD", ["Remote", "Bytes", "Xferred", ""], Fmt::Fixed(0), NONE, |r| real(r.remote.bytes_xferd)),
    sel("REMOTE_SEND_OFFSET", ["Remote", "Send", "Offset", ""], Fmt::Int, NONE, |r| int(r.remote.send_offset)),
    sel("REMOTE_RECV_OFFSET", ["Remote", "Recv", "Offset", ""], Fmt::Int, NONE, |r| int(r.remote.recv_offset)),
    sel("REMOTE_SEND_ALIGN", ["Remote", "Send", "Alignment", ""], Fmt::Int, NONE, |r| int(r.remote.send_align)),
    sel("REMOTE_RECV_ALIGN", ["Remote", "Recv", "Alignment", ""], Fmt::Int, NONE, |r| int(r.remote.recv_align)),
    sel("REMOTE_SEND_WIDTH", ["Remote", "Send", "Width", ""], Fmt::Int, NONE, |r| int(r.remote.send_width)),
    sel("REMOTE_RECV_WIDTH", ["Remote", "Recv", "Width", ""], Fmt::Int, NONE, |r| int(r.remote.recv_width)),
    sel("REMOTE_SEND_DIRTY_COUNT", ["Remote", "Send", "Dirty", "Count"], Fmt::Int, NONE, |r| int(r.remote.dirty_count)),
    sel("REMOTE_RECV_DIRTY_COUNT", ["Remote", "Recv", "Dirty", "Count"], Fmt::Int, NONE, |r| int(r.remote.dirty_count)),
    sel("REMOTE_RECV_CLEAN_COUNT", ["Remote", "Recv", "Clean", "Count"], Fmt::Int, NONE, |r| int(r.remote.clean_count)),
    sel("REMOTE_NODELAY", ["Remote", "NODELAY", "", ""], Fmt::Int, NONE, |r| int(r.remote.nodelay)),
    sel("REMOTE_CORK", ["Remote", "Cork", "", ""], Fmt::Int, NONE, |r| int(r.remote.cork)),
    sel("LOCAL_SYSNAME", ["Local", "Sysname", "", ""], Fmt::Text, SYSTEM, |r| text(&r.local.system.sysname)),
    sel("LOCAL_SYSTEM_MODEL", ["Local", "System", "Model", ""], Fmt::Text, SYSTEM, |r| text(&r.local.system.model)),
    sel("LOCAL_RELEASE", ["Local", "Release", "", ""], Fmt::Text, SYSTEM, |r| text(&r.local.system.release)),
    sel("LOCAL_VERSION", ["Local", "Version", "", ""], Fmt::Text, SYSTEM, |r| text(&r.local.system.version)),
    sel("LOCAL_MACHINE", ["Local", "Machine", "", ""], Fmt::Text, SYSTEM, |r| text(&r.local.system.machine)),
    sel("REMOTE_SYSNAME", ["Remote", "Sysname", "", ""], Fmt::Text, SYSTEM, |r| text(&r.remote.system.sysname)),
    sel("REMOTE_SYSTEM_MODEL", ["Remote", "System", "Model", ""], Fmt::Text, SYSTEM, |r| text(&r.remote.system.model)),
    sel("REMOTE_RELEASE", ["Remote", "Release", "", ""], Fmt::Text, SYSTEM, |r| text(&r.remote.system.release)),
    sel("REMOTE_VERSION", ["Remote", "Version", "", ""], Fmt::Text, SYSTEM, |r| text(&r.remote.system.version)),
    sel("REMOTE_MACHINE", ["Remote", "Machine", "", ""], Fmt::Text, SYSTEM, |r| text(&r.remote.system.machine)),
    sel("LOCAL_INTERFACE_NAME", ["Local", "Interface", "Name", ""], Fmt::Text, INTERFACE, |r| text(&r.local.interface.name)),
    sel("LOCAL_INTERFACE_VENDOR", ["Local", "Interface", "Vendor", ""], Fmt::Hex4, INTERFACE, |r| int(r.local.interface.vendor)),
    sel("LOCAL_INTERFACE_DEVICE", ["Local", "Interface", "Device", ""], Fmt::Hex4, INTERFACE, |r| int(r.local.interface.device)),
    sel("LOCAL_INTERFACE_SUBVENDOR", ["Local", "Interface", "Subvendor", ""], Fmt::Hex4, INTERFACE, |r| int(r.local.interface.subvendor)),
    sel("LOCAL_INTERFACE_SUBDEVICE", ["Local", "Interface", "Subdevice", ""], Fmt::Hex4, INTERFACE, |r| int(r.local.interface.subdevice)),
    sel("LOCAL_DRIVER_NAME", ["Local", "Driver", "Name", ""], Fmt::Text, INTERFACE, |r| text(&r.local.interface.driver)),
    sel("LOCAL_DRIVER_VERSION", ["Local", "Driver", "Version", ""], Fmt::Text, INTERFACE, |r| text(&r.local.interface.driver_version)),
    sel("LOCAL_DRIVER_FIRMWARE", ["Local", "Driver", "Firmware", ""], Fmt::Text, INTERFACE, |r| text(&r.local.interface.firmware)),
    sel("LOCAL_DRIVER_BUS", ["Local", "Driver", "Bus", ""], Fmt::Text, INTERFACE, |r| text(&r.local.interface.bus)),
    sel("LOCAL_INTERFACE_SLOT", ["Local", "Interface", "Slot", ""], Fmt::Text, INTERFACE, |r| text(&r.local.interface.slot)),
    sel("REMOTE_INTERFACE_NAME", ["Remote", "Interface", "Name", ""], Fmt::Text, INTERFACE, |r| text(&r.remote.interface.name)),
    sel("REMOTE_INTERFACE_VENDOR", ["Remote", "Interface", "Vendor", ""], Fmt::Hex4, INTERFACE, |r| int(r.remote.interface.vendor)),
    sel("REMOTE_INTERFACE_DEVICE", ["Remote", "Interface", "Device", ""], Fmt::Hex4, INTERFACE, |r| int(r.remote.interface.device)),
    sel("REMOTE_INTERFACE_SUBVENDOR", ["Remote", "Interface", "Subvendor", ""], Fmt::Hex4, INTERFACE, |r| int(r.remote.interface.subvendor)),
    sel("REMOTE_INTERFACE_SUBDEVICE", ["Remote", "Interface", "Subdevice", ""], Fmt::Hex4, INTERFACE, |r| int(r.remote.interface.subdevice)),
    sel("REMOTE_DRIVER_NAME", ["Remote", "Driver", "Name", ""], Fmt::Text, INTERFACE, |r| text(&r.remote.interface.driver)),
    sel("REMOTE_DRIVER_VERSION", ["Remote", "Driver", "Version", ""], Fmt::Text, INTERFACE, |r| text(&r.remote.interface.driver_version)),
    sel("REMOTE_DRIVER_FIRMWARE", ["Remote", "Driver", "Firmware", ""], Fmt::Text, INTERFACE, |r| text(&r.remote.interface.firmware)),
    sel("REMOTE_DRIVER_BUS", ["Remote", "Driver", "Bus", ""], Fmt::Text, INTERFACE, |r| text(&r.remote.interface.bus)),
    sel("REMOTE_INTERFACE_SLOT", ["Remote", "Interface", "Slot", ""], Fmt::Text, INTERFACE, |r| text(&r.remote.interface.slot)),
    sel("LOCAL_INTERVAL_USECS", ["Local", "Interval", "Usecs", ""], Fmt::Int, NONE, |r| int(r.local.interval_usecs)),
    sel("LOCAL_INTERVAL_BURST", ["Local", "Interval", "Burst", ""], Fmt::Int, NONE, |r| int(r.local.interval_burst)),
    sel("REMOTE_INTERVAL_USECS", ["Remote", "Interval", "Usecs", ""], Fmt::Int, NONE, |r| int(r.remote.interval_usecs)),
    sel("REMOTE_INTERVAL_BURST", ["Remote", "Interval", "Burst", ""], Fmt::Int, NONE, |r| int(r.remote.interval_burst)),
    sel("LOCAL_SECURITY_TYPE_ID", ["Local", "OS", "Security", "Type ID"], Fmt::Int, NONE, |_| int(0)),
    sel("LOCAL_SECURITY_TYPE", ["Local", "OS", "Security", "Type"], Fmt::Text, NONE, |_| text(DEPRECATED)),
    sel("LOCAL_SECURITY_ENABLED_NUM", ["Local", "OS", "Security", "Enabled Num"], Fmt::Int, NONE, |_| int(0)),
    sel("LOCAL_SECURITY_ENABLED", ["Local", "OS", "Security", "Enabled"], Fmt::Text, NONE, |_| text(DEPRECATED)),
    sel("LOCAL_SECURITY_SPECIFIC", ["Local", "OS", "Security", "Specific"], Fmt::Text, NONE, |_| text(DEPRECATED)),
    sel("REMOTE_SECURITY_TYPE_ID", ["Remote", "OS", "Security", "Type"], Fmt::Int, NONE, |_| int(0)),
    sel("REMOTE_SECURITY_TYPE", ["Remote", "OS", "Security", "Type"], Fmt::Text, NONE, |_| text(DEPRECATED)),
    sel("REMOTE_SECURITY_ENABLED_NUM", ["Remote", "OS", "Security", "Enabled"], Fmt::Int, NONE, |_| int(0)),
    sel("REMOTE_SECURITY_ENABLED", ["Remote", "OS", "Security", "Enabled"], Fmt::Text, NONE, |_| text(DEPRECATED)),
    sel("REMOTE_SECURITY_SPECIFIC", ["Remote", "OS", "Security", "Specific"], Fmt::Text, NONE, |_| text(DEPRECATED)),
    sel("RESULT_BRAND", ["Result", "Tag", "", ""], Fmt::Quoted, NONE, |r| r.brand.as_deref().map_or(Value::Missing, text)),
    sel("UUID", ["Test", "UUID", "", ""], Fmt::Text, NONE, |r| { text(&r.uuid) }),
    sel("MIN_LATENCY", ["Minimum", "Latency", "Microseconds", ""], Fmt::Int, STATS, |r| int(r.latency.min)),
    sel("MAX_LATENCY", ["Maximum", "Latency", "Microseconds", ""], Fmt::Int, STATS, |r| int(r.latency.max)),
    sel("P50_LATENCY", ["50th", "Percentile", "Latency", "Microseconds"], Fmt::Int, STATS, |r| int(r.latency.p50)),
    sel("P90_LATENCY", ["90th", "Percentile", "Latency", "Microseconds"], Fmt::Int, STATS, |r| int(r.latency.p90)),
    sel("P99_LATENCY", ["99th", "Percentile", "Latency", "Microseconds"], Fmt::Int, STATS, |r| int(r.latency.p99)),
    sel("MEAN_LATENCY", ["Mean", "Latency", "Microseconds", ""], Fmt::Fixed(2), STATS, |r| real(r.latency.mean)),
    sel("STDDEV_LATENCY", ["Stddev", "Latency", "Microseconds", ""], Fmt::Fixed(2), STATS, |r| real(r.latency.stddev)),
    sel("LOCAL_SOCKET_PRIO", ["Local", "Socket", "Priority", ""], Fmt::Int, NONE, |r| int(r.local.socket_prio)),
    sel("REMOTE_SOCKET_PRIO", ["Remote", "Socket", "Priority", ""], Fmt::Int, NONE, |r| int(r.remote.socket_prio)),
    sel("LOCAL_SOCKET_TOS", ["Local", "Socket", "TOS", ""], Fmt::Hex2, NONE, |r| int(r.local.socket_tos)),
    sel("REMOTE_SOCKET_TOS", ["Remote", "Socket", "TOS", ""], Fmt::Hex2, NONE, |r| int(r.remote.socket_tos)),
    sel("LOCAL_CONG_CONTROL", ["Local", "Congestion", "Control", "Algorithm"], Fmt::Text, CONG, |r| text(&r.local.cong_control)),
    sel("REMOTE_CONG_CONTROL", ["Remote", "Congestion", "Control", "Algorithm"], Fmt::Text, CONG, |r| text(&r.remote.cong_control)),
    sel("LOCAL_FILL_FILE", ["Local", "Fill", "File", ""], Fmt::Text, NONE, |r| text(&r.local.fill_file)),
    sel("REMOTE_FILL_FILE", ["Remote", "Fill", "File", ""], Fmt::Text, NONE, |r| text(&r.remote.fill_file)),
    sel("COMMAND_LINE", ["Command", "Line", "", ""], Fmt::Quoted, NONE, |r| text(&r.command_line)),
    sel("OUTPUT_END", ["This", "Is", "The", "End"], Fmt::Text, NONE, |_| Value::Missing),
];

/// Ours, beyond netperf: never in `all` or `?`, only when named.
#[rustfmt::skip]
pub static EXTRA_SELECTORS: [Selector; 76] = [
    sel("P99_9_LATENCY", ["99.9th", "Percentile", "Latency", "Microseconds"], Fmt::Fixed(2), STATS, |r| real(r.latency.p99_9)),
    sel("P99_99_LATENCY", ["99.99th", "Percentile", "Latency", "Microseconds"], Fmt::Fixed(2), STATS, |r| real(r.latency.p99_99)),
    sel("P99_999_LATENCY", ["99.999th", "Percentile", "Latency", "Microseconds"], Fmt::Fixed(2), STATS, |r| real(r.latency.p99_999)),
    sel("LATENCY_SAMPLES", ["Latency", "Samples", "", ""], Fmt::Int, STATS, |r| Value::Int(r.latency.samples as i64)),
    sel("LATENCY_STDERR", ["Latency", "Standard", "Error", "Microseconds"], Fmt::Fixed(3), STATS, |r| real(r.latency.std_error)),
    sel("LATENCY_CI99_LOW", ["Mean Latency", "99% Conf.", "Low", "Microseconds"], Fmt::Fixed(2), STATS, |r| real(r.latency.ci99_low)),
    sel("LATENCY_CI99_HIGH", ["Mean Latency", "99% Conf.", "High", "Microseconds"], Fmt::Fixed(2), STATS, |r| real(r.latency.ci99_high)),
    sel("LOCAL_DGRAMS_LOST", ["Local", "Datagrams", "Lost", ""], Fmt::Int, NONE, |r| int(r.local.datagrams.lost)),
    sel("LOCAL_DGRAMS_DUPLICATED", ["Local", "Datagrams", "Duplicated", ""], Fmt::Int, NONE, |r| int(r.local.datagrams.duplicated)),
    sel("LOCAL_DGRAMS_OUT_OF_ORDER", ["Local", "Datagrams", "Out of", "Order"], Fmt::Int, NONE, |r| int(r.local.datagrams.out_of_order)),
    sel("REMOTE_DGRAMS_LOST", ["Remote", "Datagrams", "Lost", ""], Fmt::Int, NONE, |r| int(r.remote.datagrams.lost)),
    sel("REMOTE_DGRAMS_DUPLICATED", ["Remote", "Datagrams", "Duplicated", ""], Fmt::Int, NONE, |r| int(r.remote.datagrams.duplicated)),
    sel("REMOTE_DGRAMS_OUT_OF_ORDER", ["Remote", "Datagrams", "Out of", "Order"], Fmt::Int, NONE, |r| int(r.remote.datagrams.out_of_order)),
    sel("LOCAL_IF_TX_PACKETS", ["Local", "Interface", "Packets", "Out"], Fmt::Int, IFCOUNTERS, |r| int(r.local.interface.tx_packets)),
    sel("LOCAL_IF_RX_PACKETS", ["Local", "Interface", "Packets", "In"], Fmt::Int, IFCOUNTERS, |r| int(r.local.interface.rx_packets)),
    sel("LOCAL_IF_TX_BYTES", ["Local", "Interface", "Bytes", "Out"], Fmt::Int, IFCOUNTERS, |r| int(r.local.interface.tx_bytes)),
    sel("LOCAL_IF_RX_BYTES", ["Local", "Interface", "Bytes", "In"], Fmt::Int, IFCOUNTERS, |r| int(r.local.interface.rx_bytes)),
    sel("LOCAL_IF_TX_PPS", ["Local", "Interface", "Packets/s", "Out"], Fmt::Fixed(2), IFCOUNTERS, |r| real(per_second(r.local.interface.tx_packets, r.elapsed))),
    sel("LOCAL_IF_RX_PPS", ["Local", "Interface", "Packets/s", "In"], Fmt::Fixed(2), IFCOUNTERS, |r| real(per_second(r.local.interface.rx_packets, r.elapsed))),
    sel("REMOTE_IF_TX_PACKETS", ["Remote", "Interface", "Packets", "Out"], Fmt::Int, IFCOUNTERS, |r| int(r.remote.interface.tx_packets)),
    sel("REMOTE_IF_RX_PACKETS", ["Remote", "Interface", "Packets", "In"], Fmt::Int, IFCOUNTERS, |r| int(r.remote.interface.rx_packets)),
    sel("REMOTE_IF_TX_BYTES", ["Remote", "Interface", "Bytes", "Out"], Fmt::Int, IFCOUNTERS, |r| int(r.remote.interface.tx_bytes)),
    sel("REMOTE_IF_RX_BYTES", ["Remote", "Interface", "Bytes", "In"], Fmt::Int, IFCOUNTERS, |r| int(r.remote.interface.rx_bytes)),
    sel("REMOTE_IF_TX_PPS", ["Remote", "Interface", "Packets/s", "Out"], Fmt::Fixed(2), IFCOUNTERS, |r| real(per_second(r.remote.interface.tx_packets, r.elapsed))),
    sel("REMOTE_IF_RX_PPS", ["Remote", "Interface", "Packets/s", "In"], Fmt::Fixed(2), IFCOUNTERS, |r| real(per_second(r.remote.interface.rx_packets, r.elapsed))),
    sel("RR_TIMEOUTS", ["Request/", "Response", "Timeouts", ""], Fmt::Int, NONE, |r| int(r.rr_timeouts)),
    sel("PACKETS_PER_TRANSACTION", ["Local", "Interface", "Packets", "per Tran"], Fmt::Fixed(3), IFCOUNTERS, |r| real(packets_per_transaction(r))),
    sel("FLOWS", ["Flows", "", "", ""], Fmt::Int, NONE, |r| int(r.flows.flows)),
    sel("THREADS", ["Flow", "Threads", "", ""], Fmt::Int, NONE, |r| int(r.flows.threads)),
    sel("FLOW_RATE_MIN", ["Flow", "Rate", "Minimum", ""], Fmt::Fixed(2), NONE, |r| real(r.flows.rate_min)),
    sel("FLOW_RATE_MEDIAN", ["Flow", "Rate", "Median", ""], Fmt::Fixed(2), NONE, |r| real(r.flows.rate_median)),
    sel("FLOW_RATE_MAX", ["Flow", "Rate", "Maximum", ""], Fmt::Fixed(2), NONE, |r| real(r.flows.rate_max)),
    sel("FLOW_JAIN", ["Flow", "Fairness", "(Jain)", ""], Fmt::Fixed(4), NONE, |r| real(r.flows.jain)),
    sel("FLOWS_STALLED", ["Flows", "Stalled", "", ""], Fmt::Int, NONE, |r| int(r.flows.stalled)),
    sel("FLOWS_FAILED", ["Flows", "Failed", "", ""], Fmt::Int, NONE, |r| int(r.flows.failed)),
    sel("LOCAL_MPTCP_SUBFLOWS", ["Local", "MPTCP", "Subflows", ""], Fmt::Int, NONE, |r| int(r.local.mptcp_subflows)),
    sel("REMOTE_MPTCP_SUBFLOWS", ["Remote", "MPTCP", "Subflows", ""], Fmt::Int, NONE, |r| int(r.remote.mptcp_subflows)),
    sel("LOCAL_TCP_RTT", ["Local", "TCP", "Round Trip", "Microseconds"], Fmt::Int, LOCALTCP, |r| tcp(&r.local, |t| int(t.rtt_us))),
    sel("LOCAL_TCP_RTTVAR", ["Local", "TCP", "RTT Variance", "Microseconds"], Fmt::Int, LOCALTCP, |r| tcp(&r.local, |t| int(t.rttvar_us))),
    sel("LOCAL_TCP_CWND", ["Local", "TCP", "Congestion", "Window"], Fmt::Int, LOCALTCP, |r| tcp(&r.local, |t| int(t.snd_cwnd))),
    sel("LOCAL_TCP_RETRANSMITS", ["Local", "TCP", "Segments", "Retransmitted"], Fmt::Int, LOCALTCP, |r| tcp(&r.local, |t| int(t.retransmits))),
    sel("LOCAL_TCP_DELIVERY_RATE", ["Local", "TCP", "Delivery Rate", "Bytes/s"], Fmt::Int, LOCALTCP, |r| tcp(&r.local, |t| int(t.delivery_rate))),
    sel("LOCAL_TCP_PACING_RATE", ["Local", "TCP", "Pacing Rate", "Bytes/s"], Fmt::Int, LOCALTCP, |r| tcp(&r.local, |t| int(t.pacing_rate))),
    sel("LOCAL_TCP_BUSY", ["Local", "TCP", "Busy", "%"], Fmt::Fixed(2), LOCALTCP, |r| tcp(&r.local, |t| real(t.busy * 100.0))),
    sel("LOCAL_TCP_RWND_LIMITED", ["Local", "TCP", "Rwnd Limited", "%"], Fmt::Fixed(2), LOCALTCP, |r| tcp(&r.local, |t| real(t.rwnd_limited * 100.0))),
    sel("LOCAL_TCP_SNDBUF_LIMITED", ["Local", "TCP", "Sndbuf Limited", "%"], Fmt::Fixed(2), LOCALTCP, |r| tcp(&r.local, |t| real(t.sndbuf_limited * 100.0))),
    sel("REMOTE_TCP_RTT", ["Remote", "TCP", "Round Trip", "Microseconds"], Fmt::Int, REMOTETCP, |r| tcp(&r.remote, |t| int(t.rtt_us))),
    sel("REMOTE_TCP_RTTVAR", ["Remote", "TCP", "RTT Variance", "Microseconds"], Fmt::Int, REMOTETCP, |r| tcp(&r.remote, |t| int(t.rttvar_us))),
    sel("REMOTE_TCP_CWND", ["Remote", "TCP", "Congestion", "Window"], Fmt::Int, REMOTETCP, |r| tcp(&r.remote, |t| int(t.snd_cwnd))),
    sel("REMOTE_TCP_RETRANSMITS", ["Remote", "TCP", "Segments", "Retransmitted"], Fmt::Int, REMOTETCP, |r| tcp(&r.remote, |t| int(t.retransmits))),
    sel("REMOTE_TCP_DELIVERY_RATE", ["Remote", "TCP", "Delivery Rate", "Bytes/s"], Fmt::Int, REMOTETCP, |r| tcp(&r.remote, |t| int(t.delivery_rate))),
    sel("REMOTE_TCP_PACING_RATE", ["Remote", "TCP", "Pacing Rate", "Bytes/s"], Fmt::Int, REMOTETCP, |r| tcp(&r.remote, |t| int(t.pacing_rate))),
    sel("REMOTE_TCP_BUSY", ["Remote", "TCP", "Busy", "%"], Fmt::Fixed(2), REMOTETCP, |r| tcp(&r.remote, |t| real(t.busy * 100.0))),
    sel("REMOTE_TCP_RWND_LIMITED", ["Remote", "TCP", "Rwnd Limited", "%"], Fmt::Fixed(2), REMOTETCP, |r| tcp(&r.remote, |t| real(t.rwnd_limited * 100.0))),
    sel("REMOTE_TCP_SNDBUF_LIMITED", ["Remote", "TCP", "Sndbuf Limited", "%"], Fmt::Fixed(2), REMOTETCP, |r| tcp(&r.remote, |t| real(t.sndbuf_limited * 100.0))),
    sel("OPEN_OFFERED_RATE", ["Offered", "Request", "Rate", "Trans/s"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.offered_rate)),
    sel("OPEN_ACHIEVED_RATE", ["Achieved", "Response", "Rate", "Trans/s"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.achieved_rate)),
    sel("OPEN_SLIP_P50", ["50th", "Percentile", "Send Slip", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.slip[0])),
    sel("OPEN_SLIP_P99", ["99th", "Percentile", "Send Slip", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.slip[1])),
    sel("OPEN_SLIP_MAX", ["Maximum", "Send Slip", "Microseconds", ""], Fmt::Fixed(2), NONE, |r| real(r.open_loop.slip[2])),
    sel("OPEN_LATE", ["Requests", "Sent", "Late", ""], Fmt::Int, NONE, |r| int(r.open_loop.late)),
    sel("OPEN_HELD_BACK", ["Requests", "Held", "Back", ""], Fmt::Int, NONE, |r| int(r.open_loop.held_back)),
    sel("OPEN_LOST", ["Requests", "Lost", "", ""], Fmt::Int, NONE, |r| int(r.open_loop.lost)),
    sel("OPEN_MAX_IN_FLIGHT", ["Most", "Requests", "In Flight", ""], Fmt::Int, NONE, |r| int(r.open_loop.max_in_flight)),
    sel("CO_P50_LATENCY", ["Corrected", "50th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.corrected[0])),
    sel("CO_P90_LATENCY", ["Corrected", "90th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.corrected[1])),
    sel("CO_P99_LATENCY", ["Corrected", "99th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.corrected[2])),
    sel("CO_P99_9_LATENCY", ["Corrected", "99.9th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.corrected[3])),
    sel("CO_P99_99_LATENCY", ["Corrected", "99.99th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.corrected[4])),
    sel("CO_P99_999_LATENCY", ["Corrected", "99.999th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.corrected[5])),
    sel("RAW_P50_LATENCY", ["Raw", "50th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.raw[0])),
    sel("RAW_P90_LATENCY", ["Raw", "90th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.raw[1])),
    sel("RAW_P99_LATENCY", ["Raw", "99th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.raw[2])),
    sel("RAW_P99_9_LATENCY", ["Raw", "99.9th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.raw[3])),
    sel("RAW_P99_99_LATENCY", ["Raw", "99.99th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.raw[4])),
    sel("RAW_P99_999_LATENCY", ["Raw", "99.999th Pctl", "Latency", "Microseconds"], Fmt::Fixed(2), NONE, |r| real(r.open_loop.raw[5])),
];

/// A TCP_INFO figure of one end; missing (an empty field) where the end
/// has none.
fn tcp(end: &EndRecord, figure: fn(&TcpInterval) -> Value) -> Value {
    end.tcp.as_ref().map_or(Value::Missing, figure)
}

/// A counter over the test as a rate; -1 when the counter was not read.
fn per_second(count: i64, elapsed: f64) -> f64 {
    if count < 0 || elapsed <= 0.0 {
        -1.0
    } else {
        count as f64 / elapsed
    }
}

/// Packets through the local interface (both ways) per transaction: how many
/// packets one request/response really costs. -1 outside RR tests.
fn packets_per_transaction(r: &OmniRecord) -> f64 {
    let i = &r.local.interface;
    let transactions = r.transaction_rate * r.elapsed;
    if r.rt_latency < 0.0 || i.tx_packets < 0 || i.rx_packets < 0 || transactions <= 0.0 {
        return -1.0;
    }
    (i.tx_packets + i.rx_packets) as f64 / transactions
}

/// The selector of a name, any case; netperf's and ours.
pub fn by_name(name: &str) -> Option<&'static Selector> {
    NETPERF_SELECTORS
        .iter()
        .chain(EXTRA_SELECTORS.iter())
        .find(|s| s.name.eq_ignore_ascii_case(name))
}

/// The selector whose name or whose title (header lines joined by spaces)
/// matches, as netperf's selector files allow.
pub fn by_name_or_title(text: &str) -> Option<&'static Selector> {
    by_name(text).or_else(|| {
        NETPERF_SELECTORS
            .iter()
            .chain(EXTRA_SELECTORS.iter())
            .find(|s| s.title().eq_ignore_ascii_case(text))
    })
}

/// Position of a netperf selector in netperf's order.
pub fn index_of(name: &str) -> Option<usize> {
    NETPERF_SELECTORS.iter().position(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = NETPERF_SELECTORS
            .iter()
            .chain(EXTRA_SELECTORS.iter())
            .map(|s| s.name)
            .collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }

    #[test]
    fn lookup_is_case_insensitive_and_knows_titles() {
        assert_eq!(
            by_name("throughput_units").unwrap().name,
            "THROUGHPUT_UNITS"
        );
        assert_eq!(
            by_name_or_title("Throughput Units").unwrap().name,
            "THROUGHPUT_UNITS"
        );
        assert_eq!(
            by_name_or_title("Local Send Socket Size Final")
                .unwrap()
                .name,
            "LSS_SIZE_END"
        );
        assert!(by_name("NO_SUCH").is_none());
    }
}
