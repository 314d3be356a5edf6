//! The workload file (`workload.xml`): each `<IO_Scenario>` becomes one configuration, the
//! device's plus its flows, with what ssdlab decides for all flows together (preconditioning,
//! priorities, the data cache, seeds, and each flow's slice of the logical space).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::device::Device;
use super::flow::{import_flow, FlowImport};
use super::schema::{fraction, number, schema_has, set};
use super::tags::{by_value, closest};
use super::xml::Element;
use super::{ImportOptions, Scenario};
use crate::config::{Config, ConfigError};

pub(super) fn import_workload(
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

    // MQSim ages the drive from each flow's access statistics when preconditioning is enabled:
    // ssdlab's steady mode does the same (device-wide occupancy, each flow's working set aged by
    // its own address distribution). Disabled, MQSim starts from an empty drive.
    let occupancies: Vec<(String, String)> =
        flows.iter().filter_map(|f| f.occupancy.filter(|o| *o > 0.0).map(|o| (f.name.clone(), number(o)))).collect();
    if device.preconditioning {
        set(&mut config, "precondition.mode", "steady");
        if !occupancies.is_empty() {
            let max = flows.iter().filter_map(|f| f.occupancy).fold(0.0, f64::max);
            set(&mut config, "precondition.occupancy", fraction(max));
            if flows.iter().any(|f| f.occupancy != Some(max)) {
                warnings.push(format!(
                    "Initial_Occupancy_Percentage differs between flows ({}): ssdlab's occupancy is device-wide, so the device holds the largest, {} % (precondition.occupancy), and each flow's working set is aged by its own writes (precondition.mode = \"steady\")",
                    by_value(&occupancies),
                    number(max)
                ));
            }
        }
    } else {
        set(&mut config, "precondition.mode", "none");
        if !occupancies.is_empty() {
            warnings.push(format!(
                "Initial_Occupancy_Percentage {} is not applied because Enabled_Preconditioning is false, as in MQSim: the device starts empty (precondition.mode = \"none\"; set it to \"steady\" to start in steady state)",
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

    place_flows(file, &mut flows, device, &mut config, &mut warnings)?;

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
fn place_flows(
    file: &str,
    flows: &mut [FlowImport],
    device: &Device,
    config: &mut Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let n = flows.len();
    let shares = plane_shares(file, flows, device)?;
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
        return Ok(());
    }
    // MQSim fills Initial_Occupancy_Percentage of each flow's slice. Flows confined to part of
    // the flash leave the rest of the logical space to nobody: the device-wide occupancy counts
    // only the slices, so the data fits where the flows' slices put it.
    let covered: f64 = shares.iter().sum();
    if covered < 1.0 - 1e-9 {
        if let Some(o) = config.get("precondition").and_then(|p| p.get("occupancy")).and_then(Value::as_f64) {
            set(config, "precondition.occupancy", json!(tidy(o * covered)));
        }
    }
    let mut start = 0.0;
    for (f, share) in flows.iter_mut().zip(shares) {
        if let Some(ws) = f.working_set {
            // A flow on part of the flash gets that part's logical pages even alone.
            if n > 1 || share < 1.0 {
                f.config.insert("working_set".into(), json!(tidy(ws * share)));
                f.config.insert("working_set_start".into(), json!(tidy(start)));
            } else if ws < 1.0 {
                f.config.insert("working_set".into(), json!(ws));
            }
        }
        start += share;
    }
    Ok(())
}

/// Most combinations of id groups [`plane_shares`] weighs (far more than any workload file that
/// a person writes needs).
const MAX_PLANE_GROUPS: usize = 10_000_000;

/// Each flow's share of the device's planes: the sum, over the planes it may use, of 1 / (flows
/// sharing that plane), divided by the number of planes. Planes are not visited one by one (a
/// device may have billions of them): in each dimension the ids fall into groups that the same
/// flows use (the ids some flow lists, and one group for all the others), and one group per
/// dimension is a block of planes that the same flows share.
fn plane_shares(file: &str, flows: &[FlowImport], device: &Device) -> Result<Vec<f64>, ConfigError> {
    let counts = [device.channels, device.chips, device.dies, device.planes];
    let dims: Vec<Vec<(Vec<bool>, u64)>> = (0..4).map(|dim| id_groups(flows, dim, counts[dim])).collect();
    let combinations = dims.iter().try_fold(1usize, |acc, groups| acc.checked_mul(groups.len()));
    if combinations.is_none_or(|c| c > MAX_PLANE_GROUPS) {
        return Err(ConfigError::new(
            file,
            format!(
                "the flows' Channel_IDs, Chip_IDs, Die_IDs and Plane_IDs cut the device into more than {MAX_PLANE_GROUPS} groups of planes; list fewer distinct ids"
            ),
        ));
    }
    let total: f64 = counts.iter().map(|&c| c as f64).product();
    let mut shares = vec![0.0; flows.len()];
    for (channels, c) in &dims[0] {
        for (chips, w) in &dims[1] {
            for (dies, d) in &dims[2] {
                for (planes, p) in &dims[3] {
                    let users: Vec<usize> =
                        (0..flows.len()).filter(|&f| channels[f] && chips[f] && dies[f] && planes[f]).collect();
                    let count = (*c as f64) * (*w as f64) * (*d as f64) * (*p as f64);
                    for &f in &users {
                        shares[f] += count / users.len() as f64;
                    }
                }
            }
        }
    }
    Ok(shares.into_iter().map(|s| s / total).collect())
}

/// The ids `0..count` of one dimension (0 channels, 1 chips, 2 dies, 3 planes) grouped by which
/// flows use them: (flow i uses the group, ids in the group).
fn id_groups(flows: &[FlowImport], dim: usize, count: u64) -> Vec<(Vec<bool>, u64)> {
    let mut listed: Vec<u64> = flows.iter().filter_map(|f| f.resources[dim].as_ref()).flatten().copied().collect();
    listed.sort_unstable();
    listed.dedup();
    let mut groups: BTreeMap<Vec<bool>, u64> = BTreeMap::new();
    for id in &listed {
        let users = flows.iter().map(|f| f.resources[dim].as_ref().is_none_or(|ids| ids.binary_search(id).is_ok()));
        *groups.entry(users.collect()).or_default() += 1;
    }
    // Ids no flow lists are used by the flows that list none (ids() keeps every id below count).
    let rest = count.saturating_sub(listed.len() as u64);
    if rest > 0 {
        *groups.entry(flows.iter().map(|f| f.resources[dim].is_none()).collect()).or_default() += rest;
    }
    groups.into_iter().collect()
}
