//! TCP Veno as in Linux net/ipv4/tcp_veno.c, 3.x era (≈ 3.14–3.19); Fu & Liew, "TCP Veno: TCP
//! Enhancement for Transmission Over Wireless Access Networks", IEEE JSAC 21(2), 2003.
//!
//! Rules (kernel): Vegas-style RTT sampling (`basertt` lifetime minimum, `minrtt` minimum since
//! the last `cong_avoid` call, both +1 µs); backlog `diff = cwnd − cwnd·basertt/minrtt` with one
//! fractional bit (`V_PARAM_SHIFT = 1`). In congestion avoidance, `diff < beta` (3 packets) ⇒
//! Reno growth (+1 per cwnd ACKs); otherwise +1 only every other such period (`inc` toggles).
//! ssthresh: `diff < beta` ⇒ cwnd·4/5 (random loss suspected), else cwnd/2.
//!
//! Kernel quirks reproduced on purpose:
//! * `cntrtt` is never reset (the reset is commented out in the kernel), so after 3 RTT samples
//!   in the connection's life Veno never falls back to Reno for lack of samples;
//! * `minrtt` is reset at the end of **every** `cong_avoid` call (every ACK), not once per RTT,
//!   so the backlog uses the minimum RTT since the previous ACK (usually the latest sample);
//! * growth counts **ACKs**, not packets (3.x: `tcp_cong_avoid_ai(tp, cwnd)` and
//!   `snd_cwnd_cnt++` once per call); 4.x+ counts `acked` packets;
//! * `diff` is only recomputed in `cong_avoid` while Veno is active; `ssthresh` uses the last
//!   value (0 at start ⇒ the 4/5 cut).
//!
//! Known difference: slow start is the simulator's packet-counting `tcp_slow_start` (4.0+) and
//! the slow-start test is `cwnd < ssthresh` (4.x `tcp_in_slow_start`); 3.x kernels tested
//! `cwnd <= ssthresh` and could overshoot ssthresh by one packet. Undo is the default
//! `max(cwnd, prior_cwnd)` (3.x had no `undo_cwnd`; the core restored `max(cwnd, 2·ssthresh)`).
//! `ack` of the kernel hook is not used by Veno.

use super::reno::Reno;
use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, CongestionControl, ParamInfo,
    Params, SchemeInfo, Sock,
};

/// `V_PARAM_SHIFT`: fractional bits of `diff` and `beta`.
pub const V_PARAM_SHIFT: u32 = 1;
/// `0x7fffffff`: no-sample value of `minrtt` / `basertt` (µs).
const VENO_RTT_INIT: u32 = 0x7fff_ffff;

/// Veno has no module parameters in Linux (`beta` is a `static const`); ccbench exposes it.
pub static PARAMS: &[ParamInfo] = &[ParamInfo {
    name: "beta",
    default: 3.0,
    doc: "backlog threshold in packets (kernel constant 3, stored 3<<1): below it a loss is taken as random (cut to 4/5, grow every RTT)",
}];

#[derive(Clone, Debug)]
pub struct Veno {
    /// `beta << V_PARAM_SHIFT`.
    beta: u32,
    doing_veno_now: bool,
    /// RTT samples seen (never reset, see module doc); kernel u16.
    cntrtt: u32,
    /// Minimum RTT (+1 µs) since the last `cong_avoid`.
    minrtt: u32,
    /// Lifetime minimum RTT (+1 µs).
    basertt: u32,
    /// Every-other-period toggle of the congestive state.
    inc: bool,
    /// Backlog, packets << 1.
    diff: u32,
}

impl Veno {
    pub fn new(beta_pkts: u32) -> Self {
        Veno {
            beta: beta_pkts << V_PARAM_SHIFT,
            doing_veno_now: true,
            cntrtt: 0,
            minrtt: VENO_RTT_INIT,
            basertt: VENO_RTT_INIT,
            inc: true,
            diff: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Veno::new(p.int("beta", 3, 0, 1 << 20)? as u32))
    }

    /// `veno_enable`.
    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt = VENO_RTT_INIT;
    }

    /// `tcp_veno_init` (cntrtt and diff are not touched, as in the kernel).
    fn reinit(&mut self) {
        self.basertt = VENO_RTT_INIT;
        self.inc = true;
        self.enable();
    }
}

