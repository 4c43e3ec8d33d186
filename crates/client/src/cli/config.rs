//! The parsed netperf command line: one field per netperf 2.7.1 option, with
//! netperf's own defaults. Parsing fills it (`cli::parse`), presets turn it into
//! a `TestSpec`; nothing here interprets a test.

use netperf_data::net::resolve::Family;

/// A pair of values set by a netperf "optionspec" such as `-s 64K,128K`.
/// `None` means the user left that half at its default.
pub type Pair<T> = (Option<T>, Option<T>);

/// Global options (before `--`). Field comments give the netperf option.
#[derive(Debug, Clone)]
pub struct GlobalOptions {
    /// `-H name|ip[,family]`: the netserver (control connection) host. Default
    /// "localhost", or "::1" when the families ask for IPv6 and no name was given.
    pub host: String,
    /// Family from -H ...,fam or -4/-6.
    pub host_family: Family,
    /// `-L name|ip[,family]`: local address for the control connection.
    pub local_host: Option<String>,
    pub local_family: Family,
    /// `-p port[,lport]`: netserver control port (default "12865") and local control port.
    pub port: String,
    pub local_port: Option<String>,
    /// -t testname, upper-cased as given; last -t wins. Default "TCP_STREAM".
    pub test_name: String,
    /// -l testlen: > 0 seconds, < 0 bytes (STREAM) or transactions (RR). Default 10.
    pub test_length: i64,
    /// `-c [rate]`, `-C [rate]`: measure local/remote CPU; the optional rate is a
    /// calibration hint, taken from the next word only when it starts with a digit.
    pub local_cpu: bool,
    pub local_cpu_rate: f32,
    pub remote_cpu: bool,
    pub remote_cpu_rate: f32,
    /// -f G|M|K|B|g|m|k|b|x|u: output units letter. When -f is absent the
    /// parser applies netperf's rule for classic names ('x' if the test name
    /// contains "RR", else 'm', and an explicit 'x' becomes 'm' for a non-RR
    /// name); for OMNI it stays 'm' with `format_units_explicit` false and the
    /// direction decides later (netperf: 'x' for a request/response direction).
    pub format_units: char,
    /// True when -f was given.
    pub format_units_explicit: bool,
    /// -B brandstr.
    pub brand: Option<String>,
    /// -P 0|1. Default true.
    pub print_headers: bool,
    /// -v level. Default 1.
    pub verbosity: i32,
    /// -d, repeatable.
    pub debug: i32,
    /// -i max,min iterations. Default (1,1). Any -i clamps both into 3..=30
    /// (after raising max to min) and turns confidence on (99%, width 5%);
    /// -I without -i sets (10,3).
    pub iterations_max: u32,
    pub iterations_min: u32,
    /// `-I level[,width]`: confidence level (95|99) and interval width in percent
    /// (the banner shows +/- half of it). Level 0 = off. As in netperf, `-I 99`
    /// without a comma sets the width to 99 too (two-parm rule).
    pub confidence_level: u32,
    pub confidence_width: f64,
    /// -r: confidence on the result only.
    pub result_confidence_only: bool,
    /// `-D time[,units]`: interim results every `time` seconds (always > 0;
    /// a negative time sets `interim_always_timestamp`). None = off; `-D ,units`
    /// keeps netperf's default of 1 second.
    pub interim_interval: Option<f64>,
    /// The units half of -D as typed, and its value (a sizespec): the first
    /// guess of units (bytes or transactions) per interval.
    pub interim_units: Option<String>,
    pub interim_units_value: Option<u32>,
    /// -D with a negative time: netperf's demo mode 2, which reads the clock
    /// far more often instead of trusting the units guess.
    pub interim_always_timestamp: bool,
    /// `-F lfill[,rfill]`: fill files.
    pub local_fill_file: Option<String>,
    pub remote_fill_file: Option<String>,
    /// -j: keep additional timing statistics (latency percentiles).
    pub keep_statistics: bool,
    /// -a send,recv / -A send,recv: buffer alignment. Default 8.
    pub local_send_align: u32,
    pub local_recv_align: u32,
    pub remote_send_align: u32,
    pub remote_recv_align: u32,
    /// -o send,recv / -O send,recv: buffer offsets. Default 0.
    pub local_send_offset: u32,
    pub local_recv_offset: u32,
    pub remote_send_offset: u32,
    pub remote_recv_offset: u32,
    /// -W send,recv: ring widths (0 = netperf's automatic choice). The
    /// test-specific -W sets `send_width` too (netperf shares the variable).
    pub send_width: u32,
    pub recv_width: u32,
    /// -n numcpu.
    pub num_cpus: Option<u32>,
    /// -N: no control connection. As in netperf it also turns remote CPU
    /// measurement off (rate -1) and resets the remote priority and TOS to -1.
    pub no_control: bool,
    /// -s seconds: wait between setup and start.
    pub wait_secs: u32,
    /// -S: SO_KEEPALIVE on the data connection.
    pub keepalive: bool,
    /// -T lcpu,rcpu: CPU binding (-1 = none).
    pub local_cpu_bind: i32,
    pub remote_cpu_bind: i32,
    /// -T was given at all (netperf's cpu_binding_requested): the banner
    /// says " : cpu bind" then, even for `-T -1` or `-T ,`.
    pub cpu_bind_requested: bool,
    /// -y local,remote: SO_PRIORITY (-1 = unset).
    pub local_socket_prio: i32,
    pub remote_socket_prio: i32,
    /// -Y local,remote: IP_TOS (-1 = unset): a number 0..=255 in C syntax
    /// (0x10 hex, 020 octal, 16 decimal) or a name such as af11, cs1, ef, lowdelay.
    pub local_socket_tos: i32,
    pub remote_socket_tos: i32,
    /// -Z passphrase.
    pub passphrase: Option<String>,
    /// `-w local[,remote]` / `-b local[,remote]` global interval pacing, kept for
    /// issue 5. 0 = off. `interval_wait_ms` is `interval_usecs / 1000`
    /// (netperf's `interval_wate`); -b without -w sets a 1 ms interval.
    pub interval_wait_ms: u32,
    pub interval_burst: u32,
    /// -w first half as a timespec (u/us, m/ms, s; milliseconds without suffix).
    pub interval_usecs: u32,
    /// -w / -b second halves: the pacing netserver is asked to use.
    pub remote_interval_usecs: u32,
    pub remote_interval_burst: u32,
    /// The whole command line as netperf prints it for COMMAND_LINE.
    pub command_line: String,
    /// The same command line word by word (argv without the program).
    pub args: Vec<String>,
}

