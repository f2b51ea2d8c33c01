//! CDG — CAIA Delay-Gradient, as FreeBSD `sys/netinet/cc/cc_cdg.c` v0.1 (the implementation
//! evaluated in Al-Saadi's HLDG thesis, docs/hldg.md); Hayes & Armitage, "Revisiting TCP
//! congestion control using delay gradients", IFIP Networking 2011.
//!
//! Once per measurement cycle (an RTT: the ACK covering the `snd_nxt` recorded when the cycle
//! began, FreeBSD h_ertt's `ERTT_NEW_MEASUREMENT`) the gradients of the cycle's minimum and
//! maximum RTT are smoothed by a moving average over `smoothing_factor` cycles; a positive
//! gradient g backs off with probability P = 1 − e^(−g/G) to β_delay·cwnd. A shadow window
//! remembers the window a loss-based competitor would have, the queue state inferred from the
//! signs of the smoothed gradients decides whether a loss is congestion, and after
//! `loss_compete_consec_cong` ineffectual back-offs the delay signal is ignored for
//! `loss_compete_hold_backoff` more.
//!
//! Mapping onto the Linux-like core:
//! * FreeBSD works in bytes with MSS steps; here cwnd/ssthresh/shadow are packets.
//! * The delay back-off is FreeBSD's "congestion recovery": cwnd = ssthresh = β·min(cwnd, rwnd)
//!   at once (no PRR), no growth and no further back-off until `snd_una` passes the `snd_nxt`
//!   of the back-off (`snd_recover`). The module keeps that flag itself (the core has no CC-driven
//!   CWR); "in recovery" = that flag or the core in CWR/Recovery/Loss.
//! * RTT samples are the core's per-ACK `rtt_us` (newest ACKed packet), not h_ertt's
//!   (which times the 2nd segment under delayed ACKs); their granularity is the endpoint's.
//!   As h_ertt, an ACK for one segment from a receiver taken to delay ACKs is not timed.
//!   Gradients are kept in µs (FreeBSD: ticks·2^7); with 1-ms samples the table index and every
//!   decision are the same as FreeBSD's.
//! * Loss (3 dupACK / RACK) runs FreeBSD's `CC_NDUPACK` response in `ssthresh`; the core's PRR
//!   then brings the window to ssthresh; at the end of recovery cwnd = min(ssthresh, pipe + 1)
//!   (FreeBSD NewReno `post_recovery`), so a shadow window above cwnd is regained by slow start.
//! * RTO: NewReno (ssthresh = max(pipe/2, 2)), shadow window untouched.
//!
//! Linux net/ipv4/tcp_cdg.c (4.2+) differs; its distinct choices available here as
//! parameters: `beta_delay` (Linux 70.71 %), `loss_tolerance` (Linux off), `shadow` (on in both),
//! `prob_exact` (Linux computes 1 − exp() instead of FreeBSD's 2^15 table). Linux's HyStart slow
//! start, summed-window gradients and PRR-paced back-off are not modelled.
//!
//! Randomness: a `netmodel::Rng` seeded from the parameters `seed` and `stream`, which the engine
//! fills with the experiment seed and the flow id (see `cc::engine_params`).

use super::rng::cc_rng;
use super::{AckSample, CaEvent, CaState, CongestionControl, ParamInfo, Params, SchemeInfo, Sock};
use netmodel::Rng;

/// `D_P_E`: FreeBSD keeps gradients ×2^7; the probability table index is g/G in units of 2^-7.
pub const D_P_E: u32 = 7;
/// `MAXGRAD`: a gradient above MAXGRAD·G (ms) backs off with certainty.
pub const MAXGRAD: i64 = 5;
/// `EXP_PREC`: the probability table holds P·2^15.
pub const EXP_PREC: u32 = 15;
/// Table length: indices 0 ..= MAXGRAD·2^7 (641 entries, FreeBSD `probexp[]`).
pub const PROBEXP_LEN: usize = ((MAXGRAD as usize) << D_P_E) + 1;
/// FreeBSD's first table entry (P(0) = 10/2^15, not 0).
pub const PROBEXP_0: u32 = 10;
/// Queue-state codes (FreeBSD `CDG_Q_*`).
pub const Q_EMPTY: u32 = 1;
pub const Q_RISING: u32 = 2;
pub const Q_FALLING: u32 = 3;
pub const Q_FULL: u32 = 4;
pub const Q_UNKNOWN: u32 = 9999;

/// Slow-start exit rules (`ss_mode`; FreeBSD cc_cdg.c, HLDG thesis §2.7.6 and §4.4).
pub const SS_CDG: i64 = 0;
pub const SS_LOSS_ONLY: i64 = 1;
pub const SS_GMIN_ONLY: i64 = 2;

