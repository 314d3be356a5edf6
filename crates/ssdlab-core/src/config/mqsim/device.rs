//! The device file (`ssdconfig.xml`): `Host_Parameter_Set`, `Device_Parameter_Set` and
//! `Flash_Parameter_Set` mapped to ssdlab's `[host]`, `[cache]`, `[ftl]`, `[controller]` and
//! `[flash]` sections, with what the scenarios need to know about the device.

use serde_json::{json, Map, Value};

use super::schema::{duration_ns, number, schema_has, set, size_bytes};
use super::tags::{shown, with_tags, DEVICE_TAGS, FLASH_TAGS, HOST_TAGS};
use super::xml::{Element, Params};
use crate::config::{ConfigError, FlashConfig};

pub(super) struct Device {
    pub(super) config: Map<String, Value>,
    pub(super) warnings: Vec<String>,
    pub(super) seed: u64,
    pub(super) preconditioning: bool,
    pub(super) scheduling: Option<String>,
    /// "Data_Cache_Capacity ..." when the device has a data cache (flows that use it get a warning).
    pub(super) data_cache: Option<String>,
    pub(super) channels: u64,
    pub(super) chips: u64,
    pub(super) dies: u64,
    pub(super) planes: u64,
}

pub(super) fn import_device(file: &str, root: &Element) -> Result<Device, ConfigError> {
    match root.name.as_str() {
        "Execution_Parameter_Set" => {}
        "MQSim_IO_Scenarios" => {
            return Err(ConfigError::new(
                format!("{file}:{}", root.line),
                "this is a workload file (<MQSim_IO_Scenarios>); give the device file (ssdconfig.xml) first and the workload second",
            ))
        }
        other => {
            return Err(ConfigError::new(
                format!("{file}:{}", root.line),
                format!("expected an MQSim device file with root <Execution_Parameter_Set>, found <{other}>"),
            ))
        }
    }
    let mut warnings = Vec::new();
    let top = Params::new(file, "Execution_Parameter_Set".into(), root, &mut warnings);
    let host = top.element("Host_Parameter_Set");
    let device = top.element("Device_Parameter_Set");
    top.finish(&["Host_Parameter_Set", "Device_Parameter_Set"], &mut warnings);

    let empty = Element { name: String::new(), text: String::new(), line: root.line, children: Vec::new() };
    let mut config = Map::new();

    // Host_Parameter_Set
    let h = Params::new(file, "Host_Parameter_Set".into(), host.unwrap_or(&empty), &mut warnings);
    if let Some(bw) = h.num("PCIe_Lane_Bandwidth")? {
        set(&mut config, "host.pcie_lane_rate", format!("{}GB/s", number(bw)));
    }
    if let Some(n) = h.int("PCIe_Lane_Count")? {
        set(&mut config, "host.pcie_lanes", n);
    }
    let sata_delay = h.int("SATA_Processing_Delay")?;
    let logging = h.boolean("Enable_ResponseTime_Logging")?;
    let logging_period = h.int("ResponseTime_Logging_Period_Length")?;
    if logging == Some(true) {
        warnings.push(format!(
            "Enable_ResponseTime_Logging true{}: ssdlab writes no per-epoch response time log; results.json holds whole-run statistics per flow",
            with_tags(&[("ResponseTime_Logging_Period_Length", shown(logging_period))])
        ));
    }
    h.finish(HOST_TAGS, &mut warnings);

    // Device_Parameter_Set
    let d = Params::new(file, "Device_Parameter_Set".into(), device.unwrap_or(&empty), &mut warnings);
    let seed = d.int("Seed")?;
    if let Some(seed) = seed {
        config.insert("seed".into(), json!(seed));
    }
    let preconditioning = d.boolean("Enabled_Preconditioning")?.unwrap_or(true);
    d.choice("Memory_Type", &["FLASH"])?;
    let interface = d.choice("HostInterface_Type", &["NVME", "SATA"])?;
    let queue_depth = d.int("IO_Queue_Depth")?;
    let sata_modelled = schema_has("host", "sata_ncq_depth");
    if let (Some(ns), true) = (sata_delay, sata_modelled) {
        set(&mut config, "host.sata_processing_delay", duration_ns(ns));
    }
    match (interface.as_deref(), sata_modelled) {
        (Some("SATA"), true) => {
            // For SATA, MQSim's IO_Queue_Depth is the NCQ depth.
            set(&mut config, "host.interface", "sata");
            if let Some(n) = queue_depth {
                set(&mut config, "host.sata_ncq_depth", n);
            }
        }
        (Some("SATA"), false) => warnings.push(format!(
            "HostInterface_Type SATA{}: ssdlab models NVMe only; the device runs as NVMe with one submission queue per flow",
            with_tags(&[("SATA_Processing_Delay", shown(sata_delay))])
        )),
        (interface, _) => {
            if interface.is_some() {
                set(&mut config, "host.interface", "nvme");
            }
            if let Some(n) = queue_depth {
                set(&mut config, "host.sq_depth", n);
            }
        }
    }
    if let Some(n) = d.int("Queue_Fetch_Size")? {
        set(&mut config, "host.queue_fetch_size", n);
    }

    // The data cache: mapped to [cache] when ssdlab has one. Without it, every tag is still read
    // (a bad value is an error) and the warning goes to the scenarios whose flows use the cache.
    let mechanism = d.choice("Caching_Mechanism", &["SIMPLE", "ADVANCED"])?;
    let cache_sharing = d.choice("Data_Cache_Sharing_Mode", &["SHARED", "EQUAL_PARTITIONING"])?;
    let cache_capacity = d.int("Data_Cache_Capacity")?;
    let mut cache_tags: Vec<(&str, String, &str, Value)> = Vec::new();
    if let Some(c) = cache_capacity {
        cache_tags.push(("Data_Cache_Capacity", c.to_string(), "capacity", json!(size_bytes(c))));
    }
    if let Some(m) = &cache_sharing {
        let sharing = if m == "SHARED" { "shared" } else { "partitioned" };
        cache_tags.push(("Data_Cache_Sharing_Mode", m.clone(), "sharing", json!(sharing)));
    }
    for (tag, key) in [
        ("Data_Cache_DRAM_Row_Size", "dram_row_size"),
        ("Data_Cache_DRAM_Data_Rate", "dram_data_rate"),
        ("Data_Cache_DRAM_Data_Busrt_Size", "dram_burst_bytes"),
        ("Data_Cache_DRAM_Data_Burst_Size", "dram_burst_bytes"),
        ("Data_Cache_DRAM_tRCD", "dram_trcd"),
        ("Data_Cache_DRAM_tCL", "dram_tcl"),
        ("Data_Cache_DRAM_tRP", "dram_trp"),
    ] {
        if let Some(v) = d.int(tag)? {
            let value = match key {
                "dram_row_size" => json!(size_bytes(v)),
                // MQSim's rate is a clock in MHz with two transfers per clock (DDR).
                "dram_data_rate" => json!(format!("{}MT/s", 2 * u128::from(v))),
                "dram_burst_bytes" => json!(v),
                _ => json!(duration_ns(v)),
            };
            cache_tags.push((tag, v.to_string(), key, value));
        }
    }
    let mut data_cache = None;
    if schema_has("cache", "capacity") {
        let mut unmapped = Vec::new();
        for (tag, shown, key, value) in cache_tags {
            if schema_has("cache", key) {
                set(&mut config, &format!("cache.{key}"), value);
            } else {
                unmapped.push(format!("{tag} {shown}"));
            }
        }
        if !unmapped.is_empty() {
            warnings.push(format!(
                "{}: ssdlab's data cache has no such setting yet; its default is used",
                unmapped.join(", ")
            ));
        }
        if mechanism.as_deref() == Some("SIMPLE") {
            warnings.push(
                "Caching_Mechanism SIMPLE: MQSim's SIMPLE cache takes only the TURNED_OFF and WRITE_CACHE modes and, like ADVANCED, writes data it has not seen in the last second through to flash at once; ssdlab's default cache writes dirty data back in the background (cache.destage = \"background\"), and compat = \"mqsim\" writes cold data through at once as both MQSim caches do (docs/fidelity.md)"
                    .into(),
            );
        }
    } else if cache_capacity != Some(0) {
        let mut parts = Vec::new();
        if let Some(m) = &mechanism {
            parts.push(format!("Caching_Mechanism {m}"));
        }
        parts.extend(
            cache_tags.iter().skip_while(|(t, ..)| *t == "Data_Cache_Capacity").map(|(t, v, ..)| format!("{t} {v}")),
        );
        let capacity = match cache_capacity {
            Some(c) => format!("Data_Cache_Capacity {c} ({})", size_bytes(c)),
            None => "Data_Cache_Capacity (MQSim's default)".to_string(),
        };
        data_cache = Some(if parts.is_empty() { capacity } else { format!("{capacity}, {}", parts.join(", ")) });
    }

    if d.choice("Address_Mapping", &["PAGE_LEVEL", "HYBRID"])?.as_deref() == Some("HYBRID") {
        warnings.push(
            "Address_Mapping HYBRID: MQSim's hybrid mapping unit is an empty stub, so the device uses page-level mapping (ssdlab's own hybrid log-block FTL is ftl.mapping = \"hybrid\")"
                .into(),
        );
    }
    if let Some(ideal) = d.boolean("Ideal_Mapping_Table")? {
        set(&mut config, "ftl.ideal_mapping", ideal);
    }
    if let Some(bytes) = d.int("CMT_Capacity")? {
        set(&mut config, "ftl.cmt_capacity", size_bytes(bytes));
    }
    if let Some(mode) =
        d.choice("CMT_Sharing_Mode", &["SHARED", "EQUAL_PARTITIONING", "EQUAL_SIZE_PARTITIONING", "EQUAL_PARTITION"])?
    {
        set(&mut config, "ftl.cmt_sharing", if mode == "SHARED" { "shared" } else { "partitioned" });
    }
    if let Some(e) = d.element("Plane_Allocation_Scheme") {
        let scheme = e.text.trim().to_ascii_uppercase();
        let mut letters: Vec<char> = scheme.chars().collect();
        letters.sort_unstable();
        if letters == ['C', 'D', 'P', 'W'] {
            set(&mut config, "ftl.allocation", scheme);
        } else if scheme == "F" {
            warnings.push(
                "Plane_Allocation_Scheme F: ssdlab has the 24 static orders only; the device uses CWDP".to_string(),
            );
        } else {
            return Err(d.error(e, "a permutation of C, W, D, P (such as CWDP) or F"));
        }
    }
    let scheduling = d.choice("Transaction_Scheduling_Policy", &["OUT_OF_ORDER", "PRIORITY_OUT_OF_ORDER", "FLIN"])?;
    match scheduling.as_deref() {
        Some("FLIN") => {
            set(&mut config, "controller.scheduling", "flow-fair");
            warnings.push(
                "Transaction_Scheduling_Policy FLIN: mapped to controller.scheduling = \"flow-fair\", fair queueing across flows at each die, which pursues FLIN's goal (even slowdowns) without its three stages"
                    .into(),
            );
        }
        Some("OUT_OF_ORDER") => set(&mut config, "controller.scheduling", "out-of-order"),
        Some(_) => set(&mut config, "controller.scheduling", "priority"),
        None => {}
    }
    if let Some(op) = d.num("Overprovisioning_Ratio")? {
        set(&mut config, "ftl.over_provisioning", op);
    }
    if let Some(t) = d.num("GC_Exec_Threshold")? {
        set(&mut config, "ftl.gc_threshold", t);
    }
    if let Some(policy) =
        d.choice("GC_Block_Selection_Policy", &["GREEDY", "RGA", "RANDOM", "RANDOM_P", "RANDOM_PP", "FIFO"])?
    {
        set(&mut config, "ftl.gc_policy", policy.to_ascii_lowercase().replace('_', "-"));
    }
    if let Some(copyback) = d.boolean("Use_Copyback_for_GC")? {
        if schema_has("ftl", "copyback") {
            set(&mut config, "ftl.copyback", copyback);
        } else if copyback {
            warnings.push(
                "Use_Copyback_for_GC true: ssdlab has no copyback yet; GC moves each page by a read and a program through the channel"
                    .into(),
            );
        }
    }
    let preemptible = d.boolean("Preemptible_GC_Enabled")?;
    let hard_threshold = d.num("GC_Hard_Threshold")?;
    if schema_has("ftl", "preemptible_gc") {
        if let Some(on) = preemptible {
            set(&mut config, "ftl.preemptible_gc", on);
        }
        if let Some(t) = hard_threshold {
            set(&mut config, "ftl.gc_hard_threshold", t);
        }
    } else if preemptible == Some(true) {
        warnings.push(format!(
            "Preemptible_GC_Enabled true{}: ssdlab has no preemptible GC yet; GC runs to completion ahead of user writes",
            with_tags(&[("GC_Hard_Threshold", hard_threshold.map(number))])
        ));
    }
    let dynamic_wl = d.boolean("Dynamic_Wearleveling_Enabled")?;
    let static_wl = d.boolean("Static_Wearleveling_Enabled")?;
    let static_threshold = d.int("Static_Wearleveling_Threshold")?;
    if let Some(on) = dynamic_wl {
        if schema_has("ftl", "dynamic_wear_leveling") {
            set(&mut config, "ftl.dynamic_wear_leveling", on);
        } else if on {
            warnings.push(
                "Dynamic_Wearleveling_Enabled true: ssdlab has no wear leveling yet; blocks are allocated without regard to erase counts"
                    .into(),
            );
        }
    }
    let static_mapped = schema_has("ftl", "static_wear_leveling");
    if let Some(on) = static_wl {
        if static_mapped {
            set(&mut config, "ftl.static_wear_leveling", on);
        } else if on {
            warnings.push(format!(
                "Static_Wearleveling_Enabled true{}: ssdlab has no static wear leveling yet; cold data stays where it is",
                with_tags(&[("Static_Wearleveling_Threshold", shown(static_threshold))])
            ));
        }
    }
    if let Some(threshold) = static_threshold {
        if schema_has("ftl", "static_wear_leveling_threshold") {
            set(&mut config, "ftl.static_wear_leveling_threshold", threshold);
        }
    }

    // Suspension thresholds: applied with CMD_Suspension_Support below.
    let erase_for_read = match d.int("Preferred_suspend_erase_time_for_read")? {
        Some(ns) => Some(ns),
        // MQSim's own sample files spell it this way too.
        None => d.int("Prefered_suspend_erase_time_for_read")?,
    };
    let erase_for_write = d.int("Preferred_suspend_erase_time_for_write")?;
    let program_for_read = d.int("Preferred_suspend_write_time_for_read")?;

    let channels = d.count("Flash_Channel_Count", "channel")?;
    if let Some(n) = channels {
        set(&mut config, "flash.channels", n);
    }
    if let Some(n) = d.int("Flash_Channel_Width")? {
        set(&mut config, "flash.channel_width_bytes", n);
    }
    if let Some(n) = d.num("Channel_Transfer_Rate")? {
        set(&mut config, "flash.channel_rate", format!("{}MT/s", number(n)));
    }
    let chips = d.count("Chip_No_Per_Channel", "chip per channel")?;
    if let Some(n) = chips {
        set(&mut config, "flash.chips_per_channel", n);
    }
    // NV-DDR2 is the only protocol MQSim has, and the one ssdlab's channel timing follows.
    d.choice("Flash_Comm_Protocol", &["NVDDR2"])?;
    let flash_element = d.element("Flash_Parameter_Set");
    d.finish(DEVICE_TAGS, &mut warnings);

    // Flash_Parameter_Set
    let f = Params::new(file, "Flash_Parameter_Set".into(), flash_element.unwrap_or(&empty), &mut warnings);
    let technology = f.choice("Flash_Technology", &["SLC", "MLC", "TLC"])?;
    if let Some(t) = &technology {
        set(&mut config, "flash.technology", t.as_str());
    }
    let suspension = f.choice("CMD_Suspension_Support", &["NONE", "PROGRAM", "PROGRAM_ERASE", "ERASE"])?;
    if let Some(mode) = &suspension {
        let value = match mode.as_str() {
            "NONE" => "none",
            "PROGRAM" => "program",
            "ERASE" => "erase",
            _ => "program-erase",
        };
        set(&mut config, "flash.suspension", value);
        if value != "none" {
            warnings.push(format!(
                "CMD_Suspension_Support {mode}: MQSim @7ec40e3 never suspends (its scheduler's suspension branches fall through to `return false`); ssdlab suspends as configured, so its reads may wait less than MQSim's (flash.suspension = \"none\", or compat = \"mqsim\", runs as MQSim does)"
            ));
        }
    }
    for (tag, key) in [("Suspend_Erase_Time", "suspend_erase"), ("Suspend_Program_Time", "suspend_program")] {
        if let Some(ns) = f.int(tag)? {
            set(&mut config, &format!("flash.timing.{key}"), duration_ns(ns));
        }
    }
    if let Some(ns) = erase_for_read {
        set(&mut config, "flash.timing.suspend_erase_min_remaining", duration_ns(ns));
    }
    if let Some(ns) = program_for_read {
        set(&mut config, "flash.timing.suspend_program_min_remaining", duration_ns(ns));
    }
    if let Some(ns) = erase_for_write {
        if suspension.as_deref().is_some_and(|m| m.contains("ERASE")) {
            warnings.push(format!(
                "Preferred_suspend_erase_time_for_write {ns}: no counterpart (in ssdlab only reads may suspend an erase)"
            ));
        }
    }
    let technology = technology.unwrap_or_else(|| "MLC".into());
    for (op, default_ns) in [("Read", 75_000), ("Program", 750_000)] {
        let lsb = f.int(&format!("Page_{op}_Latency_LSB"))?;
        let csb = f.int(&format!("Page_{op}_Latency_CSB"))?;
        let msb = f.int(&format!("Page_{op}_Latency_MSB"))?;
        if lsb.is_none() && csb.is_none() && msb.is_none() {
            continue;
        }
        let value = |v: Option<u64>| duration_ns(v.unwrap_or(default_ns));
        let latency = match technology.as_str() {
            "SLC" => json!(value(lsb)),
            "MLC" => json!({ "lsb": value(lsb), "msb": value(msb) }),
            _ => json!({ "lsb": value(lsb), "csb": value(csb), "msb": value(msb) }),
        };
        set(&mut config, &format!("flash.timing.{}", op.to_ascii_lowercase()), latency);
    }
    if let Some(ns) = f.int("Block_Erase_Latency")? {
        set(&mut config, "flash.timing.erase", duration_ns(ns));
    }
    if let Some(limit) = f.int("Block_PE_Cycles_Limit")? {
        if schema_has("ftl", "pe_cycle_limit") {
            set(&mut config, "ftl.pe_cycle_limit", limit);
        } else {
            warnings.push(format!(
                "Block_PE_Cycles_Limit {limit}: ssdlab does not model wear-out yet; blocks never retire"
            ));
        }
    }
    let dies = f.count("Die_No_Per_Chip", "die per chip")?;
    if let Some(n) = dies {
        set(&mut config, "flash.dies_per_chip", n);
    }
    let planes = f.count("Plane_No_Per_Die", "plane per die")?;
    if let Some(n) = planes {
        set(&mut config, "flash.planes_per_die", n);
    }
    if let Some(n) = f.count("Block_No_Per_Plane", "block per plane")? {
        set(&mut config, "flash.blocks_per_plane", n);
    }
    if let Some(n) = f.count("Page_No_Per_Block", "page per block")? {
        set(&mut config, "flash.pages_per_block", n);
    }
    if let Some(bytes) = f.int("Page_Capacity")? {
        set(&mut config, "flash.page_size", size_bytes(bytes));
    }
    // The spare (metadata) area: MQSim reads it but its timing never moves it; neither does ssdlab.
    f.int("Page_Metadat_Capacity")?;
    f.int("Page_Metadata_Capacity")?;
    f.finish(FLASH_TAGS, &mut warnings);

    let defaults = FlashConfig::default();
    Ok(Device {
        config,
        warnings,
        seed: seed.unwrap_or(1),
        preconditioning,
        scheduling,
        data_cache,
        channels: channels.unwrap_or(defaults.channels as u64),
        chips: chips.unwrap_or(defaults.chips_per_channel as u64),
        dies: dies.unwrap_or(defaults.dies_per_chip as u64),
        planes: planes.unwrap_or(defaults.planes_per_die as u64),
    })
}
