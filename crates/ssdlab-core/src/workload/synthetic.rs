//! Synthetic request generator: read/write mix, request size, address pattern and arrival process.

use super::{Op, RequestSpec};
use crate::config::{AddressPattern, FlowConfig, RequestSize};
use crate::engine::RandomStream;
use crate::flash::SECTOR_BYTES;
use crate::time::{SimTime, PS_PER_S};

enum SizeDist {
    Fixed(u64),
    Normal { mean: f64, stdev: f64 },
}

enum Pattern {
    Uniform,
    /// The first `hot_units` alignment units of the working set get `hot_traffic` of the requests.
    HotCold {
        hot_units: u64,
        hot_traffic: f64,
    },
    Sequential {
        next_unit: u64,
    },
    /// `address = "zoned"`: zones written in order, reset when the writer needs one.
    Zoned(Box<super::zoned::ZoneWriter>),
    /// `address = "zoned"` with `[flows.lsm]`: an LSM store's files placed in zones by level.
    Lsm(Box<super::lsm::LsmAllocator>),
}

/// How requests arrive: a closed loop keeps `depth` outstanding; an open loop draws exponential
/// inter-arrival times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    Closed { depth: u32 },
    Open { mean_interarrival_ps: f64 },
}

pub struct Synthetic {
    rng: RandomStream,
    read_fraction: f64,
    size: SizeDist,
    pattern: Pattern,
    /// Fraction of requests the pattern places; the others follow the previous request
    /// (fio's `percentage_random`). 1 for every flow that does not say.
    random_fraction: f64,
    /// The alignment unit just after the previous request: where a sequential request goes.
    following_unit: u64,
    align_sectors: u64,
    /// Alignment units in the working set (`ws_sectors / align_sectors`), where requests start.
    units: u64,
    ws_start_sector: u64,
    ws_sectors: u64,
    pub arrival: Arrival,
    next_open_arrival: SimTime,
    /// The request after the one [`Self::next`] returned last, drawn one call early (closed-loop
    /// flows with a plain address pattern): the simulator asks for its first page's map entry a
    /// request ahead, so that the random read of the map has arrived when the command does
    /// (perf put a third of a random-read run's time on that miss when it was asked for only a
    /// few events ahead). Drawn from the same stream in the same order, so the requests are the
    /// same; zoned and LSM patterns, whose state the results report, never draw ahead.
    ahead: Option<RequestSpec>,
    /// Whether this flow draws ahead (fixed at construction: closed loop, plain pattern).
    draws_ahead: bool,
}

/// Where a synthetic flow's requests go, in sectors of its own address domain: what steady-state
/// preconditioning needs to age the drive the way this flow would.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AddressModel {
    pub write_fraction: f64,
    /// Mean sectors per request.
    pub mean_sectors: f64,
    pub ws_start_sector: u64,
    pub ws_sectors: u64,
    pub pattern: PatternModel,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PatternModel {
    Uniform,
    /// The first `hot_sectors` of the working set get `hot_traffic` of the requests.
    HotCold {
        hot_sectors: u64,
        hot_traffic: f64,
    },
    Sequential,
}

impl Synthetic {
    /// What an LSM store (`[flows.lsm]`) did so far; None for other flows.
    pub fn lsm_summary(&self) -> Option<super::lsm::LsmSummary> {
        match &self.pattern {
            Pattern::Lsm(store) => Some(store.summary()),
            _ => None,
        }
    }

    /// Whether the flow writes zone by zone (`address = "zoned"`, an LSM store included).
    pub fn is_zoned(&self) -> bool {
        matches!(self.pattern, Pattern::Zoned(_) | Pattern::Lsm(_))
    }

    pub fn address_model(&self) -> AddressModel {
        let mean_sectors = match self.size {
            SizeDist::Fixed(s) => s as f64,
            SizeDist::Normal { mean, .. } => mean.max(1.0),
        };
        let pattern = match self.pattern {
            Pattern::Uniform => PatternModel::Uniform,
            Pattern::HotCold { hot_units, hot_traffic } => {
                PatternModel::HotCold { hot_sectors: hot_units * self.align_sectors, hot_traffic }
            }
            Pattern::Sequential { .. } | Pattern::Zoned(_) | Pattern::Lsm(_) => PatternModel::Sequential,
        };
        AddressModel {
            write_fraction: 1.0 - self.read_fraction.clamp(0.0, 1.0),
            mean_sectors,
            ws_start_sector: self.ws_start_sector,
            ws_sectors: self.ws_sectors,
            pattern,
        }
    }

