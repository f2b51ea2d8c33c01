//! `verus`: Verus, delay-profile-based congestion control for cellular links.
//!
//! Sources: Y. Zaki et al., "Adaptive Congestion Control for Unpredictable Cellular Networks",
//! SIGCOMM 2015, §3 (the *delay profile*: the delay observed for each sending window, learned
//! continuously and refitted periodically; every epoch the sender moves a delay estimate D_est
//! down by δ1 when the epoch's maximum delay grew, up by δ2 when it did not, down by δ2 when the
//! maximum delay exceeds R times the minimum, reads the window W for D_est off the profile and
//! sends the packets that bring its in-flight count to W over the next RTT; slow start; on loss a
//! multiplicative decrease of the window the lost packet was sent with, then Reno-like growth
//! until packets sent after the decrease come back). Reference implementation, which Pantheon's
//! `verus` wrapper runs: github.com/yzaki/verus, `src/verus.hpp` (MTU 1450, `VERUS_M_DECREASE`
//! 0.7, `EPOCH` 5 ms, `DELTA1` 1 ms, `DELTA2` 2 ms, `VERUS_R` 6, `SS_EXIT_THRESHOLD` 500 ms,
//! `CURVE_TIMER` 1 s) and `src/verus_server.cpp` (profile = per-window EWMA of the RTT with weight
//! 0.875 on the old value, frozen during a loss phase; epoch loop; `calcSi`: with n = ⌈RTT_avg /
//! epoch⌉, S = max(0, W + W_crt·(2 − n)/(n − 1)) new packets this epoch, W − W_crt when n = 1;
//! a base-delay bump of 10 ms when D_est is pinned at the minimum with < 2 packets in flight).
//!
//! Differences: the reference fits the profile with alglib's penalized cubic spline
//! (`spline1dfitpenalized`, max_w/15 basis functions, ρ = 2); here the profile is a piecewise-
//! linear curve through the per-window averages smoothed by a moving average of the same width
//! and made non-decreasing, extrapolated linearly beyond the largest window seen — the reference
//! restarts slow start when its spline cannot map a delay, this never happens here. A packet the
//! transport reports lost (three later packets acknowledged, or a timeout — about when the
//! reference notes a gap) is, as in the reference's `removeExpiredPacketsFromSeqQueue`, only
//! *missing*: it stays in Verus's flight and the window decrease waits until it has been missing
//! for `MISSING_PKT_EXPIRY` (150 ms), checked as acknowledgements arrive — meanwhile slow start
//! keeps growing. `missing-expiry-ms: 150` does that; the default, 0, reacts at once: the
//! reference's sender is also held back by failing sends ("reached maximum OS UDP buffer size"
//! exits slow start as a loss), which this transport never has, so with the expiry alone a
//! shallow buffer lets the window run away (docs/datagram-schemes.md has the measurements). The
//! reference's own timeout handling is not reproduced. The per-epoch budget is released as a window (in flight + budget), so packets of
//! an epoch leave back to back as in the reference.

use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};
use std::collections::{BTreeMap, HashMap, VecDeque};

pub struct Verus {
    epoch_ns: u64,
    delta1: f64,
    delta2: f64,
    r: f64,
    m_decrease: f64,
    ss_exit_ms: f64,
    curve_every_ns: u64,
    missing_expiry_ns: u64,
    // state
    slow_start: bool,
    loss_phase: bool,
    exit_slow_start: bool,
    w_bar: f64,
    d_est: f64,
    d_min: f64,
    d_max_last: Option<f64>,
    d_t_bar: f64,
    epoch_delays: Vec<f64>,
    last_ack_ns: u64,
    /// Delay profile: window → EWMA of the RTT (ms) of packets sent with it.
    w_list: BTreeMap<u32, f64>,
    curve_stop: u32,
    /// Fitted profile (window, delay ms), increasing in both.
    curve: Vec<(f64, f64)>,
    next_curve_ns: u64,
    next_epoch_ns: u64,
    sent_w: HashMap<u64, u32>,
    in_flight: u64,
    budget: u64,
    pkt: u64,
    /// Packets the transport reported lost, with the time it did, until they expire.
    missing: VecDeque<(u64, u64)>,
}

fn ewma(old: Option<f64>, x: f64, alpha: f64) -> f64 {
    match old {
        None => x,
        Some(o) => alpha * o + (1.0 - alpha) * x,
    }
}

