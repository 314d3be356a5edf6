//! Transaction scheduling unit: per-die queues for each transaction class, served out of order
//! across dies (a die takes work as soon as it is idle, whatever the others do) and in priority
//! order within a die. Transactions of one class that target different planes of the die at the
//! same page offset are issued together as one multi-plane command.

mod flin;

use std::collections::VecDeque;

pub use flin::Flin;

use super::blocks::BlockManager;
use super::transaction::{Class, Transaction, CLASSES};
use super::GcRank;
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

/// Queue indices (class * PRIORITIES + priority) of the read classes, as a bit set.
const READ_QUEUES: u32 = {
    let mut mask = 0u32;
    let mut c = 0;
    while c < CLASSES {
        if Class::ORDER[c].is_read() {
            mask |= ((1 << PRIORITIES) - 1) << (Class::ORDER[c] as usize * PRIORITIES);
        }
        c += 1;
    }
    mask
};

/// A queued transaction with what multi-plane pairing needs (its page offset in the block and
/// its plane within the die), so the scheduler's look-ahead never touches the transaction slab:
/// `id | offset << 32 | plane << 56`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry(u64);

impl Entry {
    fn new(id: u32, offset: u32, plane_in_die: u32) -> Self {
        debug_assert!(offset < 1 << 24 && plane_in_die < 1 << 8);
        Entry(id as u64 | (offset as u64) << 32 | (plane_in_die as u64) << 56)
    }
    #[inline]
    fn id(self) -> u32 {
        self.0 as u32
    }
    #[inline]
    fn offset(self) -> u32 {
        ((self.0 >> 32) & 0xFF_FFFF) as u32
    }
    #[inline]
    fn plane(self) -> u32 {
        (self.0 >> 56) as u32
    }
}

pub struct Tsu {
    /// Per die: one queue per (class, priority).
    queues: Vec<[VecDeque<Entry>; CLASSES * PRIORITIES]>,
    /// Per die: bit i set when queue i holds a transaction (the scheduler looks at these bits,
    /// not at 28 queue headers, to find work).
    nonempty: Vec<u32>,
    /// Per die and queue: transactions waiting for each plane of the die. Planes with none can
    /// be skipped when looking for multi-plane partners (a GC victim's moves fill a queue with
    /// one plane's transactions, and scanning them for a partner would find nothing).
    per_plane: Vec<[[u32; MAX_PLANES_PER_DIE as usize]; CLASSES * PRIORITIES]>,
    policy: Scheduling,
    /// `controller.translation_reads_first`.
    translation_reads_first: bool,
    planes_per_die: u32,
    pages_per_block: u32,
    /// `pages_per_block - 1` when it is a power of two (page offsets by mask, not division).
    page_mask: Option<u32>,
    next_seq: u64,
    /// `flash.multi_plane`: transactions on the die's planes at one page offset run together.
    multi_plane: bool,
    /// `controller.scheduling = "flin"`: its state (see `flin.rs`).
    flin: Option<Flin>,
    /// The simulated time of the current push or pick (FLIN's waits are measured from it).
    pub now: crate::time::SimTime,
}

impl Tsu {
    /// Bytes of scheduler state per die before any transaction is queued: the (class, priority)
    /// queue headers, their non-empty bits and the per-plane counts (what the memory estimate
    /// charges; 16.7 M dies took 15 GiB here, issue 12 F09).
    pub const BYTES_PER_DIE: u64 = (std::mem::size_of::<[VecDeque<Entry>; CLASSES * PRIORITIES]>()
        + std::mem::size_of::<u32>()
        + std::mem::size_of::<[[u32; MAX_PLANES_PER_DIE as usize]; CLASSES * PRIORITIES]>())
        as u64;

