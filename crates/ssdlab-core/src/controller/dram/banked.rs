//! A banked DRAM: channels with their own data bus, ranks of banks with a row buffer each,
//! refresh, and the low-power states of an idle rank (precharge power-down, self-refresh).
//!
//! An access is split at interleaving boundaries into pieces, each on one bank and one row.
//! A piece on a bank whose row is open is a row hit (column command at once, data after tCL); on
//! a precharged bank a miss (activate, tRCD, then the column command); on a bank with another
//! row open a conflict (precharge once tRAS and write recovery allow, tRP, activate, tRCD).
//! Column commands to a bank are pipelined: the next may follow when the previous one's data
//! would be done, so a run of hits streams. Data waits for its channel's bus, so pieces on
//! different channels overlap fully and pieces on different banks of one channel overlap their
//! activates and CAS latencies. Under close-page every piece ends with an auto-precharge.
//!
//! Every rank refreshes once per tREFI (ranks staggered over the interval): a piece that would
//! start during the rank's tRFC waits for its end, and a refresh closes the rank's rows.
//! Refresh is never postponed and does not interrupt data already on the bus.
//!
//! A rank with no access in progress is idle. After `powerdown_after` it enters precharge
//! power-down (rows closed first), after `self_refresh_after` self-refresh (no external
//! refreshes meanwhile); the next access first pays tXP or tXS. Idle time is accounted lazily,
//! when the next access arrives or the run ends, so the model schedules no events of its own.
//!
//! Not modelled: bank groups (tCCD_L / tCCD_S), tRRD and tFAW between activates, read-write
//! turnaround on the bus, the command bus, refresh postponement, and per-bank refresh.

use crate::config::{Config, PagePolicy};
use crate::time::{SimTime, PS_PER_S};

const NO_ROW: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Bank {
    open_row: u64,
    /// When the open row was activated.
    activated_at: SimTime,
    /// Earliest next column command (or, with the row closed by auto-precharge, activate).
    next_command_at: SimTime,
    /// Earliest precharge: tRAS after the activate, and after read data / write recovery.
    precharge_at: SimTime,
}

/// Rank-seconds in each background state (summed over ranks), as picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Residency {
    /// An access in progress (commands, data or precharge).
    pub active_ps: u64,
    /// Idle with a row open (active standby, IDD3N).
    pub active_standby_ps: u64,
    /// Idle with all banks precharged (precharge standby, IDD2N).
    pub precharge_standby_ps: u64,
    /// Precharge power-down (IDD2P).
    pub power_down_ps: u64,
    /// Self-refresh (IDD6).
    pub self_refresh_ps: u64,
}

impl Residency {
    pub fn total_ps(&self) -> u64 {
        self.active_ps + self.active_standby_ps + self.precharge_standby_ps + self.power_down_ps + self.self_refresh_ps
    }

