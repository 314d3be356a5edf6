//! fio's I/O logs (`write_iolog` / `read_iolog`, fio's HOWTO "Trace file format"), versions 2
//! and 3, fields separated by spaces. The first line is the header `fio version 2 iolog` or
//! `fio version 3 iolog`; then:
//!
//! - version 2: `filename action` (add, open, close) or `filename action offset length`
//!   (read, write, trim, sync, datasync, wait). There are no timestamps: requests follow one
//!   another `arrival_gap` apart (default 0: all are due at once and the submission queue paces
//!   them), and `wait` (offset = microseconds, relative to the previous wait, values below 100
//!   ignored, as the HOWTO describes it) delays everything after it.
//! - version 3: the same lines, each preceded by a timestamp. The HOWTO only says it is relative
//!   to the start of the run; fio writes it with `utime_since_now()` and replays the differences
//!   with `iolog_delay()`, which sleeps microseconds (iolog.c), so it is read as microseconds.
//!   `wait` is not allowed in version 3.
//!
//! Offsets and lengths are bytes. The device is the file name.
//!
//! For zoned namespaces ssdlab also reads the actions `zone_append` (offset = the zone's first
//! byte, length = the data) and `zone_open`, `zone_close`, `zone_finish`, `zone_reset` (offset =
//! the zone's first byte, length 0): fio itself does not log zone commands, so these lines come
//! from a host that does (a converted blktrace, a hand-written trace).

use super::fields::{byte_range, split_whitespace, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "/dev/sdb write 4096 4096";

pub(super) const LAYOUT: &str = "header `fio version 2 iolog` or `fio version 3 iolog`, then (v3: timestamp_us) filename action [offset_bytes length_bytes]";

/// Times are microseconds.
pub(super) const PS_PER_UNIT: u64 = 1_000_000;

/// Waits shorter than this are ignored (fio's HOWTO: "Everything below 100 is discarded").
const MIN_WAIT_US: u64 = 100;

#[derive(Clone, Debug, Default)]
pub(super) struct State {
    /// 2 or 3 once the header was read.
    pub(super) version: u8,
    /// Version 2: the sum of the waits so far, in microseconds.
    wait_us: u64,
}

impl State {
    pub(super) fn is_timed(&self) -> bool {
        self.version == 3
    }
}

/// The header line's version, if `line` is one.
pub(super) fn header_version(line: &str) -> Option<u8> {
    match line.trim() {
        "fio version 2 iolog" => Some(2),
        "fio version 3 iolog" => Some(3),
        _ => None,
    }
}

pub(super) fn parse<'a>(line: &'a str, state: &mut State) -> Result<Parsed<'a>, String> {
    if state.version == 0 {
        return match header_version(line) {
            Some(v) => {
                state.version = v;
                Ok(Parsed::Meta)
            }
            None => Err(format!(
                "the first line must be the header `fio version 2 iolog` or `fio version 3 iolog`, found \"{line}\""
            )),
        };
    }
    let (f, count) = split_whitespace::<6>(line);
    let (time, f, count) = if state.version == 3 {
        (uint(f[0], "the timestamp")?, [f[1], f[2], f[3], f[4], f[5]], count - 1)
    } else {
        (state.wait_us, [f[0], f[1], f[2], f[3], f[4]], count)
    };
    let action = f[1];
    match (count, action) {
        (2, "add" | "open" | "close") => return Ok(Parsed::Meta),
        (4, _) => {}
        _ => {
            return Err(format!(
                "found {count} fields{}; expected `filename add|open|close` or `filename read|write|trim|sync|datasync{} offset length`",
                if state.version == 3 { " after the timestamp" } else { "" },
                if state.version == 2 { "|wait" } else { "" }
            ))
        }
    }
    let offset = uint(f[2], "the offset")?;
    let length = uint(f[3], "the length")?;
    let op = match action {
        "read" => Op::Read,
        "write" => Op::Write,
        "trim" => Op::Trim,
        "sync" | "datasync" => Op::Flush,
        "zone_append" => Op::Zone(crate::device::Op::ZoneAppend),
        "zone_open" => Op::Zone(crate::device::Op::ZoneOpen),
        "zone_close" => Op::Zone(crate::device::Op::ZoneClose),
        "zone_finish" => Op::Zone(crate::device::Op::ZoneFinish),
        "zone_reset" => Op::Zone(crate::device::Op::ZoneReset),
        "wait" if state.version == 2 => {
            if offset >= MIN_WAIT_US {
                state.wait_us = state.wait_us.saturating_add(offset);
            }
            return Ok(Parsed::Meta);
        }
        "wait" => return Err("`wait` is not allowed in a version 3 iolog (its timestamps say when)".into()),
        other => return Err(format!("unknown action \"{other}\"")),
    };
    let zone_management = matches!(op, Op::Zone(z) if z.is_zone_management());
    if zone_management && length != 0 {
        return Err(format!(
            "`{action}` names a zone by its first byte and carries no data: its length must be 0, got {length}"
        ));
    }
    let (start_sector, sectors) = if op == Op::Flush { (0, 0) } else { byte_range(offset, length)? };
    Ok(Parsed::Record(Record { time, device: f[0], op, start_sector, sectors, placement_handle: None }))
}
