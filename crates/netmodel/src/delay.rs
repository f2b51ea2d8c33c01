//! Variable propagation delay: schedules that give a link's one-way delay as a function of time.
//!
//! A schedule is pure data ([`DelaySchedule`], as it appears in the resolved experiment); a
//! [`DelayFn`] evaluates it. Both directions of a physical link are built from the same
//! schedule (and, for the random walk, the same seed and key), so they see the same sequence;
//! a direction with a `skew` sees every switch `skew` later (CoCo-Beholder changes r1's netem,
//! then r2's, ≈ 4 ms apart).

use serde::Deserialize;

use crate::{Nanos, Rng};

/// A delay schedule. All times and delays in ns.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum DelaySchedule {
    /// CoCo-Beholder's random walk (github.com/ZhenyaKh/coco-beholder, `compute_delay_steps` in
    /// variable_delay/src/test/test.py): the delay starts at `base`
    /// and at every multiple of `delta` moves by `+step` or `-step`, chosen uniformly among
    /// the moves that keep it in `[0, max]` (a one-move choice still consumes a random draw,
    /// as CPython 3's `random.choice` does). With `max = base + step` and `base < step` it is
    /// the square wave base, base+step, base, … whatever the seed.
    Walk {
        base_ns: u64,
        delta_ns: u64,
        step_ns: u64,
        max_ns: u64,
        /// Seed of the walk (the experiment seed unless the user gave one).
        seed: u64,
        /// Stable name of the physical link (e.g. `"r1-r2"`): the walk's random stream, so
        /// both directions walk together and adding a flow never changes the walk.
        #[serde(default)]
        key: String,
    },
    /// `low` for the first half period, `high` for the second, repeating.
    Square {
        low_ns: u64,
        high_ns: u64,
        period_ns: u64,
        /// Start with `high` instead.
        #[serde(default)]
        start_high: bool,
    },
    /// `mean + amplitude · sin(2π t / period + phase)`, clamped at 0; continuous.
    Sine {
        mean_ns: u64,
        amplitude_ns: u64,
        period_ns: u64,
        #[serde(default)]
        phase_rad: f64,
    },
    /// Explicit points `(t, delay)`, `t` strictly increasing and the first at 0: piecewise
    /// constant (each value holds until the next point) or, with `linear`, linearly
    /// interpolated between points (constant after the last).
    Series {
        points: Vec<(u64, u64)>,
        #[serde(default)]
        linear: bool,
    },
}

/// FNV-1a, 64 bit: stable ids from names (link names survive adding flows; numeric ids don't).
pub fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Random-stream tag of the delay walk (see [`Rng::new`]).
const WALK_STREAM: u64 = 0x5741_4c4b; // "WALK"

/// Evaluates a [`DelaySchedule`] at arbitrary (not necessarily increasing) times.
#[derive(Clone, Debug)]
pub struct DelayFn {
    sched: DelaySchedule,
    /// Random walk: the delay of interval i, generated on demand.
    walk: Vec<u64>,
    rng: Option<Rng>,
}

impl DelayFn {
    pub fn new(sched: &DelaySchedule) -> Self {
        let (walk, rng) = match sched {
            DelaySchedule::Walk { base_ns, seed, key, .. } => {
                (vec![*base_ns], Some(Rng::new(*seed, WALK_STREAM ^ stable_hash(key))))
            }
            _ => (Vec::new(), None),
        };
        DelayFn { sched: sched.clone(), walk, rng }
    }

    pub fn schedule(&self) -> &DelaySchedule {
        &self.sched
    }

    /// The walk's delay in interval `i` (CoCo's sign rule).
    fn walk_at(&mut self, i: usize) -> u64 {
        let DelaySchedule::Walk { step_ns, max_ns, .. } = self.sched else { unreachable!() };
        let rng = self.rng.as_mut().expect("walk rng");
        while self.walk.len() <= i {
            let d = *self.walk.last().unwrap();
            let mut signs = [0i8; 2];
            let mut n = 0;
            if d + step_ns <= max_ns {
                signs[n] = 1;
                n += 1;
            }
            if d >= step_ns {
                signs[n] = -1;
                n += 1;
            }
            // The config layer refuses walks that cannot move ("step is too big"); stay put
            // rather than panic if one gets here.
            let next = if n == 0 {
                d
            } else {
                match signs[rng.below(n as u64) as usize] {
                    1 => d + step_ns,
                    _ => d - step_ns,
                }
            };
            self.walk.push(next);
        }
        self.walk[i]
    }

