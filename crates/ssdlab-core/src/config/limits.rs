//! Limits on what the configuration implies, not only on what it says: the size of the device
//! and the time of every step the model precomputes from a rate, a clock or a count.
//!
//! Each such quantity is computed here with exact (`u128`) or floating-point arithmetic that
//! cannot wrap, and refused above the model's range with the field to change and the value that
//! would be accepted. Without these checks a rate slow enough that one transfer overflows the
//! picosecond clock made transfers free (reads faster than at the default rate, channel
//! utilisation 2e9), and a geometry of 2^64 + 1,024 pages wrapped to 1,024 pages and passed
//! (issue 12, findings F01 and F08).

use super::flash::{PROGRAM_COMMAND_CYCLES, READ_COMMAND_CYCLES};
use super::geometry::SECTOR_BYTES;
use super::*;
use crate::time::{MAX_DURATION_PS, PS_PER_S};

/// Picoseconds in a day, for messages.
const PS_PER_DAY: f64 = PS_PER_S as f64 * 86_400.0;

/// Requests carry their length as a 32-bit count of sectors.
const MAX_REQUEST_BYTES: u128 = u32::MAX as u128 * SECTOR_BYTES as u128;

/// Physical pages of the flash geometry, exactly (the product of six 32-bit counts fits in 192
/// bits, so it is formed in two `u128` halves that saturate instead of wrapping).
pub(super) fn physical_pages(flash: &FlashConfig) -> u128 {
    let upper = flash.channels as u128 * flash.chips_per_channel as u128 * flash.dies_per_chip as u128;
    let lower = flash.planes_per_die as u128 * flash.blocks_per_plane as u128 * flash.pages_per_block as u128;
    upper.saturating_mul(lower)
}

/// The geometry's size: fewer pages than 32-bit page addresses hold, and a byte count that fits.
pub(super) fn validate_geometry(flash: &FlashConfig) -> Result<(), ConfigError> {
    let pages = physical_pages(flash);
    if pages >= u32::MAX as u128 {
        let shown = if pages == u128::MAX { "more than 2^128".to_string() } else { pages.to_string() };
        return Err(ConfigError::new(
            "flash",
            format!(
                "{shown} physical pages (channels x chips_per_channel x dies_per_chip x planes_per_die x blocks_per_plane x pages_per_block) exceed the 32-bit page addresses of the model (at most {}); use larger pages or fewer blocks",
                u32::MAX - 1
            ),
        ));
    }
    if pages.checked_mul(flash.page_size.value as u128).is_none_or(|bytes| bytes > u64::MAX as u128) {
        return Err(ConfigError::new(
            "flash.page_size",
            format!(
                "\"{}\" x {pages} pages exceeds the 2^64-byte range of the model; use smaller pages",
                flash.page_size.text
            ),
        ));
    }
    Ok(())
}

/// The longest single transfer of host data the model may ask for: one request. Synthetic flows
/// of a fixed size say how large theirs are; otherwise a request may cover the logical space, up
/// to the 32-bit sector count a request carries.
fn largest_request_bytes(config: &Config) -> u128 {
    let physical = physical_pages(&config.flash) as f64 * config.flash.page_size.value as f64;
    let logical = (physical * (1.0 - config.ftl.over_provisioning)).max(SECTOR_BYTES as f64) as u128;
    let general = logical.min(MAX_REQUEST_BYTES);
    let mut largest = 0u128;
    for flow in &config.flows {
        let bytes = match (flow.kind, &flow.request_size) {
            (FlowKind::Synthetic, None) => 8 * SECTOR_BYTES as u128,
            (FlowKind::Synthetic, Some(RequestSize::Fixed(size))) => size.value as u128,
            _ => general,
        };
        largest = largest.max(bytes.min(general));
    }
    if largest == 0 {
        general
    } else {
        largest
    }
}

/// `value` rounded up to three significant digits, written so that it parses back to at least
/// `value` (the advice must be a value that is accepted).
fn round_up(value: f64) -> String {
    if !(value.is_finite() && value > 0.0) {
        return format!("{value:e}");
    }
    let scale = 10f64.powi(value.log10().floor() as i32 - 2);
    let mut rounded = (value / scale).ceil() * scale;
    loop {
        let text = format!("{rounded:.2e}");
        if text.parse::<f64>().is_ok_and(|back| back >= value) {
            return text;
        }
        rounded += scale;
    }
}

fn days(ps: f64) -> String {
    format!("{:.1} days", ps / PS_PER_DAY)
}

/// The error for a rate so slow that `what` would outlast the simulated range. `per_unit_ps` is
/// the time at a rate of one unit per second, so the slowest accepted rate is
/// `per_unit_ps / budget`.
fn too_slow(path: &str, text: &str, unit: &str, what: &str, per_unit_ps: f64, budget_ps: f64) -> ConfigError {
    ConfigError::new(
        path,
        format!(
            "\"{text}\" is too slow: {what} would take longer than the longest duration the model simulates ({}); the slowest accepted is \"{}{unit}\"",
            days(MAX_DURATION_PS as f64),
            round_up(per_unit_ps / budget_ps)
        ),
    )
}

