//! FLIN, `controller.scheduling = "flin"` (Tavakkol et al., "FLIN: Enabling Fairness and
//! Enhancing Performance in Modern NVMe Solid State Drives", ISCA 2018, section 5). Three stages
//! on each die's user queues:
//!
//! 1. **Fairness-aware queue insertion.** Each epoch (`controller.flin.epoch`, 10 ms) a flow is
//!    classified, per die, as high-intensity for reads (writes) if it arrived faster than
//!    `alpha_read` = 32 MiB/s (`alpha_write` = 256 KiB/s) in the last epoch, shared out evenly
//!    over the dies: the paper defines alpha as an arrival rate, and these are the values
//!    MQSim's FLIN was to be built with (its TSU_FLIN constructor call, commented out in
//!    SSD_Device.cpp @7ec40e3: 10 ms, 33554432, 262144, 0.6). A low-intensity flow's transaction goes behind the queue's other
//!    low-intensity ones, ahead of every high-intensity one, and then forward within that part to
//!    the place that maximises fairness (min slowdown / max slowdown of the part). A
//!    high-intensity flow's transaction goes to the tail; if the queue's fairness (by each flow's
//!    average slowdown) is below `fairness_threshold` (0.6) and its flow is the most slowed down, it
//!    moves forward to the head of the high-intensity part, else to the fairest place within it.
//!    Slowdown of a queued transaction: (time waited + position x service time) / the time it
//!    would take alone (its service time after its own flow's transactions ahead of it).
//! 2. **Priority-aware queue arbitration.** Each NVMe priority class has its own queue; urgent
//!    goes first, high, medium and low take turns by `host.wrr_weights` (smooth weighted round
//!    robin), where the priority scheduler serves them strictly in order.
//! 3. **Wait-balancing transaction selection.** Between the read and the write chosen for the
//!    die, the one that has waited longest relative to its service time (proportional wait) goes,
//!    so reads no longer always pass writes. GC keeps ssdlab's ranking (`GcRank`): ahead of user
//!    work at the hard floor or while paced GC owes moves, behind it otherwise.
//!
//! A transaction never passes one of its own flow (requests stay in order), and a write never
//! passes a write on its plane (pages of a block are programmed in order).

use std::collections::VecDeque;

use super::{Entry, PRIORITIES};
use crate::config::FlinConfig;
use crate::engine::Slab;
use crate::ftl::transaction::Transaction;
use crate::time::SimTime;

/// Read or write (index of the per-flow, per-queue arrays).
pub const READ: usize = 0;
pub const WRITE: usize = 1;

pub struct Flin {
    flows: usize,
    epoch_ps: SimTime,
    fairness_threshold: f64,
    /// Transactions per die and epoch above which a flow is high-intensity, for reads and writes.
    alpha: [u32; 2],
    epoch_end: SimTime,
    /// Per (die, flow): read and write transactions that arrived this epoch, and whether the flow
    /// is high-intensity (from the last epoch).
    arrived: Vec<[u32; 2]>,
    high: Vec<[bool; 2]>,
    /// Per die, read and write, priority: how many entries at the head of the queue form its
    /// low-intensity part.
    low_len: Vec<[[u32; PRIORITIES]; 2]>,
    /// Per transaction id: its estimated time alone (wait behind its own flow plus service).
    alone_ps: Vec<u64>,
    /// Service time of a read and of a write (cell operation and page transfer).
    service_ps: [u64; 2],
    /// WRR weights of the high, medium and low classes, and each die's smooth-WRR credits for
    /// its read and write queues.
    weights: [i64; PRIORITIES],
    credit: Vec<[[i64; PRIORITIES]; 2]>,
    /// Scratch: per-flow slowdown sums, and the prefix minima and maxima of a queue part.
    flow_sums: Vec<(f64, u32)>,
    prefix: Vec<(f64, f64)>,
}