    fn add(&mut self, o: &Residency) {
        self.active_ps += o.active_ps;
        self.active_standby_ps += o.active_standby_ps;
        self.precharge_standby_ps += o.precharge_standby_ps;
        self.power_down_ps += o.power_down_ps;
        self.self_refresh_ps += o.self_refresh_ps;
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Rank {
    /// End of the last access's work on this rank; the rank is idle from then on.
    busy_until: SimTime,
    residency: Residency,
    /// Refreshes that fell in self-refresh (the device refreshed itself; no external REF).
    refreshes_skipped: u64,
}

/// Counts of what the banked DRAM did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BankCounts {
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    pub activates: u64,
    /// Picoseconds of read and write data on the buses (all channels).
    pub read_burst_ps: u64,
    pub write_burst_ps: u64,
    pub power_down_exits: u64,
    pub self_refresh_exits: u64,
}

pub struct BankedDram {
    channels: u64,
    ranks_per_channel: u64,
    banks_per_rank: u64,
    row_bytes: u64,
    interleave_bytes: u64,
    ps_per_byte: f64,
    t_rcd: u64,
    t_cl: u64,
    t_rp: u64,
    t_ras: u64,
    t_wr: u64,
    t_refi: u64,
    t_rfc: u64,
    t_xp: u64,
    t_xs: u64,
    open_page: bool,
    powerdown_after: Option<u64>,
    self_refresh_after: Option<u64>,
    banks: Vec<Bank>,
    ranks: Vec<Rank>,
    bus_free_at: Vec<SimTime>,
    pub counts: BankCounts,
}

impl BankedDram {
    pub fn new(config: &Config) -> Self {
        let (c, d) = (&config.cache, &config.dram);
        let ranks = d.channels as usize * d.ranks_per_channel as usize;
        let idle = Bank { open_row: NO_ROW, activated_at: 0, next_command_at: 0, precharge_at: 0 };
        Self {
            channels: d.channels as u64,
            ranks_per_channel: d.ranks_per_channel as u64,
            banks_per_rank: d.banks_per_rank as u64,
            row_bytes: c.dram_row_size.value,
            interleave_bytes: d.interleave_bytes(c),
            ps_per_byte: PS_PER_S as f64 / (c.dram_data_rate.value * c.dram_burst_bytes as f64),
            t_rcd: c.dram_trcd.value,
            t_cl: c.dram_tcl.value,
            t_rp: c.dram_trp.value,
            t_ras: d.tras.value,
            t_wr: d.twr.value,
            t_refi: d.trefi.value,
            t_rfc: d.trfc.value,
            t_xp: d.txp.value,
            t_xs: d.txs.value,
            open_page: d.page_policy == PagePolicy::OpenPage,
            powerdown_after: d.power_down.then_some(d.powerdown_after.value),
            self_refresh_after: d.self_refresh.then_some(d.self_refresh_after.value),
            banks: vec![idle; ranks * d.banks_per_rank as usize],
            ranks: vec![Rank::default(); ranks],
            bus_free_at: vec![0; d.channels as usize],
            counts: BankCounts::default(),
        }
    }

    /// Picoseconds the data of `bytes` occupies a channel's bus.
    #[inline]
    fn data_ps(&self, bytes: u64) -> u64 {
        crate::time::ceil_ps(bytes as f64 * self.ps_per_byte)
    }

    /// When rank `r`'s first refresh starts: ranks are staggered over the interval, so that
    /// not all of them are unavailable at once.
    #[inline]
    fn refresh_offset(&self, r: usize) -> u64 {
        self.t_refi * (r as u64 + 1) / self.ranks.len() as u64
    }

    /// Start of rank `r`'s last refresh at or before `t`, if any.
    #[inline]
    fn last_refresh(&self, r: usize, t: SimTime) -> Option<SimTime> {
        let first = self.refresh_offset(r);
        (t >= first).then(|| first + (t - first) / self.t_refi * self.t_refi)
    }

    /// Refreshes of rank `r` that start in [from, to).
    fn refreshes_in(&self, r: usize, from: SimTime, to: SimTime) -> u64 {
        // Refreshes that start before `t`.
        let before = |t: SimTime| {
            self.last_refresh(r, t.saturating_sub(1)).map_or(0, |s| (s - self.refresh_offset(r)) / self.t_refi + 1)
        };
        if to <= from {
            0
        } else {
            before(to) - before(from)
        }
    }

    /// Queues an access of `bytes` at `address`, issued at `now`; returns when its data is done.
    pub fn access(&mut self, now: SimTime, address: u64, bytes: u64, is_write: bool) -> SimTime {
        let bytes = bytes.max(1);
        let end = address + bytes;
        let mut at = address;
        let mut done = now;
        while at < end {
            let chunk = at / self.interleave_bytes;
            let piece_end = end.min((chunk + 1) * self.interleave_bytes);
            let channel = chunk % self.channels;
            let rest = chunk / self.channels;
            let bank = rest % self.banks_per_rank;
            let rest = rest / self.banks_per_rank;
            let rank = rest % self.ranks_per_channel;
            let local = rest / self.ranks_per_channel * self.interleave_bytes + at % self.interleave_bytes;
            let row = local / self.row_bytes;
            let r = (channel * self.ranks_per_channel + rank) as usize;
            let b = r * self.banks_per_rank as usize + bank as usize;
            done = done.max(self.piece(now, channel as usize, r, b, row, piece_end - at, is_write));
            at = piece_end;
        }
        done
    }

