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
}
