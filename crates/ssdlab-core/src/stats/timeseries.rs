//! Completions, latency and GC activity per window of simulated time (`results.json`
//! `time_series`).
//!
//! Windows are aligned at time 0 and a request counts in the window in which it completes. With
//! `run.time_series_window` unset, windows start at [`INITIAL_WINDOW_PS`] and, whenever a run
//! would need more than [`ADAPTIVE_WINDOWS`] of them, adjacent pairs merge and the width doubles:
//! any run gets at most 512 points without knowing its length in advance. At the end, pairs keep
//! merging while more than [`MIN_WINDOWS`] remain and the device averages fewer than
//! [`MIN_COMPLETIONS_PER_WINDOW`] completions per window, so short runs are not plotted as noise.
//! An explicit window is kept as given, up to [`MAX_FIXED_WINDOWS`] windows (then it doubles too,
//! with a warning).
//!
//! The per-window p99 comes from a small log-linear histogram ([`LatencyBuckets`]): 16 buckets per
//! power of two of nanoseconds, so a reported p99 is the top of its bucket, at most 6.25 % above
//! the true value (and never above the window's exact maximum). Means are exact.
//!
//! GC counters (blocks erased, pages moved, host and flash page programs) are cumulative in the
//! FTL; they are sampled when a request completes and before a block is erased, and what
//! happened since the previous window's last sample is counted in that window. Recording a
//! completion costs a comparison, a few additions and a bucket index (no division, no
//! allocation); only the first completion of a new window does more.

use serde::{Deserialize, Serialize};

use crate::ftl::FtlStats;
use crate::time::{ps_to_seconds, SimTime, PS_PER_NS, PS_PER_US};

/// The first window of the adaptive series: 10 us.
pub const INITIAL_WINDOW_PS: SimTime = 10 * PS_PER_US;
/// Most windows of an adaptive series.
pub const ADAPTIVE_WINDOWS: usize = 512;
/// An explicit window is doubled beyond this many windows.
pub const MAX_FIXED_WINDOWS: usize = 4096;
/// End merging of adaptive series: keep at least this many windows...
pub const MIN_WINDOWS: usize = 64;
/// ...unless the device averages fewer completions per window than this.
pub const MIN_COMPLETIONS_PER_WINDOW: u64 = 16;

/// Sub-buckets per power of two (16: a bucket spans at most 1/16 of its lower bound).
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Powers of two of nanoseconds covered above the first 16 ns (2^44 ns is almost 5 hours; longer
/// latencies share the last bucket).
const OCTAVES: usize = 40;
/// Buckets of one window's latency histogram.
pub const BUCKETS: usize = SUB + OCTAVES * SUB;
/// Relative precision of a per-window p99 (reported in `time_series.p99_precision`).
pub const P99_PRECISION: f64 = 1.0 / SUB as f64;

/// Log-linear bucketing of latencies in nanoseconds.
pub struct LatencyBuckets;

impl LatencyBuckets {
    /// The bucket of a latency of `ns` nanoseconds: exact below 16 ns, then 16 per power of two.
    #[inline]
    pub fn index(ns: u64) -> usize {
        if ns < SUB as u64 {
            return ns as usize;
        }
        let exponent = 63 - ns.leading_zeros(); // >= SUB_BITS
        let mantissa = ((ns >> (exponent - SUB_BITS)) as usize) & (SUB - 1);
        let i = SUB + (exponent - SUB_BITS) as usize * SUB + mantissa;
        i.min(BUCKETS - 1)
    }

    /// The largest latency (ns) that falls in bucket `i`.
    pub fn upper_ns(i: usize) -> u64 {
        if i < SUB {
            return i as u64;
        }
        let octave = (i - SUB) / SUB;
        let mantissa = ((i - SUB) % SUB) as u64;
        ((SUB as u64 + mantissa + 1) << octave) - 1
    }
}

/// One flow's completions of one operation type in one window.
#[derive(Clone, Copy, Debug, Default)]
struct OpWindow {
    count: u64,
    bytes: u64,
    sum_ps: u128,
    max_ps: u64,
}

impl OpWindow {
    fn merge(&mut self, other: &OpWindow) {
        self.count += other.count;
        self.bytes += other.bytes;
        self.sum_ps += other.sum_ps;
        self.max_ps = self.max_ps.max(other.max_ps);
    }
}

/// The controller's cumulative activity the time series samples at window boundaries (the
/// power series needs it per window): the data cache's DRAM busy time, the cores' busy time
/// (firmware steps, or the fixed dispatch times without the firmware model) and the
/// instructions they executed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControllerCounters {
    pub dram_busy_ps: u64,
    pub cpu_busy_ps: u64,
    pub instructions: u64,
}