/// Checks every duration the model derives from a rate, a clock or a multiplier.
pub(super) fn validate_derived_durations(config: &Config) -> Result<(), ConfigError> {
    let max = MAX_DURATION_PS as f64;
    let ps_per_s = PS_PER_S as f64;
    let f = &config.flash;
    let request = largest_request_bytes(config);
    let request_text = format!("{:.0} B", request as f64);

    // Flash channel: the longest channel occupancy is a multi-plane program, every plane's
    // command cycles and page data in one go (`sim/flash_path.rs`).
    let beats = f.page_size.value.div_ceil(f.channel_width_bytes as u64) as f64;
    let cycles = f.planes_per_die as f64 * (PROGRAM_COMMAND_CYCLES.max(READ_COMMAND_CYCLES) as f64 + beats);
    if cycles * ps_per_s / f.channel_rate.value > max {
        let what = format!(
            "a {}-plane program ({cycles:.0} bus transfers of its commands and {} pages)",
            f.planes_per_die, f.page_size.text
        );
        return Err(too_slow("flash.channel_rate", &f.channel_rate.text, "T/s", &what, cycles * ps_per_s, max));
    }

    // Controller dispatch: a multi-plane batch costs the per-transaction time once per plane.
    let c = &config.controller;
    for (name, d) in [("dispatch_read", &c.dispatch_read), ("dispatch_write", &c.dispatch_write)] {
        if d.value as f64 * f.planes_per_die as f64 > max {
            return Err(ConfigError::new(
                format!("controller.{name}"),
                format!(
                    "\"{}\" x {} planes per multi-plane command exceeds the longest duration the model simulates ({}); use at most \"{}ps\"",
                    d.text,
                    f.planes_per_die,
                    days(max),
                    MAX_DURATION_PS / f.planes_per_die as u64
                ),
            ));
        }
    }

    validate_host_link(config, request, &request_text)?;
    validate_cache_dram(config, request, &request_text)?;
    validate_firmware_clock(config, request)?;

    for (i, flow) in config.flows.iter().enumerate() {
        if let Some(rate) = &flow.rate {
            if ps_per_s / rate.value > max {
                let what = "the mean time between two arrivals";
                return Err(too_slow(&format!("flows[{i}].rate"), &rate.text, "/s", what, ps_per_s, max));
            }
        }
    }
    Ok(())
}

/// A host link carries one request's data in one transfer. Every link is checked, the unused ones
/// too, so that a bad value is caught before someone switches the interface (as `[dram]` does).
fn validate_host_link(config: &Config, request: u128, request_text: &str) -> Result<(), ConfigError> {
    let (max, ps_per_s) = (MAX_DURATION_PS as f64, PS_PER_S as f64);
    let h = &config.host;
    // PCIe (NVMe and Open-Channel).
    {
        let tlps = request.div_ceil(h.pcie_max_payload.value.max(1) as u128).max(1);
        let wire = tlps.checked_mul(h.pcie_tlp_overhead.value as u128).and_then(|o| o.checked_add(request));
        let Some(wire) = wire.filter(|&w| w <= u64::MAX as u128) else {
            return Err(ConfigError::new(
                "host.pcie_tlp_overhead",
                format!(
                    "\"{}\" per packet makes a request of {request_text} larger than the model's 2^64-byte range",
                    h.pcie_tlp_overhead.text
                ),
            ));
        };
        let per_unit = wire as f64 * ps_per_s / h.pcie_lanes as f64;
        if per_unit / h.pcie_lane_rate.value > max {
            let what =
                format!("a request of {request_text} ({wire} B with packet overhead) over {} lanes", h.pcie_lanes);
            return Err(too_slow("host.pcie_lane_rate", &h.pcie_lane_rate.text, "B/s", &what, per_unit, max));
        }
    }
    // SATA.
    {
        let budget = max - h.sata_processing_delay.value as f64;
        let per_unit = request as f64 * ps_per_s;
        if per_unit / h.sata_link_rate.value > budget {
            let what = format!("a request of {request_text} (plus sata_processing_delay)");
            return Err(too_slow("host.sata_link_rate", &h.sata_link_rate.text, "B/s", &what, per_unit, budget));
        }
    }
    // UFS: the rate follows from the gear and lanes; the frame overhead may still be absurd.
    {
        let u = &h.ufs;
        let upiu = request + super::UPIU_HEADER_BYTES as u128;
        let frames = upiu.div_ceil(u.frame_payload.value.max(1) as u128);
        let wire = frames.checked_mul(u.frame_overhead.value as u128).and_then(|o| o.checked_add(upiu));
        let ps = wire.map(|w| w as f64 * ps_per_s / u.bytes_per_second() + u.processing_delay.value as f64);
        if ps.is_none_or(|ps| ps > max) {
            return Err(ConfigError::new(
                    "host.ufs.frame_overhead",
                    format!(
                        "\"{}\" per frame makes a request of {request_text} take longer than the longest duration the model simulates ({})",
                        u.frame_overhead.text,
                        days(max)
                    ),
                ));
        }
    }
    Ok(())
}

