//! The SPC trace format of the UMass Trace Repository (Financial, WebSearch), comma separated:
//! `ASU,LBA,Size,Opcode,Timestamp[,...]`. ASU is the application specific unit (the device), LBA
//! counts 512 B blocks, Size is bytes, Opcode is `r` or `w` (any case), Timestamp is seconds
//! since the start of the trace. Further optional fields are ignored.

use super::fields::{csv_record, read_or_write, seconds_as_ns, uint};
use super::{Op, Parsed, Record};
use crate::flash::SECTOR_BYTES;

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "0,303567,3584,w,0.000000";

pub(super) const LAYOUT: &str =
    "at least 5 comma-separated columns: ASU,LBA(512 B blocks),Size(bytes),Opcode(r|w),Timestamp(seconds)[,...]";

/// Timestamps are read into nanoseconds.
pub(super) const PS_PER_UNIT: u64 = 1_000;

pub(super) fn parse(line: &str, first: bool) -> Result<Parsed<'_>, String> {
    let Some(f) = csv_record::<5>(line, first, true)? else {
        return Ok(Parsed::Header);
    };
    uint(f[0], "ASU")?;
    let start_sector = uint(f[1], "LBA")?;
    let size = uint(f[2], "Size")?;
    let is_read = read_or_write(f[3], "Opcode", "r or w")?;
    let time = seconds_as_ns(f[4], "Timestamp")?;
    let op = if is_read { Op::Read } else { Op::Write };
    // The range starts on a block boundary: the sectors are the size rounded up.
    Ok(Parsed::Record(Record {
        time,
        device: f[0],
        op,
        start_sector,
        sectors: size.div_ceil(SECTOR_BYTES),
        placement_handle: None,
    }))
}
