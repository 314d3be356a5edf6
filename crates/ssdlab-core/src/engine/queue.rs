use crate::time::SimTime;

/// One pending event. Its order key is `(time, seq)` as one `u128` (time in the high half), so
/// comparing two keys is a single wide compare the compiler turns into flags and conditional
/// moves rather than a branch per field.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn time(&self) -> SimTime {
        (self.key >> 64) as SimTime
    }
}

/// Children per node of the far heap. Four halves the depth of a binary heap, and the four
/// children of a node sit in one or two cache lines; picking the least of them takes three
/// compares without branches, where a binary heap's sift-down mispredicts about every other level.
const ARITY: usize = 4;

/// Width of one calendar bucket: 2^20 ps = 1.05 us. The events of a run are a flash operation or
/// a transfer away (16 ns to a few ms in the runs profiled, most under 1 ms): a bucket seldom
/// holds more than a few of them, so the list kept sorted in each stays short.
const BUCKET_SHIFT: u32 = 20;
/// Buckets in the ring: 2,048 buckets of 1.05 us reach 2.1 ms ahead, past a page program (the
/// longest common event); later events (erases, host arrivals, idle checks) wait in the far
/// heap. 8 KiB of list heads and 256 bytes of occupancy bits: with 8,192 buckets of 262 ns the
/// heads (32 KiB) took a level-1 data cache miss on one schedule in three (callgrind's cache
/// model), for about the same instructions.
const BUCKETS: usize = 1 << 11;
/// Occupancy words, one bit per bucket; `summary` has one bit per word.
const WORDS: usize = BUCKETS / 64;
const _: () = assert!(WORDS == u32::BITS as usize, "the summary is a u32");
/// End of a bucket's list, and of the free list.
const NIL: u32 = u32::MAX;

/// A pending event in the ring: its key, its event and the next node of its bucket's list.
#[derive(Clone, Copy)]
struct Node<E> {
    entry: Entry<E>,
    next: u32,
}

