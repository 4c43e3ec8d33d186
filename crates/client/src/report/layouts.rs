//! The classic tests ([`ClassicKind`]) and the result layout of each, as data.
//!
//! Each [`Layout`] holds netperf 2.7.1's printf templates for one test (titles,
//! result rows at -v 0 and -v 1/2, with and without CPU columns, and the -v 2
//! blocks) together with the list of values each template consumes. The
//! templates are kept byte for byte, including the trailing spaces and the
//! quirks scripts have lived with for years (MAERTS's CPU row showing the
//! other sockets, TCP_RR's verbose row printing the remote offset under
//! "Remote Recv" alignment, UDP_STREAM's -v 0 CPU row showing the local method
//! letter for the remote figure, the "reponse" typo of UDP_RR).

/// One classic output family (one per netperf test name that has its own text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClassicKind {
    TcpStream,
    TcpMaerts,
    TcpSendfile,
    UdpStream,
    TcpRr,
    UdpRr,
    TcpCrr,
    TcpCc,
}

/// Test names and their kinds.
const KIND_NAMES: &[(&str, ClassicKind)] = &[
    ("TCP_STREAM", ClassicKind::TcpStream),
    ("TCP_MAERTS", ClassicKind::TcpMaerts),
    ("TCP_SENDFILE", ClassicKind::TcpSendfile),
    ("UDP_STREAM", ClassicKind::UdpStream),
    ("TCP_RR", ClassicKind::TcpRr),
    ("UDP_RR", ClassicKind::UdpRr),
    ("TCP_CRR", ClassicKind::TcpCrr),
    ("TCP_CC", ClassicKind::TcpCc),
];

impl ClassicKind {
    /// The kind of a netperf test name, any case.
    pub fn from_test_name(name: &str) -> Option<ClassicKind> {
        KIND_NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, kind)| *kind)
    }

    /// The netperf test name.
    pub fn test_name(self) -> &'static str {
        KIND_NAMES
            .iter()
            .find(|(_, kind)| *kind == self)
            .map_or("", |(name, _)| *name)
    }

    /// The banner title ("MIGRATED TCP STREAM TEST", "TCP Connect/Close TEST", ...).
    pub fn title(self) -> &'static str {
        super::banner::classic_title(self.test_name()).unwrap_or_default()
    }

    /// netperf's rule for the default unit: test names containing "RR"
    /// report transactions. TCP_CC does not, so it defaults to 'm'.
    pub fn is_request_response(self) -> bool {
        self.test_name().contains("RR")
    }
}

/// A value a template takes; resolved in `classic.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Fixed text (netperf passes some column words as arguments).
    Text(&'static str),
    /// `format_units()` of the -f letter.
    Units,
    /// The unit of the RR verbose throughput columns: 'x' reported as 'm'.
    SinkUnits,
    /// The -B brand, only when headers are off.
    Brand,
    LocalCpuMethod,
    RemoteCpuMethod,
    LocalSendBuf,
    LocalRecvBuf,
    RemoteSendBuf,
    RemoteRecvBuf,
    LocalSendSize,
    RemoteSendSize,
    RequestSize,
    ResponseSize,
    Elapsed,
    Throughput,
    LocalCpuUtil,
    RemoteCpuUtil,
    LocalServiceDemand,
    RemoteServiceDemand,
    /// A counter as an integer.
    Count(Counter),
    /// A counter as a double (for `%g`).
    CountAsFloat(Counter),
    /// One counter divided by another (bytes per call).
    Ratio(Counter, Counter),
    /// Local bytes sent per second in the -f units ('x' as 'm').
    LocalSendThroughput,
    /// Remote bytes received per second in the -f units ('x' as 'm').
    RemoteRecvThroughput,
    LocalSendAlign,
    LocalRecvAlign,
    RemoteRecvAlign,
    LocalSendOffset,
    LocalRecvOffset,
    RemoteRecvOffset,
    TransportMss,
    /// Microseconds per transaction, times (1 + first burst).
    RoundTripLatency,
    TransactionRate,
    /// Request bytes per second in [`Field::SinkUnits`].
    OutboundThroughput,
    /// Response bytes per second in [`Field::SinkUnits`].
    InboundThroughput,
    /// Whole microseconds per transaction: the elapsed time over the
    /// transactions (0 without any), as one transaction is in flight.
    MeanTransactionUsecs,
}

