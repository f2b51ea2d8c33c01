//! Application workloads: what the application on a flow's sending host writes, and when.
//!
//! * [`AppModel`]: application-limited streams (`app_rate_bps`: writes of one chunk at exact
//!   instants `start + k·chunk·8/rate`, no drift) and on/off sources (`onoff`: alternately `on`
//!   for `on_ns` — writing at the app rate, or an unlimited backlog — and `off` for `off_ns`,
//!   when nothing is written and, for a backlogged source, unsent data is withdrawn).
//! * [`SizeDist`] and [`Arrivals`]: Poisson short-flow arrivals with a size distribution
//!   (fixed, exponential, Pareto, empirical CDF), drawn from a [`netmodel::Rng`] stream of the
//!   experiment seed keyed by the group's template flow.
//!
//! Pure: callers pass `now`; no allocation after construction.

use netmodel::Rng;
use serde::Deserialize;

/// `flows[].onoff` of the resolved experiment.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub struct OnOff {
    pub on_ns: u64,
    pub off_ns: u64,
}

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

/// What the application does at one of its instants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppAction {
    /// Write this many bytes (one chunk; `u64::MAX` = an unlimited backlog).
    Write(u64),
    /// End of an on period of a backlogged source: stop writing, withdraw unsent data.
    Pause,
    /// End of an on period of a rate-limited source: just stop writing.
    Idle,
}

/// The application of one flow: a rate (or an unlimited backlog), optionally on/off.
#[derive(Clone, Debug)]
pub struct AppModel {
    rate_bps: Option<u64>,
    onoff: Option<OnOff>,
    chunk: u64,
    /// Start of the current on period (of the flow, without on/off).
    period_start: u64,
    /// Writes done in the current on period.
    k: u64,
    on: bool,
}

impl AppModel {
    /// `chunk`: bytes per write of a rate-limited application.
    pub fn new(rate_bps: Option<u64>, onoff: Option<OnOff>, chunk: u64) -> Self {
        AppModel { rate_bps, onoff, chunk: chunk.max(1), period_start: 0, k: 0, on: false }
    }

