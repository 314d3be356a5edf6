//! The bytes of stored pages, keyed by where they are (a physical page, or a cache line): sparse
//! (a page takes memory only once written), held in memory up to a budget and beyond it in a
//! spill file of page-sized slots with a free list.
//!
//! Pages do not move between memory and the file: a new page takes a free memory slot if the
//! budget has one, else a file slot; an overwrite stays where the page is. Hot pages are then not
//! kept in memory on purpose, but the operating system's page cache keeps a spill file that fits
//! in memory there anyway, and correctness, not speed, is what the emulation is for.

use std::fs::File;
#[cfg(not(unix))]
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

#[derive(Clone, Copy, Debug)]
enum Slot {
    Memory(u32),
    File(u32),
}

struct Spill {
    file: File,
    /// Slots the file has (its length in pages).
    slots: u32,
    free: Vec<u32>,
}

pub struct PageStore {
    page_bytes: usize,
    memory_slots_limit: usize,
    index: FxHashMap<u64, Slot>,
    memory: Vec<Box<[u8]>>,
    free_memory: Vec<u32>,
    spill_dir: PathBuf,
    spill: Option<Spill>,
    spilled: u64,
    /// The first I/O error on the spill file; the store is unusable after it.
    error: Option<String>,
}

impl PageStore {
    /// A store of `page_bytes`-byte pages holding at most `memory_limit_bytes` of them in memory;
    /// more go to a file created in `spill_dir` when first needed.
    pub fn new(page_bytes: usize, memory_limit_bytes: u64, spill_dir: PathBuf) -> Self {
        Self {
            page_bytes,
            memory_slots_limit: (memory_limit_bytes / page_bytes as u64) as usize,
            index: FxHashMap::default(),
            memory: Vec::new(),
            free_memory: Vec::new(),
            spill_dir,
            spill: None,
            spilled: 0,
            error: None,
        }
    }

    pub fn page_bytes(&self) -> usize {
        self.page_bytes
    }

    /// Pages stored now (in memory and in the file).
    pub fn stored_pages(&self) -> u64 {
        self.index.len() as u64
    }

    /// Pages stored in the spill file now.
    pub fn spilled_pages(&self) -> u64 {
        self.spilled
    }

