//! `blkparse`'s default text output (blktrace, Axboe and Brunelle), one event per line:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//! ```
//!
//! device (major,minor), CPU, sequence number, time in seconds since the trace started, PID,
//! action, RWBS, then for requests with data `sector + blocks` (512 B sectors) and the process.
//! Only one action is replayed: `Q` (queued, what the application asked for) or `D` (dispatched
//! to the device, after the block layer merged and split requests; the default). Other actions
//! (G, I, M, C, P, U, m, ...) and lines that are not events (blkparse's per-CPU and total summaries)
//! are skipped and counted (a warning says how many, and the first line); a line that looks like
//! an event (it starts with a digit, or has an event's fields) but does not follow the layout is
//! an error. RWBS decides the operation: a `D` (discard) or `E` (secure erase) is a trim, otherwise
//! `R` is a read and `W` a write; requests with no data (`N`, flushes) are skipped and counted.

use super::fields::{seconds_as_ns, split_whitespace, uint};
use super::{Op, Parsed, Record};

/// A record, quoted in errors about files that hold none.
pub(super) const EXAMPLE: &str = "8,0    3        4     0.000005000   697  D   W 223490 + 8 [kjournald]";

pub(super) const LAYOUT: &str =
    "blkparse's default output: maj,min cpu sequence seconds pid action RWBS [sector + blocks] [process]";

/// Times are read into nanoseconds.
pub(super) const PS_PER_UNIT: u64 = 1_000;

/// `maj,min`: how an event line starts.
fn is_device(token: &str) -> bool {
    match token.split_once(',') {
        Some((major, minor)) => {
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            digits(major) && digits(minor)
        }
        None => false,
    }
}

/// A line that is not an event but would be one if its device were readable: it starts with a
/// digit (blkparse's summaries start with words: `CPU0 (8,0):`, `Reads Queued:`, `Total`,
/// `Throughput`, `Events`, `Skips`), or it has an event's fields with a time in seconds where
/// the time goes. Such a line is damage, not a summary, and is reported rather than passed over.
fn looks_like_event(f: &[&str; 11], count: usize) -> bool {
    let seconds = |s: &str| {
        s.split_once('.').is_some_and(|(whole, frac)| {
            !whole.is_empty() && !frac.is_empty() && (whole.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
        })
    };
    f[0].starts_with(char::is_numeric) || (count >= 7 && (f[0].contains([',', '\u{ff0c}']) || seconds(f[3])))
}

/// `action` is the replayed event: `"Q"` or `"D"`.
pub(super) fn parse<'a>(line: &'a str, action: &str) -> Result<Parsed<'a>, String> {
    let (f, count) = split_whitespace::<11>(line);
    if !is_device(f[0]) {
        if looks_like_event(&f, count) {
            return Err(format!(
                "the line looks like an event but its device is {}, expected major,minor in digits such as 8,0",
                super::survey::quote(f[0])
            ));
        }
        return Ok(Parsed::Skip); // a summary line or other text blkparse prints (counted)
    }
    if count < 7 {
        return Err(format!("an event line needs at least 7 fields, found {count}"));
    }
    uint(f[1], "the CPU")?;
    uint(f[2], "the sequence number")?;
    let time = seconds_as_ns(f[3], "the time")?;
    uint(f[4], "the PID")?;
    if f[5] != action {
        return Ok(Parsed::OtherEvent);
    }
    let rwbs = f[6];
    if rwbs.is_empty() || !rwbs.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("RWBS is \"{rwbs}\", expected letters such as R, W, WS, RA, D, N"));
    }
    let op = if rwbs.contains(['D', 'E']) {
        Op::Trim
    } else if rwbs.contains('R') {
        Op::Read
    } else if rwbs.contains('W') {
        Op::Write
    } else {
        Op::Flush
    };
    // No `sector + blocks`: a request without data (a flush, or a SCSI command).
    if count == 7 || f[7].starts_with(['[', '(']) {
        return Ok(Parsed::Record(Record {
            time,
            device: f[0],
            op: Op::Flush,
            start_sector: 0,
            sectors: 0,
            placement_handle: None,
        }));
    }
    if count < 10 || f[8] != "+" {
        return Err(format!(
            "a {action} event with data needs `sector + blocks` after RWBS, found \"{}\"",
            f[7..count.min(11)].join(" ")
        ));
    }
    let start_sector = uint(f[7], "the sector")?;
    let sectors = uint(f[9], "the block count")?;
    Ok(Parsed::Record(Record { time, device: f[0], op, start_sector, sectors, placement_handle: None }))
}
