//! Preconditioning: the device state a run starts from.
//!
//! A fresh simulated drive never garbage-collects and reports numbers no real drive in service
//! shows. `steady` (the default) reaches steady state without simulating the writes: one plane
//! per group of planes that see the same flows is aged by the workload's write-address
//! distribution through the real FTL code (the configured GC policy, wear leveling and GC
//! threshold), untimed, and every plane of the group takes that plane's state. `simulate`
//! writes the same stream through the timed model instead (slow: the ground truth `steady` is
//! validated against). See docs/steady-state.md.

mod steady;

pub use steady::{age_sample, steady_state, SteadyOutcome, INTERRUPTED, PROGRESS_PAGES};

use serde::{Deserialize, Serialize};

use crate::ftl::blocks::BlockState;
use crate::ftl::Ftl;

/// Where one flow writes, in logical pages of the whole device (its domain offset applied).
#[derive(Clone, Debug, PartialEq)]
pub enum WriteDist {
    Uniform {
        first: u64,
        end: u64,
    },
    /// `[first, hot_end)` gets `hot_traffic` of the writes, `[hot_end, end)` the rest.
    HotCold {
        first: u64,
        hot_end: u64,
        end: u64,
        hot_traffic: f64,
    },
    Sequential {
        first: u64,
        end: u64,
    },
    /// Writes per page, sorted by page (a trace's pre-scanned histogram).
    Counts {
        pages: Vec<(u64, u32)>,
    },
}

/// What preconditioning needs to know about a flow.
#[derive(Clone, Debug)]
pub struct FlowModel {
    /// Share of all page writes (any unit: only ratios matter).
    pub weight: f64,
    pub writes: WriteDist,
    /// Logical pages the flow addresses (reads or writes): they hold data in steady state.
    pub addressed: Addressed,
    /// Planes the flow's writes go to (its stripe, each plane once).
    pub planes: Vec<u32>,
}

#[derive(Clone, Debug)]
pub enum Addressed {
    Range {
        first: u64,
        end: u64,
    },
    /// Sorted, distinct pages.
    Pages(Vec<u64>),
}

/// The `precondition` section of results.json.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PreconditionSummary {
    pub mode: String,
    /// Wall time spent preconditioning (part of `setup_wall_seconds`).
    pub wall_seconds: f64,
    /// Written blocks (full or open) by their fraction of valid pages.
    pub valid_fraction_histogram: ValidHistogram,
    /// Erased blocks over the whole device at the start of the run.
    pub free_blocks: u64,
    /// Fraction of the data cache's lines holding data at the start of the run.
    pub cache_fill: f64,
    /// Fraction of the cached mapping table's entries filled at the start of the run.
    pub cmt_fill: f64,
    /// Logical pages holding data at the start of the run.
    pub mapped_pages: u64,
    /// How full the drive started: `mapped_pages` over the logical pages the host can address.
    #[serde(default)]
    pub occupancy: f64,
    /// Host page writes per page of data the aging wrote (`drive_writes`; 0 for fill and none).
    pub drive_writes: f64,
    /// Write amplification of the aging writes (GC moves included; null when nothing was
    /// written): for `steady`, the sample planes' prediction of the run's steady-state value.
    #[serde(deserialize_with = "crate::stats::results::undefined::nan_if_null")]
    pub write_amplification: f64,
    /// Planes aged one by one (`steady`): one per group of planes that see the same flows.
    pub sample_planes: u32,
}

/// Counts of written blocks by valid-page fraction, in equal bins over [0, 1].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ValidHistogram {
    /// Bin edges (one more than `blocks`); the last bin includes 1.
    pub edges: Vec<f64>,
    pub blocks: Vec<u64>,
}

const HISTOGRAM_BINS: usize = 20;

impl ValidHistogram {
    pub fn of(ftl: &Ftl) -> Self {
        let ppb = ftl.geometry.pages_per_block as f64;
        let mut blocks = vec![0u64; HISTOGRAM_BINS];
        for plane in 0..ftl.geometry.planes {
            let (_, states, valid) = ftl.blocks.plane_view(plane);
            for (&s, &v) in states.iter().zip(valid) {
                if matches!(s, BlockState::Full | BlockState::Open | BlockState::Victim | BlockState::Zoned) {
                    let bin = ((v as f64 / ppb) * HISTOGRAM_BINS as f64) as usize;
                    blocks[bin.min(HISTOGRAM_BINS - 1)] += 1;
                }
            }
        }
        let edges = (0..=HISTOGRAM_BINS).map(|i| i as f64 / HISTOGRAM_BINS as f64).collect();
        Self { edges, blocks }
    }
}

