//! The controller as a computer (Amber / SimpleSSD 2.0, MICRO'18): the embedded cores that run
//! the firmware (HIL, cache, FTL and FIL steps) and the internal DRAM that the data cache, the
//! cached mapping table and the flash data buffers share. Their handlers are
//! `sim/host_path.rs::run_front_end_firmware` and `sim/dram_path.rs`.

pub mod dram;
pub mod firmware;