    /// The application's action at `now` (its start time, then each instant this returned)
    /// and the next instant it wants to act at.
    pub fn step(&mut self, now: u64) -> (AppAction, Option<u64>) {
        if !self.on {
            self.on = true;
            self.period_start = now;
            self.k = 0;
        }
        let end = self.onoff.map(|o| self.period_start + o.on_ns);
        if let (Some(e), Some(o)) = (end, self.onoff) {
            if now >= e {
                self.on = false;
                let act = if self.rate_bps.is_none() { AppAction::Pause } else { AppAction::Idle };
                return (act, Some(e + o.off_ns));
            }
        }
        match self.rate_bps {
            None => (AppAction::Write(u64::MAX), end),
            Some(r) => {
                self.k += 1;
                let mut next = self.period_start
                    + (self.k as u128 * self.chunk as u128 * 8_000_000_000 / r as u128) as u64;
                if let Some(e) = end {
                    next = next.min(e);
                }
                (AppAction::Write(self.chunk), Some(next))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rate_app_writes_at_exact_instants() {
        // 1448 B per write at 11.584 Mbit/s = one write per ms exactly.
        let mut a = AppModel::new(Some(11_584_000), None, 1448);
        let (act, next) = a.step(5 * MS);
        assert_eq!(act, AppAction::Write(1448));
        assert_eq!(next, Some(6 * MS));
        let mut t = next.unwrap();
        for _ in 0..999 {
            t = a.step(t).1.unwrap();
        }
        assert_eq!(t, 1005 * MS);
    }

    #[test]
    fn onoff_backlogged_alternates_write_and_pause() {
        let mut a = AppModel::new(None, Some(OnOff { on_ns: 1000 * MS, off_ns: 5000 * MS }), 1448);
        assert_eq!(a.step(0), (AppAction::Write(u64::MAX), Some(1000 * MS)));
        assert_eq!(a.step(1000 * MS), (AppAction::Pause, Some(6000 * MS)));
        assert_eq!(a.step(6000 * MS), (AppAction::Write(u64::MAX), Some(7000 * MS)));
    }

    #[test]
    fn onoff_with_rate_writes_only_in_on_periods() {
        // 1 write per ms, on 10 ms, off 20 ms: 10 writes per period, then idle until 30 ms.
        let mut a = AppModel::new(Some(11_584_000), Some(OnOff { on_ns: 10 * MS, off_ns: 20 * MS }), 1448);
        let (mut t, mut writes) = (0, 0);
        loop {
            let (act, next) = a.step(t);
            match act {
                AppAction::Write(_) => writes += 1,
                AppAction::Idle => {
                    assert_eq!((t, writes), (10 * MS, 10));
                    assert_eq!(next, Some(30 * MS));
                    break;
                }
                AppAction::Pause => panic!("a rate-limited source does not withdraw data"),
            }
            t = next.unwrap();
        }
        assert_eq!(a.step(30 * MS), (AppAction::Write(1448), Some(31 * MS)));
    }

    #[test]
    fn size_distributions_have_their_means() {
        let n = 200_000;
        let mut rng = Rng::new(7, 1);
        let mean = |d: &SizeDist, rng: &mut Rng| (0..n).map(|_| d.sample(rng) as f64).sum::<f64>() / n as f64;
        let exp = SizeDist::Exponential { mean_bytes: 50_000.0 };
        let m = mean(&exp, &mut rng);
        assert!((m / 50_000.0 - 1.0).abs() < 0.01, "exponential mean {m}");
        // Pareto with a finite variance (α = 2.5) converges fast enough for a 2 % check.
        let par = SizeDist::Pareto { mean_bytes: 100_000.0, shape: 2.5 };
        let m = mean(&par, &mut rng);
        assert!((m / 100_000.0 - 1.0).abs() < 0.02, "pareto mean {m}");
        // Pareto minimum is x_m = mean·(α−1)/α.
        assert!((0..1000).all(|_| par.sample(&mut rng) >= 60_000));
        let cdf = SizeDist::Cdf { points: vec![(1000.0, 0.0), (1000.0, 0.5), (3000.0, 1.0)] };
        assert_eq!(cdf.mean(), 1500.0);
        let m = mean(&cdf, &mut rng);
        assert!((m / 1500.0 - 1.0).abs() < 0.01, "cdf mean {m}");
        assert!(cdf.validate().is_ok());
        assert!(SizeDist::Cdf { points: vec![(1.0, 0.5)] }.validate().is_err());
        assert!(SizeDist::Pareto { mean_bytes: 1e5, shape: 1.0 }.validate().is_err());
    }

    #[test]
    fn poisson_gaps_have_mean_one_over_rate() {
        let cfg = ArrivalsConfig { rate_per_s: 20.0, size: SizeDist::Fixed { bytes: 1 } };
        let mut a = Arrivals::new(&cfg, 1, 0);
        let n = 100_000;
        let gaps: Vec<u64> = (0..n).map(|_| a.next_gap()).collect();
        let mean = gaps.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / 50e6 - 1.0).abs() < 0.01, "mean gap {mean}");
        // Exponential: P(gap > mean) = e^-1.
        let frac = gaps.iter().filter(|&&g| g as f64 > 50e6).count() as f64 / n as f64;
        assert!((frac - (-1.0f64).exp()).abs() < 0.01, "{frac}");
        // Same seed and template flow → same sequence; another template → another.
        let mut b = Arrivals::new(&cfg, 1, 0);
        let mut c = Arrivals::new(&cfg, 1, 1);
        let again: Vec<u64> = (0..10).map(|_| b.next_gap()).collect();
        assert_eq!(&again[..], &gaps[..10]);
        assert_ne!((0..10).map(|_| c.next_gap()).collect::<Vec<_>>(), again);
    }
}
