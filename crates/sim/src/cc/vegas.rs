//! TCP Vegas as in Linux net/ipv4/tcp_vegas.c (2.6.22 … 6.x: the algorithm is unchanged since
//! the 2.6.2x rewrite, only the hook signatures moved); Brakmo & Peterson, "TCP Vegas: End to
//! End Congestion Avoidance on a Global Internet", IEEE JSAC 13(8), 1995.
//!
//! What Linux does (and so do we), which differs from the paper:
//! * loss detection and recovery are the core's (PRR, RACK, RTO), not Vegas';
//! * slow start grows every RTT (not every other RTT); the "actual" rate is taken from the
//!   minimum RTT seen during the last RTT (a delayed-ACK filter) and the decision is made once
//!   per RTT, when the ACK passes `beg_snd_nxt` (the `snd_nxt` of the previous decision);
//! * `diff = cwnd·(rtt − baseRTT)/baseRTT` (packets queued, divided by **baseRTT**, as the
//!   kernel computes it; the paper's Expected−Actual rate difference times baseRTT is
//!   `cwnd·(rtt − baseRTT)/rtt`, which is smaller); u32 arithmetic as the kernel, so
//!   `cwnd·(rtt−baseRTT)` wraps past 2^32 exactly as the kernel's does;
//! * on leaving slow start cwnd is set to the "actual" window + 1;
//! * after every per-RTT decision `ssthresh = tcp_current_ssthresh()` (max(ssthresh, ¾·cwnd)),
//!   which is why Vegas traces show many ssthresh changes without loss.
//!
//! Simulator mapping: the kernel's `cong_avoid(sk, ack, acked)` argument `ack` is `sk.snd_una`
//! (already advanced when `cong_avoid` runs); sequence numbers are 64-bit byte offsets, so
//! `after()` is a plain `>`.
//!
//! [`VegasRtt`] is the kernel's `struct vegas` plus the helpers exported through tcp_vegas.h
//! (`tcp_vegas_init`, `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`) that
//! YeAH reuses.

use super::reno::Reno;
use super::{
    tcp_slow_start, AckSample, CaEvent, CaState, CongestionControl, ParamInfo, Params, SchemeInfo,
    Sock,
};

/// `0x7fffffff`: "no sample yet" value of `baseRTT` and `minRTT` (µs) in tcp_vegas.c.
pub const VEGAS_RTT_INIT: u32 = 0x7fff_ffff;

/// Module parameters (tcp_vegas.c `module_param`, packets).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "alpha", default: 2.0, doc: "lower bound of packets queued in the network: diff < alpha ⇒ cwnd += 1 per RTT (paper: 1)" },
    ParamInfo { name: "beta", default: 4.0, doc: "upper bound of packets queued in the network: diff > beta ⇒ cwnd −= 1 per RTT (paper: 3)" },
    ParamInfo { name: "gamma", default: 1.0, doc: "slow-start exit: leave slow start once diff > gamma packets" },
];

/// The Vegas RTT-sampling state (`struct vegas`, tcp_vegas.h) and its exported helpers.
#[derive(Clone, Debug)]
pub struct VegasRtt {
    /// Right edge (`snd_nxt`) of the current RTT: the per-RTT step runs when the ACK passes it.
    pub beg_snd_nxt: u64,
    /// Left edge at the start of the current RTT (kept by YeAH only, as in the kernel).
    pub beg_snd_una: u64,
    /// cwnd at the start of the current RTT (kept by YeAH only).
    pub beg_snd_cwnd: u32,
    /// Vegas is active (only in the Open state).
    pub doing_vegas_now: bool,
    /// RTT samples in the current RTT (`cntRTT`).
    pub cnt_rtt: u32,
    /// Minimum RTT (+1 µs) of the current RTT (`minRTT`).
    pub min_rtt: u32,
    /// Lifetime minimum RTT (+1 µs), the propagation-delay estimate (`baseRTT`).
    pub base_rtt: u32,
}

