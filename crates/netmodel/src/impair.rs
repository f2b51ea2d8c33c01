//! Per-packet impairments of a link direction: delay jitter and random loss.
//!
//! Each element owns its own [`Rng`] stream derived from (experiment seed, stable link name,
//! element tag), so its pattern depends only on the packets that cross *this* link direction.

use serde::Deserialize;

use crate::Rng;

/// Extra per-packet delay added to the link's (scheduled) propagation delay.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum JitterConfig {
    /// Extra delay uniform in `[0, max]` (never negative; mean max/2).
    Uniform { max_ns: u64 },
    /// Extra delay normal with mean `mean` and s.d. `sd`; the packet's total propagation delay
    /// is clamped at 0 (a draw that would make it negative gives 0, as netem does).
    Normal {
        sd_ns: u64,
        #[serde(default)]
        mean_ns: i64,
    },
    /// netem's default (no distribution table): uniform in `[-jitter, +jitter]` around the
    /// delay, total clamped at 0.
    Netem { jitter_ns: u64 },
    /// A slowly varying extra delay: a stationary Gauss–Markov (Ornstein–Uhlenbeck) process
    /// with mean `mean`, s.d. `sd` and correlation time `tau` — two packets `Δt` apart have
    /// correlation `exp(−Δt/tau)`, so the delay wanders rather than jumping per packet (a radio
    /// link's scheduling and channel state). Read at each packet's departure; total clamped at 0.
    Ou {
        sd_ns: u64,
        tau_ns: u64,
        #[serde(default)]
        mean_ns: i64,
    },
}

/// A jitter sampler.
#[derive(Clone, Debug)]
pub struct Jitter {
    cfg: JitterConfig,
    rng: Rng,
    /// `ou`: the process's last value (ns, around 0) and the instant it was read.
    state: Option<(f64, u64)>,
}

impl Jitter {
    pub fn new(cfg: &JitterConfig, rng: Rng) -> Self {
        Jitter { cfg: cfg.clone(), rng, state: None }
    }

    /// A standard normal draw (Box–Muller, one of the pair; simplicity over speed).
    fn std_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.rng.next_f64(); // (0, 1]
        let u2 = self.rng.next_f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// The extra delay of a packet that departs at `t_ns` (may be negative for `normal`,
    /// `netem` and `ou`). Only `ou` depends on `t_ns`; calls come in non-decreasing time.
    pub fn sample(&mut self, t_ns: u64) -> i64 {
        match self.cfg {
            JitterConfig::Uniform { max_ns } => self.rng.below(max_ns + 1) as i64,
            JitterConfig::Netem { jitter_ns } => {
                self.rng.below(2 * jitter_ns + 1) as i64 - jitter_ns as i64
            }
            JitterConfig::Normal { sd_ns, mean_ns } => {
                let z = self.std_normal();
                mean_ns + (z * sd_ns as f64).round() as i64
            }
            JitterConfig::Ou { sd_ns, tau_ns, mean_ns } => {
                let sd = sd_ns as f64;
                let z = self.std_normal();
                // The exact transition over Δt (no discretisation error): the first read
                // draws from the stationary distribution.
                let x = match self.state {
                    None => sd * z,
                    Some((x0, t0)) => {
                        let dt = t_ns.saturating_sub(t0) as f64;
                        let a = if tau_ns == 0 { 0.0 } else { (-dt / tau_ns as f64).exp() };
                        x0 * a + sd * (1.0 - a * a).max(0.0).sqrt() * z
                    }
                };
                self.state = Some((x, t_ns));
                mean_ns + x.round() as i64
            }
        }
    }
}

