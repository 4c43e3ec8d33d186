//! The Unix-domain tests' output against texts worked out by hand from
//! netperf 2.7.1's printf templates.

use super::*;
use netperf_data::measure::outcome::SideStats;

/// A run as `control::unix` fills one: each end's bytes are the work its
/// service demand is charged for.
fn sample(test: UnixTest) -> Measured {
    let mut m = Measured {
        test,
        outcome: Outcome {
            elapsed: 1.0,
            local: SideStats {
                bytes_sent: 1_543_208_750,
                send_calls: 7245,
                transactions: 54_321,
                send_buf: 212_992,
                recv_buf: 212_992,
                send_size: 212_992,
                send_align: 8,
                ..SideStats::default()
            },
            remote: SideStats {
                bytes_received: 1_543_208_750,
                recv_calls: 10_001,
                send_buf: 212_992,
                recv_buf: 212_992,
                recv_align: 8,
                ..SideStats::default()
            },
            request_size: 1,
            response_size: 1,
            ..Outcome::default()
        },
        local_cpu_rate: 100.0,
        remote_cpu_rate: 100.0,
    };
    if test.is_request_response() {
        set_transactions(&mut m, 54_321);
    }
    m
}

fn set_transactions(m: &mut Measured, n: u64) {
    m.outcome.local.transactions = n;
    m.outcome.local.bytes_sent = n * 1024;
    m.outcome.remote.bytes_received = n * 1024;
}

fn opts(verbosity: i32) -> ReportOptions {
    ReportOptions {
        verbosity,
        unit: 'm',
    }
}

fn cpu(util: f64) -> Option<CpuUsage> {
    Some(CpuUsage {
        util,
        num_cpus: 2,
        ..CpuUsage::default()
    })
}

#[test]
fn headers() {
    assert_eq!(
        header(UnixTest::StreamStream, false, 'm'),
        "STREAM STREAM TEST\n\
         Recv   Send    Send                          \n\
         Socket Socket  Message  Elapsed              \n\
         Size   Size    Size     Time     Throughput  \n\
         bytes  bytes   bytes    secs.    10^6bits/sec  \n\n"
    );
    let cpu_header = header(UnixTest::StreamStream, true, 'G');
    assert!(cpu_header.ends_with(
        "bytes  bytes   bytes    secs.    GBytes  /s  %      %       us/KB   us/KB\n\n"
    ));
    let rr = header(UnixTest::DgRr, true, 'x');
    assert!(rr.starts_with("DG REQUEST/RESPONSE TEST\nLocal /Remote\n"));
    assert!(rr.ends_with(
        "bytes  bytes  bytes   bytes  secs.   per sec  %      %      us/Tr   us/Tr\n\n"
    ));
    assert!(header(UnixTest::StreamRr, false, 'x')
        .ends_with("bytes  Bytes  bytes    bytes   secs.    per sec   \n\n"));
    assert!(header(UnixTest::DgStream, false, 'K')
        .ends_with("bytes   bytes    secs            #      #   KBytes/sec\n\n"));
    assert!(header(UnixTest::DgStream, true, 'm')
        .contains("secs            #      #   10^6bits/sec   %       us/KB\n\n"));
}

#[test]
fn stream_stream_results() {
    let m = sample(UnixTest::StreamStream);
    assert_eq!(
        result(&m, &opts(1)),
        "212992  212992  212992    1.00     12345.67   \n"
    );
    assert_eq!(result(&m, &opts(0)), "12345.67\n");
    let verbose = result(&m, &opts(2));
    assert!(verbose.starts_with("212992  212992  212992    1.00     12345.67   \n\nAlignment"));
    assert!(verbose
        .contains("Alignment      Offset         Bytes    Bytes       Sends   Bytes    Recvs\n"));
    assert!(
        verbose.ends_with(
            "    8       8      0       0 1.543e+09  213003.28       7245 154305.44    10001\n"
        ),
        "{verbose}"
    );
    // -v 3 is a verbosity netperf's switch has no case for: only the -v 2 block.
    assert!(result(&m, &opts(3)).starts_with("\nAlignment"));
}

