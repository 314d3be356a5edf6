//! Where writes go: static allocation striped over the planes a flow may use, and each flow's
//! slice of the logical space when flows have separate address domains.
//!
//! A flow restricted to some channels, chips (ways), dies and planes stripes its logical pages
//! over that subset in the configured allocation order, exactly as the whole device does for an
//! unrestricted flow. The stripe repeats with the subset's size, so one table lookup per write.

use crate::config::{AddressDomains, Config, ConfigError, FlowConfig};
use crate::engine::Divisor;
use crate::flash::geometry::{parse_allocation, Level};
use crate::flash::Geometry;

pub struct Placement {
    /// Per flow: the plane of each residue of a logical page modulo the flow's plane count.
    tables: Vec<Vec<u32>>,
    /// Per flow: its table's length, the residue's modulus (a mask when a power of two).
    periods: Vec<Divisor>,
    /// Logical pages per flow domain (the whole space when domains are shared).
    domain_pages: u64,
    per_flow_domains: bool,
    /// Shared domain with some flow confined to part of the flash: each such flow's working set
    /// as `[first, end)` logical pages, so its data is first placed on its own planes.
    confined_working_sets: Vec<(u64, u64, usize)>,
}

/// The ids a flow may use at each level, in order (all of them when the flow does not say).
fn allowed(path: &str, field: &str, given: &Option<Vec<u32>>, size: u32) -> Result<Vec<u32>, ConfigError> {
    match given {
        None => Ok((0..size).collect()),
        Some(ids) if ids.is_empty() => Err(ConfigError::new(format!("{path}.{field}"), "must list at least one id")),
        Some(ids) => {
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if let Some(&bad) = sorted.iter().find(|&&id| id >= size) {
                return Err(ConfigError::new(
                    format!("{path}.{field}"),
                    format!("id {bad} does not exist: the device has {size} (ids 0..{})", size - 1),
                ));
            }
            Ok(sorted)
        }
    }
}

impl Placement {
    pub fn new(config: &Config, geometry: &Geometry) -> Result<Self, ConfigError> {
        let order = parse_allocation(&config.ftl.allocation)?;
        let mut tables = Vec::with_capacity(config.flows.len());
        for (i, flow) in config.flows.iter().enumerate() {
            tables.push(Self::table(&format!("flows[{i}]"), flow, geometry, order)?);
        }
        let per_flow_domains = config.ftl.address_domains == AddressDomains::PerFlow;
        let domain_pages =
            if per_flow_domains { geometry.logical_pages / config.flows.len() as u64 } else { geometry.logical_pages };
        let mut confined_working_sets = Vec::new();
        if !per_flow_domains {
            for (i, flow) in config.flows.iter().enumerate() {
                let confined =
                    flow.channels.is_some() || flow.chips.is_some() || flow.dies.is_some() || flow.planes.is_some();
                if confined {
                    let pages = geometry.logical_pages as f64;
                    let first = (pages * flow.working_set_start.unwrap_or(0.0)) as u64;
                    let end = (first + (pages * flow.working_set.unwrap_or(1.0)) as u64).min(geometry.logical_pages);
                    confined_working_sets.push((first, end, i));
                }
            }
        }
        let periods = tables.iter().map(|t| Divisor::new(t.len() as u64)).collect();
        Ok(Self { tables, periods, domain_pages, per_flow_domains, confined_working_sets })
    }

    fn table(path: &str, flow: &FlowConfig, g: &Geometry, order: [Level; 4]) -> Result<Vec<u32>, ConfigError> {
        let channels = allowed(path, "channels", &flow.channels, g.channels)?;
        let chips = allowed(path, "chips", &flow.chips, g.chips_per_channel)?;
        let dies = allowed(path, "dies", &flow.dies, g.dies_per_chip)?;
        let planes = allowed(path, "planes", &flow.planes, g.planes_per_die)?;
        let ids = |level: Level| match level {
            Level::Channel => &channels,
            Level::Way => &chips,
            Level::Die => &dies,
            Level::Plane => &planes,
        };
        let period: usize = order.iter().map(|&l| ids(l).len()).product();
        Ok((0..period)
            .map(|residue| {
                let (mut c, mut w, mut d, mut p) = (0, 0, 0, 0);
                let mut rest = residue;
                for level in order {
                    let list = ids(level);
                    let id = list[rest % list.len()];
                    rest /= list.len();
                    match level {
                        Level::Channel => c = id,
                        Level::Way => w = id,
                        Level::Die => d = id,
                        Level::Plane => p = id,
                    }
                }
                ((c * g.chips_per_channel + w) * g.dies_per_chip + d) * g.planes_per_die + p
            })
            .collect())
    }

    /// The plane a write of `lpa` by `flow` goes to.
    #[inline]
    pub fn plane_for(&self, flow: usize, lpa: u64) -> u32 {
        self.tables[flow][self.periods[flow].rem_u64(lpa) as usize]
    }

    /// One period of `flow`'s stripe: the planes its consecutive logical pages go to.
    pub fn stripe(&self, flow: usize) -> &[u32] {
        &self.tables[flow]
    }

    /// Logical pages of one flow's address domain.
    pub fn domain_pages(&self) -> u64 {
        self.domain_pages
    }

    /// With a shared domain, the working sets of the flows confined to part of the flash, as
    /// `(first, end, flow)` in logical pages: a fill places them on the flows' own planes.
    pub fn confined_working_sets(&self) -> &[(u64, u64, usize)] {
        &self.confined_working_sets
    }

    /// Back to static allocation over the whole device for every shared-domain flow (when the
    /// confined flows' working sets do not fit on their planes).
    pub fn forget_confined_working_sets(&mut self) {
        self.confined_working_sets.clear();
    }

    /// First logical page of `flow`'s domain.
    pub fn domain_base(&self, flow: usize) -> u64 {
        if self.per_flow_domains {
            flow as u64 * self.domain_pages
        } else {
            0
        }
    }

    /// Whether every logical page is placed by static allocation over the whole device (no flow
    /// owns a domain): [`Self::owner`] is then `None` for all of them.
    pub fn is_whole_device(&self) -> bool {
        !self.per_flow_domains && self.confined_working_sets.is_empty()
    }

    /// Whether static allocation over the whole device places every page, whoever writes it:
    /// [`Self::is_whole_device`], and every flow striped over all the planes in the device's
    /// order, so that a logical page's plane never depends on the flow (in-plane map addresses
    /// rest on it).
    pub fn is_static_over(&self, geometry: &Geometry) -> bool {
        let planes = geometry.planes;
        self.is_whole_device()
            && self.tables.iter().all(|t| {
                t.len() == planes as usize && (0..planes).all(|r| t[r as usize] == geometry.plane_of_residue(r))
            })
    }

    /// The flow whose data `lpa` holds: with per-flow domains the flow whose domain holds it;
    /// with a shared domain, the first flow confined to some channels, chips, dies or planes
    /// whose working set holds it (as MQSim preconditions each flow's slice on the flow's own
    /// resources). None: static allocation over the whole device.
    pub fn owner(&self, lpa: u64) -> Option<usize> {
        if self.per_flow_domains {
            return (lpa < self.domain_pages * self.tables.len() as u64).then(|| (lpa / self.domain_pages) as usize);
        }
        self.confined_working_sets
            .iter()
            .find(|&&(first, end, _)| (first..end).contains(&lpa))
            .map(|&(_, _, flow)| flow)
    }
}
