//! rrdtool's arithmetic, as far as post_proc.py relies on it, without
//! rrdtool: the one-second resampling of a GAUGE data source (`rrdtool
//! update` into a `--step 1` database with one `RRA:AVERAGE:0.5:1:N`), what
//! `rrdtool fetch` hands back, and the `VDEF` average, minimum and maximum
//! that `rrdtool graph` prints over a window, including the consolidation it
//! applies when a window is wider than the 400-pixel default graph.
//!
//! The rules reproduced (rrdtool 1.7, checked against it on generated data):
//!
//! * A value is held for the whole span since the previous update (GAUGE).
//!   A span longer than the heartbeat is unknown. Each one-second slot
//!   `(T-1, T]` gets the time-weighted average of the spans it holds — but
//!   an unknown part counts as zero weight over the full second, so the slot
//!   after a gap is diluted (rrdtool's own comment calls this "not really
//!   accurate"). All slots completed by one update get the same value.
//! * Times are sent as `%.3f` and values as `%f`, read back with rrdtool's
//!   own `rrd_strtod`, and rrdtool keeps whole microseconds (truncated); an
//!   update not later than the previous one is refused with rrdtool's
//!   "illegal attempt to update" error.
//! * A round-robin archive of `rows` slots keeps only the newest `rows`.

/// A time as rrdtool keeps it: whole seconds and microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Stamp {
    pub sec: i64,
    pub usec: i64,
}

impl Stamp {
    pub fn whole(sec: i64) -> Self {
        Stamp { sec, usec: 0 }
    }

    /// The time post_proc.py sends (`'%.3f' % t`) as rrdtool reads it:
    /// `floor` for the seconds and the rest truncated to microseconds.
    pub fn sent(t: f64) -> Self {
        let tmp = rrd_strtod(&format!("{t:.3}"));
        let sec = tmp.floor();
        Stamp {
            sec: sec as i64,
            usec: ((tmp - sec) * 1e6) as i64,
        }
    }

    fn seconds_since(self, earlier: Stamp) -> f64 {
        self.sec.saturating_sub(earlier.sec) as f64 + (self.usec - earlier.usec) as f64 / 1e6
    }
}

/// The value post_proc.py sends (`'%f' % v`) as rrdtool reads it back.
pub(crate) fn sent_value(v: f64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    rrd_strtod(&format!("{v:.6}"))
}

/// How rrdtool 1.7 reads a number it is sent (its own `rrd_strtod`, not the
/// C library's): all the digits gathered as one integer, then divided by
/// 10, 100, 10^4 ... for the set bits of the number of decimals. The two or
/// three roundings can land a unit in the last place away from the nearest
/// double, which moves a time by a microsecond once truncated — enough to
/// change the third decimal of a sum, so it is reproduced. Only the
/// `[-]digits[.digits]` form that `%.3f` and `%f` write is read.
pub(crate) fn rrd_strtod(text: &str) -> f64 {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let mut number = 0.0_f64;
    for c in whole.bytes().chain(fraction.bytes()) {
        if !c.is_ascii_digit() {
            return f64::NAN;
        }
        number = number * 10.0 + f64::from(c - b'0');
    }
    let mut n = fraction.len();
    let mut p10 = 10.0_f64;
    while n != 0 {
        if n & 1 == 1 {
            number /= p10;
        }
        n >>= 1;
        p10 *= p10;
    }
    if negative {
        -number
    } else {
        number
    }
}

/// What one update did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Update {
    /// rrdtool refused it: not later than the last update.
    Refused { time: i64, last: i64 },
    /// Slots `from..=to` (ending times, possibly none) were completed with
    /// `value` (NaN when unknown).
    Done { from: i64, to: i64, value: f64 },
}

/// One single-source, one-second-step database.
#[derive(Debug, Clone)]
pub(crate) struct Rrd {
    last: Stamp,
    /// Maximum seconds between updates before the span is unknown.
    pub heartbeat: u64,
    /// rrdtool's PDP scratch value: value-seconds gathered towards the open
    /// slot, NaN when unknown.
    acc: f64,
    /// Whole seconds of unknown data in the open slot (always 0 with a
    /// one-second step, kept because rrdtool's rule uses it).
    unknown: u64,
    /// Slots the archive keeps.
    rows: i64,
}

impl Rrd {
    /// `rrdtool create --step 1 --start start DS:x:GAUGE:heartbeat:U:U
    /// RRA:AVERAGE:0.5:1:rows`.
    pub fn create(start: i64, heartbeat: u64, rows: i64) -> Self {
        Rrd {
            last: Stamp::whole(start),
            heartbeat,
            acc: 0.0,
            unknown: 0,
            rows,
        }
    }

    pub fn last_update(&self) -> i64 {
        self.last.sec
    }