impl Flin {
    /// For `dies` dies and `flows` flows, with `config`'s epoch, alphas and threshold;
    /// `page_bytes` per transaction, `service_ps` of a read and a write, `wrr` the weights of the
    /// high, medium and low classes.
    pub fn new(
        config: &FlinConfig,
        dies: u32,
        flows: usize,
        page_bytes: u64,
        service_ps: [u64; 2],
        wrr: [u32; 3],
    ) -> Self {
        // alpha is a rate: the transactions a die sees of such a flow in one epoch.
        let epoch_ps = config.epoch.value;
        let per_epoch = epoch_ps as f64 / crate::time::PS_PER_S as f64;
        let per_die = |alpha: u64| {
            ((alpha as f64 * per_epoch / page_bytes.max(1) as f64 / dies.max(1) as f64).ceil() as u32).max(1)
        };
        let flows = flows.max(1);
        Self {
            flows,
            epoch_ps,
            fairness_threshold: config.fairness_threshold,
            alpha: [per_die(config.alpha_read.value), per_die(config.alpha_write.value)],
            epoch_end: epoch_ps,
            arrived: vec![[0; 2]; dies as usize * flows],
            high: vec![[false; 2]; dies as usize * flows],
            low_len: vec![[[0; PRIORITIES]; 2]; dies as usize],
            alone_ps: Vec::new(),
            service_ps,
            weights: [0, wrr[0] as i64, wrr[1] as i64, wrr[2] as i64],
            credit: vec![[[0; PRIORITIES]; 2]; dies as usize],
            flow_sums: vec![(0.0, 0); flows],
            prefix: Vec::new(),
        }
    }

    /// Classifies the flows when an epoch has passed: high-intensity where more than alpha
    /// transactions arrived at the die in it.
    fn roll_epoch(&mut self, now: SimTime) {
        if now < self.epoch_end {
            return;
        }
        for (arrived, high) in self.arrived.iter_mut().zip(&mut self.high) {
            for rw in [READ, WRITE] {
                high[rw] = arrived[rw] > self.alpha[rw];
                arrived[rw] = 0;
            }
        }
        self.epoch_end = now - (now - self.epoch_end) % self.epoch_ps + self.epoch_ps;
    }