/// Raw counters of [`netperf_data::measure::outcome::SideStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    LocalBytesSent,
    LocalBytesReceived,
    RemoteBytesSent,
    RemoteBytesReceived,
    LocalSendCalls,
    LocalRecvCalls,
    RemoteSendCalls,
    RemoteRecvCalls,
    LocalFailedSends,
}

/// One printf template and the values it takes, in order.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub template: &'static str,
    pub fields: &'static [Field],
}

/// Everything one test prints after its banner.
#[derive(Debug)]
pub struct Layout {
    /// Titles without CPU columns; `_non_trans` is used for RR tests whose
    /// unit is not 'x' (netperf's "band" titles), when the test has one.
    pub title: Row,
    pub title_non_trans: Option<Row>,
    /// Titles with CPU columns.
    pub cpu_title: Row,
    pub cpu_title_non_trans: Option<Row>,
    /// Result rows: -v 0, -v 1/2, and the same with CPU columns.
    pub brief: Row,
    pub result: Row,
    pub cpu_brief_local: Row,
    pub cpu_brief_remote: Row,
    pub cpu_result: Row,
    /// -v 2 blocks printed before the histogram; the last is its title.
    pub verbose: &'static [Row],
    /// Whether the test runs netperf's confidence loop and so may warn.
    pub warns_on_confidence: bool,
    /// The highest -v that still prints the result rows (2, or 1 for tests
    /// whose -v 2 prints only the verbose blocks).
    pub last_result_verbosity: i32,
    /// Whether -v 2 ends with the histogram.
    pub histogram: bool,
}

use Counter::*;
use Field::*;

/// The test's [`Layout`].
pub fn layout(kind: ClassicKind) -> &'static Layout {
    match kind {
        ClassicKind::TcpStream => &TCP_STREAM,
        ClassicKind::TcpMaerts => &TCP_MAERTS,
        ClassicKind::TcpSendfile => &TCP_SENDFILE,
        ClassicKind::UdpStream => &UDP_STREAM,
        ClassicKind::TcpRr => &TCP_RR,
        ClassicKind::UdpRr => &UDP_RR,
        ClassicKind::TcpCrr => &TCP_CRR,
        ClassicKind::TcpCc => &TCP_CC,
    }
}

// ---- bulk TCP: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS ----

pub(super) const BULK_TITLE: Row = Row {
    template: "Recv   Send    Send                          \n\
Socket Socket  Message  Elapsed              \n\
Size   Size    Size     Time     Throughput  \n\
bytes  bytes   bytes    secs.    %s/sec  \n\n",
    fields: &[Units],
};

const BULK_BRIEF: Row = Row {
    template: "%7.2f %s\n",
    fields: &[Throughput, Brand],
};

const BULK_ROW: &str = "%6d %6d %6d    %-6.2f   %7.2f   %s\n";

const BULK_CPU_ROW: &str =
    "%6d %6d %6d    %-6.2f     %7.2f   %-6.2f   %-6.2f   %-6.3f  %-6.3f %s\n";

const CPU_BRIEF_LOCAL: Row = Row {
    template: "%6.3f %c %s\n",
    fields: &[LocalServiceDemand, LocalCpuMethod, Brand],
};

const CPU_BRIEF_REMOTE: Row = Row {
    template: "%6.3f %c %s\n",
    fields: &[RemoteServiceDemand, RemoteCpuMethod, Brand],
};

const STREAM_CPU_TITLE: Row = Row {
    template: "Recv   Send    Send                          Utilization       Service Demand\n\
Socket Socket  Message  Elapsed              Send     Recv     Send    Recv\n\
Size   Size    Size     Time     Throughput  local    remote   local   remote\n\
bytes  bytes   bytes    secs.    %-8.8s/s  %% %c      %% %c      us/KB   us/KB\n\n",
    fields: &[Units, LocalCpuMethod, RemoteCpuMethod],
};

/// The values of [`BULK_ROW`]: the two buffers and the message size netperf
/// shows for the test's direction.
pub(super) const fn bulk_fields(recv_buf: Field, send_buf: Field, size: Field) -> [Field; 6] {
    [recv_buf, send_buf, size, Elapsed, Throughput, Brand]
}

