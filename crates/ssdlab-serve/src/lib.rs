//! The live ssdlab device (issue 14): an NBD server whose storage is the simulated SSD, so that
//! fio (`ioengine=nbd`), qemu-img / qemu-io, QEMU's `driver=nbd` block backend and nbd-client
//! run against the model and see its latencies.
//!
//! One thread, the device loop, owns the [`ssdlab_core::Device`] and every connection's socket
//! (non-blocking, through epoll); handshakes and control commands run on short-lived threads of
//! their own. Each client connection is its own host submission queue. With `Pace::RealTime` the model's clock follows the wall clock and a reply
//! leaves when the wall clock reaches the request's simulated completion; with `Pace::None`
//! replies leave as soon as the model has processed them. See docs/live-device.md.

pub mod protocol;
mod server;

pub use server::{serve, Control, Host, Listen, Pace, ServeError, ServeOptions, ServeReport};