/// GC and controller activity in one window (differences of cumulative counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct GcWindow {
    blocks_erased: u64,
    pages_moved: u64,
    host_pages: u64,
    flash_pages: u64,
    read_retries: u64,
    read_reclaims: u64,
    slc_host_pages: u64,
    slc_pages_folded: u64,
    slc_blocks_opened: u64,
    slc_blocks_erased: u64,
    controller: ControllerCounters,
}

impl GcWindow {
    fn of(stats: &FtlStats, controller: ControllerCounters) -> Self {
        Self {
            blocks_erased: stats.blocks_erased,
            pages_moved: stats.gc_programs,
            host_pages: stats.user_programs,
            flash_pages: stats.user_programs + stats.gc_programs + stats.mapping_programs,
            read_retries: stats.read_retries,
            read_reclaims: stats.read_reclaims,
            slc_host_pages: stats.slc_host_pages,
            slc_pages_folded: stats.slc_pages_folded,
            slc_blocks_opened: stats.slc_blocks_opened,
            slc_blocks_erased: stats.slc_blocks_erased,
            controller,
        }
    }

    fn since(self, earlier: GcWindow) -> Self {
        let (c, e) = (self.controller, earlier.controller);
        Self {
            blocks_erased: self.blocks_erased - earlier.blocks_erased,
            pages_moved: self.pages_moved - earlier.pages_moved,
            host_pages: self.host_pages - earlier.host_pages,
            flash_pages: self.flash_pages - earlier.flash_pages,
            read_retries: self.read_retries - earlier.read_retries,
            read_reclaims: self.read_reclaims - earlier.read_reclaims,
            slc_host_pages: self.slc_host_pages - earlier.slc_host_pages,
            slc_pages_folded: self.slc_pages_folded - earlier.slc_pages_folded,
            slc_blocks_opened: self.slc_blocks_opened - earlier.slc_blocks_opened,
            slc_blocks_erased: self.slc_blocks_erased - earlier.slc_blocks_erased,
            controller: ControllerCounters {
                dram_busy_ps: c.dram_busy_ps - e.dram_busy_ps,
                cpu_busy_ps: c.cpu_busy_ps - e.cpu_busy_ps,
                instructions: c.instructions - e.instructions,
            },
        }
    }

    fn merge(&mut self, other: &GcWindow) {
        self.blocks_erased += other.blocks_erased;
        self.pages_moved += other.pages_moved;
        self.host_pages += other.host_pages;
        self.flash_pages += other.flash_pages;
        self.read_retries += other.read_retries;
        self.read_reclaims += other.read_reclaims;
        self.slc_host_pages += other.slc_host_pages;
        self.slc_pages_folded += other.slc_pages_folded;
        self.slc_blocks_opened += other.slc_blocks_opened;
        self.slc_blocks_erased += other.slc_blocks_erased;
        self.controller.dram_busy_ps += other.controller.dram_busy_ps;
        self.controller.cpu_busy_ps += other.controller.cpu_busy_ps;
        self.controller.instructions += other.controller.instructions;
    }
}

/// The time series being recorded during a run.
pub struct TimeSeries {
    flows: usize,
    window_ps: SimTime,
    adaptive: bool,
    /// Most windows before adjacent pairs merge.
    cap: usize,
    /// Index of the window of the latest sample, and when it ends.
    current: usize,
    current_end: SimTime,
    /// Windows stored so far (`current + 1`, or more after a merge).
    windows: usize,
    /// `[window][flow][op]`, op 0 = read, 1 = write.
    ops: Vec<OpWindow>,
    /// `[window][flow][op][bucket]`.
    hist: Vec<u32>,
    gc: Vec<GcWindow>,
    /// Cumulative GC counters when the current window began.
    gc_mark: GcWindow,
    /// The controller's counters as last given (`set_controller`, before a boundary).
    controller: ControllerCounters,
    /// An explicit window had to be widened (reported as a warning).
    widened: bool,
}

