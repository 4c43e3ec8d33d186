//! What TCP did over an interval (`TcpInterval`, from two TCP_INFO
//! readings), and netperf-ng's message that carries the netserver's series
//! of them to the client: the netserver samples its data connection at the
//! client's -D interval, keeps at most `MAX_RECORDS`, and after its omni
//! results sends them in `NG_TCP_SERIES` messages of `PER_MESSAGE` records,
//! only to a client whose request asked (extension flag). Sent after the
//! results rather than during the test so that nothing but the sampler
//! thread touches the data phase, and the client reads the control
//! connection exactly when it already waits on it.

use super::message::{kind, Message};

/// What TCP did over one interim interval, from the TCP_INFO read at its
/// start and at its end: the state at the end (round trip, congestion
/// window, rates) and what happened in between (retransmissions, the share
/// of the interval the connection was busy sending, and limited by the
/// peer's receive window or by its own send buffer).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TcpInterval {
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// Congestion window, in segments.
    pub snd_cwnd: u32,
    /// Segments retransmitted in the interval.
    pub retransmits: u32,
    /// The kernel's delivery and pacing rates, bytes per second.
    pub delivery_rate: u64,
    pub pacing_rate: u64,
    /// Fractions (0 to 1) of the interval.
    pub busy: f64,
    pub rwnd_limited: f64,
    pub sndbuf_limited: f64,
}

impl TcpInterval {
    /// The interval of `secs` seconds between readings `before` and `now`.
    pub fn between(before: &libc::tcp_info, now: &libc::tcp_info, secs: f64) -> TcpInterval {
        let share = |a: u64, b: u64| {
            let us = secs * 1e6;
            if us <= 0.0 {
                0.0
            } else {
                (b.saturating_sub(a) as f64 / us).clamp(0.0, 1.0)
            }
        };
        TcpInterval {
            rtt_us: now.tcpi_rtt,
            rttvar_us: now.tcpi_rttvar,
            snd_cwnd: now.tcpi_snd_cwnd,
            retransmits: now
                .tcpi_total_retrans
                .saturating_sub(before.tcpi_total_retrans),
            delivery_rate: now.tcpi_delivery_rate,
            pacing_rate: now.tcpi_pacing_rate,
            busy: share(before.tcpi_busy_time, now.tcpi_busy_time),
            rwnd_limited: share(before.tcpi_rwnd_limited, now.tcpi_rwnd_limited),
            sndbuf_limited: share(before.tcpi_sndbuf_limited, now.tcpi_sndbuf_limited),
        }
    }

    /// A connection's whole life of `secs` seconds, from its reading `now`.
    pub fn whole(now: &libc::tcp_info, secs: f64) -> TcpInterval {
        // SAFETY: tcp_info is plain data; zero is a connection's start.
        let zero: libc::tcp_info = unsafe { std::mem::zeroed() };
        TcpInterval::between(&zero, now, secs)
    }

    /// The figures as `-v 2`'s lines show them, without a newline.
    pub fn fields(&self) -> String {
        let mbits = |bytes: u64| bytes as f64 * 8.0 / 1e6;
        format!(
            "rtt {} us rttvar {} us cwnd {} retransmits {} delivery {:.2} 10^6bits/s pacing {:.2} 10^6bits/s busy {:.1}% rwnd-limited {:.1}% sndbuf-limited {:.1}%",
            self.rtt_us,
            self.rttvar_us,
            self.snd_cwnd,
            self.retransmits,
            mbits(self.delivery_rate),
            mbits(self.pacing_rate),
            self.busy * 100.0,
            self.rwnd_limited * 100.0,
            self.sndbuf_limited * 100.0
        )
    }

    /// `-v 2`'s line under each interim result (our end).
    pub fn line(&self) -> String {
        format!("Interim TCP: {}\n", self.fields())
    }
}

/// One interval of the netserver's series: when it ended (seconds after
/// the netserver's data connection was accepted), how long it was, and
/// what TCP did in it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpRecord {
    pub end_secs: f64,
    pub interval_secs: f64,
    pub tcp: TcpInterval,
}

/// The netserver's TCP_INFO over a test: the intervals it kept (the first
/// `MAX_RECORDS`), how many later ones it dropped, and the whole test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TcpSeries {
    pub records: Vec<TcpRecord>,
    pub dropped: u32,
    /// The data connection over its life (none: no TCP connection).
    pub whole: Option<TcpRecord>,
}

