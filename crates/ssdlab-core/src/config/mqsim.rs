//! Import of MQSim's configuration files (`ssdconfig.xml` and `workload.xml`) into ssdlab's schema.
//!
//! MQSim describes the device in one file and a list of I/O scenarios in the other; each
//! `<IO_Scenario>` becomes one ssdlab configuration (device + flows), returned as JSON in the
//! schema of [`Config`] together with the warnings of that scenario.
//!
//! The rule: every tag of both files is either mapped to an ssdlab key, or named in a warning that
//! says what ssdlab does instead. A tag is silent only when its value is what ssdlab does anyway
//! (`Preemptible_GC_Enabled` false, every channel id listed, `Intensity` under a queue-depth
//! generator that never reads it). Unknown tags (typos) are warned about by name, with the closest
//! known tag. Malformed XML, a value that is not a number where one is due, or an unknown enum
//! value is a [`ConfigError`] naming the file, the line, the tag and the value. A value MQSim
//! takes but ssdlab's limits refuse is a warning, so that an override can still fix it.
//!
//! Keys that the schema may or may not have yet (wear leveling, P/E limit, per-flow seed) are
//! looked up in the schema itself: mapped when the key exists, warned about otherwise.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use quick_xml::events::Event;
use quick_xml::Reader;
use serde_json::{json, Map, Value};

use super::{Config, ConfigError, FlashConfig, FlowConfig};

/// One MQSim `<IO_Scenario>` as an ssdlab configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The configuration in ssdlab's schema (JSON form; [`Config::from_json_str`] accepts it).
    /// Trace paths are as written in the workload file: relative to the workload file's folder.
    pub config: Value,
    /// What was not mapped exactly, one sentence per tag (or group of tags).
    pub warnings: Vec<String>,
}

/// Every scenario of a workload file, in file order (scenario 1 first).
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub scenarios: Vec<Scenario>,
}

/// Names used in messages, and where trace files are.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// How the device file is named in errors and warnings.
    pub ssdconfig_name: String,
    /// How the workload file is named in errors and warnings.
    pub workload_name: String,
    /// The workload file's folder. Trace paths are relative to it; the importer reads a trace
    /// only to count its requests when `Percentage_To_Be_Executed` is below 100.
    pub workload_dir: Option<PathBuf>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self { ssdconfig_name: "ssdconfig.xml".into(), workload_name: "workload.xml".into(), workload_dir: None }
    }
}

/// Imports the text of an MQSim device file and workload file.
pub fn import(ssdconfig_xml: &str, workload_xml: &str) -> Result<Imported, ConfigError> {
    import_with(ssdconfig_xml, workload_xml, &ImportOptions::default())
}

/// Imports two MQSim files from disk. A missing file is an error: nothing is ever created.
pub fn import_files(ssdconfig: &Path, workload: &Path) -> Result<Imported, ConfigError> {
    let read = |path: &Path| {
        std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(path.display().to_string(), format!("cannot read the file: {e}")))
    };
    let (device_text, workload_text) = (read(ssdconfig)?, read(workload)?);
    let options = ImportOptions {
        ssdconfig_name: ssdconfig.display().to_string(),
        workload_name: workload.display().to_string(),
        workload_dir: Some(workload.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)),
    };
    import_with(&device_text, &workload_text, &options)
}

/// [`import`] with explicit file names and trace folder.
pub fn import_with(ssdconfig_xml: &str, workload_xml: &str, options: &ImportOptions) -> Result<Imported, ConfigError> {
    let device_root = parse_xml(&options.ssdconfig_name, ssdconfig_xml)?;
    let workload_root = parse_xml(&options.workload_name, workload_xml)?;
    let device = import_device(&options.ssdconfig_name, &device_root)?;
    let scenarios = import_workload(&options.workload_name, &workload_root, &device, options)?;
    Ok(Imported { scenarios })
}

// ------------------------------------------------------------------------------------------------
// Tags known to MQSim, per section (for "did you mean" and for the documentation).

const HOST_TAGS: &[&str] = &[
    "PCIe_Lane_Bandwidth",
    "PCIe_Lane_Count",
    "SATA_Processing_Delay",
    "Enable_ResponseTime_Logging",
    "ResponseTime_Logging_Period_Length",
];

const DEVICE_TAGS: &[&str] = &[
    "Seed",
    "Enabled_Preconditioning",
    "Memory_Type",
    "HostInterface_Type",
    "IO_Queue_Depth",
    "Queue_Fetch_Size",
    "Caching_Mechanism",
    "Data_Cache_Sharing_Mode",
    "Data_Cache_Capacity",
    "Data_Cache_DRAM_Row_Size",
    "Data_Cache_DRAM_Data_Rate",
    "Data_Cache_DRAM_Data_Busrt_Size",
    "Data_Cache_DRAM_Data_Burst_Size",
    "Data_Cache_DRAM_tRCD",
    "Data_Cache_DRAM_tCL",
    "Data_Cache_DRAM_tRP",
    "Address_Mapping",
    "Ideal_Mapping_Table",
    "CMT_Capacity",
    "CMT_Sharing_Mode",
    "Plane_Allocation_Scheme",
    "Transaction_Scheduling_Policy",
    "Overprovisioning_Ratio",
    "GC_Exec_Threshold",
    "GC_Block_Selection_Policy",
    "Use_Copyback_for_GC",
    "Preemptible_GC_Enabled",
    "GC_Hard_Threshold",
    "Dynamic_Wearleveling_Enabled",
    "Static_Wearleveling_Enabled",
    "Static_Wearleveling_Threshold",
    "Preferred_suspend_erase_time_for_read",
    "Prefered_suspend_erase_time_for_read",
    "Preferred_suspend_erase_time_for_write",
    "Preferred_suspend_write_time_for_read",
    "Flash_Channel_Count",
    "Flash_Channel_Width",
    "Channel_Transfer_Rate",
    "Chip_No_Per_Channel",
    "Flash_Comm_Protocol",
    "Flash_Parameter_Set",
];

const FLASH_TAGS: &[&str] = &[
    "Flash_Technology",
    "CMD_Suspension_Support",
    "Page_Read_Latency_LSB",
    "Page_Read_Latency_CSB",
    "Page_Read_Latency_MSB",
    "Page_Program_Latency_LSB",
    "Page_Program_Latency_CSB",
    "Page_Program_Latency_MSB",
    "Block_Erase_Latency",
    "Block_PE_Cycles_Limit",
    "Suspend_Erase_Time",
    "Suspend_Program_Time",
    "Die_No_Per_Chip",
    "Plane_No_Per_Die",
    "Block_No_Per_Plane",
    "Page_No_Per_Block",
    "Page_Capacity",
    "Page_Metadat_Capacity",
    "Page_Metadata_Capacity",
];

const FLOW_COMMON_TAGS: &[&str] = &[
    "Type",
    "Priority_Class",
    "Device_Level_Data_Caching_Mode",
    "Channel_IDs",
    "Chip_IDs",
    "Die_IDs",
    "Plane_IDs",
    "Initial_Occupancy_Percentage",
];

