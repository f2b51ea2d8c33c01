//! Workloads of the simulator: the application model (`netmodel::app`) and Poisson
//! short-flow arrivals with a size distribution (`netmodel::arrivals`), both shared with the
//! emulator's flow agent.

pub use netmodel::app::{AppAction, AppModel, OnOff};
pub use netmodel::arrivals::{Arrivals, ArrivalsConfig, SizeDist};

#[cfg(test)]
mod tests {
    use super::*;
    use netmodel::Rng;

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