    /// The scheduler of `geometry`'s dies, or an error if its memory cannot be allocated.
    pub fn new(geometry: &Geometry) -> Result<Self, String> {
        let dies = geometry.dies as usize;
        let refused = || {
            format!(
                "the transaction scheduler's queues for {dies} dies need {:.1} GiB and that memory could not be allocated",
                (Self::BYTES_PER_DIE * dies as u64) as f64 / (1u64 << 30) as f64
            )
        };
        let mut queues = Vec::new();
        queues.try_reserve_exact(dies).map_err(|_| refused())?;
        queues.extend((0..dies).map(|_| std::array::from_fn(|_| VecDeque::new())));
        let mut nonempty = Vec::new();
        nonempty.try_reserve_exact(dies).map_err(|_| refused())?;
        nonempty.resize(dies, 0);
        let mut per_plane = Vec::new();
        per_plane.try_reserve_exact(dies).map_err(|_| refused())?;
        per_plane.resize(dies, [[0; MAX_PLANES_PER_DIE as usize]; CLASSES * PRIORITIES]);
        Ok(Self {
            queues,
            nonempty,
            per_plane,
            policy: Scheduling::OutOfOrder,
            translation_reads_first: false,
            planes_per_die: geometry.planes_per_die,
            pages_per_block: geometry.pages_per_block,
            page_mask: geometry.pages_per_block.is_power_of_two().then(|| geometry.pages_per_block - 1),
            next_seq: 0,
            multi_plane: true,
            flin: None,
            now: 0,
        })
    }

    pub fn with_policy(mut self, policy: Scheduling) -> Self {
        self.policy = policy;
        self
    }

    pub fn policy(&self) -> Scheduling {
        self.policy
    }

    /// Whether to form multi-plane commands (`flash.multi_plane`).
    pub fn with_multi_plane(mut self, multi_plane: bool) -> Self {
        self.multi_plane = multi_plane;
        self
    }

    /// FLIN's state, for `controller.scheduling = "flin"`.
    pub fn with_flin(mut self, flin: Flin) -> Self {
        self.flin = Some(flin);
        self
    }

    pub fn with_translation_reads_first(mut self, first: bool) -> Self {
        self.translation_reads_first = first;
        self
    }

