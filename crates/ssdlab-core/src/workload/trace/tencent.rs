//! Tencent Cloud Block Storage traces (SNIA IOTTA, Zhang et al., "OSCA: an online-model based
//! cache allocation scheme in cloud block storage systems", USENIX ATC 2020), comma separated:
//! `Timestamp,Offset,Size,IOType,VolumeID`. Timestamp is seconds (Unix time), Offset and Size
//! are 512 B sectors, IOType is 0 for a read and 1 for a write; the device is VolumeID.

use super::fields::{csv_record, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "1538323200,2289302,8,1,1283";

pub(super) const LAYOUT: &str = "5 comma-separated columns: Timestamp(seconds),Offset(512 B sectors),Size(512 B sectors),IOType(0 = read, 1 = write),VolumeID";

/// Times are seconds.
pub(super) const PS_PER_UNIT: u64 = 1_000_000_000_000;

pub(super) fn parse(line: &str, first: bool) -> Result<Parsed<'_>, String> {
    let Some(f) = csv_record::<5>(line, first, false)? else {
        return Ok(Parsed::Header);
    };
    let time = uint(f[0], "Timestamp")?;
    let start_sector = uint(f[1], "Offset")?;
    let sectors = uint(f[2], "Size")?;
    let op = match uint(f[3], "IOType")? {
        0 => Op::Read,
        1 => Op::Write,
        other => return Err(format!("IOType must be 0 (read) or 1 (write), got {other}")),
    };
    uint(f[4], "VolumeID")?;
    Ok(Parsed::Record(Record { time, device: f[4], op, start_sector, sectors, placement_handle: None }))
}