/// The values of [`BULK_CPU_ROW`]: the bulk row's values (always the
/// remote receive and local send buffers, MAERTS too) with both ends' CPU.
pub(super) const fn bulk_cpu_fields(size: Field) -> [Field; 10] {
    with_cpu(bulk_fields(RemoteRecvBuf, LocalSendBuf, size))
}

/// Both ends' CPU utilisation and service demand, as the -c/-C rows print
/// them after the throughput.
const CPU_FIELDS: [Field; 4] = [
    LocalCpuUtil,
    RemoteCpuUtil,
    LocalServiceDemand,
    RemoteServiceDemand,
];

/// `fields` with [`CPU_FIELDS`] after the throughput: a result row's CPU
/// twin. `M` must be `N` plus four (checked as the layouts are compiled).
const fn with_cpu<const N: usize, const M: usize>(fields: [Field; N]) -> [Field; M] {
    let mut out = [Brand; M];
    let (mut from, mut to) = (0, 0);
    while from < N {
        out[to] = fields[from];
        to += 1;
        if matches!(fields[from], Throughput) {
            let mut cpu = 0;
            while cpu < CPU_FIELDS.len() {
                out[to] = CPU_FIELDS[cpu];
                (to, cpu) = (to + 1, cpu + 1);
            }
        }
        from += 1;
    }
    assert!(to == M, "one throughput to follow");
    out
}

const STREAM_RESULT: Row = Row {
    template: BULK_ROW,
    fields: &bulk_fields(RemoteRecvBuf, LocalSendBuf, LocalSendSize),
};

const STREAM_CPU_RESULT: Row = Row {
    template: BULK_CPU_ROW,
    fields: &bulk_cpu_fields(LocalSendSize),
};

const STREAM_SINK: &str = "\n\
Alignment      Offset         %-8.8s %-8.8s    Sends   %-8.8s Recvs\n\
Local  Remote  Local  Remote  Xfered   Per                 Per\n\
Send   Recv    Send   Recv             Send (avg)          Recv (avg)\n\
%5d   %5d  %5d   %5d %6d  %6.2f    %6d   %6.2f %6d\n";

/// The values of a sending test's -v 2 block: `bytes` shown as moved, and
/// the counter the per-call averages divide.
const fn stream_sink_fields(bytes: Field, moved: Counter) -> [Field; 12] {
    [
        Text("Bytes"),
        Text("Bytes"),
        Text("Bytes"),
        LocalSendAlign,
        RemoteRecvAlign,
        LocalSendOffset,
        RemoteRecvOffset,
        bytes,
        Ratio(moved, LocalSendCalls),
        Count(LocalSendCalls),
        Ratio(moved, RemoteRecvCalls),
        Count(RemoteRecvCalls),
    ]
}

const MSS_BLOCK: Row = Row {
    template: "\nMaximum\nSegment\nSize (bytes)\n%6d\n",
    fields: &[TransportMss],
};

const SEND_HISTOGRAM_TITLE: Row = Row {
    template: "\n\nHistogram of time spent in send() call.\n",
    fields: &[],
};

const TCP_STREAM: Layout = Layout {
    title: BULK_TITLE,
    title_non_trans: None,
    cpu_title: STREAM_CPU_TITLE,
    cpu_title_non_trans: None,
    brief: BULK_BRIEF,
    result: STREAM_RESULT,
    cpu_brief_local: CPU_BRIEF_LOCAL,
    cpu_brief_remote: CPU_BRIEF_REMOTE,
    cpu_result: STREAM_CPU_RESULT,
    verbose: &[
        Row {
            template: STREAM_SINK,
            fields: &stream_sink_fields(Count(LocalBytesSent), LocalBytesSent),
        },
        MSS_BLOCK,
        SEND_HISTOGRAM_TITLE,
    ],
    warns_on_confidence: true,
    last_result_verbosity: 2,
    histogram: true,
};

