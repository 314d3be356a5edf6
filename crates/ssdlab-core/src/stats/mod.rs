//! Response-time statistics per flow and operation, and the results document built from them.
//!
//! Latencies go into HDR histograms in nanoseconds (3 significant digits: percentiles are exact
//! to 0.1 %), while the mean is kept exactly as a sum of picoseconds. IOPS and bandwidth divide by
//! the exact simulated interval in which the flow's requests ran, from its first arrival to its
//! last completion, never by whole seconds.

pub mod breakdown;
pub mod mapping;
pub mod records;
pub mod results;
pub mod timeseries;

use hdrhistogram::Histogram;

use breakdown::{Breakdown, BreakdownSum};

use crate::time::{ps_to_seconds, SimTime, PS_PER_NS, PS_PER_US};
pub use records::{RequestRecorder, RequestRecords};
pub use results::{GcSummary, LatencyCdf, LatencySummary, OpSummary, Results};
pub use timeseries::TimeSeries;

/// Quantiles of the latency CDF in the results: every percent, then the tail.
pub const CDF_QUANTILES_TAIL: [f64; 7] = [0.995, 0.999, 0.9995, 0.9999, 0.99995, 0.99999, 1.0];

const MIB: f64 = 1024.0 * 1024.0;

pub struct OpStats {
    histogram_ns: Histogram<u64>,
    pub count: u64,
    pub bytes: u64,
    sum_ps: u128,
    /// Sum of squared response times, for the standard deviation (exact while it fits).
    sum_squares_ps2: u128,
    min_ps: u64,
    max_ps: u64,
    breakdown: BreakdownSum,
}

impl Default for OpStats {
    fn default() -> Self {
        Self {
            histogram_ns: Histogram::new(3).expect("3 significant digits is valid"),
            count: 0,
            bytes: 0,
            sum_ps: 0,
            sum_squares_ps2: 0,
            min_ps: u64::MAX,
            max_ps: 0,
            breakdown: BreakdownSum::default(),
        }
    }
}

impl OpStats {
    #[inline]
    pub fn record(&mut self, latency_ps: u64, bytes: u64, breakdown: &Breakdown) {
        debug_assert_eq!(breakdown.total(), latency_ps, "the breakdown must add up to the response time");
        self.breakdown.add(breakdown);
        self.count += 1;
        self.bytes += bytes;
        self.sum_ps += latency_ps as u128;
        self.sum_squares_ps2 = self.sum_squares_ps2.saturating_add(latency_ps as u128 * latency_ps as u128);
        self.min_ps = self.min_ps.min(latency_ps);
        self.max_ps = self.max_ps.max(latency_ps);
        // Auto-resizing histogram: grows (rarely) when a larger value than any before arrives, so
        // recording cannot fail.
        let _ = self.histogram_ns.record((latency_ps / PS_PER_NS).max(1));
    }

    pub fn merge(&mut self, other: &OpStats) {
        self.count += other.count;
        self.bytes += other.bytes;
        self.sum_ps += other.sum_ps;
        self.sum_squares_ps2 = self.sum_squares_ps2.saturating_add(other.sum_squares_ps2);
        self.min_ps = self.min_ps.min(other.min_ps);
        self.max_ps = self.max_ps.max(other.max_ps);
        self.breakdown.merge(&other.breakdown);
        self.histogram_ns.add(&other.histogram_ns).expect("auto-resizing histograms always merge");
    }