/// Pending events: a calendar queue (Brown, CACM 1988) of 1.05 us buckets reaching 2.1 ms ahead
/// of the clock, with a 4-ary heap for the few events further out. Perf and callgrind put the
/// binary, then 4-ary heap this replaced at 15 % of a random-read run and 14 % of a random-write
/// run with GC (about 160 instructions per event at 40 to 60 pending events); scheduling here is
/// a shift, a short sorted-list insert and two bit sets, and popping finds the next occupied
/// bucket with one or two `trailing_zeros` (a 32-bit summary of the 32 occupancy words).
///
/// Every key `(time, seq)` is distinct, and `pop` always returns the least key of the ring and
/// the far heap together, so the order in which events come out is that of the keys alone, as
/// with the heap before (same results, byte for byte). Ring events lie within `BUCKETS` buckets
/// of the clock's bucket (the clock only moves forward), so walking the ring from the clock's
/// bucket meets them in time order. Nothing allocates once the node slab and the far heap have
/// grown to the run's peak of pending events.
pub struct EventQueue<E: Copy> {
    /// Node slab; free nodes are chained through `next` from `free`.
    nodes: Vec<Node<E>>,
    free: u32,
    /// First (least-key) node of each bucket's sorted list, or `NIL`.
    heads: Box<[u32]>,
    /// Bit b of word w: bucket 64 w + b is not empty. Bit w of `summary`: word w is not zero.
    occupied: [u64; WORDS],
    summary: u32,
    in_ring: usize,
    far: FarHeap<E>,
    next_seq: u64,
    now: SimTime,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            nodes: Vec::with_capacity(1024),
            free: NIL,
            heads: vec![NIL; BUCKETS].into_boxed_slice(),
            occupied: [0; WORDS],
            summary: 0,
            in_ring: 0,
            far: FarHeap { heap: Vec::new() },
            next_seq: 0,
            now: 0,
            processed: 0,
        }
    }

    /// The time of the event being processed (or of the last one processed).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn pending(&self) -> usize {
        self.in_ring + self.far.heap.len()
    }

    /// Schedules `event` at absolute time `time`. Scheduling in the past is a model bug.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { key: (u128::from(time) << 64) | u128::from(seq), event };
        if (time >> BUCKET_SHIFT) - (self.now >> BUCKET_SHIFT) >= BUCKETS as u64 {
            self.far.push(entry);
            return;
        }
        let bucket = (time >> BUCKET_SHIFT) as usize % BUCKETS;
        let id = self.new_node(entry);
        // Sorted insert: keys of one bucket mostly come in increasing order, and a bucket
        // seldom holds more than a few events.
        let head = self.heads[bucket];
        if head == NIL || self.nodes[head as usize].entry.key > entry.key {
            if head == NIL {
                self.occupied[bucket / 64] |= 1 << (bucket % 64);
                self.summary |= 1 << (bucket / 64);
            }
            self.nodes[id as usize].next = head;
            self.heads[bucket] = id;
        } else {
            let mut prev = head;
            loop {
                let next = self.nodes[prev as usize].next;
                if next == NIL || self.nodes[next as usize].entry.key > entry.key {
                    self.nodes[id as usize].next = next;
                    self.nodes[prev as usize].next = id;
                    break;
                }
                prev = next;
            }
        }
        self.in_ring += 1;
    }

    #[inline]
    fn new_node(&mut self, entry: Entry<E>) -> u32 {
        let node = Node { entry, next: NIL };
        if self.free == NIL {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        } else {
            let id = self.free;
            self.free = self.nodes[id as usize].next;
            self.nodes[id as usize] = node;
            id
        }
    }

    /// The first occupied bucket walking the ring from the clock's bucket (the ring is not
    /// empty).
    #[inline]
    fn first_occupied(&self) -> usize {
        let start = (self.now >> BUCKET_SHIFT) as usize % BUCKETS;
        let (word, bit) = (start / 64, start % 64);
        let ahead = self.occupied[word] & (u64::MAX << bit);
        if ahead != 0 {
            return word * 64 + ahead.trailing_zeros() as usize;
        }
        // The next non-zero word after this one, wrapping round (back to this word's buckets
        // behind the clock's, which are the ring's furthest).
        let after = (word + 1) % WORDS;
        let w = (after + self.summary.rotate_right(after as u32).trailing_zeros() as usize) % WORDS;
        w * 64 + self.occupied[w].trailing_zeros() as usize
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let entry = if self.in_ring > 0 {
            let bucket = self.first_occupied();
            let id = self.heads[bucket];
            let node = self.nodes[id as usize];
            if self.far.heap.first().is_some_and(|f| f.key < node.entry.key) {
                self.far.pop()?
            } else {
                self.heads[bucket] = node.next;
                if node.next == NIL {
                    let word = bucket / 64;
                    self.occupied[word] &= !(1 << (bucket % 64));
                    if self.occupied[word] == 0 {
                        self.summary &= !(1 << word);
                    }
                }
                self.nodes[id as usize].next = self.free;
                self.free = id;
                self.in_ring -= 1;
                node.entry
            }
        } else {
            self.far.pop()?
        };
        // Time never goes back: keys come out in order, and schedule() refuses the past.
        debug_assert!(entry.time() >= self.now);
        self.now = entry.time();
        self.processed += 1;
        Some((entry.time(), entry.event))
    }

    /// Moves the clock forward to `time` with no event there (an outside host's clock: see
    /// `crate::device`). Never past the next event, never back.
    pub fn advance_clock(&mut self, time: SimTime) {
        let limit = self.peek_time().unwrap_or(SimTime::MAX);
        self.now = self.now.max(time.min(limit));
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        let ring = (self.in_ring > 0).then(|| self.nodes[self.heads[self.first_occupied()] as usize].entry.key);
        let far = self.far.heap.first().map(|f| f.key);
        let key = match (ring, far) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some((key >> 64) as SimTime)
    }
}