impl TimeSeries {
    /// `window_ps`: the configured window, or `None` for the adaptive series.
    pub fn new(flows: usize, window_ps: Option<SimTime>) -> Self {
        let (window_ps, adaptive, cap) = match window_ps {
            Some(w) => (w.max(1), false, MAX_FIXED_WINDOWS),
            None => (INITIAL_WINDOW_PS, true, ADAPTIVE_WINDOWS),
        };
        // Storage grows (doubling) as the run reaches later windows, so short runs stay small; at
        // 512 windows a flow's latency histograms take 2.7 MB.
        let initial = 64.min(cap);
        Self {
            flows,
            window_ps,
            adaptive,
            cap,
            current: 0,
            current_end: window_ps,
            windows: 1,
            ops: vec![OpWindow::default(); initial * flows * 2],
            hist: vec![0; initial * flows * 2 * BUCKETS],
            gc: vec![GcWindow::default(); initial],
            gc_mark: GcWindow::default(),
            controller: ControllerCounters::default(),
            widened: false,
        }
    }

    /// The series `run.time_series_window` asks for.
    pub fn for_config(config: &crate::config::Config) -> Self {
        Self::new(config.flows.len(), config.run.time_series_window.as_ref().map(|w| w.value))
    }

    /// A completed request: `latency_ps` from arrival to completion at `now`.
    #[inline]
    pub fn record(&mut self, flow: usize, is_read: bool, now: SimTime, latency_ps: u64, bytes: u64, ftl: &FtlStats) {
        if now >= self.current_end {
            self.advance(now, ftl);
        }
        let slot = (self.current * self.flows + flow) * 2 + usize::from(!is_read);
        let w = &mut self.ops[slot];
        w.count += 1;
        w.bytes += bytes;
        w.sum_ps += latency_ps as u128;
        w.max_ps = w.max_ps.max(latency_ps);
        self.hist[slot * BUCKETS + LatencyBuckets::index(latency_ps / PS_PER_NS)] += 1;
    }

    /// Whether a sample at `now` closes the current window: the caller then gives the
    /// controller's counters first (`set_controller`), which are too costly to read per sample.
    #[inline]
    pub fn crosses(&self, now: SimTime) -> bool {
        now >= self.current_end
    }

    /// The controller's cumulative counters now (see [`Self::crosses`]).
    pub fn set_controller(&mut self, counters: ControllerCounters) {
        self.controller = counters;
    }

    /// A GC sample point that is not a completion (before a block erase).
    #[inline]
    pub fn sample_gc(&mut self, now: SimTime, ftl: &FtlStats) {
        if now >= self.current_end {
            self.advance(now, ftl);
        }
    }

    /// Moves to the window of `now`: closes the current window's GC counts, merges pairs of
    /// windows while `now` lies beyond the cap, and grows storage if needed.
    #[cold]
    fn advance(&mut self, now: SimTime, ftl: &FtlStats) {
        let counters = GcWindow::of(ftl, self.controller);
        let delta = counters.since(self.gc_mark);
        self.gc[self.current].merge(&delta);
        self.gc_mark = counters;
        while (now / self.window_ps) as usize >= self.cap {
            self.merge_pairs();
            if !self.adaptive {
                self.widened = true;
            }
        }
        let w = (now / self.window_ps) as usize;
        if w >= self.gc.len() {
            let len = (w + 1).next_power_of_two().min(self.cap);
            self.gc.resize(len, GcWindow::default());
            self.ops.resize(len * self.flows * 2, OpWindow::default());
            self.hist.resize(len * self.flows * 2 * BUCKETS, 0);
        }
        self.current = w;
        self.current_end = (w as SimTime + 1) * self.window_ps;
        self.windows = w + 1;
    }

