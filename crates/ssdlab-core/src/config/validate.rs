//! Checks every configured value against the model's limits, so that a bad value is rejected with
//! its field path and reason before anything is allocated.

use super::geometry::{parse_allocation, Geometry, MAX_PLANES_PER_DIE, SECTOR_BYTES};
use super::*;

fn at_least_one(path: &str, value: u32) -> Result<(), ConfigError> {
    if value == 0 {
        return Err(ConfigError::new(path, "must be at least 1, got 0"));
    }
    Ok(())
}

fn fraction(path: &str, value: f64, low_open: bool, high_open: bool) -> Result<(), ConfigError> {
    let low_ok = if low_open { value > 0.0 } else { value >= 0.0 };
    let high_ok = if high_open { value < 1.0 } else { value <= 1.0 };
    if !value.is_finite() || !low_ok || !high_ok {
        let range = format!("{}0, 1{}", if low_open { "(" } else { "[" }, if high_open { ")" } else { "]" });
        return Err(ConfigError::new(path, format!("must be a fraction in {range}, got {value}")));
    }
    Ok(())
}

fn sector_multiple(path: &str, size: &Size) -> Result<(), ConfigError> {
    if size.value == 0 || !size.value.is_multiple_of(SECTOR_BYTES) {
        return Err(ConfigError::new(
            path,
            format!("must be a positive multiple of the 512 B sector, got \"{}\" ({} B)", size.text, size.value),
        ));
    }
    Ok(())
}

/// A request's length travels as a 32-bit count of sectors (2 TiB less one sector).
fn request_size(path: &str, size: &Size) -> Result<(), ConfigError> {
    sector_multiple(path, size)?;
    let max = u32::MAX as u64 * SECTOR_BYTES;
    if size.value > max {
        return Err(ConfigError::new(
            path,
            format!("a request may carry at most {max} B ({} sectors), got \"{}\"", u32::MAX, size.text),
        ));
    }
    Ok(())
}

/// A normal request size's standard deviation: no larger than a request can be. Beyond that
/// half the draws are the largest request the working set allows, whatever the number says
/// (fuzzing ran `stdev = "18446744073709551616B"` as requests of half the drive each, which took
/// longer than `run.stall_timeout` and ended as a stall).
fn request_size_spread(path: &str, stdev: &Size) -> Result<(), ConfigError> {
    let max = u32::MAX as u64 * SECTOR_BYTES;
    if stdev.value > max {
        return Err(ConfigError::new(
            path,
            format!(
                "a standard deviation larger than the largest request, {max} B ({} sectors), draws sizes no request can carry; got \"{}\"",
                u32::MAX,
                stdev.text
            ),
        ));
    }
    Ok(())
}

/// `run.percentiles`: each strictly between 0 and 100, none twice and none of the fixed ones
/// (their names would clash in `latency_us`).
fn validate_percentiles(percentiles: &[f64]) -> Result<(), ConfigError> {
    const FIXED: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];
    for (i, &p) in percentiles.iter().enumerate() {
        let path = format!("run.percentiles[{i}]");
        if !(p.is_finite() && p > 0.0 && p < 100.0) {
            return Err(ConfigError::new(path, format!("expected a percent between 0 and 100 (exclusive), got {p}")));
        }
        if FIXED.contains(&p) {
            return Err(ConfigError::new(path, format!("p{p} is always reported; list only extra percentiles")));
        }
        if percentiles[..i].contains(&p) {
            return Err(ConfigError::new(path, format!("{p} is listed twice")));
        }
    }
    Ok(())
}

