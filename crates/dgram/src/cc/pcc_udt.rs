//! `pcc-udt`: the PCC that Pantheon runs as `pcc_experimental` ("PCC-Expr") — PCC-Uspace's 2018
//! UDT release, a Vivace-family gradient sender with its own utility.
//!
//! It is not Allegro with other constants: it is an earlier form of Vivace (compare
//! `pcc-vivace`). Sources: github.com/PCCproject/PCC-Uspace at f3e943d (October 2018, the last
//! commit before the Proteus rewrite; Pantheon pins cd43e34, April 2018, two commits earlier: a
//! copy-edit and a style refactor, not compared line by line), `src/pcc/pcc_sender.cpp` (modes STARTING / PROBING /
//! DECISION_MADE; `kProbingStepSize` 0.05, two probing pairs that must agree, `kDecisionMadeStepSize`
//! 0.02 and `kMaxDecisionMadeStepSize` 0.10 for the step back on leaving DECISION_MADE,
//! `ComputeRateChange`: rate change = utility gradient × 1 Mbit with a piecewise confidence
//! amplifier — ×(a+1), ×(2a−2), ×(4a−14), ×(9a−50) for a < 3, < 6, < 9, beyond — grown by 0.5
//! then 1 per same-direction step once a two-step "swing buffer" is spent, and a change bound of
//! (0.05 + 0.06·k)·rate whose k grows while the bound clips; minimum change 0.5 Mbit, minimum rate
//! 2 Mbit, "Mbit" = 2^20 bits; monitor interval max(1.5·RTT, 10 packets)) and
//! `src/pcc/pcc_monitor_interval_queue.cpp` (the UDT build's `CalculateUtility`: u = x^0.9 −
//! x·(L_term + 11330·B·ρ)/N with x the sent rate in Mbit/s, N packets and B bytes sent, L_term =
//! L below 3 % loss and 11.35·L above, ρ the relative RTT inflation between the interval's first
//! and second half floored towards zero to a multiple of 0.02 — negative ρ, a shrinking RTT, is a
//! reward). Pantheon's `vivace` (PCC-Uspace's NSDI-2018 branch, `pcc-vivace`) charges the same
//! constants but takes ρ from the least-squares slope of RTT over send time.
//!
//! Start: the UDT build constructs its sender as `PccSender(10000, 10, 10)` (`src/core/core.cpp`,
//! `CUDT::CUDT`; `pcc_sender.cpp`'s constructor without `QUIC_PORT`): an initial RTT of 10 ms and
//! a window of 10 packets of `kDefaultTCPMSS` 1400 bytes, so it sends at 11.2 Mbit/s from its
//! first packet and never rescales that rate by a measured RTT (the QUIC build does).
//!
//! Differences: losses come from the transport's detection; non-useful intervals are sent at the
//! current rate.

use super::pcc_mi::{amplifier_factor, floor_even_hundredths, pair_order, Mi, MiQueue, Sample, MBIT};
use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};
use netmodel::Rng;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Starting,
    Probing,
    Decision,
}

pub struct PccUdt {
    eps: f64,
    min_rate: f64,
    min_change: f64,
    mode: Mode,
    rate: f64,
    rounds: u32,
    increase: bool,
    latest: Sample,
    prev_change: f64,
    amplifier: f64,
    swing: u32,
    allowance: f64,
    probes: Vec<Option<Sample>>,
    plan: Vec<bool>,
    have_rtt: bool,
    srtt_ns: f64,
    mis: MiQueue,
    last_u: f64,
    rng: Rng,
}

/// The UDT build's utility of one interval.
fn utility(m: &Mi) -> f64 {
    let s = m.stats();
    let x = s.x_bps / MBIT;
    let n = m.pkts.max(1) as f64;
    let half = m.rtts.len() / 2;
    let infl = if half > 0 {
        let a: f64 = m.rtts[..half].iter().map(|r| r.1 as f64).sum();
        let b: f64 = m.rtts[half..2 * half].iter().map(|r| r.1 as f64).sum();
        2.0 * (b - a) / (a + b)
    } else {
        0.0
    };
    let rho = floor_even_hundredths(infl);
    let rtt_term = 11330.0 * m.bytes_sent as f64 * rho;
    let l = s.loss;
    let loss_term = n * if l <= 0.03 { l } else { 11.35 * l };
    x.powf(0.9) - (loss_term + rtt_term) * x / n
}

