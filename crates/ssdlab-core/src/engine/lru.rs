/// Recency order over slots addressed by `u32`: an intrusive doubly linked list in two flat
/// arrays, so moving a slot to the front or unlinking it is O(1) and allocates nothing once the
/// arrays have grown. The cached mapping table and the data cache keep their entries in slots and
/// their LRU order here.
#[derive(Default)]
pub struct LruOrder {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
}

pub const NIL: u32 = u32::MAX;

impl LruOrder {
    pub fn new() -> Self {
        Self { prev: Vec::new(), next: Vec::new(), head: NIL, tail: NIL }
    }

    /// The least recently used slot.
    #[inline]
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// The slot used just more recently than `s` (towards the front).
    #[inline]
    pub fn newer(&self, s: u32) -> u32 {
        self.prev[s as usize]
    }

    #[inline]
    pub fn unlink(&mut self, s: u32) {
        let (prev, next) = (self.prev[s as usize], self.next[s as usize]);
        if prev != NIL {
            self.next[prev as usize] = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.prev[next as usize] = prev;
        } else {
            self.tail = prev;
        }
    }

    /// Makes `s` the most recently used slot (it must not be linked).
    #[inline]
    pub fn push_front(&mut self, s: u32) {
        let i = s as usize;
        if i >= self.prev.len() {
            self.prev.resize(i + 1, NIL);
            self.next.resize(i + 1, NIL);
        }
        self.prev[i] = NIL;
        self.next[i] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    /// Moves a linked slot to the front.
    #[inline]
    pub fn touch(&mut self, s: u32) {
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_recency_order() {
        let mut lru = LruOrder::new();
        for s in 0..3 {
            lru.push_front(s);
        }
        assert_eq!(lru.tail(), 0);
        lru.touch(0);
        assert_eq!(lru.tail(), 1);
        lru.unlink(1);
        assert_eq!(lru.tail(), 2);
        assert_eq!(lru.newer(2), 0);
    }
}
