//! The data cache's organisation and read-ahead (`[cache]` keys `organisation`, `ways`,
//! `line_size`, `replacement`, `read_ahead*`; see `crate::cache` and docs/cache.md). The
//! defaults are the cache ssdlab always had: fully associative, LRU, one flash page per line, no
//! read-ahead.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Config, ConfigError, Destage, Sharing};

/// Where a line may be placed. Amber (SimpleSSD 2.0) models all three; MQSim only the first.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CacheOrganisation {
    /// Any line anywhere: the replacement policy alone decides what leaves (no conflict misses).
    #[default]
    FullyAssociative,
    /// Line `n` goes to set `n mod sets` and may take any of its `ways` slots.
    SetAssociative,
    /// One slot per line (a set-associative cache with one way): cheapest to look up, but two
    /// lines `sets` apart evict each other.
    DirectMapped,
}

/// Which line of a (full) set makes room.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Replacement {
    /// The least recently used line (hits and writes refresh a line).
    #[default]
    Lru,
    /// The line inserted first, however often it was used since.
    Fifo,
    /// A line drawn from the set with the run's seeded random stream (same seed, same choices).
    Random,
}

/// Most pages a line can span (lines keep a 64-bit mask of their pages).
pub const MAX_PAGES_PER_LINE: u64 = 64;

/// Defaults of `cache.dirty_high_watermark` and `cache.dirty_low_watermark`: start writing
/// back at half the cache dirty, stop at a quarter. A design choice, not a published figure
/// (MQSim and Amber write back only on demand): half the cache stays free or clean for a burst,
/// and the quarter between the marks lets destaging run in long stretches instead of a page at a
/// time.
pub const DEFAULT_DIRTY_HIGH_WATERMARK: f64 = 0.5;
pub const DEFAULT_DIRTY_LOW_WATERMARK: f64 = 0.25;

/// Default of `cache.idle_destage_after`: 1 ms without a host command, about ten flash
/// programs' worth: longer than the gaps within a burst at any queue depth, far shorter than
/// the idle periods of desktop and server traces (seconds).
pub const DEFAULT_IDLE_DESTAGE_AFTER_PS: u64 = crate::time::PS_PER_MS;

/// Default of `cache.read_ahead_threshold`.
pub const DEFAULT_READ_AHEAD_THRESHOLD: u32 = 4;

/// The cache's shape, derived from the config once it is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheShape {
    /// Lines of one partition (all flows' share when shared).
    pub lines: u32,
    /// Lines per set (`lines` for a fully associative cache).
    pub ways: u32,
    pub pages_per_line: u32,
    pub replacement: Replacement,
}

impl CacheShape {
    /// The shape of each of `partitions` equal partitions.
    pub fn new(config: &Config, partitions: u32) -> Self {
        let c = &config.cache;
        let page = config.flash.page_size.value;
        let line_bytes = c.line_size.as_ref().map_or(page, |s| s.value);
        let lines = (c.capacity.value / line_bytes) as u32 / partitions.max(1);
        let (lines, ways) = match c.organisation {
            CacheOrganisation::FullyAssociative => (lines, lines),
            CacheOrganisation::SetAssociative | CacheOrganisation::DirectMapped => {
                let ways = c.ways().max(1);
                // A partition's leftover lines (fewer than a set) are not used.
                (lines / ways * ways, ways)
            }
        };
        Self { lines, ways: ways.max(1), pages_per_line: (line_bytes / page).max(1) as u32, replacement: c.replacement }
    }

    pub fn sets(&self) -> u32 {
        (self.lines / self.ways).max(1)
    }
}

impl super::CacheConfig {
    /// Ways per set: 1 when direct mapped, all lines (0 here) when fully associative.
    pub fn ways(&self) -> u32 {
        match self.organisation {
            CacheOrganisation::FullyAssociative => 0,
            CacheOrganisation::SetAssociative => self.ways.unwrap_or(0),
            CacheOrganisation::DirectMapped => 1,
        }
    }

    /// `(high, low)` dirty watermarks of background destaging, as fractions of the lines.
    pub fn dirty_watermarks(&self) -> (f64, f64) {
        (
            self.dirty_high_watermark.unwrap_or(DEFAULT_DIRTY_HIGH_WATERMARK),
            self.dirty_low_watermark.unwrap_or(DEFAULT_DIRTY_LOW_WATERMARK),
        )
    }

    /// Host idle time after which background destaging writes every dirty line, in ps.
    pub fn idle_destage_after_ps(&self) -> u64 {
        self.idle_destage_after.as_ref().map_or(DEFAULT_IDLE_DESTAGE_AFTER_PS, |d| d.value)
    }

    /// Threshold of the sequential-read detector.
    pub fn read_ahead_threshold(&self) -> u32 {
        self.read_ahead_threshold.unwrap_or(DEFAULT_READ_AHEAD_THRESHOLD)
    }
}