    /// One piece: a row of one bank.
    #[allow(clippy::too_many_arguments)]
    fn piece(
        &mut self,
        now: SimTime,
        channel: usize,
        r: usize,
        b: usize,
        row: u64,
        bytes: u64,
        is_write: bool,
    ) -> SimTime {
        let mut t = now;
        if self.ranks[r].busy_until <= now {
            t += self.wake(r, now);
        }
        t = t.max(self.banks[b].next_command_at);
        if let Some(s) = self.last_refresh(r, t) {
            // A refresh precharged the rank's banks, and they are unavailable until it ends.
            if self.banks[b].open_row != NO_ROW && self.banks[b].activated_at < s {
                self.banks[b].open_row = NO_ROW;
            }
            t = t.max(s + self.t_rfc);
        }
        let data = self.data_ps(bytes);
        let bank = &mut self.banks[b];
        let column = if bank.open_row == row {
            self.counts.row_hits += 1;
            t
        } else {
            let activate = if bank.open_row == NO_ROW {
                self.counts.row_misses += 1;
                t
            } else {
                self.counts.row_conflicts += 1;
                t.max(bank.precharge_at) + self.t_rp
            };
            self.counts.activates += 1;
            bank.activated_at = activate;
            bank.open_row = row;
            activate + self.t_rcd
        };
        let data_start = (column + self.t_cl).max(self.bus_free_at[channel]);
        let data_end = data_start + data;
        self.bus_free_at[channel] = data_end;
        bank.next_command_at = column + data;
        bank.precharge_at = (bank.activated_at + self.t_ras).max(data_end + if is_write { self.t_wr } else { 0 });
        let mut busy_end = data_end;
        if !self.open_page {
            // Auto-precharge: the row closes as soon as it may.
            bank.open_row = NO_ROW;
            busy_end = bank.precharge_at + self.t_rp;
            bank.next_command_at = bank.next_command_at.max(busy_end);
        }
        if is_write {
            self.counts.write_burst_ps += data;
        } else {
            self.counts.read_burst_ps += data;
        }
        let rank = &mut self.ranks[r];
        rank.residency.active_ps += busy_end.saturating_sub(rank.busy_until.max(now));
        rank.busy_until = rank.busy_until.max(busy_end);
        data_end
    }

    /// Accounts rank `r`'s idle time up to `now` (it was idle since `busy_until`) and returns
    /// the exit latency the access arriving now pays.
    fn wake(&mut self, r: usize, now: SimTime) -> u64 {
        let (idle, skipped) = self.idle_residency(r, now);
        let rank = &mut self.ranks[r];
        rank.residency.add(&idle);
        rank.refreshes_skipped += skipped;
        rank.busy_until = now;
        let exit = if idle.self_refresh_ps > 0 {
            self.counts.self_refresh_exits += 1;
            self.t_xs
        } else if idle.power_down_ps > 0 {
            self.counts.power_down_exits += 1;
            self.t_xp
        } else {
            return 0;
        };
        // Power-down and self-refresh are entered with every bank precharged.
        let first = r * self.banks_per_rank as usize;
        for bank in &mut self.banks[first..first + self.banks_per_rank as usize] {
            bank.open_row = NO_ROW;
        }
        exit
    }

    /// How rank `r`'s idle time from `busy_until` to `now` divides into standby (with a row open
    /// until a refresh closes it, or precharged), power-down and self-refresh; and how many
    /// refreshes self-refresh took over.
    fn idle_residency(&self, r: usize, now: SimTime) -> (Residency, u64) {
        let from = self.ranks[r].busy_until;
        let mut out = Residency::default();
        if now <= from {
            return (out, 0);
        }
        let power_down_at = self.powerdown_after.map_or(SimTime::MAX, |d| from.saturating_add(d));
        let self_refresh_at = self.self_refresh_after.map_or(SimTime::MAX, |d| from.saturating_add(d));
        let standby_end = now.min(power_down_at).min(self_refresh_at);
        let first = r * self.banks_per_rank as usize;
        let any_open = self.banks[first..first + self.banks_per_rank as usize].iter().any(|b| b.open_row != NO_ROW);
        let open_until = if any_open {
            // The next refresh after `from` closes the rows (or one in progress already did).
            let next_refresh = match self.last_refresh(r, from) {
                Some(s) => s + self.t_refi,
                None => self.refresh_offset(r),
            };
            standby_end.min(next_refresh)
        } else {
            from
        };
        out.active_standby_ps = open_until - from;
        out.precharge_standby_ps = standby_end - open_until;
        if power_down_at < self_refresh_at && now > power_down_at {
            out.power_down_ps = now.min(self_refresh_at) - power_down_at;
        }
        let mut skipped = 0;
        if now > self_refresh_at {
            out.self_refresh_ps = now - self_refresh_at;
            skipped = self.refreshes_in(r, self_refresh_at, now);
        }
        (out, skipped)
    }

