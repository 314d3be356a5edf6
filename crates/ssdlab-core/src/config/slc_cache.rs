//! `[flash.slc_cache]`: a pseudo-SLC write cache on multi-bit flash (see `ftl/blocks.rs` and
//! `sim/flash_path.rs`): blocks programmed one bit per cell take host writes fast, and their data
//! is folded into the dense cells later.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::Duration;
use super::ConfigError;

/// See [`super::flash::FlashConfig::slc_cache`].
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SlcCacheConfig {
    /// `dynamic` (default): each plane may hold up to `blocks_per_plane` SLC blocks, fewer as
    /// the drive fills (never more than its erased blocks beyond the GC reserve, so the cache
    /// shrinks to nothing on a full drive); `static`: always up to `blocks_per_plane`, the space
    /// set aside from the over-provisioning.
    pub mode: SlcCacheMode,
    /// Most SLC blocks per plane (default 32). Each holds `pages_per_block / bits per cell`
    /// pages: the rest of the block is unused until it is erased.
    pub blocks_per_plane: u32,
    /// Cell read and program time of an SLC page (defaults "30us" and "150us", the range of
    /// pseudo-SLC modes on current TLC and QLC parts).
    pub read: Duration,
    pub program: Duration,
    /// Fraction of a plane's cache in use at which folding starts (default 0.75): the oldest SLC
    /// block's data moves to the dense cells and the block is erased, one block at a time per
    /// plane, beside host writes. When the cache is full, host writes go to the dense cells
    /// directly (the write cliff) until folding frees SLC blocks.
    pub fold_threshold: f64,
}

/// See [`SlcCacheConfig::mode`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SlcCacheMode {
    #[default]
    Dynamic,
    Static,
}

impl Default for SlcCacheConfig {
    fn default() -> Self {
        Self {
            mode: SlcCacheMode::Dynamic,
            blocks_per_plane: 32,
            read: Duration::lit("30us"),
            program: Duration::lit("150us"),
            fold_threshold: 0.75,
        }
    }
}

/// The cache needs multi-bit cells, blocks to spare and positive latencies; a static cache
/// must fit in the spare space beside the GC reserve.
pub(super) fn validate(config: &super::Config) -> Result<(), ConfigError> {
    let Some(c) = &config.flash.slc_cache else { return Ok(()) };
    let f = &config.flash;
    let err = |key: &str, reason: String| Err(ConfigError::new(format!("flash.slc_cache.{key}"), reason));
    if f.technology.bits_per_cell() < 2 {
        return Err(ConfigError::new(
            "flash.slc_cache",
            "an SLC cache needs multi-bit cells (flash.technology MLC, TLC or QLC); SLC flash is already SLC",
        ));
    }
    if c.blocks_per_plane == 0 || c.blocks_per_plane >= f.blocks_per_plane {
        return err(
            "blocks_per_plane",
            format!(
                "must be at least 1 and below flash.blocks_per_plane ({}), got {}",
                f.blocks_per_plane, c.blocks_per_plane
            ),
        );
    }
    if !f.pages_per_block.is_multiple_of(f.technology.bits_per_cell()) {
        return err(
            "blocks_per_plane",
            format!(
                "an SLC block holds pages_per_block / bits per cell pages: {} pages do not divide by {}",
                f.pages_per_block,
                f.technology.bits_per_cell()
            ),
        );
    }
    for (key, d) in [("read", &c.read), ("program", &c.program)] {
        if d.value == 0 {
            return err(key, "must be greater than zero".into());
        }
    }
    if !(c.fold_threshold > 0.0 && c.fold_threshold <= 1.0) {
        return err("fold_threshold", format!("must be above 0 and at most 1, got {}", c.fold_threshold));
    }
    if c.mode == SlcCacheMode::Static {
        // A full cache leaves (1 - 1/bits) of each of its blocks unused: that space comes from
        // the spare blocks, beside the GC reserve.
        let spare = (f.blocks_per_plane as f64 * config.ftl.over_provisioning).floor() as u32;
        let reserve = (config.ftl.gc_threshold * f.blocks_per_plane as f64).ceil() as u32 + 2;
        if c.blocks_per_plane + reserve > spare {
            return err(
                "blocks_per_plane",
                format!(
                    "a static cache of {} blocks per plane needs that many spare blocks beside the GC reserve of {reserve}, but over-provisioning leaves {spare}: raise ftl.over_provisioning or use mode = \"dynamic\"",
                    c.blocks_per_plane
                ),
            );
        }
    }
    Ok(())
}
