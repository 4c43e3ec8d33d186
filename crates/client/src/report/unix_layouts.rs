//! The output of netperf's Unix-domain tests (STREAM_STREAM, STREAM_RR,
//! DG_STREAM, DG_RR) as [`Layout`]s for the classic renderer, plus what only
//! these tests print: their title line and their CPU-rate warnings. Kept byte
//! for byte, quirks included: STREAM_RR prints its result rows at -v 1 only
//! and its -v 2 block with "%s", so the "%5d" in it come out literally;
//! DG_STREAM's -v 0 service demand has two decimals, not three.

use super::layouts::{
    bulk_cpu_fields, bulk_fields, unbranded, Field::*, Layout, Row, BULK_TITLE, CONNECT_SHAPE,
    TCP_SENDFILE, UDP_STREAM,
};
use netperf_data::spec::UnixTest;

/// What one Unix-domain test prints besides the classic rows.
#[derive(Debug)]
pub struct UnixLayout {
    /// The first line (netperf prints no addresses for these tests).
    pub title: &'static str,
    /// Printed when netserver reports a CPU rate of 0; each test spaces
    /// its DANGERs its own way.
    pub remote_cpu_warning: &'static str,
    pub layout: Layout,
}

/// Printed by every test when our own CPU rate is 0.
pub const LOCAL_CPU_WARNING: &str = "WARNING WARNING WARNING  WARNING WARNING WARNING  WARNING!\n\
Local CPU usage numbers based on process information only!\n";

const RR_DANGER: &str = "DANGER  DANGER  DANGER    DANGER  DANGER  DANGER    DANGER!\n\
Remote CPU usage numbers based on process information only!\n";

/// The test's layout.
pub fn unix_layout(test: UnixTest) -> &'static UnixLayout {
    match test {
        UnixTest::StreamStream => &STREAM_STREAM,
        UnixTest::StreamRr => &STREAM_RR,
        UnixTest::DgStream => &DG_STREAM,
        UnixTest::DgRr => &DG_RR,
    }
}

const STREAM_STREAM: UnixLayout = UnixLayout {
    title: "STREAM STREAM TEST\n",
    remote_cpu_warning: "DANGER   DANGER  DANGER   DANGER   DANGER  DANGER   DANGER!\n\
Remote CPU usage numbers based on process information only!\n",
    layout: Layout {
        title: BULK_TITLE,
        cpu_title: Row {
            template:
                "Recv   Send    Send                          Utilization    Service Demand\n\
Socket Socket  Message  Elapsed              Send   Recv    Send    Recv\n\
Size   Size    Size     Time     Throughput  local  remote  local   remote\n\
bytes  bytes   bytes    secs.    %-8.8s/s  %%      %%       us/KB   us/KB\n\n",
            fields: &[Units],
        },
        result: Row {
            template: "%5d  %5d  %6d    %-6.2f   %7.2f   \n",
            fields: &unbranded::<6, 5>(bulk_fields(RemoteRecvBuf, LocalSendBuf, LocalSendSize)),
        },
        cpu_result: Row {
            template: "%5d  %5d  %6d    %-6.2f     %7.2f   %-6.2f %-6.2f  %-6.3f  %-6.3f\n",
            fields: &unbranded::<10, 9>(bulk_cpu_fields(LocalSendSize)),
        },
        verbose: &[Row {
            template: "\n\
Alignment      Offset         %-8.8s %-8.8s    Sends   %-8.8s Recvs\n\
Local  Remote  Local  Remote  Xfered   Per                 Per\n\
Send   Recv    Send   Recv             Send (avg)          Recv (avg)\n\
%5d   %5d  %5d   %5d %6.4g  %6.2f     %6d %6.2f   %6d\n",
            // The remote received what was sent, as TCP_SENDFILE counts it.
            fields: TCP_SENDFILE.verbose[0].fields,
        }],
        histogram: false,
        ..CONNECT_SHAPE
    },
};

const STREAM_RR: UnixLayout = UnixLayout {
    title: "STREAM REQUEST/RESPONSE TEST\n",
    remote_cpu_warning: RR_DANGER,
    layout: Layout {
        verbose: &[Row {
            template: "%s",
            fields: &[Text(
                "Alignment      Offset\n\
Local  Remote  Local  Remote\n\
Send   Recv    Send   Recv\n\
%5d  %5d   %5d  %5d\n",
            )],
        }],
        last_result_verbosity: 1,
        histogram: false,
        ..CONNECT_SHAPE
    },
};

const DG_RR: UnixLayout = UnixLayout {
    title: "DG REQUEST/RESPONSE TEST\n",
    remote_cpu_warning: RR_DANGER,
    layout: Layout {
        // As netperf built with interval support (the reference build) prints it.
        verbose: &[Row {
            template: "Average response time %d usecs\n",
            fields: &[MeanTransactionUsecs],
        }],
        histogram: false,
        ..CONNECT_SHAPE
    },
};

const DG_STREAM: UnixLayout = UnixLayout {
    title: "DG UNIDIRECTIONAL SEND TEST\n",
    remote_cpu_warning: "DANGER   DANGER  DANGER   DANGER  DANGER   DANGER   DANGER!\n\
REMOTE CPU usage numbers based on process information only!\n",
    layout: Layout {
        cpu_title: Row {
            template: "Socket  Message  Elapsed      Messages                   CPU     Service\n\
Size    Size     Time         Okay Errors   Throughput   Util    Demand\n\
bytes   bytes    secs            #      #   %s/sec   %%       us/KB\n\n",
            fields: &[Units],
        },
        result: Row {
            template: "%5d   %5d    %-7.2f   %7d %6d    %7.2f\n\
%5d            %-7.2f   %7d           %7.2f\n\n",
            fields: UDP_STREAM.result.fields,
        },
        cpu_brief_local: Row {
            template: "%6.2f\n",
            fields: &[LocalServiceDemand],
        },
        cpu_brief_remote: Row {
            template: "%6.2f\n",
            fields: &[RemoteServiceDemand],
        },
        cpu_result: Row {
            template: "%5d   %5d    %-7.2f   %7d %6d    %7.1f      %-6.2f  %-6.3f\n\
%5d            %-7.2f   %7d           %7.1f      %-6.2f  %-6.3f\n\n",
            fields: UDP_STREAM.cpu_result.fields,
        },
        verbose: &[],
        warns_on_confidence: false,
        last_result_verbosity: 1,
        histogram: false,
        ..UDP_STREAM
    },
};
