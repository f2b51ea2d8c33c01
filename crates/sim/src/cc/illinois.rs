//! TCP-Illinois as in Linux net/ipv4/tcp_illinois.c (4.x–6.x form with `struct ack_sample`),
//! Liu, Başar, Srikant, "TCP-Illinois: A loss- and delay-based congestion control algorithm for
//! high-speed networks", Performance Evaluation 65(6–7), 2008.
//!
//! Loss-based AIMD whose increase `alpha` (0.3 … 10 packets per RTT) and decrease `beta`
//! (1/8 … 1/2) are set once per RTT from the average queueing delay `da = avg_rtt − base_rtt`
//! relative to the maximum seen `dm = max_rtt − base_rtt`:
//! * alpha = 10 while `da ≤ dm/100` (after having been above, only once `theta` = 5
//!   consecutive low RTTs were seen), else the convex curve `k1/(k2 + da)` from 10 at d1 = dm/100
//!   down to 0.3 at dm;
//! * beta = 1/8 for `da ≤ dm/10`, 1/2 for `da ≥ 0.8·dm`, linear in between;
//! * below `win_thresh` = 15 packets alpha = 1, beta = 1/2 (Reno).
//!
//! Fixed point and integer arithmetic exactly as the kernel: alpha ×128 (`ALPHA_SHIFT` 7), beta
//! ×64 (`BETA_SHIFT` 6), RTTs in µs clamped to `RTT_MAX`, u32 divisions truncating. The
//! growth is `cwnd += alpha/cwnd` per packet as `snd_cwnd_cnt·alpha >> 7 ≥ cwnd`, where the
//! first call after an ACK counts the ACK's `pkts_acked` and later ones count 1.
//!
//! `base_rtt`/`max_rtt` are lifetime extremes (the kernel's "TODO: age max_rtt?").
//! Simulator mapping: the kernel's `ack` is `sk.snd_una`. No known differences.

use super::{
    tcp_slow_start, AckSample, CaState, CongestionControl, ParamInfo, Params, SchemeInfo, Sock,
};

/// `ALPHA_SHIFT`: alpha is fixed point ×2^7.
pub const ALPHA_SHIFT: u32 = 7;
pub const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// `ALPHA_MIN` ≈ 0.3 (= 38/128).
pub const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// `ALPHA_MAX` = 10.0.
pub const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// `ALPHA_BASE` = 1.0 (Reno).
pub const ALPHA_BASE: u32 = ALPHA_SCALE;
/// `RTT_MAX` (µs) ≈ 3.3 s: keeps `dm·ALPHA_MAX` within u32.
pub const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;
/// `BETA_SHIFT`: beta is fixed point ×2^6.
pub const BETA_SHIFT: u32 = 6;
pub const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// `BETA_MIN` = 1/8, `BETA_MAX` = `BETA_BASE` = 1/2.
pub const BETA_MIN: u32 = BETA_SCALE / 8;
pub const BETA_MAX: u32 = BETA_SCALE / 2;
pub const BETA_BASE: u32 = BETA_MAX;

/// Module parameters (tcp_illinois.c `module_param`).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "win_thresh", default: 15.0, doc: "window (packets) below which Illinois behaves as Reno (alpha 1, beta 1/2)" },
    ParamInfo { name: "theta", default: 5.0, doc: "number of consecutive low-delay RTTs before alpha returns to its maximum" },
];

#[derive(Clone, Debug)]
pub struct Illinois {
    win_thresh: u32,
    theta: u32,
    /// Sum and count of RTT samples (µs) in the current RTT.
    sum_rtt: u64,
    cnt_rtt: u32,
    /// Lifetime minimum / maximum RTT (µs).
    base_rtt: u32,
    max_rtt: u32,
    /// Right edge of the current RTT.
    end_seq: u64,
    /// Additive increase ×128, multiplicative decrease ×64.
    alpha: u32,
    beta: u32,
    /// Packets acked by the current ACK (kernel u16).
    acked: u32,
    /// The average delay went above the low threshold.
    rtt_above: bool,
    /// Consecutive low-delay RTTs since.
    rtt_low: u32,
    /// Last (da, dm) used (µs), for traces.
    last_da: u32,
    last_dm: u32,
}

