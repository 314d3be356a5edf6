//! Simulated time and the physical units the model is configured in.
//!
//! Time is an integer count of picoseconds so that every component adds latencies exactly and the
//! same configuration always produces the same event order (floating point sums would drift with
//! the order of additions). `u64` picoseconds cover about 213 simulated days.

use std::fmt;

/// A point in simulated time, in picoseconds since the start of the run.
pub type SimTime = u64;

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// The longest duration the configuration may give or imply (about 106.75 days): half the `u64`
/// picosecond range, so that a duration added to any time before it still fits. Written durations
/// are refused above it when they are parsed, and so is every duration derived from the
/// configuration (a transfer at a configured rate, a firmware step at the configured clock, a
/// dispatch time per multi-plane command) in `config::limits`.
pub const MAX_DURATION_PS: u64 = u64::MAX / 2;

/// Converts picoseconds to seconds (for reporting only; the model never computes in floats).
pub fn ps_to_seconds(ps: u64) -> f64 {
    ps as f64 / PS_PER_S as f64
}

/// Converts picoseconds to microseconds (for reporting only).
pub fn ps_to_us(ps: u64) -> f64 {
    ps as f64 / PS_PER_US as f64
}

/// Splits a unit string such as `"3.8ms"` into its number and unit parts.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(text.len());
    // "e" is only part of the number when followed by a digit or sign (1e3), not in units.
    let (mut num, mut unit) = text.split_at(end);
    if num.ends_with('e') {
        num = &num[..num.len() - 1];
        unit = &text[num.len()..];
    }
    let value: f64 = num.parse().ok()?;
    Some((value, unit.trim()))
}

fn non_negative(value: f64, text: &str, what: &str) -> Result<f64, String> {
    if !value.is_finite() {
        return Err(format!("{what} must be finite, got \"{text}\""));
    }
    if value < 0.0 {
        return Err(format!("{what} must not be negative, got \"{text}\""));
    }
    Ok(value)
}

/// Parses a duration with a unit (`ps`, `ns`, `us`, `ms`, `s`) into picoseconds.
pub fn parse_duration_ps(text: &str) -> Result<u64, String> {
    let hint = || format!("expected a duration like \"75us\" (units ps, ns, us, ms, s), got \"{text}\"");
    let (value, unit) = split_number(text).ok_or_else(hint)?;
    let scale = match unit {
        "ps" => 1.0,
        "ns" => PS_PER_NS as f64,
        "us" | "µs" => PS_PER_US as f64,
        "ms" => PS_PER_MS as f64,
        "s" => PS_PER_S as f64,
        _ => return Err(hint()),
    };
    let value = non_negative(value, text, "a duration")?;
    let ps = (value * scale).round();
    if ps > MAX_DURATION_PS as f64 {
        return Err(format!(
            "duration \"{text}\" is too long to simulate (at most {:.2} days, \"{}s\")",
            MAX_DURATION_PS as f64 / PS_PER_S as f64 / 86_400.0,
            MAX_DURATION_PS / PS_PER_S
        ));
    }
    Ok(ps as u64)
}

/// Parses a size with a unit (`B`, `KB`, `KiB`, `MB`, `MiB`, `GB`, `GiB`, `TB`, `TiB`) into bytes.
pub fn parse_size_bytes(text: &str) -> Result<u64, String> {
    let hint = || {
        format!("expected a size like \"8KiB\" (units B, KB, KiB, MB, MiB, GB, GiB, TB, TiB, sectors), got \"{text}\"")
    };
    let (value, unit) = split_number(text).ok_or_else(hint)?;
    let scale = size_scale(unit).ok_or_else(hint)?;
    let value = non_negative(value, text, "a size")?;
    let bytes = value * scale;
    if bytes.fract() != 0.0 {
        return Err(format!("size \"{text}\" is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

fn size_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        // Requests are often given in 512 B sectors (MQSim, blktrace).
        "sector" | "sectors" => 512.0,
        _ => return None,
    })
}

/// Parses a bus transfer rate in mega-transfers per second (`"333MT/s"`) into transfers per second.
pub fn parse_transfer_rate(text: &str) -> Result<f64, String> {
    let hint = || format!("expected a transfer rate like \"333MT/s\" (units MT/s, GT/s), got \"{text}\"");
    let (value, unit) = split_number(text).ok_or_else(hint)?;
    let scale = match unit {
        "MT/s" => 1e6,
        "GT/s" => 1e9,
        "T/s" => 1.0,
        _ => return Err(hint()),
    };
    positive(value * scale, text, "a transfer rate")
}

/// Parses a clock frequency (`"500MHz"`, `"1.2GHz"`) into hertz.
pub fn parse_frequency(text: &str) -> Result<f64, String> {
    let hint = || format!("expected a frequency like \"500MHz\" (units Hz, kHz, MHz, GHz), got \"{text}\"");
    let (value, unit) = split_number(text).ok_or_else(hint)?;
    let scale = match unit {
        "Hz" => 1.0,
        "kHz" => 1e3,
        "MHz" => 1e6,
        "GHz" => 1e9,
        _ => return Err(hint()),
    };
    positive(value * scale, text, "a frequency")
}

/// Parses a bandwidth (`"1GB/s"`, `"500MiB/s"`) into bytes per second.
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let hint =
        || format!("expected a bandwidth like \"1GB/s\" (units B/s, KB/s, MB/s, GB/s, MiB/s, GiB/s), got \"{text}\"");
    let (value, unit) = split_number(text).ok_or_else(hint)?;
    let unit = unit.strip_suffix("/s").ok_or_else(hint)?;
    let scale = size_scale(unit).ok_or_else(hint)?;
    positive(value * scale, text, "a bandwidth")
}