    /// Rank-time in each state up to `end` (the run's end), summed over ranks.
    pub fn residency(&self, end: SimTime) -> Residency {
        let mut total = Residency::default();
        for r in 0..self.ranks.len() {
            total.add(&self.ranks[r].residency);
            total.add(&self.idle_residency(r, end).0);
        }
        total
    }

    /// External refreshes issued up to `end`, all ranks together.
    pub fn refreshes(&self, end: SimTime) -> u64 {
        (0..self.ranks.len())
            .map(|r| {
                let trailing = self.idle_residency(r, end);
                let in_trailing_sr = if trailing.0.self_refresh_ps > 0 {
                    self.refreshes_in(r, end - trailing.0.self_refresh_ps, end)
                } else {
                    0
                };
                self.refreshes_in(r, 0, end).saturating_sub(self.ranks[r].refreshes_skipped + in_trailing_sr)
            })
            .sum()
    }

    pub fn ranks(&self) -> usize {
        self.ranks.len()
    }

    pub fn channels(&self) -> usize {
        self.bus_free_at.len()
    }

    pub fn t_rfc_ps(&self) -> u64 {
        self.t_rfc
    }

    /// Bus-seconds of data, all channels, as picoseconds.
    pub fn bus_busy_ps(&self) -> u64 {
        self.counts.read_burst_ps + self.counts.write_burst_ps
    }

    /// tRC = tRAS + tRP: one activate-precharge cycle (the IDD0 measurement's loop).
    pub fn t_rc_ps(&self) -> u64 {
        self.t_ras + self.t_rp
    }