const SYNTHETIC_TAGS: &[&str] = &[
    "Working_Set_Percentage",
    "Synthetic_Generator_Type",
    "Read_Percentage",
    "Address_Distribution",
    "Percentage_of_Hot_Region",
    "Generated_Aligned_Addresses",
    "Address_Alignment_Unit",
    "Request_Size_Distribution",
    "Average_Request_Size",
    "Variance_Request_Size",
    "Seed",
    "Average_No_of_Reqs_in_Queue",
    "Intensity",
    "Bandwidth",
    "Stop_Time",
    "Total_Requests_To_Generate",
];

const TRACE_TAGS: &[&str] = &["File_Path", "Percentage_To_Be_Executed", "Relay_Count", "Time_Unit"];

const SECTOR_BYTES: u64 = 512;

// ------------------------------------------------------------------------------------------------
// A small element tree, enough for MQSim's files: names, text, children and line numbers.

struct Element {
    name: String,
    text: String,
    line: usize,
    children: Vec<Element>,
}

fn parse_xml(file: &str, text: &str) -> Result<Element, ConfigError> {
    let line_of = |pos: u64| {
        let end = (pos as usize).min(text.len());
        text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
    };
    let malformed =
        |line: usize, reason: String| ConfigError::new(format!("{file}:{line}"), format!("malformed XML: {reason}"));
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader.read_event().map_err(|e| malformed(line_of(reader.error_position()), e.to_string()))?;
        let here = line_of(reader.buffer_position());
        let mut finished = None;
        match event {
            Event::Start(e) | Event::Empty(e) if root.is_some() && stack.is_empty() => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                return Err(malformed(here, format!("a second root element <{name}> after the first one ended")));
            }
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                stack.push(Element { name, text: String::new(), line: here, children: Vec::new() });
            }
            Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                finished = Some(Element { name, text: String::new(), line: here, children: Vec::new() });
            }
            Event::End(_) => finished = stack.pop(),
            Event::Text(t) => {
                let value = t.unescape().map_err(|e| malformed(here, e.to_string()))?;
                match stack.last_mut() {
                    Some(open) => open.text.push_str(&value),
                    None if value.trim().is_empty() => {}
                    None => return Err(malformed(here, format!("text \"{}\" outside the root element", value.trim()))),
                }
            }
            Event::CData(c) => {
                if let Some(open) = stack.last_mut() {
                    open.text.push_str(&String::from_utf8_lossy(&c.into_inner()));
                }
            }
            Event::Eof => break,
            _ => {} // declaration, comments, processing instructions, doctype
        }
        if let Some(element) = finished {
            match stack.last_mut() {
                Some(parent) => parent.children.push(element),
                None => root = Some(element),
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err(malformed(open.line, format!("<{}> is never closed", open.name)));
    }
    root.ok_or_else(|| ConfigError::new(file, "malformed XML: the file holds no element"))
}

// ------------------------------------------------------------------------------------------------
// The tags of one parameter set, read by name; whatever is left unread is reported as unknown.

struct Field<'a> {
    element: &'a Element,
    used: Cell<bool>,
}

struct Params<'a> {
    file: &'a str,
    /// Where the tags live, for messages: "Device_Parameter_Set", "flow-0 (IO_Flow_...)".
    section: String,
    fields: Vec<Field<'a>>,
}

impl<'a> Params<'a> {
    fn new(file: &'a str, section: String, element: &'a Element, warnings: &mut Vec<String>) -> Self {
        let fields: Vec<Field> =
            element.children.iter().map(|e| Field { element: e, used: Cell::new(false) }).collect();
        let mut seen: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for f in &fields {
            seen.entry(f.element.name.as_str()).or_default().push(f.element.line);
        }
        for (name, lines) in seen {
            if lines.len() > 1 {
                let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                warnings.push(format!(
                    "{name} appears {} times in {section} ({file} lines {}); the last one is used, as MQSim does",
                    lines.len(),
                    lines.join(", ")
                ));
            }
        }
        Self { file, section, fields }
    }

    /// The last element with this name (MQSim reads the tags in order: the last one wins).
    fn element(&self, name: &str) -> Option<&'a Element> {
        let mut found = None;
        for f in &self.fields {
            if f.element.name == name {
                f.used.set(true);
                found = Some(f.element);
            }
        }
        found
    }

    fn error(&self, element: &Element, expected: &str) -> ConfigError {
        ConfigError::new(
            format!("{}:{}: {}", self.file, element.line, element.name),
            format!("expected {expected}, got \"{}\"", element.text.trim()),
        )
    }

    fn text(&self, name: &str) -> Option<String> {
        self.element(name).map(|e| e.text.trim().to_string())
    }

    fn int(&self, name: &str) -> Result<Option<u64>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => e.text.trim().parse::<u64>().map(Some).map_err(|_| self.error(e, "a whole number")),
        }
    }

    fn num(&self, name: &str) -> Result<Option<f64>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => match e.text.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                _ => Err(self.error(e, "a number")),
            },
        }
    }

    fn percentage(&self, name: &str) -> Result<Option<f64>, ConfigError> {
        let value = self.num(name)?;
        if let (Some(v), Some(e)) = (value, self.element(name)) {
            if !(0.0..=100.0).contains(&v) {
                return Err(self.error(e, "a percentage between 0 and 100"));
            }
        }
        Ok(value)
    }

    fn boolean(&self, name: &str) -> Result<Option<bool>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => match e.text.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                _ => Err(self.error(e, "true or false")),
            },
        }
    }

    /// An enumerated value, compared case-insensitively as MQSim does; returned in upper case.
    fn choice(&self, name: &str, allowed: &[&str]) -> Result<Option<String>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => {
                let value = e.text.trim().to_ascii_uppercase();
                if allowed.contains(&value.as_str()) {
                    Ok(Some(value))
                } else {
                    Err(self.error(e, &format!("one of {}", allowed.join(", "))))
                }
            }
        }
    }

    /// A comma-separated list of ids, each below `count`.
    fn ids(&self, name: &str, count: u64) -> Result<Option<Vec<u64>>, ConfigError> {
        let Some(e) = self.element(name) else { return Ok(None) };
        let mut ids = Vec::new();
        for part in e.text.split(',') {
            let id =
                part.trim().parse::<u64>().map_err(|_| self.error(e, "a comma-separated list of whole numbers"))?;
            if id >= count {
                return Err(
                    self.error(e, &format!("ids from 0 to {} (the device has {count})", count.saturating_sub(1)))
                );
            }
            ids.push(id);
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(Some(ids))
    }

    /// Reports every tag nobody read as unknown, with the closest known tag.
    fn finish(self, known: &[&str], warnings: &mut Vec<String>) {
        for f in self.fields.iter().filter(|f| !f.used.get()) {
            let name = &f.element.name;
            let hint = match closest(name, known) {
                Some(k) => format!("; did you mean {k}?"),
                None => String::new(),
            };
            warnings.push(format!(
                "unknown tag {name} in {} ({} line {}) is ignored{hint}",
                self.section, self.file, f.element.line
            ));
        }
    }
}

