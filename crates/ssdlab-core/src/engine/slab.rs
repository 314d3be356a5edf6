/// Fixed-record storage addressed by `u32` ids, reusing freed slots, so that requests and
/// transactions in flight cost no allocation once the slab has grown to the run's peak.
pub struct Slab<T: Copy> {
    slots: Vec<T>,
    free: Vec<u32>,
    live: u32,
}

impl<T: Copy> Default for Slab<T> {
    fn default() -> Self {
        Self { slots: Vec::new(), free: Vec::new(), live: 0 }
    }
}

impl<T: Copy> Slab<T> {
    #[inline]
    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = value;
                id
            }
            None => {
                self.slots.push(value);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Frees a slot; its id may be handed out again.
    #[inline]
    pub fn remove(&mut self, id: u32) -> T {
        self.live -= 1;
        self.free.push(id);
        self.slots[id as usize]
    }

    #[inline]
    pub fn get(&self, id: u32) -> &T {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        &mut self.slots[id as usize]
    }

    /// Entries inserted and not yet removed.
    pub fn live(&self) -> u32 {
        self.live
    }
}
