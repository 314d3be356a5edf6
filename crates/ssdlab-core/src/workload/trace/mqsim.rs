//! MQSim's ASCII trace (`Trace_File_Path` of an `IO_Flow_Parameter_Set_Trace_Based`), one request
//! per line, fields separated by spaces:
//! `arrival_time_ns device_number start_sector size_in_sectors type`, 512 B sectors, type 1 =
//! read, 0 = write (MQSim's `ASCII_Trace_Definition.h`).

use super::fields::{split_whitespace, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "938513000 4 264719034 16 0";

pub(super) const LAYOUT: &str =
    "5 columns separated by spaces: arrival_time_ns device_number start_sector size_in_sectors type(0 = write, 1 = read)";

/// Times are nanoseconds.
pub(super) const PS_PER_UNIT: u64 = 1_000;

pub(super) fn parse(line: &str) -> Result<Parsed<'_>, String> {
    let (f, count) = split_whitespace::<5>(line);
    if count != 5 {
        return Err(format!("found {count} columns"));
    }
    let mut values = [0u64; 5];
    const NAMES: [&str; 5] = ["column 1", "column 2", "column 3", "column 4", "column 5"];
    for (i, field) in f.iter().enumerate() {
        values[i] = uint(field, NAMES[i])?;
    }
    let [time, _device, start_sector, sectors, kind] = values;
    let op = match kind {
        1 => Op::Read,
        0 => Op::Write,
        other => return Err(format!("type must be 0 (write) or 1 (read), got {other}")),
    };
    Ok(Parsed::Record(Record { time, device: f[1], op, start_sector, sectors }))
}