    /// Doubles the window: window i becomes windows 2i and 2i + 1 together.
    fn merge_pairs(&mut self) {
        let per = self.flows * 2;
        let n = self.windows.max(self.current + 1);
        for i in 0..n.div_ceil(2) {
            let (a, b) = (2 * i, 2 * i + 1);
            // In place: window i is written after windows 2i and 2i + 1 are read (i <= 2i).
            let mut gc = self.gc[a];
            if b < n {
                gc.merge(&self.gc[b]);
            }
            self.gc[i] = gc;
            for k in 0..per {
                let mut op = self.ops[a * per + k];
                if b < n {
                    op.merge(&self.ops[b * per + k]);
                }
                self.ops[i * per + k] = op;
            }
            for k in 0..per * BUCKETS {
                let extra = if b < n { self.hist[b * per * BUCKETS + k] } else { 0 };
                self.hist[i * per * BUCKETS + k] = self.hist[a * per * BUCKETS + k] + extra;
            }
        }
        // Windows from `n` on were never used (or were cleared by an earlier merge): only those
        // merged away need clearing, not the whole storage (which grows to the cap).
        let kept = n.div_ceil(2);
        self.gc[kept..n].fill(GcWindow::default());
        self.ops[kept * per..n * per].fill(OpWindow::default());
        self.hist[kept * per * BUCKETS..n * per * BUCKETS].fill(0);
        self.current /= 2;
        self.windows = kept;
        self.window_ps *= 2;
        self.current_end = (self.current as SimTime + 1) * self.window_ps;
    }

    /// A warning for the results when an explicit window had to be widened.
    pub fn warning(&self, configured_ps: Option<SimTime>) -> Option<String> {
        let configured = configured_ps?;
        self.widened.then(|| {
            format!(
                "run.time_series_window: {} s would give more than {MAX_FIXED_WINDOWS} windows; windows of {} s were used",
                ps_to_seconds(configured),
                ps_to_seconds(self.window_ps)
            )
        })
    }

    /// The series as it stands at `end` (the run's simulated time), with the GC counters
    /// `ftl` and the controller's counters `controller` have now; `names` are the flows' names.
    pub fn output(
        &self,
        end: SimTime,
        ftl: &FtlStats,
        controller: ControllerCounters,
        names: &[String],
    ) -> TimeSeriesResults {
        let n = self.windows;
        let per = self.flows * 2;
        let mut gc = self.gc[..n].to_vec();
        gc[self.current].merge(&GcWindow::of(ftl, controller).since(self.gc_mark));
        // End merging (adaptive only): `group` stored windows per reported window.
        let mut group = 1usize;
        if self.adaptive {
            let total: u64 = self.ops[..n * per].iter().map(|o| o.count).sum();
            while n.div_ceil(group) > MIN_WINDOWS && total < MIN_COMPLETIONS_PER_WINDOW * n.div_ceil(group) as u64 {
                group *= 2;
            }
        }
        let window_ps = self.window_ps * group as SimTime;
        let windows = n.div_ceil(group);
        let end = end.max(self.current as SimTime * self.window_ps);
        let start_seconds: Vec<f64> = (0..windows).map(|j| ps_to_seconds(j as SimTime * window_ps)).collect();
        let duration_seconds: Vec<f64> = (0..windows)
            .map(|j| {
                let start = j as SimTime * window_ps;
                ps_to_seconds(window_ps.min(end.saturating_sub(start)).max(1))
            })
            .collect();

        // Sums over the stored windows of each group, for one (flow, op) slot or all flows.
        let series = |flows: &[usize], op: usize| -> OpSeriesResults {
            let mut out = OpSeriesResults::with_capacity(windows);
            let mut hist = vec![0u64; BUCKETS];
            for (j, &seconds) in duration_seconds.iter().enumerate() {
                let mut w = OpWindow::default();
                hist.fill(0);
                for stored in j * group..((j + 1) * group).min(n) {
                    for &f in flows {
                        let slot = (stored * self.flows + f) * 2 + op;
                        w.merge(&self.ops[slot]);
                        for (h, &c) in hist.iter_mut().zip(&self.hist[slot * BUCKETS..(slot + 1) * BUCKETS]) {
                            *h += c as u64;
                        }
                    }
                }
                out.push(&w, &hist, seconds);
            }
            out
        };
        let all: Vec<usize> = (0..self.flows).collect();
        let flows = names
            .iter()
            .enumerate()
            .map(|(f, name)| FlowSeriesResults { name: name.clone(), reads: series(&[f], 0), writes: series(&[f], 1) })
            .collect();
        let device = FlowSeriesResults { name: "device".to_string(), reads: series(&all, 0), writes: series(&all, 1) };
        let mut gc_out = GcSeriesResults::default();
        let mut controller_out = ControllerSeriesResults::default();
        let mut reliability_out = ReliabilitySeriesResults::default();
        let mut slc_out = SlcCacheSeriesResults::default();
        let mut slc_blocks: i64 = 0;
        for j in 0..windows {
            let mut w = GcWindow::default();
            for g in &gc[j * group..((j + 1) * group).min(n)] {
                w.merge(g);
            }
            gc_out.blocks_erased.push(w.blocks_erased);
            gc_out.pages_moved.push(w.pages_moved);
            gc_out.host_pages_written.push(w.host_pages);
            gc_out.flash_pages_programmed.push(w.flash_pages);
            gc_out.write_amplification.push((w.host_pages > 0).then(|| w.flash_pages as f64 / w.host_pages as f64));
            controller_out.dram_busy_seconds.push(ps_to_seconds(w.controller.dram_busy_ps));
            controller_out.cpu_busy_seconds.push(ps_to_seconds(w.controller.cpu_busy_ps));
            controller_out.instructions.push(w.controller.instructions);
            reliability_out.read_retries.push(w.read_retries);
            reliability_out.read_reclaims.push(w.read_reclaims);
            slc_blocks += w.slc_blocks_opened as i64 - w.slc_blocks_erased as i64;
            slc_out.host_pages_to_slc.push(w.slc_host_pages);
            slc_out.pages_folded.push(w.slc_pages_folded);
            slc_out.blocks_in_use.push(slc_blocks.max(0) as u64);
        }
        TimeSeriesResults {
            window_seconds: ps_to_seconds(window_ps),
            adaptive: self.adaptive,
            p99_precision: P99_PRECISION,
            start_seconds,
            duration_seconds,
            device,
            flows,
            gc: gc_out,
            controller: controller_out,
            reliability: Some(reliability_out),
            slc_cache: Some(slc_out),
        }
    }
}

