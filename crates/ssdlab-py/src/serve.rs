//! `_core.serve`: the live device (crates/ssdlab-serve) for `ssdlab serve` and `ssdlab.serve`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use ssdlab_core::Config;
use ssdlab_serve::{Listen, Pace, ServeError, ServeOptions};

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

/// Serves the device over NBD until SIGINT (or a signal handler that raises) stops it; returns
/// (results JSON, live-section JSON). `on_ready(address)` is called once the socket listens.
#[pyfunction]
#[pyo3(signature = (config_json, base_dir, listen, pace, read_only, allow_remote, max_connections, max_in_flight, on_ready))]
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
    on_ready: Py<PyAny>,
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
    };
    let base_dir = Path::new(base_dir).to_path_buf();
    let mut ready_error: Option<PyErr> = None;
    let report = py.detach(|| {
        let mut should_stop = || Python::attach(|py| py.check_signals().is_err());
        let mut on_ready = |address: &str| {
            Python::attach(|py| {
                if let Err(e) = on_ready.call1(py, (address,)) {
                    ready_error = Some(e);
                }
            })
        };
        ssdlab_serve::serve(config, &base_dir, &options, &mut should_stop, &mut on_ready)
    });
    if let Some(e) = ready_error {
        return Err(e);
    }
    let report = report.map_err(|e| match e {
        ServeError::Sim(e) => sim_error(e),
        ServeError::Listen(m) => PyOSError::new_err(m),
        ServeError::Device(m) => PyRuntimeError::new_err(m),
    })?;
    Ok((results_to_json(&report.results)?, report.live.to_string()))
}
