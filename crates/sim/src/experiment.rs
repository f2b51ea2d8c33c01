//! The resolved experiment as the simulator receives it (see docs/architecture.md): the
//! scenario both backends share (`netmodel::scenario`) with the simulator's TCP endpoint
//! settings, plus the simulator's host timing noise model. Produced by `ccbench.config`; every
//! value here is already validated and in base units.

use std::ops::{Deref, DerefMut};

use serde::Deserialize;

use crate::noise::NoiseConfig;
use crate::tcp::TcpConfig;

pub use netmodel::scenario::{Node, UDP_SCHEME};

pub type Scenario = netmodel::scenario::Scenario<TcpConfig>;
pub type FlowConfig = netmodel::scenario::Flow<TcpConfig>;

/// The shared scenario (reached through `Deref`) and what only the simulator models.
#[derive(Clone, Debug, Deserialize)]
pub struct Experiment {
    #[serde(flatten)]
    pub scenario: Scenario,
    /// Host and router timing noise; absent = exact timing (see [`crate::noise`]). The
    /// emulation backend ignores it: its hosts are real.
    #[serde(default)]
    pub host_noise: Option<NoiseConfig>,
}

impl Deref for Experiment {
    type Target = Scenario;
    fn deref(&self) -> &Scenario {
        &self.scenario
    }
}

impl DerefMut for Experiment {
    fn deref_mut(&mut self) -> &mut Scenario {
        &mut self.scenario
    }
}

impl Experiment {
    /// The scenario's checks and the noise model's.
    pub fn validate(&self) -> Result<(), String> {
        self.scenario.validate()?;
        if let Some(n) = &self.host_noise {
            n.validate()?;
        }
        Ok(())
    }
}

/// Parse and validate a resolved experiment (JSON text).
pub fn from_json(s: &str) -> Result<Experiment, String> {
    let mut e: Experiment = serde_json::from_str(s).map_err(|e| format!("resolved experiment: {e}"))?;
    e.tcp.mss = e.mss;
    e.validate()?;
    Ok(e)
}
