//! MSR Cambridge block traces as SNIA's IOTTA repository distributes them (Narayanan et al.,
//! "Write off-loading", FAST 2008), comma separated:
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`. Timestamp is a Windows
//! filetime (100 ns ticks since 1601), Type is `Read` or `Write`, Offset and Size are bytes,
//! ResponseTime (100 ns ticks) is ignored. The device is DiskNumber.

use super::fields::{byte_range, csv_record, read_or_write, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "128166372003061629,wdev,0,Read,8192,4096,1331";

pub(super) const LAYOUT: &str = "7 comma-separated columns: Timestamp(Windows filetime, 100 ns ticks),Hostname,DiskNumber,Type(Read|Write),Offset(bytes),Size(bytes),ResponseTime";

/// Times are 100 ns ticks.
pub(super) const PS_PER_UNIT: u64 = 100_000;

pub(super) fn parse(line: &str, first: bool) -> Result<Parsed<'_>, String> {
    let Some(f) = csv_record::<7>(line, first, false)? else {
        return Ok(Parsed::Header);
    };
    let time = uint(f[0], "Timestamp")?;
    uint(f[2], "DiskNumber")?;
    let is_read = read_or_write(f[3], "Type", "Read or Write")?;
    let offset = uint(f[4], "Offset")?;
    let size = uint(f[5], "Size")?;
    let (start_sector, sectors) = byte_range(offset, size)?;
    let op = if is_read { Op::Read } else { Op::Write };
    Ok(Parsed::Record(Record { time, device: f[2], op, start_sector, sectors, placement_handle: None }))
}