fn validate_precondition(p: &super::PreconditionConfig) -> Result<(), ConfigError> {
    use super::PreconditionMode::{Fill, None as Empty, Simulate, Steady};
    fraction("precondition.occupancy", p.occupancy, false, false)?;
    let mode = match p.mode {
        Steady => "steady",
        Fill => "fill",
        Empty => "none",
        Simulate => "simulate",
    };
    let ignored = |field: &str, applies: &str| {
        ConfigError::new(format!("precondition.{field}"), format!("applies to mode {applies} only, not \"{mode}\""))
    };
    if p.mode == Empty && p.occupancy > 0.0 {
        return Err(ignored("occupancy", "\"fill\", \"steady\" or \"simulate\""));
    }
    if p.layout.is_some() && p.mode != Fill {
        return Err(ignored("layout", "\"fill\""));
    }
    if !matches!(p.mode, Steady | Simulate) {
        if p.drive_writes.is_some() {
            return Err(ignored("drive_writes", "\"steady\" or \"simulate\""));
        }
        if p.warm_caches.is_some() {
            return Err(ignored("warm_caches", "\"steady\" or \"simulate\""));
        }
    }
    if let Some(n) = p.drive_writes {
        if !n.is_finite() || !(0.0..=1000.0).contains(&n) {
            return Err(ConfigError::new("precondition.drive_writes", format!("must be between 0 and 1000, got {n}")));
        }
    }
    Ok(())
}

/// Validates a whole configuration.
pub fn validate(config: &Config) -> Result<(), ConfigError> {
    validate_host(&config.host)?;
    super::flin::validate(&config.controller)?;
    host_ocssd::validate_interfaces(config)?;
    validate_flash(&config.flash)?;
    validate_ftl(config)?;
    validate_cache(config)?;
    validate_precondition(&config.precondition)?;
    super::mapping::validate_mapping(config)?;
    config.power.validate()?;
    config.power.apst.validate(matches!(config.host.interface, HostInterface::Nvme | HostInterface::OpenChannel))?;
    config.firmware.validate()?;
    config.dram.validate(&config.cache)?;
    config.data.validate(config.flash.page_size.value)?;
    if config.data.backing_file.is_some()
        && (config.ftl.mapping != MappingFamily::Page || config.host.interface == HostInterface::OpenChannel)
    {
        return Err(ConfigError::new(
            "data.backing_file",
            "needs page mapping on a device FTL (ftl.mapping = \"page\", not an Open-Channel host FTL): the image is loaded into the page map",
        ));
    }
    validate_percentiles(&config.run.percentiles)?;
    if config.run.stall_timeout.as_ref().is_some_and(|t| t.value == 0) {
        return Err(ConfigError::new("run.stall_timeout", "must be greater than zero"));
    }
    if let Some(t) = &config.run.max_simulated_time {
        if t.value == 0 {
            return Err(ConfigError::new("run.max_simulated_time", "must be greater than zero"));
        }
    }
    if config.run.time_series_window.as_ref().is_some_and(|t| t.value < crate::time::PS_PER_NS) {
        return Err(ConfigError::new("run.time_series_window", "must be at least 1ns"));
    }
    if let RequestRecords::Fraction(f) = config.run.request_records {
        if !(f > 0.0 && f <= 1.0) {
            return Err(ConfigError::new(
                "run.request_records",
                format!("expected \"none\", \"all\" or a fraction in (0, 1], got {f}"),
            ));
        }
    }
    if config.flows.is_empty() {
        return Err(ConfigError::new("flows", "at least one flow is required (add a [[flows]] table)"));
    }
    if config.flows.len() > u16::MAX as usize {
        return Err(ConfigError::new("flows", format!("at most {} flows are supported", u16::MAX)));
    }
    for (i, flow) in config.flows.iter().enumerate() {
        validate_flow(&format!("flows[{i}]"), flow)?;
    }
    super::limits::validate_derived_durations(config)?;
    super::memory::validate_limit(&config.run)?;
    Ok(())
}

fn validate_host(host: &HostConfig) -> Result<(), ConfigError> {
    at_least_one("host.pcie_lanes", host.pcie_lanes)?;
    at_least_one("host.sq_depth", host.sq_depth)?;
    at_least_one("host.queue_fetch_size", host.queue_fetch_size)?;
    at_least_one("host.max_requests_in_device", host.max_requests_in_device)?;
    at_least_one("host.sata_ncq_depth", host.sata_ncq_depth)?;
    if host.sata_ncq_depth > 32 {
        return Err(ConfigError::new(
            "host.sata_ncq_depth",
            format!("NCQ has at most 32 slots, got {}", host.sata_ncq_depth),
        ));
    }
    at_least_one("host.wrr_weights.high", host.wrr_weights.high)?;
    at_least_one("host.wrr_weights.medium", host.wrr_weights.medium)?;
    at_least_one("host.wrr_weights.low", host.wrr_weights.low)?;
    if host.pcie_max_payload.value == 0 {
        return Err(ConfigError::new("host.pcie_max_payload", "must be greater than zero"));
    }
    Ok(())
}

