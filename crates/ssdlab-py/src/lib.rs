//! `ssdlab._core`: the Python binding of ssdlab-core. Deliberately thin: it moves text across
//! the boundary (configuration JSON in, results JSON out) and turns the core's errors into
//! Python exceptions. Everything a user touches directly lives in the `ssdlab` Python package.

mod analytic;
mod serve;
mod trace;

use std::path::{Path, PathBuf};

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ssdlab_core::config::mqsim;
use ssdlab_core::device::{HostRequest, Op};
use ssdlab_core::stats::breakdown::Step;
use ssdlab_core::{Config, Results, SimError};

create_exception!(
    ssdlab._core,
    ConfigError,
    PyValueError,
    "A configuration value was rejected; the message names the field path."
);
create_exception!(
    ssdlab._core,
    TraceError,
    PyValueError,
    "A trace file could not be read; the message names the file and line."
);

create_exception!(
    ssdlab._core,
    EndOfLifeError,
    PyRuntimeError,
    "The device could not go on: it wore out (blocks retired at ftl.pe_cycle_limit), ran out of space, or completed no request for run.stall_timeout; the message says which, with the state it stopped in."
);

const PS_PER_SECOND: f64 = 1e12;

fn sim_error(e: SimError) -> PyErr {
    match e {
        SimError::Config(e) => ConfigError::new_err(e.to_string()),
        SimError::Trace(e) => TraceError::new_err(e.to_string()),
        // The device wore out (or otherwise cannot go on): the message says why.
        SimError::EndOfLife(message) => EndOfLifeError::new_err(message),
    }
}

fn results_to_json(results: &Results) -> PyResult<String> {
    serde_json::to_string_pretty(results)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the results: {e}")))
}

/// One simulation run, advanced in bounded steps so that the caller keeps control (progress
/// reports, Ctrl-C) between them.
#[pyclass(module = "ssdlab._core")]
struct Simulation {
    sim: ssdlab_core::Simulation,
}

#[pymethods]
impl Simulation {
    /// `config_json` is the configuration as JSON; `base_dir` resolves relative trace paths;
    /// `records_path` is the file for the per-request records `run.request_records` asks for.
    /// Building a large device (mapping tables, preconditioning) takes seconds, so it runs
    /// without the GIL too.
    ///
    /// `setup_progress` (a callable, optional) hears the fraction of the preconditioning done, a
    /// few times a second at most; an exception it raises (KeyboardInterrupt from Ctrl-C) stops
    /// the setup and is raised here.
    #[new]
    #[pyo3(signature = (config_json, base_dir, records_path = None, setup_progress = None))]
    fn new(
        py: Python<'_>,
        config_json: &str,
        base_dir: &str,
        records_path: Option<PathBuf>,
        setup_progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        // The config first: it names the key of a value JSON cannot hold (a NaN from the TOML
        // file), where parsing the echo would only say "not valid JSON" at a column.
        let config = Config::from_json_str(config_json).map_err(|e| ConfigError::new_err(e.to_string()))?;
        let echo: serde_json::Value = serde_json::from_str(config_json)
            .map_err(|e| ConfigError::new_err(format!("config: not valid JSON: {e}")))?;
        let base_dir = Path::new(base_dir).to_path_buf();
        let mut raised: Option<PyErr> = None;
        let built = py.detach(|| {
            let mut last_call = std::time::Instant::now();
            let mut hear = |fraction: f64| -> bool {
                let Some(callback) = setup_progress.as_ref() else { return true };
                // The GIL is taken back only a few times a second.
                if last_call.elapsed() < std::time::Duration::from_millis(100) {
                    return true;
                }
                last_call = std::time::Instant::now();
                Python::attach(|py| match callback.call1(py, (fraction,)).and_then(|_| py.check_signals()) {
                    Ok(()) => true,
                    Err(e) => {
                        raised = Some(e);
                        false
                    }
                })
            };
            ssdlab_core::Simulation::new_with_progress(config, &base_dir, echo, &mut hear)
        });
        if let Some(e) = raised {
            return Err(e);
        }
        let mut sim = built.map_err(sim_error)?;
        if let Some(path) = records_path {
            sim.write_request_records_to(&path).map_err(|e| {
                PyOSError::new_err(format!("cannot write the request records to {}: {e}", path.display()))
            })?;
        }
        Ok(Self { sim })
    }

    /// Processes up to `max_events` events without holding the GIL; true when the run is over.
    fn step(&mut self, py: Python<'_>, max_events: u64) -> PyResult<bool> {
        let sim = &mut self.sim;
        py.detach(move || sim.step(max_events)).map_err(sim_error)
    }

    /// Fraction of the run done, in [0, 1].
    fn progress(&self) -> f64 {
        self.sim.progress()
    }