/// Most intervals a netserver keeps and a client takes: an hour at -D 1.
pub const MAX_RECORDS: usize = 3600;
/// "NGT1": marks a series message and its layout version.
const MAGIC: u32 = 0x4e47_5431;
/// Words of one record: end (µs, 64 bits), interval (µs), rtt, rttvar,
/// cwnd, retransmits, delivery and pacing rates (64 bits each), and the
/// three shares in millionths.
const RECORD_WORDS: usize = 14;
/// Header words: magic, total, dropped, first index, count, whole present;
/// the whole-test record follows, then the records.
const HEADER_WORDS: usize = 6;
const RECORDS_AT: usize = HEADER_WORDS + RECORD_WORDS;
/// Records per message: what fits the 162 data words.
pub const PER_MESSAGE: usize = 10;
const PPM: f64 = 1e6;
/// Latest end a record may give, in µs (31 years): below 2^50, so that its
/// seconds as an f64 come back to the same µs.
const MAX_END_US: u64 = 1_000_000_000_000_000;

/// The messages that carry `series` (at least one, for an empty series).
pub fn encode(series: &TcpSeries) -> Vec<Message> {
    let kept = &series.records[..series.records.len().min(MAX_RECORDS)];
    let total = kept.len();
    let chunks: Vec<&[TcpRecord]> = match total {
        0 => vec![&[]],
        _ => kept.chunks(PER_MESSAGE).collect(),
    };
    let mut first = 0;
    chunks
        .into_iter()
        .map(|chunk| {
            let mut m = Message::new(kind::NG_TCP_SERIES, 0);
            m.set_data_u32(0, MAGIC);
            m.set_data_u32(1, total as u32);
            m.set_data_u32(2, series.dropped);
            m.set_data_u32(3, first as u32);
            m.set_data_u32(4, chunk.len() as u32);
            m.set_data_u32(5, u32::from(series.whole.is_some()));
            if let Some(w) = &series.whole {
                put_record(&mut m, HEADER_WORDS, w);
            }
            for (i, r) in chunk.iter().enumerate() {
                put_record(&mut m, RECORDS_AT + i * RECORD_WORDS, r);
            }
            first += chunk.len();
            m
        })
        .collect()
}

fn put_u64(m: &mut Message, at: usize, v: u64) {
    m.set_data_u32(at, (v >> 32) as u32);
    m.set_data_u32(at + 1, v as u32);
}

fn get_u64(m: &Message, at: usize) -> u64 {
    u64::from(m.data_u32(at)) << 32 | u64::from(m.data_u32(at + 1))
}

fn put_record(m: &mut Message, at: usize, r: &TcpRecord) {
    let us = |secs: f64| ((secs.max(0.0) * 1e6).round() as u64).min(MAX_END_US);
    let ppm = |share: f64| (share.clamp(0.0, 1.0) * PPM).round() as u32;
    let t = &r.tcp;
    put_u64(m, at, us(r.end_secs));
    m.set_data_u32(at + 2, us(r.interval_secs).min(u64::from(u32::MAX)) as u32);
    for (i, v) in [t.rtt_us, t.rttvar_us, t.snd_cwnd, t.retransmits]
        .into_iter()
        .enumerate()
    {
        m.set_data_u32(at + 3 + i, v);
    }
    put_u64(m, at + 7, t.delivery_rate);
    put_u64(m, at + 9, t.pacing_rate);
    for (i, v) in [t.busy, t.rwnd_limited, t.sndbuf_limited]
        .into_iter()
        .enumerate()
    {
        m.set_data_u32(at + 11 + i, ppm(v));
    }
}

/// The record at `at`; a share beyond the whole interval is an error.
fn get_record(m: &Message, at: usize) -> Result<TcpRecord, String> {
    let share = |i: usize| {
        let ppm = m.data_u32(at + 11 + i);
        match f64::from(ppm) <= PPM {
            true => Ok(f64::from(ppm) / PPM),
            false => Err(format!("a share of {ppm} millionths of an interval")),
        }
    };
    let end_us = get_u64(m, at);
    if end_us > MAX_END_US {
        return Err(format!("an interval ending {end_us} us into the test"));
    }
    Ok(TcpRecord {
        end_secs: end_us as f64 / 1e6,
        interval_secs: f64::from(m.data_u32(at + 2)) / 1e6,
        tcp: TcpInterval {
            rtt_us: m.data_u32(at + 3),
            rttvar_us: m.data_u32(at + 4),
            snd_cwnd: m.data_u32(at + 5),
            retransmits: m.data_u32(at + 6),
            delivery_rate: get_u64(m, at + 7),
            pacing_rate: get_u64(m, at + 9),
            busy: share(0)?,
            rwnd_limited: share(1)?,
            sndbuf_limited: share(2)?,
        },
    })
}