/// A set of logical pages (the union of what the flows address): its runs of consecutive
/// pages while they are few, else a bit map. A preconditioned drive's data is usually a few
/// runs (the occupied prefix, the flows' working sets, the translation pages), and a bit map of
/// a 32 TiB drive's 2 G logical pages would take 250 MB, the margin between its steady state
/// fitting 12 GiB or not (issue 18).
pub struct PageSet {
    form: SetForm,
    pages: u64,
}

enum SetForm {
    /// Maximal runs `[first, end)` of consecutive pages, in increasing order, none adjacent.
    Runs(Vec<(u64, u64)>),
    /// One bit per page.
    Bits(Vec<u64>),
}

/// Past this many runs a set becomes a bit map (inserting into the middle of a long list of
/// runs moves its tail).
const MAX_SET_RUNS: usize = 4096;

impl PageSet {
    pub fn new(pages: u64) -> Self {
        Self { form: SetForm::Runs(Vec::new()), pages }
    }

    pub fn insert_range(&mut self, first: u64, end: u64) {
        let end = end.min(self.pages);
        if first >= end {
            return;
        }
        match &mut self.form {
            SetForm::Runs(runs) => {
                // The runs that touch [first, end) (overlapping or adjacent) merge with it.
                let lo = runs.partition_point(|&(_, e)| e < first);
                let hi = runs.partition_point(|&(s, _)| s <= end);
                if lo == hi {
                    runs.insert(lo, (first, end));
                } else {
                    let merged = (runs[lo].0.min(first), runs[hi - 1].1.max(end));
                    runs.splice(lo..hi, [merged]);
                }
                if runs.len() > MAX_SET_RUNS {
                    self.become_bits();
                }
            }
            SetForm::Bits(words) => {
                let mut p = first;
                while p < end {
                    if p.is_multiple_of(64) && p + 64 <= end {
                        words[(p / 64) as usize] = u64::MAX;
                        p += 64;
                    } else {
                        words[(p / 64) as usize] |= 1 << (p % 64);
                        p += 1;
                    }
                }
            }
        }
    }

    /// Turns the runs into a bit map.
    fn become_bits(&mut self) {
        let SetForm::Runs(runs) = std::mem::replace(&mut self.form, SetForm::Bits(Vec::new())) else { return };
        self.form = SetForm::Bits(vec![0; self.pages.div_ceil(64) as usize]);
        for (first, end) in runs {
            self.insert_range(first, end);
        }
    }

    pub fn insert(&mut self, page: u64) {
        match &mut self.form {
            SetForm::Bits(words) if page < self.pages => words[(page / 64) as usize] |= 1 << (page % 64),
            SetForm::Bits(_) => {}
            SetForm::Runs(_) => self.insert_range(page, page + 1),
        }
    }

    #[inline]
    pub fn contains(&self, page: u64) -> bool {
        match &self.form {
            SetForm::Runs(runs) => {
                let i = runs.partition_point(|&(_, e)| e <= page);
                runs.get(i).is_some_and(|&(s, _)| s <= page)
            }
            SetForm::Bits(words) => page < self.pages && words[(page / 64) as usize] & (1 << (page % 64)) != 0,
        }
    }

    /// The set as its maximal runs of consecutive pages, `[first, end)` in increasing order, or
    /// `None` when it has more than `limit` of them. Walking runs rather than testing every
    /// page's bit is what keeps a pass over a plane's pages from reading the whole set once
    /// per plane.
    pub fn runs(&self, limit: usize) -> Option<Vec<(u64, u64)>> {
        match &self.form {
            SetForm::Runs(runs) => (runs.len() <= limit).then(|| runs.clone()),
            SetForm::Bits(words) => runs_of_bits(words, limit),
        }
    }

    /// The pages the set can hold (one past the largest page it may contain).
    pub fn universe(&self) -> u64 {
        self.pages
    }

