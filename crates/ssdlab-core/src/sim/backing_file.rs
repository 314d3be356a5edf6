//! `[data] backing_file`: the device's logical contents kept in a file between runs, so a device
//! (the stepping API's, the live device's) can be reopened with its data. The file is an image of
//! the logical sectors (offset = sector x 512), sparse where nothing is stored.
//!
//! Loading maps each non-zero page of the image that preconditioning left unmapped onto its home
//! plane, without simulated time (as preconditioning places data), and stores its bytes there;
//! persisting writes every page a read would return non-zero into a new file that replaces the
//! old one only once complete.

use std::fs::File;
use std::io::Read;
#[cfg(not(unix))]
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::{SimError, Simulation};
use crate::config::ConfigError;
use crate::ftl::blocks::Stream;
use crate::ftl::mapping::UNMAPPED;

fn error(reason: String) -> SimError {
    ConfigError::new("data.backing_file", reason).into()
}

impl Simulation {
    /// The backing file's path, when the config names one.
    pub(crate) fn backing_path(&self) -> Option<PathBuf> {
        self.backing_file.clone()
    }

    /// Loads the backing file's image, if there is one (a missing file is an empty device).
    pub(super) fn load_backing_file(&mut self) -> Result<(), SimError> {
        let Some(path) = self.backing_path() else { return Ok(()) };
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(error(format!("cannot read {}: {e}", path.display()))),
        };
        let g = &self.ftl.geometry;
        let page_bytes = (g.sectors_per_page * crate::flash::SECTOR_BYTES) as usize;
        let logical_bytes = g.logical_pages * page_bytes as u64;
        let length = file.metadata().map_err(|e| error(format!("{}: {e}", path.display())))?.len();
        if length > logical_bytes {
            return Err(error(format!(
                "{} holds {length} bytes but the device has {logical_bytes} ({} logical pages of {page_bytes} bytes); it was written by a larger device",
                path.display(),
                g.logical_pages
            )));
        }
        // Loading is setup, not host traffic: the FTL's counters stay as preconditioning left them.
        let stats = self.ftl.stats.clone();
        let mut page = vec![0u8; page_bytes];
        let mut lpa = 0u32;
        loop {
            let got = read_full(&mut file, &mut page).map_err(|e| error(format!("{}: {e}", path.display())))?;
            if got == 0 {
                break;
            }
            page[got..].fill(0);
            if page.iter().any(|&b| b != 0) {
                let mut ppa = self.ftl.map.lookup(lpa);
                if ppa == UNMAPPED {
                    let plane = self.ftl.home_plane(lpa as u64);
                    if !self.ftl.can_write(plane, 0) {
                        return Err(error(format!(
                            "{} holds more data than plane {plane} has room for after preconditioning (lower precondition.occupancy)",
                            path.display()
                        )));
                    }
                    ppa = self.ftl.write(lpa, plane, Stream::USER, 0);
                }
                self.data
                    .as_deref_mut()
                    .expect("validated: a backing file needs data.emulate")
                    .load_page(lpa, ppa, &page);
                // Preconditioning may have warmed the cache with this page (as zeros, its
                // content then): flash holds its data now.
                self.cache.forget(lpa, u64::MAX, None);
            }
            lpa += 1;
        }
        self.ftl.stats = stats;
        Ok(())
    }

    /// Writes the device's logical contents (what reads return now) to the backing file.
    pub(crate) fn persist_backing_file(&mut self) -> Result<PathBuf, String> {
        let path = self.backing_path().ok_or("data.backing_file is not set: there is no file to persist to")?;
        let g = &self.ftl.geometry;
        let (spp, logical_pages) = (g.sectors_per_page, g.logical_pages);
        let page_bytes = spp * crate::flash::SECTOR_BYTES;
        let partial = path.with_extension(format!("tmp-{}", std::process::id()));
        let write = |sim: &mut Simulation| -> std::io::Result<()> {
            let mut file = File::create(&partial)?;
            file.set_len(logical_pages * page_bytes)?;
            for lpa in 0..logical_pages {
                let cached = sim.cache.partitions().iter().any(|p| p.sectors_of(lpa as u32) != 0);
                if sim.ftl.map.lookup(lpa as u32) == UNMAPPED && !cached {
                    continue;
                }
                let bytes = sim.read_back(lpa * spp, spp as u32).map_err(std::io::Error::other)?;
                if bytes.iter().any(|&b| b != 0) {
                    write_at(&mut file, &bytes, lpa * page_bytes)?;
                }
            }
            file.sync_all()?;
            std::fs::rename(&partial, &path)
        };
        write(self).map_err(|e| {
            let _ = std::fs::remove_file(&partial);
            format!("data.backing_file: cannot write {}: {e}", path.display())
        })?;
        Ok(path)
    }
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

#[cfg(unix)]
fn write_at(file: &mut File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    file.write_all_at(bytes, offset)
}

#[cfg(not(unix))]
fn write_at(file: &mut File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
}