impl PccUdt {
    fn plan_probes(&mut self) {
        self.probes = vec![None; 4];
        self.plan = pair_order(&mut self.rng, 2);
        self.mis.mark_all_useless();
    }

    fn rate_change(&mut self, s1: Sample, s2: Sample) -> f64 {
        if s1.rate == s2.rate {
            return self.min_change;
        }
        let gradient = MBIT * (s1.utility - s2.utility) / (s1.rate - s2.rate);
        let mut change = gradient * MBIT;
        let flips = (change > 0.0) != (self.prev_change > 0.0);
        if flips {
            self.amplifier = 0.0;
            self.allowance = 0.0;
            if self.swing < 2 {
                self.swing += 1;
            }
        }
        change *= amplifier_factor(self.amplifier, 9.0);
        if !flips {
            if self.swing == 0 {
                self.amplifier += if self.amplifier < 3.0 { 0.5 } else { 1.0 };
            } else {
                self.swing -= 1;
            }
        }
        let bound = 0.05 + self.allowance * 0.06;
        if (change / self.rate).abs() > bound {
            self.allowance += 1.0;
            change = bound * self.rate * change.signum();
        } else if self.allowance > 0.0 {
            self.allowance -= 1.0;
        }
        if flips {
            self.amplifier = 0.0;
            self.allowance = 0.0;
        }
        if change < 0.0 && change > -self.min_change {
            change = -self.min_change;
        } else if change > 0.0 && change < self.min_change {
            change = self.min_change;
        }
        change
    }

    fn enter_probing(&mut self) {
        match self.mode {
            Mode::Starting => self.rate *= 0.5,
            Mode::Decision => {
                let step = (self.rounds as f64 * 0.02).min(0.10);
                self.rate /= if self.increase { 1.0 + step } else { 1.0 - step };
            }
            Mode::Probing => {}
        }
        if self.mode == Mode::Probing {
            self.rounds += 1;
        } else {
            self.mode = Mode::Probing;
            self.rounds = 1;
        }
        self.plan_probes();
    }

    fn on_result(&mut self, m: Mi) {
        let u = utility(&m);
        self.last_u = u;
        let s = Sample { rate: m.rate_bps, utility: u };
        match self.mode {
            Mode::Starting => {
                if u > self.latest.utility {
                    self.rate *= 2.0;
                    self.latest = s;
                    self.rounds += 1;
                } else {
                    self.enter_probing();
                }
            }
            Mode::Probing => {
                if let Some(p) = self.probes.get_mut(m.label as usize) {
                    *p = Some(s);
                }
                if self.probes.iter().all(|p| p.is_some()) {
                    let v: Vec<Sample> = self.probes.iter().map(|p| p.unwrap()).collect();
                    let up = |a: Sample, b: Sample| if a.utility > b.utility { a.rate > b.rate } else { a.rate < b.rate };
                    if up(v[0], v[1]) == up(v[2], v[3]) {
                        self.increase = up(v[0], v[1]);
                        self.latest = if v[2].utility > v[3].utility { v[2] } else { v[3] };
                        let mut change = self.rate_change(v[0], v[1]);
                        if self.rate + change < self.min_rate {
                            change = self.min_rate - self.rate;
                        }
                        self.prev_change = change;
                        self.rate += change;
                        self.mode = Mode::Decision;
                        self.rounds = 1;
                        self.mis.mark_all_useless();
                    } else {
                        self.enter_probing();
                    }
                }
            }
            Mode::Decision => {
                let latest = self.latest;
                let mut change = self.rate_change(s, latest);
                if self.rate + change < self.min_rate {
                    change = self.min_rate - self.rate;
                }
                if (change > 0.0) == (self.prev_change > 0.0) {
                    self.prev_change = change;
                    self.rate += change;
                    self.latest = s;
                    self.mis.mark_all_useless();
                } else {
                    self.enter_probing();
                }
            }
        }
    }

