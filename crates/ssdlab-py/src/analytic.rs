//! The closed-form model of SSD parallelism (ssdlab_core::analytic, Yoo et al., SIMULTECH 2014)
//! for a configured device, as JSON for `ssdlab.analytic` (which presents it).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use ssdlab_core::analytic::{costs_from_config, parallel_units, request_time_us, PageCosts};
use ssdlab_core::Config;

use crate::ConfigError;

fn costs_json(costs: PageCosts) -> serde_json::Value {
    serde_json::json!({
        "channel_us": costs.ch_us,
        "register_us": costs.reg_us,
        "cell_us": costs.cell_us,
        "page_us": costs.page_us(),
    })
}

/// The model's page costs and parallel units for `config_json` (the device's config; flows are
/// not needed) and the queue-depth-1 service time of a read and of a write of each size in
/// `request_sizes_bytes` (whole pages: a size is rounded up to pages).
#[pyfunction]
pub fn analytic_json(config_json: &str, request_sizes_bytes: Vec<u64>) -> PyResult<String> {
    let config = Config::device_from_json_str(config_json).map_err(|e| ConfigError::new_err(e.to_string()))?;
    if let Some(bad) = request_sizes_bytes.iter().find(|&&s| s == 0) {
        return Err(PyValueError::new_err(format!("request size must be at least one byte, got {bad}")));
    }
    let (read, write) = costs_from_config(&config);
    let rho = parallel_units(&config);
    let page_size = config.flash.page_size.value;
    let requests: Vec<_> = request_sizes_bytes
        .iter()
        .map(|&size| {
            let pages = size.div_ceil(page_size);
            serde_json::json!({
                "size_bytes": size,
                "pages": pages,
                "read_us": request_time_us(read, pages, rho),
                "write_us": request_time_us(write, pages, rho),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "parallel_units": rho,
        "page_size_bytes": page_size,
        "read": costs_json(read),
        "write": costs_json(write),
        "requests": requests,
    });
    serde_json::to_string(&doc).map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the model: {e}")))
}