/// Random loss model of a link direction, applied to each packet as it enters the link
/// (before the queue, as netem's loss at enqueue): a lost packet never occupies the queue.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum LossConfig {
    /// Independent loss with probability `p`.
    Bernoulli { p: f64 },
    /// Gilbert–Elliott, parameterised as netem's `gemodel p r 1-h 1-k`: `p` = P(good → bad),
    /// `r` = P(bad → good) per packet; `h` = P(a packet is *delivered* in the bad state),
    /// `k` = P(delivered in the good state). Defaults h = 0, k = 1 give the simple Gilbert
    /// model (every packet in the bad state lost, none in the good state). Stationary loss
    /// rate = π_G (1 − k) + π_B (1 − h) with π_B = p / (p + r); in the simple model the mean
    /// burst length is 1 / r packets. Each packet: lost according to the current state,
    /// then the state transitions.
    Gilbert {
        p: f64,
        r: f64,
        #[serde(default)]
        h: f64,
        #[serde(default = "one")]
        k: f64,
    },
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug)]
pub struct Loss {
    cfg: LossConfig,
    rng: Rng,
    bad: bool,
}

impl Loss {
    pub fn new(cfg: &LossConfig, rng: Rng) -> Self {
        Loss { cfg: cfg.clone(), rng, bad: false }
    }

