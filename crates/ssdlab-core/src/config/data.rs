//! `[data]`: data transfer emulation (see `crate::data` and docs/data-emulation.md). Off by
//! default: the model then moves no bytes, only times their transfers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ConfigError, Size};

/// Data transfer emulation: the device keeps the bytes the host writes, where the FTL puts them,
/// and every host read is checked against what the host last wrote.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct DataConfig {
    /// Store the bytes of every host write in the flash pages (and cache lines) the FTL gives
    /// them, move them with GC and wear leveling, drop them on erase, and check every host read
    /// against the host's last write (results.json `data`). Default false: the timing model
    /// needs no bytes, and keeping them costs memory and time (see docs/data-emulation.md).
    pub emulate: bool,
    /// Memory the stored pages may take (whole pages, e.g. "256MiB"); pages beyond it go to a
    /// spill file. Default 256MiB: a small share of a laptop's memory that holds every page of
    /// the small devices tests and studies of FTL correctness use, while a large device spills.
    pub memory_limit: Size,
    /// Folder for the spill file, relative to the config file's folder. The file is removed as
    /// soon as it is opened (it lives only while the run does). Default: the system's temporary
    /// folder (`TMPDIR`, or /tmp), fine unless that is a RAM disk or too small for the pages
    /// written beyond `memory_limit`.
    pub spill_dir: Option<String>,
    /// A file holding the device's logical contents (an image of its sectors, relative to the
    /// config file's folder): a device built with it starts with the file's data mapped and
    /// stored (a missing file is an empty device), and `Device::persist` (`ssdlab.Device.persist`,
    /// `ssdlab_device_persist`) writes the contents back, so a device can be reopened with its
    /// data (docs/embedding.md). Needs `emulate` and page mapping.
    pub backing_file: Option<String>,
}

impl Default for DataConfig {
    fn default() -> Self {
        Self { emulate: false, memory_limit: Size::lit("256MiB"), spill_dir: None, backing_file: None }
    }
}

impl DataConfig {
    /// Checks the section against the page size (a page is the unit stored).
    pub fn validate(&self, page_size_bytes: u64) -> Result<(), ConfigError> {
        if self.spill_dir.as_deref().is_some_and(|d| d.trim().is_empty()) {
            return Err(ConfigError::new(
                "data.spill_dir",
                "must name a folder (leave it out for the system's temporary folder)",
            ));
        }
        if let Some(file) = &self.backing_file {
            if file.trim().is_empty() {
                return Err(ConfigError::new("data.backing_file", "must name a file"));
            }
            if !self.emulate {
                return Err(ConfigError::new(
                    "data.backing_file",
                    "needs data.emulate = true: without it the device keeps no bytes to persist",
                ));
            }
        }
        if !self.emulate {
            return Ok(());
        }
        if self.memory_limit.value < page_size_bytes {
            return Err(ConfigError::new(
                "data.memory_limit",
                format!(
                    "must hold at least one page ({page_size_bytes} bytes, flash.page_size), got {} ({} bytes)",
                    self.memory_limit.text, self.memory_limit.value
                ),
            ));
        }
        Ok(())
    }
}