    /// The mean response time; NaN (undefined) without a request.
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            (self.sum_ps as f64 / self.count as f64) / PS_PER_US as f64
        }
    }

    /// The sample standard deviation of the response times (fio's: n - 1 in the denominator),
    /// 0 for one request and NaN without any. Exact integer arithmetic while n * sum(x^2) fits
    /// in 128 bits (10^9 requests of up to 10 ms); beyond that, in floating point.
    pub fn stdev_us(&self) -> f64 {
        let n = self.count as u128;
        match n {
            0 => f64::NAN,
            1 => 0.0,
            _ => {
                let exact = n.checked_mul(self.sum_squares_ps2).filter(|_| self.sum_squares_ps2 != u128::MAX);
                let numerator = match (exact, self.sum_ps.checked_mul(self.sum_ps)) {
                    (Some(a), Some(b)) => a.saturating_sub(b) as f64,
                    _ => {
                        let mean = self.sum_ps as f64 / n as f64;
                        (self.sum_squares_ps2 as f64 - mean * self.sum_ps as f64).max(0.0) * n as f64
                    }
                };
                (numerator / (n * (n - 1)) as f64).sqrt() / PS_PER_US as f64
            }
        }
    }

    /// The op's figures over `interval_ps`, with the `extra_percentiles` (in percent) that
    /// `run.percentiles` asks for beside the fixed ones.
    pub fn summary(&self, interval_ps: SimTime, extra_percentiles: &[f64]) -> OpSummary {
        let seconds = ps_to_seconds(interval_ps);
        let per_second = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
        let q = |quantile: f64| {
            if self.count == 0 {
                f64::NAN
            } else {
                // HDR reports the top of the value's bucket; never above the exact maximum.
                (self.histogram_ns.value_at_quantile(quantile) as f64 / 1000.0)
                    .min(self.max_ps as f64 / PS_PER_US as f64)
            }
        };
        OpSummary {
            count: self.count,
            iops: per_second(self.count as f64),
            bandwidth_mib_s: per_second(self.bytes as f64 / MIB),
            bytes: self.bytes,
            latency_us: LatencySummary {
                min: if self.count == 0 { f64::NAN } else { self.min_ps as f64 / PS_PER_US as f64 },
                mean: self.mean_us(),
                stdev: self.stdev_us(),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p99_9: q(0.999),
                p99_99: q(0.9999),
                max: if self.count == 0 { f64::NAN } else { self.max_ps as f64 / PS_PER_US as f64 },
                extra: extra_percentiles
                    .iter()
                    .map(|&p| (percentile_name(p), (self.count > 0).then(|| q(p / 100.0))))
                    .collect(),
            },
            latency_breakdown_us: self.breakdown.means_us(self.count),
            latency_cdf: self.cdf(),
        }
    }

    /// The latency distribution at every percent and at [`CDF_QUANTILES_TAIL`], in microseconds,
    /// each point at most the exact maximum (so the last point, fraction 1, is the maximum).
    pub fn cdf(&self) -> LatencyCdf {
        if self.count == 0 {
            return LatencyCdf::default();
        }
        let max_us = self.max_ps as f64 / PS_PER_US as f64;
        let fraction: Vec<f64> = (0..100).map(|p| p as f64 / 100.0).chain(CDF_QUANTILES_TAIL).collect();
        let latency_us =
            fraction
                .iter()
                .map(|&q| {
                    if q >= 1.0 {
                        max_us
                    } else {
                        (self.histogram_ns.value_at_quantile(q) as f64 / 1000.0).min(max_us)
                    }
                })
                .collect();
        LatencyCdf { latency_us, fraction }
    }
}

/// The results.json name of the `percent`-th percentile: `p` and the percent with `_` for its
/// decimal point (95 -> `p95`, 99.5 -> `p99_5`), as the fixed `p99_9` is named.
pub fn percentile_name(percent: f64) -> String {
    format!("p{percent}").replace('.', "_")
}

/// Statistics of one flow (or of the whole device).
pub struct FlowStats {
    pub reads: OpStats,
    pub writes: OpStats,
    pub first_arrival: SimTime,
    pub last_completion: SimTime,
}

impl Default for FlowStats {
    fn default() -> Self {
        Self { reads: OpStats::default(), writes: OpStats::default(), first_arrival: SimTime::MAX, last_completion: 0 }
    }
}

impl FlowStats {
    #[inline]
    pub fn record(&mut self, is_read: bool, arrival: SimTime, completion: SimTime, bytes: u64, breakdown: &Breakdown) {
        self.first_arrival = self.first_arrival.min(arrival);
        self.last_completion = self.last_completion.max(completion);
        let op = if is_read { &mut self.reads } else { &mut self.writes };
        op.record(completion - arrival, bytes, breakdown);
    }

    /// Mean per step over all of this flow's requests.
    pub fn breakdown_means_us(&self) -> breakdown::StepMeans {
        let mut sum = self.reads.breakdown.clone();
        sum.merge(&self.writes.breakdown);
        sum.means_us(self.completed())
    }

    pub fn merge(&mut self, other: &FlowStats) {
        self.reads.merge(&other.reads);
        self.writes.merge(&other.writes);
        self.first_arrival = self.first_arrival.min(other.first_arrival);
        self.last_completion = self.last_completion.max(other.last_completion);
    }

    /// The simulated interval in which this flow's requests ran.
    pub fn interval_ps(&self) -> SimTime {
        self.last_completion.saturating_sub(self.first_arrival.min(self.last_completion))
    }

    pub fn completed(&self) -> u64 {
        self.reads.count + self.writes.count
    }

    /// (reads, writes, IOPS, MiB/s) over the flow's interval, with the extra percentiles.
    pub fn summaries(&self, extra_percentiles: &[f64]) -> (OpSummary, OpSummary, f64, f64) {
        let interval = self.interval_ps();
        let reads = self.reads.summary(interval, extra_percentiles);
        let writes = self.writes.summary(interval, extra_percentiles);
        let (iops, bw) = (reads.iops + writes.iops, reads.bandwidth_mib_s + writes.bandwidth_mib_s);
        (reads, writes, iops, bw)
    }
}