fn validate_flash(flash: &FlashConfig) -> Result<(), ConfigError> {
    if let Some(reliability) = &flash.reliability {
        super::reliability::validate(reliability, flash.page_size.value)?;
    }
    if let Some(spread) = &flash.timing.spread {
        spread.validate()?;
    }
    at_least_one("flash.channels", flash.channels)?;
    at_least_one("flash.chips_per_channel", flash.chips_per_channel)?;
    at_least_one("flash.dies_per_chip", flash.dies_per_chip)?;
    at_least_one("flash.planes_per_die", flash.planes_per_die)?;
    at_least_one("flash.channel_width_bytes", flash.channel_width_bytes)?;
    if flash.planes_per_die > MAX_PLANES_PER_DIE {
        return Err(ConfigError::new(
            "flash.planes_per_die",
            format!("at most {MAX_PLANES_PER_DIE} planes per die are supported, got {}", flash.planes_per_die),
        ));
    }
    if flash.blocks_per_plane < 8 {
        return Err(ConfigError::new(
            "flash.blocks_per_plane",
            format!("must be at least 8 (GC needs spare blocks), got {}", flash.blocks_per_plane),
        ));
    }
    if flash.pages_per_block < 2 || flash.pages_per_block > u16::MAX as u32 {
        return Err(ConfigError::new(
            "flash.pages_per_block",
            format!("must be between 2 and {}, got {}", u16::MAX, flash.pages_per_block),
        ));
    }
    sector_multiple("flash.page_size", &flash.page_size)?;
    super::limits::validate_geometry(flash)?;
    if flash.page_type_layout == PageTypeLayout::Address
        && flash.technology.bits_per_cell() > 1
        && flash.pages_per_block <= super::flash::ADDRESS_LAYOUT_META_PAGES
    {
        return Err(ConfigError::new(
            "flash.page_type_layout",
            format!(
                "`address` treats the first {} pages of a block as meta pages and needs more pages per block (flash.pages_per_block = {}); use `round-robin` or larger blocks",
                super::flash::ADDRESS_LAYOUT_META_PAGES,
                flash.pages_per_block
            ),
        ));
    }
    validate_latency("flash.timing.read", &flash.timing.read, flash.technology)?;
    validate_latency("flash.timing.program", &flash.timing.program, flash.technology)?;
    if flash.timing.erase.value == 0 {
        return Err(ConfigError::new("flash.timing.erase", "must be greater than zero"));
    }
    Ok(())
}

fn validate_latency(path: &str, latency: &PageTypeLatency, technology: CellTechnology) -> Result<(), ConfigError> {
    match latency {
        PageTypeLatency::Uniform(d) => {
            if d.value == 0 {
                return Err(ConfigError::new(path, "must be greater than zero"));
            }
        }
        PageTypeLatency::ByType { lsb, csb, msb, tsb } => {
            let bits = technology.bits_per_cell();
            let (needs_csb, needs_msb, needs_tsb) = (bits >= 3, bits >= 2, bits == 4);
            if csb.is_some() != needs_csb {
                let why = if needs_csb {
                    "TLC and QLC need a `csb` latency"
                } else {
                    "`csb` pages exist only in TLC and QLC"
                };
                return Err(ConfigError::new(format!("{path}.csb"), why));
            }
            if msb.is_some() != needs_msb {
                let why = if needs_msb { "MLC, TLC and QLC need an `msb` latency" } else { "SLC has only `lsb` pages" };
                return Err(ConfigError::new(format!("{path}.msb"), why));
            }
            if tsb.is_some() != needs_tsb {
                let why =
                    if needs_tsb { "QLC needs a `tsb` (top page) latency" } else { "`tsb` pages exist only in QLC" };
                return Err(ConfigError::new(format!("{path}.tsb"), why));
            }
            for (name, d) in [("lsb", Some(lsb)), ("csb", csb.as_ref()), ("msb", msb.as_ref()), ("tsb", tsb.as_ref())] {
                if d.is_some_and(|d| d.value == 0) {
                    return Err(ConfigError::new(format!("{path}.{name}"), "must be greater than zero"));
                }
            }
        }
    }
    Ok(())
}

