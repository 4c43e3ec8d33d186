//! UTC calendar time as RFC 3339 text (`2026-11-22T07:50:01.123Z`), for
//! logs and records, without a date-time dependency.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, as RFC 3339 UTC text with milliseconds.
pub fn now_utc() -> String {
    utc_timestamp(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

/// `2026-11-22T07:50:01.123Z` for a time since the Unix epoch.
pub fn utc_timestamp(since_epoch: Duration) -> String {
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

/// The time since the Unix epoch of `2026-11-22T07:50:01.123Z` (what
/// `utc_timestamp` writes; milliseconds optional); None for anything else.
pub fn parse_utc(text: &str) -> Option<Duration> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let (clock, millis) = time.split_once('.').unwrap_or((time, "0"));
    let mut clock = clock.splitn(3, ':').map(str::parse::<u64>);
    let (h, m, s) = (
        clock.next()?.ok()?,
        clock.next()?.ok()?,
        clock.next()?.ok()?,
    );
    let millis: u64 = format!("{millis:0<3}").get(..3)?.parse().ok()?;
    // Calendar years only: a hostile year would overflow the day count.
    let in_range = (1970..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && h <= 23
        && m <= 59
        && s <= 60;
    if !in_range {
        return None;
    }
    // H. Hinnant's days-from-civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    Some(Duration::from_millis(
        ((days * 86_400 + h * 3600 + m * 60 + s) * 1000) + millis,
    ))
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

    #[test]
    fn what_is_written_reads_back() {
        for ms in [0, 951_782_400_250, 1_795_331_694_000, 4_102_444_799_999] {
            let at = Duration::from_millis(ms);
            assert_eq!(parse_utc(&utc_timestamp(at)), Some(at));
        }
        assert_eq!(
            parse_utc("2024-05-01T10:00:00Z"),
            Some(Duration::from_secs(1_714_557_600))
        );
        for bad in [
            "",
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "2024-05-01T25:00:00Z",
            "x-y-zTa:b:cZ",
            "9223372036854775807-01-01T00:00:00Z",
            "-5000-01-01T00:00:00Z",
            "2024-05-01T10:00:00.\u{e9}Z",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }
}