    pub fn t_ras_ps(&self) -> u64 {
        self.t_ras
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_NS;

    const NS: u64 = PS_PER_NS;

    /// tRCD = tCL = tRP = 10 ns, tRAS 30 ns, 8 GB/s (64 B take 8 ns), 1 KiB rows, two banks,
    /// no low-power states unless `extra` configures them.
    fn dram(extra: &str) -> BankedDram {
        let low_power = if extra.contains("power_down") { "" } else { "power_down = false\nself_refresh = false\n" };
        let text = format!(
            "[cache]\ndram_row_size = \"1KiB\"\ndram_data_rate = \"1000MT/s\"\ndram_burst_bytes = 8\n\
             dram_trcd = \"10ns\"\ndram_tcl = \"10ns\"\ndram_trp = \"10ns\"\n\
             [dram]\nmodel = \"banked\"\nbanks_per_rank = 2\ntras = \"30ns\"\ntwr = \"15ns\"\n\
             {low_power}{extra}\n[[flows]]\nqueue_depth = 1\nrequests = 1\n"
        );
        BankedDram::new(&Config::from_toml_str(&text).expect("valid config"))
    }

    /// Row 1 of bank 0 (rows interleave over the two banks: row 0 bank 0, row 0 bank 1, row 1 bank 0).
    const BANK0_ROW1: u64 = 2048;
    const BANK1_ROW0: u64 = 1024;

    #[test]
    fn open_page_hit_miss_and_conflict_cost_what_the_timings_say() {
        let mut d = dram("");
        // Miss: activate, tRCD, tCL, 8 ns of data.
        assert_eq!(d.access(0, 0, 64, false), 28 * NS);
        // Hit on the open row: tCL and the data only.
        assert_eq!(d.access(100 * NS, 64, 64, false), 118 * NS);
        // Conflict: precharge (tRAS long past), tRP, activate, tRCD, tCL, data.
        assert_eq!(d.access(200 * NS, BANK0_ROW1, 64, false), 238 * NS);
        assert_eq!((d.counts.row_misses, d.counts.row_hits, d.counts.row_conflicts, d.counts.activates), (1, 1, 1, 2));
    }

    #[test]
    fn a_conflict_waits_for_tras_and_write_recovery() {
        let mut d = dram("");
        // Write: data 20..28 ns; precharge no earlier than max(tRAS = 30, 28 + tWR = 43).
        assert_eq!(d.access(0, 0, 64, true), 28 * NS);
        assert_eq!(d.access(30 * NS, BANK0_ROW1, 64, false), (43 + 10 + 10 + 10 + 8) * NS);
    }

    #[test]
    fn close_page_never_hits_but_hides_the_precharge() {
        let mut d = dram("page_policy = \"close-page\"");
        assert_eq!(d.access(0, 0, 64, false), 28 * NS);
        // The row was closed by auto-precharge (done by 40 ns): a miss, not a hit.
        assert_eq!(d.access(100 * NS, 64, 64, false), 128 * NS);
        // Another row of the same bank: still a miss, no precharge to wait for.
        assert_eq!(d.access(200 * NS, BANK0_ROW1, 64, false), 228 * NS);
        assert_eq!((d.counts.row_hits, d.counts.row_misses, d.counts.row_conflicts), (0, 3, 0));
    }

    #[test]
    fn banks_overlap_and_channels_run_in_parallel() {
        // Two banks: the second activates at once; its data follows the first's on the bus.
        let mut d = dram("");
        assert_eq!(d.access(0, 0, 64, false), 28 * NS);
        assert_eq!(d.access(0, BANK1_ROW0, 64, false), 36 * NS);
        // The same bank, another row: it waits for tRAS, precharges and activates again.
        let mut d = dram("");
        d.access(0, 0, 64, false);
        assert_eq!(d.access(0, BANK0_ROW1, 64, false), (30 + 10 + 10 + 10 + 8) * NS);
        // Two channels: both finish as if alone.
        let mut d = dram("channels = 2");
        assert_eq!(d.access(0, 0, 64, false), 28 * NS);
        assert_eq!(d.access(0, 1024, 64, false), 28 * NS);
        // One access across an interleaving boundary runs on both banks at once.
        let mut d = dram("interleave = \"512B\"");
        assert_eq!(d.access(0, 0, 1024, false), (20 + 64 + 64) * NS);
    }

    #[test]
    fn refresh_blocks_the_rank_and_closes_its_rows() {
        let mut d = dram("");
        d.access(0, 0, 64, false);
        // The first refresh starts at tREFI = 7.8 us and lasts tRFC = 350 ns; the row it closed
        // must be activated again.
        assert_eq!(d.access(7_900 * NS, 64, 64, false), (8_150 + 28) * NS);
        assert_eq!(d.counts.row_hits, 0);
        assert_eq!(d.refreshes(10_000 * NS), 1);
        assert_eq!(d.refreshes(7_800 * NS * 5 + 1), 5);
    }

    #[test]
    fn idle_ranks_power_down_then_self_refresh_and_pay_the_exit_latency() {
        let mut d =
            dram("power_down = true\npowerdown_after = \"1us\"\nself_refresh = true\nself_refresh_after = \"50us\"");
        assert_eq!(d.access(0, 0, 64, false), 28 * NS);
        // 500 ns idle: still in standby with the row open, a hit.
        assert_eq!(d.access(528 * NS, 64, 64, false), 546 * NS);
        // 4 us idle: powered down after 1 us (rows closed); tXP = 6 ns, then a miss.
        assert_eq!(d.access(4_546 * NS, 64, 64, false), (4_546 + 6 + 28) * NS);
        assert_eq!(d.counts.power_down_exits, 1);
        // 200 us idle: self-refresh after 50 us; tXS = 360 ns.
        let t = 4_580 * NS + 200_000 * NS;
        assert_eq!(d.access(t, 0, 64, false), t + 360 * NS + 28 * NS);
        assert_eq!(d.counts.self_refresh_exits, 1);
        let r = d.residency(t + 1_000 * NS);
        assert_eq!(r.total_ps(), t + 1_000 * NS, "every moment of the rank is in one state");
        assert_eq!(r.self_refresh_ps, 150_000 * NS);
        assert_eq!(r.power_down_ps, 3_000 * NS + 49_000 * NS);
        // Refreshes fall every 7.8 us (26 by the end), except during the self-refresh from
        // 54.58 us to 204.58 us (the 20 due at 54.6, 62.4, ..., 202.8 us).
        assert_eq!(d.refreshes(t + 1_000 * NS), 26 - 20);
    }
}