    fn next_interval(&self) -> (f64, bool, u32) {
        let pending = self.mis.useful_pending();
        match self.mode {
            Mode::Probing => {
                let i = self.probes.iter().filter(|p| p.is_some()).count() + pending;
                if i < 4 {
                    let r = self.rate * if self.plan[i] { 1.0 + self.eps } else { 1.0 - self.eps };
                    (r, true, i as u32)
                } else {
                    (self.rate, false, 0)
                }
            }
            _ => (self.rate, pending == 0 && self.have_rtt, 0),
        }
    }

    fn drain(&mut self) {
        while let Some(m) = self.mis.pop_useful() {
            self.on_result(m);
        }
    }
}

impl DgramCc for PccUdt {
    fn name(&self) -> &'static str {
        "pcc-udt"
    }
    fn on_send(&mut self, now: u64, seq: u64, bytes: u32, _inflight: u64) {
        let due = match self.mis.current() {
            None => true,
            Some(m) => {
                let min_dur = (1.5 * self.srtt_ns).max(10.0 * bytes as f64 * 8.0 / m.rate_bps * 1e9);
                self.have_rtt && (now - m.start_ns) as f64 >= min_dur
            }
        };
        if due {
            let (r, useful, label) = self.next_interval();
            self.mis.open(now, r, useful, label);
        }
        self.mis.on_send(now, seq, bytes);
    }
    fn on_ack(&mut self, a: &Acked) {
        let r = a.rtt_ns as f64;
        if !self.have_rtt {
            self.have_rtt = true;
        }
        self.srtt_ns = if self.srtt_ns == 0.0 { r } else { 0.875 * self.srtt_ns + 0.125 * r };
        self.mis.on_ack(a.seq, a.sent_ns, a.rtt_ns);
        self.drain();
    }
    fn on_loss(&mut self, l: &Lost) {
        self.mis.on_loss(l.seq, l.bytes);
        self.drain();
    }
    fn control(&self) -> Control {
        Control { rate_bps: Some(self.mis.current_rate(self.rate)), cwnd_bytes: None }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_mbps", self.rate / 1e6));
        out.push(("mode", self.mode as u8 as f64));
        out.push(("utility", self.last_u));
    }
}

static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "probe-step", default: 0.05, doc: "ε: probing rates r(1±ε)" },
    ParamInfo { name: "min-rate-mbps", default: 2.0, doc: "rate floor, Mbit/s (2^20 bits)" },
    ParamInfo { name: "min-change-mbps", default: 0.5, doc: "smallest rate change, Mbit/s (2^20 bits)" },
];

fn make(p: &Params, seed: u64) -> Result<Box<dyn DgramCc>, String> {
    let mut s = PccUdt {
        eps: p.float("probe-step", 0.05, 0.001, 0.5)?,
        min_rate: p.float("min-rate-mbps", 2.0, 0.01, 1e5)? * MBIT,
        min_change: p.float("min-change-mbps", 0.5, 0.0, 1e5)? * MBIT,
        mode: Mode::Starting,
        rate: 10.0 * 1400.0 * 8.0 / 0.01,
        rounds: 1,
        increase: true,
        latest: Sample { rate: 0.0, utility: f64::NEG_INFINITY },
        prev_change: 0.0,
        amplifier: 0.0,
        swing: 0,
        allowance: 0.0,
        probes: Vec::new(),
        plan: Vec::new(),
        have_rtt: false,
        srtt_ns: 0.0,
        mis: MiQueue::default(),
        last_u: 0.0,
        rng: Rng::new(seed, 0x7564_7470),
    };
    s.plan_probes();
    Ok(Box::new(s))
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "pcc-udt",
    description: "PCC-Uspace 2018 over UDT (Pantheon's `pcc_experimental`): gradient ascent with a piecewise amplifier on an RTT-inflation utility",
    source: "github.com/PCCproject/PCC-Uspace f3e943d src/pcc/pcc_sender.cpp, src/pcc/pcc_monitor_interval_queue.cpp",
    params: PARAMS,
    make,
}];