    /// The delay a packet gets if its delay is taken at time `t`.
    pub fn at(&mut self, t: Nanos) -> Nanos {
        match self.sched {
            DelaySchedule::Walk { delta_ns, .. } => {
                let i = if delta_ns == 0 { 0 } else { (t / delta_ns) as usize };
                self.walk_at(i)
            }
            DelaySchedule::Square { low_ns, high_ns, period_ns, start_high } => {
                let half = (period_ns / 2).max(1);
                let second = (t / half) % 2 == 1;
                if second != start_high {
                    high_ns
                } else {
                    low_ns
                }
            }
            DelaySchedule::Sine { mean_ns, amplitude_ns, period_ns, phase_rad } => {
                let x = 2.0 * std::f64::consts::PI * (t as f64) / (period_ns.max(1) as f64) + phase_rad;
                let v = mean_ns as f64 + amplitude_ns as f64 * x.sin();
                v.max(0.0).round() as u64
            }
            DelaySchedule::Series { ref points, linear } => {
                if points.is_empty() {
                    return 0;
                }
                let i = points.partition_point(|&(pt, _)| pt <= t);
                if i == 0 {
                    return points[0].1;
                }
                let (t0, d0) = points[i - 1];
                if !linear || i == points.len() {
                    return d0;
                }
                let (t1, d1) = points[i];
                let f = (t - t0) as f64 / (t1 - t0) as f64;
                (d0 as f64 + f * (d1 as f64 - d0 as f64)).round() as u64
            }
        }
    }

