//! ssdlab-core: a discrete-event model of a multi-queue SSD.
//!
//! Build a [`Simulation`] from a [`config::Config`], run it, and read its [`stats::Results`].
//! The model's parts mirror the device: `host` (queues, PCIe), `ftl` (mapping, allocation, GC,
//! transaction scheduling), `flash` (geometry, timing), with `workload` feeding requests in and
//! `stats` collecting what comes out. `analytic` holds the closed-form model the simulator is
//! checked against.

pub mod analytic;
pub mod cache;
pub mod config;
pub mod data;
pub mod device;
pub mod dram;
pub mod engine;
pub mod firmware;
pub mod flash;
pub mod ftl;
pub mod host;
pub mod power;
pub mod precondition;
pub mod sim;
pub mod stats;
pub mod time;
pub mod workload;

pub use config::{Config, ConfigError};
pub use device::Device;
pub use sim::{summary_table, SimError, Simulation};
pub use stats::Results;
