//! Faulting the mapping tables' pages in on a second thread.
//!
//! The map's tables are allocated untouched (memory from the OS as zero pages, issue 18), so the
//! kernel zeroes each table page at its first touch, on whichever thread touches it: that was
//! about half of a 32 TiB steady state and of a 512 GiB fill. Where the thread that places pages
//! is about to write a range anyway, a second thread can have the kernel fault it in
//! (`MADV_POPULATE_WRITE`) meanwhile. Only the kernel's page tables change: an entry reads the
//! same before and after, whichever thread got there first, so the results are the same byte
//! for byte, the memory taken is what the placement takes, and only wall time moves (to a
//! second core, where there is one).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where the map's tables lie in memory ([`super::mapping::PageMap::table_memory`],
/// [`super::mapping::PageMap::reverse_memory`]), to have their pages faulted in on another
/// thread ([`TableMemory::populate`]) while this one does other work. A 32 TiB drive's 11 GiB of
/// tables took about 13 s of the 35 s its steady state took, all of it on the one thread that
/// placed the pages, while the second core sat idle through the sample plane's aging.
#[derive(Clone, Debug)]
pub struct TableMemory {
    /// (address, bytes) of the parts of the tables to fault in, in the order they are faulted
    /// in (the order placement writes them).
    pub(super) ranges: Vec<(usize, usize)>,
}

/// Bytes the populating asks the kernel for at a time: it looks for a stop between two pieces.
const PIECE_BYTES: usize = 64 << 20;

impl TableMemory {
    /// Bytes of the ranges.
    pub fn bytes(&self) -> usize {
        self.ranges.iter().map(|r| r.1).sum()
    }

    /// Runs `work` on this thread while another one [populates](Self::populate) the tables, and
    /// stops that one as soon as `work` is done (it may not have finished: the owner's own
    /// writes fault in whatever is left).
    ///
    /// # Safety
    /// As for [`Self::populate`]: the tables stay allocated and are not replaced until this
    /// returns (`work` may write to them).
    pub unsafe fn while_populating<T>(&self, work: impl FnOnce() -> T) -> T {
        // SAFETY: the caller keeps the tables until this returns; the guard joins before that.
        let faulting = unsafe { self.clone().populate_in_background() };
        let done = work();
        drop(faulting);
        done
    }

    /// Starts [populating](Self::populate) on another thread, which the returned guard stops
    /// (between two pieces) and joins when dropped. Where no thread can be started nothing
    /// happens: the owner's writes fault the pages in, as without it.
    ///
    /// # Safety
    /// The tables must stay allocated and not be replaced until the guard is dropped.
    pub unsafe fn populate_in_background(self) -> Populating {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("ssdlab-table-faulting".into())
            // SAFETY: the caller keeps the tables until the guard's drop, which joins this thread.
            .spawn(move || unsafe { self.populate(&flag) })
            .ok();
        Populating { stop, thread }
    }