    /// Bytes of memory the stored pages take (the budget bounds it).
    pub fn memory_bytes(&self) -> u64 {
        (self.memory.len() * self.page_bytes) as u64
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn contains(&self, key: u64) -> bool {
        self.index.contains_key(&key)
    }

    /// Copies the page at `key` into `out` and returns true, or fills `out` with zeros and
    /// returns false when nothing is stored there.
    pub fn read(&mut self, key: u64, out: &mut [u8]) -> bool {
        debug_assert_eq!(out.len(), self.page_bytes);
        match self.index.get(&key) {
            Some(&Slot::Memory(s)) => {
                out.copy_from_slice(&self.memory[s as usize]);
                true
            }
            Some(&Slot::File(s)) => {
                let offset = s as u64 * self.page_bytes as u64;
                let result = match &mut self.spill {
                    Some(spill) => read_at(&mut spill.file, out, offset),
                    None => Ok(()),
                };
                if let Err(e) = result {
                    self.fail(format!("cannot read the spill file: {e}"));
                    out.fill(0);
                }
                true
            }
            None => {
                out.fill(0);
                false
            }
        }
    }

    /// Stores `page` at `key`, replacing what was there.
    pub fn write(&mut self, key: u64, page: &[u8]) {
        debug_assert_eq!(page.len(), self.page_bytes);
        let slot = match self.index.get(&key) {
            Some(&slot) => slot,
            None => match self.new_slot() {
                Some(slot) => {
                    self.index.insert(key, slot);
                    slot
                }
                None => return,
            },
        };
        match slot {
            Slot::Memory(s) => self.memory[s as usize].copy_from_slice(page),
            Slot::File(s) => {
                let offset = s as u64 * self.page_bytes as u64;
                let spill = self.spill.as_mut().expect("a file slot has a file");
                if let Err(e) = write_at(&mut spill.file, page, offset) {
                    self.fail(format!("cannot write the spill file: {e}"));
                }
            }
        }
    }

    /// Forgets the page at `key` (its slot is reused).
    pub fn remove(&mut self, key: u64) {
        match self.index.remove(&key) {
            Some(Slot::Memory(s)) => self.free_memory.push(s),
            Some(Slot::File(s)) => {
                self.spilled -= 1;
                self.spill.as_mut().expect("a file slot has a file").free.push(s);
            }
            None => {}
        }
    }

    /// Copies the page at `from` to `to` (`to` is forgotten when nothing is stored at `from`).
    pub fn copy(&mut self, from: u64, to: u64, scratch: &mut [u8]) {
        let Some(&source) = self.index.get(&from) else {
            self.remove(to);
            return;
        };
        if let Slot::Memory(a) = source {
            if !self.index.contains_key(&to) {
                let Some(slot) = self.new_slot() else { return };
                self.index.insert(to, slot);
            }
            if let Slot::Memory(b) = self.index[&to] {
                if a != b {
                    // Both in memory: one copy, no bounce through `scratch`.
                    let page = std::mem::take(&mut self.memory[a as usize]);
                    self.memory[b as usize].copy_from_slice(&page);
                    self.memory[a as usize] = page;
                }
                return;
            }
        }
        self.read(from, scratch);
        self.write(to, scratch);
    }

    /// Changes the page at `key` in place with `f` (a page not stored yet starts as zeros);
    /// `scratch` holds a page from the spill file meanwhile.
    pub fn update(&mut self, key: u64, scratch: &mut [u8], f: impl FnOnce(&mut [u8])) {
        if !self.index.contains_key(&key) {
            match self.new_slot() {
                Some(slot) => {
                    self.index.insert(key, slot);
                    if let Slot::Memory(s) = slot {
                        self.memory[s as usize].fill(0);
                    } else {
                        scratch.fill(0);
                        f(scratch);
                        self.write(key, scratch);
                        return;
                    }
                }
                None => return,
            }
        }
        match self.index[&key] {
            Slot::Memory(s) => f(&mut self.memory[s as usize]),
            Slot::File(_) => {
                self.read(key, scratch);
                f(scratch);
                self.write(key, scratch);
            }
        }
    }

    /// Flips one byte of a stored page (tests of the read check). Returns whether a page was there.
    pub fn corrupt(&mut self, key: u64, offset: usize) -> bool {
        let mut page = vec![0u8; self.page_bytes];
        if !self.read(key, &mut page) {
            return false;
        }
        page[offset % self.page_bytes] ^= 0x5A;
        self.write(key, &page);
        true
    }

    fn new_slot(&mut self) -> Option<Slot> {
        if let Some(s) = self.free_memory.pop() {
            return Some(Slot::Memory(s));
        }
        if self.memory.len() < self.memory_slots_limit {
            self.memory.push(vec![0u8; self.page_bytes].into_boxed_slice());
            return Some(Slot::Memory((self.memory.len() - 1) as u32));
        }
        if self.error.is_some() {
            return None;
        }
        if self.spill.is_none() {
            match open_spill_file(&self.spill_dir) {
                Ok(file) => self.spill = Some(Spill { file, slots: 0, free: Vec::new() }),
                Err(e) => {
                    self.fail(format!("cannot create a spill file in {}: {e}", self.spill_dir.display()));
                    return None;
                }
            }
        }
        let spill = self.spill.as_mut().expect("opened above");
        let s = spill.free.pop().unwrap_or_else(|| {
            spill.slots += 1;
            spill.slots - 1
        });
        self.spilled += 1;
        Some(Slot::File(s))
    }

    fn fail(&mut self, message: String) {
        if self.error.is_none() {
            self.error = Some(message);
        }
    }
}

/// One positioned read (`pread` on Unix: one system call, no seek).
fn read_at(file: &mut File, out: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, out, offset)
    }
    #[cfg(not(unix))]
    {
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(out)
    }
}