    /// Stage 1: puts user transaction `entry` (`rw`, priority `level`) into `queue` of `die`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert(
        &mut self,
        die: u32,
        rw: usize,
        level: usize,
        queue: &mut VecDeque<Entry>,
        entry: Entry,
        slab: &Slab<Transaction>,
        now: SimTime,
    ) {
        self.roll_epoch(now);
        let id = entry.id();
        let flow = slab.get(id).flow as usize % self.flows;
        let cell = die as usize * self.flows + flow;
        self.arrived[cell][rw] += 1;
        if id as usize >= self.alone_ps.len() {
            self.alone_ps.resize(id as usize + 1, 0);
        }
        let low = self.low_len[die as usize][rw][level] as usize;
        let service = self.service_ps[rw];
        let high = self.high[cell][rw];
        let at = if high { queue.len() } else { low };
        queue.insert(at, entry);
        // Alone, it would wait only for its own flow's transactions ahead of it.
        let own_ahead = queue.iter().take(at).filter(|e| slab.get(e.id()).flow as usize % self.flows == flow).count();
        self.alone_ps[id as usize] = (own_ahead as u64 + 1) * service;
        if !high {
            self.low_len[die as usize][rw][level] += 1;
            self.reorder_for_fairness(queue, 0, at, rw, slab, now);
            return;
        }
        let (fairness, most_slowed) = self.fairness_by_flow(queue, rw, slab, now);
        if fairness < self.fairness_threshold && most_slowed == Some(flow) {
            let to = self.earliest_place(queue, low, at, rw, slab);
            let e = queue.remove(at).expect("just inserted");
            queue.insert(to, e);
        } else {
            self.reorder_for_fairness(queue, low, at, rw, slab, now);
        }
    }

    /// A transaction left `queue` of `die` from `position`: the low-intensity part shrinks if it
    /// was in it.
    pub(crate) fn removed(&mut self, die: u32, rw: usize, level: usize, position: usize) {
        let low = &mut self.low_len[die as usize][rw][level];
        if (position as u32) < *low {
            *low -= 1;
        }
    }

    /// Estimated slowdown of the transaction at `position` of a queue: (waited so far + the
    /// service of everything up to and including it) / its time alone.
    #[inline]
    fn slowdown(&self, e: Entry, position: usize, rw: usize, slab: &Slab<Transaction>, now: SimTime) -> f64 {
        let waited = now.saturating_sub(slab.get(e.id()).queued_at);
        let shared = waited + (position as u64 + 1) * self.service_ps[rw];
        shared as f64 / self.alone_ps.get(e.id() as usize).copied().unwrap_or(1).max(1) as f64
    }

    /// The first place, at or after `from`, that the transaction at `at` may move forward to:
    /// it passes no transaction of its own flow and, for a write, none on its plane.
    fn earliest_place(
        &self,
        queue: &VecDeque<Entry>,
        from: usize,
        at: usize,
        rw: usize,
        slab: &Slab<Transaction>,
    ) -> usize {
        let new = queue[at];
        let flow = slab.get(new.id()).flow;
        let mut to = at;
        while to > from {
            let e = queue[to - 1];
            if slab.get(e.id()).flow == flow || (rw == WRITE && e.plane() == new.plane()) {
                break;
            }
            to -= 1;
        }
        to
    }

    /// Moves the transaction at `at` forward within `queue[from..=at]` to the place that
    /// maximises min slowdown / max slowdown over that part (staying put on ties). Each place it
    /// passes delays the transaction there by one service time.
    fn reorder_for_fairness(
        &mut self,
        queue: &mut VecDeque<Entry>,
        from: usize,
        at: usize,
        rw: usize,
        slab: &Slab<Transaction>,
        now: SimTime,
    ) {
        let earliest = self.earliest_place(queue, from, at, rw, slab);
        if earliest == at {
            return;
        }
        // Slowdowns where they stand; prefix[i] = (min, max) over queue[from..i].
        let mut prefix = std::mem::take(&mut self.prefix);
        prefix.clear();
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for (i, &e) in queue.iter().enumerate().take(at).skip(from) {
            prefix.push((lo, hi));
            let s = self.slowdown(e, i, rw, slab, now);
            lo = lo.min(s);
            hi = hi.max(s);
        }
        let new = queue[at];
        let alone_new = self.alone_ps[new.id() as usize].max(1) as f64;
        let service = self.service_ps[rw] as f64;
        let fairness_at = |p: usize, shifted: (f64, f64), prefix: (f64, f64)| {
            let s_new = (p + 1) as f64 * service / alone_new;
            let lo = prefix.0.min(shifted.0).min(s_new);
            let hi = prefix.1.max(shifted.1).max(s_new);
            if hi > 0.0 {
                lo / hi
            } else {
                1.0
            }
        };
        let mut best = (fairness_at(at, (f64::INFINITY, 0.0), (lo, hi)), at);
        // Moving to p delays queue[p..at] by one service time each.
        let mut shifted = (f64::INFINITY, 0.0f64);
        for p in (earliest..at).rev() {
            let s = self.slowdown(queue[p], p + 1, rw, slab, now);
            shifted = (shifted.0.min(s), shifted.1.max(s));
            let f = fairness_at(p, shifted, prefix[p - from]);
            if f > best.0 {
                best = (f, p);
            }
        }
        self.prefix = prefix;
        if best.1 != at {
            let e = queue.remove(at).expect("in range");
            queue.insert(best.1, e);
        }
    }

    /// Fairness of `queue` by each flow's average slowdown, and the flow slowed down most.
    fn fairness_by_flow(
        &mut self,
        queue: &VecDeque<Entry>,
        rw: usize,
        slab: &Slab<Transaction>,
        now: SimTime,
    ) -> (f64, Option<usize>) {
        let mut sums = std::mem::take(&mut self.flow_sums);
        sums.fill((0.0, 0));
        for (i, &e) in queue.iter().enumerate() {
            let s = self.slowdown(e, i, rw, slab, now);
            let f = slab.get(e.id()).flow as usize % self.flows;
            sums[f].0 += s;
            sums[f].1 += 1;
        }
        let (mut lo, mut hi, mut most) = (f64::INFINITY, 0.0f64, None);
        for (f, &(sum, n)) in sums.iter().enumerate() {
            if n > 0 {
                let avg = sum / n as f64;
                lo = lo.min(avg);
                if avg > hi {
                    hi = avg;
                    most = Some(f);
                }
            }
        }
        self.flow_sums = sums;
        (if hi > 0.0 { lo / hi } else { 1.0 }, most)
    }

    /// Stage 2: which priority level of `die`'s read or write queues goes next, among the levels
    /// with work (bits of `levels`): urgent first, then smooth weighted round robin.
    pub fn pick_level(&mut self, die: u32, rw: usize, levels: u32) -> usize {
        if levels & 1 != 0 || levels.count_ones() == 1 {
            return levels.trailing_zeros() as usize;
        }
        let credit = &mut self.credit[die as usize][rw];
        let mut total = 0;
        let mut best = (i64::MIN, 0usize);
        for (level, (c, &w)) in credit.iter_mut().zip(&self.weights).enumerate().skip(1) {
            if levels >> level & 1 != 0 {
                *c += w;
                total += w;
                if *c > best.0 {
                    best = (*c, level);
                }
            }
        }
        credit[best.1] -= total;
        best.1
    }

    /// Stage 3: whether the write at the head of its queue has waited longer, relative to its
    /// service time, than the read at the head of its own.
    pub fn write_before_read(&self, read: &Transaction, write: &Transaction, now: SimTime) -> bool {
        let proportional =
            |t: &Transaction, rw: usize| now.saturating_sub(t.queued_at) as f64 / self.service_ps[rw] as f64;
        proportional(write, WRITE) > proportional(read, READ)
    }
}