/// Test-specific options (after `--`) of the omni/migrated BSD tests.
/// Every default is the type's own: 0, false, none, empty, `Family::Unspec`.
#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    /// -b number: first burst of requests for _RR tests, as given. Default 0;
    /// zero or negative means no burst, as in netperf 2.7.1.
    pub first_burst: i32,
    /// -c: explicitly a connection test.
    pub connection_test: bool,
    /// -C: TCP_CORK.
    pub cork: bool,
    /// -d direction as typed: "send", "recv", "rr", "stream", "maerts", a
    /// bitmask such as 0x6, or several joined with '|' ("Send|Recv").
    /// netperf honours -d only for `-t omni`; for other test names the parser
    /// leaves this None and lists the option in `unsupported`.
    pub direction: Option<String>,
    /// The same direction as netperf's bits: 0x2 transmit, 0x4 receive.
    pub direction_mask: Option<u32>,
    /// -D: TCP_NODELAY local and remote. netperf 2.7.1 always sets both; an
    /// `[L][,R]` word after -D is accepted and listed in `unsupported`.
    pub local_nodelay: bool,
    pub remote_nodelay: bool,
    /// -e seconds: receive timeout (UDP_RR loss recovery).
    pub receive_timeout: Option<i32>,
    /// -f: IP_MTU_DISCOVER (IP_PMTUDISC_DO) on the data sockets.
    pub mtu_discover: bool,
    /// -F: TCP fast open.
    pub fastopen: bool,
    /// -a: TCP_DEFER_ACCEPT on netserver's listening data socket.
    pub defer_accept: bool,
    /// -B: IP_PKTINFO on netserver's UDP data socket.
    pub use_pktinfo: bool,
    /// -T with a name netperf 2.7.1 does not know: it asks for protocol 0
    /// (IPPROTO_IP), which the kernel reads as the socket type's own.
    pub protocol_unnamed: bool,
    /// -g / -G: transport-level options kept for omni (-G sets the TCP_MAXSEG).
    pub maxseg: Option<i32>,
    /// `-H name[/mask][,fam]` / `-L ...`: data connection target / source. The
    /// families are the effective ones: the last of -4, -6 and the ",fam" of
    /// -H (resp. -L) wins. A "/mask" (address randomization) is listed in
    /// `unsupported` and left out of the name.
    pub data_host: Option<String>,
    pub data_host_family: Family,
    pub data_local: Option<String>,
    pub data_local_family: Family,
    /// -k [file], -o [file], -O [file]: omni output selection (issue 4). Value is
    /// the raw list or file name; Some("") when the option came without one;
    /// Some("?") asks for the list of selectors. The last of the three wins
    /// (the others are reset to None), as in netperf.
    pub keyval_output: Option<String>,
    pub csv_output: Option<String>,
    pub human_output: Option<String>,
    /// --seq: sequence numbers in UDP payloads (netperf-ng).
    pub sequence: bool,
    /// -q bytes/s: SO_MAX_PACING_RATE on the local data socket.
    pub pacing_rate: Option<u32>,
    /// -J [list]: our JSON output of the same selection (netperf has no -J).
    pub json_output: Option<String>,
    /// Direction bits an omni test's -m, -M and -r imply when no -d is given
    /// (netperf's implicit_direction).
    pub implied_direction: u32,
    /// `-K loc[,rem]`: congestion control algorithm.
    pub local_cong_control: Option<String>,
    pub remote_cong_control: Option<String>,
    /// -m local,remote: send sizes (starred rule: one value sets only local).
    /// None = default.
    pub local_send_size: Option<u32>,
    pub remote_send_size: Option<u32>,
    /// -M remote,local: receive sizes. Despite the usage text, netperf's omni
    /// parser gives the FIRST value to the netserver (remote) side and the
    /// second to the local side, and one value sets only the remote one.
    pub local_recv_size: Option<u32>,
    pub remote_recv_size: Option<u32>,
    /// -n / -N: connected UDP sockets locally / remotely.
    pub local_connected: bool,
    pub remote_connected: bool,
    /// `-p min[,max]`: client port range for connection tests.
    pub port_min: Option<u16>,
    pub port_max: Option<u16>,
    /// `-p dir` of the Unix-domain tests (STREAM_STREAM, ...): where the
    /// socket files go, as typed.
    pub unix_dir: Option<String>,
    /// `-P local[,remote]`: data socket ports.
    pub local_data_port: Option<u16>,
    pub remote_data_port: Option<u16>,
    /// `-r req[,rsp]`: request/response sizes. None = default (1,1).
    pub request_size: Option<u32>,
    pub response_size: Option<u32>,
    /// -R 0/1: routing allowed (SO_DONTROUTE when 0). None = test default.
    pub routing_allowed: Option<bool>,
    /// `-s send[,recv]` / `-S send[,recv]`: socket buffer sizes (-1 = system default).
    pub local_send_buf: Option<i32>,
    pub local_recv_buf: Option<i32>,
    pub remote_send_buf: Option<i32>,
    pub remote_recv_buf: Option<i32>,
    /// -t type: socket type ("stream", "dgram"), -T protocol ("tcp", "udp",
    /// "sctp", "sdp", "dccp", "udplite"), lower case. As in netperf, -T also
    /// sets the socket type its protocol implies (tcp: stream, udp: dgram).
    pub socket_type: Option<String>,
    pub protocol: Option<String>,
    /// -u uuid.
    pub uuid: Option<String>,
    /// The last test-specific -4 / -6 (also copied into data_host_family and
    /// data_local_family).
    pub data_family: Family,
    /// -V: use sendfile/zerocopy (copy avoidance) where the test allows.
    pub copy_avoidance: bool,
    /// Test-specific options that were parsed but that this build cannot honour;
    /// the binary reports each on stderr as not yet supported.
    pub unsupported: Vec<String>,
    /// netperf-ng extension `--mmsg N`: move UDP messages N at a time with
    /// sendmmsg/recvmmsg, on both ends. None = one message per call (netperf).
    pub mmsg_batch: Option<u32>,
    /// netperf-ng extension `--zerocopy`: MSG_ZEROCOPY on stream sends.
    pub zerocopy: bool,
    /// netperf-ng extension `--mptcp` (or `-T mptcp`): the data
    /// connections are MPTCP on both ends.
    pub mptcp: bool,
    /// netperf-ng extension `--gso N`: a UDP stream sender sends N
    /// datagrams per call with UDP_SEGMENT.
    pub gso_segments: Option<u32>,
    /// netperf-ng extension `--gro`: a UDP stream receiver takes coalesced
    /// datagrams (UDP_GRO) and counts each.
    pub gro: bool,
    /// netperf-ng extension `--skip-rx-copy`: a TCP stream receiver
    /// discards its bytes with MSG_TRUNC.
    pub skip_rx_copy: bool,
    /// netperf-ng extension `--tcp-info`: with -D, each interim line is
    /// followed by our end's TCP_INFO line and the netserver's series
    /// after the test (netperf prints neither at any -v level).
    pub tcp_info: bool,
    /// netperf-ng extension `--notsent-lowat BYTES`: TCP_NOTSENT_LOWAT on
    /// both ends' data sockets (0: the kernel's default). None: many-flow
    /// bulk senders get BULK_NOTSENT_LOWAT, the rest the kernel's default.
    pub notsent_lowat: Option<u32>,
    /// netperf-ng extension `--busy-poll USECS`: SO_BUSY_POLL on the data
    /// sockets of both ends.
    pub busy_poll_usecs: Option<u32>,
    /// netperf-ng extension `--store[=DBPATH]`: record the finished test in
    /// the results database; `Some(None)` is the default database.
    pub store: Option<Option<String>>,
    /// netperf-ng extension `--tag TAG[,TAG...]` (repeatable): tags of the
    /// stored result.
    pub store_tags: Vec<String>,
    /// netperf-ng extension `--no-store`: store nothing (the default,
    /// spelled out as netagg takes it); refused beside `--store`.
    pub no_store: bool,
    /// netperf-ng extension `--data-ports MIN-MAX`: the local data socket
    /// on a free port of this range (a firewall's egress rule names it).
    pub data_ports: Option<netperf_data::net::port_range::PortRange>,
    /// netperf-ng extension `--latency-histogram FILE`: the test's HDR
    /// latency histogram written to FILE as an HdrHistogram interval log.
    pub latency_histogram: Option<std::path::PathBuf>,
    /// netperf-ng extension `--report FILE.html`: the test's -D series
    /// drawn as a page with its context.
    pub report: Option<std::path::PathBuf>,
    /// netperf-ng extension `--flows N`: N data connections (or UDP flows)
    /// in one test, multiplexed over `flow_threads` threads on each end.
    pub flows: Option<u32>,
    /// netperf-ng extension `--threads T` (with `--flows`).
    pub flow_threads: Option<u32>,
    /// netperf-ng extension `--flow-samples FILE`: one CSV row per flow
    /// per interval.
    pub flow_samples: Option<std::path::PathBuf>,
    /// netperf-ng extension `--rate R`: an open-loop request/response test
    /// of R requests per second.
    pub rate: Option<f64>,
    /// netperf-ng extension `--max-inflight N` (with `--rate`).
    pub max_inflight: Option<u32>,
}