/// Parameters (FreeBSD sysctls `net.inet.tcp.cc.cdg.*` plus ccbench switches).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "alpha_inc", default: 0.0, doc: "additive increase grows by 1 packet/RTT every alpha_inc RTTs in congestion avoidance; 0 = +1 packet per RTT (Reno)" },
    ParamInfo { name: "beta_delay", default: 70.0, doc: "delay back-off: cwnd = ssthresh = min(cwnd, rwnd)·beta_delay/100 (Linux tcp_cdg: 70.71)" },
    ParamInfo { name: "beta_loss", default: 50.0, doc: "congestion-loss back-off (percent): ssthresh = max(shadow, min(cwnd, rwnd)·beta_loss/100)" },
    ParamInfo { name: "exp_backoff_scale", default: 3.0, doc: "G (ms): back-off probability P = 1 − exp(−g/G)" },
    ParamInfo { name: "smoothing_factor", default: 8.0, doc: "moving-average window of the gradients in RTTs (0 = no smoothing)" },
    ParamInfo { name: "loss_compete_consec_cong", default: 5.0, doc: "consecutive delay-congestion events after which back-off is suspended (loss-based competitor assumed)" },
    ParamInfo { name: "loss_compete_hold_backoff", default: 5.0, doc: "further congestion events for which delay back-off stays suspended" },
    ParamInfo { name: "recovery_loss_bug", default: 1.0, doc: "FreeBSD behaviour: a loss during the congestion recovery after a delay back-off sets ssthresh = cwnd (HLDG thesis §4.3.3.2); 0 for ablation" },
    ParamInfo { name: "loss_tolerance", default: 1.0, doc: "treat a loss as non-congestion (cwnd kept) unless the inferred queue state is FULL/UNKNOWN (Linux tcp_cdg default: off)" },
    ParamInfo { name: "shadow", default: 1.0, doc: "use the shadow window on congestion loss" },
    ParamInfo { name: "ss_mode", default: 0.0, doc: "slow-start exit: 0 = CDG (unsmoothed g_min, then g_max), 1 = loss only, 2 = unsmoothed g_min only" },
    ParamInfo { name: "prob_exact", default: 0.0, doc: "0 = FreeBSD's 2^15 probability table (index rounded to 1/128 of G), 1 = exact 1 − exp(−g/G) (as Linux)" },
    ParamInfo { name: "seed", default: 0.0, doc: "RNG seed for the probabilistic back-off (the engine sets the experiment seed)" },
    ParamInfo { name: "stream", default: 0.0, doc: "RNG stream (the engine sets the flow id)" },
];

/// FreeBSD's `probexp[i]` ≈ (1 − e^(−i/128))·2^15 (entry 0 = 10).
pub fn probexp(i: usize) -> u32 {
    if i == 0 {
        return PROBEXP_0;
    }
    let x = i as f64 / (1u32 << D_P_E) as f64;
    ((1.0 - (-x).exp()) * (1u32 << EXP_PREC) as f64).round() as u32
}

/// Back-off probability of a gradient `g_us` (µs per RTT) at scale `g_scale_ms`, FreeBSD
/// `prob_backoff` arithmetic: certain above MAXGRAD·G, else the table entry at
/// round(g·2^7/G) (or the exact exponential when `exact`).
pub fn backoff_probability(g_us: i64, g_scale_ms: u32, exact: bool) -> f64 {
    if g_us <= 0 {
        return 0.0;
    }
    let g_scale_us = g_scale_ms as i64 * 1000;
    if g_us > MAXGRAD * g_scale_us {
        return 1.0;
    }
    if exact {
        return 1.0 - (-(g_us as f64) / g_scale_us as f64).exp();
    }
    // idx = (qtrend + G/2)/G with qtrend = g·2^7 (ticks), here in µs.
    let idx = ((g_us << D_P_E) + g_scale_us / 2) / g_scale_us;
    // FreeBSD compares random() ∈ [0, 2^31−1] with (INT_MAX/2^15)·probexp[idx].
    let p = (i32::MAX as i64 / (1 << EXP_PREC)) * probexp(idx as usize) as i64;
    p as f64 / (i32::MAX as f64 + 1.0)
}

/// FreeBSD's moving average (`calc_moving_average`): ḡ += (g − g_oldest)/a once the window is
/// full, ḡ += g/a while it fills (zero-padded); integer division truncates toward zero.
#[derive(Clone, Debug)]
pub struct MovingAverage {
    win: Vec<i64>,
    head: usize,
    pub value: i64,
}

impl MovingAverage {
    pub fn new(a: usize) -> Self {
        MovingAverage { win: Vec::with_capacity(a), head: 0, value: 0 }
    }
    pub fn push(&mut self, cap: usize, g: i64) {
        if cap == 0 {
            self.value = g;
            return;
        }
        let a = cap as i64;
        if self.win.len() < cap {
            self.value += g / a;
            self.win.push(g);
        } else {
            let old = self.win[self.head];
            self.value += (g - old) / a;
            self.win[self.head] = g;
            self.head = (self.head + 1) % cap;
        }
    }
}

