//! ssdlab-core: a discrete-event model of a multi-queue SSD.
//!
//! Build a [`Simulation`] from a [`config::Config`], run it, and read its [`stats::Results`];
//! or drive a [`Device`] request by request from an outside host. The model's parts mirror the
//! device (docs/architecture.md): `host` (queues, arbitration, PCIe / SATA / UFS links,
//! Open-Channel), `controller` (firmware cores, internal DRAM), `cache`, `ftl` (mapping families,
//! allocation, GC, wear leveling, transaction scheduling), `flash` (the back end: dies, channels,
//! timing, suspension), with `config` as the ground floor, `workload` feeding requests in and
//! `stats` collecting what comes out. `analytic` holds the closed-form model the simulator is
//! checked against.

pub mod analytic;
pub mod cache;
pub mod config;
pub mod controller;
pub mod data;
pub mod device;
pub mod engine;
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
/// The controller's parts keep their paths of round 1 (`ssdlab_core::dram`, `ssdlab_core::firmware`).
pub use controller::{dram, firmware};
pub use device::Device;
pub use sim::{summary_table, SimError, Simulation};
pub use stats::Results;
