//! The omni test's request, response and results messages (netperf 2.7.1's
//! omni_request_struct, omni_response_struct, omni_results_struct), with the
//! exact word positions and conversion cut-offs of the real implementation.

use super::message::{join_u64, kind, split_u64, Message};

/// Bits of the omni `flags` word.
pub mod flag {
    pub const NO_DELAY: u32 = 0x0000_0001;
    pub const USE_SENDFILE: u32 = 0x0000_0002;
    pub const CONNECT_TEST: u32 = 0x0000_0004;
    pub const MEASURE_CPU: u32 = 0x0000_0008;
    pub const CHECKSUM_OFF: u32 = 0x0000_0010;
    /// Also tested by netserver as "want remote congestion control name":
    /// netperf defines both as 0x20, so a routed test always gets it back.
    pub const ROUTING_ALLOWED: u32 = 0x0000_0020;
    pub const WANT_IFNAME: u32 = 0x0000_0040;
    pub const WANT_IFSLOT: u32 = 0x0000_0080;
    pub const WANT_IFIDS: u32 = 0x0000_0100;
    pub const WANT_DRVINFO: u32 = 0x0000_0200;
    pub const FASTOPEN: u32 = 0x0000_0800;
    pub const USE_PKTINFO: u32 = 0x0000_2000;
    pub const USE_CONNECTED: u32 = 0x0000_4000;
    pub const WANT_DEFER_ACCEPT: u32 = 0x0000_8000;
    pub const USE_MTU_DISCOVER: u32 = 0x0001_0000;
    pub const WANT_KEEPALIVE: u32 = 0x8000_0000;
}

/// Direction bits, from the point of view of the end that receives the request.
pub const DIR_XMIT: u32 = 0x2;
pub const DIR_RECV: u32 = 0x4;

/// netperf's own address family numbers (NF_*), independent of the OS.
pub const NF_UNSPEC: u32 = 0;
pub const NF_INET: u32 = 4;
pub const NF_INET6: u32 = 6;
/// netperf's socket type numbers (NST_*).
pub const NST_STREAM: u32 = 1;
pub const NST_DGRAM: u32 = 2;

/// How many data words each message converts with htonl; the rest is raw.
pub const REQUEST_CONV_CUTOFF: usize = 38;
pub const RESPONSE_CONV_CUTOFF: usize = 18;
pub const RESULTS_CONV_CUTOFF: usize = 27;

/// What netperf asks netserver to do. Sizes are netserver's view ("send" is
/// what netserver sends), except the ring widths, which netperf fills from its
/// own local widths — a quirk the real netserver relies on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OmniRequest {
    pub cpu_bind: i32,
    pub send_buf_size: i32,
    pub send_size: i32,
    pub send_alignment: u32,
    pub send_offset: u32,
    pub send_width: u32,
    pub request_size: i32,
    pub recv_buf_size: i32,
    pub receive_size: i32,
    pub recv_alignment: u32,
    pub recv_offset: u32,
    pub recv_width: u32,
    pub response_size: i32,
    pub flags: u32,
    pub cpu_rate: f32,
    /// > 0 seconds, <= 0 a negated byte or transaction count.
    pub test_length: i32,
    pub so_rcvavoid: u32,
    pub so_sndavoid: u32,
    pub send_dirty_count: i32,
    pub recv_dirty_count: i32,
    pub recv_clean_count: i32,
    pub data_port: u32,
    pub ipfamily: u32,
    pub socket_type: u32,
    pub protocol: u32,
    pub direction: u32,
    pub netperf_port: u32,
    pub interval_burst: u32,
    pub interval_usecs: u32,
    /// Addresses as 16 bytes in network order (IPv4 in the first 4).
    pub netperf_ip: [u8; 16],
    pub netserver_ip: [u8; 16],
    pub socket_prio: i32,
    pub socket_tos: i32,
    pub cong_control: String,
    pub fill_file: String,
}

const CONG_CONTROL_AT: usize = 152;
const CONG_CONTROL_LEN: usize = 16;
const FILL_FILE_AT: usize = 168;
const FILL_FILE_LEN: usize = 32;