impl Illinois {
    pub fn new(win_thresh: u32, theta: u32) -> Self {
        Illinois {
            win_thresh,
            theta,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            last_da: 0,
            last_dm: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Illinois::new(p.int("win_thresh", 15, 0, 1 << 30)? as u32, p.int("theta", 5, 0, 255)? as u32))
    }

    fn rtt_reset(&mut self, sk: &Sock) {
        self.end_seq = sk.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// `alpha()`: additive increase (×128) from average and maximum queueing delay.
    fn calc_alpha(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100; // low threshold
        if da <= d1 {
            // Never left the low-delay zone: full speed.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait for theta good RTTs before going back to alpha max.
            self.rtt_low += 1;
            if self.rtt_low < self.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // alpha = k1/(k2 + da) with k1, k2 putting ALPHA_MAX at d1 and ALPHA_MIN at dm.
        let dm = dm - d1;
        let da = da - d1;
        dm.wrapping_mul(ALPHA_MAX) / dm.wrapping_add(da.wrapping_mul(ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN)
    }

    /// `beta()`: multiplicative decrease (×64), linear between 10 % and 80 % of the max delay.
    fn calc_beta(da: u32, dm: u32) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = (8 * dm) / 10;
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        (BETA_MIN.wrapping_mul(d3))
            .wrapping_sub(BETA_MAX.wrapping_mul(d2))
            .wrapping_add((BETA_MAX - BETA_MIN).wrapping_mul(da))
            / (d3 - d2)
    }

    /// `update_params`: once per RTT.
    fn update_params(&mut self, sk: &Sock) {
        if sk.cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt.wrapping_sub(self.base_rtt);
            let da = ((self.sum_rtt / self.cnt_rtt as u64) as u32).wrapping_sub(self.base_rtt);
            self.alpha = self.calc_alpha(da, dm);
            self.beta = Self::calc_beta(da, dm);
            self.last_da = da;
            self.last_dm = dm;
        }
        self.rtt_reset(sk);
    }
}

impl Default for Illinois {
    fn default() -> Self {
        Illinois::new(15, 5)
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }

    fn init(&mut self, sk: &mut Sock) {
        let (w, t) = (self.win_thresh, self.theta);
        *self = Illinois::new(w, t);
        self.rtt_reset(sk);
    }

    fn pkts_acked(&mut self, _sk: &mut Sock, sample: &AckSample) {
        self.acked = sample.pkts_acked & 0xffff;
        if sample.rtt_us < 0 {
            return; // dup ACK, no RTT sample
        }
        // Ignore bogus values: prevents wraparound in the alpha arithmetic.
        let rtt = sample.rtt_us.min(RTT_MAX as i64) as u32;
        if self.base_rtt > rtt {
            self.base_rtt = rtt;
        }
        if self.max_rtt < rtt {
            self.max_rtt = rtt;
        }
        self.cnt_rtt += 1;
        self.sum_rtt += rtt as u64;
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(sk);
        }
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if sk.snd_una > self.end_seq {
            self.update_params(sk);
        }
        // RFC 2861: only grow when the window is used.
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            tcp_slow_start(sk, acked);
        } else {
            // snd_cwnd_cnt: packets since the last increment; cwnd += alpha/cwnd per packet.
            sk.snd_cwnd_cnt += self.acked;
            self.acked = 1;
            let delta = sk.snd_cwnd_cnt.wrapping_mul(self.alpha) >> ALPHA_SHIFT;
            if delta >= sk.cwnd {
                sk.cwnd = (sk.cwnd + delta / sk.cwnd).min(sk.cwnd_clamp);
                sk.snd_cwnd_cnt = 0;
            }
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        (sk.cwnd - ((sk.cwnd * self.beta) >> BETA_SHIFT)).max(2)
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("alpha", self.alpha as f64 / ALPHA_SCALE as f64));
        out.push(("beta", self.beta as f64 / BETA_SCALE as f64));
        out.push(("base_rtt_us", if self.base_rtt == 0x7fff_ffff { f64::NAN } else { self.base_rtt as f64 }));
        out.push(("max_rtt_us", self.max_rtt as f64));
        out.push(("avg_delay_us", self.last_da as f64));
        out.push(("max_delay_us", self.last_dm as f64));
        out.push(("rtt_above", if self.rtt_above { 1.0 } else { 0.0 }));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "illinois",
    description: "Illinois: loss-based AIMD with alpha in [0.3, 10] and beta in [1/8, 1/2] set per RTT from the average queueing delay",
    source: "Linux net/ipv4/tcp_illinois.c (4.x–6.x); Liu, Başar & Srikant, Performance Evaluation 65(6-7) 2008",
    params: PARAMS,
    make: |p| Ok(Box::new(Illinois::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(MSS as u32, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s.is_cwnd_limited_flag = true;
        s.snd_nxt = 100 * MSS;
        s
    }

    fn rtt(c: &mut Illinois, sk: &mut Sock, us: i64) {
        c.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us: us, in_flight: 10 });
    }

