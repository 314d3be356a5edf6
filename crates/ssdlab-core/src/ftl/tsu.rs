//! Transaction scheduling unit: per-die queues for each transaction class, served out of order
//! across dies (a die takes work as soon as it is idle, whatever the others do) and in priority
//! order within a die. Transactions of one class that target different planes of the die at the
//! same page offset are issued together as one multi-plane command.

use std::collections::VecDeque;

use super::transaction::{Class, Transaction, CLASSES};
use crate::config::Scheduling;
use crate::engine::Slab;
use crate::flash::geometry::MAX_PLANES_PER_DIE;
use crate::flash::Geometry;

/// How far down a queue the scheduler looks for multi-plane partners, and the flow-fair policy
/// for the most slowed-down flow.
const MULTIPLANE_LOOKAHEAD: usize = 16;
const FAIRNESS_LOOKAHEAD: usize = 32;

/// The transactions one die executes together.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    pub class: Class,
    pub txns: [u32; MAX_PLANES_PER_DIE as usize],
    pub count: u8,
}

impl Batch {
    pub fn ids(&self) -> &[u32] {
        &self.txns[..self.count as usize]
    }
}

/// NVMe priority classes (urgent, high, medium, low): each class queue is split by priority
/// under the priority-aware policy.
pub const PRIORITIES: usize = 4;

pub struct Tsu {
    /// Per die: one queue per (class, priority).
    queues: Vec<[VecDeque<u32>; CLASSES * PRIORITIES]>,
    policy: Scheduling,
    planes_per_die: u32,
    pages_per_block: u32,
    next_seq: u64,
}

impl Tsu {
    pub fn new(geometry: &Geometry) -> Self {
        Self {
            queues: (0..geometry.dies).map(|_| std::array::from_fn(|_| VecDeque::new())).collect(),
            policy: Scheduling::OutOfOrder,
            planes_per_die: geometry.planes_per_die,
            pages_per_block: geometry.pages_per_block,
            next_seq: 0,
        }
    }

    pub fn with_policy(mut self, policy: Scheduling) -> Self {
        self.policy = policy;
        self
    }

    pub fn policy(&self) -> Scheduling {
        self.policy
    }

    /// Queues a transaction; returns its arrival sequence number (for FIFO order).
    #[inline]
    pub fn push(&mut self, die: u32, class: Class, priority: u8, txn: u32) -> u64 {
        let sub = if self.policy == Scheduling::Priority { priority as usize } else { 0 };
        self.queues[die as usize][class as usize * PRIORITIES + sub].push_back(txn);
        self.next_seq += 1;
        self.next_seq
    }

    /// The arrival number of the oldest transaction waiting at `die`, if any.
    pub fn oldest_waiting(&self, die: u32, slab: &Slab<Transaction>) -> Option<u64> {
        self.queues[die as usize].iter().filter_map(|q| q.front()).map(|&t| slab.get(t).seq).min()
    }

    /// Whether reads (of any kind) wait at `die`.
    pub fn has_reads(&self, die: u32) -> bool {
        let q = &self.queues[die as usize];
        [Class::UserRead, Class::MappingRead, Class::GcRead]
            .iter()
            .any(|&c| (0..PRIORITIES).any(|p| !q[c as usize * PRIORITIES + p].is_empty()))
    }

    pub fn queued(&self, die: u32) -> usize {
        self.queues[die as usize].iter().map(|q| q.len()).sum()
    }

    /// Takes the next batch for an idle die: the head of the first non-empty queue in `order`,
    /// plus the first transaction for each other plane of the die at the same page offset.
    /// Erases are issued one block at a time.
    /// With `reads_only` (a die with a suspended program or erase) only read classes are served.
    /// `last_served` is when each flow was last picked (used by the flow-fair policy).
    pub fn next_batch(
        &mut self,
        die: u32,
        slab: &Slab<Transaction>,
        order: &[Class; CLASSES],
        reads_only: bool,
        last_served: &[u64],
    ) -> Option<Batch> {
        let queues = &mut self.queues[die as usize];
        let allowed = |i: usize| {
            !reads_only || Class::ORDER[0..CLASSES].iter().any(|&c| c as usize == i / PRIORITIES && c.is_read())
        };
        let index = if self.policy == Scheduling::Fifo {
            // Strict arrival order: the queue whose head came first.
            (0..queues.len())
                .filter(|&i| !queues[i].is_empty() && allowed(i))
                .min_by_key(|&i| slab.get(queues[i][0]).seq)?
        } else {
            // The first class in service order with work, highest priority first within it
            // (only the priority policy fills more than the first queue of each class).
            let levels = if self.policy == Scheduling::Priority { PRIORITIES } else { 1 };
            order
                .iter()
                .flat_map(|&c| (0..levels).map(move |p| c as usize * PRIORITIES + p))
                .find(|&i| !queues[i].is_empty() && allowed(i))?
        };
        let class = Class::ORDER.iter().copied().find(|&c| c as usize == index / PRIORITIES).expect("valid class");
        let queue = &mut queues[index];
        let pick = if self.policy == Scheduling::FlowFair && matches!(class, Class::UserRead | Class::UserWrite) {
            // The first transaction of the flow served least recently among the next few. Writes
            // already own their pages, so a write may not pass an earlier one on its plane.
            let window = queue.len().min(FAIRNESS_LOOKAHEAD);
            let mut planes_seen = 0u32;
            let mut best: Option<(u64, usize)> = None;
            for (i, &id) in queue.iter().take(window).enumerate() {
                let t = slab.get(id);
                let bit = 1u32 << (t.plane % self.planes_per_die);
                let first_for_plane = planes_seen & bit == 0;
                planes_seen |= bit;
                if class == Class::UserWrite && !first_for_plane {
                    continue;
                }
                let served = last_served.get(t.flow as usize).copied().unwrap_or(0);
                if best.is_none_or(|(b, _)| served < b) {
                    best = Some((served, i));
                }
            }
            best.map_or(0, |(_, i)| i)
        } else {
            0
        };
        let head = queue.remove(pick).expect("non-empty queue");
        let mut batch = Batch { class, txns: [0; MAX_PLANES_PER_DIE as usize], count: 1 };
        batch.txns[0] = head;
        if self.planes_per_die == 1 || class == Class::Erase {
            return Some(batch);
        }
        let head_txn = slab.get(head);
        let offset = head_txn.ppa % self.pages_per_block;
        let mut planes_taken = 1u32 << (head_txn.plane % self.planes_per_die);
        let mut i = 0;
        while i < queue.len().min(MULTIPLANE_LOOKAHEAD) && (batch.count as u32) < self.planes_per_die {
            let t = slab.get(queue[i]);
            let bit = 1u32 << (t.plane % self.planes_per_die);
            // A plane's transactions stay in order: only the first one seen for a plane may join.
            let plane_free = planes_taken & bit == 0;
            planes_taken |= bit;
            if plane_free && t.ppa % self.pages_per_block == offset {
                batch.txns[batch.count as usize] = queue.remove(i).expect("index in range");
                batch.count += 1;
            } else {
                i += 1;
            }
        }
        Some(batch)
    }
}