/// The known tag closest to a misspelled one, if it is close enough to be the likely intent.
fn closest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.len() / 4).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

// ------------------------------------------------------------------------------------------------
// Values in ssdlab's unit strings.

fn duration_ns(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        _ if ns.is_multiple_of(1_000_000_000) => format!("{}s", ns / 1_000_000_000),
        _ if ns.is_multiple_of(1_000_000) => format!("{}ms", ns / 1_000_000),
        _ if ns.is_multiple_of(1_000) => format!("{}us", ns / 1_000),
        _ => format!("{ns}ns"),
    }
}

fn size_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        0 => "0B".into(),
        _ if bytes.is_multiple_of(KIB * KIB * KIB) => format!("{}GiB", bytes / (KIB * KIB * KIB)),
        _ if bytes.is_multiple_of(KIB * KIB) => format!("{}MiB", bytes / (KIB * KIB)),
        _ if bytes.is_multiple_of(KIB) => format!("{}KiB", bytes / KIB),
        _ => format!("{bytes}B"),
    }
}

/// A number as short as it can be written exactly (`1`, `0.5`, `8.333333333333334`).
fn number(x: f64) -> String {
    format!("{x}")
}

/// A fraction from a percentage, rounded to 12 digits so that 7 % reads 0.07, not 0.07000000000000001.
fn fraction(percent: f64) -> f64 {
    (percent / 100.0 * 1e12).round() / 1e12
}

fn set(config: &mut Map<String, Value>, path: &str, value: impl Into<Value>) {
    let mut node = config;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            node.insert(part.to_string(), value.into());
            return;
        }
        let child = node.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
        node = child.as_object_mut().expect("configuration sections are tables");
    }
}

/// Whether ssdlab's schema has `section.key` (`flows` for the keys of a flow), read from the
/// schema itself: features that another change adds are mapped as soon as they exist, and warned
/// about until then.
fn schema_has(section: &str, key: &str) -> bool {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        // Every section has defaults, so an empty document gives the whole schema.
        let mut schema = serde_json::from_str::<Config>("{}")
            .ok()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or_else(|| json!({}));
        if let (Some(map), Ok(flow)) = (schema.as_object_mut(), serde_json::to_value(FlowConfig::default())) {
            map.insert("flows".into(), flow);
        }
        schema
    });
    schema.get(section).is_some_and(|s| s.get(key).is_some())
}

/// " (with Tag value, Tag value)" for the related tags that are present, "" if none is.
fn with_tags(tags: &[(&str, Option<String>)]) -> String {
    let present: Vec<String> =
        tags.iter().filter_map(|(tag, value)| value.as_ref().map(|v| format!("{tag} {v}"))).collect();
    if present.is_empty() {
        String::new()
    } else {
        format!(" (with {})", present.join(", "))
    }
}

fn shown<T: ToString>(value: Option<T>) -> Option<String> {
    value.map(|v| v.to_string())
}

// ------------------------------------------------------------------------------------------------
// The device file.

struct Device {
    config: Map<String, Value>,
    warnings: Vec<String>,
    seed: u64,
    preconditioning: bool,
    scheduling: Option<String>,
    /// "Data_Cache_Capacity ..." when the device has a data cache (flows that use it get a warning).
    data_cache: Option<String>,
    channels: u64,
    chips: u64,
    dies: u64,
    planes: u64,
}