    /// One RTT: samples, then the ACK past end_seq that runs update_params.
    fn round(c: &mut Illinois, sk: &mut Sock, samples: &[i64]) {
        for &s in samples {
            rtt(c, sk, s);
        }
        sk.snd_una = c.end_seq + 1;
        sk.snd_nxt = sk.snd_una + 50 * MSS;
        let saved = (sk.cwnd, sk.snd_cwnd_cnt);
        sk.is_cwnd_limited_flag = false; // isolate the parameter update from growth
        c.cong_avoid(sk, 1);
        sk.is_cwnd_limited_flag = true;
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), saved);
    }

    #[test]
    fn alpha_curve_from_average_delay() {
        // dm = 10 000 (base 10 000, max 20 000), d1 = 100.
        let mut c = Illinois::default();
        assert_eq!(c.calc_alpha(100, 10_000), ALPHA_MAX); // da ≤ d1, never above
        // da 5000: 9900·1280/(9900 + 4900·1242/38) = 12 672 000/(9900 + 160 152) = 74 (0.578).
        assert_eq!(c.calc_alpha(5_000, 10_000), 74);
        assert!(c.rtt_above);
        // da = dm: 12 672 000/(9900 + 9900·1242/38 = 323 573) = 38 = ALPHA_MIN.
        assert_eq!(c.calc_alpha(10_000, 10_000), ALPHA_MIN);
        // da 1000: 12 672 000/(9900 + 900·1242/38 = 29 415) = 322 (2.52).
        assert_eq!(c.calc_alpha(1_000, 10_000), 322);
        assert_eq!(ALPHA_MIN, 38);
        assert_eq!(RTT_MAX, 3_355_443);
    }

    #[test]
    fn beta_curve_from_average_delay() {
        // dm 10 000: d2 = 1000, d3 = 8000.
        assert_eq!(Illinois::calc_beta(1_000, 10_000), BETA_MIN); // ≤ 10 %
        assert_eq!(Illinois::calc_beta(8_000, 10_000), BETA_MAX); // ≥ 80 %
        // (8·8000 − 32·1000 + 24·5000)/7000 = 152 000/7000 = 21 (0.328).
        assert_eq!(Illinois::calc_beta(5_000, 10_000), 21);
        // (64 000 − 32 000 + 24·1001)/7000 = 56 024/7000 = 8.
        assert_eq!(Illinois::calc_beta(1_001, 10_000), 8);
        assert_eq!(Illinois::calc_beta(0, 0), BETA_MIN);
    }

    #[test]
    fn per_rtt_update_uses_average_and_lifetime_extremes() {
        let mut c = Illinois::default();
        let mut sk = sock(20, 10);
        c.init(&mut sk);
        // RTT 1: samples 10 000 and 20 000: base 10 000, max 20 000, avg 15 000 ⇒ da 5000, dm 10 000.
        round(&mut c, &mut sk, &[10_000, 20_000]);
        assert_eq!((c.last_da, c.last_dm, c.alpha, c.beta), (5_000, 10_000, 74, 21));
        assert_eq!((c.cnt_rtt, c.sum_rtt), (0, 0));
        // ssthresh = 100 − (100·21 >> 6 = 32) = 68.
        sk.cwnd = 100;
        assert_eq!(c.ssthresh(&mut sk), 68);
        // RTT 2: one sample 18 000 ⇒ da 8000 ⇒ beta 1/2;
        // alpha = 12 672 000/(9900 + 7900·1242/38 = 258 205) = 12 672 000/268 105 = 47 (47.26).
        round(&mut c, &mut sk, &[18_000]);
        assert_eq!((c.alpha, c.beta), (47, BETA_MAX));
        assert_eq!(c.ssthresh(&mut sk), 50);
        // An RTT without samples keeps alpha/beta.
        round(&mut c, &mut sk, &[]);
        assert_eq!((c.alpha, c.beta), (47, BETA_MAX));
        // Below win_thresh: Reno values.
        sk.cwnd = 14;
        round(&mut c, &mut sk, &[18_000]);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
        assert_eq!(c.ssthresh(&mut sk), 7);
    }

    #[test]
    fn alpha_returns_to_max_after_theta_low_rtts() {
        let mut c = Illinois::default();
        let mut sk = sock(20, 10);
        c.init(&mut sk);
        round(&mut c, &mut sk, &[10_000, 20_000]); // above: alpha 74
        assert_eq!(c.alpha, 74);
        // Low-delay RTTs (avg 10 050 ⇒ da 50 ≤ d1 100): alpha held for theta − 1 = 4 RTTs.
        for i in 1..=4 {
            round(&mut c, &mut sk, &[10_000, 10_100]);
            assert_eq!((c.alpha, c.rtt_low), (74, i));
        }
        round(&mut c, &mut sk, &[10_000, 10_100]);
        assert_eq!((c.alpha, c.rtt_low, c.rtt_above), (ALPHA_MAX, 0, false));
        // The beta for da ≤ dm/10 is 1/8: ssthresh of 100 = 100 − 12 = 88.
        sk.cwnd = 100;
        assert_eq!(c.ssthresh(&mut sk), 88);
        // RTO (Loss) resets to Reno values.
        c.set_state(&mut sk, CaState::Loss);
        assert_eq!((c.alpha, c.beta, c.rtt_above), (ALPHA_BASE, BETA_BASE, false));
        c.set_state(&mut sk, CaState::Recovery); // other states: untouched
        assert_eq!(c.alpha, ALPHA_BASE);
    }

    #[test]
    fn growth_is_alpha_over_cwnd_per_packet() {
        // alpha 10: cwnd 20 grows by 1 every 2 packets (cnt·1280 >> 7 = 10·cnt ≥ 20).
        let mut c = Illinois::default();
        let mut sk = sock(20, 10);
        c.init(&mut sk);
        sk.snd_una = 0; // no per-RTT update: alpha stays ALPHA_MAX from init
        c.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 10_000, in_flight: 20 });
        c.cong_avoid(&mut sk, 1);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (20, 1));
        c.cong_avoid(&mut sk, 1); // later calls count 1
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (21, 0));
        // A stretch ACK of 6 packets: cnt 6 ⇒ delta 60 ≥ 21 ⇒ cwnd += 60/21 = 2.
        c.pkts_acked(&mut sk, &AckSample { pkts_acked: 6, rtt_us: 10_000, in_flight: 20 });
        c.cong_avoid(&mut sk, 6);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (23, 0));
        // alpha 0.3 (38): 23 needs cnt·38 >> 7 ≥ 23 ⇒ cnt ≥ 78 (77·38 = 2926 >> 7 = 22).
        c.alpha = ALPHA_MIN;
        for _ in 0..77 {
            c.cong_avoid(&mut sk, 1);
        }
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (23, 77));
        c.cong_avoid(&mut sk, 1);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (24, 0));
        // Slow start: tcp_slow_start; not cwnd-limited: nothing.
        let mut sk = sock(10, 100);
        c.cong_avoid(&mut sk, 3);
        assert_eq!(sk.cwnd, 13);
        sk.is_cwnd_limited_flag = false;
        sk.max_packets_out = 1;
        c.cong_avoid(&mut sk, 3);
        assert_eq!(sk.cwnd, 13);
    }

    #[test]
    fn params() {
        let c = crate::cc::make("illinois", &serde_json::json!({"win_thresh": 30, "theta": 2})).unwrap();
        assert_eq!(c.name(), "illinois");
        let e = crate::cc::make("illinois", &serde_json::json!({"alpha": 2})).err().unwrap();
        assert!(e.contains("win_thresh, theta"), "{}", e);
        let mut c = Illinois::new(30, 5);
        let mut sk = sock(20, 10);
        c.init(&mut sk);
        round(&mut c, &mut sk, &[10_000, 20_000]);
        assert_eq!(c.alpha, ALPHA_BASE); // 20 < win_thresh 30
    }
}