/// Resolved parameters.
#[derive(Clone, Debug)]
pub struct CdgParams {
    pub alpha_inc: u32,
    pub beta_delay: f64,
    pub beta_loss: u32,
    pub g_ms: u32,
    pub smoothing: usize,
    pub consec_cong: u32,
    pub hold_backoff: u32,
    pub recovery_loss_bug: bool,
    pub loss_tolerance: bool,
    pub shadow: bool,
    pub ss_mode: i64,
    pub prob_exact: bool,
    pub seed: u64,
    pub stream: u64,
}

impl Default for CdgParams {
    fn default() -> Self {
        CdgParams {
            alpha_inc: 0,
            beta_delay: 70.0,
            beta_loss: 50,
            g_ms: 3,
            smoothing: 8,
            consec_cong: 5,
            hold_backoff: 5,
            recovery_loss_bug: true,
            loss_tolerance: true,
            shadow: true,
            ss_mode: SS_CDG,
            prob_exact: false,
            seed: 0,
            stream: 0,
        }
    }
}

/// Per-connection state (`struct cdg` plus the h_ertt epoch marker).
#[derive(Clone, Debug)]
pub struct Cdg {
    p: CdgParams,
    rng: Rng,
    /// `snd_nxt` at the start of the measurement cycle; the ACK passing it ends the cycle.
    marker: u64,
    /// Latest RTT sample (µs), h_ertt's `e_t->rtt`; None before the first.
    last_rtt: Option<i64>,
    /// h_ertt's guess that the receiver delays ACKs (`dlyack_rx`, 0..=DLYACK_SMOOTH).
    dlyack_rx: u32,
    minrtt_in_rtt: i64,
    maxrtt_in_rtt: i64,
    minrtt_in_prevrtt: i64,
    /// 0 ⇒ skip the next gradient (first cycle, or the cycle after a back-off).
    maxrtt_in_prevrtt: i64,
    min_avg: MovingAverage,
    max_avg: MovingAverage,
    queue_state: u32,
    consec_cong_cnt: u32,
    /// Shadow window (packets, 0 = none).
    shadow_w: u32,
    /// FreeBSD CONGRECOVERY after a delay back-off, until `snd_una ≥ snd_recover`.
    in_congrecovery: bool,
    snd_recover: u64,
    /// alpha_inc state (`window_incr`, `rtt_count`).
    window_incr: u32,
    rtt_count: u32,
    /// This ACK ended a cycle / signalled delay congestion (consumed by `cong_avoid`).
    ack_new_meas: bool,
    ack_cong: bool,
    /// Shadow window before the last `ssthresh` (restored on RTO).
    shadow_before_ssthresh: u32,
    // Trace values.
    g_min: i64,
    g_max: i64,
    prob: f64,
    delay_backoffs: u64,
    cycles: u64,
}

impl Cdg {
    pub fn new(p: CdgParams) -> Self {
        let rng = cc_rng(p.seed, p.stream);
        Cdg {
            rng,
            marker: 0,
            last_rtt: None,
            dlyack_rx: 0,
            minrtt_in_rtt: i64::MAX,
            maxrtt_in_rtt: 0,
            minrtt_in_prevrtt: i64::MAX,
            maxrtt_in_prevrtt: 0,
            min_avg: MovingAverage::new(p.smoothing),
            max_avg: MovingAverage::new(p.smoothing),
            queue_state: Q_UNKNOWN,
            consec_cong_cnt: 0,
            shadow_w: 0,
            in_congrecovery: false,
            snd_recover: 0,
            window_incr: 0,
            rtt_count: 0,
            ack_new_meas: false,
            ack_cong: false,
            shadow_before_ssthresh: 0,
            g_min: 0,
            g_max: 0,
            prob: 0.0,
            delay_backoffs: 0,
            cycles: 0,
            p,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Cdg::new(CdgParams {
            alpha_inc: p.int("alpha_inc", 0, 0, 1 << 20)? as u32,
            beta_delay: p.float("beta_delay", 70.0, 1.0, 100.0)?,
            beta_loss: p.int("beta_loss", 50, 1, 100)? as u32,
            g_ms: p.int("exp_backoff_scale", 3, 1, 1 << 20)? as u32,
            smoothing: p.int("smoothing_factor", 8, 0, 1024)? as usize,
            consec_cong: p.int("loss_compete_consec_cong", 5, 0, 1 << 20)? as u32,
            hold_backoff: p.int("loss_compete_hold_backoff", 5, 0, 1 << 20)? as u32,
            recovery_loss_bug: p.bool("recovery_loss_bug", true)?,
            loss_tolerance: p.bool("loss_tolerance", true)?,
            shadow: p.bool("shadow", true)?,
            ss_mode: p.int("ss_mode", SS_CDG, 0, 2)?,
            prob_exact: p.bool("prob_exact", false)?,
            seed: p.u64("seed")?,
            stream: p.u64("stream")?,
        }))
    }

