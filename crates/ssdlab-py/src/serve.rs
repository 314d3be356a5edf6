//! `_core.serve`: the live device (crates/ssdlab-serve) for `ssdlab serve` and `ssdlab.serve`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use ssdlab_core::Config;
use ssdlab_serve::{Control, Host, Listen, Pace, ServeError, ServeOptions, ServeReport};

use super::{results_to_json, sim_error, ConfigError};

/// Parses `unix:PATH` or `tcp:HOST:PORT`.
fn listen_from_text(text: &str) -> PyResult<Listen> {
    if let Some(path) = text.strip_prefix("unix:") {
        if path.is_empty() {
            return Err(PyValueError::new_err("listen: unix: needs a socket path, e.g. unix:/tmp/ssd.sock"));
        }
        return Ok(Listen::Unix(PathBuf::from(path)));
    }
    if let Some(addr) = text.strip_prefix("tcp:") {
        let addr: SocketAddr = addr.parse().map_err(|_| {
            PyValueError::new_err(format!("listen: {addr:?} is not an address and port such as 127.0.0.1:10809"))
        })?;
        return Ok(Listen::Tcp(addr));
    }
    Err(PyValueError::new_err(format!("listen: expected unix:PATH or tcp:HOST:PORT, got {text:?}")))
}

/// The Python side of the server: `on_ready(address)`, `poll()` every 50 ms after the signal
/// handlers ran (None to go on, "stop", "results"), `on_snapshot(results_json, live_json)`.
struct PyHost {
    on_ready: Py<PyAny>,
    poll: Py<PyAny>,
    on_snapshot: Py<PyAny>,
    /// The first error a callback raised; it stops the server and is raised when it returns.
    error: Option<PyErr>,
}

impl PyHost {
    fn keep(&mut self, result: PyResult<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }
}

impl Host for PyHost {
    fn ready(&mut self, address: &str) {
        let result = Python::attach(|py| self.on_ready.call1(py, (address,)).map(drop));
        self.keep(result);
    }

    fn poll(&mut self) -> Control {
        if self.error.is_some() {
            return Control::Stop;
        }
        Python::attach(|py| {
            // SIGINT raises KeyboardInterrupt here, as SIGTERM does under `ssdlab serve`.
            if py.check_signals().is_err() {
                return Control::Stop;
            }
            match self.poll.call0(py).and_then(|v| v.extract::<Option<String>>(py)) {
                Ok(None) => Control::Continue,
                Ok(Some(command)) if command == "results" => Control::Snapshot,
                Ok(Some(command)) if command == "stop" => Control::Stop,
                Ok(Some(other)) => {
                    self.error = Some(PyValueError::new_err(format!(
                        "poll() returned {other:?}; expected None, \"results\" or \"stop\""
                    )));
                    Control::Stop
                }
                Err(e) => {
                    self.error = Some(e);
                    Control::Stop
                }
            }
        })
    }

    fn snapshot(&mut self, report: &ServeReport) {
        let result = Python::attach(|py| {
            let results = results_to_json(&report.results)?;
            self.on_snapshot.call1(py, (results, report.live.to_string())).map(drop)
        });
        self.keep(result);
    }
}

/// Serves the device over NBD until SIGINT, `poll()` or the control socket stops it; returns
/// (results JSON, live-section JSON).
#[pyfunction]
#[pyo3(signature = (config_json, base_dir, listen, pace, read_only, allow_remote, max_connections, max_in_flight, control, on_ready, poll, on_snapshot))]
#[allow(clippy::too_many_arguments)]
pub fn serve(
    py: Python<'_>,
    config_json: &str,
    base_dir: &str,
    listen: &str,
    pace: &str,
    read_only: bool,
    allow_remote: bool,
    max_connections: usize,
    max_in_flight: usize,
    control: Option<String>,
    on_ready: Py<PyAny>,
    poll: Py<PyAny>,
    on_snapshot: Py<PyAny>,
) -> PyResult<(String, String)> {
    let pace = match pace {
        "real-time" => Pace::RealTime,
        "none" => Pace::None,
        other => return Err(PyValueError::new_err(format!("pace: expected \"real-time\" or \"none\", got {other:?}"))),
    };
    if max_connections == 0 || max_in_flight == 0 {
        return Err(PyValueError::new_err("max_connections and max_in_flight must be at least 1"));
    }
    let config =
        Config::served_from_json_str(config_json, max_connections).map_err(|e| ConfigError::new_err(e.to_string()))?;
    let options = ServeOptions {
        listen: listen_from_text(listen)?,
        pace,
        read_only,
        allow_remote,
        max_connections,
        max_in_flight,
        control: control.map(PathBuf::from),
    };
    let base_dir = Path::new(base_dir).to_path_buf();
    let mut host = PyHost { on_ready, poll, on_snapshot, error: None };
    let report = py.detach(|| ssdlab_serve::serve(config, &base_dir, &options, &mut host));
    if let Some(e) = host.error {
        return Err(e);
    }
    let report = report.map_err(|e| match e {
        ServeError::Sim(e) => sim_error(e),
        ServeError::Listen(m) => PyOSError::new_err(m),
        ServeError::Device(m) => PyRuntimeError::new_err(m),
    })?;
    Ok((results_to_json(&report.results)?, report.live.to_string()))
}
