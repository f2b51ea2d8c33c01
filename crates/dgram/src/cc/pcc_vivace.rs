//! `pcc-vivace`: PCC Vivace, online-learning rate control with a latency-aware utility.
//!
//! Sources: M. Dong et al., "PCC Vivace: Online-Learning Congestion Control", NSDI 2018, §3
//! (utility `u(x) = x^t − b·x·dRTT/dT − c·x·L`, t = 0.9, b = 900, c = 11.35, x in Mbit/s),
//! §4 (gradient ascent: probe r(1+ε) and r(1−ε), ε = 0.05; rate change θ0·m·γ with a
//! confidence amplifier m that grows with consecutive moves in one direction; a dynamic
//! change boundary ω = ω0 + k·δ on |Δr|/r that widens while the boundary keeps clipping and
//! resets when the direction flips). Reference implementation: github.com/PCCproject/PCC-Uspace,
//! `src/pcc/pcc_vivace_sender.cpp` (`ComputeRateChange`, `EnterDecisionMade`, `EnterProbing`,
//! `CanMakeDecision`), `src/pcc/pcc_sender.cpp` (monitor interval = one minimum RTT, the
//! STARTING doubling and the halving when it ends, initial rate 10 packets per 100 ms rescaled
//! by the first RTT sample), `src/pcc/pcc_utility_manager.cpp` (`CalculateUtilityProportional`:
//! RTT gradient by least squares over the interval's packets, negative gradients count as 0).
//! Constants from those files: θ0 = 1 Mbit/s per unit of utility gradient, amplifier
//! `((rounds+1)/2)^1.2` (integer halving as in the code), ω0 = 0.05, δ = 0.05, minimum change
//! and minimum rate 0.5 Mbit/s, "Mbit" = 2^20 bits.
//!
//! States (as the reference): STARTING doubles the rate after each monitor interval whose
//! utility beat the last; on the first that does not, the rate halves and PROBING begins.
//! PROBING sends `probe-groups` pairs of intervals at r(1±ε) in a seeded random order; when a
//! majority of pairs agree on the better direction the sender moves (DECISION_MADE) by the
//! gradient-derived change, then keeps moving one interval at a time while each step's
//! utility change agrees with the direction, and otherwise steps back and probes again.
//!
//! Differences from the reference: loss comes from the transport's detection (three later
//! packets acknowledged or a timeout) rather than UDT's NAKs; intervals never extend themselves
//! for want of reliable RTT samples (the reference doubles an interval once when fewer than
//! 80 % of its samples are reliable); the master branch's Proteus-era RTT-deviation tolerance
//! and trending filters are left out (they belong to Proteus, NSDI'20). Pantheon's `vivace`
//! runs the older NSDI-2018 branch (`pcc-gradient/sender/app/pcc.h`, started with latency
//! argument 1) whose utility differs: loss is charged 1·x·L below 3 % loss and 11.35·x·L above,
//! and the RTT gradient, floored to steps of 0.02, is charged 11330·x·dRTT/dT; its amplifier is
//! a piecewise table and its boundary 0.05 + 0.06·k with a 1.3 Mbit/s floor. Set
//! `latency-coef` / `loss-coef` to approach it; the piecewise terms are not reproduced.

use super::pcc_mi::{pair_order, Mi, MiQueue, MBIT};
use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};
use netmodel::Rng;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Starting,
    Probing,
    Decision,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    rate: f64,
    utility: f64,
}

pub struct Vivace {
    exponent: f64,
    latency_coef: f64,
    loss_coef: f64,
    eps: f64,
    theta: f64,
    omega0: f64,
    delta: f64,
    min_rate: f64,
    min_change: f64,
    groups: usize,
    mode: Mode,
    rate: f64,
    rounds: u32,
    increase: bool,
    k: u32,
    latest: Sample,
    have_rtt: bool,
    min_rtt_ns: u64,
    mis: MiQueue,
    /// Results of the useful intervals of the current probing round, by probe index.
    probes: Vec<Option<Sample>>,
    probe_plan: Vec<bool>, // per probe index: higher rate?
    last_utility: f64,
    rng: Rng,
}

impl Vivace {
    fn utility(&self, m: &Mi) -> f64 {
        let s = m.stats();
        let x = s.x_bps / MBIT;
        x.powf(self.exponent) - self.latency_coef * x * s.rtt_gradient.max(0.0) - self.loss_coef * x * s.loss
    }

    fn plan_probes(&mut self) {
        self.probes = vec![None; 2 * self.groups];
        self.probe_plan = pair_order(&mut self.rng, self.groups);
    }

