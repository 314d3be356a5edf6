//! One flow of a scenario: `IO_Flow_Parameter_Set_Synthetic` or
//! `IO_Flow_Parameter_Set_Trace_Based` mapped to an ssdlab flow, with what the scenario decides
//! across flows (preconditioning, priorities, cache, seeds, slices) left for it to decide.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::device::Device;
use super::schema::{duration_ns, fraction, number, schema_has};
use super::tags::{FLOW_COMMON_TAGS, SYNTHETIC_TAGS, TRACE_TAGS};
use super::xml::{Element, Params};
use super::ImportOptions;
use crate::config::ConfigError;

/// MQSim's sector, in bytes: request sizes and addresses are counted in sectors.
const SECTOR_BYTES: u64 = 512;

/// One flow's mapping plus what the scenario needs to know about it.
pub(super) struct FlowImport {
    pub(super) name: String,
    pub(super) config: Map<String, Value>,
    pub(super) trace: bool,
    pub(super) occupancy: Option<f64>,
    pub(super) priority: Option<String>,
    pub(super) caching: Option<String>,
    pub(super) seed: Option<u64>,
    /// The working set as a fraction of the flow's own slice (synthetic flows).
    pub(super) working_set: Option<f64>,
    /// The channel, chip, die and plane ids the flow may use; None: all of them (never listed
    /// one by one, as a device may have billions).
    pub(super) resources: [Option<Vec<u64>>; 4],
    /// (head, explanation): grouped across flows as "head (flow-0, flow-1): explanation".
    pub(super) grouped: Vec<(String, String)>,
}

pub(super) fn import_flow(
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
    let mut resources: [Option<Vec<u64>>; 4] = Default::default();
    for (slot, (tag, key, total, what)) in [
        ("Channel_IDs", "channels", device.channels, "channels"),
        ("Chip_IDs", "chips", device.chips, "chips per channel"),
        ("Die_IDs", "dies", device.dies, "dies per chip"),
        ("Plane_IDs", "planes", device.planes, "planes per die"),
    ]
    .into_iter()
    .enumerate()
    {
        // Every id listed is the same as none listed.
        let Some(ids) = p.ids(tag, total)?.filter(|ids| ids.len() as u64 != total) else { continue };
        if schema_has("flows", key) {
            flow.insert(key.into(), json!(ids));
        } else {
            let list: Vec<String> = ids.iter().map(u64::to_string).collect();
            grouped.push((
                format!("{tag} {}", list.join(",")),
                format!("ssdlab does not partition the flash among flows yet; the flow uses all {total} {what}"),
            ));
        }
        resources[slot] = Some(ids);
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
        if aligned != Some(true) || unit.is_none() {
            // MQSim places unaligned requests at any sector; ssdlab's default is the request size.
            flow.insert("alignment".into(), json!("1sectors"));
        }
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