impl Default for Veno {
    fn default() -> Self {
        Veno::new(3)
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn init(&mut self, _sk: &mut Sock) {
        self.reinit();
    }

    fn pkts_acked(&mut self, _sk: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = (sample.rtt_us.min(u32::MAX as i64 - 1) as u32) + 1;
        if vrtt < self.basertt {
            self.basertt = vrtt;
        }
        self.minrtt = self.minrtt.min(vrtt);
        self.cntrtt = self.cntrtt.saturating_add(1);
    }

    fn set_state(&mut self, _sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    fn cwnd_event(&mut self, _sk: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::CwndRestart || ev == CaEvent::TxStart {
            self.reinit();
        }
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !self.doing_veno_now {
            Reno.cong_avoid(sk, acked);
            return;
        }
        // Limited by the application.
        if !sk.is_cwnd_limited() {
            return;
        }
        if self.cntrtt <= 2 {
            Reno.cong_avoid(sk, acked);
        } else {
            let rtt = self.minrtt as u64;
            let target_cwnd = ((sk.cwnd as u64 * self.basertt as u64) << V_PARAM_SHIFT) / rtt;
            self.diff = (sk.cwnd << V_PARAM_SHIFT).wrapping_sub(target_cwnd as u32);
            if sk.in_slow_start() {
                tcp_slow_start(sk, acked);
            } else if self.diff < self.beta {
                // Non-congestive state: +1 per cwnd ACKs (one ACK counted per call).
                let w = sk.cwnd;
                tcp_cong_avoid_ai(sk, w, 1);
            } else if sk.snd_cwnd_cnt >= sk.cwnd {
                // Congestive state: +1 every other cwnd-ACK period.
                if self.inc && sk.cwnd < sk.cwnd_clamp {
                    sk.cwnd += 1;
                    self.inc = false;
                } else {
                    self.inc = true;
                }
                sk.snd_cwnd_cnt = 0;
            } else {
                sk.snd_cwnd_cnt += 1;
            }
            if sk.cwnd < 2 {
                sk.cwnd = 2;
            } else if sk.cwnd > sk.cwnd_clamp {
                sk.cwnd = sk.cwnd_clamp;
            }
        }
        // Wipe the slate for the next "rtt" (every call; cntrtt deliberately kept).
        self.minrtt = VENO_RTT_INIT;
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        if self.diff < self.beta {
            // Non-congestive: probably a random loss, cut by 1/5.
            (sk.cwnd * 4 / 5).max(2)
        } else {
            (sk.cwnd >> 1).max(2)
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let us = |v: u32| if v == VENO_RTT_INIT { f64::NAN } else { v as f64 };
        out.push(("backlog", self.diff as f64 / (1 << V_PARAM_SHIFT) as f64));
        out.push(("congestive", if self.diff >= self.beta { 1.0 } else { 0.0 }));
        out.push(("base_rtt_us", us(self.basertt)));
        out.push(("cnt_rtt", self.cntrtt as f64));
        out.push(("inc", if self.inc { 1.0 } else { 0.0 }));
        out.push(("doing_veno", if self.doing_veno_now { 1.0 } else { 0.0 }));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "veno",
    description: "Veno: Vegas backlog N picks the loss response (N < 3: ×4/5, else ×1/2) and the CA growth (every RTT or every other RTT)",
    source: "Linux net/ipv4/tcp_veno.c (3.x); Fu & Liew, IEEE JSAC 21(2) 2003",
    params: PARAMS,
    make: |p| Ok(Box::new(Veno::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s.is_cwnd_limited_flag = true;
        s
    }

    fn ack(v: &mut Veno, sk: &mut Sock, rtt_us: i64) {
        v.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us, in_flight: 10 });
        v.cong_avoid(sk, 1);
    }

    /// Veno with basertt 20 000 (sample 19 999) and enough samples to be active.
    fn primed() -> Veno {
        let mut v = Veno::default();
        let mut sk = sock(10, 5);
        v.init(&mut sk);
        for _ in 0..3 {
            v.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 19_999, in_flight: 10 });
        }
        v.minrtt = VENO_RTT_INIT; // as the cong_avoid after those ACKs would leave it
        v
    }

    #[test]
    fn backlog_chooses_beta_for_ssthresh() {
        // cwnd 30, basertt 20 000, minrtt 25 000: target = 30·20000·2/25000 = 48,
        // diff = 60 − 48 = 12 (6 packets) ≥ beta 6 ⇒ congestive ⇒ halve: 15.
        let mut v = primed();
        let mut sk = sock(30, 10);
        ack(&mut v, &mut sk, 24_999);
        assert_eq!(v.diff, 12);
        assert_eq!(v.ssthresh(&mut sk), 15);
        // minrtt 21 000: target = 1 200 000/21000 = 57 (57.1), diff = 3 (1.5 packets) < 6 ⇒ 4/5: 24.
        let mut v = primed();
        let mut sk = sock(30, 10);
        ack(&mut v, &mut sk, 20_999);
        assert_eq!(v.diff, 3);
        assert_eq!(v.ssthresh(&mut sk), 24);
        // Boundary: diff exactly 6 (3 packets) is congestive. cwnd 30, minrtt 22 222:
        // target = 1 200 000/22222 = 54 ⇒ diff 6.
        let mut v = primed();
        let mut sk = sock(30, 10);
        ack(&mut v, &mut sk, 22_221);
        assert_eq!(v.diff, 6);
        assert_eq!(v.ssthresh(&mut sk), 15);
        // Before any Veno computation diff = 0 ⇒ 4/5 cut; and the floor of 2.
        let mut v = Veno::default();
        let mut sk = sock(2, 1);
        assert_eq!(v.ssthresh(&mut sk), 2);
        sk.cwnd = 50;
        assert_eq!(v.ssthresh(&mut sk), 40);
    }

    #[test]
    fn congestive_state_grows_every_other_period() {
        // cwnd 10, rtt 30 000: target = 10·20000·2/30000 = 13, diff = 7 ≥ 6 (congestive).
        let mut v = primed();
        let mut sk = sock(10, 5);
        let mut cw = Vec::new();
        for _ in 0..35 {
            ack(&mut v, &mut sk, 29_999);
            cw.push(sk.cwnd);
        }
        // Last diff was computed at cwnd 11: 22 − 11·20000·2/30000 (= 14) = 8.
        assert_eq!(v.diff, 8);
        // Calls 1–10 count to 10; call 11: cnt 10 ≥ 10, inc ⇒ cwnd 11.
        assert_eq!((cw[9], cw[10]), (10, 11));
        // Calls 12–22 count to 11; call 23: cnt ≥ 11 but inc = 0 ⇒ no growth (toggle).
        assert_eq!(cw[22], 11);
        // Calls 24–34 count to 11; call 35 ⇒ cwnd 12.
        assert_eq!((cw[33], cw[34]), (11, 12));
    }

    #[test]
    fn non_congestive_state_is_reno_per_ack() {
        // rtt = basertt ⇒ diff 0: +1 after cwnd ACKs (ACK-counting, whatever `acked` is).
        let mut v = primed();
        let mut sk = sock(10, 5);
        for i in 0..10 {
            v.pkts_acked(&mut sk, &AckSample { pkts_acked: 2, rtt_us: 19_999, in_flight: 10 });
            v.cong_avoid(&mut sk, 2);
            assert_eq!(sk.cwnd, if i < 9 { 10 } else { 11 }, "ack {}", i);
        }
        assert_eq!(v.diff, 0);
    }

    #[test]
    fn min_rtt_is_reset_every_call_and_samples_are_never_reset() {
        let mut v = primed();
        let mut sk = sock(10, 5);
        ack(&mut v, &mut sk, 19_999);
        assert_eq!(v.minrtt, VENO_RTT_INIT);
        assert_eq!(v.cntrtt, 4);
        // A cong_avoid without a fresh sample sees minrtt = 0x7fffffff ⇒ target 0 ⇒ diff = 2·cwnd.
        v.cong_avoid(&mut sk, 1);
        assert_eq!(v.diff, 20);
    }

    #[test]
    fn slow_start_and_reno_fallbacks() {
        // Too few samples: Reno (slow start by acked).
        let mut v = Veno::default();
        let mut sk = sock(10, 100);
        v.init(&mut sk);
        ack(&mut v, &mut sk, 20_000);
        v.cong_avoid(&mut sk, 3);
        assert_eq!(sk.cwnd, 14);
        // Active, slow start: tcp_slow_start, diff still computed.
        let mut v = primed();
        let mut sk = sock(10, 100);
        v.pkts_acked(&mut sk, &AckSample { pkts_acked: 4, rtt_us: 29_999, in_flight: 10 });
        v.cong_avoid(&mut sk, 4);
        assert_eq!((sk.cwnd, v.diff), (14, 7));
        // Not cwnd-limited: nothing.
        sk.is_cwnd_limited_flag = false;
        sk.max_packets_out = 2;
        v.cong_avoid(&mut sk, 4);
        assert_eq!(sk.cwnd, 14);
        // Outside Open: Reno; Open re-enables; TX_START forgets basertt.
        let mut sk = sock(10, 5);
        v.set_state(&mut sk, CaState::Recovery);
        sk.snd_cwnd_cnt = 9;
        v.cong_avoid(&mut sk, 1);
        assert_eq!(sk.cwnd, 11);
        v.set_state(&mut sk, CaState::Open);
        assert!(v.doing_veno_now);
        v.cwnd_event(&mut sk, CaEvent::TxStart);
        assert_eq!(v.basertt, VENO_RTT_INIT);
    }
}