    /// Direction each probe pair votes for: true = the higher rate had the higher utility.
    fn votes(&self) -> Vec<bool> {
        (0..self.groups)
            .map(|g| {
                let (a, b) = (self.probes[2 * g].unwrap(), self.probes[2 * g + 1].unwrap());
                if a.utility > b.utility {
                    a.rate > b.rate
                } else {
                    a.rate < b.rate
                }
            })
            .collect()
    }

    fn rate_change(&mut self, samples: &[Sample]) -> f64 {
        let (dr, du) = if self.mode == Mode::Probing {
            let dr = (samples[0].rate - samples[1].rate).abs();
            let votes = self.votes();
            let mut du = 0.0;
            for (g, v) in votes.iter().enumerate() {
                if *v == self.increase {
                    du += (samples[2 * g].utility - samples[2 * g + 1].utility).abs();
                }
            }
            (dr, du / self.groups as f64)
        } else {
            ((samples[0].rate - self.latest.rate).abs(), (samples[0].utility - self.latest.utility).abs())
        };
        let gradient = if dr > 0.0 { MBIT * du / dr } else { 0.0 };
        let mut change = gradient * MBIT * self.theta;
        if self.mode == Mode::Decision {
            change *= (((self.rounds + 1) / 2) as f64).powf(1.2);
        } else {
            self.k = 0;
        }
        let bound = self.rate * (self.omega0 + self.delta * self.k as f64);
        if change > bound {
            change = bound;
            self.k += 1;
        } else if self.k > 0 {
            self.k -= 1;
        }
        change.max(self.min_change)
    }

    fn enter_probing(&mut self) {
        self.mode = Mode::Probing;
        self.rounds = 1;
        self.plan_probes();
        self.mis.mark_all_useless();
    }

    fn enter_decision(&mut self, samples: &[Sample]) {
        if self.mode == Mode::Probing {
            self.rate *= if self.increase { 1.0 + self.eps } else { 1.0 - self.eps };
            self.rounds = 1;
        } else {
            self.rounds += 1;
        }
        let change = self.rate_change(samples);
        self.rate += if self.increase { change } else { -change };
        if self.rate < self.min_rate {
            self.rate = self.min_rate;
            self.k = 0;
            self.mode = Mode::Probing;
            self.rounds = 1;
            self.plan_probes();
        } else {
            self.mode = Mode::Decision;
        }
        self.mis.mark_all_useless();
    }

    fn on_result(&mut self, m: Mi) {
        let u = self.utility(&m);
        self.last_utility = u;
        let s = Sample { rate: m.rate_bps, utility: u };
        match self.mode {
            Mode::Starting => {
                if u > self.latest.utility {
                    self.rate *= 2.0;
                    self.latest = s;
                    self.rounds += 1;
                } else {
                    self.rate *= 0.5;
                    self.enter_probing();
                }
            }
            Mode::Probing => {
                let i = m.label as usize;
                if i < self.probes.len() {
                    self.probes[i] = Some(s);
                }
                if self.probes.iter().all(|p| p.is_some()) {
                    let samples: Vec<Sample> = self.probes.iter().map(|p| p.unwrap()).collect();
                    let votes = self.votes();
                    let up = votes.iter().filter(|v| **v).count();
                    let down = votes.len() - up;
                    if up > self.groups / 2 || down == self.groups {
                        self.increase = up > down;
                        for (g, v) in votes.iter().enumerate() {
                            if *v == self.increase {
                                let (a, b) = (samples[2 * g], samples[2 * g + 1]);
                                self.latest = if a.utility > b.utility { a } else { b };
                            }
                        }
                        self.enter_decision(&samples);
                    } else {
                        self.rounds += 1;
                        self.plan_probes();
                        self.mis.mark_all_useless();
                    }
                    if self.rate <= self.min_rate && (self.rounds > 1 || self.mode == Mode::Decision) {
                        self.rate = self.min_rate;
                        self.k = 0;
                        self.rounds = 1;
                        self.mode = Mode::Starting;
                        self.latest = Sample { rate: 0.0, utility: f64::NEG_INFINITY };
                    }
                }
            }
            Mode::Decision => {
                let agrees = ((u > self.latest.utility) == (s.rate > self.latest.rate)) == self.increase;
                if agrees && u != self.latest.utility && s.rate != self.latest.rate {
                    self.enter_decision(&[s]);
                    self.latest = s;
                } else {
                    self.rounds = 1;
                    let change = self.rate_change(&[s]);
                    self.rate += if self.increase { -change } else { change };
                    if self.rate < self.min_rate {
                        self.rate = self.min_rate;
                        self.k = 0;
                    }
                    self.enter_probing();
                }
            }
        }
    }