/// The controller's DRAM (the data cache's serial model and the banked model): one access opens
/// its rows and streams its bytes at the bus rate (`cache/dram.rs`, `dram/banked.rs`).
fn validate_cache_dram(config: &Config, request: u128, request_text: &str) -> Result<(), ConfigError> {
    let (max, ps_per_s) = (MAX_DURATION_PS as f64, PS_PER_S as f64);
    let c = &config.cache;
    if c.dram_burst_bytes == 0 || c.dram_row_size.value == 0 {
        return Ok(()); // refused with their own message by `validate_cache`
    }
    let per_unit = request as f64 * ps_per_s / c.dram_burst_bytes as f64;
    if per_unit / c.dram_data_rate.value > max {
        let what = format!("moving a request of {request_text} through the DRAM bus");
        return Err(too_slow("cache.dram_data_rate", &c.dram_data_rate.text, "T/s", &what, per_unit, max));
    }
    let rows = request.div_ceil(c.dram_row_size.value as u128) as f64;
    let opens = rows * (c.dram_trp.value as f64 + c.dram_trcd.value as f64) + c.dram_tcl.value as f64;
    if opens + per_unit / c.dram_data_rate.value > max {
        return Err(ConfigError::new(
            "cache.dram_trcd",
            format!(
                "tRP (\"{}\") + tRCD (\"{}\") for each of the {rows:.0} rows of a request of {request_text} (cache.dram_row_size \"{}\") take longer than the longest duration the model simulates ({})",
                c.dram_trp.text,
                c.dram_trcd.text,
                c.dram_row_size.text,
                days(max)
            ),
        ));
    }
    Ok(())
}

/// Firmware steps run once per request (HIL), per page (cache, FTL), per transaction of a
/// multi-plane batch (FIL) or per victim (GC); a batch of them must fit the range. Checked with
/// the model off too, like the links.
fn validate_firmware_clock(config: &Config, request: u128) -> Result<(), ConfigError> {
    use super::firmware::FirmwareStep;
    let fw = &config.firmware;
    let (max, ps_per_s) = (MAX_DURATION_PS as f64, PS_PER_S as f64);
    let cpi = [fw.cpi.branch, fw.cpi.load_store, fw.cpi.arithmetic, fw.cpi.other];
    let pages = request.div_ceil(config.flash.page_size.value.max(1) as u128).max(1) as f64;
    for step in FirmwareStep::ALL {
        let r = fw.resolved(step);
        let cycles: f64 = r.instructions.iter().zip(cpi).map(|(&n, c)| n as f64 * c).sum();
        let times = match step {
            FirmwareStep::Hil | FirmwareStep::Gc => 1.0,
            FirmwareStep::Cache | FirmwareStep::Ftl => pages,
            FirmwareStep::Fil => config.flash.planes_per_die as f64,
        };
        let per_unit = cycles * times * ps_per_s;
        if !per_unit.is_finite() {
            return Err(ConfigError::new(
                format!("firmware.{}", step.name()),
                "its instructions times their CPI exceed the range of the model",
            ));
        }
        if per_unit / fw.clock.value > max {
            let what = format!("{times:.0} run(s) of the `{}` step ({cycles:.0} cycles each)", step.name());
            return Err(too_slow("firmware.clock", &fw.clock.text, "Hz", &what, per_unit, max));
        }
    }
    // The work items, at the most units one execution can do: a unit per 512-byte sector of
    // the largest request bounds every per-request count (memory pages, FISes, UPIUs, pages).
    use super::firmware::WorkItem;
    let f = &config.flash;
    for item in WorkItem::ALL {
        let cycles: f64 = fw.work.resolved(item).iter().zip(cpi).map(|(&n, c)| n as f64 * c).sum();
        let units = match item {
            WorkItem::GcBlockScanned => f.blocks_per_plane as f64,
            WorkItem::GcPageMoved => f.pages_per_block as f64,
            WorkItem::CmtEntryWalked => pages * (f.page_size.value / 4).max(1) as f64,
            WorkItem::NvmeQueueScanned => config.flows.len().max(1) as f64,
            _ => request.div_ceil(512).max(8) as f64,
        };
        let per_unit = cycles * units * ps_per_s;
        let path = format!("firmware.work.{}", item.name());
        if !per_unit.is_finite() {
            return Err(ConfigError::new(path, "its instructions times their CPI exceed the range of the model"));
        }
        if per_unit / fw.clock.value > max {
            let what = format!("{units:.0} unit(s) of `{}` ({cycles:.0} cycles each)", item.name());
            return Err(too_slow("firmware.clock", &fw.clock.text, "Hz", &what, per_unit, max));
        }
    }
    Ok(())
}
