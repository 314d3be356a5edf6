//! The banked DRAM on a request's path (only with `dram.model = "banked"`; the serial model
//! times the data cache alone, as MQSim does).
//!
//! - A CMT lookup first reads the 8-byte entry from DRAM (hit or miss alike: the table, or the
//!   part of it that is cached, lives in DRAM).
//! - Data passes through page-sized DRAM buffers, one per plane. Data coming in is stored
//!   whole before it moves on (the controller checks it first: ECC for flash data, the
//!   transfer's CRC for host data): a host write's data is in DRAM before its pages reach the
//!   FTL, and a host read's page is in DRAM before it goes to the host. Data going out streams
//!   alongside the transfer that takes it (to the host link, or into a flash channel for a
//!   program): its DRAM read is made, and occupies banks and bus, without holding up that
//!   transfer. GC, translation-page and read-modify-write reads store their page the same way,
//!   without a wait (no host request waits on them directly).
//!
//! Time a host request waits for the DRAM is its `cache_dram` step.

use super::{Event, Simulation};
use crate::dram::DramUser;
use crate::flash::SECTOR_BYTES;
use crate::ftl::cmt::ENTRY_BYTES;
use crate::ftl::transaction::{Class, TxnKind};
use crate::stats::breakdown::Step;

/// What waits for a banked-DRAM access.
#[derive(Clone, Copy, Debug)]
pub(super) enum DramWait {
    /// Transaction `id` reads its CMT entry.
    CmtLookup,
    /// Host read transaction `id` stores its page in a data buffer.
    ReadBuffered,
    /// Host write request `id` stores its data in a data buffer.
    WriteBuffered,
}

impl Simulation {
    /// Reads transaction `id`'s CMT entry; it is translated when the read is done.
    pub(super) fn read_cmt_entry(&mut self, id: u32) {
        let address = self.dram.cmt_address(self.txns.get(id).lpa);
        let done = self.dram.access(self.now(), DramUser::Cmt, address, ENTRY_BYTES, false);
        self.queue.schedule(done, Event::DramDone { wait: DramWait::CmtLookup, id });
    }

    /// Stores a write's data (just arrived over the host link) in a data buffer.
    pub(super) fn buffer_write_data(&mut self, request: u32) {
        let (_, _, sectors) = self.request_sectors(request);
        let address = self.dram.buffer_address(request as u64);
        let done = self.dram.access(self.now(), DramUser::Buffer, address, sectors as u64 * SECTOR_BYTES, true);
        self.queue.schedule(done, Event::DramDone { wait: DramWait::WriteBuffered, id: request });
    }

    /// A page has left the flash channel: it goes into its plane's data buffer. Returns true
    /// for a host read, which completes when the page is stored (`DramDone`).
    pub(super) fn buffer_page_in(&mut self, id: u32) -> bool {
        let t = *self.txns.get(id);
        let crosses_channel = match t.kind {
            TxnKind::UserRead | TxnKind::RmwRead | TxnKind::MappingRead => true,
            TxnKind::GcRead => !self.backend.copyback,
            _ => false,
        };
        if !crosses_channel {
            return false;
        }
        let now = self.now();
        let address = self.dram.buffer_address(t.plane as u64);
        let done = self.dram.access(now, DramUser::Buffer, address, t.sectors as u64 * SECTOR_BYTES, true);
        if t.kind != TxnKind::UserRead {
            return false;
        }
        self.txns.get_mut(id).queued_at = now;
        self.queue.schedule(done, Event::DramDone { wait: DramWait::ReadBuffered, id });
        true
    }

    /// The die's program batch takes its pages' data from the buffers into the channel.
    pub(super) fn buffer_page_out(&mut self, die: u32) {
        let batch = self.backend.dies[die as usize].batch;
        debug_assert!(batch.class.is_write() && !(self.backend.copyback && batch.class == Class::GcWrite));
        let now = self.now();
        for &id in batch.ids() {
            let t = self.txns.get(id);
            let (address, bytes) = (self.dram.buffer_address(t.plane as u64), t.sectors as u64 * SECTOR_BYTES);
            self.dram.access(now, DramUser::Buffer, address, bytes, false);
        }
    }

    pub(super) fn on_dram_done(&mut self, wait: DramWait, id: u32) {
        let now = self.now();
        match wait {
            DramWait::CmtLookup => {
                let t = self.txns.get_mut(id);
                let waited = now - t.queued_at;
                t.queued_at = now;
                self.spent[id as usize].add(Step::CacheDram, waited);
                self.translate_user_page(id);
            }
            DramWait::ReadBuffered => {
                let t = *self.txns.get(id);
                self.spent[id as usize].add(Step::CacheDram, now - t.queued_at);
                // Read out toward the host link as it sends (not waited for).
                let address = self.dram.buffer_address(t.plane as u64);
                self.dram.access(now, DramUser::Buffer, address, t.sectors as u64 * SECTOR_BYTES, false);
                self.complete_txn(id);
            }
            DramWait::WriteBuffered => self.split_into_pages(id),
        }
    }
}