    /// FreeBSD `IN_RECOVERY`: fast or congestion recovery.
    fn in_recovery(&self, sk: &Sock) -> bool {
        self.in_congrecovery || matches!(sk.ca_state, CaState::Cwr | CaState::Recovery | CaState::Loss)
    }

    /// `cdg_window_decrease`: min(rwnd, w)·beta/100 (packets).
    fn window_decrease(sk: &Sock, w: u32, beta_pct: f64) -> u32 {
        let rwnd = (sk.snd_wnd / sk.mss.max(1) as u64).min(u32::MAX as u64) as u32;
        let w = if sk.snd_wnd > 0 { w.min(rwnd) } else { w };
        (w as f64 * beta_pct / 100.0) as u32
    }

    /// Draws the back-off decision for gradient `g_us` (FreeBSD `prob_backoff`).
    fn prob_backoff(&mut self, g_us: i64) -> bool {
        let p = backoff_probability(g_us, self.p.g_ms, self.p.prob_exact);
        self.prob = p;
        p >= 1.0 || self.rng.next_f64() < p
    }

    /// End-of-cycle gradient step; returns whether delay congestion was signalled.
    fn new_measurement(&mut self, sk: &Sock) -> bool {
        let mut cong = false;
        self.cycles += 1;
        let slowstart = sk.cwnd <= sk.ssthresh;
        self.prob = 0.0;
        if self.maxrtt_in_prevrtt != 0 {
            let qdiff_max = self.maxrtt_in_rtt - self.maxrtt_in_prevrtt;
            let qdiff_min = self.minrtt_in_rtt - self.minrtt_in_prevrtt;
            self.g_min = qdiff_min;
            self.g_max = qdiff_max;
            self.min_avg.push(self.p.smoothing, qdiff_min);
            self.max_avg.push(self.p.smoothing, qdiff_max);
            let (min_q, max_q) = (self.min_avg.value, self.max_avg.value);
            let ss_delay = self.p.ss_mode != SS_LOSS_ONLY;
            let ss_gmax = self.p.ss_mode == SS_CDG;
            if slowstart {
                if ss_delay && qdiff_min > 0 {
                    cong = self.prob_backoff(qdiff_min);
                } else if ss_gmax && qdiff_max > 0 {
                    cong = self.prob_backoff(qdiff_max);
                }
            } else if min_q > 0 {
                cong = self.prob_backoff(min_q);
            } else if max_q > 0 {
                cong = self.prob_backoff(max_q);
            }
            // Queue-state inference (FreeBSD evaluation order).
            if min_q > 0 && max_q <= 0 {
                self.queue_state = Q_FULL;
            } else if min_q >= 0 && max_q < 0 {
                self.queue_state = Q_EMPTY;
                self.shadow_w = 0;
            } else if min_q > 0 && max_q > 0 {
                self.queue_state = Q_RISING;
            } else if min_q < 0 && max_q < 0 {
                self.queue_state = Q_FALLING;
            }
            if min_q < 0 || max_q < 0 {
                self.consec_cong_cnt = 0;
            }
        }
        self.minrtt_in_prevrtt = self.minrtt_in_rtt;
        self.minrtt_in_rtt = i64::MAX;
        self.maxrtt_in_prevrtt = self.maxrtt_in_rtt;
        self.maxrtt_in_rtt = 0;
        cong
    }
}

