//! Import of MQSim's configuration files (`ssdconfig.xml` and `workload.xml`) into ssdlab's schema.
//!
//! MQSim describes the device in one file and a list of I/O scenarios in the other; each
//! `<IO_Scenario>` becomes one ssdlab configuration (device + flows), returned as JSON in the
//! schema of [`Config`](super::Config) together with the warnings of that scenario.
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
//!
//! The import reads both files into a small tag tree (`xml`), maps the device file (`device`),
//! then each scenario of the workload file (`workload`) flow by flow (`flow`); `tags` lists the
//! tags MQSim knows, and `schema` writes values in ssdlab's units and tells which keys ssdlab's
//! schema has.

mod device;
mod flow;
mod schema;
mod tags;
mod workload;
mod xml;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ConfigError;
use device::import_device;
use workload::import_workload;
use xml::parse_xml;

/// One MQSim `<IO_Scenario>` as an ssdlab configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The configuration in ssdlab's schema (JSON form; [`Config::from_json_str`](super::Config::from_json_str) accepts it).
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
    let read = |path: &Path, what: &str| {
        if path.is_dir() {
            return Err(ConfigError::new(path.display().to_string(), format!("is a folder; expected {what}")));
        }
        std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(path.display().to_string(), format!("cannot read {what}: {e}")))
    };
    let device_text = read(ssdconfig, "an MQSim device file (ssdconfig.xml)")?;
    let workload_text = read(workload, "an MQSim workload file (workload.xml)")?;
    let options = ImportOptions {
        ssdconfig_name: ssdconfig.display().to_string(),
        workload_name: workload.display().to_string(),
        workload_dir: Some(workload.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)),
    };
    import_with(&device_text, &workload_text, &options)
}

/// [`import`] with explicit file names and trace folder.
pub fn import_with(ssdconfig_xml: &str, workload_xml: &str, options: &ImportOptions) -> Result<Imported, ConfigError> {
    let device_root =
        parse_xml(&options.ssdconfig_name, ssdconfig_xml, "Execution_Parameter_Set", "an MQSim device file")?;
    let workload_root =
        parse_xml(&options.workload_name, workload_xml, "MQSim_IO_Scenarios", "an MQSim workload file")?;
    let device = import_device(&options.ssdconfig_name, &device_root)?;
    let scenarios = import_workload(&options.workload_name, &workload_root, &device, options)?;
    Ok(Imported { scenarios })
}