/// IPv4 travels as one host-order number converted with htonl, so its bytes
/// arrive in natural order; IPv6 travels as raw memory converted word by word,
/// so each 4-byte group arrives reversed.
fn put_ip(m: &mut Message, index: usize, family: u32, ip: &[u8; 16]) {
    if family == NF_INET6 {
        m.set_data_swapped_bytes(index, ip);
    } else {
        m.set_data_u32(index, u32::from_be_bytes([ip[0], ip[1], ip[2], ip[3]]));
        for i in 1..4 {
            m.set_data_u32(index + i, 0);
        }
    }
}

fn get_ip(m: &Message, index: usize, family: u32) -> [u8; 16] {
    if family == NF_INET6 {
        m.data_swapped_bytes(index)
    } else {
        let mut ip = [0u8; 16];
        ip[..4].copy_from_slice(&m.data_u32(index).to_be_bytes());
        ip
    }
}

impl OmniRequest {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::DO_OMNI, self.cpu_bind);
        let words: [u32; 28] = [
            self.send_buf_size as u32,
            self.send_size as u32,
            self.send_alignment,
            self.send_offset,
            self.send_width,
            self.request_size as u32,
            self.recv_buf_size as u32,
            self.receive_size as u32,
            self.recv_alignment,
            self.recv_offset,
            self.recv_width,
            self.response_size as u32,
            self.flags,
            self.cpu_rate.to_bits(),
            self.test_length as u32,
            self.so_rcvavoid,
            self.so_sndavoid,
            self.send_dirty_count as u32,
            self.recv_dirty_count as u32,
            self.recv_clean_count as u32,
            self.data_port,
            self.ipfamily,
            self.socket_type,
            self.protocol,
            self.direction,
            self.netperf_port,
            self.interval_burst,
            self.interval_usecs,
        ];
        for (i, w) in words.iter().enumerate() {
            m.set_data_u32(i, *w);
        }
        put_ip(&mut m, 28, self.ipfamily, &self.netperf_ip);
        put_ip(&mut m, 32, self.ipfamily, &self.netserver_ip);
        m.set_data_i32(36, self.socket_prio);
        m.set_data_i32(37, self.socket_tos);
        m.set_data_str(CONG_CONTROL_AT, CONG_CONTROL_LEN, &self.cong_control);
        m.set_data_str(FILL_FILE_AT, FILL_FILE_LEN, &self.fill_file);
        m
    }

    pub fn decode(m: &Message) -> Self {
        let ipfamily = m.data_u32(21);
        OmniRequest {
            cpu_bind: m.serv_errno(),
            send_buf_size: m.data_i32(0),
            send_size: m.data_i32(1),
            send_alignment: m.data_u32(2),
            send_offset: m.data_u32(3),
            send_width: m.data_u32(4),
            request_size: m.data_i32(5),
            recv_buf_size: m.data_i32(6),
            receive_size: m.data_i32(7),
            recv_alignment: m.data_u32(8),
            recv_offset: m.data_u32(9),
            recv_width: m.data_u32(10),
            response_size: m.data_i32(11),
            flags: m.data_u32(12),
            cpu_rate: m.data_f32(13),
            test_length: m.data_i32(14),
            so_rcvavoid: m.data_u32(15),
            so_sndavoid: m.data_u32(16),
            send_dirty_count: m.data_i32(17),
            recv_dirty_count: m.data_i32(18),
            recv_clean_count: m.data_i32(19),
            data_port: m.data_u32(20),
            ipfamily,
            socket_type: m.data_u32(22),
            protocol: m.data_u32(23),
            direction: m.data_u32(24),
            netperf_port: m.data_u32(25),
            interval_burst: m.data_u32(26),
            interval_usecs: m.data_u32(27),
            netperf_ip: get_ip(m, 28, ipfamily),
            netserver_ip: get_ip(m, 32, ipfamily),
            socket_prio: m.data_i32(36),
            socket_tos: m.data_i32(37),
            cong_control: m.data_str(CONG_CONTROL_AT, CONG_CONTROL_LEN),
            fill_file: m.data_str(FILL_FILE_AT, FILL_FILE_LEN),
        }
    }
}

