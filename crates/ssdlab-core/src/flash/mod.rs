//! The flash back end: geometry, cell timing and the channel / die state machines.

pub mod backend;
pub mod geometry;
pub mod timing;

pub use geometry::{Geometry, SECTOR_BYTES};