fn validate_ftl(config: &Config) -> Result<(), ConfigError> {
    let ftl = &config.ftl;
    // First what every geometry is built from: the namespace, ZNS, FDP and SLC checks below build
    // one (`Geometry::counts`), which takes the allocation order as valid (fuzz seed 1207
    // config #376: a namespace beside `allocation = "1e30/s"` panicked there).
    parse_allocation(&ftl.allocation)?;
    fraction("ftl.over_provisioning", ftl.over_provisioning, false, true)?;
    super::fdp::validate(config)?;
    super::slc_cache::validate(config)?;
    super::namespaces::validate(config)?;
    super::zns::validate(config)?;
    // Read reclaim moves a block's valid pages through the page FTL's GC; the block-mapped
    // families keep their data by block and merge instead (fuzz seed 1727 #141: reclaimed
    // pages of a block map read back as zeros).
    if config.flash.reliability.as_ref().is_some_and(|r| r.read_reclaim_bits > 0)
        && config.ftl.mapping != super::MappingFamily::Page
    {
        return Err(ConfigError::new(
            "flash.reliability.read_reclaim_bits",
            format!(
                "read reclaim rewrites a block's pages through page-level GC, which ftl.mapping = \"{}\" does not have; set it to 0 (no read reclaim) or use page mapping",
                super::family_name(config.ftl.mapping)
            ),
        ));
    }
    fraction("ftl.gc_threshold", ftl.gc_threshold, true, true)?;
    at_least_one("ftl.gc_rga_candidates", ftl.gc_rga_candidates)?;
    at_least_one("ftl.static_wear_leveling_threshold", ftl.static_wear_leveling_threshold)?;
    at_least_one("ftl.pe_cycle_limit", ftl.pe_cycle_limit)?;
    if ftl.preemptible_gc && ftl.gc_pacing == Some(true) {
        return Err(ConfigError::new(
            "ftl.gc_pacing",
            "paced GC and ftl.preemptible_gc are two ways to let host writes pass GC; choose one (preemptible GC yields entirely until the hard threshold, paced GC takes its share per host write)",
        ));
    }
    fraction("ftl.gc_hard_threshold", ftl.gc_hard_threshold, true, true)?;
    if ftl.gc_hard_threshold >= ftl.gc_threshold {
        return Err(ConfigError::new(
            "ftl.gc_hard_threshold",
            format!("must be below ftl.gc_threshold ({}), got {}", ftl.gc_threshold, ftl.gc_hard_threshold),
        ));
    }
    let cmt_entry_bytes = super::mapping::entry_bytes(config).0;
    if !ftl.ideal_mapping && ftl.cmt_capacity.value < cmt_entry_bytes {
        return Err(ConfigError::new(
            "ftl.cmt_capacity",
            format!(
                "must hold at least one {}-byte entry (or set ideal_mapping = true), got \"{}\"",
                cmt_entry_bytes, ftl.cmt_capacity.text
            ),
        ));
    }
    // GC must always find invalid pages to reclaim: the most logical pages a plane can hold must
    // fit outside the GC reserve and the two open blocks (user and GC write frontiers).
    let geometry = Geometry::counts(config);
    if geometry.logical_pages == 0 {
        return Err(ConfigError::new("ftl.over_provisioning", "leaves no logical pages for the host"));
    }
    let reserve = geometry.held_back_blocks(ftl.gc_threshold) as u64;
    let usable = geometry.usable_pages_per_plane(ftl.gc_threshold);
    // A zoned namespace never collects garbage: its zones fit by construction (`zns::validate`).
    if config.zns.is_none() && geometry.max_mapped_pages_per_plane() > usable {
        // Blame the GC threshold if the smallest threshold (2 blocks) would have fitted.
        let usable_at_min = geometry.usable_pages_per_plane(0.0);
        if geometry.max_mapped_pages_per_plane() <= usable_at_min {
            return Err(ConfigError::new(
                "ftl.gc_threshold",
                format!(
                    "{} holds back {} of {} blocks per plane for GC, leaving too few for the data; lower it",
                    ftl.gc_threshold,
                    reserve - 2,
                    geometry.blocks_per_plane
                ),
            ));
        }
        let advice = match smallest_fitting_over_provisioning(&geometry, usable) {
            Some(op) => format!("use at least {op}"),
            None => "no over-provisioning below 1 fits; use more blocks per plane".to_string(),
        };
        return Err(ConfigError::new(
            "ftl.over_provisioning",
            format!(
                "{} leaves too little spare space for garbage collection on this geometry ({} blocks per plane, {} held back for GC and the open blocks); {advice}",
                ftl.over_provisioning, geometry.blocks_per_plane, reserve
            ),
        ));
    }
    // FDP: each further reclaim unit handle keeps its own open block for host data and one for
    // GC's moves on every plane (static allocation fixes a logical page's plane).
    if let Some(fdp) = ftl.fdp.as_ref().filter(|_| config.zns.is_none()) {
        let extra = 2 * fdp.reclaim_unit_handles.saturating_sub(1) as u64;
        if geometry.max_mapped_pages_per_plane() > usable.saturating_sub(extra * geometry.pages_per_block as u64) {
            let fitting = (usable / geometry.pages_per_block as u64)
                .saturating_sub(geometry.max_mapped_pages_per_plane().div_ceil(geometry.pages_per_block as u64))
                / 2
                + 1;
            return Err(ConfigError::new(
                "ftl.fdp.reclaim_unit_handles",
                format!(
                    "{} handles keep {} more open blocks per plane than one (a host and a GC reclaim unit each), leaving too little spare space on this geometry ({} blocks per plane, {} held back for GC and the open blocks); use at most {fitting} handles, or more over-provisioning",
                    fdp.reclaim_unit_handles,
                    extra,
                    geometry.blocks_per_plane,
                    reserve + extra
                ),
            ));
        }
    }
    Ok(())
}