pub(super) const TCP_SENDFILE: Layout = Layout {
    verbose: &[
        Row {
            // Sendfile reports the bytes the remote received, as a %g double.
            template: "\n\
Alignment      Offset         %-8.8s %-8.8s    Sends   %-8.8s Recvs\n\
Local  Remote  Local  Remote  Xfered   Per                 Per\n\
Send   Recv    Send   Recv             Send (avg)          Recv (avg)\n\
%5d   %5d  %5d   %5d %6.4g  %6.2f    %6d   %6.2f %6d\n",
            fields: &stream_sink_fields(CountAsFloat(RemoteBytesReceived), RemoteBytesReceived),
        },
        MSS_BLOCK,
        SEND_HISTOGRAM_TITLE,
    ],
    ..TCP_STREAM
};

const TCP_MAERTS: Layout = Layout {
    title: BULK_TITLE,
    title_non_trans: None,
    cpu_title: Row {
        template: "Recv   Send    Send                          Utilization       Service Demand\n\
Socket Socket  Message  Elapsed              Recv     Send     Recv    Send\n\
Size   Size    Size     Time     Throughput  local    remote   local   remote\n\
bytes  bytes   bytes    secs.    %-8.8s/s  %% %c      %% %c      us/KB   us/KB\n\n",
        fields: &[Units, LocalCpuMethod, RemoteCpuMethod],
    },
    cpu_title_non_trans: None,
    brief: BULK_BRIEF,
    result: Row {
        template: BULK_ROW,
        fields: &bulk_fields(LocalRecvBuf, RemoteSendBuf, RemoteSendSize),
    },
    cpu_brief_local: CPU_BRIEF_LOCAL,
    cpu_brief_remote: CPU_BRIEF_REMOTE,
    // netperf's MAERTS CPU row shows the remote receive and local send
    // buffers, unlike its plain row; kept for column compatibility.
    cpu_result: Row {
        template: BULK_CPU_ROW,
        fields: &bulk_cpu_fields(RemoteSendSize),
    },
    verbose: &[
        Row {
            template: "\n\
Alignment      Offset         %-8.8s %-8.8s    Recvs   %-8.8s Sends\n\
Local  Remote  Local  Remote  Xfered   Per                 Per\n\
Recv   Send    Recv   Send             Recv (avg)          Send (avg)\n\
%5d   %5d  %5d   %5d %6d  %6.2f    %6d   %6.2f %6d\n",
            fields: &[
                Text("Bytes"),
                Text("Bytes"),
                Text("Bytes"),
                LocalRecvAlign,
                RemoteRecvAlign,
                LocalRecvOffset,
                RemoteRecvOffset,
                Count(LocalBytesReceived),
                Ratio(LocalBytesReceived, LocalRecvCalls),
                Count(LocalRecvCalls),
                Ratio(RemoteBytesSent, RemoteSendCalls),
                Count(RemoteSendCalls),
            ],
        },
        MSS_BLOCK,
        Row {
            template: "\n\nHistogram of time spent in recv() call.\n",
            fields: &[],
        },
    ],
    warns_on_confidence: true,
    last_result_verbosity: 2,
    histogram: true,
};

// ---- UDP_STREAM: a sender line and a receiver line ----