/// `results.json` `time_series`: one array per field, one element per window.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TimeSeriesResults {
    /// Width of every window (the last one may be cut short by the end of the run).
    pub window_seconds: f64,
    /// Whether the width was chosen by the simulator (`run.time_series_window` unset).
    pub adaptive: bool,
    /// Relative precision of `p99_us`: a reported p99 is at most this fraction above the true one.
    pub p99_precision: f64,
    pub start_seconds: Vec<f64>,
    /// Length of each window within the run (rates divide by it).
    pub duration_seconds: Vec<f64>,
    pub device: FlowSeriesResults,
    pub flows: Vec<FlowSeriesResults>,
    pub gc: GcSeriesResults,
    /// The controller's activity per window (the power series charges it per window).
    #[serde(default)]
    pub controller: ControllerSeriesResults,
    /// Pages read again by read retries and blocks rewritten by read reclaim per window (only
    /// with `[flash.reliability]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<ReliabilitySeriesResults>,
    /// Host pages written to the SLC cache, pages folded out of it and its blocks in use at each
    /// window's end, device-wide (only with `[flash.slc_cache]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcCacheSeriesResults>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowSeriesResults {
    pub name: String,
    pub reads: OpSeriesResults,
    pub writes: OpSeriesResults,
}

/// Requests of one operation type that completed in each window. Latencies are `null` in windows
/// without completions.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpSeriesResults {
    pub count: Vec<u64>,
    pub bytes: Vec<u64>,
    pub iops: Vec<f64>,
    pub bandwidth_mib_s: Vec<f64>,
    pub mean_us: Vec<Option<f64>>,
    pub p99_us: Vec<Option<f64>>,
    pub max_us: Vec<Option<f64>>,
}