    /// Faults the pages of its ranges in, in order, a piece at a time, until done or until
    /// `stop` is set. Only the kernel's page tables change: an entry reads the same before and
    /// after, whether the thread that places the pages got there first or not. Advice only: a
    /// kernel without `MADV_POPULATE_WRITE` (before Linux 5.14) refuses it and nothing happens.
    ///
    /// # Safety
    /// The tables must stay allocated (the [`super::mapping::PageMap`] alive, its tables not
    /// replaced) until this returns: it holds their addresses, not a borrow, so that the owner
    /// may write to them meanwhile.
    pub unsafe fn populate(&self, stop: &AtomicBool) {
        #[cfg(target_os = "linux")]
        {
            const PAGE: usize = 4096;
            for &(start, len) in &self.ranges {
                // Whole pages: the last one may hold bytes past the table, which populating leaves
                // as they are too.
                let end = (start + len).next_multiple_of(PAGE);
                let mut at = start / PAGE * PAGE;
                while at < end {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let piece = PIECE_BYTES.min(end - at);
                    // SAFETY: [at, at + piece) lies within pages of the table's own allocation
                    // (rounded to whole pages, which the allocation's pages hold), which the caller
                    // keeps alive; populating changes no byte of it.
                    let refused =
                        unsafe { libc::madvise(at as *mut libc::c_void, piece, libc::MADV_POPULATE_WRITE) != 0 };
                    if refused {
                        return;
                    }
                    at += piece;
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (self, stop);
    }
}

/// A thread populating table memory ([`TableMemory::populate_in_background`]); dropping this
/// stops it at its next piece and waits for it.
pub struct Populating {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Populating {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            // It only calls madvise; were it to panic, the memory would be as it was.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `[start, start + len)` (whole pages inside it) resident in memory, from `mincore`.
    #[cfg(target_os = "linux")]
    fn resident_pages(start: usize, len: usize) -> usize {
        const PAGE: usize = 4096;
        let (first, end) = (start.next_multiple_of(PAGE), (start + len) / PAGE * PAGE);
        let mut resident = vec![0u8; (end - first) / PAGE];
        // SAFETY: the range is mapped (inside a live allocation) and the vector has a byte per page.
        let status = unsafe { libc::mincore(first as *mut libc::c_void, end - first, resident.as_mut_ptr()) };
        assert_eq!(status, 0, "mincore");
        resident.iter().filter(|&&r| r & 1 == 1).count()
    }

    /// A new private anonymous mapping of `len` bytes (a heap allocation may reuse pages another
    /// test already touched); the caller unmaps it.
    #[cfg(target_os = "linux")]
    fn fresh_mapping(len: usize) -> *mut libc::c_void {
        // SAFETY: a new private anonymous mapping.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(start, libc::MAP_FAILED);
        start
    }

    /// A fresh mapping of `len` bytes and its memory as one range.
    #[cfg(target_os = "linux")]
    fn fresh_table(len: usize) -> (*mut libc::c_void, TableMemory) {
        let start = fresh_mapping(len);
        (start, TableMemory { ranges: vec![(start as usize, len)] })
    }

    /// Populating makes every page of its ranges resident; a stop asked for before it starts
    /// leaves them untouched.
    #[cfg(target_os = "linux")]
    #[test]
    fn populating_faults_pages_in_and_stops_when_asked() {
        let len = 16usize << 20;
        let (start, memory) = fresh_table(len);
        let pages = len / 4096;
        // SAFETY: the mapping outlives both calls.
        unsafe { memory.populate(&AtomicBool::new(true)) };
        assert_eq!(resident_pages(start as usize, len), 0, "a stopped populate faulted pages in");
        // SAFETY: as above.
        unsafe { memory.populate(&AtomicBool::new(false)) };
        assert_eq!(resident_pages(start as usize, len), pages, "populate left pages out");
        // SAFETY: the mapping made above, no longer used.
        assert_eq!(unsafe { libc::munmap(start, len) }, 0);
    }

    /// A range that starts and ends inside pages faults in the pages it touches, and only those
    /// of the mapping's pages (the reverse entries of a fill's runs start anywhere).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_range_inside_pages_faults_in_the_pages_it_touches() {
        let len = 64 * 4096;
        let start = fresh_mapping(len);
        // From the middle of page 3 to the middle of page 9: pages 3 to 9.
        let memory = TableMemory { ranges: vec![(start as usize + 3 * 4096 + 100, 6 * 4096)] };
        // SAFETY: the mapping outlives the call.
        unsafe { memory.populate(&AtomicBool::new(false)) };
        assert_eq!(resident_pages(start as usize, len), 7);
        assert_eq!(resident_pages(start as usize + 3 * 4096, 7 * 4096), 7);
        // SAFETY: the mapping made above, no longer used.
        assert_eq!(unsafe { libc::munmap(start, len) }, 0);
    }

    /// The background thread faults every page in when left to finish, and once its guard is
    /// dropped it is over: no page comes in after.
    #[cfg(target_os = "linux")]
    #[test]
    fn populating_in_background_fills_the_ranges_and_ends_with_its_guard() {
        let len = 16usize << 20;
        let (start, memory) = fresh_table(len);
        // SAFETY: the mapping outlives the guard.
        let guard = unsafe { memory.clone().populate_in_background() };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while resident_pages(start as usize, len) < len / 4096 {
            assert!(std::time::Instant::now() < deadline, "the pages were never faulted in");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(guard);
        // SAFETY: the mapping made above; the thread is joined.
        assert_eq!(unsafe { libc::munmap(start, len) }, 0);

        let (start, memory) = fresh_table(len);
        // SAFETY: as above.
        drop(unsafe { memory.populate_in_background() });
        let resident = resident_pages(start as usize, len);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(resident_pages(start as usize, len), resident, "a dropped populating went on");
        // SAFETY: as above.
        assert_eq!(unsafe { libc::munmap(start, len) }, 0);
    }
}
