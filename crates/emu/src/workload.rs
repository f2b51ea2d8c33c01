//! Poisson short-flow arrivals for the flow agent: the simulator's generator
//! (crates/sim/src/workload.rs) re-stated over the same `netmodel::Rng` stream (experiment
//! seed, stream "ARRIVALS" xor the template flow id) and the same draw order (a gap at the
//! start; at each arrival its size, then the next gap), so a group draws the simulator's
//! arrival times and sizes.

use netmodel::Rng;
use serde::Deserialize;

/// `flows[].arrivals` of the resolved experiment.
#[derive(Clone, Debug, Deserialize)]
pub struct ArrivalsConfig {
    pub rate_per_s: f64,
    pub size: SizeDist,
}

/// Flow-size distribution (payload bytes, ≥ 1), as the simulator's `SizeDist`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SizeDist {
    Fixed { bytes: u64 },
    Exponential { mean_bytes: f64 },
    Pareto { mean_bytes: f64, shape: f64 },
    Cdf { points: Vec<(f64, f64)> },
}

impl SizeDist {
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = 1.0 - rng.next_f64();
        let x = match self {
            SizeDist::Fixed { bytes } => return *bytes,
            SizeDist::Exponential { mean_bytes } => -mean_bytes * u.ln(),
            SizeDist::Pareto { mean_bytes, shape } => mean_bytes * (shape - 1.0) / shape * u.powf(-1.0 / shape),
            SizeDist::Cdf { points } => {
                let q = 1.0 - u;
                let i = points.partition_point(|&(_, p)| p <= q);
                if i == 0 {
                    points[0].0
                } else if i >= points.len() {
                    points[points.len() - 1].0
                } else {
                    let (x0, p0) = points[i - 1];
                    let (x1, p1) = points[i];
                    x0 + (x1 - x0) * (q - p0) / (p1 - p0)
                }
            }
        };
        (x.round() as u64).max(1)
    }
}

const ARRIVALS_STREAM: u64 = 0x4152_5249_5641_4c53; // "ARRIVALS", as the simulator

pub struct Arrivals {
    rate_per_ns: f64,
    size: SizeDist,
    rng: Rng,
}

impl Arrivals {
    pub fn new(cfg: &ArrivalsConfig, seed: u64, template_flow: u32) -> Self {
        Arrivals {
            rate_per_ns: cfg.rate_per_s / 1e9,
            size: cfg.size.clone(),
            rng: Rng::new(seed, ARRIVALS_STREAM ^ template_flow as u64),
        }
    }

    pub fn next_gap(&mut self) -> u64 {
        let u = 1.0 - self.rng.next_f64();
        ((-u.ln() / self.rate_per_ns).round() as u64).max(1)
    }

    pub fn next_size(&mut self) -> u64 {
        self.size.sample(&mut self.rng)
    }
}