#[test]
fn request_response_results() {
    let m = sample(UnixTest::StreamRr);
    let lines = "212992 212992 1        1       1.00     54321.00   \n212992 212992\n";
    assert_eq!(result(&m, &opts(1)), lines);
    assert_eq!(result(&m, &opts(0)), "54321.00\n");
    // STREAM_RR has no -v 2 case, and prints its alignment block as text.
    assert_eq!(
        result(&m, &opts(2)),
        "Alignment      Offset\nLocal  Remote  Local  Remote\nSend   Recv    Send   Recv\n%5d  %5d   %5d  %5d\n"
    );
    let dg = sample(UnixTest::DgRr);
    assert_eq!(
        result(&dg, &opts(2)),
        format!("{lines}Average response time 18 usecs\n")
    );
}

#[test]
fn request_response_with_cpu() {
    let mut m = sample(UnixTest::StreamRr);
    set_transactions(&mut m, 10_000);
    m.outcome.local.cpu = cpu(25.0);
    m.outcome.remote.cpu = cpu(30.0);
    assert_eq!(
        result(&m, &opts(1)),
        "212992 212992 1       1      1.00    10000.00   25.00  30.00  50.000  60.000\n\
         212992 212992\n"
    );
    assert_eq!(result(&m, &opts(0)), "50.000\n");
    m.outcome.local.cpu = None;
    assert_eq!(result(&m, &opts(0)), "60.000\n");
    let row = result(&m, &opts(1));
    assert!(row.contains("   -1.00  30.00  -1.000  60.000\n"), "{row}");
    m.remote_cpu_rate = 0.0;
    let warned = result(&m, &opts(0));
    assert_eq!(
        warned,
        "DANGER  DANGER  DANGER    DANGER  DANGER  DANGER    DANGER!\n\
         Remote CPU usage numbers based on process information only!\n\
         60.000\n"
    );
}

#[test]
fn datagram_stream_results() {
    let mut m = sample(UnixTest::DgStream);
    let (local, remote) = (&mut m.outcome.local, &mut m.outcome.remote);
    local.send_size = 1024;
    local.send_calls = 1000;
    local.bytes_sent = 1024 * 1000;
    remote.recv_calls = 990;
    remote.bytes_received = 1024 * 990;
    assert_eq!(
        result(&m, &opts(1)),
        "212992    1024    1.00         1000      0       8.19\n\
         212992            1.00          990              8.11\n\n"
    );
    assert_eq!(result(&m, &opts(0)), "   8.19\n");
    assert_eq!(result(&m, &opts(2)), "");
    m.outcome.local.cpu = cpu(10.0);
    m.outcome.remote.cpu = cpu(20.0);
    let with_cpu = result(&m, &opts(1));
    assert!(
        with_cpu.starts_with("212992    1024    1.00         1000      0        8.2      10.00   ")
    );
    assert!(
        with_cpu.contains("\n212992            1.00          990               8.1      20.00   ")
    );
    assert!(result(&m, &opts(0)).ends_with('\n'));
}

#[test]
fn degenerate_runs_do_not_panic() {
    for test in [
        UnixTest::StreamStream,
        UnixTest::StreamRr,
        UnixTest::DgStream,
        UnixTest::DgRr,
    ] {
        let mut m = sample(test);
        m.outcome.elapsed = 0.0;
        set_transactions(&mut m, 0);
        m.outcome.local.send_calls = 0;
        m.outcome.remote.recv_calls = 0;
        m.outcome.local.cpu = cpu(0.0);
        m.outcome.remote.cpu = cpu(0.0);
        for v in 0..4 {
            let _ = result(&m, &opts(v));
        }
    }
}