    /// Whether the next packet is lost.
    pub fn lose(&mut self) -> bool {
        match self.cfg {
            LossConfig::Bernoulli { p } => p > 0.0 && self.rng.next_f64() < p,
            LossConfig::Gilbert { p, r, h, k } => {
                let deliver_p = if self.bad { h } else { k };
                let lost = self.rng.next_f64() >= deliver_p;
                let switch_p = if self.bad { r } else { p };
                if self.rng.next_f64() < switch_p {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }

    /// The long-run loss rate the model converges to.
    pub fn stationary_rate(&self) -> f64 {
        match self.cfg {
            LossConfig::Bernoulli { p } => p,
            LossConfig::Gilbert { p, r, h, k } => {
                if p + r == 0.0 {
                    return 1.0 - k;
                }
                let pb = p / (p + r);
                (1.0 - pb) * (1.0 - k) + pb * (1.0 - h)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rate_within_binomial_bounds() {
        for (p, seed) in [(0.01, 1), (0.1, 2), (0.5, 3)] {
            let n = 200_000u64;
            let mut l = Loss::new(&LossConfig::Bernoulli { p }, Rng::new(seed, 9));
            let k = (0..n).filter(|_| l.lose()).count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((k - n as f64 * p).abs() < 5.0 * sd, "p {p}: {k} losses, sd {sd}");
        }
        let mut l = Loss::new(&LossConfig::Bernoulli { p: 0.0 }, Rng::new(1, 1));
        assert!((0..10_000).all(|_| !l.lose()));
    }

    /// Loss indicator sequence → (loss rate, mean length of runs of consecutive losses).
    fn bursts(l: &mut Loss, n: usize) -> (f64, f64) {
        let (mut lost, mut runs, mut prev) = (0usize, 0usize, false);
        for _ in 0..n {
            let x = l.lose();
            if x {
                lost += 1;
                if !prev {
                    runs += 1;
                }
            }
            prev = x;
        }
        (lost as f64 / n as f64, lost as f64 / runs as f64)
    }

    #[test]
    fn gilbert_stationary_rate_and_burst_length_match_theory() {
        // Simple Gilbert: π_B = p/(p+r) = 0.01/0.26 = 0.03846; bursts geometric, mean 1/r = 4.
        let cfg = LossConfig::Gilbert { p: 0.01, r: 0.25, h: 0.0, k: 1.0 };
        let mut l = Loss::new(&cfg, Rng::new(5, 1));
        assert!((l.stationary_rate() - 0.01 / 0.26).abs() < 1e-12);
        let (rate, burst) = bursts(&mut l, 2_000_000);
        // ≈ 19 000 bursts: the rate's s.e. ≈ 0.0385·sqrt(var factor)/... stay within 5 %;
        // mean burst s.e. = sqrt(1-r)/r / sqrt(bursts) ≈ 0.025 → ±0.15 is 6 s.e.
        assert!((rate - 0.038_46).abs() < 0.002, "rate {rate}");
        assert!((burst - 4.0).abs() < 0.15, "burst {burst}");

        // With h = 0.5 half the bad-state packets survive and k = 0.99 adds 1 % good-state
        // loss: rate = 0.9615·0.01 + 0.03846·0.5 = 0.02885.
        let cfg = LossConfig::Gilbert { p: 0.01, r: 0.25, h: 0.5, k: 0.99 };
        let mut l = Loss::new(&cfg, Rng::new(6, 1));
        let expect = l.stationary_rate();
        assert!((expect - 0.028_85).abs() < 1e-4);
        let (rate, _) = bursts(&mut l, 2_000_000);
        assert!((rate - expect).abs() < 0.0015, "rate {rate} vs {expect}");
    }

    #[test]
    fn jitter_distributions_have_their_moments() {
        let n = 100_000;
        let mean_sd = |cfg: JitterConfig| {
            let mut j = Jitter::new(&cfg, Rng::new(1, 2));
            let v: Vec<f64> = (0..n).map(|i| j.sample(i as u64 * 1000) as f64).collect();
            let m = v.iter().sum::<f64>() / n as f64;
            let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64).sqrt();
            let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |a, &x| (a.0.min(x), a.1.max(x)));
            (m, sd, lo, hi)
        };
        let (m, sd, lo, hi) = mean_sd(JitterConfig::Uniform { max_ns: 1000 });
        assert!((m - 500.0).abs() < 5.0 && (sd - 288.7).abs() < 3.0 && lo >= 0.0 && hi <= 1000.0);
        let (m, sd, lo, hi) = mean_sd(JitterConfig::Netem { jitter_ns: 1000 });
        assert!(m.abs() < 10.0 && (sd - 577.4).abs() < 6.0 && lo >= -1000.0 && hi <= 1000.0);
        let (m, sd, _, _) = mean_sd(JitterConfig::Normal { sd_ns: 2000, mean_ns: 0 });
        assert!(m.abs() < 20.0 && (sd - 2000.0).abs() < 20.0, "{m} {sd}");
        // ou read every 1 µs with tau 10 µs: 10 000 correlation times, so the sample mean
        // has s.e. ≈ sd·sqrt(2·tau/T) ≈ 2000·0.014 = 28 ns and the sd converges as fast.
        let (m, sd, _, _) =
            mean_sd(JitterConfig::Ou { sd_ns: 2000, tau_ns: 10_000, mean_ns: 500 });
        assert!((m - 500.0).abs() < 120.0 && (sd - 2000.0).abs() < 100.0, "{m} {sd}");
    }

    #[test]
    fn ou_jitter_is_correlated_over_tau_and_not_beyond() {
        // Lag-k autocorrelation of reads 1 ms apart with tau = 20 ms: exp(-k/20).
        let cfg = JitterConfig::Ou { sd_ns: 1_000_000, tau_ns: 20_000_000, mean_ns: 0 };
        let mut j = Jitter::new(&cfg, Rng::new(3, 4));
        let v: Vec<f64> = (0..400_000u64).map(|i| j.sample(i * 1_000_000) as f64).collect();
        let var = v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64;
        let ac = |k: usize| {
            v.iter().zip(&v[k..]).map(|(a, b)| a * b).sum::<f64>() / (v.len() - k) as f64 / var
        };
        for (k, want) in [(1, (-0.05f64).exp()), (20, (-1.0f64).exp()), (100, (-5.0f64).exp())] {
            assert!((ac(k) - want).abs() < 0.04, "lag {k}: {} vs {want}", ac(k));
        }
        // Reads at the same instant repeat the value; a read far later is independent of it.
        let mut j = Jitter::new(&cfg, Rng::new(3, 5));
        let a = j.sample(0);
        assert_eq!(j.sample(0), a);
        // normal i.i.d. jitter has no memory at all
        let mut n = Jitter::new(&JitterConfig::Normal { sd_ns: 1_000_000, mean_ns: 0 }, Rng::new(3, 4));
        let w: Vec<f64> = (0..100_000u64).map(|i| n.sample(i * 1_000_000) as f64).collect();
        let c1 = w.iter().zip(&w[1..]).map(|(a, b)| a * b).sum::<f64>()
            / w.iter().map(|x| x * x).sum::<f64>();
        assert!(c1.abs() < 0.02, "{c1}");
    }
}