    /// The order in which a die serves its queues: GC ahead of user writes while GC is urgent
    /// on the die (one move at a time while paced GC owes moves), user work first otherwise;
    /// translation reads right behind user reads, or ahead of them with
    /// `controller.translation_reads_first`.
    #[inline]
    pub fn service_order(&self, rank: GcRank) -> &'static [Class; CLASSES] {
        match (rank, self.translation_reads_first) {
            (GcRank::First, false) => &Class::ORDER,
            (GcRank::Owed, false) => &Class::PACED_GC_ORDER,
            (GcRank::Last, false) => &Class::PREEMPTIBLE_GC_ORDER,
            (GcRank::First, true) => &Class::ORDER_TRANSLATION_FIRST,
            (GcRank::Owed, true) => &Class::PACED_GC_ORDER_TRANSLATION_FIRST,
            (GcRank::Last, true) => &Class::PREEMPTIBLE_GC_ORDER_TRANSLATION_FIRST,
        }
    }

    /// Queues transaction `id` of `slab` (with its target page: writes are placed first);
    /// returns its arrival sequence number (for FIFO order).
    #[inline]
    pub fn push(&mut self, die: u32, class: Class, id: u32, slab: &Slab<Transaction>) -> u64 {
        let txn = slab.get(id);
        let by_priority = matches!(self.policy, Scheduling::Priority | Scheduling::Flin);
        let sub = if by_priority { txn.priority as usize } else { 0 };
        let index = class as usize * PRIORITIES + sub;
        let offset = match self.page_mask {
            Some(mask) => txn.ppa & mask,
            None => txn.ppa % self.pages_per_block,
        };
        let entry = Entry::new(id, offset, txn.plane - die * self.planes_per_die);
        match (&mut self.flin, user_side(class)) {
            (Some(flin), Some(rw)) => {
                flin.insert(die, rw, sub, &mut self.queues[die as usize][index], entry, slab, self.now)
            }
            _ => self.queues[die as usize][index].push_back(entry),
        }
        self.nonempty[die as usize] |= 1 << index;
        self.per_plane[die as usize][index][entry.plane() as usize] += 1;
        self.next_seq += 1;
        self.next_seq
    }

    /// The arrival number of the oldest transaction waiting at `die`, if any.
    pub fn oldest_waiting(&self, die: u32, slab: &Slab<Transaction>) -> Option<u64> {
        self.queues[die as usize].iter().filter_map(|q| q.front()).map(|e| slab.get(e.id()).seq).min()
    }

    /// What `die` would serve next in `order`, as (rank of its queue in service order and
    /// priority, arrival number of that queue's head). Under one command per chip the chip
    /// serves the die whose pick ranks first, as MQSim's per-chip queues do (the first
    /// non-empty queue, then the die of its oldest transaction). FIFO ranks by age alone.
    pub fn next_pick(&self, die: u32, slab: &Slab<Transaction>, order: &[Class; CLASSES]) -> Option<(usize, u64)> {
        let waiting = self.nonempty[die as usize];
        if waiting == 0 {
            return None;
        }
        if self.policy == Scheduling::Fifo {
            return self.oldest_waiting(die, slab).map(|seq| (0, seq));
        }
        let (rank, index) = self.first_queue(waiting, order)?;
        Some((rank, slab.get(self.queues[die as usize][index][0].id()).seq))
    }

    /// Out of FIFO order: the first class in service order with work (bits of `waiting`),
    /// highest priority first within it (only the priority policy fills more than the first
    /// queue of each class). Returns (its rank in that order, its queue index).
    #[inline]
    fn first_queue(&self, waiting: u32, order: &[Class; CLASSES]) -> Option<(usize, usize)> {
        let by_priority = matches!(self.policy, Scheduling::Priority | Scheduling::Flin);
        let levels = if by_priority { (1u32 << PRIORITIES) - 1 } else { 1 };
        let (position, &c) =
            order.iter().enumerate().find(|&(_, &c)| (waiting >> (c as usize * PRIORITIES)) & levels != 0)?;
        let level = ((waiting >> (c as usize * PRIORITIES)) & levels).trailing_zeros() as usize;
        Some((position * PRIORITIES + level, c as usize * PRIORITIES + level))
    }

    /// Whether anything waits at `die` (in a random-read run, nothing does at about a fifth of
    /// the times a die is looked at: 86,000 of 400,000 for 200,000 reads, callgrind; its batch
    /// has just ended with an empty queue).
    #[inline]
    pub fn has_work(&self, die: u32) -> bool {
        self.nonempty[die as usize] != 0
    }

    /// Whether exactly one queue of `die` holds work: its batch is then the same in every
    /// service order (each order lists every class once, and a queue at a priority level the
    /// policy does not look at is never filled), so the caller need not work the order out.
    #[inline]
    pub fn one_queue_waiting(&self, die: u32) -> bool {
        self.nonempty[die as usize].is_power_of_two()
    }

    /// Whether reads (of any kind) wait at `die`.
    pub fn has_reads(&self, die: u32) -> bool {
        self.nonempty[die as usize] & READ_QUEUES != 0
    }

    pub fn queued(&self, die: u32) -> usize {
        self.queues[die as usize].iter().map(|q| q.len()).sum()
    }

    /// Whether write `entry` of `die` may be programmed now: it is its block's next page, or
    /// (block mapping skips pages) no queued write of the die holds a lower page of its block.
    fn in_block_order(&self, die: u32, entry: Entry, slab: &Slab<Transaction>, blocks: &BlockManager) -> bool {
        let ppa = slab.get(entry.id()).ppa;
        if blocks.is_next_program(ppa) {
            return true;
        }
        let block = ppa / self.pages_per_block;
        let page = ppa % self.pages_per_block;
        !self.write_queues(die).any(|q| {
            q.iter().any(|e| {
                e.plane() == entry.plane() && e.offset() < page && slab.get(e.id()).ppa / self.pages_per_block == block
            })
        })
    }

    /// The die's write queues that hold transactions.
    fn write_queues(&self, die: u32) -> impl Iterator<Item = &VecDeque<Entry>> + '_ {
        let waiting = self.nonempty[die as usize] & !READ_QUEUES;
        self.queues[die as usize].iter().enumerate().filter(move |(i, _)| waiting >> i & 1 != 0).map(|(_, q)| q)
    }

    /// The head's block has a lower page waiting in another queue: the first write, in service
    /// order and then queue order, that may be programmed now, as (queue index, position).
    /// Rare: only when writes of one block sit in queues of different classes or priorities.
    fn first_in_block_order(
        &self,
        die: u32,
        waiting: u32,
        order: &[Class; CLASSES],
        slab: &Slab<Transaction>,
        blocks: &BlockManager,
    ) -> Option<(usize, usize)> {
        let levels = if matches!(self.policy, Scheduling::Priority | Scheduling::Flin) { PRIORITIES } else { 1 };
        order.iter().filter(|c| c.is_write()).find_map(|&c| {
            (0..levels).map(|level| c as usize * PRIORITIES + level).filter(|&i| waiting >> i & 1 != 0).find_map(|i| {
                let queue = &self.queues[die as usize][i];
                queue.iter().position(|&e| self.in_block_order(die, e, slab, blocks)).map(|pos| (i, pos))
            })
        })
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
        blocks: &BlockManager,
    ) -> Option<Batch> {
        let allowed = if reads_only { READ_QUEUES } else { u32::MAX };
        let waiting = self.nonempty[die as usize] & allowed;
        if waiting == 0 {
            return None;
        }
        let planes_per_die = self.planes_per_die;
        let index = if self.policy == Scheduling::Fifo {
            // Strict arrival order: the queue whose head came first.
            let queues = &self.queues[die as usize];
            let mut bits = waiting;
            let mut best = (u64::MAX, 0usize);
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                best = best.min((slab.get(queues[i][0].id()).seq, i));
            }
            best.1
        } else {
            self.first_queue(waiting, order)?.1
        };
        let index = match self.flin.is_some() {
            true => self.flin_pick(die, index, waiting, slab),
            false => index,
        };
        let class = Class::from_index(index / PRIORITIES);
        let queue = &self.queues[die as usize][index];
        let pick = if self.policy == Scheduling::FlowFair && matches!(class, Class::UserRead | Class::UserWrite) {
            // The first transaction of the flow served least recently among the next few. Writes
            // already own their pages, so a write may not pass an earlier one on its plane.
            let window = queue.len().min(FAIRNESS_LOOKAHEAD);
            let mut planes_seen = 0u32;
            let mut best: Option<(u64, usize)> = None;
            for (i, &entry) in queue.iter().take(window).enumerate() {
                let t = slab.get(entry.id());
                let bit = 1u32 << entry.plane();
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
        // A write may go only when no lower page of its block still waits: pages of a block are
        // programmed in order, whichever queue (class or priority) holds them.
        let picked = queue[pick];
        let (index, pick) = if class.is_write() && !self.in_block_order(die, picked, slab, blocks) {
            self.first_in_block_order(die, waiting, order, slab, blocks).unwrap_or((index, pick))
        } else {
            (index, pick)
        };
        let queues = &mut self.queues[die as usize];
        let class = Class::from_index(index / PRIORITIES);
        let queue = &mut queues[index];
        let head = if pick == 0 { queue.pop_front() } else { queue.remove(pick) }.expect("non-empty queue");
        if let (Some(flin), Some(rw)) = (&mut self.flin, user_side(class)) {
            flin.removed(die, rw, index % PRIORITIES, pick);
        }
        let waiting_per_plane = &mut self.per_plane[die as usize][index];
        waiting_per_plane[head.plane() as usize] -= 1;
        let mut batch = Batch { class, txns: [0; MAX_PLANES_PER_DIE as usize], count: 1 };
        batch.txns[0] = head.id();
        if planes_per_die > 1 && class != Class::Erase && self.multi_plane {
            let all_planes = (1u32 << planes_per_die) - 1;
            // Planes with nothing in this queue count as seen: no partner can come from them.
            let mut planes_taken = 1u32 << head.plane();
            for (p, &n) in waiting_per_plane.iter().take(planes_per_die as usize).enumerate() {
                if n == 0 {
                    planes_taken |= 1 << p;
                }
            }
            let mut i = 0;
            // Once every plane has been seen, no later transaction may join (see below).
            while i < queue.len().min(MULTIPLANE_LOOKAHEAD) && planes_taken != all_planes {
                let entry = queue[i];
                let bit = 1u32 << entry.plane();
                // A plane's transactions stay in order: only the first one seen for a plane may join.
                let plane_free = planes_taken & bit == 0;
                planes_taken |= bit;
                // A write partner must be its block's next page, like the head (another queue
                // may hold a lower page of its block).
                if plane_free
                    && entry.offset() == head.offset()
                    && (!class.is_write() || blocks.is_next_program(slab.get(entry.id()).ppa))
                {
                    batch.txns[batch.count as usize] = queue.remove(i).expect("index in range").id();
                    if let (Some(flin), Some(rw)) = (&mut self.flin, user_side(class)) {
                        flin.removed(die, rw, index % PRIORITIES, i);
                    }
                    waiting_per_plane[entry.plane() as usize] -= 1;
                    batch.count += 1;
                } else {
                    i += 1;
                }
            }
        }
        if queue.is_empty() {
            self.nonempty[die as usize] &= !(1 << index);
        }
        Some(batch)
    }
}