/// The events beyond the ring's reach, in a 4-ary min-heap on their keys.
struct FarHeap<E> {
    heap: Vec<Entry<E>>,
}

impl<E: Copy> FarHeap<E> {
    fn push(&mut self, entry: Entry<E>) {
        // Sift up: move parents down into the hole until the new key's place is found.
        let mut hole = self.heap.len();
        self.heap.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = entry;
    }

    fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        Some(match self.heap.first() {
            Some(&first) => {
                self.sift_down_from_root(last);
                first
            }
            None => last,
        })
    }

    /// Puts `entry` (the heap's former last element) in place of the removed root: the least
    /// child moves up into the hole until `entry` is no larger than the least child.
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
        let heap = &mut self.heap[..];
        let len = heap.len();
        let mut hole = 0;
        loop {
            let first_child = ARITY * hole + 1;
            if first_child >= len {
                break;
            }
            let least = if first_child + ARITY <= len {
                // A full node: a tournament of three compares, all as conditional moves.
                let c = &heap[first_child..first_child + ARITY];
                let a = if c[1].key < c[0].key { 1 } else { 0 };
                let b = if c[3].key < c[2].key { 3 } else { 2 };
                first_child + if c[b].key < c[a].key { b } else { a }
            } else {
                let mut least = first_child;
                for child in first_child + 1..len {
                    if heap[child].key < heap[least].key {
                        least = child;
                    }
                }
                least
            };
            if entry.key <= heap[least].key {
                break;
            }
            heap[hole] = heap[least];
            hole = least;
        }
        heap[hole] = entry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        q.schedule(5, 'b');
        q.schedule(10, 'c');
        q.schedule(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), 10);
        assert_eq!(q.processed(), 4);
    }

    /// Against a reference (a sorted set of keys), over schedules that mix the ring's reach
    /// (same bucket, neighbouring buckets, the ring's far end and its wrap-around) with the far
    /// heap's, pops interleaved with pushes, and outside clock advances.
    mod against_reference {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeSet;

        #[derive(Debug, Clone)]
        enum Op {
            Schedule(u64),
            Pop,
            Advance(u64),
        }

        fn delay() -> impl Strategy<Value = u64> {
            let bucket = 1u64 << BUCKET_SHIFT;
            let reach = bucket * BUCKETS as u64;
            prop_oneof![
                Just(0),
                0..bucket,
                0..64 * bucket,
                reach - 2 * bucket..reach + 2 * bucket,
                0..4 * reach,
                Just(u64::from(u32::MAX) << 20),
            ]
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => delay().prop_map(Op::Schedule),
                3 => Just(Op::Pop),
                1 => delay().prop_map(Op::Advance),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]
            #[test]
            fn pops_the_least_key(ops in proptest::collection::vec(op(), 1..400)) {
                let mut q = EventQueue::new();
                let mut reference = BTreeSet::new();
                let mut seq = 0u64;
                for op in ops {
                    match op {
                        Op::Schedule(d) => {
                            let time = q.now() + d;
                            q.schedule(time, seq);
                            reference.insert((time, seq));
                            seq += 1;
                        }
                        Op::Pop => {
                            let want = reference.pop_first();
                            prop_assert_eq!(q.pop(), want);
                        }
                        Op::Advance(d) => {
                            q.advance_clock(q.now() + d);
                            prop_assert!(reference.first().is_none_or(|&(t, _)| q.now() <= t));
                        }
                    }
                    prop_assert_eq!(q.pending(), reference.len());
                    prop_assert_eq!(q.peek_time(), reference.first().map(|&(t, _)| t));
                }
                while let Some(want) = reference.pop_first() {
                    prop_assert_eq!(q.pop(), Some(want));
                }
                prop_assert_eq!(q.pop(), None);
            }
        }
    }
}
