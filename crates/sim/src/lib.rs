//! ccbench's discrete-event simulator.
pub mod cc;
pub mod tcp;
