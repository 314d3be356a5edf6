//! MQSim's ASCII trace (`Trace_File_Path` of an `IO_Flow_Parameter_Set_Trace_Based`), one request
//! per line, fields separated by spaces:
//! `arrival_time_ns device_number start_sector size_in_sectors type`, 512 B sectors, type 1 =
//! read, 0 = write (MQSim's `ASCII_Trace_Definition.h`). ssdlab reads an optional sixth column,
//! the FDP placement handle a write carries (`[ftl.fdp]`, docs/fdp.md): MQSim has none.

use super::fields::{split_whitespace, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "938513000 4 264719034 16 0";

pub(super) const LAYOUT: &str =
    "5 columns separated by spaces: arrival_time_ns device_number start_sector size_in_sectors type(0 = write, 1 = read), and optionally a sixth: the FDP placement handle";

/// Times are nanoseconds.
pub(super) const PS_PER_UNIT: u64 = 1_000;

pub(super) fn parse(line: &str) -> Result<Parsed<'_>, String> {
    let (f, count) = split_whitespace::<6>(line);
    if !(5..=6).contains(&count) {
        return Err(format!("found {count} columns"));
    }
    let mut values = [0u64; 5];
    const NAMES: [&str; 5] = ["column 1", "column 2", "column 3", "column 4", "column 5"];
    for (i, field) in f.iter().take(5).enumerate() {
        values[i] = uint(field, NAMES[i])?;
    }
    let [time, _device, start_sector, sectors, kind] = values;
    let op = match kind {
        1 => Op::Read,
        0 => Op::Write,
        other => return Err(format!("type must be 0 (write) or 1 (read), got {other}")),
    };
    let placement_handle = match f[5] {
        "" => None,
        field => {
            let handle = uint(field, "column 6 (placement handle)")?;
            Some(u16::try_from(handle).map_err(|_| {
                format!("column 6 (placement handle) is {handle}, past NVMe's 16-bit placement identifier")
            })?)
        }
    };
    Ok(Parsed::Record(Record { time, device: f[1], op, start_sector, sectors, placement_handle }))
}