    /// `rrdtool update db time:value`.
    pub fn update(&mut self, t: Stamp, value: f64) -> Update {
        let prev = self.last;
        if t <= prev {
            return Update::Refused {
                time: t.sec,
                last: prev.sec,
            };
        }
        let interval = t.seconds_since(prev);
        let known = interval <= self.heartbeat as f64;
        let new = if known { value * interval } else { f64::NAN };
        let elapsed = t.sec.saturating_sub(prev.sec);
        let from = prev.sec.saturating_add(1);
        self.last = t;

        if elapsed == 0 {
            // Still inside the open slot: only gather.
            if new.is_nan() {
                self.unknown = self.unknown.saturating_add(interval.floor() as u64);
            } else if self.acc.is_nan() {
                self.acc = new;
            } else {
                self.acc += new;
            }
            return Update::Done {
                from,
                to: prev.sec,
                value: f64::NAN,
            };
        }

        // The part of the span before the last slot boundary it crossed
        // closes the open slot; the part after it opens the next one.
        let pre_int = elapsed as f64 - prev.usec as f64 / 1e6;
        let post_int = t.usec as f64 / 1e6;
        let mut pre_unknown = 0.0;
        if new.is_nan() {
            pre_unknown = pre_int;
        } else {
            if self.acc.is_nan() {
                self.acc = 0.0;
            }
            self.acc += new / interval * pre_int;
        }
        let slot = if !known || 0.5 < self.unknown as f64 {
            f64::NAN
        } else {
            self.acc / (elapsed.saturating_sub(self.unknown as i64) as f64 - pre_unknown)
        };
        if new.is_nan() {
            self.unknown = post_int.floor() as u64;
            self.acc = f64::NAN;
        } else {
            self.unknown = 0;
            self.acc = new / interval * post_int;
        }
        Update::Done {
            from,
            to: t.sec,
            value: slot,
        }
    }

    /// The oldest slot the archive still holds.
    pub fn oldest_kept(&self) -> i64 {
        self.last.sec.saturating_sub(self.rows).saturating_add(1)
    }
}

/// rrdtool graph's default width in pixels. A window wider than this many
/// seconds is consolidated to `(end - start) / 400` seconds a row before
/// its VDEFs are taken (rrdtool's `im->step`).
const GRAPH_WIDTH: i64 = 400;

/// What `VDEF:x=foo,AVERAGE`, `MINIMUM` and `MAXIMUM` give; NaN when the
/// window holds no known slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stats {
    pub average: f64,
    pub minimum: f64,
    pub maximum: f64,
}

/// The VDEFs of `rrdtool graph --start start --end end DEF:foo=db:ds:AVERAGE`
/// over a one-second database whose slot ending at `T` is `value(T)`, every
/// slot outside `known` (inclusive) being unknown.
///
/// rrdtool fetches the slots ending at `start+1 ..= end+1`. When the window
/// is wider than the graph, rows of `r` slots aligned on multiples of `r`
/// are averaged (unknown slots left out) and the partial rows at either end
/// are dropped. The VDEFs then skip unknown rows.
pub(crate) fn window_stats(
    start: i64,
    end: i64,
    known: (i64, i64),
    value: impl Fn(i64) -> f64,
) -> Stats {
    let r = (end.saturating_sub(start) / GRAPH_WIDTH).max(1);
    let (first, last) = (start.saturating_add(1), end.saturating_add(1));
    // rrdtool's reduce_data: skip to the first multiple of r, drop the tail
    // after the last one.
    let head = start.rem_euclid(r);
    let skip = if head == 0 { 0 } else { r - head };
    let tail = last.rem_euclid(r);
    let (kept_first, kept_last) = (first.saturating_add(skip), last - tail);

    let mut vdef = Vdef::default();
    let mut row: Option<(i64, f64, u64)> = None; // (row id, sum, count)
    let lo = kept_first.max(known.0);
    let hi = kept_last.min(known.1);
    let mut t = lo;
    while t <= hi {
        let id = (t - kept_first) / r;
        if row.is_some_and(|(rid, _, _)| rid != id) {
            vdef.row(row.take());
        }
        let v = value(t);
        let (_, sum, count) = row.get_or_insert((id, f64::NAN, 0));
        if !v.is_nan() {
            *sum = if *count == 0 { v } else { *sum + v };
            *count += 1;
        }
        t += 1;
    }
    vdef.row(row);
    vdef.finish()
}

/// Running VDEF AVERAGE, MINIMUM and MAXIMUM over consolidated rows.
#[derive(Debug, Default)]
struct Vdef {
    sum: f64,
    count: u64,
    min: Option<f64>,
    max: Option<f64>,
}

impl Vdef {
    fn row(&mut self, row: Option<(i64, f64, u64)>) {
        let Some((_, sum, count)) = row else { return };
        if count == 0 {
            return;
        }
        let v = sum / count as f64;
        if !v.is_finite() {
            return;
        }
        self.sum += v;
        self.count += 1;
        self.min = Some(self.min.map_or(v, |m| m.min(v)));
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
    }

    fn finish(self) -> Stats {
        let average = if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        };
        Stats {
            average,
            minimum: self.min.unwrap_or(f64::NAN),
            maximum: self.max.unwrap_or(f64::NAN),
        }
    }
}

/// A VDEF value as post_proc.py gets it: printed by rrdtool with `%6.2lf`
/// and read back with `float()`, so rounded to two decimals.
pub(crate) fn printed(v: f64) -> f64 {
    if v.is_finite() {
        format!("{v:.2}").parse().unwrap_or(v)
    } else {
        v
    }
}
