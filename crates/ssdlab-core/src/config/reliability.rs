//! `[flash.reliability]`: read latency from flash reliability (see `crate::flash::reliability`):
//! the raw bit error rate model's coefficients, the ECC's correction levels and decode times,
//! read reclaim, and the wear and data age the drive starts with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::{Duration, Size};
use super::ConfigError;

/// See [`super::flash::FlashConfig::reliability`]. The RBER is `epsilon + alpha c^k + beta c^m
/// t^n + gamma c^p r^q` (c P/E cycles, t days since the data was written, r reads of the block
/// since its erase): Mielke et al.'s power law (IRPS 2008) with the 2Y-nm MLC coefficients
/// SimpleSSD 2.1 uses.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ReliabilityConfig {
    /// RBER of a fresh cell (default 8.34e-5).
    pub epsilon: f64,
    /// Wear term: alpha x cycles^k (defaults 3.30e-11 and 1.71).
    pub alpha: f64,
    pub k: f64,
    /// Retention term: beta x cycles^m x days^n (defaults 5.56e-19, 2.49 and 3.33).
    pub beta: f64,
    pub m: f64,
    pub n: f64,
    /// Read-disturb term: gamma x cycles^p x reads^q (defaults 6.26e-13, 1.76 and 0.47).
    pub gamma: f64,
    pub p: f64,
    pub q: f64,
    /// Data bytes per ECC codeword (default "1KiB"): a read decodes the codewords it reads, and
    /// its worst codeword decides the retries.
    pub codeword_size: Size,
    /// Bit errors per codeword the hard-decision decode corrects (default 40).
    pub hard_decision_bits: u32,
    /// Bit errors per codeword each read-retry level corrects, in order (default [60, 80, 100]):
    /// each level is one more cell read and transfer with extra sensing, then a soft-decision
    /// decode (progressive sensing as in Zhao et al., "LDPC-in-SSD", FAST 2013). More errors
    /// than the last level: an uncorrectable read.
    pub soft_decision_bits: Vec<u32>,
    /// Hard-decision decode time of a read (default "1us").
    pub hard_decode_time: Duration,
    /// Soft-decision decode time of each retry (default "5us").
    pub soft_decode_time: Duration,
    /// A read whose worst codeword has at least this many errors has its block rewritten (read
    /// reclaim: its valid pages move, then it is erased). Default 32 (80 % of the hard-decision
    /// limit); 0 turns read reclaim off.
    pub read_reclaim_bits: u32,
    /// P/E cycles every block has had before the run, on top of the erase counts the
    /// preconditioning leaves (default 0: a fresh drive).
    pub pe_cycles_at_start: u32,
    /// Age in days of the data on the drive when the run starts (default 0); data written during
    /// the run ages from when its block was closed.
    pub data_age_days_at_start: f64,
}

impl Default for ReliabilityConfig {
    fn default() -> Self {
        Self {
            epsilon: 8.34e-5,
            alpha: 3.30e-11,
            k: 1.71,
            beta: 5.56e-19,
            m: 2.49,
            n: 3.33,
            gamma: 6.26e-13,
            p: 1.76,
            q: 0.47,
            codeword_size: Size::lit("1KiB"),
            hard_decision_bits: 40,
            soft_decision_bits: vec![60, 80, 100],
            hard_decode_time: Duration::lit("1us"),
            soft_decode_time: Duration::lit("5us"),
            read_reclaim_bits: 32,
            pe_cycles_at_start: 0,
            data_age_days_at_start: 0.0,
        }
    }
}

/// Longest list of read-retry levels (real drives have a few to a few tens).
pub const MAX_RETRY_LEVELS: usize = 32;

/// Coefficients finite and not negative, the codeword within a page, the levels rising.
pub(super) fn validate(r: &ReliabilityConfig, page_size_bytes: u64) -> Result<(), ConfigError> {
    let err = |key: &str, reason: String| Err(ConfigError::new(format!("flash.reliability.{key}"), reason));
    let coefficients = [
        ("epsilon", r.epsilon),
        ("alpha", r.alpha),
        ("k", r.k),
        ("beta", r.beta),
        ("m", r.m),
        ("n", r.n),
        ("gamma", r.gamma),
        ("p", r.p),
        ("q", r.q),
        ("data_age_days_at_start", r.data_age_days_at_start),
    ];
    for (key, value) in coefficients {
        if !value.is_finite() || value < 0.0 {
            return err(key, format!("must be a number of at least 0, got {value}"));
        }
    }
    let codeword = r.codeword_size.value;
    if codeword == 0 || codeword > page_size_bytes {
        return err(
            "codeword_size",
            format!("must be more than 0 and at most the page size ({page_size_bytes} bytes), got {codeword} bytes"),
        );
    }
    if r.soft_decision_bits.len() > MAX_RETRY_LEVELS {
        return err(
            "soft_decision_bits",
            format!("at most {MAX_RETRY_LEVELS} read-retry levels, got {}", r.soft_decision_bits.len()),
        );
    }
    let mut below = r.hard_decision_bits;
    for (i, &bits) in r.soft_decision_bits.iter().enumerate() {
        if bits <= below {
            return err(
                "soft_decision_bits",
                format!(
                    "each level must correct more bits than the one before (hard_decision_bits = {}), but level {} corrects {bits} after {below}",
                    r.hard_decision_bits,
                    i + 1
                ),
            );
        }
        below = bits;
    }
    Ok(())
}
