//! End-to-end latency breakdown: where each request's response time went, step by step.
//!
//! A request's time is taken along its critical path: the host-side steps (queue wait, command
//! fetch, write data) plus every step of the page transaction that finished last (a request's
//! transactions run in parallel; the last one decides when the request completes), plus the read
//! data and completion transfers after it. So the steps add up exactly to the response time.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use crate::time::PS_PER_US;

/// One step of a request's path, in path order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Waiting in the submission queue (or the host backlog) until the device fetches it.
    SqWait,
    /// The 64-byte command crossing PCIe (with any wait for the link).
    CommandTransfer,
    /// Controller firmware: dispatching the transaction to the flash interface.
    Firmware,
    /// Waiting for a translation page read after a cached-mapping-table miss.
    CmtMissWait,
    /// The data cache: waiting for space for a write, and the DRAM transfer; with the banked
    /// DRAM model also the CMT entry read and storing page data in a DRAM buffer.
    CacheDram,
    /// Waiting in the die's transaction queue (behind other work, GC, or for free space).
    ChipQueueWait,
    /// Command and address cycles on the channel, with any wait for the channel.
    CommandAddress,
    /// The cell read, program or erase.
    CellOperation,
    /// Page data on the channel (data out for reads, data in for programs), with any wait.
    ChannelData,
    /// Request data on PCIe: write data before the flash work, read data after it.
    PcieData,
    /// The 16-byte completion entry crossing PCIe.
    Completion,
}

pub const STEPS: usize = 11;

impl Step {
    pub const ALL: [Step; STEPS] = [
        Step::SqWait,
        Step::CommandTransfer,
        Step::Firmware,
        Step::CmtMissWait,
        Step::CacheDram,
        Step::ChipQueueWait,
        Step::CommandAddress,
        Step::CellOperation,
        Step::ChannelData,
        Step::PcieData,
        Step::Completion,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::SqWait => "sq_wait",
            Step::CommandTransfer => "command_transfer",
            Step::Firmware => "firmware",
            Step::CmtMissWait => "cmt_miss_wait",
            Step::CacheDram => "cache_dram",
            Step::ChipQueueWait => "chip_queue_wait",
            Step::CommandAddress => "command_address",
            Step::CellOperation => "cell_operation",
            Step::ChannelData => "channel_data",
            Step::PcieData => "pcie_data",
            Step::Completion => "completion",
        }
    }
}

/// Picoseconds spent in each step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown(pub [u64; STEPS]);

impl Breakdown {
    #[inline]
    pub fn add(&mut self, step: Step, ps: u64) {
        self.0[step as usize] += ps;
    }

    #[inline]
    pub fn merge(&mut self, other: &Breakdown) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Picoseconds spent in `step`.
    #[inline]
    pub fn get(&self, step: Step) -> u64 {
        self.0[step as usize]
    }
}

/// Sums of breakdowns over many requests.
#[derive(Clone, Debug, Default)]
pub struct BreakdownSum(pub [u128; STEPS]);

impl BreakdownSum {
    #[inline]
    pub fn add(&mut self, b: &Breakdown) {
        for (a, &x) in self.0.iter_mut().zip(&b.0) {
            *a += x as u128;
        }
    }

    pub fn merge(&mut self, other: &BreakdownSum) {
        for (a, &x) in self.0.iter_mut().zip(&other.0) {
            *a += x;
        }
    }

    /// Mean microseconds per step over `count` requests.
    pub fn means_us(&self, count: u64) -> StepMeans {
        StepMeans(
            Step::ALL
                .iter()
                .map(|&s| {
                    // No request, no mean: undefined (null in results.json), not 0.
                    let mean =
                        if count == 0 { f64::NAN } else { self.0[s as usize] as f64 / count as f64 / PS_PER_US as f64 };
                    (s.name().to_string(), mean)
                })
                .collect(),
        )
    }
}

/// Mean microseconds per step, serialised as a JSON object in path order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepMeans(pub Vec<(String, f64)>);

impl StepMeans {
    pub fn get(&self, step: &str) -> Option<f64> {
        self.0.iter().find(|(name, _)| name == step).map(|&(_, v)| v)
    }

    pub fn total(&self) -> f64 {
        self.0.iter().map(|(_, v)| v).sum()
    }
}

impl Serialize for StepMeans {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for StepMeans {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StepMeans;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of step names to microseconds")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StepMeans, A::Error> {
                let mut steps = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Option<f64>>()? {
                    steps.push((k, v.unwrap_or(f64::NAN)));
                }
                Ok(StepMeans(steps))
            }
        }
        deserializer.deserialize_map(V)
    }
}