    /// Rate and usefulness of the interval about to open.
    fn next_interval(&self) -> (f64, bool, u32) {
        let pending = self.mis.useful_pending();
        match self.mode {
            Mode::Probing => {
                let opened = self.probes.len() - self.probes.iter().filter(|p| p.is_none()).count();
                let i = opened + pending;
                if i < self.probes.len() {
                    let hi = self.probe_plan[i];
                    let r = self.rate * if hi { 1.0 + self.eps } else { 1.0 - self.eps };
                    (r, true, i as u32)
                } else {
                    (self.rate, false, 0)
                }
            }
            _ => (self.rate, pending == 0 && self.have_rtt, 0),
        }
    }
}

impl DgramCc for Vivace {
    fn name(&self) -> &'static str {
        "pcc-vivace"
    }
    fn on_send(&mut self, now: u64, seq: u64, bytes: u32, _inflight: u64) {
        let due = match self.mis.current() {
            None => true,
            Some(m) => self.have_rtt && now - m.start_ns >= self.min_rtt_ns && m.pkts >= 5,
        };
        if due {
            let (r, useful, label) = self.next_interval();
            self.mis.open(now, r, useful, label);
        }
        self.mis.on_send(now, seq, bytes);
    }
    fn on_ack(&mut self, a: &Acked) {
        if !self.have_rtt {
            self.have_rtt = true;
            if a.rtt_ns < 100_000_000 {
                self.rate *= 100e6 / a.rtt_ns.max(1) as f64;
            }
        }
        self.min_rtt_ns = self.min_rtt_ns.min(a.rtt_ns);
        self.mis.on_ack(a.seq, a.sent_ns, a.rtt_ns);
        while let Some(m) = self.mis.pop_useful() {
            self.on_result(m);
        }
    }
    fn on_loss(&mut self, l: &Lost) {
        self.mis.on_loss(l.seq, l.bytes);
        while let Some(m) = self.mis.pop_useful() {
            self.on_result(m);
        }
    }
    fn control(&self) -> Control {
        let r = self.mis.current().map_or(self.rate, |m| m.rate_bps);
        Control { rate_bps: Some(r), cwnd_bytes: None }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_mbps", self.rate / 1e6));
        out.push(("mode", self.mode as u8 as f64));
        out.push(("utility", self.last_utility));
        out.push(("boundary_k", self.k as f64));
    }
}

static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "exponent", default: 0.9, doc: "t: utility exponent of the sending rate" },
    ParamInfo { name: "latency-coef", default: 900.0, doc: "b: weight of the RTT gradient" },
    ParamInfo { name: "loss-coef", default: 11.35, doc: "c: weight of the loss rate" },
    ParamInfo { name: "probe-step", default: 0.05, doc: "ε: probing rates r(1±ε)" },
    ParamInfo { name: "probe-groups", default: 2.0, doc: "pairs of probing intervals per decision" },
    ParamInfo { name: "theta", default: 1.0, doc: "θ0: Mbit/s of rate change per unit utility gradient" },
    ParamInfo { name: "boundary", default: 0.05, doc: "ω0: initial bound on |Δr|/r" },
    ParamInfo { name: "boundary-step", default: 0.05, doc: "δ: bound growth per consecutive clip" },
    ParamInfo { name: "min-rate-mbps", default: 0.5, doc: "smallest sending rate, Mbit/s (2^20 bits)" },
    ParamInfo { name: "min-change-mbps", default: 0.5, doc: "smallest rate change, Mbit/s (2^20 bits)" },
];