/// Everything the command line said.
#[derive(Debug, Clone)]
pub struct Config {
    pub global: GlobalOptions,
    pub test: TestOptions,
    /// Global options that were parsed but that this build cannot honour yet.
    pub unsupported: Vec<String>,
    /// How values were read where netperf 2.7.1's reading is not what the
    /// text says (`-l 3s` runs 3 seconds): one line each, for stderr.
    pub notes: Vec<String>,
    /// What netperf 2.7.1 prints on stdout while reading its options (an
    /// unknown address family's warning, -k's "I don't know how to get
    /// dirty."), printed first, as it does.
    pub stdout_text: String,
}

impl Default for GlobalOptions {
    fn default() -> Self {
        GlobalOptions {
            host: "localhost".into(),
            host_family: Family::Unspec,
            local_host: None,
            local_family: Family::Unspec,
            port: "12865".into(),
            local_port: None,
            test_name: "TCP_STREAM".into(),
            test_length: 10,
            local_cpu: false,
            local_cpu_rate: 0.0,
            remote_cpu: false,
            remote_cpu_rate: 0.0,
            format_units: 'm',
            format_units_explicit: false,
            brand: None,
            print_headers: true,
            verbosity: 1,
            debug: 0,
            iterations_max: 1,
            iterations_min: 1,
            confidence_level: 0,
            confidence_width: 0.0,
            result_confidence_only: false,
            interim_interval: None,
            interim_units: None,
            interim_units_value: None,
            interim_always_timestamp: false,
            local_fill_file: None,
            remote_fill_file: None,
            keep_statistics: false,
            local_send_align: 8,
            local_recv_align: 8,
            remote_send_align: 8,
            remote_recv_align: 8,
            local_send_offset: 0,
            local_recv_offset: 0,
            remote_send_offset: 0,
            remote_recv_offset: 0,
            send_width: 0,
            recv_width: 0,
            num_cpus: None,
            no_control: false,
            wait_secs: 0,
            keepalive: false,
            local_cpu_bind: -1,
            remote_cpu_bind: -1,
            cpu_bind_requested: false,
            local_socket_prio: -1,
            remote_socket_prio: -1,
            local_socket_tos: -1,
            remote_socket_tos: -1,
            passphrase: None,
            interval_wait_ms: 0,
            interval_burst: 0,
            interval_usecs: 0,
            remote_interval_usecs: 0,
            remote_interval_burst: 0,
            command_line: String::new(),
            args: Vec::new(),
        }
    }
}