impl Default for VegasRtt {
    fn default() -> Self {
        VegasRtt {
            beg_snd_nxt: 0,
            beg_snd_una: 0,
            beg_snd_cwnd: 0,
            doing_vegas_now: true,
            cnt_rtt: 0,
            min_rtt: VEGAS_RTT_INIT,
            base_rtt: VEGAS_RTT_INIT,
        }
    }
}

impl VegasRtt {
    /// `vegas_enable`: start taking samples from the next window.
    pub fn enable(&mut self, sk: &Sock) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = sk.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = VEGAS_RTT_INIT;
    }

    /// `tcp_vegas_init`: forget baseRTT too.
    pub fn init(&mut self, sk: &Sock) {
        self.base_rtt = VEGAS_RTT_INIT;
        self.enable(sk);
    }

    /// `tcp_vegas_pkts_acked`: min-filter the RTT within this RTT and over the lifetime.
    pub fn pkts_acked(&mut self, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Never allow a zero rtt or baseRTT: +1 µs.
        let vrtt = (sample.rtt_us.min(u32::MAX as i64 - 1) as u32) + 1;
        if vrtt < self.base_rtt {
            self.base_rtt = vrtt;
        }
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    /// `tcp_vegas_state`: Vegas only in Open; re-enabling starts a fresh RTT.
    pub fn state(&mut self, sk: &Sock, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(sk);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: restart from idle ⇒ clean slate (baseRTT included).
    pub fn cwnd_event(&mut self, sk: &Sock, ev: CaEvent) {
        if ev == CaEvent::CwndRestart || ev == CaEvent::TxStart {
            self.init(sk);
        }
    }

    /// End of a per-RTT step: wipe the slate for the next RTT.
    pub fn next_rtt(&mut self) {
        self.cnt_rtt = 0;
        self.min_rtt = VEGAS_RTT_INIT;
    }
}

/// Vegas per-connection state.
#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: u32,
    beta: u32,
    gamma: u32,
    v: VegasRtt,
    /// `diff` (packets queued) of the last per-RTT decision, for traces.
    diff: u32,
    /// Per-RTT decisions taken (with ≥ 3 samples), for traces and tests.
    decisions: u64,
}

impl Vegas {
    pub fn new(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas { alpha, beta, gamma, v: VegasRtt::default(), diff: 0, decisions: 0 }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Vegas::new(
            p.int("alpha", 2, 0, 1 << 20)? as u32,
            p.int("beta", 4, 0, 1 << 20)? as u32,
            p.int("gamma", 1, 0, 1 << 20)? as u32,
        ))
    }
}

impl Default for Vegas {
    fn default() -> Self {
        Vegas::new(2, 4, 1)
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }

    fn init(&mut self, sk: &mut Sock) {
        self.v.init(sk);
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        super::tcp_reno_ssthresh(sk)
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !self.v.doing_vegas_now {
            Reno.cong_avoid(sk, acked);
            return;
        }
        if sk.snd_una > self.v.beg_snd_nxt {
            // Once per RTT. Save the extent of the current window for the next decision.
            self.v.beg_snd_nxt = sk.snd_nxt;
            if self.v.cnt_rtt <= 2 {
                // ≤ 2 samples: probably only delayed ACKs; behave like Reno.
                Reno.cong_avoid(sk, acked);
            } else {
                let rtt = self.v.min_rtt;
                let base = self.v.base_rtt;
                // Window we would have at the actual rate: cwnd·baseRTT/rtt (u64, as do_div).
                let target_cwnd = (sk.cwnd as u64 * base as u64 / rtt as u64) as u32;
                // Packets queued in the network (kernel u32 arithmetic).
                let diff = sk.cwnd.wrapping_mul(rtt.wrapping_sub(base)) / base;
                self.diff = diff;
                self.decisions += 1;
                if diff > self.gamma && sk.in_slow_start() {
                    // Going too fast: match the actual rate (+1 against truncation), leave SS.
                    sk.cwnd = sk.cwnd.min(target_cwnd.wrapping_add(1));
                    sk.ssthresh = sk.ssthresh.min(sk.cwnd); // tcp_vegas_ssthresh
                } else if sk.in_slow_start() {
                    tcp_slow_start(sk, acked);
                } else if diff > self.beta {
                    sk.cwnd -= 1;
                    sk.ssthresh = sk.ssthresh.min(sk.cwnd);
                } else if diff < self.alpha {
                    sk.cwnd += 1;
                }
                // else: sending just as fast as we should.
                if sk.cwnd < 2 {
                    sk.cwnd = 2;
                } else if sk.cwnd > sk.cwnd_clamp {
                    sk.cwnd = sk.cwnd_clamp;
                }
                sk.ssthresh = sk.current_ssthresh();
            }
            self.v.next_rtt();
        } else if sk.in_slow_start() {
            tcp_slow_start(sk, acked);
        }
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        self.v.state(sk, new_state);
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        self.v.cwnd_event(sk, ev);
    }