/// The smallest over-provisioning, in steps of 0.0001 and written as the user would write it,
/// with which every plane's share of logical and translation pages fits in `usable` pages. It
/// recomputes the page counts exactly as `Geometry` does (a floor for the logical pages, one
/// translation page per `entries_per_translation_page` of them), so the advice is a value that
/// is accepted (issue 12, F05: it used to recommend the value it refused).
fn smallest_fitting_over_provisioning(geometry: &Geometry, usable: u64) -> Option<String> {
    const STEPS: u32 = 10_000;
    let with_tables = geometry.translation_pages > 0;
    let fits = |step: u32| {
        let op = step as f64 / STEPS as f64;
        let logical = ((geometry.physical_pages as f64) * (1.0 - op)).floor() as u64;
        let translation = if with_tables { logical.div_ceil(geometry.entries_per_translation_page.max(1)) } else { 0 };
        (logical + translation).div_ceil(geometry.planes as u64) <= usable
    };
    // More over-provisioning never adds pages to a plane, so the steps that fit are a suffix.
    let (mut low, mut high) = (0u32, STEPS - 1);
    if !fits(high) {
        return None;
    }
    while low < high {
        let mid = (low + high) / 2;
        if fits(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    let op = high as f64 / STEPS as f64;
    // The most logical pages any fitting value leaves: none at all means nothing fits.
    (((geometry.physical_pages as f64) * (1.0 - op)).floor() >= 1.0).then(|| format!("{op}"))
}

fn validate_cache(config: &Config) -> Result<(), ConfigError> {
    super::cache_org::validate_organisation(config)?;
    if !config.flows.iter().any(|f| f.cache_mode.unwrap_or_default() != CacheMode::Off) {
        return Ok(());
    }
    let c = &config.cache;
    let page = config.flash.page_size.value;
    if page / SECTOR_BYTES > 64 {
        return Err(ConfigError::new(
            "flash.page_size",
            format!(
                "the data cache tracks at most 64 sectors (32 KiB) per page, got \"{}\"",
                config.flash.page_size.text
            ),
        ));
    }
    if c.capacity.value < page {
        return Err(ConfigError::new(
            "cache.capacity",
            format!("must hold at least one {page}-byte page when a flow uses the cache, got \"{}\"", c.capacity.text),
        ));
    }
    at_least_one("cache.dram_burst_bytes", c.dram_burst_bytes)?;
    if c.dram_row_size.value == 0 {
        return Err(ConfigError::new("cache.dram_row_size", "must be greater than zero"));
    }
    Ok(())
}

fn forbid<T>(path: &str, field: &str, value: &Option<T>, why: &str) -> Result<(), ConfigError> {
    if value.is_some() {
        return Err(ConfigError::new(format!("{path}.{field}"), why.to_string()));
    }
    Ok(())
}

fn validate_flow(path: &str, flow: &FlowConfig) -> Result<(), ConfigError> {
    if let Some(depth) = flow.sq_depth {
        at_least_one(&format!("{path}.sq_depth"), depth)?;
    }
    if let Some(n) = flow.requests {
        if n == 0 {
            return Err(ConfigError::new(format!("{path}.requests"), "must be at least 1, got 0"));
        }
    }
    if let Some(d) = &flow.duration {
        if d.value == 0 {
            return Err(ConfigError::new(format!("{path}.duration"), "must be greater than zero"));
        }
    }
    match flow.kind {
        FlowKind::Synthetic => validate_synthetic(path, flow),
        FlowKind::Trace => validate_trace(path, flow),
        FlowKind::Host => validate_host_queue(path, flow),
    }
}

/// A host queue takes its requests from the outside host: a workload key would be ignored.
fn validate_host_queue(path: &str, flow: &FlowConfig) -> Result<(), ConfigError> {
    let why = "is not used by host queues (kind = \"host\"): the outside host sends their requests";
    forbid(path, "read_fraction", &flow.read_fraction, why)?;
    forbid(path, "request_size", &flow.request_size, why)?;
    forbid(path, "address", &flow.address, why)?;
    forbid(path, "open_zones", &flow.open_zones, why)?;
    forbid(path, "zone_append", &flow.zone_append, why)?;
    forbid(path, "lsm", &flow.lsm, why)?;
    forbid(path, "hot_fraction", &flow.hot_fraction, why)?;
    forbid(path, "hot_traffic", &flow.hot_traffic, why)?;
    forbid(path, "random_fraction", &flow.random_fraction, why)?;
    forbid(path, "alignment", &flow.alignment, why)?;
    forbid(path, "working_set", &flow.working_set, why)?;
    forbid(path, "working_set_start", &flow.working_set_start, why)?;
    forbid(path, "queue_depth", &flow.queue_depth, why)?;
    forbid(path, "rate", &flow.rate, why)?;
    forbid(path, "requests", &flow.requests, why)?;
    forbid(path, "duration", &flow.duration, why)?;
    forbid(path, "path", &flow.path, why)?;
    forbid(path, "format", &flow.format, why)?;
    forbid(path, "time_scale", &flow.time_scale, why)?;
    forbid(path, "device", &flow.device, why)?;
    forbid(path, "start", &flow.start, why)?;
    forbid(path, "end", &flow.end, why)?;
    forbid(path, "ops", &flow.ops, why)?;
    forbid(path, "arrival_gap", &flow.arrival_gap, why)?;
    forbid(path, "blkparse_event", &flow.blkparse_event, why)
}

fn validate_synthetic(path: &str, flow: &FlowConfig) -> Result<(), ConfigError> {
    let not_trace = "is only valid for trace flows (kind = \"trace\")";
    forbid(path, "path", &flow.path, not_trace)?;
    forbid(path, "format", &flow.format, not_trace)?;
    forbid(path, "time_scale", &flow.time_scale, not_trace)?;
    forbid(path, "device", &flow.device, not_trace)?;
    forbid(path, "start", &flow.start, not_trace)?;
    forbid(path, "end", &flow.end, not_trace)?;
    forbid(path, "ops", &flow.ops, not_trace)?;
    forbid(path, "arrival_gap", &flow.arrival_gap, not_trace)?;
    forbid(path, "blkparse_event", &flow.blkparse_event, not_trace)?;
    if let Some(r) = flow.read_fraction {
        fraction(&format!("{path}.read_fraction"), r, false, false)?;
    }
    match &flow.request_size {
        Some(RequestSize::Fixed(size)) => request_size(&format!("{path}.request_size"), size)?,
        Some(RequestSize::Normal { mean, stdev }) => {
            request_size(&format!("{path}.request_size.mean"), mean)?;
            request_size_spread(&format!("{path}.request_size.stdev"), stdev)?;
        }
        None => {}
    }
    if let Some(a) = &flow.alignment {
        sector_multiple(&format!("{path}.alignment"), a)?;
    }
    if let Some(w) = flow.working_set {
        fraction(&format!("{path}.working_set"), w, true, false)?;
    }
    if let Some(s) = flow.working_set_start {
        fraction(&format!("{path}.working_set_start"), s, false, true)?;
        if s + flow.working_set.unwrap_or(1.0) > 1.0 + 1e-12 {
            return Err(ConfigError::new(
                format!("{path}.working_set_start"),
                format!(
                    "working_set_start + working_set must not exceed 1, got {s} + {}",
                    flow.working_set.unwrap_or(1.0)
                ),
            ));
        }
    }
    if flow.address != Some(AddressPattern::Zoned) {
        let why = "is only valid with address = \"zoned\"";
        forbid(path, "open_zones", &flow.open_zones, why)?;
        forbid(path, "zone_append", &flow.zone_append, why)?;
        forbid(path, "lsm", &flow.lsm, why)?;
    } else if let Some(n) = flow.open_zones {
        at_least_one(&format!("{path}.open_zones"), n)?;
    }
    if let Some(lsm) = &flow.lsm {
        let why = "is not used by an LSM store (it writes each level's files at its zone's write pointer)";
        forbid(path, "open_zones", &flow.open_zones, why)?;
        forbid(path, "zone_append", &flow.zone_append, why)?;
        if !(2..=16).contains(&lsm.levels) {
            return Err(ConfigError::new(format!("{path}.lsm.levels"), format!("must be 2 to 16, got {}", lsm.levels)));
        }
        at_least_one(&format!("{path}.lsm.l0_files"), lsm.l0_files)?;
        if lsm.fanout < 2 {
            return Err(ConfigError::new(
                format!("{path}.lsm.fanout"),
                format!("must be at least 2, got {}", lsm.fanout),
            ));
        }
    }
    let hotcold = flow.address == Some(AddressPattern::Hotcold);
    if hotcold {
        let hf = flow.hot_fraction.ok_or_else(|| {
            ConfigError::new(format!("{path}.hot_fraction"), "is required with address = \"hotcold\"")
        })?;
        let ht = flow
            .hot_traffic
            .ok_or_else(|| ConfigError::new(format!("{path}.hot_traffic"), "is required with address = \"hotcold\""))?;
        fraction(&format!("{path}.hot_fraction"), hf, true, true)?;
        fraction(&format!("{path}.hot_traffic"), ht, false, false)?;
    } else {
        let why = "is only valid with address = \"hotcold\"";
        forbid(path, "hot_fraction", &flow.hot_fraction, why)?;
        forbid(path, "hot_traffic", &flow.hot_traffic, why)?;
    }
    if let Some(r) = flow.random_fraction {
        if flow.address == Some(AddressPattern::Sequential) {
            return Err(ConfigError::new(
                format!("{path}.random_fraction"),
                "is only valid with address = \"uniform\" or \"hotcold\" (a sequential flow has no random requests; random_fraction = 0 makes a uniform flow sequential)",
            ));
        }
        fraction(&format!("{path}.random_fraction"), r, false, false)?;
    }
    match (flow.queue_depth, &flow.rate) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                format!("{path}.rate"),
                "give either queue_depth (closed loop) or rate (open loop), not both",
            ))
        }
        (None, None) => {
            return Err(ConfigError::new(
                format!("{path}.queue_depth"),
                "a synthetic flow needs queue_depth (closed loop) or rate (open loop)",
            ))
        }
        (Some(depth), None) => at_least_one(&format!("{path}.queue_depth"), depth)?,
        (None, Some(_)) => {}
    }
    if flow.requests.is_none() && flow.duration.is_none() {
        return Err(ConfigError::new(
            format!("{path}.requests"),
            "a synthetic flow needs a stop condition: requests, duration, or both",
        ));
    }
    Ok(())
}