impl Verus {
    /// `removeExpiredPacketsFromSeqQueue`: every missing packet noted at least the expiry ago is
    /// lost; the first of a loss phase decreases the window.
    fn expire_missing(&mut self, now: u64) {
        while let Some(&(noted, seq)) = self.missing.front() {
            if now.saturating_sub(noted) < self.missing_expiry_ns {
                break;
            }
            self.missing.pop_front();
            self.lost(seq);
        }
    }

    fn lost(&mut self, seq: u64) {
        let w = self.sent_w.remove(&seq).unwrap_or(1) as f64;
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.loss_phase {
            return; // same loss phase
        }
        self.loss_phase = true;
        self.w_bar = self.w_bar.min(self.m_decrease * w).max(1.0);
        if self.slow_start {
            if self.w_bar > 20.0 {
                self.curve_stop = (w as u32).max(100);
            }
            let wb = self.w_bar;
            self.exit_slow_start_to(wb);
        } else {
            self.d_est = self.delay_at(self.w_bar);
        }
    }

    fn fit_curve(&mut self) {
        let pts: Vec<(u32, f64)> =
            self.w_list.iter().filter(|(w, _)| **w < self.curve_stop).map(|(w, d)| (*w, *d)).collect();
        self.w_list.retain(|w, _| *w < self.curve_stop);
        self.curve_stop = u32::MAX;
        if pts.len() < 2 {
            return;
        }
        let max_w = pts.last().unwrap().0 as f64;
        let half = ((max_w / 15.0 / 2.0).round() as usize).max(1);
        let mut curve = Vec::with_capacity(pts.len());
        let mut hi: f64 = 0.0;
        for i in 0..pts.len() {
            let lo_i = i.saturating_sub(half);
            let hi_i = (i + half).min(pts.len() - 1);
            let avg = pts[lo_i..=hi_i].iter().map(|p| p.1).sum::<f64>() / (hi_i - lo_i + 1) as f64;
            hi = hi.max(avg);
            curve.push((pts[i].0 as f64, hi));
        }
        self.curve = curve;
    }

    /// The profile's delay at window `w` (ms).
    fn delay_at(&self, w: f64) -> f64 {
        if self.curve.is_empty() {
            let above = self.w_list.range(w.max(1.0) as u32..).next();
            let below = self.w_list.range(..=w.max(1.0) as u32).next_back();
            return below.or(above).map_or(self.d_min, |p| *p.1);
        }
        let c = &self.curve;
        if w <= c[0].0 {
            return c[0].1;
        }
        for k in 1..c.len() {
            if w <= c[k].0 {
                let (a, b) = (c[k - 1], c[k]);
                return a.1 + (b.1 - a.1) * (w - a.0) / (b.0 - a.0);
            }
        }
        let (a, b) = (c[0], c[c.len() - 1]);
        let slope = ((b.1 - a.1) / (b.0 - a.0).max(1.0)).max(1e-3);
        b.1 + slope * (w - b.0)
    }