    fn pkts_acked(&mut self, _sk: &mut Sock, sample: &AckSample) {
        self.v.pkts_acked(sample);
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let us = |v: u32| if v == VEGAS_RTT_INIT { f64::NAN } else { v as f64 };
        out.push(("diff", self.diff as f64));
        out.push(("base_rtt_us", us(self.v.base_rtt)));
        out.push(("min_rtt_us", us(self.v.min_rtt)));
        out.push(("cnt_rtt", self.v.cnt_rtt as f64));
        out.push(("doing_vegas", if self.v.doing_vegas_now { 1.0 } else { 0.0 }));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "vegas",
    description: "Vegas: once per RTT diff = cwnd·(minRTT − baseRTT)/baseRTT packets queued; +1 below alpha, −1 above beta, leave slow start above gamma",
    source: "Linux net/ipv4/tcp_vegas.c (2.6.2x–6.x); Brakmo & Peterson, IEEE JSAC 13(8) 1995",
    params: PARAMS,
    make: |p| Ok(Box::new(Vegas::from_params(p)?)),
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
        s.is_cwnd_limited_flag = true;
        s.snd_nxt = 100 * MSS;
        s
    }

    fn rtt(v: &mut Vegas, sk: &mut Sock, us: i64) {
        v.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us: us, in_flight: 10 });
    }

    /// Vegas with baseRTT = 20 000 µs (sample 19 999 + 1), then an RTT whose samples have
    /// minimum `min_us` (+1), then the ACK that ends the RTT.
    fn one_rtt(cwnd: u32, ssthresh: u32, min_us: i64, params: (u32, u32, u32)) -> (Vegas, Sock) {
        let mut v = Vegas::new(params.0, params.1, params.2);
        let mut sk = sock(cwnd, ssthresh);
        v.init(&mut sk);
        rtt(&mut v, &mut sk, 19_999);
        v.v.next_rtt(); // baseRTT stays: lifetime minimum
        for d in [min_us + 3000, min_us - 1, min_us + 500] {
            rtt(&mut v, &mut sk, d);
        }
        assert_eq!((v.v.base_rtt, v.v.min_rtt, v.v.cnt_rtt), (20_000, min_us as u32, 3));
        sk.snd_una = v.v.beg_snd_nxt + MSS; // ACK past beg_snd_nxt
        sk.snd_nxt += 20 * MSS;
        v.cong_avoid(&mut sk, 1);
        (v, sk)
    }

    #[test]
    fn rtt_sampling_min_filters_with_plus_one() {
        let mut v = Vegas::default();
        let mut sk = sock(10, 100);
        v.init(&mut sk);
        rtt(&mut v, &mut sk, 25_000);
        rtt(&mut v, &mut sk, 21_000);
        rtt(&mut v, &mut sk, -1); // no sample
        rtt(&mut v, &mut sk, 23_000);
        assert_eq!((v.v.base_rtt, v.v.min_rtt, v.v.cnt_rtt), (21_001, 21_001, 3));
        rtt(&mut v, &mut sk, 0);
        assert_eq!(v.v.base_rtt, 1); // never zero
    }

    #[test]
    fn ca_diff_thresholds_decide_plus_one_minus_one_hold() {
        // cwnd 20, baseRTT 20 000 µs: diff = 20·(rtt − 20000)/20000.
        // rtt 21 000: diff = 1 < alpha 2 ⇒ +1; ssthresh = max(10, 21/2 + 21/4 = 15) = 15.
        let (v, sk) = one_rtt(20, 10, 21_000, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd, sk.ssthresh), (1, 21, 15));
        // rtt 22 000: diff = 2 = alpha ⇒ hold.
        let (v, sk) = one_rtt(20, 10, 22_000, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd, sk.ssthresh), (2, 20, 15));
        // rtt 24 999: diff = 20·4999/20000 = 4.999 → 4 = beta ⇒ hold.
        let (v, sk) = one_rtt(20, 10, 24_999, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd), (4, 20));
        // rtt 25 000: diff = 5 > beta ⇒ −1; ssthresh = min(10, 19) = 10, then max(10, 9+4) = 13.
        let (v, sk) = one_rtt(20, 10, 25_000, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd, sk.ssthresh), (5, 19, 13));
        // The kernel divides by baseRTT: with the paper's /rtt this would be 20·5000/25000 = 4 (hold).
    }

    #[test]
    fn defaults_are_the_linux_module_parameters() {
        // tcp_vegas.c: alpha = 2, beta = 4, gamma = 1. With the defaults a flow 1.5 packets
        // above its base RTT (diff 1 < alpha 2) still grows; with alpha 1 it would hold.
        let v = Vegas::from_params(&Params { scheme: "vegas", obj: None }).unwrap();
        assert_eq!((v.alpha, v.beta, v.gamma), (2, 4, 1));
        let (_, sk) = one_rtt(20, 10, 21_500, (v.alpha, v.beta, v.gamma));
        assert_eq!(sk.cwnd, 21);
    }

    #[test]
    fn params_move_the_thresholds() {
        // diff = 1: default alpha 2 ⇒ +1; alpha 1 ⇒ hold.
        let (_, sk) = one_rtt(20, 10, 21_000, (1, 3, 1));
        assert_eq!(sk.cwnd, 20);
        // diff = 4 > beta 3 ⇒ −1.
        let (_, sk) = one_rtt(20, 10, 24_000, (1, 3, 1));
        assert_eq!(sk.cwnd, 19);
        let p = crate::cc::make("vegas", &serde_json::json!({"alpha": 1, "beta": 3})).unwrap();
        assert_eq!(p.name(), "vegas");
        let e = crate::cc::make("vegas", &serde_json::json!({"delta": 1})).err().unwrap();
        assert!(e.contains("delta") && e.contains("alpha, beta, gamma"), "{}", e);
    }

    #[test]
    fn slow_start_exit_sets_actual_window_plus_one() {
        // cwnd 40 in slow start, rtt 30 000: diff = 40·10000/20000 = 20 > gamma;
        // target = 40·20000/30000 = 26 ⇒ cwnd = min(40, 27) = 27, ssthresh = min(inf, 27) = 27;
        // then tcp_current_ssthresh = max(27, 13 + 6) = 27.
        let (v, sk) = one_rtt(40, TCP_INFINITE_SSTHRESH, 30_000, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd, sk.ssthresh), (20, 27, 27));
        // rtt 20 500: diff = 40·500/20000 = 1 = gamma ⇒ stay in slow start: +acked (1).
        let (v, sk) = one_rtt(40, TCP_INFINITE_SSTHRESH, 20_500, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd), (1, 41));
        // …and ssthresh becomes max(inf, …) = inf (still slow start).
        assert_eq!(sk.ssthresh, TCP_INFINITE_SSTHRESH);
    }

    #[test]
    fn between_decisions_only_slow_start_grows() {
        let mut v = Vegas::default();
        let mut sk = sock(20, 10);
        v.init(&mut sk);
        sk.snd_una = sk.snd_nxt; // not past beg_snd_nxt
        v.cong_avoid(&mut sk, 5);
        assert_eq!(sk.cwnd, 20); // CA: nothing until the RTT ends
        let mut sk2 = sock(20, 100);
        v.init(&mut sk2);
        sk2.snd_una = sk2.snd_nxt;
        v.cong_avoid(&mut sk2, 5);
        assert_eq!(sk2.cwnd, 25); // slow start per ACK
    }

    #[test]
    fn too_few_samples_means_reno() {
        let mut v = Vegas::default();
        let mut sk = sock(20, 10);
        v.init(&mut sk);
        rtt(&mut v, &mut sk, 20_000);
        rtt(&mut v, &mut sk, 30_000); // 2 samples only
        sk.snd_cwnd_cnt = 19;
        sk.snd_una = sk.snd_nxt + 1;
        v.cong_avoid(&mut sk, 1);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (21, 0)); // Reno AI, not a Vegas decision
        assert_eq!((v.decisions, v.v.cnt_rtt), (0, 0)); // slate wiped anyway
    }

    #[test]
    fn outside_open_it_is_reno_and_open_restarts_the_rtt() {
        let mut v = Vegas::default();
        let mut sk = sock(20, 10);
        v.init(&mut sk);
        for _ in 0..5 {
            rtt(&mut v, &mut sk, 30_000);
        }
        v.set_state(&mut sk, CaState::Recovery);
        assert!(!v.v.doing_vegas_now);
        sk.snd_cwnd_cnt = 19;
        sk.snd_una = sk.snd_nxt + 1;
        v.cong_avoid(&mut sk, 1);
        assert_eq!(sk.cwnd, 21); // Reno
        sk.snd_nxt += 50 * MSS;
        v.set_state(&mut sk, CaState::Open);
        assert!(v.v.doing_vegas_now);
        assert_eq!((v.v.cnt_rtt, v.v.min_rtt, v.v.beg_snd_nxt), (0, VEGAS_RTT_INIT, sk.snd_nxt));
        assert_eq!(v.v.base_rtt, 30_001); // kept
        v.cwnd_event(&mut sk, CaEvent::TxStart);
        assert_eq!(v.v.base_rtt, VEGAS_RTT_INIT); // restart forgets baseRTT
        v.cwnd_event(&mut sk, CaEvent::CompleteCwr);
        assert!(v.v.doing_vegas_now);
    }

    #[test]
    fn cwnd_floor_two_and_clamp() {
        // cwnd 2, rtt 3× base: diff = 2·40000/20000 = 4… make it 6 with rtt 80 000: 2·60000/20000 = 6 > 4.
        let (v, sk) = one_rtt(2, 1, 80_000, (2, 4, 1));
        assert_eq!((v.diff, sk.cwnd), (6, 2)); // 1 → floored to 2
        let mut v = Vegas::default();
        let mut sk = sock(50, 10);
        sk.cwnd_clamp = 50;
        v.init(&mut sk);
        for d in [19_999, 20_000, 20_001] {
            rtt(&mut v, &mut sk, d);
        }
        sk.snd_una = sk.snd_nxt + 1;
        v.cong_avoid(&mut sk, 1);
        assert_eq!(sk.cwnd, 50); // diff 0 < alpha, +1 clamped
    }

    #[test]
    fn reno_halving_and_sample_names() {
        let mut v = Vegas::default();
        let mut sk = sock(31, 100);
        assert_eq!(v.ssthresh(&mut sk), 15);
        let mut out = Vec::new();
        v.sample(&mut out);
        let names: Vec<_> = out.iter().map(|x| x.0).collect();
        assert_eq!(names, ["diff", "base_rtt_us", "min_rtt_us", "cnt_rtt", "doing_vegas"]);
    }
}