impl OpSeriesResults {
    fn with_capacity(n: usize) -> Self {
        Self {
            count: Vec::with_capacity(n),
            bytes: Vec::with_capacity(n),
            iops: Vec::with_capacity(n),
            bandwidth_mib_s: Vec::with_capacity(n),
            mean_us: Vec::with_capacity(n),
            p99_us: Vec::with_capacity(n),
            max_us: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, w: &OpWindow, hist: &[u64], seconds: f64) {
        self.count.push(w.count);
        self.bytes.push(w.bytes);
        self.iops.push(w.count as f64 / seconds);
        self.bandwidth_mib_s.push(w.bytes as f64 / (1024.0 * 1024.0) / seconds);
        if w.count == 0 {
            self.mean_us.push(None);
            self.p99_us.push(None);
            self.max_us.push(None);
            return;
        }
        let max_us = w.max_ps as f64 / PS_PER_US as f64;
        self.mean_us.push(Some(w.sum_ps as f64 / w.count as f64 / PS_PER_US as f64));
        self.p99_us.push(Some((percentile_ns(hist, w.count, 0.99) as f64 / 1000.0).min(max_us)));
        self.max_us.push(Some(max_us));
    }
}

/// The top (ns) of the bucket holding the `quantile` of `count` latencies.
fn percentile_ns(hist: &[u64], count: u64, quantile: f64) -> u64 {
    let rank = ((quantile * count as f64).ceil() as u64).clamp(1, count);
    let mut seen = 0;
    for (i, &c) in hist.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return LatencyBuckets::upper_ns(i);
        }
    }
    LatencyBuckets::upper_ns(hist.len() - 1)
}

/// GC activity per window; write amplification is `null` where no host page was programmed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GcSeriesResults {
    pub blocks_erased: Vec<u64>,
    pub pages_moved: Vec<u64>,
    pub host_pages_written: Vec<u64>,
    pub flash_pages_programmed: Vec<u64>,
    pub write_amplification: Vec<Option<f64>>,
}

/// The SLC cache per window: host pages into it, pages folded out, blocks in use at the end.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SlcCacheSeriesResults {
    pub host_pages_to_slc: Vec<u64>,
    pub pages_folded: Vec<u64>,
    pub blocks_in_use: Vec<u64>,
}

/// Read retries (pages read again) and read reclaims (blocks rewritten) per window.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ReliabilitySeriesResults {
    pub read_retries: Vec<u64>,
    pub read_reclaims: Vec<u64>,
}

/// The controller's activity per window: the data cache's DRAM busy time, the cores' busy time
/// (summed over cores; work is counted in the window it was booked in) and, with the firmware
/// model, the instructions executed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ControllerSeriesResults {
    pub dram_busy_seconds: Vec<f64>,
    pub cpu_busy_seconds: Vec<f64>,
    pub instructions: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_tight() {
        let mut last = 0;
        for ns in [0u64, 1, 15, 16, 17, 31, 32, 33, 1000, 1_000_000, 123_456_789, 1 << 40] {
            let i = LatencyBuckets::index(ns);
            assert!(i >= last, "bucket of {ns} went down");
            last = i;
            let top = LatencyBuckets::upper_ns(i);
            assert!(top >= ns, "{ns} above its bucket's top {top}");
            assert!((top - ns) as f64 <= ns as f64 * P99_PRECISION, "{ns}: bucket top {top} too far");
            if i > 0 {
                assert!(LatencyBuckets::upper_ns(i - 1) < ns, "{ns} belongs in an earlier bucket");
            }
        }
        assert_eq!(LatencyBuckets::index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn adaptive_windows_merge_pairwise_and_keep_counts() {
        let stats = FtlStats::default();
        let mut ts = TimeSeries::new(1, None);
        // One completion every microsecond for 100 ms: 10,000 initial windows' worth.
        for t in 0..100_000u64 {
            ts.record(0, t % 2 == 0, t * PS_PER_US, 50 * PS_PER_US, 4096, &stats);
        }
        let out = ts.output(100_000 * PS_PER_US, &stats, ControllerCounters::default(), &["f".to_string()]);
        assert!(out.start_seconds.len() <= ADAPTIVE_WINDOWS && out.start_seconds.len() > ADAPTIVE_WINDOWS / 2);
        let total: u64 = out.flows[0].reads.count.iter().chain(&out.flows[0].writes.count).sum();
        assert_eq!(total, 100_000);
        assert_eq!(out.device.reads.count, out.flows[0].reads.count);
        let p99 = out.flows[0].reads.p99_us[3].unwrap();
        assert!((50.0..=50.0 * (1.0 + P99_PRECISION)).contains(&p99), "p99 {p99}");
    }
}