/// netserver's answer to an omni request: what it set up, and where to connect.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OmniResponse {
    pub serv_errno: i32,
    pub recv_buf_size: i32,
    pub receive_size: i32,
    pub recv_width: i32,
    pub send_buf_size: i32,
    pub send_size: i32,
    pub send_width: i32,
    pub flags: u32,
    pub cpu_rate: f32,
    pub test_length: u32,
    pub so_rcvavoid: u32,
    pub so_sndavoid: u32,
    pub data_port: u32,
    pub interval_burst: u32,
    pub interval_usecs: u32,
    pub cpu_frequency: u32,
    pub security_info: u32,
    pub socket_prio: i32,
    pub socket_tos: i32,
    pub system_model: String,
    pub cpu_model: String,
    pub security_string: String,
}

impl OmniResponse {
    pub fn encode(&self) -> Message {
        let mut m = Message::new(kind::OMNI_RESPONSE, self.serv_errno);
        let words: [u32; 18] = [
            self.recv_buf_size as u32,
            self.receive_size as u32,
            self.recv_width as u32,
            self.send_buf_size as u32,
            self.send_size as u32,
            self.send_width as u32,
            self.flags,
            self.cpu_rate.to_bits(),
            self.test_length,
            self.so_rcvavoid,
            self.so_sndavoid,
            self.data_port,
            self.interval_burst,
            self.interval_usecs,
            self.cpu_frequency,
            self.security_info,
            self.socket_prio as u32,
            self.socket_tos as u32,
        ];
        for (i, w) in words.iter().enumerate() {
            m.set_data_u32(i, *w);
        }
        m.set_data_str(72, 33, &self.system_model);
        m.set_data_str(105, 80, &self.cpu_model);
        m.set_data_str(185, 16, &self.security_string);
        m
    }

    pub fn decode(m: &Message) -> Self {
        OmniResponse {
            serv_errno: m.serv_errno(),
            recv_buf_size: m.data_i32(0),
            receive_size: m.data_i32(1),
            recv_width: m.data_i32(2),
            send_buf_size: m.data_i32(3),
            send_size: m.data_i32(4),
            send_width: m.data_i32(5),
            flags: m.data_u32(6),
            cpu_rate: m.data_f32(7),
            test_length: m.data_u32(8),
            so_rcvavoid: m.data_u32(9),
            so_sndavoid: m.data_u32(10),
            data_port: m.data_u32(11),
            interval_burst: m.data_u32(12),
            interval_usecs: m.data_u32(13),
            cpu_frequency: m.data_u32(14),
            security_info: m.data_u32(15),
            socket_prio: m.data_i32(16),
            socket_tos: m.data_i32(17),
            system_model: m.data_str(72, 33),
            cpu_model: m.data_str(105, 80),
            security_string: m.data_str(185, 16),
        }
    }
}

/// What netserver measured, sent when its side of the test ends.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OmniResults {
    pub serv_errno: i32,
    pub bytes_received: u64,
    pub recv_calls: u32,
    pub recv_buf_size: i32,
    pub bytes_sent: u64,
    pub send_calls: u32,
    pub send_buf_size: i32,
    pub failed_sends: u32,
    pub trans_received: u32,
    pub elapsed_time: f32,
    pub cpu_util: f32,
    pub cpu_percent_user: f32,
    pub cpu_percent_system: f32,
    pub cpu_percent_iowait: f32,
    pub cpu_percent_irq: f32,
    pub cpu_percent_swintr: f32,
    pub serv_dem: f32,
    pub cpu_method: u32,
    pub num_cpus: u32,
    pub peak_cpu_id: i32,
    pub peak_cpu_util: f32,
    pub vendor: i32,
    pub device: i32,
    pub subvendor: i32,
    pub subdevice: i32,
    pub transport_retrans: i32,
    pub ifname: String,
    pub driver: String,
    pub version: String,
    pub firmware: String,
    pub bus: String,
    pub ifslot: String,
    pub cong_control: String,
}