    /// Builds a generator over a device of `logical_sectors` (with `zones`, a zoned
    /// namespace's layout). Returns an error message if the request size does not fit the
    /// working set.
    pub fn new(
        flow: &FlowConfig,
        logical_sectors: u64,
        zones: Option<&crate::config::ZoneLayout>,
        rng: RandomStream,
    ) -> Result<Self, String> {
        // Default alignment: the request size, as fio's `blockalign` defaults to `bs` (issue 19,
        // item 9): random 4 KiB requests start on 4 KiB boundaries, as a file system's do. A
        // normally distributed size has no one size to align to: sector alignment.
        let align_sectors = match (flow.alignment.as_ref(), flow.request_size.as_ref()) {
            (Some(a), _) => a.value / SECTOR_BYTES,
            (None, None) => 8,
            (None, Some(RequestSize::Fixed(s))) => (s.value / SECTOR_BYTES).max(1),
            (None, Some(RequestSize::Normal { .. })) => 1,
        };
        let ws = flow.working_set.unwrap_or(1.0);
        let start = flow.working_set_start.unwrap_or(0.0);
        let ws_start_sector = ((logical_sectors as f64 * start) as u64) / align_sectors * align_sectors;
        let ws_sectors = ((logical_sectors as f64 * ws) as u64).min(logical_sectors - ws_start_sector);
        let size = match flow.request_size.as_ref() {
            None => SizeDist::Fixed(8),
            Some(RequestSize::Fixed(s)) => SizeDist::Fixed(s.value / SECTOR_BYTES),
            Some(RequestSize::Normal { mean, stdev }) => SizeDist::Normal {
                mean: mean.value as f64 / SECTOR_BYTES as f64,
                stdev: stdev.value as f64 / SECTOR_BYTES as f64,
            },
        };
        let nominal = match size {
            SizeDist::Fixed(s) => s,
            SizeDist::Normal { mean, .. } => mean.ceil() as u64,
        };
        if nominal > ws_sectors || align_sectors > ws_sectors {
            return Err(format!(
                "request size ({nominal} sectors) or alignment ({align_sectors} sectors) is larger than the working set ({ws_sectors} sectors)"
            ));
        }
        // Draws are clipped to the working set: a spread wider than it makes most of them the
        // whole working set or a single sector, whatever the mean says.
        if let SizeDist::Normal { stdev, .. } = size {
            if stdev > ws_sectors as f64 {
                return Err(format!(
                    "request size stdev ({} sectors) is larger than the working set ({ws_sectors} sectors): most draws would be clipped to the whole working set or to one sector",
                    stdev.ceil()
                ));
            }
        }
        let units = ws_sectors / align_sectors;
        let pattern = match flow.address.unwrap_or(AddressPattern::Uniform) {
            AddressPattern::Uniform => Pattern::Uniform,
            AddressPattern::Sequential => Pattern::Sequential { next_unit: 0 },
            AddressPattern::Zoned if flow.lsm.is_some() => {
                let layout = zones.ok_or("address = \"zoned\" needs a zoned namespace ([zns])")?;
                Pattern::Lsm(Box::new(super::lsm::LsmAllocator::new(
                    layout,
                    ws_start_sector,
                    ws_sectors,
                    nominal,
                    flow.lsm.as_ref().expect("matched"),
                )?))
            }
            AddressPattern::Zoned => {
                let layout = zones.ok_or("address = \"zoned\" needs a zoned namespace ([zns])")?;
                Pattern::Zoned(Box::new(super::zoned::ZoneWriter::new(
                    layout,
                    ws_start_sector,
                    ws_sectors,
                    flow.open_zones.unwrap_or(1),
                    flow.zone_append.unwrap_or(false),
                )?))
            }
            AddressPattern::Hotcold => Pattern::HotCold {
                hot_units: ((units as f64 * flow.hot_fraction.unwrap_or(0.2)).round() as u64)
                    .clamp(1, units.max(2) - 1),
                hot_traffic: flow.hot_traffic.unwrap_or(0.8),
            },
        };
        let arrival = match (flow.queue_depth, &flow.rate) {
            (Some(depth), _) => Arrival::Closed { depth },
            (None, Some(rate)) => Arrival::Open { mean_interarrival_ps: PS_PER_S as f64 / rate.value },
            (None, None) => unreachable!("validated: a synthetic flow has queue_depth or rate"),
        };
        let draws_ahead = matches!(arrival, Arrival::Closed { .. })
            && matches!(pattern, Pattern::Uniform | Pattern::HotCold { .. } | Pattern::Sequential { .. });
        Ok(Self {
            draws_ahead,
            rng,
            read_fraction: flow.read_fraction.unwrap_or(0.0),
            size,
            pattern,
            random_fraction: flow.random_fraction.unwrap_or(1.0),
            following_unit: 0,
            align_sectors,
            units,
            ws_start_sector,
            ws_sectors,
            arrival,
            next_open_arrival: 0,
            ahead: None,
        })
    }