impl CongestionControl for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    fn init(&mut self, sk: &mut Sock) {
        let p = self.p.clone();
        *self = Cdg::new(p);
        self.marker = sk.snd_nxt;
        // conn_init: shadow_w = cwnd.
        if self.p.shadow {
            self.shadow_w = sk.cwnd;
        }
    }

    /// `CC_NDUPACK` (FreeBSD `cdg_cong_signal`).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.shadow_before_ssthresh = self.shadow_w;
        let non_congestion = (self.p.recovery_loss_bug && self.in_congrecovery)
            || (self.p.loss_tolerance && self.queue_state < Q_FULL);
        if non_congestion {
            return sk.cwnd.max(2);
        }
        if self.p.shadow && self.shadow_w > 0 {
            self.shadow_w = Self::window_decrease(sk, self.shadow_w, 50.0); // RENO_BETA
        }
        self.window_incr = 0;
        self.rtt_count = 0;
        let loss_w = Self::window_decrease(sk, sk.cwnd, self.p.beta_loss as f64);
        let shadow = if self.p.shadow { self.shadow_w } else { 0 };
        shadow.max(loss_w).max(2)
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        match ev {
            CaEvent::Loss => {
                // RTO: NewReno — ssthresh = max(FlightSize/2, 2), shadow untouched.
                self.shadow_w = self.shadow_before_ssthresh;
                sk.ssthresh = (sk.packets_in_flight() / 2).max(2);
                self.in_congrecovery = false;
            }
            CaEvent::CompleteCwr => {
                // FreeBSD NewReno post_recovery: cwnd = min(ssthresh, pipe + 1).
                let pipe = sk.packets_in_flight();
                if pipe < sk.ssthresh {
                    sk.cwnd = (pipe + 1).max(2);
                }
            }
            _ => {}
        }
    }

    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        self.ack_new_meas = false;
        self.ack_cong = false;
        // h_ertt's delayed-ACK filter (as hldg.rs, docs/hldg.md D34): while the receiver is taken
        // to delay ACKs, an ACK for a single segment is not timed and the last sample stands.
        let multiack = sample.pkts_acked > 1;
        if multiack {
            self.dlyack_rx = (self.dlyack_rx + 1).min(super::hldg::DLYACK_SMOOTH);
        } else if sample.pkts_acked == 1 {
            self.dlyack_rx = self.dlyack_rx.saturating_sub(1);
        }
        if sample.rtt_us >= 0 && (self.dlyack_rx == 0 || multiack || sk.sacked_out > 0) {
            self.last_rtt = Some(sample.rtt_us.max(1));
        }
        let rtt = match self.last_rtt {
            Some(r) => r,
            None => return,
        };
        if self.in_congrecovery && sk.snd_una >= self.snd_recover {
            self.in_congrecovery = false;
        }
        self.maxrtt_in_rtt = self.maxrtt_in_rtt.max(rtt);
        self.minrtt_in_rtt = self.minrtt_in_rtt.min(rtt);
        let new_meas = sk.snd_una >= self.marker;
        let mut cong = false;
        if new_meas {
            self.marker = sk.snd_nxt;
            cong = self.new_measurement(sk);
        }
        if cong {
            self.consec_cong_cnt += 1;
            if !self.in_recovery(sk) {
                if self.consec_cong_cnt <= self.p.consec_cong {
                    // CC_CDG_DELAY.
                    let w = Self::window_decrease(sk, sk.cwnd, self.p.beta_delay).max(2);
                    sk.ssthresh = w;
                    sk.cwnd = w;
                    self.snd_recover = sk.snd_nxt;
                    self.window_incr = 0;
                    self.rtt_count = 0;
                    self.in_congrecovery = true;
                    self.delay_backoffs += 1;
                } else if self.consec_cong_cnt >= self.p.consec_cong + self.p.hold_backoff {
                    self.consec_cong_cnt = 0;
                }
                // The back-off shows only in the 2nd RTT: skip the next gradient.
                self.maxrtt_in_prevrtt = 0;
                if self.p.shadow {
                    self.shadow_w = self.shadow_w.max(sk.cwnd);
                }
            }
        }
        self.ack_new_meas = new_meas;
        self.ack_cong = cong;
    }

    /// `cdg_window_increase` on a plain ACK outside recovery and without delay congestion.
    fn cong_avoid(&mut self, sk: &mut Sock, _acked: u32) {
        if self.ack_cong || self.in_recovery(sk) {
            return;
        }
        let (incr, s_incr) = if sk.cwnd <= sk.ssthresh {
            self.window_incr = 0;
            self.rtt_count = 0;
            (1, 1) // +1 MSS per ACK (no ABC)
        } else if self.ack_new_meas {
            let incr = if self.p.alpha_inc == 0 {
                1
            } else {
                self.rtt_count += 1;
                if self.rtt_count >= self.p.alpha_inc {
                    self.window_incr += 1;
                    self.rtt_count = 0;
                }
                self.window_incr
            };
            (incr, 1)
        } else {
            (0, 0)
        };
        if self.shadow_w > 0 {
            self.shadow_w = self.shadow_w.saturating_add(s_incr);
        }
        sk.cwnd = sk.cwnd.saturating_add(incr).min(sk.cwnd_clamp);
        self.ack_new_meas = false;
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let ms = |v: i64| v as f64 / 1000.0;
        out.push(("g_min_ms", ms(self.g_min)));
        out.push(("g_max_ms", ms(self.g_max)));
        out.push(("gbar_min_ms", ms(self.min_avg.value)));
        out.push(("gbar_max_ms", ms(self.max_avg.value)));
        out.push(("prob", self.prob));
        out.push(("shadow_w", self.shadow_w as f64));
        out.push(("queue_state", self.queue_state as f64));
        out.push(("consec_cong", self.consec_cong_cnt as f64));
        out.push(("congrecovery", if self.in_congrecovery { 1.0 } else { 0.0 }));
        out.push(("delay_backoffs", self.delay_backoffs as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "cdg",
    description: "CDG: per-RTT gradients of min/max RTT, moving average over 8 RTTs, back-off to 0.7·cwnd with P = 1 − exp(−g/3 ms), shadow window, queue-state loss tolerance, ineffectual-back-off detection",
    source: "FreeBSD sys/netinet/cc/cc_cdg.c v0.1; Hayes & Armitage, Revisiting TCP congestion control using delay gradients, IFIP Networking 2011",
    params: PARAMS,
    make: |p| Ok(Box::new(Cdg::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::TCP_INFINITE_SSTHRESH;

    const MSS: u64 = 1448;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(MSS as u32, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s.snd_wnd = 1 << 30;
        s.snd_nxt = 100 * MSS;
        s
    }

    /// Feeds one measurement cycle: RTT samples `rtts` (µs), the last ACK ends the cycle.
    fn cycle(c: &mut Cdg, sk: &mut Sock, rtts: &[i64]) {
        for (i, r) in rtts.iter().enumerate() {
            if i + 1 == rtts.len() {
                sk.snd_una = c.marker;
                sk.snd_nxt = c.marker + sk.cwnd as u64 * MSS;
            }
            c.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us: *r, in_flight: 10 });
            c.cong_avoid(sk, 1);
        }
    }

    #[test]
    fn probability_table_and_exact_values() {
        // Hand-computed: P(g) = 1 − exp(−g/3 ms).
        // g = 3 ms: idx = (3000·128 + 1500)/3000 = 128 → (1 − e^−1)·2^15 = 20713.3 → 20713.
        assert_eq!(probexp(128), 20713);
        let p3 = backoff_probability(3000, 3, false);
        assert!((p3 - 0.63212).abs() < 1e-3, "{p3}");
        // g = 1 ms: idx = (128000 + 1500)/3000 = 43 (rounded from 42.67) → 1 − e^(−43/128) = 0.28530.
        let p1 = backoff_probability(1000, 3, false);
        assert!((p1 - 0.28530).abs() < 1e-3, "{p1}");
        assert!((backoff_probability(1000, 3, true) - 0.28347).abs() < 1e-4);
        // g = 6 ms: 1 − e^−2 = 0.86466.
        assert!((backoff_probability(6000, 3, false) - 0.86466).abs() < 1e-3);
        // Above MAXGRAD·G = 15 ms: certain; at 15 ms exactly: table end (1 − e^−5 = 0.99326).
        assert_eq!(backoff_probability(15_001, 3, false), 1.0);
        assert!((backoff_probability(15_000, 3, false) - 0.99326).abs() < 1e-3);
        // Tiny positive gradient: index 0 = 10/2^15.
        assert!((backoff_probability(5, 3, false) - 10.0 / 32768.0).abs() < 1e-5);
        assert_eq!(backoff_probability(0, 3, false), 0.0);
        assert_eq!(backoff_probability(-4000, 3, false), 0.0);
        assert_eq!(PROBEXP_LEN, 641);
    }

    #[test]
    fn moving_average_warms_up_zero_padded_then_slides() {
        let mut m = MovingAverage::new(4);
        // Samples (ms·1000): 4000, 8000, −2000, 2000 → 1000, 3000, 2500, 3000.
        for (g, want) in [(4000, 1000), (8000, 3000), (-2000, 2500), (2000, 3000)] {
            m.push(4, g);
            assert_eq!(m.value, want);
        }
        // Full: +(6000 − 4000)/4 = +500 → 3500; then +(0 − 8000)/4 → 1500.
        m.push(4, 6000);
        assert_eq!(m.value, 3500);
        m.push(4, 0);
        assert_eq!(m.value, 1500);
        // No smoothing: the raw sample.
        let mut r = MovingAverage::new(0);
        r.push(0, -700);
        assert_eq!(r.value, -700);
    }

    #[test]
    fn gradients_over_cycles_and_queue_state() {
        // No back-off possible: G huge ⇒ P tiny; in CA.
        let mut c = Cdg::new(CdgParams { g_ms: 1 << 20, smoothing: 2, ..Default::default() });
        let mut sk = sock(20, 10);
        c.init(&mut sk);
        assert_eq!(c.shadow_w, 20);
        // Cycle 1: min 40, max 44 ms (first: no gradient, maxrtt_in_prevrtt was 0).
        cycle(&mut c, &mut sk, &[44_000, 40_000, 42_000]);
        assert_eq!((c.minrtt_in_prevrtt, c.maxrtt_in_prevrtt, c.cycles), (40_000, 44_000, 1));
        // Cycle 2: min 42, max 43 ⇒ g_min = +2 ms, g_max = −1 ms; ḡ = g/2 (warm-up): +1000, −500.
        cycle(&mut c, &mut sk, &[43_000, 42_000, 42_500]);
        assert_eq!((c.g_min, c.g_max), (2000, -1000));
        assert_eq!((c.min_avg.value, c.max_avg.value), (1000, -500));
        // ḡ_min > 0, ḡ_max ≤ 0 ⇒ FULL.
        assert_eq!(c.queue_state, Q_FULL);
        // Cycle 3: min 45, max 47 ⇒ +3, +4 ⇒ ḡ = 1000 + 1500, −500 + 2000 = 2500, 1500 ⇒ RISING.
        cycle(&mut c, &mut sk, &[47_000, 45_000]);
        assert_eq!((c.min_avg.value, c.max_avg.value), (2500, 1500));
        assert_eq!(c.queue_state, Q_RISING);
        // Cycle 4: min 40, max 45 ⇒ −5, −2; window full: ḡ_min = 2500 + (−5000 − 2000)/2 = −1000,
        // ḡ_max = 1500 + (−2000 + 1000)/2 = 1000 ⇒ (−, +): state unchanged (RISING).
        cycle(&mut c, &mut sk, &[45_000, 40_000]);
        assert_eq!((c.min_avg.value, c.max_avg.value), (-1000, 1000));
        assert_eq!(c.queue_state, Q_RISING);
        // Cycle 5: min 40, max 41 ⇒ 0, −4: ḡ_min = −1000 + (0 − 3000)/2 = −2500,
        // ḡ_max = 1000 + (−4000 − 4000)/2 = −3000 ⇒ FALLING.
        cycle(&mut c, &mut sk, &[41_000, 40_000]);
        assert_eq!((c.min_avg.value, c.max_avg.value), (-2500, -3000));
        assert_eq!(c.queue_state, Q_FALLING);
        // +1 packet per RTT in CA: 20 → 25 over 5 cycles (one growth per cycle-ending ACK).
        assert_eq!(sk.cwnd, 25);
        assert_eq!(c.shadow_w, 25);
    }

    #[test]
    fn delay_backoff_then_congrecovery_and_skipped_sample() {
        // G = 1 ms, gradient 20 ms > MAXGRAD·G ⇒ certain back-off.
        let mut c = Cdg::new(CdgParams { g_ms: 1, smoothing: 0, ..Default::default() });
        let mut sk = sock(100, 50);
        c.init(&mut sk);
        c.shadow_w = 0;
        cycle(&mut c, &mut sk, &[40_000]);
        cycle(&mut c, &mut sk, &[60_000]);
        // cwnd = ssthresh = 100·0.7 = 70, shadow = max(70, 0) = 70; congrecovery until snd_nxt.
        assert_eq!((sk.cwnd, sk.ssthresh, c.shadow_w, c.delay_backoffs), (70, 70, 70, 1));
        assert!(c.in_congrecovery);
        assert_eq!(c.maxrtt_in_prevrtt, 0);
        // Next cycle (RTT still high): gradient skipped (maxrtt_in_prevrtt = 0), no back-off;
        // the cycle-ending ACK also ends congrecovery (snd_una = snd_recover).
        cycle(&mut c, &mut sk, &[90_000]);
        assert_eq!(c.delay_backoffs, 1);
        assert!(!c.in_congrecovery);
        // cwnd == ssthresh counts as slow start in FreeBSD: +1 on that ACK.
        assert_eq!(sk.cwnd, 71);
    }

    #[test]
    fn ineffectual_backoffs_suspend_then_resume() {
        let mut c = Cdg::new(CdgParams { g_ms: 1, smoothing: 0, ..Default::default() });
        let mut sk = sock(1000, 500);
        c.init(&mut sk);
        let mut rtt = 40_000;
        cycle(&mut c, &mut sk, &[rtt]);
        let mut backoffs = Vec::new();
        for _ in 0..24 {
            rtt += 20_000; // always rising: every evaluated cycle signals congestion
            cycle(&mut c, &mut sk, &[rtt]);
            backoffs.push((c.delay_backoffs, c.consec_cong_cnt));
        }
        // Cycles alternate (evaluate, skipped). Counts 1..5 back off; 6..9 do not; 10 resets to 0.
        let counts: Vec<u32> = backoffs.iter().map(|b| b.1).collect();
        assert_eq!(&counts[..20], &[1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 0, 0]);
        assert_eq!(backoffs[9].0, 5);
        assert_eq!(backoffs[17].0, 5); // suspended during counts 6..9
        assert_eq!(backoffs[21].0, 6); // resumed
    }

    #[test]
    fn shadow_window_on_congestion_loss_and_tolerance() {
        let mut c = Cdg::new(CdgParams::default());
        let mut sk = sock(80, 60);
        c.init(&mut sk);
        // FULL state, shadow 120: shadow → 60, ssthresh = max(60, 80·0.5 = 40) = 60.
        c.queue_state = Q_FULL;
        c.shadow_w = 120;
        assert_eq!(c.ssthresh(&mut sk), 60);
        assert_eq!(c.shadow_w, 60);
        // Shadow below the loss window: ssthresh = 40.
        c.shadow_w = 50;
        assert_eq!(c.ssthresh(&mut sk), 40);
        assert_eq!(c.shadow_w, 25);
        // Receiver window limits both: rwnd = 30 packets ⇒ 15.
        sk.snd_wnd = 30 * MSS;
        c.shadow_w = 0;
        assert_eq!(c.ssthresh(&mut sk), 15);
        sk.snd_wnd = 1 << 30;
        // Not FULL (RISING) with tolerance: non-congestion loss, ssthresh = cwnd.
        c.queue_state = Q_RISING;
        assert_eq!(c.ssthresh(&mut sk), 80);
        // Tolerance off: congestion response.
        c.p.loss_tolerance = false;
        assert_eq!(c.ssthresh(&mut sk), 40);
        // The FreeBSD bug: in congrecovery every loss keeps cwnd (unless disabled).
        c.in_congrecovery = true;
        assert_eq!(c.ssthresh(&mut sk), 80);
        c.p.recovery_loss_bug = false;
        assert_eq!(c.ssthresh(&mut sk), 40);
        // RTO: NewReno ssthresh, shadow restored.
        c.shadow_w = 90;
        c.queue_state = Q_FULL;
        let _ = c.ssthresh(&mut sk);
        assert_eq!(c.shadow_w, 45);
        sk.packets_out = 50;
        c.cwnd_event(&mut sk, CaEvent::Loss);
        assert_eq!((sk.ssthresh, c.shadow_w), (25, 90));
        // EMPTY inference resets the shadow window.
        let mut c = Cdg::new(CdgParams { g_ms: 1 << 20, smoothing: 0, ..Default::default() });
        let mut sk = sock(20, 10);
        c.init(&mut sk);
        cycle(&mut c, &mut sk, &[50_000, 40_000]);
        cycle(&mut c, &mut sk, &[45_000, 40_000]); // g_min 0, g_max −5 ⇒ EMPTY
        assert_eq!((c.queue_state, c.shadow_w), (Q_EMPTY, 0));
    }

    #[test]
    fn slow_start_uses_unsmoothed_gradient_and_grows_per_ack() {
        let mut c = Cdg::new(CdgParams { g_ms: 1, ..Default::default() });
        let mut sk = sock(10, TCP_INFINITE_SSTHRESH);
        c.init(&mut sk);
        cycle(&mut c, &mut sk, &[40_000, 40_000]);
        assert_eq!(sk.cwnd, 12); // +1 per ACK
        // Raw g_min = +20 ms > 5 ms ⇒ certain exit even though ḡ = 20/8 = 2.5 ms.
        cycle(&mut c, &mut sk, &[60_000]);
        assert_eq!((sk.cwnd, sk.ssthresh), (8, 8)); // 12·0.7 = 8.4 → 8
        // loss_only slow start ignores the gradient.
        let mut c = Cdg::new(CdgParams { g_ms: 1, ss_mode: SS_LOSS_ONLY, ..Default::default() });
        let mut sk = sock(10, TCP_INFINITE_SSTHRESH);
        c.init(&mut sk);
        cycle(&mut c, &mut sk, &[40_000]);
        cycle(&mut c, &mut sk, &[60_000]);
        assert_eq!((sk.cwnd, c.delay_backoffs), (12, 0));
    }

    #[test]
    fn seeded_draws_are_reproducible_and_streams_differ() {
        let draw = |seed, stream| {
            let mut c = Cdg::new(CdgParams { seed, stream, ..Default::default() });
            (0..64).map(|_| c.prob_backoff(2000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 1), draw(7, 1));
        assert_ne!(draw(7, 1), draw(7, 2));
        // P(2 ms) = 1 − e^(−85/128) ≈ 0.485: the fraction over many draws is close.
        let mut c = Cdg::new(CdgParams { seed: 3, ..Default::default() });
        let n = 20_000;
        let hits = (0..n).filter(|_| c.prob_backoff(2000)).count() as f64 / n as f64;
        assert!((hits - 0.485).abs() < 0.015, "{hits}");
        let p = crate::cc::make("cdg", &serde_json::json!({"seed": 18446744073709551615u64, "stream": 3})).unwrap();
        assert_eq!(p.name(), "cdg");
    }

    #[test]
    fn delayed_single_segment_acks_give_no_rtt_sample() {
        // h_ertt: two ACKs for two segments make the receiver a delayed-ACK one; the next ACK
        // for a single segment (held by the receiver's timer, +100 ms) is not timed.
        let mut c = Cdg::new(CdgParams::default());
        let mut sk = sock(10, TCP_INFINITE_SSTHRESH);
        c.init(&mut sk);
        sk.snd_una = 0;
        sk.snd_nxt = 100 * MSS;
        c.marker = 1 << 40;
        for (n, rtt) in [(2, 40_000), (2, 40_000), (1, 140_000)] {
            c.pkts_acked(&mut sk, &AckSample { pkts_acked: n, rtt_us: rtt, in_flight: 10 });
        }
        assert_eq!((c.maxrtt_in_rtt, c.last_rtt), (40_000, Some(40_000)));
    }
}