    /// The results document (schema `ssdlab.results/1`) as pretty-printed JSON. Flushes the
    /// request records written so far, so the file is complete once the run is.
    fn results_json(&mut self) -> PyResult<String> {
        self.sim.flush_request_records();
        results_to_json(&self.sim.results())
    }

    /// The core's fixed-width text summary of the results so far.
    fn summary_table(&self) -> String {
        ssdlab_core::summary_table(&self.sim.results())
    }

    /// The bytes a read of `sectors` 512-byte sectors from `lba` returns now (cached sectors
    /// over what the FTL maps; zeros where nothing was written). Needs `data.emulate`.
    fn read_back<'py>(&mut self, py: Python<'py>, lba: u64, sectors: u32) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.sim.read_back(lba, sectors).map_err(PyValueError::new_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Checks the model's invariants now: the mapping and reverse map agree, block counters
    /// match them, valid + invalid + free pages = total, and once the run is over no request or
    /// transaction is left in flight and every flow completed what it issued. Raises
    /// `RuntimeError` naming the first broken one (the fuzz suite calls it between steps).
    fn check_invariants(&self) -> PyResult<()> {
        self.sim.check_invariants().map_err(|e| PyRuntimeError::new_err(format!("invariant broken: {e}")))
    }

    /// FOR TESTS ONLY: flips a byte of the stored sector `lba` where the FTL maps it, so that a
    /// later read of it is a data mismatch (tests of `ssdlab.DataIntegrityError` and of the
    /// CLI's exit status; no real run calls it). Needs `data.emulate` and an LBA inside the
    /// logical space; returns whether a stored page was there to corrupt.
    #[pyo3(name = "_corrupt_stored_sector_for_test")]
    fn corrupt_stored_sector_for_test(&mut self, lba: u64) -> bool {
        self.sim.corrupt_stored_sector_for_test(lba)
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> u64 {
        self.sim.events()
    }

    /// Simulated time so far, in seconds.
    #[getter]
    fn simulated_seconds(&self) -> f64 {
        self.sim.simulated_time() as f64 / PS_PER_SECOND
    }
}

/// The device as a component (`ssdlab_core::device`): an outside host submits requests,
/// advances simulated time and collects completions. Times are integer picoseconds, addresses
/// 512-byte sectors. `ssdlab.Device` wraps it.
#[pyclass(module = "ssdlab._core")]
struct Device {
    device: ssdlab_core::Device,
}

fn op_from_name(op: &str) -> PyResult<Op> {
    Op::from_name(op).ok_or_else(|| {
        let names: Vec<String> = Op::ALL.iter().map(|o| format!("{:?}", o.name())).collect();
        PyValueError::new_err(format!("op: expected one of {}, got {op:?}", names.join(", ")))
    })
}

/// (id, queue, op, status, submitted_ps, completed_ps, breakdown in ps by step name, data,
/// assigned sector of a zone append).
type CompletionTuple<'py> = (
    u64,
    u16,
    &'static str,
    &'static str,
    u64,
    u64,
    Vec<(&'static str, u64)>,
    Option<Bound<'py, PyBytes>>,
    Option<u64>,
);

/// One Report Zones descriptor: (zone, state, start_sector, capacity_sectors, write_pointer).
type ZoneTuple = (u64, String, u64, u64, u64);

#[pymethods]
impl Device {
    /// `config_json`: the configuration as JSON (a config without flows gets one host queue);
    /// `base_dir` resolves relative paths. Built without the GIL (preconditioning takes time).
    #[new]
    fn new(py: Python<'_>, config_json: &str, base_dir: &str) -> PyResult<Self> {
        let config = Config::device_from_json_str(config_json).map_err(|e| ConfigError::new_err(e.to_string()))?;
        let base_dir = Path::new(base_dir).to_path_buf();
        let device = py.detach(move || ssdlab_core::Device::new(config, &base_dir)).map_err(sim_error)?;
        Ok(Self { device })
    }

    /// Queues a request at the current time; `ValueError` says why one is refused.
    #[pyo3(signature = (id, queue, op, start_sector, sectors, data = None, placement_handle = None))]
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        id: u64,
        queue: u16,
        op: &str,
        start_sector: u64,
        sectors: u32,
        data: Option<&[u8]>,
        placement_handle: Option<u16>,
    ) -> PyResult<()> {
        let request = HostRequest { id, queue, op: op_from_name(op)?, start_sector, sectors, data, placement_handle };
        self.device.submit(&request).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Runs every event due at or before `time_ps` (without the GIL), then sets the clock there.
    fn advance_to(&mut self, py: Python<'_>, time_ps: u64) -> PyResult<()> {
        let device = &mut self.device;
        py.detach(move || device.advance_to(time_ps)).map_err(sim_error)
    }

    /// When the next event is due (picoseconds), or None when nothing is in flight.
    fn next_event_time(&self) -> Option<u64> {
        self.device.next_event_time()
    }

    /// Completions since the last call, as tuples (see `CompletionTuple`).
    fn completions<'py>(&mut self, py: Python<'py>) -> Vec<CompletionTuple<'py>> {
        self.device
            .completions()
            .map(|c| {
                let steps = Step::ALL.iter().map(|&s| (s.name(), c.breakdown.get(s))).collect();
                let status = c.status.name();
                let data = c.data.as_deref().map(|d| PyBytes::new(py, d));
                (c.id, c.queue, c.op.name(), status, c.submitted_ps, c.completed_ps, steps, data, c.assigned_sector)
            })
            .collect()
    }

    /// Report Zones of host queue `queue`'s namespace from zone `first`, at most `count`
    /// zones; None on a conventional namespace.
    fn zone_report(&self, queue: u16, first: u64, count: u64) -> Option<Vec<ZoneTuple>> {
        let zones = self.device.zone_report_of_queue(queue, first, count)?;
        Some(
            zones.into_iter().map(|z| (z.zone, z.state, z.start_sector, z.capacity_sectors, z.write_pointer)).collect(),
        )
    }

    /// The results document so far, as JSON (the schema of results.json).
    fn results_json(&mut self) -> PyResult<String> {
        results_to_json(&self.device.results())
    }

    /// Writes the logical contents to `data.backing_file`; returns its path.
    fn persist(&mut self) -> PyResult<String> {
        self.device.persist().map(|p| p.display().to_string()).map_err(PyOSError::new_err)
    }

    /// Checks the model's invariants now (see `Simulation.check_invariants`).
    fn check_invariants(&mut self) -> PyResult<()> {
        self.device
            .simulation()
            .check_state_invariants()
            .map_err(|e| PyRuntimeError::new_err(format!("invariant broken: {e}")))
    }

    /// Simulated time, picoseconds.
    #[getter]
    fn now_ps(&self) -> u64 {
        self.device.now()
    }

    #[getter]
    fn in_flight(&self) -> usize {
        self.device.in_flight()
    }

    #[getter]
    fn host_queues(&self) -> Vec<String> {
        self.device.host_queues()
    }

    #[getter]
    fn logical_sectors(&self) -> u64 {
        self.device.logical_sectors()
    }

    /// Sectors host queue `queue` addresses (its namespace's with `[[namespaces]]`).
    fn queue_sectors(&self, queue: u16) -> u64 {
        self.device.queue_sectors(queue)
    }

    #[getter]
    fn page_bytes(&self) -> u64 {
        self.device.page_bytes()
    }
}

