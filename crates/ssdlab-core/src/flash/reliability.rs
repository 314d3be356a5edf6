//! Read latency from flash reliability (`[flash.reliability]`): each page read's bit errors come
//! from the raw bit error rate (RBER) of its block, which grows with wear (P/E cycles), with the
//! age of its data (retention) and with the reads its block has taken since its erase (read
//! disturb). The ECC decodes a codeword with hard decision if its errors are few enough; if not,
//! the controller reads the page again with extra sensing (a read retry: another cell read and
//! another transfer) and soft-decodes, level by level, until a level corrects it or none does
//! (an uncorrectable read). A read whose errors come near the hard-decision limit asks for its
//! block to be rewritten (read reclaim).
//!
//! The RBER is the power law of Mielke et al. ("Bit Error Rate in NAND Flash Memories", IRPS
//! 2008: write, retention and read-disturb errors), `RBER = epsilon + alpha c^k + beta c^m t^n +
//! gamma c^p r^q` for c P/E cycles, t days since the data was written and r reads since the
//! erase, with the coefficients SimpleSSD 2.1 uses for 2Y-nm MLC (its read-reclaim model).
//! Errors per codeword are drawn from a Poisson distribution of mean RBER x codeword bits (the
//! binomial's limit for small rates), from the run's seed, so runs repeat exactly.

use crate::config::ReliabilityConfig;
use crate::engine::RandomStream;
use crate::time::{SimTime, PS_PER_S};
use serde::{Deserialize, Serialize};

/// Random stream of the bit-error draws.
const STREAM_BIT_ERRORS: u64 = 0xB17E_5505;

/// `erases_at_start` of a block that held no data when the run started.
pub const NO_DATA_AT_START: u32 = u32::MAX;

const PS_PER_DAY: f64 = PS_PER_S as f64 * 86_400.0;

/// What one read found: its worst codeword's errors and the retries that took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOutcome {
    pub errors: u32,
    /// Read retries (soft-decision levels) the read needed; the last level when uncorrectable.
    pub retries: u8,
    pub uncorrectable: bool,
    /// The block should be rewritten (read reclaim).
    pub reclaim: bool,
}

/// Per-block reliability state and the counts for results.json.
pub struct Reliability {
    config: ReliabilityConfig,
    codeword_bits: f64,
    rng: RandomStream,
    /// Each block's erase count when the run started, or `NO_DATA_AT_START` for a block that
    /// held no data then: a block still at its count holds data written `data_age_days_at_start`
    /// before the run.
    erases_at_start: Vec<u32>,
    /// Reads of each block since its erase, and the erase count they were counted under (a
    /// block erased since starts again from zero).
    reads: Vec<u32>,
    reads_epoch: Vec<u32>,
    /// Reads by the retries they needed (index 0: hard decision alone).
    pub reads_by_retries: Vec<u64>,
    pub uncorrectable_reads: u64,
    pub reclaims_requested: u64,
    /// RBER summed over reads, and the highest seen.
    rber_sum: f64,
    rber_max: f64,
}

impl Reliability {
    /// The model for a device whose blocks have the erase counts `erase_counts` now, at the start
    /// of the run (`NO_DATA_AT_START` for the blocks that hold no data).
    pub fn new(config: &ReliabilityConfig, seed: u64, erase_counts: Vec<u32>) -> Self {
        let blocks = erase_counts.len();
        Self {
            codeword_bits: config.codeword_size.value as f64 * 8.0,
            rng: RandomStream::new(seed, STREAM_BIT_ERRORS),
            reads_epoch: erase_counts.clone(),
            erases_at_start: erase_counts,
            reads: vec![0; blocks],
            reads_by_retries: vec![0; config.soft_decision_bits.len() + 1],
            uncorrectable_reads: 0,
            reclaims_requested: 0,
            rber_sum: 0.0,
            rber_max: 0.0,
            config: config.clone(),
        }
    }

    /// The raw bit error rate of a block with `erase_count` erases (the drive's wear at start
    /// added) whose data is `age_days` old and which has been read `reads` times since its erase.
    pub fn rber(&self, erase_count: u32, age_days: f64, reads: u32) -> f64 {
        let c = &self.config;
        let cycles = (erase_count + c.pe_cycles_at_start) as f64;
        c.epsilon
            + c.alpha * cycles.powf(c.k)
            + c.beta * cycles.powf(c.m) * age_days.max(0.0).powf(c.n)
            + c.gamma * cycles.powf(c.p) * (reads as f64).powf(c.q)
    }