    /// The schedule as `(t_start, delay)` steps that start before `end`: the exact switch
    /// instants for piecewise-constant schedules (walk, square, series), samples every
    /// 1/64 period for a sine and at every point of a linear series.
    pub fn steps_until(&mut self, end: Nanos) -> Vec<(Nanos, Nanos)> {
        let mut out: Vec<(Nanos, Nanos)> = Vec::new();
        let push = |t: Nanos, d: Nanos, out: &mut Vec<(Nanos, Nanos)>| {
            if out.last().is_none_or(|&(_, last)| last != d) {
                out.push((t, d));
            }
        };
        match self.sched.clone() {
            DelaySchedule::Walk { delta_ns, .. } => {
                if delta_ns == 0 {
                    push(0, self.walk_at(0), &mut out);
                } else {
                    let mut i = 0u64;
                    while i * delta_ns < end {
                        let d = self.walk_at(i as usize);
                        push(i * delta_ns, d, &mut out);
                        i += 1;
                    }
                }
            }
            DelaySchedule::Square { period_ns, .. } => {
                let half = (period_ns / 2).max(1);
                let mut t = 0;
                while t < end {
                    let d = self.at(t);
                    push(t, d, &mut out);
                    t += half;
                }
            }
            DelaySchedule::Sine { period_ns, .. } => {
                let dt = (period_ns / 64).max(1);
                let mut t = 0;
                while t < end {
                    let d = self.at(t);
                    push(t, d, &mut out);
                    t += dt;
                }
            }
            DelaySchedule::Series { points, .. } => {
                for (t, d) in points {
                    if t < end {
                        push(t, d, &mut out);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn walk(base: u64, delta: u64, step: u64, max: u64, seed: u64) -> DelayFn {
        DelayFn::new(&DelaySchedule::Walk {
            base_ns: base * MS,
            delta_ns: delta * MS,
            step_ns: step * MS,
            max_ns: max * MS,
            seed,
            key: "r1-r2".into(),
        })
    }

    #[test]
    fn walk_moves_by_step_and_stays_in_bounds_and_uses_both_signs() {
        let mut w = walk(30, 500, 10, 60, 7);
        let steps: Vec<u64> = (0..2000).map(|i| w.at(i * 500 * MS + 1)).collect();
        assert_eq!(steps[0], 30 * MS);
        let (mut ups, mut downs) = (0, 0);
        for p in steps.windows(2) {
            let diff = p[1] as i64 - p[0] as i64;
            assert!(diff == 10 * MS as i64 || diff == -(10 * MS as i64), "move {diff}");
            if diff > 0 { ups += 1 } else { downs += 1 }
        }
        assert!(steps.iter().all(|&d| d <= 60 * MS));
        // Interior states choose each sign with probability 1/2: both are frequent.
        assert!(ups > 600 && downs > 600, "ups {ups} downs {downs}");
        // At the bounds only one move is legal: 60 → 50, 0 → 10 always.
        for p in steps.windows(2) {
            if p[0] == 60 * MS {
                assert_eq!(p[1], 50 * MS);
            }
            if p[0] == 0 {
                assert_eq!(p[1], 10 * MS);
            }
        }
        // Constant within an interval, switching exactly at multiples of delta.
        assert_eq!(w.at(500 * MS - 1), 30 * MS);
        assert_eq!(w.at(500 * MS), steps[1]);
    }

    #[test]
    fn walk_sign_rule_matches_cocos_choice_over_legal_signs() {
        // Reproduce the rule by hand with the same stream: signs = [+1 if d+step<=max]
        // + [-1 if d-step>=0], d += step * signs[below(len)] (one draw even for one sign).
        let mut w = walk(20, 100, 10, 40, 3);
        let mut rng = Rng::new(3, WALK_STREAM ^ stable_hash("r1-r2"));
        let mut d: i64 = 20;
        for i in 0..500u64 {
            assert_eq!(w.at(i * 100 * MS), d as u64 * MS, "interval {i}");
            let mut signs = vec![];
            if d + 10 <= 40 {
                signs.push(1);
            }
            if d - 10 >= 0 {
                signs.push(-1);
            }
            d += 10 * signs[rng.below(signs.len() as u64) as usize];
        }
    }

    #[test]
    fn square_wave_is_the_walks_special_case_for_every_seed() {
        // base 0, step = max = 50 ms, delta 150 ms: 0, 50, 0, 50, … (period 2·delta).
        for seed in 0..20 {
            let mut w = walk(0, 150, 50, 50, seed);
            let seq: Vec<u64> = (0..10).map(|i| w.at(i * 150 * MS) / MS).collect();
            assert_eq!(seq, vec![0, 50, 0, 50, 0, 50, 0, 50, 0, 50]);
        }
        // base < step with a non-zero base: base, base+step, …
        let mut w = walk(5, 100, 20, 25, 9);
        let seq: Vec<u64> = (0..6).map(|i| w.at(i * 100 * MS + 50 * MS) / MS).collect();
        assert_eq!(seq, vec![5, 25, 5, 25, 5, 25]);
        // And the explicit square schedule gives the same sequence and switch instants.
        let mut s = DelayFn::new(&DelaySchedule::Square {
            low_ns: 0,
            high_ns: 50 * MS,
            period_ns: 300 * MS,
            start_high: false,
        });
        let mut w = walk(0, 150, 50, 50, 1);
        assert_eq!(s.steps_until(1000 * MS), w.steps_until(1000 * MS));
        assert_eq!(
            s.steps_until(700 * MS),
            vec![(0, 0), (150 * MS, 50 * MS), (300 * MS, 0), (450 * MS, 50 * MS), (600 * MS, 0)]
        );
    }

    #[test]
    fn same_seed_same_walk_other_seed_or_key_differs() {
        let seq = |seed, key: &str| {
            let mut w = DelayFn::new(&DelaySchedule::Walk {
                base_ns: 50,
                delta_ns: 1,
                step_ns: 1,
                max_ns: 100,
                seed,
                key: key.into(),
            });
            (0..200).map(|i| w.at(i)).collect::<Vec<_>>()
        };
        assert_eq!(seq(1, "r1-r2"), seq(1, "r1-r2"));
        assert_ne!(seq(1, "r1-r2"), seq(2, "r1-r2"));
        assert_ne!(seq(1, "r1-r2"), seq(1, "a1-r1"));
    }

    #[test]
    fn series_steps_and_linear_interpolation() {
        let pts = vec![(0, 10 * MS), (1000 * MS, 30 * MS), (3000 * MS, 20 * MS)];
        let mut step = DelayFn::new(&DelaySchedule::Series { points: pts.clone(), linear: false });
        assert_eq!(step.at(0), 10 * MS);
        assert_eq!(step.at(999 * MS), 10 * MS);
        assert_eq!(step.at(1000 * MS), 30 * MS);
        assert_eq!(step.at(2999 * MS), 30 * MS);
        assert_eq!(step.at(10_000 * MS), 20 * MS);
        let mut lin = DelayFn::new(&DelaySchedule::Series { points: pts.clone(), linear: true });
        assert_eq!(lin.at(500 * MS), 20 * MS);
        assert_eq!(lin.at(2000 * MS), 25 * MS);
        assert_eq!(lin.at(1000 * MS), 30 * MS);
        assert_eq!(lin.at(5000 * MS), 20 * MS);
        assert_eq!(step.steps_until(2000 * MS), pts[..2].to_vec());
    }

    #[test]
    fn sine_oscillates_around_the_mean() {
        let mut s = DelayFn::new(&DelaySchedule::Sine {
            mean_ns: 40 * MS,
            amplitude_ns: 10 * MS,
            period_ns: 1000 * MS,
            phase_rad: 0.0,
        });
        assert_eq!(s.at(0), 40 * MS);
        assert_eq!(s.at(250 * MS), 50 * MS);
        assert_eq!(s.at(750 * MS), 30 * MS);
        assert_eq!(s.at(1250 * MS), 50 * MS);
    }
}