/// The core's text summary of a results document given as JSON (e.g. a saved results.json).
#[pyfunction]
fn summary_table_from_json(results_json: &str) -> PyResult<String> {
    let results: Results = serde_json::from_str(results_json)
        .map_err(|e| PyValueError::new_err(format!("not a results document: {e}")))?;
    Ok(ssdlab_core::summary_table(&results))
}

/// Imports MQSim's device and workload XML (their text): one `{"config": ..., "warnings": [...]}`
/// per IO_Scenario, in file order. The names are used in messages; `workload_dir` is the folder
/// trace paths are relative to (needed to count a trace's requests for Percentage_To_Be_Executed).
#[pyfunction]
#[pyo3(signature = (ssdconfig_xml, workload_xml, ssdconfig_name = "ssdconfig.xml", workload_name = "workload.xml", workload_dir = None))]
fn import_mqsim<'py>(
    py: Python<'py>,
    ssdconfig_xml: &str,
    workload_xml: &str,
    ssdconfig_name: &str,
    workload_name: &str,
    workload_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = mqsim::ImportOptions {
        ssdconfig_name: ssdconfig_name.to_string(),
        workload_name: workload_name.to_string(),
        workload_dir,
    };
    let imported = py
        .detach(|| mqsim::import_with(ssdconfig_xml, workload_xml, &options))
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    let scenarios: Vec<serde_json::Value> = imported
        .scenarios
        .into_iter()
        .map(|s| serde_json::json!({ "config": s.config, "warnings": s.warnings }))
        .collect();
    let text = serde_json::to_string(&scenarios)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the scenarios: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// JSON Schema of the configuration document (as JSON text), generated from the core's config
/// types: every field with its description and default. `python -m ssdlab.docs` renders it as
/// docs/configuration.md.
#[pyfunction]
fn config_schema_json() -> PyResult<String> {
    serde_json::to_string_pretty(&ssdlab_core::config::json_schema())
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the schema: {e}")))
}

/// The version of the simulator core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Simulation>()?;
    m.add_class::<Device>()?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("EndOfLifeError", py.get_type::<EndOfLifeError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add_function(wrap_pyfunction!(summary_table_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(import_mqsim, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(analytic::analytic_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace::read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(serve::serve, m)?)?;
    Ok(())
}