    /// A read of `bytes` from `block` (erase count `erase_count`) at `now`, whose data, if written
    /// during the run, is `written_ago` old: counts the read against the block and draws its
    /// codewords' errors.
    pub fn read(
        &mut self,
        block: u32,
        erase_count: u32,
        written_ago: SimTime,
        now: SimTime,
        bytes: u64,
    ) -> ReadOutcome {
        let b = block as usize;
        if self.reads_epoch[b] != erase_count {
            self.reads_epoch[b] = erase_count;
            self.reads[b] = 0;
        }
        self.reads[b] = self.reads[b].saturating_add(1);
        // Data older than the run is `data_age_days_at_start` old when it starts; data written
        // since is `written_ago` old.
        let age_days = if erase_count == self.erases_at_start[b] {
            self.config.data_age_days_at_start + now as f64 / PS_PER_DAY
        } else {
            written_ago as f64 / PS_PER_DAY
        };
        let rber = self.rber(erase_count, age_days, self.reads[b]);
        self.rber_sum += rber;
        self.rber_max = self.rber_max.max(rber);
        let codewords = bytes.div_ceil(self.config.codeword_size.value).max(1);
        let mean = rber * self.codeword_bits;
        let errors = (0..codewords).map(|_| self.poisson(mean)).max().unwrap_or(0);
        let outcome = self.decode(errors);
        self.reads_by_retries[outcome.retries as usize] += 1;
        self.uncorrectable_reads += outcome.uncorrectable as u64;
        self.reclaims_requested += outcome.reclaim as u64;
        outcome
    }

    /// The retries a codeword with `errors` bit errors needs.
    pub fn decode(&self, errors: u32) -> ReadOutcome {
        let c = &self.config;
        let reclaim = c.read_reclaim_bits > 0 && errors >= c.read_reclaim_bits;
        if errors <= c.hard_decision_bits {
            return ReadOutcome { errors, retries: 0, uncorrectable: false, reclaim };
        }
        let levels = &c.soft_decision_bits;
        match levels.iter().position(|&bits| errors <= bits) {
            Some(i) => ReadOutcome { errors, retries: i as u8 + 1, uncorrectable: false, reclaim },
            None => ReadOutcome { errors, retries: levels.len() as u8, uncorrectable: true, reclaim },
        }
    }

    /// Decode time of an attempt: hard decision on the first, soft decision on each retry.
    pub fn decode_ps(&self, retry: bool) -> u64 {
        if retry {
            self.config.soft_decode_time.value
        } else {
            self.config.hard_decode_time.value
        }
    }

    /// Knuth's multiplication method for small means; a rounded normal for large ones (their
    /// difference is far below the retry levels' steps).
    fn poisson(&mut self, mean: f64) -> u32 {
        if mean <= 0.0 {
            return 0;
        }
        if mean > 30.0 {
            return self.rng.normal(mean, mean.sqrt()).round().max(0.0) as u32;
        }
        let limit = (-mean).exp();
        let mut product = self.rng.unit();
        let mut k = 0;
        while product > limit {
            k += 1;
            product *= self.rng.unit();
        }
        k
    }

    /// The summary, with the page re-reads and block rewrites the device did for the model.
    pub fn summary(&self, read_retries: u64, read_reclaims: u64) -> ReliabilitySummary {
        let reads: u64 = self.reads_by_retries.iter().sum();
        ReliabilitySummary {
            page_reads: reads,
            reads_by_retries: self.reads_by_retries.clone(),
            read_retries,
            uncorrectable_reads: self.uncorrectable_reads,
            read_reclaims_requested: self.reclaims_requested,
            read_reclaims,
            mean_rber: if reads == 0 { None } else { Some(self.rber_sum / reads as f64) },
            max_rber: if reads == 0 { None } else { Some(self.rber_max) },
            pe_cycles_at_start: self.config.pe_cycles_at_start,
            data_age_days_at_start: self.config.data_age_days_at_start,
            read_latency_us_by_retries: Vec::new(),
        }
    }
}

/// results.json `reliability` (only with `[flash.reliability]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReliabilitySummary {
    /// Flash page reads decoded (host, GC, mapping and read-ahead reads alike).
    pub page_reads: u64,
    /// Page reads by the read retries they needed: index 0 decoded by hard decision alone,
    /// index i after i retries.
    pub reads_by_retries: Vec<u64>,
    /// Pages read again in all (each retry of a read re-reads every page of its multi-plane
    /// command: another cell read, transfer and soft decode).
    pub read_retries: u64,
    /// Reads that no level could correct (counted; the model still returns the data).
    pub uncorrectable_reads: u64,
    /// Reads whose errors reached `read_reclaim_bits`, and the blocks rewritten for them.
    pub read_reclaims_requested: u64,
    pub read_reclaims: u64,
    /// Mean and highest RBER over the page reads (null when nothing was read).
    pub mean_rber: Option<f64>,
    pub max_rber: Option<f64>,
    pub pe_cycles_at_start: u32,
    pub data_age_days_at_start: f64,
    /// Host reads by the most retries any of their pages needed: count and latency.
    pub read_latency_us_by_retries: Vec<RetryLevelLatency>,
}

/// Host reads whose slowest page needed `retries` retries.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RetryLevelLatency {
    pub retries: u32,
    pub count: u64,
    pub mean: f64,
    pub p99: f64,
    pub max: f64,
}