    /// The largest window whose profiled delay does not exceed `d` (the reference's
    /// `calcDelayCurve`: first w ≥ 2 whose delay exceeds d, minus one).
    fn window_for(&self, d: f64) -> f64 {
        if self.curve.is_empty() {
            // before the first fit: raw profile, retrying with d − δ2 as the reference does
            let mut d = d;
            for _ in 0..10_000 {
                if let Some((w, _)) = self.w_list.range(2..).find(|(_, v)| **v > d) {
                    return (*w as f64 - 1.0).max(1.0);
                }
                if self.w_list.is_empty() {
                    return self.w_bar;
                }
                d -= self.delta2;
            }
            return 1.0;
        }
        // binary search on the non-decreasing curve (extended linearly)
        let (mut lo, mut hi) = (2.0f64, 2.0f64);
        while self.delay_at(hi) <= d && hi < 1e6 {
            lo = hi;
            hi *= 2.0;
        }
        if self.delay_at(lo) > d {
            return 1.0;
        }
        while hi - lo > 1.0 {
            let mid = ((lo + hi) / 2.0).floor();
            if self.delay_at(mid) <= d {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn epoch(&mut self, now: u64) {
        if self.slow_start {
            return;
        }
        let d_max = if !self.epoch_delays.is_empty() {
            let m = self.epoch_delays.iter().copied().fold(f64::MIN, f64::max);
            self.epoch_delays.clear();
            m
        } else {
            let buffering = (now - self.last_ack_ns) as f64 / 1e6;
            self.d_max_last.unwrap_or(buffering).max(buffering)
        };
        let last = *self.d_max_last.get_or_insert(d_max);
        let delta_d = d_max - last;
        let mut d_min_stop = false;
        if last / self.d_min > self.r {
            if !self.exit_slow_start {
                self.d_est = (self.d_est - self.delta2).max(self.d_min);
                if self.d_est == self.d_min && self.in_flight < 2 {
                    self.d_min += 10.0;
                } else if self.d_est == self.d_min {
                    d_min_stop = true;
                }
            }
        } else if delta_d > 0.0001 {
            self.d_est = (self.d_est - self.delta1).max(self.d_min);
        } else {
            self.d_est += self.delta2;
        }
        self.w_bar = self.window_for(self.d_est).max(1.0);
        let n = (self.d_t_bar / (self.epoch_ns as f64 / 1e6)).ceil();
        let wc = self.in_flight as f64;
        let s = if n > 1.0 { self.w_bar + wc * (2.0 - n) / (n - 1.0) } else { self.w_bar - wc };
        self.d_max_last = Some(ewma(Some(last), d_max, 0.2));
        if !d_min_stop {
            self.budget += s.max(0.0) as u64;
        }
    }

    fn exit_slow_start_to(&mut self, w: f64) {
        self.w_bar = w.max(1.0);
        self.d_est = self.delay_at(self.w_bar);
        self.loss_phase = true;
        self.slow_start = false;
        self.budget = 0;
    }
}

impl DgramCc for Verus {
    fn name(&self) -> &'static str {
        "verus"
    }
    fn on_start(&mut self, now: u64) {
        self.next_epoch_ns = now + self.epoch_ns;
        self.next_curve_ns = now + self.curve_every_ns;
        self.last_ack_ns = now;
    }
    fn on_send(&mut self, _now: u64, seq: u64, bytes: u32, _inflight: u64) {
        self.pkt = bytes as u64;
        self.sent_w.insert(seq, self.w_bar.max(1.0) as u32);
        self.in_flight += 1;
        if !self.slow_start {
            self.budget = self.budget.saturating_sub(1);
        }
    }
    fn on_ack(&mut self, a: &Acked) {
        self.expire_missing(a.now_ns);
        let w = self.sent_w.remove(&a.seq).unwrap_or(1);
        self.in_flight = self.in_flight.saturating_sub(1);
        self.last_ack_ns = a.now_ns;
        let delay = a.rtt_ns as f64 / 1e6;
        if self.slow_start && delay > self.ss_exit_ms {
            self.exit_slow_start_to(self.m_decrease * w as f64);
            self.exit_slow_start = true;
        }
        if self.loss_phase && w as f64 <= self.w_bar {
            self.epoch_delays.clear();
            self.loss_phase = false;
            self.exit_slow_start = false;
        }
        self.epoch_delays.push(delay);
        self.d_t_bar = ewma(if self.d_t_bar > 0.0 { Some(self.d_t_bar) } else { None }, delay, 0.875);
        self.d_min = self.d_min.min(delay);
        if !self.loss_phase {
            let e = ewma(self.w_list.get(&w).copied(), delay, 0.875);
            self.w_list.insert(w, e);
        } else {
            self.w_bar += 1.0 / self.w_bar;
            if !self.curve.is_empty() {
                self.d_est = self.d_est.min(self.delay_at(self.w_bar));
            }
        }
        if self.slow_start {
            self.w_bar += 1.0;
        }
    }
    fn on_loss(&mut self, l: &Lost) {
        // the reference notes a missing packet and treats it as lost only once it has been
        // missing for MISSING_PKT_EXPIRY, checked as acknowledgements arrive
        if self.missing_expiry_ns == 0 {
            self.lost(l.seq);
        } else {
            self.missing.push_back((l.now_ns, l.seq));
        }
    }
    fn next_timer_ns(&self) -> Option<u64> {
        Some(self.next_epoch_ns.min(self.next_curve_ns))
    }
    fn on_timer(&mut self, now: u64) {
        if now >= self.next_curve_ns {
            if !self.slow_start {
                self.fit_curve();
            }
            self.next_curve_ns += self.curve_every_ns;
        }
        while self.next_epoch_ns <= now {
            let t = self.next_epoch_ns;
            self.epoch(t);
            self.next_epoch_ns += self.epoch_ns;
        }
    }
    fn control(&self) -> Control {
        let pkts = if self.slow_start { self.w_bar } else { (self.in_flight + self.budget) as f64 };
        // packets reported lost but not yet expired still count in Verus's flight; the
        // transport no longer counts them
        let pkts = (pkts - self.missing.len() as f64).max(0.0);
        Control { rate_bps: None, cwnd_bytes: Some((pkts * self.pkt as f64) as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("w_bar", self.w_bar));
        out.push(("d_est_ms", self.d_est));
        out.push(("d_min_ms", self.d_min));
        out.push(("slow_start", self.slow_start as u8 as f64));
        out.push(("loss_phase", self.loss_phase as u8 as f64));
    }
}

static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "epoch-ms", default: 5.0, doc: "epoch length" },
    ParamInfo { name: "delta1-ms", default: 1.0, doc: "δ1: D_est decrease when the epoch's max delay grew" },
    ParamInfo { name: "delta2-ms", default: 2.0, doc: "δ2: D_est increase otherwise (and decrease above R)" },
    ParamInfo { name: "r", default: 6.0, doc: "R: largest allowed max-delay / min-delay ratio" },
    ParamInfo { name: "m-decrease", default: 0.7, doc: "window multiplier on loss" },
    ParamInfo { name: "ss-exit-ms", default: 500.0, doc: "slow start ends when a delay exceeds this" },
    ParamInfo { name: "curve-ms", default: 1000.0, doc: "delay-profile refit interval" },
    ParamInfo { name: "missing-expiry-ms", default: 0.0, doc: "a packet reported lost decreases the window only after being missing this long (the reference: 150; 0 = at once)" },
];

fn make(p: &Params, _seed: u64) -> Result<Box<dyn DgramCc>, String> {
    Ok(Box::new(Verus {
        epoch_ns: (p.float("epoch-ms", 5.0, 0.1, 1000.0)? * 1e6) as u64,
        delta1: p.float("delta1-ms", 1.0, 0.01, 100.0)?,
        delta2: p.float("delta2-ms", 2.0, 0.01, 100.0)?,
        r: p.float("r", 6.0, 1.1, 100.0)?,
        m_decrease: p.float("m-decrease", 0.7, 0.1, 0.99)?,
        ss_exit_ms: p.float("ss-exit-ms", 500.0, 1.0, 1e5)?,
        curve_every_ns: (p.float("curve-ms", 1000.0, 10.0, 1e5)? * 1e6) as u64,
        missing_expiry_ns: (p.float("missing-expiry-ms", 0.0, 0.0, 1e5)? * 1e6) as u64,
        slow_start: true,
        loss_phase: false,
        exit_slow_start: false,
        w_bar: 1.0,
        d_est: 0.0,
        d_min: 1000.0,
        d_max_last: None,
        d_t_bar: 0.0,
        epoch_delays: Vec::new(),
        last_ack_ns: 0,
        w_list: BTreeMap::new(),
        curve_stop: u32::MAX,
        curve: Vec::new(),
        next_curve_ns: 0,
        next_epoch_ns: 0,
        sent_w: HashMap::new(),
        in_flight: 0,
        budget: 0,
        pkt: 1450,
        missing: VecDeque::new(),
    }))
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "verus",
    description: "Verus: per-epoch window read off a learned delay profile, delay estimate steered by the max-delay trend",
    source: "Zaki et al., SIGCOMM 2015 §3; github.com/yzaki/verus src/verus.hpp, src/verus_server.cpp",
    params: PARAMS,
    make,
}];