#[cfg(test)]
mod tests {
    use super::super::make as mk;
    use super::super::testlink::{Link, SEC};

    /// The RTT-inflation term makes it stop before a queue builds: most of a 20 Mbit/s, 30 ms
    /// link with a short queue.
    #[test]
    fn fills_the_link_with_a_short_queue() {
        let mut l = Link::new(20.0, 30.0, 100, 1);
        let f = l.add(mk("pcc-udt", &serde_json::Value::Null, 1).unwrap(), 0, 60 * SEC);
        l.run(60 * SEC);
        let t = l.tput_bps(f, 20 * SEC, 60 * SEC) / 20e6;
        let q50 = l.owd_ms(f, 20 * SEC, 60 * SEC, 0.5) - 15.0;
        let q95 = l.owd_ms(f, 20 * SEC, 60 * SEC, 0.95) - 15.0;
        eprintln!("pcc-udt: utilisation {t:.3}, queuing delay p50 {q50:.1} ms p95 {q95:.1} ms, losses {}", l.losses(f));
        assert!(t > 0.85, "{t}");
        assert!(q50 < 30.0, "{q50}");
    }

    /// The UDT build starts at its constructor's rate, `PccSender(10000, 10, 10)`: 10 packets of
    /// 1400 bytes per 10 ms, 11.2 Mbit/s, whatever the path's RTT (it has no RTT estimate to
    /// rescale by); the rate holds until the first interval's result doubles it.
    #[test]
    fn starts_at_the_udt_builds_rate() {
        let mut l = Link::new(100.0, 40.0, 1000, 1);
        let f = l.add(mk("pcc-udt", &serde_json::Value::Null, 1).unwrap(), 0, SEC);
        l.run(SEC);
        for (t0, t1) in [(0, 30), (40, 80)] {
            let r = l.var_mean(f, "rate_mbps", t0 * SEC / 1000, t1 * SEC / 1000);
            assert!((r - 11.2).abs() < 1e-9, "rate {r} Mbit/s in [{t0}, {t1}) ms");
        }
    }

    /// The utility: loss is nearly free below 3 % and charged 11.35× above; RTT inflation of at
    /// least 2 % within an interval is punished hard, a shrinking RTT rewarded.
    #[test]
    fn utility_terms() {
        use super::super::pcc_mi::MiQueue;
        let mk_mi = |lost: u64, rtt_slope: i64| {
            let mut q = MiQueue::default();
            q.open(0, 12e6, true, 0);
            for i in 0..100u64 {
                q.on_send(i * 1_000_000, i, 1500);
            }
            q.open(100_000_000, 12e6, false, 0);
            for i in 0..100u64 {
                if i % 100 < lost {
                    q.on_loss(i, 1500);
                } else {
                    let rtt = (40_000_000i64 + rtt_slope * i as i64) as u64;
                    q.on_ack(i, i * 1_000_000, rtt);
                }
            }
            super::utility(&q.pop_finished().unwrap())
        };
        let clean = mk_mi(0, 0);
        let l2 = mk_mi(2, 0);
        let l5 = mk_mi(5, 0);
        let inflating = mk_mi(0, 100_000); // +10 ms over the interval: ~25 % inflation
        let deflating = mk_mi(0, -100_000);
        eprintln!("clean {clean:.3}, 2 % loss {l2:.3}, 5 % loss {l5:.3}, inflating {inflating:.1}, deflating {deflating:.1}");
        assert!(clean - l2 < 0.5 && clean - l5 > 3.0);
        assert!(inflating < -1000.0 && deflating > 1000.0);
    }
}
