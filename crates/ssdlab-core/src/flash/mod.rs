//! The flash back end: geometry, cell timing and the channel / die state machines.

pub mod backend;
pub mod channel;
pub mod reliability;
pub mod suspension;
pub mod timing;

/// The geometry is derived from the config alone, and validation and the memory estimate need it
/// before a device exists, so it lives on the ground floor (`config/geometry.rs`); the back end
/// addresses its channels, dies, planes and blocks with its ids.
pub use crate::config::geometry::{self, Geometry, SECTOR_BYTES};