fn import_device(file: &str, root: &Element) -> Result<Device, ConfigError> {
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
                "dram_data_rate" => json!(format!("{v}MT/s")),
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
                "Caching_Mechanism SIMPLE: ssdlab's data cache works like MQSim's ADVANCED one (per-flow modes, LRU lines of one page)"
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
        warnings.push("Address_Mapping HYBRID: ssdlab maps pages only; the device uses page-level mapping".into());
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
        Some("FLIN") => warnings.push(
            "Transaction_Scheduling_Policy FLIN: ssdlab has no FLIN yet; the chips schedule out of order (controller.scheduling = \"out-of-order\") without FLIN's fairness control"
                .into(),
        ),
        Some(policy) if schema_has("controller", "scheduling") => {
            let mapped = if policy == "OUT_OF_ORDER" { "out-of-order" } else { "priority" };
            set(&mut config, "controller.scheduling", mapped);
        }
        Some("PRIORITY_OUT_OF_ORDER") => warnings.push(
            "Transaction_Scheduling_Policy PRIORITY_OUT_OF_ORDER: ssdlab has no priority scheduling yet; the chips schedule out of order"
                .into(),
        ),
        _ => {}
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

    // Suspension: read now, reported with CMD_Suspension_Support below.
    let suspend_timing: Vec<(&str, Option<String>)> = vec![
        ("Preferred_suspend_erase_time_for_read", shown(d.int("Preferred_suspend_erase_time_for_read")?)),
        ("Prefered_suspend_erase_time_for_read", shown(d.int("Prefered_suspend_erase_time_for_read")?)),
        ("Preferred_suspend_erase_time_for_write", shown(d.int("Preferred_suspend_erase_time_for_write")?)),
        ("Preferred_suspend_write_time_for_read", shown(d.int("Preferred_suspend_write_time_for_read")?)),
    ];

    let channels = d.int("Flash_Channel_Count")?;
    if let Some(n) = channels {
        set(&mut config, "flash.channels", n);
    }
    if let Some(n) = d.int("Flash_Channel_Width")? {
        set(&mut config, "flash.channel_width_bytes", n);
    }
    if let Some(n) = d.num("Channel_Transfer_Rate")? {
        set(&mut config, "flash.channel_rate", format!("{}MT/s", number(n)));
    }
    let chips = d.int("Chip_No_Per_Channel")?;
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
    let mut suspend_tags = suspend_timing;
    suspend_tags.push(("Suspend_Erase_Time", shown(f.int("Suspend_Erase_Time")?)));
    suspend_tags.push(("Suspend_Program_Time", shown(f.int("Suspend_Program_Time")?)));
    if let Some(mode) = suspension.filter(|m| m != "NONE") {
        warnings.push(format!(
            "CMD_Suspension_Support {mode}{}: ssdlab has no program/erase suspension yet; a read waits for the running program or erase to finish",
            with_tags(&suspend_tags)
        ));
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
    let dies = f.int("Die_No_Per_Chip")?;
    if let Some(n) = dies {
        set(&mut config, "flash.dies_per_chip", n);
    }
    let planes = f.int("Plane_No_Per_Die")?;
    if let Some(n) = planes {
        set(&mut config, "flash.planes_per_die", n);
    }
    if let Some(n) = f.int("Block_No_Per_Plane")? {
        set(&mut config, "flash.blocks_per_plane", n);
    }
    if let Some(n) = f.int("Page_No_Per_Block")? {
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

// ------------------------------------------------------------------------------------------------
// The workload file.

/// One flow's mapping plus what the scenario needs to know about it.
struct FlowImport {
    name: String,
    config: Map<String, Value>,
    trace: bool,
    occupancy: Option<f64>,
    priority: Option<String>,
    caching: Option<String>,
    seed: Option<u64>,
    /// The working set as a fraction of the flow's own slice (synthetic flows).
    working_set: Option<f64>,
    /// The channel, chip, die and plane ids the flow may use (all of them when not given).
    resources: [Vec<u64>; 4],
    /// (head, explanation): grouped across flows as "head (flow-0, flow-1): explanation".
    grouped: Vec<(String, String)>,
}

fn import_workload(
    file: &str,
    root: &Element,
    device: &Device,
    options: &ImportOptions,
) -> Result<Vec<Scenario>, ConfigError> {
    match root.name.as_str() {
        "MQSim_IO_Scenarios" => {}
        "Execution_Parameter_Set" => {
            return Err(ConfigError::new(
                format!("{file}:{}", root.line),
                "this is a device file (<Execution_Parameter_Set>); give the device file first and the workload (<MQSim_IO_Scenarios>) second",
            ))
        }
        other => {
            return Err(ConfigError::new(
                format!("{file}:{}", root.line),
                format!("expected an MQSim workload file with root <MQSim_IO_Scenarios>, found <{other}>"),
            ))
        }
    }
    let mut file_warnings = Vec::new();
    let mut elements = Vec::new();
    for element in &root.children {
        if element.name == "IO_Scenario" {
            elements.push(element);
        } else {
            let hint =
                closest(&element.name, &["IO_Scenario"]).map_or(String::new(), |k| format!("; did you mean {k}?"));
            file_warnings.push(format!(
                "unknown tag {} in MQSim_IO_Scenarios ({file} line {}) is ignored{hint}",
                element.name, element.line
            ));
        }
    }
    if elements.is_empty() {
        return Err(ConfigError::new(
            format!("{file}:{}", root.line),
            "the workload defines no <IO_Scenario>: there is nothing to run",
        ));
    }
    let mut scenarios = Vec::new();
    for (i, element) in elements.into_iter().enumerate() {
        let mut scenario = import_scenario(file, i + 1, element, device, options)?;
        let mut warnings = device.warnings.clone();
        warnings.extend(file_warnings.iter().cloned());
        warnings.append(&mut scenario.warnings);
        scenario.warnings = warnings;
        scenarios.push(scenario);
    }
    Ok(scenarios)
}

/// "75 (flow-0, flow-1), 70 (flow-2)": values with the flows that have them, in first-seen order.
fn by_value(items: &[(String, String)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, value) in items {
        match groups.iter_mut().find(|(v, _)| v == value) {
            Some((_, names)) => names.push(name),
            None => groups.push((value, vec![name])),
        }
    }
    groups.iter().map(|(v, names)| format!("{v} ({})", names.join(", "))).collect::<Vec<_>>().join(", ")
}

fn import_scenario(
    file: &str,
    n: usize,
    element: &Element,
    device: &Device,
    options: &ImportOptions,
) -> Result<Scenario, ConfigError> {
    let mut warnings = Vec::new();
    let flow_elements: Vec<&Element> = element
        .children
        .iter()
        .filter(|e| matches!(e.name.as_str(), "IO_Flow_Parameter_Set_Synthetic" | "IO_Flow_Parameter_Set_Trace_Based"))
        .collect();
    for other in element.children.iter().filter(|e| !flow_elements.iter().any(|f| std::ptr::eq(*f, *e))) {
        let hint = closest(&other.name, &["IO_Flow_Parameter_Set_Synthetic", "IO_Flow_Parameter_Set_Trace_Based"])
            .map_or(String::new(), |k| format!("; did you mean {k}?"));
        warnings.push(format!(
            "unknown tag {} in IO_Scenario {n} ({file} line {}) is ignored{hint}",
            other.name, other.line
        ));
    }
    if flow_elements.is_empty() {
        return Err(ConfigError::new(
            format!("{file}:{}", element.line),
            format!("IO_Scenario {n} defines no flow (IO_Flow_Parameter_Set_Synthetic or IO_Flow_Parameter_Set_Trace_Based)"),
        ));
    }
    let mut flows = Vec::new();
    for (i, e) in flow_elements.iter().enumerate() {
        flows.push(import_flow(file, i, e, device, options, &mut warnings)?);
    }

    let mut config = device.config.clone();

    // Preconditioning is device-wide in ssdlab.
    let occupancies: Vec<(String, String)> =
        flows.iter().filter_map(|f| f.occupancy.filter(|o| *o > 0.0).map(|o| (f.name.clone(), number(o)))).collect();
    if !occupancies.is_empty() {
        if device.preconditioning {
            let max = flows.iter().filter_map(|f| f.occupancy).fold(0.0, f64::max);
            set(&mut config, "precondition.occupancy", fraction(max));
            set(&mut config, "precondition.layout", "spread");
            let differ = flows.iter().any(|f| f.occupancy != Some(max));
            let how = if differ {
                format!(
                    "; the flows differ ({}) and ssdlab fills the whole device to the largest, {} %",
                    by_value(&occupancies),
                    number(max)
                )
            } else {
                String::new()
            };
            warnings.push(format!(
                "Initial_Occupancy_Percentage {}: ssdlab preconditions device-wide by mapping logical pages 0..n directly, without simulating writes; precondition.layout = \"spread\" (valid data spread over all blocks, the rest invalid) is the closest to MQSim's preconditioning, which ages the drive from each flow's access statistics{how}",
                number(max)
            ));
        } else {
            warnings.push(format!(
                "Initial_Occupancy_Percentage {} is not applied because Enabled_Preconditioning is false, as in MQSim: the device starts empty (set precondition.occupancy to start it full)",
                by_value(&occupancies)
            ));
        }
    }

    // Priorities. MQSim fetches every submission queue alike whatever its class (ssdlab's
    // round-robin arbitration); only its PRIORITY_OUT_OF_ORDER scheduler acts on the classes.
    let classes: Vec<(String, String)> =
        flows.iter().filter_map(|f| f.priority.clone().map(|p| (f.name.clone(), p))).collect();
    let distinct: std::collections::BTreeSet<&str> = classes.iter().map(|(_, p)| p.as_str()).collect();
    let prioritised = device.scheduling.as_deref() == Some("PRIORITY_OUT_OF_ORDER");
    if schema_has("flows", "priority") && schema_has("controller", "scheduling") {
        if schema_has("host", "arbitration") {
            set(&mut config, "host.arbitration", "round-robin");
        }
        // ssdlab's priority scheduling serves higher classes strictly first; MQSim's serves URGENT
        // first and weighs HIGH, MEDIUM and LOW. They differ when two of those three meet.
        let weighted = distinct.iter().filter(|c| **c != "URGENT").count() > 1;
        if prioritised && weighted {
            warnings.push(format!(
                "Priority_Class {} with Transaction_Scheduling_Policy PRIORITY_OUT_OF_ORDER: mapped to controller.scheduling = \"priority\", which serves higher classes strictly first, where MQSim serves URGENT first and shares the rest among HIGH, MEDIUM and LOW by weight",
                by_value(&classes)
            ));
        }
    } else if distinct.len() > 1 && prioritised {
        warnings.push(format!(
            "Priority_Class {}: ssdlab has no priority scheduling yet; every flow's transactions are scheduled alike",
            by_value(&classes)
        ));
    }

    // The data cache.
    let modes: Vec<(String, String)> = flows
        .iter()
        .filter_map(|f| f.caching.clone().filter(|m| m != "TURNED_OFF").map(|m| (f.name.clone(), m)))
        .collect();
    if let (false, Some(cache)) = (modes.is_empty(), &device.data_cache) {
        warnings.push(format!(
            "Data_Cache_Capacity: ssdlab has no data cache yet; the device runs without one and every request goes to flash ({cache}; Device_Level_Data_Caching_Mode {})",
            by_value(&modes)
        ));
    }

    // Per-flow seeds.
    let seeds: Vec<(String, String)> =
        flows.iter().filter_map(|f| f.seed.map(|s| (f.name.clone(), s.to_string()))).collect();
    if !seeds.is_empty() && !schema_has("flows", "seed") {
        warnings.push(format!(
            "Seed {}: ssdlab derives every flow's random stream from the device Seed ({}) and the flow's position; the request sequences differ from MQSim's",
            by_value(&seeds),
            device.seed
        ));
    }

    place_flows(&mut flows, device, &mut config, &mut warnings);

    // Per-flow warnings with the same wording are reported once, naming all flows.
    let mut grouped: Vec<(String, String, Vec<String>)> = Vec::new();
    for f in &flows {
        for (head, tail) in &f.grouped {
            match grouped.iter_mut().find(|(h, t, _)| h == head && t == tail) {
                Some((_, _, names)) => names.push(f.name.clone()),
                None => grouped.push((head.clone(), tail.clone(), vec![f.name.clone()])),
            }
        }
    }
    for (head, tail, names) in grouped {
        warnings.push(format!("{head} ({}): {tail}", names.join(", ")));
    }

    config.insert("flows".into(), Value::Array(flows.into_iter().map(|f| Value::Object(f.config)).collect()));
    let config = Value::Object(config);
    // A value MQSim accepts may still be outside ssdlab's limits (too little over-provisioning
    // for its GC, say). That is not an import error: an override can fix it before the run, and
    // the run refuses the config if nothing does.
    if let Err(e) = Config::from_json_str(&config.to_string()) {
        warnings.push(format!(
            "ssdlab refuses scenario {n} as imported: {e}; change the value with --set (ssdlab run) or in the TOML (ssdlab import-mqsim)"
        ));
    }
    Ok(Scenario { config, warnings })
}

/// Each flow's slice of the logical space, as MQSim's `Logical_Address_Partitioning_Unit` cuts
/// it: a flow gets, for every plane it may use, that plane's logical pages divided by the number
/// of flows sharing the plane (1/n of the space each when all flows use all the flash). A
/// synthetic flow's working set is the first part of its slice.
fn place_flows(flows: &mut [FlowImport], device: &Device, config: &mut Map<String, Value>, warnings: &mut Vec<String>) {
    let n = flows.len();
    let plane =
        |c: u64, w: u64, d: u64, p: u64| (((c * device.chips + w) * device.dies + d) * device.planes + p) as usize;
    let mut sharing = vec![0u32; (device.channels * device.chips * device.dies * device.planes) as usize];
    let each_plane = |f: &FlowImport, visit: &mut dyn FnMut(usize)| {
        let [channels, chips, dies, planes] = &f.resources;
        for &c in channels {
            for &w in chips {
                for &d in dies {
                    for &p in planes {
                        visit(plane(c, w, d, p));
                    }
                }
            }
        }
    };
    for f in flows.iter() {
        each_plane(f, &mut |i| sharing[i] += 1);
    }
    let shares: Vec<f64> = flows
        .iter()
        .map(|f| {
            let mut share = 0.0;
            each_plane(f, &mut |i| share += 1.0 / f64::from(sharing[i]));
            share / sharing.len() as f64
        })
        .collect();
    let equal = shares.iter().all(|s| (s - 1.0 / n as f64).abs() < 1e-12);
    let tidy = |x: f64| (x * 1e12).round() / 1e12;

    if n > 1 && flows.iter().any(|f| f.trace) {
        // A trace has no working set to place: only separate address domains keep it in its slice.
        if schema_has("ftl", "address_domains") {
            set(config, "ftl.address_domains", "per-flow");
            for f in flows.iter_mut() {
                if let Some(ws) = f.working_set.filter(|ws| *ws < 1.0) {
                    f.config.insert("working_set".into(), json!(ws));
                }
            }
            if !equal {
                warnings.push(
                    "Channel_IDs/Chip_IDs/Die_IDs/Plane_IDs differ among the flows: MQSim sizes each flow's slice of the logical space by its share of the planes; ssdlab's per-flow address domains (ftl.address_domains = \"per-flow\") are equal slices".into(),
                );
            }
        } else {
            warnings.push(
                "IO_Flow_Parameter_Set_Trace_Based beside other flows: MQSim gives each flow its own slice of the logical space; ssdlab replays a trace's addresses over the whole device (wrapped modulo its capacity), so they may overlap the other flows' data".into(),
            );
            for f in flows.iter_mut() {
                if let Some(ws) = f.working_set.filter(|ws| *ws < 1.0) {
                    f.config.insert("working_set".into(), json!(ws));
                }
            }
        }
        return;
    }
    let mut start = 0.0;
    for (f, share) in flows.iter_mut().zip(shares) {
        if let Some(ws) = f.working_set {
            if n > 1 {
                f.config.insert("working_set".into(), json!(tidy(ws * share)));
                f.config.insert("working_set_start".into(), json!(tidy(start)));
            } else if ws < 1.0 {
                f.config.insert("working_set".into(), json!(ws));
            }
        }
        start += share;
    }
}

fn import_flow(
    file: &str,
    i: usize,
    element: &Element,
    device: &Device,
    options: &ImportOptions,
    warnings: &mut Vec<String>,
) -> Result<FlowImport, ConfigError> {
    let name = format!("flow-{i}");
    let trace = element.name == "IO_Flow_Parameter_Set_Trace_Based";
    let p = Params::new(file, format!("{name} ({})", element.name), element, warnings);
    let mut flow = Map::new();
    flow.insert("name".into(), json!(name));
    let mut grouped = Vec::new();
    let flow_error = |reason: String| ConfigError::new(format!("{file}:{}: {name}", element.line), reason);

    // Common tags.
    p.text("Type"); // MQSim ignores it too: the element name gives the kind
    let priority = p.choice("Priority_Class", &["URGENT", "HIGH", "MEDIUM", "LOW"])?;
    if let (Some(class), true) = (&priority, schema_has("flows", "priority")) {
        flow.insert("priority".into(), json!(class.to_ascii_lowercase()));
    }
    let mut caching =
        p.choice("Device_Level_Data_Caching_Mode", &["TURNED_OFF", "READ_CACHE", "WRITE_CACHE", "WRITE_READ_CACHE"])?;
    if schema_has("flows", "cache_mode") {
        if let Some(mode) = caching.take() {
            let mode = match mode.as_str() {
                "TURNED_OFF" => "off",
                "READ_CACHE" => "read",
                "WRITE_CACHE" => "write",
                _ => "write-read",
            };
            flow.insert("cache_mode".into(), json!(mode));
        }
    }
    let mut resources: [Vec<u64>; 4] = Default::default();
    for (slot, (tag, key, total, what)) in [
        ("Channel_IDs", "channels", device.channels, "channels"),
        ("Chip_IDs", "chips", device.chips, "chips per channel"),
        ("Die_IDs", "dies", device.dies, "dies per chip"),
        ("Plane_IDs", "planes", device.planes, "planes per die"),
    ]
    .into_iter()
    .enumerate()
    {
        let ids = p.ids(tag, total)?.unwrap_or_else(|| (0..total).collect());
        if ids.len() as u64 != total {
            if schema_has("flows", key) {
                flow.insert(key.into(), json!(ids));
            } else {
                let list: Vec<String> = ids.iter().map(u64::to_string).collect();
                grouped.push((
                    format!("{tag} {}", list.join(",")),
                    format!("ssdlab does not partition the flash among flows yet; the flow uses all {total} {what}"),
                ));
            }
        }
        resources[slot] = ids;
    }
    let occupancy = p.percentage("Initial_Occupancy_Percentage")?;
    let mut seed = None;
    let mut working_set = None;

    if trace {
        flow.insert("kind".into(), json!("trace"));
        flow.insert("format".into(), json!("mqsim"));
        let path = p.text("File_Path").filter(|s| !s.is_empty()).ok_or_else(|| {
            flow_error("a trace-based flow needs <File_Path>, the trace file (relative to the workload file)".into())
        })?;
        // MQSim's samples were written on Windows (traces\tpcc-small.trace).
        let path = path.replace('\\', "/");
        flow.insert("path".into(), json!(path));
        let relay = p.int("Relay_Count")?;
        let percentage = p.num("Percentage_To_Be_Executed")?;
        match relay {
            Some(0) => {
                return Err(ConfigError::new(
                    format!("{file}:{}: Relay_Count", p.element("Relay_Count").map_or(element.line, |e| e.line)),
                    "expected at least 1, got \"0\" (MQSim would replay nothing)",
                ))
            }
            Some(r) if r > 1 => {
                let ignored = if percentage.is_some_and(|x| x < 100.0) {
                    " (MQSim ignores Percentage_To_Be_Executed when it replays more than once)"
                } else {
                    ""
                };
                grouped.push((
                    format!("Relay_Count {r}"),
                    format!("ssdlab replays a trace once; the flow runs the trace one time, not {r}{ignored}"),
                ))
            }
            _ => match percentage {
                Some(x) if x <= 0.0 => {
                    return Err(ConfigError::new(
                        format!(
                            "{file}:{}: Percentage_To_Be_Executed",
                            p.element("Percentage_To_Be_Executed").map_or(element.line, |e| e.line)
                        ),
                        format!("expected a percentage above 0, got \"{}\" (nothing would run)", number(x)),
                    ))
                }
                Some(x) if x > 100.0 => grouped.push((
                    format!("Percentage_To_Be_Executed {}", number(x)),
                    "taken as 100, as MQSim does: the whole trace runs".into(),
                )),
                Some(x) if x < 100.0 => {
                    let counted = options.workload_dir.as_ref().map(|dir| count_trace_requests(&dir.join(&path)));
                    match counted {
                        Some(Ok(total)) => {
                            // MQSim: (int)(percentage / 100 * requests in the file).
                            let requests = ((x / 100.0) * total as f64).floor() as u64;
                            flow.insert("requests".into(), json!(requests.max(1)));
                        }
                        Some(Err(e)) => grouped.push((
                            format!("Percentage_To_Be_Executed {}", number(x)),
                            format!("cannot count the trace's requests ({e}); the whole trace runs"),
                        )),
                        None => grouped.push((
                            format!("Percentage_To_Be_Executed {}", number(x)),
                            "the trace's folder is unknown, so its requests cannot be counted; the whole trace runs"
                                .into(),
                        )),
                    }
                }
                _ => {}
            },
        }
        match p.choice("Time_Unit", &["PICOSECOND", "NANOSECOND", "MICROSECOND"])?.as_deref() {
            Some("PICOSECOND") => {
                flow.insert("time_scale".into(), json!(0.001));
                grouped.push((
                    "Time_Unit PICOSECOND".into(),
                    "ssdlab reads the trace's times as picoseconds (time_scale = 0.001); MQSim itself reads every trace time as nanoseconds whatever Time_Unit says".into(),
                ));
            }
            Some("MICROSECOND") => {
                flow.insert("time_scale".into(), json!(1000.0));
                grouped.push((
                    "Time_Unit MICROSECOND".into(),
                    "ssdlab reads the trace's times as microseconds (time_scale = 1000); MQSim itself reads every trace time as nanoseconds whatever Time_Unit says".into(),
                ));
            }
            _ => {}
        }
        let known: Vec<&str> = FLOW_COMMON_TAGS.iter().chain(TRACE_TAGS).copied().collect();
        p.finish(&known, warnings);
    } else {
        // MQSim: a working set outside 1..100 % is taken as 100 %. Where the flow's slice of the
        // logical space lies is decided with the other flows (`place_flows`).
        let mut ws = 1.0;
        if let Some(pct) = p.num("Working_Set_Percentage")? {
            if (1.0..=100.0).contains(&pct) {
                ws = fraction(pct);
            } else {
                grouped.push((
                    format!("Working_Set_Percentage {}", number(pct)),
                    "outside 1 to 100; taken as 100, as MQSim does".into(),
                ));
            }
        }
        working_set = Some(ws);
        let generator = p.choice("Synthetic_Generator_Type", &["QUEUE_DEPTH", "BANDWIDTH", "ARRIVAL_RATE"])?;
        if let Some(r) = p.percentage("Read_Percentage")? {
            flow.insert("read_fraction".into(), json!(fraction(r)));
        }
        let address = p.choice(
            "Address_Distribution",
            &[
                "STREAMING",
                "RANDOM_UNIFORM",
                "UNIFORM_RANDOM",
                "RANDOM_HOTCOLD",
                "HOTCOLD_RANDOM",
                "MIXED_STREAMING_RANDOM",
            ],
        )?;
        let hot = p.percentage("Percentage_of_Hot_Region")?;
        match address.as_deref() {
            Some("STREAMING") => {
                flow.insert("address".into(), json!("sequential"));
            }
            Some("RANDOM_UNIFORM" | "UNIFORM_RANDOM") => {
                flow.insert("address".into(), json!("uniform"));
            }
            Some("RANDOM_HOTCOLD" | "HOTCOLD_RANDOM") => {
                let hot = hot.unwrap_or(0.0);
                if hot <= 0.0 || hot >= 100.0 {
                    let line = p.element("Percentage_of_Hot_Region").map_or(element.line, |e| e.line);
                    return Err(ConfigError::new(
                        format!("{file}:{line}: Percentage_of_Hot_Region"),
                        format!("expected a percentage between 1 and 99 with Address_Distribution RANDOM_HOTCOLD, got \"{}\"", number(hot)),
                    ));
                }
                // MQSim sends a request to the cold part with probability hot/100, so the hot
                // region (the first hot % of the working set) gets (100 - hot) % of the requests.
                flow.insert("address".into(), json!("hotcold"));
                flow.insert("hot_fraction".into(), json!(fraction(hot)));
                flow.insert("hot_traffic".into(), json!(fraction(100.0 - hot)));
            }
            Some(_) => {
                let line = p.element("Address_Distribution").map_or(element.line, |e| e.line);
                return Err(ConfigError::new(
                    format!("{file}:{line}: Address_Distribution"),
                    "MIXED_STREAMING_RANDOM is listed in MQSim's documentation but MQSim does not implement it (nor does ssdlab); use STREAMING, RANDOM_UNIFORM or RANDOM_HOTCOLD",
                ));
            }
            None => {}
        }
        let aligned = p.boolean("Generated_Aligned_Addresses")?;
        let unit = p.int("Address_Alignment_Unit")?;
        if aligned == Some(true) {
            match unit {
                Some(0) => {
                    let line = p.element("Address_Alignment_Unit").map_or(element.line, |e| e.line);
                    return Err(ConfigError::new(
                        format!("{file}:{line}: Address_Alignment_Unit"),
                        "expected at least 1 sector with Generated_Aligned_Addresses true, got \"0\"",
                    ));
                }
                Some(u) => {
                    flow.insert("alignment".into(), json!(format!("{u}sectors")));
                }
                None => {}
            }
        }
        let distribution = p.choice("Request_Size_Distribution", &["FIXED", "NORMAL"])?;
        let average = p.int("Average_Request_Size")?;
        let variance = p.int("Variance_Request_Size")?;
        if let Some(avg) = average {
            if avg == 0 {
                let line = p.element("Average_Request_Size").map_or(element.line, |e| e.line);
                return Err(ConfigError::new(
                    format!("{file}:{line}: Average_Request_Size"),
                    "expected at least 1 sector, got \"0\"",
                ));
            }
            // MQSim hands Variance_Request_Size to its normal generator as the standard deviation.
            let size = match (distribution.as_deref(), variance) {
                (Some("NORMAL"), Some(sd)) if sd > 0 => {
                    json!({ "mean": format!("{avg}sectors"), "stdev": format!("{sd}sectors") })
                }
                _ => json!(format!("{avg}sectors")),
            };
            flow.insert("request_size".into(), size);
        }
        seed = p.int("Seed")?;
        if seed.is_some() && schema_has("flows", "seed") {
            flow.insert("seed".into(), json!(seed));
        }
        let depth = p.int("Average_No_of_Reqs_in_Queue")?;
        let intensity = p.num("Intensity")?;
        let bandwidth = p.num("Bandwidth")?;
        let sectors = average.unwrap_or(8) as f64;
        match generator.as_deref() {
            Some("BANDWIDTH" | "ARRIVAL_RATE") => {
                // MQSim's mean inter-arrival time is 1 s / (Bandwidth / 512 / Average_Request_Size)
                // with Bandwidth in bytes per second; MQSim versions before <Bandwidth> used
                // 1 s / (Intensity / Average_Request_Size), Intensity in sectors per second.
                let rate = match (bandwidth, intensity) {
                    (Some(bw), _) => bw / SECTOR_BYTES as f64 / sectors,
                    (None, Some(sps)) => {
                        let rate = sps / sectors;
                        grouped.push((
                            format!("Intensity {}", number(sps)),
                            format!(
                                "read as sectors per second, as the MQSim versions that used this tag did: {} requests/s (current MQSim reads <Bandwidth> in bytes per second instead)",
                                number(rate)
                            ),
                        ));
                        rate
                    }
                    (None, None) => {
                        return Err(flow_error(
                            "Synthetic_Generator_Type BANDWIDTH needs <Bandwidth> (bytes per second)".into(),
                        ))
                    }
                };
                if rate <= 0.0 {
                    return Err(flow_error(format!(
                        "Synthetic_Generator_Type {} at a rate of 0 requests/s would issue nothing; give a positive <Bandwidth>",
                        generator.as_deref().unwrap_or_default()
                    )));
                }
                flow.insert("rate".into(), json!(format!("{}/s", number(rate))));
            }
            _ => match depth {
                Some(0) | None => {
                    let line = p.element("Average_No_of_Reqs_in_Queue").map_or(element.line, |e| e.line);
                    return Err(ConfigError::new(
                        format!("{file}:{line}: Average_No_of_Reqs_in_Queue"),
                        format!(
                            "a QUEUE_DEPTH flow needs at least 1 request in its queue, got \"{}\"",
                            depth.map_or("nothing".into(), |d| d.to_string())
                        ),
                    ));
                }
                Some(d) => {
                    flow.insert("queue_depth".into(), json!(d));
                }
            },
        }
        // MQSim: a positive Stop_Time ends the flow; otherwise Total_Requests_To_Generate does.
        let stop = p.int("Stop_Time")?;
        let total = p.int("Total_Requests_To_Generate")?;
        match (stop, total) {
            (Some(ns), _) if ns > 0 => {
                flow.insert("duration".into(), json!(duration_ns(ns)));
            }
            (_, Some(n)) if n > 0 => {
                flow.insert("requests".into(), json!(n));
            }
            _ => {
                return Err(flow_error(
                    "Stop_Time and Total_Requests_To_Generate are both 0 or missing: MQSim would generate no request; give one of them"
                        .into(),
                ))
            }
        }
        let known: Vec<&str> = FLOW_COMMON_TAGS.iter().chain(SYNTHETIC_TAGS).copied().collect();
        p.finish(&known, warnings);
    }

    Ok(FlowImport { name, config: flow, trace, occupancy, priority, caching, seed, working_set, resources, grouped })
}

/// Requests in an MQSim trace: its non-blank lines that are not `#` comments.
fn count_trace_requests(path: &Path) -> std::io::Result<u64> {
    use std::io::BufRead;
    let reader = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut n = 0;
    for line in reader.lines() {
        let line = line?;
        let line = line.trim();
        if !line.is_empty() && !line.starts_with('#') {
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(flash: &str, device: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?><Execution_Parameter_Set><Host_Parameter_Set><PCIe_Lane_Count>4</PCIe_Lane_Count></Host_Parameter_Set>\
             <Device_Parameter_Set>{device}<Flash_Channel_Count>2</Flash_Channel_Count><Chip_No_Per_Channel>2</Chip_No_Per_Channel>\
             <Flash_Parameter_Set><Die_No_Per_Chip>1</Die_No_Per_Chip><Plane_No_Per_Die>2</Plane_No_Per_Die>\
             <Block_No_Per_Plane>64</Block_No_Per_Plane><Page_No_Per_Block>64</Page_No_Per_Block>{flash}</Flash_Parameter_Set>\
             </Device_Parameter_Set></Execution_Parameter_Set>"
        )
    }

    fn workload(flows: &[&str]) -> String {
        let flows: Vec<String> = flows
            .iter()
            .map(|f| format!("<IO_Flow_Parameter_Set_Synthetic>{f}</IO_Flow_Parameter_Set_Synthetic>"))
            .collect();
        format!("<MQSim_IO_Scenarios><IO_Scenario>{}</IO_Scenario></MQSim_IO_Scenarios>", flows.join(""))
    }

    const FLOW: &str = "<Average_No_of_Reqs_in_Queue>4</Average_No_of_Reqs_in_Queue><Total_Requests_To_Generate>100</Total_Requests_To_Generate>";
    const OP: &str = "<Overprovisioning_Ratio>0.125</Overprovisioning_Ratio>";

    #[test]
    fn units_are_written_exactly() {
        assert_eq!(duration_ns(75_000), "75us");
        assert_eq!(duration_ns(3_800_000), "3800us");
        assert_eq!(duration_ns(10_000_000_000), "10s");
        assert_eq!(duration_ns(1_500), "1500ns");
        assert_eq!(size_bytes(8192), "8KiB");
        assert_eq!(size_bytes(2_097_152), "2MiB");
        assert_eq!(size_bytes(4000), "4000B");
        assert_eq!(fraction(7.0), 0.07);
        assert_eq!(fraction(75.0), 0.75);
    }

    #[test]
    fn suggestions_find_the_intended_tag() {
        assert_eq!(closest("Page_Capacityy", FLASH_TAGS), Some("Page_Capacity"));
        assert_eq!(closest("page_capacity", FLASH_TAGS), Some("Page_Capacity"));
        assert_eq!(closest("Something_Else_Entirely", FLASH_TAGS), None);
    }

    #[test]
    fn hot_cold_sends_the_complement_of_the_hot_share_to_the_hot_region() {
        let flow = format!(
            "{FLOW}<Address_Distribution>RANDOM_HOTCOLD</Address_Distribution><Percentage_of_Hot_Region>20</Percentage_of_Hot_Region>"
        );
        let imported = import(&device("", OP), &workload(&[&flow])).unwrap();
        let f = &imported.scenarios[0].config["flows"][0];
        assert_eq!(f["address"], "hotcold");
        assert_eq!(f["hot_fraction"], 0.2);
        assert_eq!(f["hot_traffic"], 0.8);
    }

    #[test]
    fn bandwidth_is_bytes_per_second_and_intensity_sectors_per_second() {
        let bw = "<Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type><Average_Request_Size>8</Average_Request_Size>\
                  <Bandwidth>4194304</Bandwidth><Total_Requests_To_Generate>10</Total_Requests_To_Generate>";
        let imported = import(&device("", OP), &workload(&[bw])).unwrap();
        assert_eq!(imported.scenarios[0].config["flows"][0]["rate"], "1024/s");
        let intensity = "<Synthetic_Generator_Type>ARRIVAL_RATE</Synthetic_Generator_Type><Average_Request_Size>8</Average_Request_Size>\
                  <Intensity>32768</Intensity><Total_Requests_To_Generate>10</Total_Requests_To_Generate>";
        let imported = import(&device("", OP), &workload(&[intensity])).unwrap();
        assert_eq!(imported.scenarios[0].config["flows"][0]["rate"], "4096/s");
        assert!(imported.scenarios[0].warnings.iter().any(|w| w.starts_with("Intensity 32768")));
    }

    #[test]
    fn several_flows_get_their_own_slice_of_the_logical_space() {
        let flow = format!("{FLOW}<Working_Set_Percentage>50</Working_Set_Percentage>");
        let imported = import(&device("", OP), &workload(&[&flow, &flow])).unwrap();
        let flows = &imported.scenarios[0].config["flows"];
        assert_eq!(flows[0]["working_set"], 0.25);
        assert_eq!(flows[0]["working_set_start"], 0.0);
        assert_eq!(flows[1]["working_set_start"], 0.5);
    }

    #[test]
    fn slices_follow_the_flows_share_of_the_planes_as_in_mqsim() {
        // Channel 0's planes are shared (half each), channel 1's belong to flow-1 alone.
        let narrow = format!("{FLOW}<Channel_IDs>0</Channel_IDs>");
        let wide = format!("{FLOW}<Channel_IDs>0,1</Channel_IDs><Working_Set_Percentage>50</Working_Set_Percentage>");
        let imported = import(&device("", OP), &workload(&[&narrow, &wide])).unwrap();
        let flows = &imported.scenarios[0].config["flows"];
        assert_eq!((flows[0]["working_set_start"].clone(), flows[0]["working_set"].clone()), (0.0.into(), 0.25.into()));
        assert_eq!(
            (flows[1]["working_set_start"].clone(), flows[1]["working_set"].clone()),
            (0.25.into(), 0.375.into())
        );
        // The restriction itself: mapped where ssdlab partitions resources, warned about otherwise.
        if schema_has("flows", "channels") {
            assert_eq!(flows[0]["channels"], json!([0]));
            assert!(flows[1].get("channels").is_none(), "all channels is the default");
        } else {
            assert!(imported.scenarios[0].warnings.iter().any(|w| w.starts_with("Channel_IDs 0 (flow-0)")));
        }
    }

    #[test]
    fn a_bad_enum_value_is_an_error_naming_the_tag() {
        let e = import(
            &device("", &format!("{OP}<GC_Block_Selection_Policy>GREEDIEST</GC_Block_Selection_Policy>")),
            &workload(&[FLOW]),
        )
        .unwrap_err();
        assert!(e.path.ends_with("GC_Block_Selection_Policy"), "{e}");
        assert!(e.reason.contains("GREEDIEST") && e.reason.contains("RGA"), "{e}");
    }

    #[test]
    fn unclosed_and_swapped_files_are_errors() {
        let e = import("<Execution_Parameter_Set><Host_Parameter_Set>", &workload(&[FLOW])).unwrap_err();
        assert!(e.to_string().contains("malformed XML"), "{e}");
        let e = import(&workload(&[FLOW]), &device("", OP)).unwrap_err();
        assert!(e.reason.contains("workload file"), "{e}");
    }

    #[test]
    fn default_values_are_silent() {
        let quiet = format!(
            "{OP}<Preemptible_GC_Enabled>false</Preemptible_GC_Enabled><Use_Copyback_for_GC>false</Use_Copyback_for_GC>\
             <Transaction_Scheduling_Policy>OUT_OF_ORDER</Transaction_Scheduling_Policy><Address_Mapping>PAGE_LEVEL</Address_Mapping>"
        );
        let flow = format!(
            "{FLOW}<Channel_IDs>0,1</Channel_IDs><Priority_Class>HIGH</Priority_Class><Device_Level_Data_Caching_Mode>TURNED_OFF</Device_Level_Data_Caching_Mode>"
        );
        let imported =
            import(&device("<CMD_Suspension_Support>NONE</CMD_Suspension_Support>", &quiet), &workload(&[&flow]))
                .unwrap();
        assert_eq!(imported.scenarios[0].warnings, Vec::<String>::new());
    }
}