fn write_at(file: &mut File, page: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, page, offset)
    }
    #[cfg(not(unix))]
    {
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(page)
    }
}

/// A new file in `dir`, already unlinked (on Unix) so that nothing is left behind however the
/// run ends.
fn open_spill_file(dir: &Path) -> std::io::Result<File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("ssdlab-data-{}-{n}.pages", std::process::id()));
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
            Ok(file) => {
                // Windows cannot remove an open file; the file then stays until the user does.
                let _ = std::fs::remove_file(&path);
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(byte: u8) -> Vec<u8> {
        vec![byte; 64]
    }

    #[test]
    fn pages_read_back_after_write_overwrite_copy_and_remove() {
        let mut s = PageStore::new(64, 1 << 20, std::env::temp_dir());
        let mut out = page(9);
        assert!(!s.read(5, &mut out), "nothing stored yet");
        assert_eq!(out, page(0), "an empty page reads as zeros");
        s.write(5, &page(1));
        s.write(6, &page(2));
        assert!(s.read(5, &mut out));
        assert_eq!(out, page(1));
        s.write(5, &page(3));
        s.read(5, &mut out);
        assert_eq!(out, page(3), "overwrite");
        assert_eq!(s.stored_pages(), 2);
        let mut scratch = page(0);
        s.copy(6, 7, &mut scratch);
        s.read(7, &mut out);
        assert_eq!(out, page(2), "copy");
        s.remove(6);
        assert!(!s.read(6, &mut out));
        s.copy(6, 7, &mut scratch);
        assert!(!s.contains(7), "copying nothing forgets the target");
        assert_eq!(s.stored_pages(), 1);
        assert_eq!(s.spilled_pages(), 0);
        assert!(s.corrupt(5, 10));
        s.read(5, &mut out);
        assert_ne!(out, page(3));
    }

    #[test]
    fn pages_beyond_the_memory_budget_spill_to_a_file_and_read_back() {
        // Room for two pages in memory; the rest spill.
        let mut s = PageStore::new(64, 128, std::env::temp_dir());
        for k in 0..10u8 {
            s.write(k as u64, &page(k + 1));
        }
        assert_eq!(s.stored_pages(), 10);
        assert_eq!(s.spilled_pages(), 8);
        assert_eq!(s.memory_bytes(), 128, "memory stays within the budget");
        let mut out = page(0);
        for k in 0..10u8 {
            assert!(s.read(k as u64, &mut out));
            assert_eq!(out, page(k + 1), "page {k}");
        }
        // Overwrite in the file, free file slots and reuse them.
        s.write(9, &page(99));
        s.remove(3);
        s.remove(4);
        assert_eq!(s.spilled_pages(), 6);
        s.write(20, &page(20));
        s.write(21, &page(21));
        s.write(22, &page(22));
        assert_eq!(s.spill.as_ref().unwrap().slots, 9, "freed file slots are reused");
        for (k, v) in [(9, 99), (20, 20), (21, 21), (22, 22), (0, 1), (8, 9)] {
            s.read(k, &mut out);
            assert_eq!(out, page(v), "page {k}");
        }
        // A freed memory slot takes the next new page.
        s.remove(0);
        s.write(30, &page(30));
        assert_eq!(s.spilled_pages(), 9, "the new page took the freed memory slot");
        assert!(s.error().is_none());
    }

    #[test]
    fn an_unusable_spill_folder_is_reported_not_a_panic() {
        let mut s = PageStore::new(64, 64, PathBuf::from("/nonexistent/ssdlab/spill"));
        s.write(1, &page(1));
        s.write(2, &page(2));
        assert!(s.error().unwrap().contains("cannot create a spill file"), "{:?}", s.error());
        assert!(!s.contains(2));
    }
}
