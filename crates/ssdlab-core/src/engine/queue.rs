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

/// Children per node of the heap. Four halves the depth of a binary heap (a run at queue depth
/// 64 holds about 40 events: 3 levels instead of 6), and the four children of a node sit in one
/// or two cache lines; picking the least of them takes three compares without branches, where a
/// binary heap's sift-down mispredicts about every other level (the heap's pop was the largest
/// single cost of a random-read run in perf).
const ARITY: usize = 4;

/// Pending events. Kept behind this one type so the heap can be swapped for a radix heap or a
/// calendar queue without touching the model. Events are small `Copy` values: pushing and popping
/// never allocates once the heap has grown to the run's peak number of pending events. Every key
/// is distinct (the sequence number breaks ties in time), so the order in which events come out
/// is fully determined by the keys and does not depend on the heap's shape.
pub struct EventQueue<E: Copy> {
    heap: Vec<Entry<E>>,
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
        Self { heap: Vec::with_capacity(1024), next_seq: 0, now: 0, processed: 0 }
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
        self.heap.len()
    }

    /// Schedules `event` at absolute time `time`. Scheduling in the past is a model bug.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { key: (u128::from(time) << 64) | u128::from(seq), event };
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

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let first = match self.heap.first() {
            Some(&first) => {
                self.sift_down_from_root(last);
                first
            }
            None => last,
        };
        // Time never goes back: the heap order guarantees it, and schedule() refuses the past.
        debug_assert!(first.time() >= self.now);
        self.now = first.time();
        self.processed += 1;
        Some((first.time(), first.event))
    }

    /// Puts `entry` (the heap's former last element) in place of the removed root: the least
    /// child moves up into the hole until `entry` is no larger than the least child.
    #[inline]
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

    /// Moves the clock forward to `time` with no event there (an outside host's clock: see
    /// `crate::device`). Never past the next event, never back.
    pub fn advance_clock(&mut self, time: SimTime) {
        let limit = self.peek_time().unwrap_or(SimTime::MAX);
        self.now = self.now.max(time.min(limit));
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(Entry::time)
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
}