/// FLIN's side (read or write) of a user class; `None` for the FTL's own classes.
#[inline]
fn user_side(class: Class) -> Option<usize> {
    match class {
        Class::UserRead => Some(flin::READ),
        Class::UserWrite => Some(flin::WRITE),
        _ => None,
    }
}

impl Tsu {
    /// FLIN's stages 2 and 3 on the queue `index` that service order chose: a user class's
    /// priority level by weighted round robin, then a user read gives way to the user write whose
    /// proportional wait is longer.
    fn flin_pick(&mut self, die: u32, index: usize, waiting: u32, slab: &Slab<Transaction>) -> usize {
        let class = Class::from_index(index / PRIORITIES);
        let Some(rw) = user_side(class) else { return index };
        let levels_of = |c: Class| (waiting >> (c as usize * PRIORITIES)) & ((1 << PRIORITIES) - 1);
        let flin = self.flin.as_mut().expect("called under FLIN");
        let level = flin.pick_level(die, rw, levels_of(class));
        let chosen = class as usize * PRIORITIES + level;
        let writes = levels_of(Class::UserWrite);
        if rw != flin::READ || writes == 0 {
            return chosen;
        }
        let write_queue = Class::UserWrite as usize * PRIORITIES + writes.trailing_zeros() as usize;
        let queues = &self.queues[die as usize];
        let (read, write) = (slab.get(queues[chosen][0].id()), slab.get(queues[write_queue][0].id()));
        if flin.write_before_read(read, write, self.now) {
            write_queue
        } else {
            chosen
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `one_queue_waiting` lets a die with one non-empty queue skip its service order: that is
    /// right only while every order lists every class exactly once.
    #[test]
    fn every_service_order_lists_every_class_once() {
        for order in [
            Class::ORDER,
            Class::ORDER_TRANSLATION_FIRST,
            Class::PREEMPTIBLE_GC_ORDER,
            Class::PREEMPTIBLE_GC_ORDER_TRANSLATION_FIRST,
            Class::PACED_GC_ORDER,
            Class::PACED_GC_ORDER_TRANSLATION_FIRST,
        ] {
            let mut seen = [false; CLASSES];
            for c in order {
                assert!(!seen[c as usize], "{c:?} twice in {order:?}");
                seen[c as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "a class missing from {order:?}");
        }
    }
}