/// Checks the organisation and read-ahead keys of `[cache]`.
pub(super) fn validate_organisation(config: &Config) -> Result<(), ConfigError> {
    let c = &config.cache;
    let page = config.flash.page_size.value;
    let org = match c.organisation {
        CacheOrganisation::FullyAssociative => "fully_associative",
        CacheOrganisation::SetAssociative => "set_associative",
        CacheOrganisation::DirectMapped => "direct_mapped",
    };
    match (c.organisation, c.ways) {
        (CacheOrganisation::SetAssociative, None) => {
            return Err(ConfigError::new("cache.ways", "organisation = \"set_associative\" needs the number of ways"))
        }
        (CacheOrganisation::SetAssociative, Some(0)) => {
            return Err(ConfigError::new("cache.ways", "must be at least 1, got 0"))
        }
        (CacheOrganisation::SetAssociative, Some(_)) => {}
        (_, Some(w)) => {
            return Err(ConfigError::new(
                "cache.ways",
                format!(
                    "applies to organisation = \"set_associative\" only, not \"{org}\" (got {w}; a direct-mapped cache has 1 way, a fully associative one as many as it has lines)"
                ),
            ))
        }
        (_, None) => {}
    }
    let line = match &c.line_size {
        None => page,
        Some(size) => {
            if size.value == 0 || !size.value.is_multiple_of(page) {
                return Err(ConfigError::new(
                    "cache.line_size",
                    format!("must be a positive multiple of the {page}-byte flash page, got \"{}\"", size.text),
                ));
            }
            if size.value / page > MAX_PAGES_PER_LINE {
                return Err(ConfigError::new(
                    "cache.line_size",
                    format!(
                        "may span at most {MAX_PAGES_PER_LINE} pages, got \"{}\" ({} pages)",
                        size.text,
                        size.value / page
                    ),
                ));
            }
            size.value
        }
    };
    // A fully associative cache of page lines keeps today's rule (capacity rounded down to whole
    // pages); any other shape must divide exactly, so that sets x ways x line size = capacity.
    // Saturating: ways x line size beyond 64 bits is refused below as larger than the capacity.
    let block = line.saturating_mul(c.ways().max(1) as u64);
    let exact = c.organisation != CacheOrganisation::FullyAssociative || c.line_size.is_some();
    if exact && (c.capacity.value < block || !c.capacity.value.is_multiple_of(block)) {
        let what = match c.organisation {
            CacheOrganisation::FullyAssociative => format!("the line size ({line} B)"),
            _ => format!("ways x line size ({} x {line} B = {block} B)", c.ways()),
        };
        return Err(ConfigError::new(
            "cache.capacity",
            format!("must be a positive multiple of {what}, got \"{}\" ({} B)", c.capacity.text, c.capacity.value),
        ));
    }
    let flows = config.flows.len().max(1) as u64;
    if c.sharing == Sharing::Partitioned && c.organisation != CacheOrganisation::FullyAssociative {
        let per_flow = c.capacity.value / line / flows;
        if per_flow < c.ways() as u64 {
            return Err(ConfigError::new(
                "cache.ways",
                format!(
                    "with sharing = \"partitioned\" each of the {flows} flows gets {per_flow} lines, fewer than one set of {} ways",
                    c.ways()
                ),
            ));
        }
    }
    validate_read_ahead(config)?;
    validate_destage(config)
}

/// The background destaging keys apply to `destage = "background"` only; the marks are
/// fractions with low below high.
fn validate_destage(config: &Config) -> Result<(), ConfigError> {
    let c = &config.cache;
    let background = c.destage.unwrap_or_default() == Destage::Background;
    let set = [
        ("cache.dirty_high_watermark", c.dirty_high_watermark.is_some()),
        ("cache.dirty_low_watermark", c.dirty_low_watermark.is_some()),
        ("cache.idle_destage_after", c.idle_destage_after.is_some()),
        ("cache.destage_pages_in_flight", c.destage_pages_in_flight.is_some()),
    ];
    if !background {
        if let Some((key, _)) = set.iter().find(|(_, on)| *on) {
            let mode = if c.destage == Some(Destage::ColdAtOnce) { "cold-at-once" } else { "when-full" };
            return Err(ConfigError::new(
                *key,
                format!(
                    "applies to cache.destage = \"background\" only, and this config destages \"{mode}\"{}",
                    if config.compat == super::Compat::Mqsim {
                        " (compat = \"mqsim\" chooses \"cold-at-once\" unless cache.destage is set)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        return Ok(());
    }
    let (high, low) = c.dirty_watermarks();
    for (key, v) in [("cache.dirty_high_watermark", high), ("cache.dirty_low_watermark", low)] {
        if !(v > 0.0 && v <= 1.0) {
            return Err(ConfigError::new(
                key,
                format!("must be a fraction of the cache above 0 and at most 1, got {v}"),
            ));
        }
    }
    if low >= high {
        return Err(ConfigError::new(
            "cache.dirty_low_watermark",
            format!("must be below cache.dirty_high_watermark ({high}), got {low}"),
        ));
    }
    if c.idle_destage_after.as_ref().is_some_and(|d| d.value == 0) {
        return Err(ConfigError::new("cache.idle_destage_after", "must be greater than zero"));
    }
    if c.destage_pages_in_flight == Some(0) {
        return Err(ConfigError::new("cache.destage_pages_in_flight", "must be at least 1, got 0"));
    }
    Ok(())
}

fn validate_read_ahead(config: &Config) -> Result<(), ConfigError> {
    let c = &config.cache;
    // The other read-ahead keys may stay set while it is off, so a sweep can toggle it alone.
    if !c.read_ahead {
        return Ok(());
    }
    if !config.flows.iter().any(|f| f.cache_mode.unwrap_or_default().caches_reads()) {
        return Err(ConfigError::new(
            "cache.read_ahead",
            "read-ahead fills the cache for flows that cache reads, but no flow has cache_mode = \"read\" or \"write-read\"",
        ));
    }
    if let Some(pages) = c.read_ahead_pages {
        let partitions = if c.sharing == Sharing::Partitioned { config.flows.len().max(1) as u64 } else { 1 };
        let held = c.capacity.value / config.flash.page_size.value / partitions;
        if pages == 0 || pages as u64 > held {
            return Err(ConfigError::new(
                "cache.read_ahead_pages",
                format!("must be between 1 and the {held} pages a flow's cache holds, got {pages}"),
            ));
        }
    }
    Ok(())
}
