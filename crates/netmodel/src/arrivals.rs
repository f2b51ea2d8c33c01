//! Poisson short-flow arrivals with a flow-size distribution (fixed, exponential, Pareto,
//! empirical CDF), shared by the simulator (which opens a connection per arrival) and the
//! emulator's flow agent (which does the same on real sockets): both draw the same arrival
//! times and sizes from a [`Rng`] stream of the experiment seed keyed by the group's template
//! flow, in the same order (a gap at the start; at each arrival its size, then the next gap).
//!
//! Pure: no clock; callers turn gaps into times.

use serde::Deserialize;

use crate::Rng;

/// `flows[].arrivals` of the resolved experiment: each arrival is a new connection over the
/// template flow's hosts and route.
#[derive(Clone, Debug, Deserialize)]
pub struct ArrivalsConfig {
    /// Mean arrivals per second (Poisson process).
    pub rate_per_s: f64,
    pub size: SizeDist,
}

/// Flow-size distribution (bytes of application payload; every draw is at least 1).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SizeDist {
    Fixed { bytes: u64 },
    Exponential { mean_bytes: f64 },
    /// Pareto with the given mean and shape α > 1: scale x_m = mean·(α−1)/α, draw x_m·U^(−1/α).
    Pareto { mean_bytes: f64, shape: f64 },
    /// Empirical CDF: `(bytes, cumulative probability)` points, increasing in both, the last at
    /// probability 1; sizes between points are interpolated linearly (as ns-3's
    /// `EmpiricalRandomVariable` with interpolation and the pFabric/DCTCP workload generators).
    Cdf { points: Vec<(f64, f64)> },
}

impl SizeDist {
    pub fn validate(&self) -> Result<(), String> {
        let ok = match self {
            SizeDist::Fixed { bytes } => *bytes > 0,
            SizeDist::Exponential { mean_bytes } => mean_bytes.is_finite() && *mean_bytes >= 1.0,
            SizeDist::Pareto { mean_bytes, shape } => {
                mean_bytes.is_finite() && *mean_bytes >= 1.0 && shape.is_finite() && *shape > 1.0
            }
            SizeDist::Cdf { points } => {
                !points.is_empty()
                    && points.iter().all(|&(x, p)| x.is_finite() && x >= 0.0 && (0.0..=1.0).contains(&p))
                    && points.windows(2).all(|w| w[1].0 >= w[0].0 && w[1].1 >= w[0].1)
                    && (points.last().unwrap().1 - 1.0).abs() < 1e-9
            }
        };
        if ok { Ok(()) } else { Err(format!("invalid size distribution {self:?}")) }
    }

    /// Mean of the distribution (bytes), before rounding.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed { bytes } => *bytes as f64,
            SizeDist::Exponential { mean_bytes } | SizeDist::Pareto { mean_bytes, .. } => *mean_bytes,
            SizeDist::Cdf { points } => {
                let (mut m, mut px, mut pp) = (0.0, points[0].0, 0.0);
                for &(x, p) in points {
                    m += (p - pp) * (x + px) / 2.0;
                    px = x;
                    pp = p;
                }
                m
            }
        }
    }

    /// One draw (bytes, ≥ 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        // 1 − U ∈ (0, 1]: never 0, so logs and powers stay finite.
        let u = 1.0 - rng.next_f64();
        let x = match self {
            SizeDist::Fixed { bytes } => return *bytes,
            SizeDist::Exponential { mean_bytes } => -mean_bytes * u.ln(),
            SizeDist::Pareto { mean_bytes, shape } => {
                let xm = mean_bytes * (shape - 1.0) / shape;
                xm * u.powf(-1.0 / shape)
            }
            SizeDist::Cdf { points } => {
                let q = 1.0 - u; // uniform in [0, 1)
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

/// Poisson arrival process of one group.
pub struct Arrivals {
    rate_per_ns: f64,
    pub size: SizeDist,
    rng: Rng,
}

/// Random-stream tag of a group's arrivals (xor the template flow id).
const ARRIVALS_STREAM: u64 = 0x4152_5249_5641_4c53; // "ARRIVALS"

impl Arrivals {
    pub fn new(cfg: &ArrivalsConfig, seed: u64, template_flow: u32) -> Self {
        Arrivals {
            rate_per_ns: cfg.rate_per_s / 1e9,
            size: cfg.size.clone(),
            rng: Rng::new(seed, ARRIVALS_STREAM ^ template_flow as u64),
        }
    }

    /// Time to the next arrival (ns, ≥ 1): exponential with mean 1/rate.
    pub fn next_gap(&mut self) -> u64 {
        let u = 1.0 - self.rng.next_f64();
        ((-u.ln() / self.rate_per_ns).round() as u64).max(1)
    }

    pub fn next_size(&mut self) -> u64 {
        self.size.sample(&mut self.rng)
    }
}
