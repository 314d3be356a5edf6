//! MQSim import against MQSim's own sample files (`../shared/mqsim`, next to the repository) and
//! modified copies of them. Tests that need the samples pass trivially (with a note) when they
//! are absent.

use std::path::{Path, PathBuf};

use serde_json::Value;
use ssdlab_core::config::mqsim::{import, import_files, import_with, ImportOptions, Imported};
use ssdlab_core::{Config, Simulation};

struct Samples {
    dir: PathBuf,
    device: String,
    workload: String,
}

fn samples() -> Option<Samples> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/mqsim");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    match (read("ssdconfig.xml"), read("workload.xml")) {
        (Some(device), Some(workload)) => Some(Samples { dir, device, workload }),
        _ => {
            eprintln!("skipped: MQSim's sample files are not in {}", dir.display());
            None
        }
    }
}

fn options(dir: &Path) -> ImportOptions {
    ImportOptions { workload_dir: Some(dir.to_path_buf()), ..ImportOptions::default() }
}

/// Replaces the `nth` (0-based) occurrence of `from` in `text`.
fn replace_nth(text: &str, from: &str, to: &str, nth: usize) -> String {
    let (at, _) =
        text.match_indices(from).nth(nth).unwrap_or_else(|| panic!("{from} occurs fewer than {} times", nth + 1));
    format!("{}{to}{}", &text[..at], &text[at + from.len()..])
}

/// The whole schema as JSON (every section has defaults), flows as one flow's keys.
fn schema() -> Value {
    let mut schema = serde_json::to_value(serde_json::from_str::<Config>("{}").unwrap()).unwrap();
    schema["flows"] = serde_json::to_value(ssdlab_core::config::FlowConfig::default()).unwrap();
    schema
}

fn schema_has(section: &str) -> bool {
    schema().get(section).is_some()
}

fn schema_mentions(word: &str) -> bool {
    schema().to_string().contains(word)
}

fn has_warning(imported: &Imported, scenario: usize, needle: &str) -> bool {
    imported.scenarios[scenario].warnings.iter().any(|w| w.contains(needle))
}

#[test]
fn the_sample_files_give_three_scenarios_in_ssdlab_schema() {
    let Some(s) = samples() else { return };
    let imported = import_files(&s.dir.join("ssdconfig.xml"), &s.dir.join("workload.xml")).unwrap();
    assert_eq!(imported.scenarios.len(), 3);
    for (i, scenario) in imported.scenarios.iter().enumerate() {
        Config::from_json_str(&scenario.config.to_string()).unwrap_or_else(|e| panic!("scenario {}: {e}", i + 1));
        let c = &scenario.config;
        assert_eq!(c["seed"], 321);
        assert_eq!(c["flash"]["channels"], 8);
        assert_eq!(c["flash"]["chips_per_channel"], 4);
        assert_eq!(c["flash"]["dies_per_chip"], 2);
        assert_eq!(c["flash"]["planes_per_die"], 2);
        assert_eq!(c["flash"]["blocks_per_plane"], 2048);
        assert_eq!(c["flash"]["pages_per_block"], 256);
        assert_eq!(c["flash"]["page_size"], "8KiB");
        assert_eq!(c["flash"]["channel_rate"], "333MT/s");
        assert_eq!(c["flash"]["timing"]["read"], serde_json::json!({ "lsb": "75us", "msb": "75us" }));
        assert_eq!(c["flash"]["timing"]["erase"], "3800us");
        assert_eq!(c["ftl"]["gc_policy"], "rga");
        assert_eq!(c["ftl"]["over_provisioning"], 0.07);
        assert_eq!(c["ftl"]["cmt_capacity"], "2MiB");
        assert_eq!(c["host"]["pcie_lane_rate"], "1GB/s");
        assert_eq!(c["host"]["queue_fetch_size"], 512);
        // Nothing in MQSim's own files is unknown.
        assert!(!scenario.warnings.iter().any(|w| w.contains("unknown tag")), "{:?}", scenario.warnings);
        // The 256 MiB write cache: mapped when ssdlab has a data cache, named in a warning if not.
        if schema_has("cache") {
            assert_eq!(c["cache"]["capacity"], "256MiB");
            assert!(c["flows"].as_array().unwrap().iter().all(|f| f["cache_mode"] == "write"));
        } else {
            assert!(has_warning(&imported, i, "Data_Cache_Capacity"), "{:?}", scenario.warnings);
        }
        // Erase suspension is not modelled (yet): named with its value.
        if !schema_mentions("suspen") {
            assert!(has_warning(&imported, i, "CMD_Suspension_Support ERASE"), "{:?}", scenario.warnings);
        }
    }

    let writers = imported.scenarios[0].config["flows"].as_array().unwrap();
    assert_eq!(writers.len(), 2);
    assert!(writers.iter().all(|f| f["read_fraction"] == 0.0 && f["request_size"] == "8sectors"));
    assert_eq!(writers[0]["queue_depth"], 16);
    assert_eq!(writers[1]["queue_depth"], 2);
    assert_eq!(writers[0]["duration"], "10s");
    // MQSim gives each flow its own half of the logical space; the working set is half of that.
    assert_eq!((writers[0]["working_set_start"].clone(), writers[0]["working_set"].clone()), (0.0.into(), 0.25.into()));
    assert_eq!((writers[1]["working_set_start"].clone(), writers[1]["working_set"].clone()), (0.5.into(), 0.25.into()));

    let readers = imported.scenarios[1].config["flows"].as_array().unwrap();
    assert!(readers.iter().all(|f| f["read_fraction"] == 1.0 && f["queue_depth"] == 16));
    // URGENT beside HIGH under PRIORITY_OUT_OF_ORDER: URGENT goes first in both simulators.
    if schema_has("controller") && schema_mentions("priority") {
        assert_eq!((readers[0]["priority"].clone(), readers[1]["priority"].clone()), ("urgent".into(), "high".into()));
        assert_eq!(imported.scenarios[1].config["controller"]["scheduling"], "priority");
    } else {
        assert!(has_warning(&imported, 1, "Priority_Class URGENT (flow-0), HIGH (flow-1)"));
    }
    assert!(!has_warning(&imported, 0, "Priority_Class"));

    let trace = imported.scenarios[2].config["flows"].as_array().unwrap();
    assert_eq!(trace.len(), 1);
    assert_eq!(trace[0]["kind"], "trace");
    assert_eq!(trace[0]["path"], "traces/tpcc-small.trace");
    assert!(trace[0].get("requests").is_none(), "Percentage_To_Be_Executed 100: the whole trace");
}