pub(super) const UDP_STREAM: Layout = Layout {
    title: Row {
        template: "Socket  Message  Elapsed      Messages                \n\
Size    Size     Time         Okay Errors   Throughput\n\
bytes   bytes    secs            #      #   %s/sec\n\n",
        fields: &[Units],
    },
    title_non_trans: None,
    cpu_title: Row {
        template: "Socket  Message  Elapsed      Messages                   CPU      Service\n\
Size    Size     Time         Okay Errors   Throughput   Util     Demand\n\
bytes   bytes    secs            #      #   %s/sec %% %c%c     us/KB\n\n",
        fields: &[Units, LocalCpuMethod, RemoteCpuMethod],
    },
    cpu_title_non_trans: None,
    brief: Row {
        template: "%7.2f\n",
        fields: &[LocalSendThroughput],
    },
    result: Row {
        template: "%6d  %6d   %-7.2f   %7d %6d    %7.2f\n\
%6d           %-7.2f   %7d           %7.2f\n\n",
        fields: &[
            LocalSendBuf,
            LocalSendSize,
            Elapsed,
            Count(LocalSendCalls),
            Count(LocalFailedSends),
            LocalSendThroughput,
            RemoteRecvBuf,
            Elapsed,
            Count(RemoteRecvCalls),
            RemoteRecvThroughput,
        ],
    },
    cpu_brief_local: Row {
        template: "%6.2f %c\n",
        fields: &[LocalServiceDemand, LocalCpuMethod],
    },
    // netperf prints the local method letter beside the remote figure here.
    cpu_brief_remote: Row {
        template: "%6.2f %c\n",
        fields: &[RemoteServiceDemand, LocalCpuMethod],
    },
    cpu_result: Row {
        template: "%6d  %6d   %-7.2f   %7d %6d    %7.1f     %-6.2f   %-6.3f\n\
%6d           %-7.2f   %7d           %7.1f     %-6.2f   %-6.3f\n\n",
        fields: &[
            LocalSendBuf,
            LocalSendSize,
            Elapsed,
            Count(LocalSendCalls),
            Count(LocalFailedSends),
            LocalSendThroughput,
            LocalCpuUtil,
            LocalServiceDemand,
            RemoteRecvBuf,
            Elapsed,
            Count(RemoteRecvCalls),
            RemoteRecvThroughput,
            RemoteCpuUtil,
            RemoteServiceDemand,
        ],
    },
    verbose: &[Row {
        template: "\nHistogram of time spent in send() call\n",
        fields: &[],
    }],
    warns_on_confidence: true,
    last_result_verbosity: 2,
    histogram: true,
};

// ---- request/response: TCP_RR, UDP_RR, TCP_CRR, TCP_CC ----

const RR_TITLE: Row = Row {
    template: "Local /Remote\n\
Socket Size   Request  Resp.   Elapsed  Trans.\n\
Send   Recv   Size     Size    Time     Rate         \n\
bytes  Bytes  bytes    bytes   secs.    per sec   \n\n",
    fields: &[],
};

const RR_TITLE_NON_TRANS: Row = Row {
    template: "Local /Remote\n\
Socket Size   Request  Resp.   Elapsed  \n\
Send   Recv   Size     Size    Time     Throughput \n\
bytes  Bytes  bytes    bytes   secs.    %s/sec   \n\n",
    fields: &[Units],
};

const RR_CPU_TITLE: Row = Row {
    template: "Local /Remote\n\
Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n\
Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n\
bytes  bytes  bytes   bytes  secs.   per sec  %% %c    %% %c    us/Tr   us/Tr\n\n",
    fields: &[LocalCpuMethod, RemoteCpuMethod],
};

const RR_CPU_TITLE_NON_TRANS: Row = Row {
    template: "Local /Remote\n\
Socket Size   Request Resp.  Elapsed Tput     CPU    CPU    S.dem   S.dem\n\
Send   Recv   Size    Size   Time    %-8.8s local  remote local   remote\n\
bytes  bytes  bytes   bytes  secs.   per sec  %% %c    %% %c    us/KB   us/KB\n\n",
    fields: &[Units, LocalCpuMethod, RemoteCpuMethod],
};

const RR_RESULT: Row = Row {
    template: "%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   %s\n%-6d %-6d\n",
    fields: &RR_FIELDS,
};

const RR_FIELDS: [Field; 9] = [
    LocalSendBuf,
    LocalRecvBuf,
    RequestSize,
    ResponseSize,
    Elapsed,
    Throughput,
    Brand,
    RemoteSendBuf,
    RemoteRecvBuf,
];

const RR_CPU_FIELDS: [Field; 13] = with_cpu(RR_FIELDS);

const TCP_RR: Layout = Layout {
    title: RR_TITLE,
    title_non_trans: Some(RR_TITLE_NON_TRANS),
    cpu_title: RR_CPU_TITLE,
    cpu_title_non_trans: Some(RR_CPU_TITLE_NON_TRANS),
    brief: BULK_BRIEF,
    result: RR_RESULT,
    cpu_brief_local: CPU_BRIEF_LOCAL,
    cpu_brief_remote: CPU_BRIEF_REMOTE,
    cpu_result: Row {
        template: "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f  %-6.2f %-6.2f %-6.3f  %-6.3f %s\n\
%-6d %-6d\n",
        fields: &RR_CPU_FIELDS,
    },
    verbose: &[
        Row {
            // netperf shows the remote recv *offset* under "Remote Recv" alignment.
            template: "Alignment      Offset         RoundTrip  Trans    Throughput\n\
Local  Remote  Local  Remote  Latency    Rate     %-8.8s/s\n\
Send   Recv    Send   Recv    usec/Tran  per sec  Outbound   Inbound\n\
%5d  %5d   %5d  %5d   %-6.3f   %-6.3f %-6.3f    %-6.3f\n",
            fields: &[
                SinkUnits,
                LocalSendAlign,
                RemoteRecvOffset,
                LocalSendOffset,
                RemoteRecvOffset,
                RoundTripLatency,
                TransactionRate,
                OutboundThroughput,
                InboundThroughput,
            ],
        },
        Row {
            template: "\nHistogram of request/response times\n",
            fields: &[],
        },
    ],
    warns_on_confidence: true,
    last_result_verbosity: 2,
    histogram: true,
};

