//! Small parsers shared by the trace formats. They work on borrowed slices of the line buffer,
//! so reading a record allocates nothing.

use crate::flash::SECTOR_BYTES;

/// Splits `line` at `sep` into at most `N` trimmed fields; also returns how many fields there are.
pub(super) fn split<const N: usize>(line: &str, sep: char) -> ([&str; N], usize) {
    let mut fields = [""; N];
    let mut count = 0;
    for field in line.split(sep) {
        if count < N {
            fields[count] = field.trim();
        }
        count += 1;
    }
    (fields, count)
}

/// The first `N` comma-separated fields of a CSV record, or `None` for a header (a first line
/// that starts with a letter names the columns). A record with other than `N` columns is an
/// error, or with fewer when `more_allowed` (formats whose later columns are optional).
pub(super) fn csv_record<const N: usize>(
    line: &str,
    first: bool,
    more_allowed: bool,
) -> Result<Option<[&str; N]>, String> {
    if first && line.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(None);
    }
    let (fields, count) = split::<N>(line, ',');
    if count < N || (count > N && !more_allowed) {
        return Err(format!("found {count} columns"));
    }
    Ok(Some(fields))
}

/// Splits `line` at runs of whitespace into at most `N` fields; also returns how many there are.
pub(super) fn split_whitespace<const N: usize>(line: &str) -> ([&str; N], usize) {
    let mut fields = [""; N];
    let mut count = 0;
    for field in line.split_whitespace() {
        if count < N {
            fields[count] = field;
        }
        count += 1;
    }
    (fields, count)
}

/// A non-negative decimal integer; `name` says which column it is in the error.
pub(super) fn uint(field: &str, name: &str) -> Result<u64, String> {
    if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{name} is \"{field}\", not a non-negative integer"));
    }
    field.parse().map_err(|_| format!("{name} is \"{field}\", too large"))
}

/// Decimal seconds (`12.345678901`, `7`) as integer nanoseconds, without going through floating
/// point; digits beyond nanoseconds are dropped.
pub(super) fn seconds_as_ns(field: &str, name: &str) -> Result<u64, String> {
    let bad = || format!("{name} is \"{field}\", not a time in seconds like 12.345");
    let (whole, frac) = field.split_once('.').unwrap_or((field, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let mut ns = 0u64;
    for i in 0..9 {
        ns = ns * 10 + frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as u64);
    }
    whole.checked_mul(1_000_000_000).and_then(|w| w.checked_add(ns)).ok_or_else(bad)
}

/// The sectors a byte range touches: (first sector, sector count). A range that covers part of a
/// sector covers the sector; an empty range has no sectors.
pub(super) fn byte_range(offset: u64, size: u64) -> Result<(u64, u64), String> {
    if size == 0 {
        return Ok((offset / SECTOR_BYTES, 0));
    }
    let end = offset.checked_add(size).ok_or_else(|| format!("offset {offset} + size {size} overflows"))?;
    let first = offset / SECTOR_BYTES;
    Ok((first, end.div_ceil(SECTOR_BYTES) - first))
}

/// `Read`/`Write` (any case) or their first letter.
pub(super) fn read_or_write(field: &str, name: &str, expected: &str) -> Result<bool, String> {
    if field.eq_ignore_ascii_case("r") || field.eq_ignore_ascii_case("read") {
        Ok(true)
    } else if field.eq_ignore_ascii_case("w") || field.eq_ignore_ascii_case("write") {
        Ok(false)
    } else {
        Err(format!("{name} is \"{field}\", expected {expected}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_parse_exactly_to_nanoseconds() {
        assert_eq!(seconds_as_ns("0.000000000", "t").unwrap(), 0);
        assert_eq!(seconds_as_ns("1.5", "t").unwrap(), 1_500_000_000);
        assert_eq!(seconds_as_ns("12.345678901", "t").unwrap(), 12_345_678_901);
        assert_eq!(seconds_as_ns("3", "t").unwrap(), 3_000_000_000);
        assert_eq!(seconds_as_ns(".25", "t").unwrap(), 250_000_000);
        assert_eq!(seconds_as_ns("0.0000000019", "t").unwrap(), 1);
        assert!(seconds_as_ns("-1.0", "t").is_err());
        assert!(seconds_as_ns("1e3", "t").is_err());
        assert!(seconds_as_ns(".", "t").is_err());
    }

    #[test]
    fn byte_ranges_cover_every_touched_sector() {
        assert_eq!(byte_range(8192, 4096).unwrap(), (16, 8));
        assert_eq!(byte_range(100, 1).unwrap(), (0, 1));
        assert_eq!(byte_range(511, 2).unwrap(), (0, 2));
        assert_eq!(byte_range(4096, 0).unwrap(), (8, 0));
        assert!(byte_range(u64::MAX, 2).is_err());
    }

    #[test]
    fn splitting_counts_every_field() {
        let (f, n) = split::<3>("a, b ,c,d", ',');
        assert_eq!((f, n), (["a", "b", "c"], 4));
        let (f, n) = split_whitespace::<4>("  1   2 3 ");
        assert_eq!((f, n), (["1", "2", "3", ""], 3));
    }
}
