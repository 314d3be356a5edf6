//! The discrete-event engine: a priority queue of events ordered by (time, sequence number), and
//! seeded random streams. Ties in time are broken by the order in which events were scheduled,
//! which makes every run with the same inputs take the same path.

mod divisor;
pub mod lru;
mod queue;
mod rng;
mod slab;

pub use divisor::Divisor;
pub use lru::LruOrder;
pub use queue::EventQueue;
pub use rng::{derive_seed, RandomStream};
pub use slab::Slab;