const UDP_RR: Layout = Layout {
    cpu_result: Row {
        template: "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f %s\n\
%-6d %-6d\n",
        fields: &RR_CPU_FIELDS,
    },
    verbose: &[Row {
        template: "\nHistogram of request/reponse times.\n",
        fields: &[],
    }],
    ..TCP_RR
};

/// `fields` without the brand: the columns of the RR rows as TCP_CRR and
/// TCP_CC print them, and of the bulk rows as STREAM_STREAM does. `M` must be `N` less the one brand (checked as the
/// layouts are compiled).
pub(super) const fn unbranded<const N: usize, const M: usize>(fields: [Field; N]) -> [Field; M] {
    let mut kept = [Brand; M];
    let (mut from, mut to) = (0, 0);
    while from < N {
        if !matches!(fields[from], Brand) {
            kept[to] = fields[from];
            to += 1;
        }
        from += 1;
    }
    assert!(to == M, "one brand to leave out");
    kept
}

/// TCP_CRR and TCP_CC: no brand, no method letters, one title whatever the unit.
pub(super) const CONNECT_SHAPE: Layout = Layout {
    title: RR_TITLE,
    title_non_trans: None,
    cpu_title: Row {
        template: "Local /Remote\n\
Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n\
Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n\
bytes  bytes  bytes   bytes  secs.   per sec  %%      %%      us/Tr   us/Tr\n\n",
        fields: &[],
    },
    cpu_title_non_trans: None,
    brief: Row {
        template: "%7.2f\n",
        fields: &[Throughput],
    },
    result: Row {
        template: "%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   \n%-6d %-6d\n",
        fields: &unbranded::<9, 8>(RR_FIELDS),
    },
    cpu_brief_local: Row {
        template: "%6.3f\n",
        fields: &[LocalServiceDemand],
    },
    cpu_brief_remote: Row {
        template: "%6.3f\n",
        fields: &[RemoteServiceDemand],
    },
    cpu_result: Row {
        template: "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f   %-6.2f %-6.2f %-6.3f  %-6.3f\n\
%-6d %-6d\n",
        fields: &unbranded::<13, 12>(RR_CPU_FIELDS),
    },
    verbose: &[],
    warns_on_confidence: true,
    last_result_verbosity: 2,
    histogram: true,
};

const CONNECT_SINK: &str = "\n\
Alignment      Offset\n\
Local  Remote  Local  Remote\n\
Send   Recv    Send   Recv\n\
%5d  %5d   %5d  %5d\n";

const RR_HISTOGRAM_TITLE: Row = Row {
    template: "\nHistogram of request/response times\n",
    fields: &[],
};

const TCP_CRR: Layout = Layout {
    verbose: &[
        Row {
            template: CONNECT_SINK,
            fields: &[
                LocalSendAlign,
                RemoteRecvAlign,
                LocalSendOffset,
                RemoteRecvOffset,
            ],
        },
        RR_HISTOGRAM_TITLE,
    ],
    ..CONNECT_SHAPE
};

const TCP_CC: Layout = Layout {
    verbose: &[
        Row {
            template: CONNECT_SINK,
            fields: &[
                LocalSendAlign,
                RemoteRecvOffset,
                LocalSendOffset,
                RemoteRecvOffset,
            ],
        },
        RR_HISTOGRAM_TITLE,
    ],
    // netperf's TCP_CC runs a single iteration: it never warns.
    warns_on_confidence: false,
    ..CONNECT_SHAPE
};