fn make(p: &Params, seed: u64) -> Result<Box<dyn DgramCc>, String> {
    let groups = p.int("probe-groups", 2, 1, 10)? as usize;
    let mut v = Vivace {
        exponent: p.float("exponent", 0.9, 0.1, 1.0)?,
        latency_coef: p.float("latency-coef", 900.0, 0.0, 1e6)?,
        loss_coef: p.float("loss-coef", 11.35, 0.0, 1e6)?,
        eps: p.float("probe-step", 0.05, 0.001, 0.5)?,
        theta: p.float("theta", 1.0, 0.001, 1000.0)?,
        omega0: p.float("boundary", 0.05, 0.001, 1.0)?,
        delta: p.float("boundary-step", 0.05, 0.0, 1.0)?,
        min_rate: p.float("min-rate-mbps", 0.5, 0.01, 1e5)? * MBIT,
        min_change: p.float("min-change-mbps", 0.5, 0.0, 1e5)? * MBIT,
        groups,
        mode: Mode::Starting,
        rate: 10.0 * 1500.0 * 8.0 / 0.1,
        rounds: 1,
        increase: true,
        k: 0,
        latest: Sample { rate: 0.0, utility: f64::NEG_INFINITY },
        have_rtt: false,
        min_rtt_ns: u64::MAX,
        mis: MiQueue::default(),
        probes: Vec::new(),
        probe_plan: Vec::new(),
        last_utility: 0.0,
        rng: Rng::new(seed, 0x7669_7661),
    };
    v.plan_probes();
    Ok(Box::new(v))
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "pcc-vivace",
    description: "PCC Vivace: gradient ascent on a latency-aware utility over monitor intervals",
    source: "Dong et al., NSDI 2018 §3-4; github.com/PCCproject/PCC-Uspace src/pcc/pcc_vivace_sender.cpp, pcc_sender.cpp, pcc_utility_manager.cpp",
    params: PARAMS,
    make,
}];

#[cfg(test)]
mod tests {
    use super::super::make as mk;
    use super::super::testlink::{Link, SEC};

    fn vivace(seed: u64) -> Box<dyn super::DgramCc> {
        mk("pcc-vivace", &serde_json::Value::Null, seed).unwrap()
    }

    /// On a 20 Mbit/s, 30 ms link with a BDP-sized buffer (50 packets), Vivace converges to
    /// most of the link and keeps the queue short: its utility charges any RTT growth.
    #[test]
    fn converges_with_a_short_queue() {
        for seed in [1, 2, 3] {
            let mut l = Link::new(20.0, 30.0, 50, seed);
            let f = l.add(vivace(seed), 0, 40 * SEC);
            l.run(40 * SEC);
            let t = l.tput_bps(f, 10 * SEC, 40 * SEC) / 20e6;
            let q50 = l.owd_ms(f, 10 * SEC, 40 * SEC, 0.5) - 15.0;
            let q95 = l.owd_ms(f, 10 * SEC, 40 * SEC, 0.95) - 15.0;
            eprintln!("seed {seed}: utilisation {t:.3}, queuing delay p50 {q50:.1} ms p95 {q95:.1} ms, losses {}", l.losses(f));
            assert!(t >= 0.9, "seed {seed}: utilisation {t}");
            assert!(q95 < 15.0, "seed {seed}: p95 queuing delay {q95} ms");
        }
    }

    /// The latency term is what keeps the queue short: without it (b = 0) Vivace fills the
    /// buffer until loss stops it.
    #[test]
    fn latency_term_matters() {
        let mut l = Link::new(20.0, 30.0, 200, 1);
        let f = l.add(mk("pcc-vivace", &serde_json::json!({"latency-coef": 0}), 1).unwrap(), 0, 40 * SEC);
        l.run(40 * SEC);
        let q50 = l.owd_ms(f, 10 * SEC, 40 * SEC, 0.5) - 15.0;
        let mut l2 = Link::new(20.0, 30.0, 200, 1);
        let g = l2.add(vivace(1), 0, 40 * SEC);
        l2.run(40 * SEC);
        let q50v = l2.owd_ms(g, 10 * SEC, 40 * SEC, 0.5) - 15.0;
        eprintln!("median queuing delay: b=0 {q50:.1} ms, b=900 {q50v:.1} ms");
        assert!(q50 > 3.0 * q50v.max(1.0), "{q50} vs {q50v}");
    }

    /// When the link rate halves at 20 s, loss and the RTT gradient turn the utility gradient
    /// negative and Vivace walks down (each step bounded by the change boundary) to the new
    /// capacity within a few seconds; the queue then drains and stays short.
    #[test]
    fn follows_a_capacity_drop() {
        let mut l = Link::new(20.0, 30.0, 100, 4);
        l.rate = Box::new(|t| if t < 20 * SEC { 20e6 } else { 10e6 });
        let f = l.add(vivace(4), 0, 40 * SEC);
        l.run(40 * SEC);
        let t = l.tput_bps(f, 30 * SEC, 40 * SEC) / 10e6;
        let q95 = l.owd_ms(f, 30 * SEC, 40 * SEC, 0.95) - 15.0;
        let r = l.var_mean(f, "rate_mbps", 30 * SEC, 40 * SEC);
        eprintln!("after the drop: utilisation {t:.3}, rate {r:.2} Mbit/s, p95 queuing delay {q95:.1} ms");
        assert!(t > 0.85 && q95 < 20.0 && r < 12.0, "{t} {q95} {r}");
    }
}
