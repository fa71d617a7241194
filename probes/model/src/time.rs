//! Times for people and file names, in UTC without a time-zone library.

/// Unix seconds as UTC (year, month, day, hour, minute, second), by the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
pub fn utc(unix_secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = i64::try_from(unix_secs).unwrap_or(i64::MAX);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let small = |v: i64| u32::try_from(v).unwrap_or(0);
    (year, small(month), small(day), small(rem / 3600), small(rem % 3600 / 60), small(rem % 60))
}