fn validate_trace(path: &str, flow: &FlowConfig) -> Result<(), ConfigError> {
    let synthetic_only = "is only valid for synthetic flows";
    forbid(path, "read_fraction", &flow.read_fraction, synthetic_only)?;
    forbid(path, "request_size", &flow.request_size, synthetic_only)?;
    forbid(path, "address", &flow.address, synthetic_only)?;
    forbid(path, "open_zones", &flow.open_zones, synthetic_only)?;
    forbid(path, "zone_append", &flow.zone_append, synthetic_only)?;
    forbid(path, "lsm", &flow.lsm, synthetic_only)?;
    forbid(path, "hot_fraction", &flow.hot_fraction, synthetic_only)?;
    forbid(path, "hot_traffic", &flow.hot_traffic, synthetic_only)?;
    forbid(path, "random_fraction", &flow.random_fraction, synthetic_only)?;
    forbid(path, "alignment", &flow.alignment, synthetic_only)?;
    forbid(path, "working_set", &flow.working_set, synthetic_only)?;
    forbid(path, "working_set_start", &flow.working_set_start, synthetic_only)?;
    forbid(path, "queue_depth", &flow.queue_depth, "trace flows are open loop: requests arrive at their timestamps")?;
    forbid(path, "rate", &flow.rate, "trace flows are open loop: requests arrive at their timestamps")?;
    if flow.path.is_none() {
        return Err(ConfigError::new(format!("{path}.path"), "a trace flow needs the path of its trace file"));
    }
    if let Some(scale) = flow.time_scale {
        if !scale.is_finite() || scale <= 0.0 {
            return Err(ConfigError::new(
                format!("{path}.time_scale"),
                format!("must be greater than zero, got {scale}"),
            ));
        }
    }
    if let Some(TraceDevice::Name(name)) = &flow.device {
        if name.trim().is_empty() {
            return Err(ConfigError::new(format!("{path}.device"), "must not be empty"));
        }
    }
    // The time window is in trace time: `end` is exclusive and must come after `start`.
    if let Some(end) = &flow.end {
        let start = flow.start.as_ref().map_or(0, |d| d.value);
        if end.value <= start {
            let start_text = flow.start.as_ref().map_or("0s (the default start)", |d| d.text.as_str());
            return Err(ConfigError::new(
                format!("{path}.end"),
                format!("must be after start, got end = \"{}\" and start = {start_text}", end.text),
            ));
        }
    }
    if let (Some(format), Some(_)) = (flow.format, &flow.blkparse_event) {
        if format != TraceFormat::Blkparse && format != TraceFormat::Auto {
            return Err(ConfigError::new(
                format!("{path}.blkparse_event"),
                format!("only applies to blkparse traces, but format = \"{}\"", format.name()),
            ));
        }
    }
    if let (Some(format), Some(_)) = (flow.format, &flow.arrival_gap) {
        if format != TraceFormat::Fio && format != TraceFormat::Auto {
            return Err(ConfigError::new(
                format!("{path}.arrival_gap"),
                format!(
                    "only applies to traces without timestamps (fio iolog version 2), but format = \"{}\" has timestamps",
                    format.name()
                ),
            ));
        }
    }
    Ok(())
}
