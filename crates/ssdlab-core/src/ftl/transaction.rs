//! Flash transactions: the page-sized pieces a request is split into, plus the ones the FTL
//! creates itself (GC moves and erases). They live in a slab and are named by index, so events
//! and queues carry 4-byte ids and nothing is allocated per transaction once the slab has grown.

use crate::stats::breakdown::Breakdown;
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
}

impl TxnKind {
    /// The transaction scheduling queue this kind waits in (index into [`Class`] order).
    #[inline]
    pub fn class(self) -> Class {
        match self {
            TxnKind::UserRead | TxnKind::RmwRead => Class::UserRead,
            TxnKind::GcRead => Class::GcRead,
            TxnKind::GcWrite => Class::GcWrite,
            TxnKind::Erase => Class::Erase,
            TxnKind::UserWrite => Class::UserWrite,
        }
    }

    #[inline]
    pub fn is_read(self) -> bool {
        matches!(self, TxnKind::UserRead | TxnKind::RmwRead | TxnKind::GcRead)
    }
}

/// TSU queues of one die, in the order they are served: reads ahead of writes, and GC (not
/// preemptible, as in MQSim's default) ahead of user writes so that free space is reclaimed
/// before more is consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    UserRead = 0,
    GcRead = 1,
    GcWrite = 2,
    Erase = 3,
    UserWrite = 4,
}

pub const CLASSES: usize = 5;

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
    /// Time spent so far, by step, for the latency breakdown.
    pub spent: Breakdown,
}
