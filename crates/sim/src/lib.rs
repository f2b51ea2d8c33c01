//! ccbench's discrete-event simulator.
//!
//! * [`experiment`]: the resolved experiment (JSON from the Python config layer).
//! * [`engine`]: the event loop over [`netmodel`] links and TCP hosts.
//! * [`tcp`]: a TCP endpoint faithful to Linux defaults; [`cc`]: congestion control.
//! * [`output`]: the run's tables (recorded through `netmodel::records`) and counters.
//! * [`capture`]: optional pcapng capture with synthesised IPv4/TCP headers.
//! * [`noise`]: host and router timing noise (on unless the experiment asks for exact timing).
//! * [`workload`]: application models (rate-limited, on/off) and short-flow arrivals.

pub mod capture;
pub mod cc;
pub mod engine;
pub mod experiment;
pub mod noise;
pub mod output;
pub mod tcp;
pub mod workload;

pub use engine::Sim;
pub use experiment::Experiment;
pub use output::{Col, Output, Table};
