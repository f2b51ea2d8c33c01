//! The resolved experiment as the simulator receives it (see docs/architecture.md): the
//! scenario both backends share (`netmodel::scenario`) with the simulator's TCP endpoint
//! settings. Produced by `ccbench.config`; every value here is already validated and in base
//! units.

use crate::tcp::TcpConfig;

pub use netmodel::scenario::{Node, UDP_SCHEME};

pub type Experiment = netmodel::scenario::Scenario<TcpConfig>;
pub type FlowConfig = netmodel::scenario::Flow<TcpConfig>;

/// Parse and validate a resolved experiment (JSON text).
pub fn from_json(s: &str) -> Result<Experiment, String> {
    let mut e: Experiment = serde_json::from_str(s).map_err(|e| format!("resolved experiment: {e}"))?;
    e.tcp.mss = e.mss;
    e.validate()?;
    Ok(e)
}
