//! netserver's log lines: one line per event with a timestamp and the
//! client's address, on stderr, when -v was given (or -d); as JSON lines
//! with --log-json.

use super::options::ServerOptions;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn enabled(o: &ServerOptions) -> bool {
    (o.verbosity_given && o.verbosity > 0) || o.debug > 0
}

pub fn line(o: &ServerOptions, peer: Option<SocketAddr>, text: &str) {
    if !enabled(o) {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    // A v4 client of the dual-stack listener is shown as the v4 address.
    let peer = peer.map(|p| SocketAddr::new(p.ip().to_canonical(), p.port()));
    let who = peer.map_or_else(|| "-".to_string(), |p| p.to_string());
    let time = utc_timestamp(now);
    let mut err = std::io::stderr().lock();
    if o.log_json {
        let record = serde_json::json!({
            "time": time,
            "ts": now.as_secs_f64(),
            "program": "netserver",
            "client": peer.map(|p| p.to_string()),
            "message": text,
        });
        let _ = writeln!(err, "{record}");
        return;
    }
    let _ = writeln!(err, "{time} netserver {who} {text}");
}

/// `2026-11-22T07:50:01.123Z` for a time since the Unix epoch.
fn utc_timestamp(since_epoch: std::time::Duration) -> String {
    let secs = since_epoch.as_secs();
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since_epoch.subsec_millis()
    )
}

/// Year, month, day of a count of days since 1970-01-01 (proleptic
/// Gregorian; H. Hinnant's days-to-civil algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_times() {
        assert_eq!(utc_timestamp(Duration::ZERO), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            utc_timestamp(Duration::from_millis(951_782_400_250)),
            "2000-02-29T00:00:00.250Z"
        );
        assert_eq!(
            utc_timestamp(Duration::from_secs(1_795_331_694)),
            "2026-11-22T07:14:54.000Z"
        );
    }
}