#[cfg(test)]
mod tests {
    use super::super::make as mk;
    use super::super::testlink::{Link, SEC};
    use serde_json::json;

    /// On a 10 Mbit/s, 40 ms link with a deep buffer, Verus fills the link while R bounds its
    /// delay: the median RTT stays below about R × the minimum (6 × 40 = 240 ms; the profile
    /// bounds Verus's delay target, not every packet's delay); with R = 2 the delay is
    /// proportionally lower.
    #[test]
    fn ratio_bounds_the_delay() {
        let run = |r: f64| {
            let mut l = Link::new(10.0, 40.0, 1000, 1);
            let f = l.add(mk("verus", &json!({"r": r}), 1).unwrap(), 0, 60 * SEC);
            l.run(60 * SEC);
            let t = l.tput_bps(f, 20 * SEC, 60 * SEC) / 10e6;
            // one-way median; + 20 ms of ack path gives the RTT (the queue is all forward)
            let q50 = l.owd_ms(f, 20 * SEC, 60 * SEC, 0.5);
            (t, q50)
        };
        let (t6, m6) = run(6.0);
        let (t2, m2) = run(2.0);
        eprintln!("R=6: utilisation {t6:.3}, one-way delay p50 {m6:.1} ms; R=2: utilisation {t2:.3}, p50 {m2:.1} ms");
        assert!(t6 > 0.9 && t2 > 0.8, "{t6} {t2}");
        assert!(m6 + 20.0 < 6.0 * 40.0 * 1.1, "{m6}");
        assert!(m2 < m6 * 0.7, "{m2} vs {m6}");
        assert!(m2 + 20.0 < 2.0 * 40.0 * 1.25, "{m2}");
    }