/// (offset, length) of the results' strings, after the 27 converted words.
const RESULT_STRINGS: [(usize, usize); 7] = [
    (108, 16),
    (124, 32),
    (156, 32),
    (188, 32),
    (220, 32),
    (252, 16),
    (268, 16),
];

impl OmniResults {
    /// Encode as a stock netserver does: its results reuse the response's
    /// buffer, whose type word was already converted once, so the type (98,
    /// OMNI_RESPONSE — not OMNI_RESULTS) arrives byte-swapped.
    pub fn encode(&self) -> Message {
        let mut m = Message::new(0, self.serv_errno);
        m.set_kind_swapped(kind::OMNI_RESPONSE);
        let (rx_hi, rx_lo) = split_u64(self.bytes_received);
        let (tx_hi, tx_lo) = split_u64(self.bytes_sent);
        let words: [u32; 27] = [
            rx_hi,
            rx_lo,
            self.recv_calls,
            self.recv_buf_size as u32,
            tx_hi,
            tx_lo,
            self.send_calls,
            self.send_buf_size as u32,
            self.failed_sends,
            self.trans_received,
            self.elapsed_time.to_bits(),
            self.cpu_util.to_bits(),
            self.cpu_percent_user.to_bits(),
            self.cpu_percent_system.to_bits(),
            self.cpu_percent_iowait.to_bits(),
            self.cpu_percent_irq.to_bits(),
            self.cpu_percent_swintr.to_bits(),
            self.serv_dem.to_bits(),
            self.cpu_method,
            self.num_cpus,
            self.peak_cpu_id as u32,
            self.peak_cpu_util.to_bits(),
            self.vendor as u32,
            self.device as u32,
            self.subvendor as u32,
            self.subdevice as u32,
            self.transport_retrans as u32,
        ];
        for (i, w) in words.iter().enumerate() {
            m.set_data_u32(i, *w);
        }
        let strings = [
            &self.ifname,
            &self.driver,
            &self.version,
            &self.firmware,
            &self.bus,
            &self.ifslot,
            &self.cong_control,
        ];
        for ((at, len), s) in RESULT_STRINGS.iter().zip(strings) {
            m.set_data_str(*at, *len, s);
        }
        m
    }

    pub fn decode(m: &Message) -> Self {
        let s = |i: usize| m.data_str(RESULT_STRINGS[i].0, RESULT_STRINGS[i].1);
        OmniResults {
            serv_errno: m.serv_errno(),
            bytes_received: join_u64(m.data_u32(0), m.data_u32(1)),
            recv_calls: m.data_u32(2),
            recv_buf_size: m.data_i32(3),
            bytes_sent: join_u64(m.data_u32(4), m.data_u32(5)),
            send_calls: m.data_u32(6),
            send_buf_size: m.data_i32(7),
            failed_sends: m.data_u32(8),
            trans_received: m.data_u32(9),
            elapsed_time: m.data_f32(10),
            cpu_util: m.data_f32(11),
            cpu_percent_user: m.data_f32(12),
            cpu_percent_system: m.data_f32(13),
            cpu_percent_iowait: m.data_f32(14),
            cpu_percent_irq: m.data_f32(15),
            cpu_percent_swintr: m.data_f32(16),
            serv_dem: m.data_f32(17),
            cpu_method: m.data_u32(18),
            num_cpus: m.data_u32(19),
            peak_cpu_id: m.data_i32(20),
            peak_cpu_util: m.data_f32(21),
            vendor: m.data_i32(22),
            device: m.data_i32(23),
            subvendor: m.data_i32(24),
            subdevice: m.data_i32(25),
            transport_retrans: m.data_i32(26),
            ifname: s(0),
            driver: s(1),
            version: s(2),
            firmware: s(3),
            bus: s(4),
            ifslot: s(5),
            cong_control: s(6),
        }
    }
}