/// A series read message by message, every count and size checked: what
/// arrives comes from the network.
#[derive(Debug, Default)]
pub struct SeriesReader {
    total: Option<usize>,
    series: TcpSeries,
}

impl SeriesReader {
    /// Take the next message; `Ok(true)` once the series is whole. An error
    /// says what was wrong with the message.
    pub fn take(&mut self, m: &Message) -> Result<bool, String> {
        if m.kind() != kind::NG_TCP_SERIES || m.data_u32(0) != MAGIC {
            return Err(format!(
                "message type {} where its TCP_INFO series was due",
                m.kind()
            ));
        }
        let total = m.data_u32(1) as usize;
        if total > MAX_RECORDS {
            return Err(format!(
                "a TCP_INFO series of {total} intervals (at most {MAX_RECORDS})"
            ));
        }
        if self.total.is_some_and(|t| t != total) {
            return Err("a TCP_INFO series whose length changed".into());
        }
        let (first, count) = (m.data_u32(3) as usize, m.data_u32(4) as usize);
        let have = self.series.records.len();
        let due = (total - have).min(PER_MESSAGE);
        if first != have || count != due {
            return Err(format!(
                "TCP_INFO intervals {first}..+{count} where {have}..+{due} were due"
            ));
        }
        if self.total.is_none() {
            self.series.dropped = m.data_u32(2);
            self.series.whole = match m.data_u32(5) {
                0 => None,
                1 => Some(get_record(m, HEADER_WORDS)?),
                other => return Err(format!("a whole-test flag of {other}")),
            };
        }
        self.total = Some(total);
        for i in 0..count {
            let r = get_record(m, RECORDS_AT + i * RECORD_WORDS)?;
            let before = self.series.records.last().map_or(0.0, |p| p.end_secs);
            if r.end_secs < before {
                return Err("TCP_INFO intervals out of order".into());
            }
            self.series.records.push(r);
        }
        Ok(self.series.records.len() == total)
    }

    /// The series read so far.
    pub fn finish(self) -> TcpSeries {
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: usize) -> TcpRecord {
        TcpRecord {
            end_secs: (n + 1) as f64 * 0.5,
            interval_secs: 0.5,
            tcp: TcpInterval {
                rtt_us: 40 + n as u32,
                rttvar_us: 7,
                snd_cwnd: 10,
                retransmits: n as u32,
                delivery_rate: 5 << 33,
                pacing_rate: 6 << 33,
                busy: 0.75,
                rwnd_limited: 0.125,
                sndbuf_limited: 0.0,
            },
        }
    }

    fn read(messages: &[Message]) -> Result<TcpSeries, String> {
        let mut reader = SeriesReader::default();
        for (i, m) in messages.iter().enumerate() {
            if reader.take(m)? {
                assert_eq!(i + 1, messages.len());
                return Ok(reader.finish());
            }
        }
        Err("short".into())
    }

    #[test]
    fn round_trips_in_messages_of_ten() {
        let series = TcpSeries {
            records: (0..23).map(record).collect(),
            dropped: 4,
            whole: Some(record(99)),
        };
        let messages = encode(&series);
        assert_eq!(messages.len(), 3);
        assert_eq!(read(&messages), Ok(series));
        let empty = TcpSeries::default();
        assert_eq!(encode(&empty).len(), 1);
        assert_eq!(read(&encode(&empty)), Ok(empty));
    }

    #[test]
    fn hostile_series_are_refused() {
        let series = TcpSeries {
            records: (0..15).map(record).collect(),
            ..Default::default()
        };
        let good = encode(&series);
        let cases: [(usize, usize, u32); 7] = [
            (0, 1, MAX_RECORDS as u32 + 1),
            (0, 1, u32::MAX),
            (0, 4, 11),
            (1, 3, 0),
            (0, 5, 7),
            (0, RECORDS_AT + 11, 1_000_001),
            (0, RECORDS_AT, 1 << 20),
        ];
        for (message, word, value) in cases {
            let mut bad = good.clone();
            bad[message].set_data_u32(word, value);
            assert!(read(&bad).is_err(), "{message} {word} {value}");
        }
        let mut wrong_kind = good.clone();
        wrong_kind[1] = Message::new(kind::OMNI_RESULTS, 0);
        assert!(read(&wrong_kind).is_err());
        let mut backwards = good;
        backwards[1].set_data_u32(RECORDS_AT, 0);
        backwards[1].set_data_u32(RECORDS_AT + 1, 0);
        assert!(read(&backwards).is_err());
    }
}