    /// A loss cuts the window to 0.7× the window the lost packet was sent with, once per loss
    /// phase, when the packet has been missing for 150 ms.
    #[test]
    fn multiplicative_decrease_on_loss() {
        let mut c = mk("verus", &serde_json::json!({"missing-expiry-ms": 150}), 1).unwrap();
        c.on_start(0);
        let ack = |t: u64, seq: u64| super::Acked {
            now_ns: t,
            seq,
            bytes: 1450,
            sent_ns: t - 40_000_000,
            recv_ns: t - 20_000_000,
            rtt_ns: 40_000_000,
            delivered_bytes: 0,
            inflight_bytes: 0,
        };
        for s in 0..100u64 {
            c.on_send(s * 100_000, s, 1450, 0);
        }
        for s in 0..60u64 {
            c.on_ack(&ack(50_000_000 + s * 100_000, s));
        }
        let w_sent = |c: &dyn super::DgramCc| {
            let mut v = Vec::new();
            c.vars(&mut v);
            v[0].1
        };
        let before = w_sent(c.as_ref());
        // packets 60.. were sent with window 1 (slow start had not grown yet): send more now
        for s in 100..200u64 {
            c.on_send(60_000_000, s, 1450, 0);
        }
        let l = |seq| super::Lost { now_ns: 70_000_000, seq, bytes: 1450, sent_ns: 60_000_000, inflight_bytes: 0 };
        c.on_loss(&l(150));
        c.on_loss(&l(151));
        // missing, not yet lost: no decrease until an acknowledgement 150 ms after the report
        c.on_ack(&ack(219_000_000, 60));
        let missing = w_sent(c.as_ref());
        assert!(missing >= before, "{before} -> {missing}");
        c.on_ack(&ack(220_000_000, 61));
        let after = w_sent(c.as_ref());
        assert!((after - 0.7 * before).abs() < 1.5, "{before} -> {after}");
    }

    /// The fitted profile inverts the learned delay-per-window relation, smoothing noise and
    /// extrapolating beyond the largest window seen.
    #[test]
    fn profile_maps_delay_to_window() {
        let mut c = dummy();
        let mut rng = netmodel::Rng::new(1, 1);
        for w in 1..=200u32 {
            c.w_list.insert(w, 40.0 + 1.2 * w as f64 + 6.0 * (rng.next_f64() - 0.5));
        }
        c.fit_curve();
        for d in [100.0, 160.0, 250.0, 400.0] {
            let w = c.window_for(d);
            let want = (d - 40.0) / 1.2;
            eprintln!("delay {d} ms -> window {w} (true {want:.0})");
            assert!((w - want).abs() < 0.06 * want + 3.0, "{d}: {w} vs {want}");
        }
    }

    fn dummy() -> super::Verus {
        super::Verus {
            epoch_ns: 5_000_000,
            delta1: 1.0,
            delta2: 2.0,
            r: 6.0,
            m_decrease: 0.7,
            ss_exit_ms: 500.0,
            curve_every_ns: 1_000_000_000,
            missing_expiry_ns: 150_000_000,
            slow_start: false,
            loss_phase: false,
            exit_slow_start: false,
            w_bar: 1.0,
            d_est: 0.0,
            d_min: 40.0,
            d_max_last: None,
            d_t_bar: 0.0,
            epoch_delays: Vec::new(),
            last_ack_ns: 0,
            w_list: Default::default(),
            curve_stop: u32::MAX,
            curve: Vec::new(),
            next_curve_ns: 0,
            next_epoch_ns: 0,
            sent_w: Default::default(),
            in_flight: 0,
            budget: 0,
            pkt: 1450,
            missing: Default::default(),
        }
    }
}
