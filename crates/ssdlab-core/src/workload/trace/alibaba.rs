//! Alibaba Cloud's 2020 block traces (alibaba/block-traces, Li et al., "An in-depth analysis of
//! cloud block storage workloads in large-scale production", IISWC 2020), comma separated:
//! `device_id,opcode,offset,length,timestamp`. opcode is `R` or `W`, offset and length are
//! bytes, timestamp is microseconds (Unix time).

use super::fields::{byte_range, csv_record, read_or_write, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "419,W,8792731648,16384,1577808144360767";

pub(super) const LAYOUT: &str =
    "5 comma-separated columns: device_id,opcode(R|W),offset(bytes),length(bytes),timestamp(microseconds)";

/// Times are microseconds.
pub(super) const PS_PER_UNIT: u64 = 1_000_000;

pub(super) fn parse(line: &str, first: bool) -> Result<Parsed<'_>, String> {
    let Some(f) = csv_record::<5>(line, first, false)? else {
        return Ok(Parsed::Header);
    };
    uint(f[0], "device_id")?;
    if f[1].len() != 1 {
        return Err(format!("opcode is \"{}\", expected R or W", f[1]));
    }
    let is_read = read_or_write(f[1], "opcode", "R or W")?;
    let offset = uint(f[2], "offset")?;
    let length = uint(f[3], "length")?;
    let time = uint(f[4], "timestamp")?;
    let (start_sector, sectors) = byte_range(offset, length)?;
    let op = if is_read { Op::Read } else { Op::Write };
    Ok(Parsed::Record(Record { time, device: f[0], op, start_sector, sectors, placement_handle: None }))
}