    pub fn len(&self) -> u64 {
        match &self.form {
            SetForm::Runs(runs) => runs.iter().map(|&(s, e)| e - s).sum(),
            SetForm::Bits(words) => words.iter().map(|w| w.count_ones() as u64).sum(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match &self.form {
            SetForm::Runs(runs) => runs.is_empty(),
            SetForm::Bits(words) => words.iter().all(|&w| w == 0),
        }
    }

    /// Calls `f` with every page in the set, in increasing order.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(u64)) {
        match &self.form {
            SetForm::Runs(runs) => runs.iter().for_each(|&(s, e)| (s..e).for_each(&mut f)),
            SetForm::Bits(words) => {
                for (i, &word) in words.iter().enumerate() {
                    let mut w = word;
                    while w != 0 {
                        f(i as u64 * 64 + w.trailing_zeros() as u64);
                        w &= w - 1;
                    }
                }
            }
        }
    }
}

/// [`PageSet::runs`] of a bit map.
fn runs_of_bits(words: &[u64], limit: usize) -> Option<Vec<(u64, u64)>> {
    let mut runs = Vec::new();
    let mut start: Option<u64> = None;
    let close = |start: &mut Option<u64>, end: u64, runs: &mut Vec<(u64, u64)>| {
        if let Some(first) = start.take() {
            runs.push((first, end));
        }
    };
    for (i, &word) in words.iter().enumerate() {
        let base = i as u64 * 64;
        match word {
            0 => close(&mut start, base, &mut runs),
            u64::MAX => {
                start.get_or_insert(base);
            }
            _ => {
                let mut bit = 0u32;
                while bit < 64 {
                    // The bits from `bit` up; the shift fills the top with zeros.
                    let rest = word >> bit;
                    if start.is_some() {
                        bit += rest.trailing_ones();
                        if bit < 64 {
                            close(&mut start, base + bit as u64, &mut runs);
                        }
                    } else if rest == 0 {
                        bit = 64;
                    } else {
                        bit += rest.trailing_zeros();
                        start = Some(base + bit as u64);
                    }
                }
            }
        }
        if runs.len() > limit {
            return None;
        }
    }
    close(&mut start, words.len() as u64 * 64, &mut runs);
    (runs.len() <= limit).then_some(runs)
}

#[cfg(test)]
mod tests {
    use super::{PageSet, SetForm, MAX_SET_RUNS};

    /// The runs of `set` as `for_each` sees them, one page at a time.
    fn runs_by_page(set: &PageSet) -> Vec<(u64, u64)> {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        set.for_each(|p| match runs.last_mut() {
            Some(last) if last.1 == p => last.1 = p + 1,
            _ => runs.push((p, p + 1)),
        });
        runs
    }

    #[test]
    fn runs_are_the_maximal_runs_of_consecutive_pages() {
        let mut sets = Vec::new();
        for pages in [1u64, 63, 64, 65, 200, 1000] {
            sets.push(PageSet::new(pages)); // empty
            let mut full = PageSet::new(pages);
            full.insert_range(0, pages);
            sets.push(full);
            for stride in [2u64, 3, 7, 64, 65] {
                let mut s = PageSet::new(pages);
                (0..pages).filter(|p| p % stride == 0).for_each(|p| s.insert(p));
                s.insert_range(pages / 3, pages / 2); // a run across word boundaries
                s.insert(pages - 1); // the last page
                sets.push(s);
            }
        }
        // The same sets as bit maps: more than MAX_SET_RUNS single pages, then removed from
        // consideration by building each set again after a forced conversion.
        let mut as_bits = Vec::new();
        for set in &sets {
            let mut b = PageSet::new(set.pages);
            b.become_bits();
            set.for_each(|p| b.insert(p));
            assert!(matches!(b.form, SetForm::Bits(_)));
            as_bits.push(b);
        }
        sets.extend(as_bits);
        for set in &sets {
            let expected = runs_by_page(set);
            assert_eq!(set.runs(usize::MAX).unwrap(), expected, "{} pages", set.pages);
            assert_eq!(set.runs(expected.len()).unwrap(), expected);
            if !expected.is_empty() {
                assert_eq!(set.runs(expected.len() - 1), None, "over the limit");
            }
            for p in 0..set.pages + 2 {
                assert_eq!(set.contains(p), expected.iter().any(|&(a, b)| (a..b).contains(&p)));
            }
            assert_eq!(set.len(), expected.iter().map(|&(a, b)| b - a).sum::<u64>());
            assert_eq!(set.is_empty(), expected.is_empty());
        }
    }

    /// Ranges inserted out of order, overlapping and adjacent merge into the same runs a bit
    /// map gives, and a set of scattered pages past the runs' limit becomes a bit map.
    #[test]
    fn runs_merge_overlapping_and_adjacent_ranges_in_any_order() {
        let ranges = [(50u64, 60u64), (10, 20), (20, 25), (58, 70), (0, 1), (30, 31), (29, 30), (5, 12), (100, 90)];
        let mut runs = PageSet::new(80);
        let mut bits = PageSet::new(80);
        bits.become_bits();
        for &(a, b) in &ranges {
            runs.insert_range(a, b);
            bits.insert_range(a, b);
        }
        assert!(matches!(runs.form, SetForm::Runs(_)));
        assert_eq!(runs.runs(usize::MAX).unwrap(), vec![(0, 1), (5, 25), (29, 31), (50, 70)]);
        assert_eq!(runs.runs(usize::MAX), bits.runs(usize::MAX));
        let mut scattered = PageSet::new(100_000);
        (0..(MAX_SET_RUNS as u64 + 10)).rev().for_each(|i| scattered.insert(i * 3));
        assert!(matches!(scattered.form, SetForm::Bits(_)));
        assert_eq!(scattered.len(), MAX_SET_RUNS as u64 + 10);
        assert!(scattered.contains(3 * 17) && !scattered.contains(3 * 17 + 1));
    }
}
