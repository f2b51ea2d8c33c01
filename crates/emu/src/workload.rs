//! Poisson short-flow arrivals for the flow agent: the simulator's generator itself
//! (`netmodel::arrivals`), so a group draws exactly the simulator's arrival times and sizes.

pub use netmodel::arrivals::{Arrivals, ArrivalsConfig, SizeDist};
