//! Flash transactions: the page-sized pieces a request is split into, plus the ones the FTL
//! creates itself (GC moves and erases). They live in a slab and are named by index, so events
//! and queues carry 4-byte ids and nothing is allocated per transaction once the slab has grown.

use crate::time::SimTime;

pub const NO_REQUEST: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnKind {
    /// A host read of (part of) a page.
    UserRead,
    /// The read half of a read-modify-write: a partial-page write must first fetch the rest of
    /// the page it updates.
    RmwRead,
    UserWrite,
    GcRead,
    GcWrite,
    Erase,
    /// A read of a translation page after a cached-mapping-table miss.
    MappingRead,
    /// A write-back of a translation page (dirty CMT eviction, or map updates from GC).
    MappingWrite,
    /// Block-mapped families: a merge reads a page it copies (or a super-page update reads a
    /// page it rewrites), programs the copy, and erases a block it has emptied. Their
    /// `request` field holds the merge's id.
    MergeRead,
    MergeWrite,
    MergeErase,
}

impl TxnKind {
    /// The transaction scheduling queue this kind waits in (index into [`Class`] order).
    #[inline]
    pub fn class(self) -> Class {
        match self {
            TxnKind::UserRead | TxnKind::RmwRead => Class::UserRead,
            TxnKind::GcRead | TxnKind::MergeRead => Class::GcRead,
            TxnKind::GcWrite | TxnKind::MergeWrite => Class::GcWrite,
            TxnKind::Erase | TxnKind::MergeErase => Class::Erase,
            TxnKind::UserWrite => Class::UserWrite,
            TxnKind::MappingRead => Class::MappingRead,
            TxnKind::MappingWrite => Class::MappingWrite,
        }
    }

    #[inline]
    pub fn is_read(self) -> bool {
        matches!(
            self,
            TxnKind::UserRead | TxnKind::RmwRead | TxnKind::GcRead | TxnKind::MappingRead | TxnKind::MergeRead
        )
    }
}

/// TSU queues of one die, in the order they are served: reads ahead of writes (a mapping read
/// right behind user reads, since a user request waits for it), and GC (not preemptible, as in
/// MQSim's default) ahead of user writes so that free space is reclaimed before more is consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    UserRead = 0,
    MappingRead = 1,
    GcRead = 2,
    GcWrite = 3,
    MappingWrite = 4,
    Erase = 5,
    UserWrite = 6,
}

pub const CLASSES: usize = 7;

impl Class {
    /// All classes in service order.
    pub const ORDER: [Class; CLASSES] = [
        Class::UserRead,
        Class::MappingRead,
        Class::GcRead,
        Class::GcWrite,
        Class::MappingWrite,
        Class::Erase,
        Class::UserWrite,
    ];

    pub const fn is_read(self) -> bool {
        matches!(self, Class::UserRead | Class::MappingRead | Class::GcRead)
    }

    /// The class whose discriminant is `index`.
    #[inline]
    pub fn from_index(index: usize) -> Class {
        const BY_INDEX: [Class; CLASSES] = [
            Class::UserRead,
            Class::MappingRead,
            Class::GcRead,
            Class::GcWrite,
            Class::MappingWrite,
            Class::Erase,
            Class::UserWrite,
        ];
        const _: () = {
            let mut i = 0;
            while i < CLASSES {
                assert!(BY_INDEX[i] as usize == i, "BY_INDEX follows the discriminants");
                i += 1;
            }
        };
        BY_INDEX[index]
    }

    /// Service order when GC is preemptible and no plane of the die is short of space: every
    /// user (and mapping) transaction before any GC work.
    pub const PREEMPTIBLE_GC_ORDER: [Class; CLASSES] = [
        Class::UserRead,
        Class::MappingRead,
        Class::UserWrite,
        Class::MappingWrite,
        Class::GcRead,
        Class::GcWrite,
        Class::Erase,
    ];

    pub fn is_write(self) -> bool {
        matches!(self, Class::UserWrite | Class::GcWrite | Class::MappingWrite)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Transaction {
    pub kind: TxnKind,
    /// The host request this belongs to, or `NO_REQUEST` for FTL-internal work.
    pub request: u32,
    pub lpa: u32,
    /// Target physical page (for an erase: the block's first page).
    pub ppa: u32,
    /// Target plane (known before the page is allocated for writes).
    pub plane: u32,
    /// Sectors that cross the channel for a read.
    pub sectors: u32,
    /// When it entered its die queue (or started waiting for space).
    pub queued_at: SimTime,
    /// Next transaction waiting for the same translation page (a list threaded through the slab).
    pub next_waiting: u32,
    /// NVMe priority class of the flow it serves (0 = urgent .. 3 = low).
    pub priority: u8,
    /// The flow it serves (for FTL-internal work: 0).
    pub flow: u16,
    /// First sector of the page it covers (with `sectors`, which sectors a host page touches).
    pub first_sector: u16,
    /// Arrival order at its die queue.
    pub seq: u64,
}
