//! The data cache's organisation and read-ahead (`[cache]` keys `organisation`, `ways`,
//! `line_size`, `replacement`, `read_ahead*`; see `crate::cache` and docs/cache.md). The
//! defaults are the cache ssdlab always had: fully associative, LRU, one flash page per line, no
//! read-ahead.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Config, ConfigError, Sharing};

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
    validate_read_ahead(config)
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