/// Parses a rate of events (`"10000/s"`, `"5k/s"`) into events per second.
pub fn parse_rate_per_second(text: &str) -> Result<f64, String> {
    let hint = || format!("expected a rate like \"10000/s\" or \"50k/s\", got \"{text}\"");
    let (value, unit) = split_number(text).ok_or_else(hint)?;
    let scale = match unit {
        "/s" => 1.0,
        "k/s" => 1e3,
        "M/s" => 1e6,
        _ => return Err(hint()),
    };
    positive(value * scale, text, "a rate")
}

fn positive(value: f64, text: &str, what: &str) -> Result<f64, String> {
    let value = non_negative(value, text, what)?;
    if value == 0.0 {
        return Err(format!("{what} must be greater than zero, got \"{text}\""));
    }
    Ok(value)
}

/// Time to move `bytes` at `bytes_per_second`, rounded up to the next picosecond. Validation
/// (`config::limits`) keeps every configured rate fast enough that the largest transfer fits in
/// [`MAX_DURATION_PS`]; the conversion saturates rather than wraps should a caller go beyond.
pub fn transfer_time_ps(bytes: u64, bytes_per_second: f64) -> u64 {
    ceil_ps(bytes as f64 * PS_PER_S as f64 / bytes_per_second)
}

/// `x.ceil() as u64`, the same for every `f64` (NaN and below zero give 0, past `u64::MAX`
/// saturates), without the call to libm's `ceil` that the baseline x86-64 target makes for it
/// (no SSE4.1 `roundsd`): every transfer on every link and channel rounds up a duration, and
/// the call was about 2 % of a random read's instructions.
#[inline]
pub fn ceil_ps(x: f64) -> u64 {
    let truncated = x as u64;
    // Below 2^53 a fraction left over shows as truncated < x; from there on every f64 is whole.
    if (truncated as f64) < x {
        truncated.saturating_add(1)
    } else {
        truncated
    }
}

/// Durations of transfers whose sizes repeat, computed once by the exact formula so that a
/// lookup gives the same picoseconds as the computation (results do not change). Every read
/// crosses the host link and a flash channel with the same few sizes (a 16-byte completion, a
/// 64-byte command, whole sectors of data), and each computation is an integer division, a
/// floating-point division and a conversion in one dependency chain: perf put about 6 % of a
/// random-read run's samples on them.
#[derive(Clone, Debug)]
pub struct DurationTable {
    /// Sizes in the table are multiples of `1 << step_shift` bytes.
    step_shift: u32,
    /// Duration of `i << step_shift` bytes, for `i` up to the largest size tabled.
    ps: Box<[u64]>,
}

impl DurationTable {
    /// Tables `duration_ps` for every multiple of `step_bytes` (a power of two) up to
    /// `max_bytes`.
    pub fn new(step_bytes: u64, max_bytes: u64, duration_ps: impl Fn(u64) -> u64) -> Self {
        assert!(step_bytes.is_power_of_two(), "table steps are powers of two");
        let step_shift = step_bytes.trailing_zeros();
        let ps = (0..=max_bytes >> step_shift).map(|i| duration_ps(i << step_shift)).collect();
        Self { step_shift, ps }
    }