    /// The next request. Closed-loop requests arrive at `now`; open-loop ones at the next arrival
    /// time of the flow's Poisson process.
    pub fn next(&mut self, now: SimTime) -> RequestSpec {
        let spec = match self.ahead.take() {
            Some(spec) => RequestSpec { arrival: now, ..spec },
            None => self.draw(now),
        };
        if self.draws_ahead {
            self.ahead = Some(self.draw(now));
        }
        spec
    }

    /// The request the next call of [`Self::next`] returns, when it is already drawn.
    pub fn upcoming(&self) -> Option<&RequestSpec> {
        self.ahead.as_ref()
    }

    fn draw(&mut self, now: SimTime) -> RequestSpec {
        let arrival = match self.arrival {
            Arrival::Closed { .. } => now,
            Arrival::Open { mean_interarrival_ps } => {
                let t = self.next_open_arrival;
                // Saturating: a gap past the clock's range means no later arrival (validation keeps
                // the mean gap within it, `config::limits`).
                self.next_open_arrival = t.saturating_add(self.rng.exponential(mean_interarrival_ps).round() as u64);
                t
            }
        };
        let is_read = self.read_fraction >= 1.0 || (self.read_fraction > 0.0 && self.rng.unit() < self.read_fraction);
        let sectors = match self.size {
            SizeDist::Fixed(s) => s,
            SizeDist::Normal { mean, stdev } => {
                // A request carries a 32-bit sector count (a wide normal may draw more).
                (self.rng.normal(mean, stdev).round().max(1.0) as u64).min(self.ws_sectors).min(u32::MAX as u64)
            }
        };
        if let Pattern::Zoned(writer) = &mut self.pattern {
            let (op, start_sector, sectors) = writer.next(&mut self.rng, is_read, sectors);
            return RequestSpec { arrival, op, start_sector, sectors, placement_handle: None };
        }
        if let Pattern::Lsm(store) = &mut self.pattern {
            let (op, start_sector, sectors) = store.next(&mut self.rng, is_read);
            return RequestSpec { arrival, op, start_sector, sectors, placement_handle: None };
        }
        let units = self.units;
        // A flow that gives no random_fraction (1) draws nothing here, so its stream is the same
        // as before the key existed.
        let follows =
            self.random_fraction < 1.0 && (self.random_fraction <= 0.0 || self.rng.unit() >= self.random_fraction);
        let unit = match &mut self.pattern {
            _ if follows => self.following_unit,
            Pattern::Uniform => self.rng.below(units),
            Pattern::HotCold { hot_units, hot_traffic } => {
                if self.rng.unit() < *hot_traffic {
                    self.rng.below(*hot_units)
                } else {
                    *hot_units + self.rng.below(units - *hot_units)
                }
            }
            Pattern::Sequential { next_unit } => {
                let u = *next_unit;
                *next_unit = (u + sectors.div_ceil(self.align_sectors)) % units;
                u
            }
            Pattern::Zoned(_) | Pattern::Lsm(_) => unreachable!("served above"),
        };
        // Keep the request inside the working set: move its start back if it would run past the end.
        let mut offset = unit * self.align_sectors;
        if offset + sectors > self.ws_sectors {
            offset = (self.ws_sectors - sectors) / self.align_sectors * self.align_sectors;
        }
        // Only a flow that may follow its previous request reads this: the others skip its two
        // divisions (a `div` each, on every request; `engine::Divisor` says why that counts).
        if self.random_fraction < 1.0 {
            self.following_unit = (offset + sectors).div_ceil(self.align_sectors) % units;
        }
        let op = if is_read { Op::Read } else { Op::Write };
        RequestSpec {
            arrival,
            op,
            start_sector: self.ws_start_sector + offset,
            sectors: sectors as u32,
            placement_handle: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Size;

    /// 4 KiB requests aligned to 4 KiB over 1,000 units of 8 sectors.
    fn flow(random_fraction: Option<f64>) -> FlowConfig {
        FlowConfig {
            read_fraction: Some(1.0),
            request_size: Some(RequestSize::Fixed(Size::lit("4KiB"))),
            alignment: Some(Size::lit("4KiB")),
            random_fraction,
            queue_depth: Some(1),
            requests: Some(1),
            ..FlowConfig::default()
        }
    }

    fn starts(random_fraction: Option<f64>, n: usize) -> Vec<u64> {
        let mut g = Synthetic::new(&flow(random_fraction), 8_000, None, RandomStream::new(7, 0)).unwrap();
        (0..n).map(|_| g.next(0).start_sector).collect()
    }

    /// The share of requests that start right after the previous one.
    fn followed(starts: &[u64]) -> f64 {
        let hits = starts.windows(2).filter(|w| w[1] == (w[0] + 8) % 8_000).count();
        hits as f64 / (starts.len() - 1) as f64
    }

    #[test]
    fn no_random_fraction_is_the_uniform_stream_unchanged() {
        // Same seed, same starts with the key absent and at 1: the key draws nothing then.
        assert_eq!(starts(None, 500), starts(Some(1.0), 500));
        assert!(followed(&starts(None, 5_000)) < 0.01);
    }

    #[test]
    fn zero_is_sequential_from_the_working_set_start() {
        let s = starts(Some(0.0), 1_200);
        assert_eq!(&s[..3], &[0, 8, 16]);
        assert_eq!(s[1_000], 0, "wraps at the end of the working set");
        assert_eq!(followed(&s), 1.0);
    }

    #[test]
    fn a_fraction_places_that_share_at_random_and_the_rest_follow() {
        for r in [0.25, 0.5, 0.75] {
            let share = followed(&starts(Some(r), 20_000));
            // A random request lands right after its predecessor with probability 1/1000 only.
            assert!((share - (1.0 - r)).abs() < 0.02, "random_fraction {r}: {share} followed");
        }
    }

    /// Drawing a closed-loop flow's next request a call early changes nothing the flow issues:
    /// the same requests, in the same order, each arriving when it is asked for; `upcoming` is
    /// the one the next call returns.
    #[test]
    fn drawing_ahead_gives_the_requests_drawing_in_turn_gives() {
        let mut config = flow(Some(0.5));
        config.read_fraction = Some(0.7);
        let mut ahead = Synthetic::new(&config, 8_000, None, RandomStream::new(7, 0)).unwrap();
        let mut in_turn = Synthetic::new(&config, 8_000, None, RandomStream::new(7, 0)).unwrap();
        let mut promised: Option<RequestSpec> = None;
        for i in 0..2_000u64 {
            let now = i * 1_000 + i % 7;
            let spec = ahead.next(now);
            assert_eq!(spec, in_turn.draw(now), "request {i}");
            assert_eq!(spec.arrival, now);
            if let Some(p) = promised {
                assert_eq!((p.op, p.start_sector, p.sectors), (spec.op, spec.start_sector, spec.sectors));
            }
            promised = Some(*ahead.upcoming().expect("a closed-loop uniform flow draws ahead"));
        }
    }

    #[test]
    fn open_loop_flows_do_not_draw_ahead() {
        let mut config = flow(None);
        config.queue_depth = None;
        config.rate = Some(crate::config::Rate::parse("1000/s").unwrap());
        let mut g = Synthetic::new(&config, 8_000, None, RandomStream::new(7, 0)).unwrap();
        g.next(0);
        assert!(g.upcoming().is_none());
    }
}
