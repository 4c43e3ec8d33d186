//! The netserver's end of the TCP_INFO figures: whether to ask our
//! netserver for them (a test of one TCP connection whose output shows
//! them), reading the series it sends after its results (every count
//! checked: it comes from the network), pairing its intervals with ours by
//! their time into the data phase, and what is printed only once it has
//! arrived (`Interim TCP (netserver):` lines, interim lines with REMOTE_TCP_*
//! columns). A stock netserver never acknowledges the request's extension:
//! then nothing is read and the figures are simply absent.

use super::error::ClientError;
use super::interim::{emit, InterimOptions};
use crate::report::interim::{Interim, InterimStyle};
use netperf_data::net::channel::Channel;
use netperf_data::spec::{Protocol, TestSpec};
use netperf_wire::extension::MAX_TCP_INFO_MS;
use netperf_wire::tcp_series::{SeriesReader, TcpSeries, MAX_RECORDS};
use std::time::Duration;

/// How long each series message may take: netserver sends them right
/// after its results, so one that takes longer is not sending them.
const SERIES_WAIT: Duration = Duration::from_secs(10);

/// A test whose data phase is one TCP connection, living through it: the
/// one whose TCP_INFO each end can sample.
pub fn single_tcp_connection(spec: &TestSpec) -> bool {
    spec.protocol == Protocol::Tcp
        && !spec.connection
        && spec.extension.flows == 0
        && !spec.test.is_unix()
}

/// The extension's TCP_INFO interval to ask our netserver for: every
/// `interval` (-D) or only over the whole test (0), when the output
/// `shown` shows the netserver's figures and the test has one TCP
/// connection; None asks nothing (the request as it always was).
pub fn ask(spec: &TestSpec, interval: Option<Duration>, shown: bool) -> Option<u32> {
    (shown && single_tcp_connection(spec)).then(|| {
        interval.map_or(0, |d| {
            d.as_millis().clamp(1, u128::from(MAX_TCP_INFO_MS)) as u32
        })
    })
}

/// Read the series our netserver sends after its results.
pub(super) fn read(chan: &mut Channel) -> Result<TcpSeries, ClientError> {
    let mut reader = SeriesReader::default();
    // The reader refuses anything past the count the first message gives.
    loop {
        let m = chan.recv(SERIES_WAIT)?;
        match reader.take(&m) {
            Ok(true) => return Ok(reader.finish()),
            Ok(false) => {}
            Err(why) => return Err(ClientError::Series(why)),
        }
    }
}

/// Give each of our intervals the netserver's interval that ended nearest
/// to it in time, if within half an interval: both count from their own
/// start of the data phase (ours before the connect, netserver's at its
/// accept), and an interval in which no work completed is merged into the
/// next on our side, so the indexes alone may not match.
pub(super) fn attach(interims: &mut [Interim], series: &TcpSeries) {
    let records = &series.records;
    let mut end = 0.0;
    for i in interims.iter_mut() {
        end += i.interval_secs;
        let at = records.partition_point(|r| r.end_secs < end);
        let nearest = [at.checked_sub(1), Some(at)]
            .into_iter()
            .flatten()
            .filter_map(|k| records.get(k))
            .min_by(|a, b| {
                (a.end_secs - end)
                    .abs()
                    .total_cmp(&(b.end_secs - end).abs())
            });
        i.remote_tcp = nearest
            .filter(|r| (r.end_secs - end).abs() <= i.interval_secs.max(r.interval_secs) / 2.0)
            .map(|r| r.tcp);
    }
}

/// What is printed once the series is in (or known absent): with -v 2 the
/// netserver's `Interim TCP (netserver):` lines, and the interim lines held
/// back for their REMOTE_TCP_* columns. A series cut at `MAX_RECORDS` says
/// so on stderr.
pub(super) fn print_after(opts: &InterimOptions, interims: &[Interim], series: Option<&TcpSeries>) {
    if let Some(s) = series.filter(|_| opts.style == InterimStyle::Human && opts.tcp_lines) {
        let mut text = String::new();
        for r in &s.records {
            text.push_str(&format!(
                "Interim TCP (netserver): {} over {:.3} seconds ending {:.3} seconds into the test\n",
                r.tcp.fields(),
                r.interval_secs,
                r.end_secs
            ));
        }
        print!("{text}");
    }
    if opts.deferred {
        for i in interims {
            emit(i, opts);
        }
    }
    if let Some(s) = series.filter(|s| s.dropped > 0) {
        eprintln!(
            "netperf: the netserver kept the TCP_INFO of its first {MAX_RECORDS} intervals only; {} later ones have no remote figures",
            s.dropped
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_wire::tcp_series::{TcpInterval, TcpRecord};

    fn interim(secs: f64) -> Interim {
        Interim {
            value: 1.0,
            units: "Trans/s".into(),
            interval_secs: secs,
            ending_epoch_secs: 0.0,
            tcp: None,
            remote_tcp: None,
        }
    }

    #[test]
    fn intervals_pair_by_time_not_by_index() {
        let record = |end: f64, rtt: u32| TcpRecord {
            end_secs: end,
            interval_secs: 1.0,
            tcp: TcpInterval {
                rtt_us: rtt,
                ..Default::default()
            },
        };
        let series = TcpSeries {
            records: vec![
                record(0.99, 1),
                record(2.0, 2),
                record(3.01, 3),
                record(4.0, 4),
            ],
            ..Default::default()
        };
        // Our second interval ran over two (nothing completed in one).
        let mut ours = vec![interim(1.0), interim(2.0), interim(1.0), interim(5.0)];
        attach(&mut ours, &series);
        let rtts: Vec<Option<u32>> = ours
            .iter()
            .map(|i| i.remote_tcp.map(|t| t.rtt_us))
            .collect();
        assert_eq!(rtts, [Some(1), Some(3), Some(4), None]);
        let mut none = vec![interim(1.0)];
        attach(&mut none, &TcpSeries::default());
        assert_eq!(none[0].remote_tcp, None);
    }
}