    /// The tabled duration of `bytes`, or `None` for a size the table does not hold.
    #[inline]
    pub fn get(&self, bytes: u64) -> Option<u64> {
        if bytes & ((1 << self.step_shift) - 1) != 0 {
            return None;
        }
        self.ps.get((bytes >> self.step_shift) as usize).copied()
    }
}

/// A duration for display in error messages and summaries.
pub struct Pretty(pub u64);

impl fmt::Display for Pretty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= PS_PER_S {
            write!(f, "{:.3}s", ps as f64 / PS_PER_S as f64)
        } else if ps >= PS_PER_MS {
            write!(f, "{:.3}ms", ps as f64 / PS_PER_MS as f64)
        } else if ps >= PS_PER_US {
            write!(f, "{:.3}us", ps as f64 / PS_PER_US as f64)
        } else {
            write!(f, "{:.3}ns", ps as f64 / PS_PER_NS as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ceil_ps` is `ceil() as u64` everywhere: edges, fractions, huge values, NaN, negatives,
    /// and a million values drawn over the exponents a duration in picoseconds takes.
    #[test]
    fn ceil_ps_matches_ceil_exactly() {
        let edges = [
            0.0,
            -0.0,
            -0.5,
            -3.0,
            0.25,
            1.0,
            1.000_000_1,
            2.5,
            4_503_599_627_370_495.5,
            9_007_199_254_740_992.0,
            9_007_199_254_740_993.0,
            1.8e19,
            u64::MAX as f64,
            2e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        for x in edges {
            assert_eq!(ceil_ps(x), x.ceil() as u64, "{x}");
        }
        let mut rng = crate::engine::RandomStream::new(7, 0);
        for _ in 0..1_000_000 {
            let x = rng.unit() * 10f64.powi((rng.unit() * 20.0) as i32);
            assert_eq!(ceil_ps(x), x.ceil() as u64, "{x}");
        }
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration_ps("75us").unwrap(), 75 * PS_PER_US);
        assert_eq!(parse_duration_ps("3.8ms").unwrap(), 3_800 * PS_PER_US);
        assert_eq!(parse_duration_ps("1s").unwrap(), PS_PER_S);
        assert_eq!(parse_duration_ps("13ns").unwrap(), 13 * PS_PER_NS);
        assert_eq!(parse_duration_ps("1e3ns").unwrap(), PS_PER_US);
    }

    #[test]
    fn durations_without_unit_or_negative_are_rejected() {
        assert!(parse_duration_ps("75").unwrap_err().contains("expected a duration"));
        assert!(parse_duration_ps("-5us").unwrap_err().contains("negative"));
        assert!(parse_duration_ps("5 parsecs").is_err());
    }

    #[test]
    fn sizes_rates_and_bandwidths_parse() {
        assert_eq!(parse_size_bytes("8KiB").unwrap(), 8192);
        assert_eq!(parse_size_bytes("4KB").unwrap(), 4000);
        assert_eq!(parse_size_bytes("512B").unwrap(), 512);
        assert!(parse_size_bytes("0.3B").is_err());
        assert_eq!(parse_transfer_rate("333MT/s").unwrap(), 333e6);
        assert_eq!(parse_bandwidth("1GB/s").unwrap(), 1e9);
        assert_eq!(parse_bandwidth("1GiB/s").unwrap(), 1073741824.0);
        assert!(parse_bandwidth("0GB/s").is_err());
        assert_eq!(parse_rate_per_second("50k/s").unwrap(), 50e3);
    }

    /// The table gives what the formula gives, for sizes it holds, and nothing for the others.
    #[test]
    fn duration_table_matches_the_formula() {
        let rate = 3.938e9; // PCIe 3.0 x4 with an odd rate: most sizes round up
        let table = DurationTable::new(16, 8192, |b| transfer_time_ps(b, rate));
        for bytes in (0..=8192).step_by(16) {
            assert_eq!(table.get(bytes), Some(transfer_time_ps(bytes, rate)), "{bytes}");
        }
        assert_eq!(table.get(8192 + 16), None, "past the table");
        assert_eq!(table.get(100), None, "not a multiple of the step");
    }

    #[test]
    fn transfer_time_rounds_up() {
        // 8 KiB at 333 MB/s is about 24.6 us.
        let t = transfer_time_ps(8192, 333e6);
        assert_eq!(t, 24_600_601);
    }
}