/// Each tag of both sample files, changed to another valid value, must change the imported
/// configuration or its warnings (or be refused): no tag is silently ignored. The exceptions are
/// the tags MQSim itself ignores under the files' other values.
#[test]
fn every_tag_of_the_samples_is_mapped_or_warned() {
    let Some(s) = samples() else { return };
    let silent_by_design: &[(&str, &str)] = &[
        ("SATA_Processing_Delay", "only used by a SATA host interface; the file says NVME"),
        ("ResponseTime_Logging_Period_Length", "only used when Enable_ResponseTime_Logging is true"),
        ("GC_Hard_Threshold", "only used when Preemptible_GC_Enabled is true"),
        ("Page_Read_Latency_CSB", "MLC pages have no CSB"),
        ("Page_Program_Latency_CSB", "MLC pages have no CSB"),
        ("Page_Metadat_Capacity", "MQSim's timing never moves the spare area"),
        ("Percentage_of_Hot_Region", "only used by RANDOM_HOTCOLD"),
        ("Variance_Request_Size", "only used by NORMAL"),
        ("Request_Size_Distribution", "NORMAL with Variance_Request_Size 0 is the same fixed size"),
        ("Intensity", "only used by an arrival-rate generator; the flows are QUEUE_DEPTH"),
        ("Total_Requests_To_Generate", "MQSim ignores it when Stop_Time is positive"),
        ("Memory_Type", "FLASH is MQSim's only memory type"),
        ("Flash_Comm_Protocol", "NVDDR2 is MQSim's only protocol"),
    ];
    let base = import_with(&s.device, &s.workload, &options(&s.dir)).unwrap();
    let mut checked = 0;
    for (file, text) in [("ssdconfig.xml", &s.device), ("workload.xml", &s.workload)] {
        for (start, end, tag) in leaf_elements(text) {
            if silent_by_design.iter().any(|(t, _)| *t == tag) {
                continue;
            }
            let value = &text[start..end];
            let changed = format!("{}{}{}", &text[..start], other_value(&tag, value), &text[end..]);
            let result = match file {
                "ssdconfig.xml" => import_with(&changed, &s.workload, &options(&s.dir)),
                _ => import_with(&s.device, &changed, &options(&s.dir)),
            };
            if let Ok(imported) = result {
                assert!(
                    imported != base,
                    "{file}: changing {tag} from {value} changed neither the config nor a warning"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} tags were checked");
}

/// (value start, value end, tag) of every element holding text only.
fn leaf_elements(text: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find('<').map(|i| at + i) {
        at = open + 1;
        let rest = &text[at..];
        if rest.starts_with('/') || rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        let value_start = at + close + 1;
        let Some(value_len) = text[value_start..].find('<') else { break };
        let value_end = value_start + value_len;
        if text[value_end..].starts_with(&format!("</{tag}>")) {
            found.push((value_start, value_end, tag.to_string()));
        }
    }
    found
}

fn other_value(tag: &str, value: &str) -> String {
    let enums: &[(&str, &str)] = &[
        ("HostInterface_Type", "SATA"),
        ("Caching_Mechanism", "SIMPLE"),
        ("Data_Cache_Sharing_Mode", "EQUAL_PARTITIONING"),
        ("Address_Mapping", "HYBRID"),
        ("CMT_Sharing_Mode", "EQUAL_PARTITIONING"),
        ("Plane_Allocation_Scheme", "WCDP"),
        ("Transaction_Scheduling_Policy", "FLIN"),
        ("GC_Block_Selection_Policy", "GREEDY"),
        ("Flash_Technology", "TLC"),
        ("CMD_Suspension_Support", "PROGRAM"),
        ("Priority_Class", "LOW"),
        ("Device_Level_Data_Caching_Mode", "READ_CACHE"),
        ("Synthetic_Generator_Type", "BANDWIDTH"),
        ("Address_Distribution", "STREAMING"),
        ("Request_Size_Distribution", "NORMAL"),
        ("Time_Unit", "MICROSECOND"),
        ("File_Path", "traces/wsrch-small.trace"),
    ];
    if let Some((_, v)) = enums.iter().find(|(t, _)| *t == tag) {
        return v.to_string();
    }
    match value {
        "true" => return "false".into(),
        "false" => return "true".into(),
        _ => {}
    }
    if value.contains(',') {
        return "0".into();
    }
    if let Ok(n) = value.parse::<u64>() {
        return if n > 1 { (n / 2).to_string() } else { (n + 1).to_string() };
    }
    let x: f64 = value.parse().unwrap_or_else(|_| panic!("no other value for {tag} = {value}"));
    (x / 2.0).to_string()
}

#[test]
fn a_misspelt_tag_is_warned_about_by_name() {
    let Some(s) = samples() else { return };
    let device = s.device.replace("<Page_Capacity>8192</Page_Capacity>", "<Page_Capacityy>4096</Page_Capacityy>");
    let workload = replace_nth(&s.workload, "Read_Percentage>", "Read_Percentag>", 0);
    let workload = replace_nth(&workload, "Read_Percentage>", "Read_Percentag>", 0);
    let imported = import(&device, &workload).unwrap();
    let warnings = &imported.scenarios[0].warnings;
    assert!(
        warnings.iter().any(|w| w.contains("unknown tag Page_Capacityy")
            && w.contains("did you mean Page_Capacity?")
            && w.contains("ssdconfig.xml line")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("unknown tag Read_Percentag in flow-0") && w.contains("did you mean Read_Percentage?")),
        "{warnings:?}"
    );
    // The device warning reaches every scenario; the flow's only its own.
    assert!(has_warning(&imported, 2, "Page_Capacityy"));
    assert!(!has_warning(&imported, 2, "Read_Percentag"));
    // The misspelt page size is not applied: ssdlab keeps its default.
    assert_eq!(imported.scenarios[0].config["flash"].get("page_size"), None);
}

#[test]
fn a_value_that_is_not_a_number_is_an_error_naming_file_tag_and_value() {
    let Some(s) = samples() else { return };
    let device = s.device.replace("<Page_No_Per_Block>256<", "<Page_No_Per_Block>lots<");
    let e = import(&device, &s.workload).unwrap_err().to_string();
    assert!(e.starts_with("ssdconfig.xml:"), "{e}");
    assert!(e.contains("Page_No_Per_Block") && e.contains("\"lots\""), "{e}");

    let workload = replace_nth(&s.workload, "<Average_No_of_Reqs_in_Queue>16<", "<Average_No_of_Reqs_in_Queue>1 6<", 0);
    let e = import(&s.device, &workload).unwrap_err().to_string();
    assert!(
        e.starts_with("workload.xml:") && e.contains("Average_No_of_Reqs_in_Queue") && e.contains("\"1 6\""),
        "{e}"
    );

    let device = s.device.replace("<GC_Exec_Threshold>0.05000<", "<GC_Exec_Threshold>5%<");
    let e = import(&device, &s.workload).unwrap_err().to_string();
    assert!(e.contains("GC_Exec_Threshold") && e.contains("\"5%\""), "{e}");

    let device = s.device.replace("<Ideal_Mapping_Table>false<", "<Ideal_Mapping_Table>nope<");
    let e = import(&device, &s.workload).unwrap_err().to_string();
    assert!(e.contains("Ideal_Mapping_Table") && e.contains("true or false"), "{e}");
}

#[test]
fn malformed_xml_is_an_error_naming_the_file_and_line() {
    let Some(s) = samples() else { return };
    let device = s.device.replace("</Flash_Parameter_Set>", "");
    let e = import(&device, &s.workload).unwrap_err();
    assert!(e.path.starts_with("ssdconfig.xml:"), "{e}");
    assert!(e.reason.starts_with("malformed XML"), "{e}");

    let workload = s.workload.replacen("</IO_Scenario>", "</IO_Scenari>", 1);
    let e = import(&s.device, &workload).unwrap_err();
    assert!(e.path.starts_with("workload.xml:"), "{e}");
    let line: usize = e.path["workload.xml:".len()..].parse().unwrap();
    assert!((40..=60).contains(&line), "the mismatched end tag is on line 54, got {e}");
}

#[test]
fn swapped_or_missing_files_are_errors_and_nothing_is_created() {
    let Some(s) = samples() else { return };
    let e = import(&s.workload, &s.device).unwrap_err();
    assert!(e.reason.contains("workload file") && e.reason.contains("first"), "{e}");

    let missing = std::env::temp_dir().join(format!("ssdlab-no-such-{}.xml", std::process::id()));
    let e = import_files(&missing, &s.dir.join("workload.xml")).unwrap_err();
    assert!(e.path.contains("ssdlab-no-such"), "{e}");
    assert!(!missing.exists(), "a sample file was written in place of the missing one");
}

#[test]
fn preconditioning_when_enabled_ages_the_device_to_steady_state_at_the_largest_occupancy() {
    let Some(s) = samples() else { return };
    let device = s.device.replace("<Enabled_Preconditioning>false<", "<Enabled_Preconditioning>true<");
    let workload =
        replace_nth(&s.workload, "<Initial_Occupancy_Percentage>75<", "<Initial_Occupancy_Percentage>60<", 1);
    let imported = import(&device, &workload).unwrap();
    let first = &imported.scenarios[0].config["precondition"];
    assert_eq!((first["occupancy"].clone(), first["mode"].clone()), (0.75.into(), "steady".into()));
    assert!(has_warning(&imported, 0, "differs between flows (75 (flow-0), 60 (flow-1))"));
    assert_eq!(imported.scenarios[2].config["precondition"]["occupancy"], 0.7);
    // Disabled (as in the samples): the device starts empty, and the warning says why.
    let imported = import(&s.device, &s.workload).unwrap();
    assert_eq!(imported.scenarios[0].config["precondition"]["mode"], "none");
    assert!(has_warning(&imported, 0, "Enabled_Preconditioning is false"));
}

#[test]
fn percentage_to_be_executed_limits_the_trace_and_windows_paths_work() {
    let Some(s) = samples() else { return };
    let workload = s
        .workload
        .replace("<Percentage_To_Be_Executed>100<", "<Percentage_To_Be_Executed>10<")
        .replace("traces/tpcc-small.trace", "traces\\tpcc-small.trace");
    let imported = import_with(&s.device, &workload, &options(&s.dir)).unwrap();
    let flow = &imported.scenarios[2].config["flows"][0];
    assert_eq!(flow["path"], "traces/tpcc-small.trace");
    let lines = std::fs::read_to_string(s.dir.join("traces/tpcc-small.trace")).unwrap().lines().count() as u64;
    assert_eq!(flow["requests"], lines / 10, "10 % of the trace's {lines} requests, rounded down as MQSim does");
    // Without the trace's folder the requests cannot be counted: the whole trace runs, and the
    // warning says so.
    let imported = import(&s.device, &workload).unwrap();
    assert!(imported.scenarios[2].config["flows"][0].get("requests").is_none());
    assert!(has_warning(&imported, 2, "Percentage_To_Be_Executed 10 (flow-0)"));
}

/// The trace scenario runs MQSim's trace request for request (on a smaller device, so that the
/// test stays fast: the trace's addresses wrap modulo the capacity).
#[test]
fn the_trace_scenario_replays_every_request_of_the_trace() {
    let Some(s) = samples() else { return };
    let imported = import_with(&s.device, &s.workload, &options(&s.dir)).unwrap();
    let mut config: Value = imported.scenarios[2].config.clone();
    config["flash"]["blocks_per_plane"] = 256.into();
    let parsed = Config::from_json_str(&config.to_string()).unwrap();
    let mut sim = Simulation::new(parsed, &s.dir, config).unwrap();
    let results = sim.run().unwrap();
    let lines = std::fs::read_to_string(s.dir.join("traces/tpcc-small.trace")).unwrap().lines().count() as u64;
    let flow = &results.flows[0];
    assert_eq!(flow.reads.count + flow.writes.count, lines);
}

/// MQSim accepts values that ssdlab refuses (its compiled-in 2 % over-provisioning leaves ssdlab's
/// GC no room): the import says so in a warning instead of failing, so an override can fix it.
#[test]
fn a_value_outside_ssdlabs_limits_is_a_warning_that_an_override_can_fix() {
    let Some(s) = samples() else { return };
    let device = s.device.replace("<Overprovisioning_Ratio>0.07<", "<Overprovisioning_Ratio>0.02<");
    let imported = import(&device, &s.workload).unwrap();
    assert!(has_warning(&imported, 0, "ssdlab refuses scenario 1 as imported: ftl.gc_threshold"));
    let mut config = imported.scenarios[0].config.clone();
    assert!(Config::from_json_str(&config.to_string()).is_err());
    config["ftl"]["over_provisioning"] = 0.07.into();
    Config::from_json_str(&config.to_string()).unwrap();
}

/// A trace beside a synthetic flow: only separate address domains keep each in its slice.
#[test]
fn a_trace_beside_another_flow_gets_its_own_address_domain() {
    let Some(s) = samples() else { return };
    let synthetic = {
        let start = s.workload.find("<IO_Flow_Parameter_Set_Synthetic>").unwrap();
        let end = s.workload.find("</IO_Flow_Parameter_Set_Synthetic>").unwrap();
        &s.workload[start..end + "</IO_Flow_Parameter_Set_Synthetic>".len()]
    };
    let trace = {
        let start = s.workload.find("<IO_Flow_Parameter_Set_Trace_Based>").unwrap();
        let end = s.workload.find("</IO_Flow_Parameter_Set_Trace_Based>").unwrap();
        &s.workload[start..end + "</IO_Flow_Parameter_Set_Trace_Based>".len()]
    };
    let workload = format!("<MQSim_IO_Scenarios><IO_Scenario>{synthetic}{trace}</IO_Scenario></MQSim_IO_Scenarios>");
    let imported = import_with(&s.device, &workload, &options(&s.dir)).unwrap();
    let mut config = imported.scenarios[0].config.clone();
    if schema().to_string().contains("address_domains") {
        assert_eq!(config["ftl"]["address_domains"], "per-flow");
        assert_eq!(config["flows"][0]["working_set"], 0.5, "relative to the flow's own domain");
        assert!(config["flows"][0].get("working_set_start").is_none());
    } else {
        assert!(has_warning(&imported, 0, "IO_Flow_Parameter_Set_Trace_Based beside other flows"));
    }
    // It runs: both flows complete requests.
    config["flash"]["blocks_per_plane"] = 256.into();
    config["run"] = serde_json::json!({ "max_simulated_time": "5ms" });
    let parsed = Config::from_json_str(&config.to_string()).unwrap();
    let results = Simulation::new(parsed, &s.dir, config).unwrap().run().unwrap();
    assert!(results.flows.iter().all(|f| f.requests > 0));
}

#[test]
fn a_sata_device_keeps_its_ncq_depth_and_processing_delay() {
    let Some(s) = samples() else { return };
    let device = s
        .device
        .replace("<HostInterface_Type>NVME<", "<HostInterface_Type>SATA<")
        .replace("<IO_Queue_Depth>65535<", "<IO_Queue_Depth>32<");
    let imported = import(&device, &s.workload).unwrap();
    let host = &imported.scenarios[0].config["host"];
    if schema_has("host") && schema()["host"].get("sata_ncq_depth").is_some() {
        assert_eq!(host["interface"], "sata");
        assert_eq!(host["sata_ncq_depth"], 32);
        assert_eq!(host["sata_processing_delay"], "400us");
        assert!(host.get("sq_depth").is_none(), "IO_Queue_Depth is the NCQ depth under SATA");
        assert!(!has_warning(&imported, 0, "ssdlab refuses"), "{:?}", imported.scenarios[0].warnings);
    } else {
        assert!(has_warning(&imported, 0, "HostInterface_Type SATA (with SATA_Processing_Delay 400000)"));
    }
}
