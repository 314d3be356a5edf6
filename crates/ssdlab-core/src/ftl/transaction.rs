//! Flash transactions: the page-sized pieces a request is split into, plus the ones the FTL
//! creates itself (GC moves and erases). They live in a slab and are named by index, so events
//! and queues carry 4-byte ids and nothing is allocated per transaction once the slab has grown.

use crate::config::Priority;
use crate::ftl::mapping::UNMAPPED;
use crate::time::SimTime;

pub const NO_REQUEST: u32 = u32::MAX;
/// No transaction: the end of a list threaded through the slab.
pub const NO_TXN: u32 = u32::MAX;

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
    /// Zoned namespaces: the erase of a block of a zone being reset, and a padding program of a
    /// zone being finished. Their `request` field holds the zone management command's id.
    ZoneErase,
    ZonePad,
}

impl TxnKind {
    /// The transaction scheduling queue this kind waits in (index into [`Class`] order).
    #[inline]
    pub fn class(self) -> Class {
        match self {
            TxnKind::UserRead | TxnKind::RmwRead => Class::UserRead,
            TxnKind::GcRead | TxnKind::MergeRead => Class::GcRead,
            TxnKind::GcWrite | TxnKind::MergeWrite => Class::GcWrite,
            TxnKind::Erase | TxnKind::MergeErase | TxnKind::ZoneErase => Class::Erase,
            TxnKind::UserWrite | TxnKind::ZonePad => Class::UserWrite,
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
    UserRead,
    MappingRead,
    GcRead,
    GcWrite,
    MappingWrite,
    Erase,
    UserWrite,
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

    /// [`Class::ORDER`] and [`Class::PREEMPTIBLE_GC_ORDER`] with translation reads ahead of
    /// user reads (`controller.translation_reads_first`, MQSim's TSU).
    pub const ORDER_TRANSLATION_FIRST: [Class; CLASSES] = [
        Class::MappingRead,
        Class::UserRead,
        Class::GcRead,
        Class::GcWrite,
        Class::MappingWrite,
        Class::Erase,
        Class::UserWrite,
    ];
    pub const PREEMPTIBLE_GC_ORDER_TRANSLATION_FIRST: [Class; CLASSES] = [
        Class::MappingRead,
        Class::UserRead,
        Class::UserWrite,
        Class::MappingWrite,
        Class::GcRead,
        Class::GcWrite,
        Class::Erase,
    ];

    pub const fn is_read(self) -> bool {
        matches!(self, Class::UserRead | Class::MappingRead | Class::GcRead)
    }

    /// The class whose discriminant is `index` (the service order is the declaration order).
    #[inline]
    pub fn from_index(index: usize) -> Class {
        const _: () = {
            let mut i = 0;
            while i < CLASSES {
                assert!(Class::ORDER[i] as usize == i, "ORDER follows the declaration order");
                i += 1;
            }
        };
        Self::ORDER[index]
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

    /// Service order under paced GC while a plane of the die owes moves: GC ahead of host
    /// writes, a victim's page already read programmed before the next one is read (one move
    /// at a time, each paid as its program starts, so the share stops when the debt is paid).
    pub const PACED_GC_ORDER: [Class; CLASSES] = [
        Class::UserRead,
        Class::MappingRead,
        Class::GcWrite,
        Class::GcRead,
        Class::MappingWrite,
        Class::Erase,
        Class::UserWrite,
    ];
    pub const PACED_GC_ORDER_TRANSLATION_FIRST: [Class; CLASSES] = [
        Class::MappingRead,
        Class::UserRead,
        Class::GcWrite,
        Class::GcRead,
        Class::MappingWrite,
        Class::Erase,
        Class::UserWrite,
    ];

    /// Whether its transactions program pages (and so must keep their blocks' page order).
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Class::UserWrite | Class::GcWrite | Class::MappingWrite)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Transaction {
    pub kind: TxnKind,
    /// The host request this belongs to, or `NO_REQUEST` for FTL-internal work; a merge's
    /// steps carry their merge's id here instead (see [`Self::host_request`]).
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
    /// Sectors of the page the host (or the FTL) wrote: a write programs the whole page, and
    /// `flash.partial_page_transfer` moves only these over the channel. Set when the transaction
    /// is made and kept while `sectors` changes (a read-modify-write, a whole-page program).
    pub written_sectors: u16,
    /// Arrival order at its die queue.
    pub seq: u64,
}

// Transactions live in a slab on the hot path: keep them at 48 bytes.
const _: () = assert!(std::mem::size_of::<Transaction>() == 48);

impl Transaction {
    /// The host request this serves, if any (a block-mapped merge's steps carry the merge's
    /// id in `request`, not a host request's).
    #[inline]
    pub fn host_request(&self) -> Option<u32> {
        let merge = matches!(self.kind, TxnKind::MergeRead | TxnKind::MergeWrite | TxnKind::MergeErase);
        (self.request != NO_REQUEST && !merge).then_some(self.request)
    }

    /// A transaction of `kind` on `sectors` sectors of logical page `lpa`, created at
    /// `queued_at`, not yet on a physical page or a plane. It is FTL work (no flow's, in the
    /// middle priority class) until [`Transaction::serving`] says whose it is.
    pub fn new(kind: TxnKind, request: u32, lpa: u32, sectors: u32, queued_at: SimTime) -> Self {
        Transaction {
            kind,
            request,
            lpa,
            ppa: UNMAPPED,
            plane: 0,
            sectors,
            queued_at,
            next_waiting: NO_TXN,
            priority: Priority::Medium as u8,
            flow: 0,
            first_sector: 0,
            written_sectors: sectors.min(u16::MAX as u32) as u16,
            seq: 0,
        }
    }

    /// Serving `flow` (at its NVMe `priority`) from sector `first_sector` of the page.
    pub fn serving(self, flow: u16, priority: u8, first_sector: u16) -> Self {
        Transaction { flow, priority, first_sector, ..self }
    }

    /// On physical page `ppa` of `plane`.
    pub fn at(self, ppa: u32, plane: u32) -> Self {
        Transaction { ppa, plane, ..self }
    }
}
