//! Replacement order within each set of the data cache, over line slots addressed by `u32`.
//!
//! [`SetLists`] keeps one intrusive doubly linked list per set in shared flat arrays (moving a
//! slot to the front or unlinking it is O(1) and allocates nothing once the arrays have grown):
//! recency order for LRU, insertion order for FIFO. [`SetMembers`] keeps each set's slots in a
//! dense array, so random replacement can pick the i-th member in O(1).

use crate::engine::lru::NIL;

/// One linked list per set: front = most recent (LRU) or newest insert (FIFO).
#[derive(Default)]
pub struct SetLists {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
}

impl SetLists {
    pub fn new(sets: u32) -> Self {
        Self { prev: Vec::new(), next: Vec::new(), head: vec![NIL; sets as usize], tail: vec![NIL; sets as usize] }
    }

    /// The set's oldest slot (least recently used, or first inserted).
    #[inline]
    pub fn tail(&self, set: u32) -> u32 {
        self.tail[set as usize]
    }

    /// The slot just newer than `s` (towards the front of its set).
    #[inline]
    pub fn newer(&self, s: u32) -> u32 {
        self.prev[s as usize]
    }

    #[inline]
    pub fn unlink(&mut self, set: u32, s: u32) {
        let (prev, next) = (self.prev[s as usize], self.next[s as usize]);
        if prev != NIL {
            self.next[prev as usize] = next;
        } else {
            self.head[set as usize] = next;
        }
        if next != NIL {
            self.prev[next as usize] = prev;
        } else {
            self.tail[set as usize] = prev;
        }
    }

    /// Makes `s` the newest slot of `set` (it must not be linked).
    #[inline]
    pub fn push_front(&mut self, set: u32, s: u32) {
        let i = s as usize;
        if i >= self.prev.len() {
            self.prev.resize(i + 1, NIL);
            self.next.resize(i + 1, NIL);
        }
        let head = self.head[set as usize];
        self.prev[i] = NIL;
        self.next[i] = head;
        if head != NIL {
            self.prev[head as usize] = s;
        }
        self.head[set as usize] = s;
        if self.tail[set as usize] == NIL {
            self.tail[set as usize] = s;
        }
    }

    /// Moves a linked slot to the front of its set.
    #[inline]
    pub fn touch(&mut self, set: u32, s: u32) {
        if self.head[set as usize] != s {
            self.unlink(set, s);
            self.push_front(set, s);
        }
    }
}

/// Each set's slots packed at the start of its `ways`-long stretch of one array.
#[derive(Default)]
pub struct SetMembers {
    ways: u32,
    members: Vec<u32>,
    count: Vec<u32>,
    /// Where each slot sits within its set's stretch.
    pos: Vec<u32>,
}

impl SetMembers {
    pub fn new(sets: u32, ways: u32) -> Self {
        Self { ways, members: vec![NIL; sets as usize * ways as usize], count: vec![0; sets as usize], pos: Vec::new() }
    }

    #[inline]
    pub fn count(&self, set: u32) -> u32 {
        self.count[set as usize]
    }

    /// The `i`-th slot of `set` (i < count).
    #[inline]
    pub fn get(&self, set: u32, i: u32) -> u32 {
        self.members[(set as u64 * self.ways as u64 + i as u64) as usize]
    }

    pub fn insert(&mut self, set: u32, s: u32) {
        let n = self.count[set as usize];
        debug_assert!(n < self.ways, "set {set} is full");
        self.members[(set as u64 * self.ways as u64 + n as u64) as usize] = s;
        if s as usize >= self.pos.len() {
            self.pos.resize(s as usize + 1, NIL);
        }
        self.pos[s as usize] = n;
        self.count[set as usize] = n + 1;
    }

    /// Removes `s` from its set, moving the set's last member into its place.
    pub fn remove(&mut self, set: u32, s: u32) {
        let base = set as u64 * self.ways as u64;
        let last = self.count[set as usize] - 1;
        let at = self.pos[s as usize];
        let moved = self.members[(base + last as u64) as usize];
        self.members[(base + at as u64) as usize] = moved;
        self.pos[moved as usize] = at;
        self.members[(base + last as u64) as usize] = NIL;
        self.count[set as usize] = last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_set_keeps_its_own_order() {
        let mut lists = SetLists::new(2);
        lists.push_front(0, 0);
        lists.push_front(1, 1);
        lists.push_front(0, 2);
        assert_eq!(lists.tail(0), 0);
        assert_eq!(lists.tail(1), 1);
        lists.touch(0, 0);
        assert_eq!(lists.tail(0), 2);
        assert_eq!(lists.newer(2), 0);
        lists.unlink(1, 1);
        assert_eq!(lists.tail(1), NIL);
    }

    #[test]
    fn members_stay_dense_after_removal() {
        let mut m = SetMembers::new(2, 3);
        for s in [4, 5, 6] {
            m.insert(1, s);
        }
        m.remove(1, 4);
        assert_eq!(m.count(1), 2);
        let mut left = [m.get(1, 0), m.get(1, 1)];
        left.sort();
        assert_eq!(left, [5, 6]);
        assert_eq!(m.count(0), 0);
    }
}
