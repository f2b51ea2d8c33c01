//! H-TCP (Shorten & Leith, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
//! 2004) as in Linux net/ipv4/tcp_htcp.c, 5.x/6.x form.
//!
//! The additive increase grows with Δ, the time since the last congestion event:
//! α(Δ) = 1 for Δ ≤ 1 s, else 1 + 10(Δ − 1) + ((Δ − 1)/2)², optionally scaled by minRTT/100 ms
//! (ratio clamped to [0.5, 10]) and then by 2(1 − β) so that the mean throughput matches
//! standard TCP. β = minRTT/maxRTT clamped to [0.5, 0.8] (adaptive backoff), or 0.5 right after
//! a change of more than ±20 % in the achieved throughput (bandwidth switch). Growth:
//! cwnd += α/cwnd per ACK (one credit per packet acked).
//!
//! Arithmetic as the kernel: α and β in fixed point ×128 (`<< 7`), time and RTTs in jiffies with
//! HZ = 1000 (as cubic.rs: 1 jiffy = 1 ms, `usecs_to_jiffies` rounds up), integer divisions in the
//! kernel's order.
//!
//! Known differences:
//! * `undo_last_cong` is an `Option` instead of the kernel's "0 = none" (jiffies start at 0 in
//!   the simulator, where 0 is a real time).
//! * The growth test `(snd_cwnd_cnt·α)>>7 ≥ cwnd` is computed in 64 bits (the kernel's 32-bit
//!   product could wrap only after minutes without loss at huge windows).

use super::{
    tcp_reno_undo_cwnd, tcp_slow_start, AckSample, CaState, CongestionControl, ParamInfo, Params,
    SchemeInfo, Sock,
};

/// `ALPHA_BASE`: 1.0 in ×128 fixed point.
const ALPHA_BASE: u32 = 1 << 7;
/// `BETA_MIN`: 0.5 ×128.
const BETA_MIN: u32 = 1 << 6;
/// `BETA_MAX`: 0.8 ×128 (102/128 = 0.797).
const BETA_MAX: u32 = 102;
/// Kernel jiffies per second assumed (HZ = 1000).
const HZ: u32 = 1000;

/// Module parameters (tcp_htcp.c `module_param`, Linux names and defaults).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "use_rtt_scaling", default: 1.0, doc: "scale the increase α by minRTT/100 ms (ratio clamped to [0.5, 10]) for RTT fairness" },
    ParamInfo { name: "use_bandwidth_switch", default: 1.0, doc: "use β = 0.5 after the achieved throughput changed by more than ±20 % (bandwidth switcher)" },
];

/// `msecs_to_jiffies` / `usecs_to_jiffies` at HZ = 1000 (rounding up).
#[inline]
fn usecs_to_jiffies(us: u64) -> u32 {
    (us.div_ceil(1000)).min(u32::MAX as u64) as u32
}

/// Linux `between(seq1, seq2, seq3)`: seq2 ≤ seq1 ≤ seq3 in wrapping u32 arithmetic.
#[inline]
fn between(seq1: u32, seq2: u32, seq3: u32) -> bool {
    seq3.wrapping_sub(seq2) >= seq1.wrapping_sub(seq2)
}

/// Per-connection state (`struct htcp`).
#[derive(Clone, Debug)]
pub struct Htcp {
    use_rtt_scaling: bool,
    use_bandwidth_switch: bool,
    /// Increase per RTT ×128.
    alpha: u32,
    /// Backoff factor ×128.
    beta: u32,
    /// Adaptive backoff enabled (delayed until one congestion event has been seen).
    modeswitch: bool,
    /// Packets acked by the current ACK (credits for the AI counter).
    pkts_acked: u32,
    /// Packets acked since `lasttime` (throughput estimate).
    packetcount: u32,
    /// Minimum and maximum RTT seen (jiffies); 0 = none yet.
    min_rtt: u32,
    max_rtt: u32,
    /// Jiffies at the end of the last congestion event.
    last_cong: u32,
    undo_last_cong: Option<u32>,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    /// Achieved throughput (packets/s): min, max, max at the previous backoff, current EWMA.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    /// Jiffies of the start of the current throughput sample.
    lasttime: u32,
    /// Jiffies at the last hook call (for traces only).
    now: u32,
}

impl Htcp {
    pub fn new(use_rtt_scaling: bool, use_bandwidth_switch: bool) -> Self {
        Htcp {
            use_rtt_scaling,
            use_bandwidth_switch,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
            now: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Htcp::new(p.bool("use_rtt_scaling", true)?, p.bool("use_bandwidth_switch", true)?))
    }

    /// `tcp_jiffies32` at HZ = 1000.
    #[inline]
    fn jiffies(sk: &Sock) -> u32 {
        (sk.now_ns / 1_000_000) as u32
    }

    /// `htcp_cong_time`: jiffies since the last congestion event ended.
    #[inline]
    fn cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.last_cong)
    }

    /// `htcp_reset`: remember undo state; a congestion event starts now.
    fn reset(&mut self, now: u32) {
        self.undo_last_cong = Some(self.last_cong);
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now;
    }

    /// `measure_rtt`: minRTT always; maxRTT in Open only, in upward steps of at most 20 ms.
    fn measure_rtt(&mut self, sk: &Sock, srtt: u32) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if sk.ca_state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < srtt && srtt <= self.max_rtt + 20 {
                self.max_rtt = srtt;
            }
        }
    }

    /// `htcp_beta_update`.
    fn beta_update(&mut self, min_rtt: u32, max_rtt: u32) {
        if self.use_bandwidth_switch {
            let max_b = self.max_b;
            let old_max_b = self.old_max_b;
            self.old_max_b = self.max_b;
            if !between(
                max_b.wrapping_mul(5),
                old_max_b.wrapping_mul(4),
                old_max_b.wrapping_mul(6),
            ) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && min_rtt > 10 && max_rtt != 0 {
            self.beta = ((min_rtt << 7) / max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// `htcp_alpha_update`: α = 2·factor(Δ)·(1 − β), ×128.
    fn alpha_update(&mut self, now: u32) {
        let min_rtt = self.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now);
        if diff > HZ {
            diff -= HZ;
            factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / HZ)) / HZ;
        }
        if self.use_rtt_scaling && min_rtt != 0 {
            // 8·(100 ms / minRTT), clamped to [0.5, 10] ×8.
            let scale = ((HZ << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.alpha = 2 * factor * ((1 << 7) - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// `htcp_param_update`: called at a congestion event (from `ssthresh`).
    fn param_update(&mut self, now: u32) {
        let (min_rtt, max_rtt) = (self.min_rtt, self.max_rtt);
        self.beta_update(min_rtt, max_rtt);
        self.alpha_update(now);
        // Slowly fading memory of maxRTT (routing changes).
        if min_rtt > 0 && max_rtt > min_rtt {
            self.max_rtt = min_rtt + (max_rtt - min_rtt) * 95 / 100;
        }
    }

    /// α as a real number (segments per RTT).
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / 128.0
    }

    /// β as a real number.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / 128.0
    }
}

impl Default for Htcp {
    fn default() -> Self {
        Htcp::new(true, true)
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// `htcp_init`.
    fn init(&mut self, sk: &mut Sock) {
        *self = Htcp::new(self.use_rtt_scaling, self.use_bandwidth_switch);
        self.last_cong = Self::jiffies(sk);
        self.now = self.last_cong;
    }

    /// `htcp_recalc_ssthresh`: update β and α, then max(cwnd·β, 2).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        let now = Self::jiffies(sk);
        self.now = now;
        self.param_update(now);
        (((sk.cwnd as u64 * self.beta as u64) >> 7) as u32).max(2)
    }

    /// `htcp_cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            tcp_slow_start(sk, acked);
            return;
        }
        // In theory cwnd += α/cwnd per packet.
        if (sk.snd_cwnd_cnt as u64 * self.alpha as u64) >> 7 >= sk.cwnd as u64 {
            if sk.cwnd < sk.cwnd_clamp {
                sk.cwnd += 1;
            }
            sk.snd_cwnd_cnt = 0;
            let now = Self::jiffies(sk);
            self.now = now;
            self.alpha_update(now);
        } else {
            sk.snd_cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }

    /// `htcp_state`.
    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        let now = Self::jiffies(sk);
        self.now = now;
        match new_state {
            CaState::Open => {
                if self.undo_last_cong.take().is_some() {
                    self.last_cong = now;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// `htcp_cwnd_undo`: restore the congestion-event memory, then Reno's undo.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        if let Some(lc) = self.undo_last_cong.take() {
            self.last_cong = lc;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
        }
        tcp_reno_undo_cwnd(sk)
    }

    /// `measure_achieved_throughput`.
    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        let now = Self::jiffies(sk);
        self.now = now;
        if sk.ca_state == CaState::Open {
            // The kernel stores it in a u16.
            self.pkts_acked = sample.pkts_acked & 0xffff;
        }
        if sample.rtt_us > 0 {
            self.measure_rtt(sk, usecs_to_jiffies(sample.rtt_us as u64));
        }
        if !self.use_bandwidth_switch {
            return;
        }
        // Achieved throughput, in Open/Disorder only.
        if !matches!(sk.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount = self.packetcount.wrapping_add(sample.pkts_acked);
        let a = self.alpha >> 7;
        let need = sk.cwnd.wrapping_sub(if a != 0 { a } else { 1 });
        if self.packetcount >= need && now.wrapping_sub(self.lasttime) >= self.min_rtt && self.min_rtt > 0 {
            let cur_bi = (self.packetcount as u64 * HZ as u64 / now.wrapping_sub(self.lasttime) as u64) as u32;
            if self.cong_time(now) / self.min_rtt <= 3 {
                // Just after backoff.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = ((3 * self.bi as u64 + cur_bi as u64) / 4) as u32;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("alpha", self.alpha()));
        out.push(("beta", self.beta()));
        out.push(("delta_s", self.cong_time(self.now) as f64 / HZ as f64));
        out.push(("min_rtt_ms", self.min_rtt as f64));
        out.push(("max_rtt_ms", self.max_rtt as f64));
        out.push(("max_b_pps", self.max_b as f64));
        out.push(("modeswitch", if self.modeswitch { 1.0 } else { 0.0 }));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "htcp",
    description: "H-TCP: increase grows with time since the last loss (RTT-scaled), backoff minRTT/maxRTT in [0.5, 0.8]",
    source: "Linux net/ipv4/tcp_htcp.c (5.x/6.x); Shorten & Leith, PFLDnet 2004",
    params: PARAMS,
    make: |p| Ok(Box::new(Htcp::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn sk_at(ms: u64, cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.now_ns = ms * 1_000_000;
        s.now_us = ms * 1000;
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s.is_cwnd_limited_flag = true;
        s
    }

    fn ack(h: &mut Htcp, s: &mut Sock, pkts: u32, rtt_ms: i64) {
        h.pkts_acked(s, &AckSample { pkts_acked: pkts, rtt_us: rtt_ms * 1000, in_flight: s.cwnd });
    }

    /// α after Δ seconds with minRTT = `min_rtt` ms and β = 0.5 (×128 result).
    fn alpha_after(scaling: bool, min_rtt: u32, delta_ms: u32) -> u32 {
        let mut h = Htcp::new(scaling, false);
        h.min_rtt = min_rtt;
        h.last_cong = 0;
        h.alpha_update(delta_ms);
        h.alpha
    }

    #[test]
    fn alpha_of_delta() {
        // minRTT = 100 ms: RTT scaling is the identity (scale 8/8).
        // Δ ≤ 1 s: factor 1 ⇒ α = 2·1·(1 − 0.5) = 1.0 (128).
        assert_eq!(alpha_after(true, 100, 1000), 128);
        assert_eq!(alpha_after(true, 100, 400), 128);
        // Δ = 1.5 s: 1 + 10·0.5 + 0.25² = 6.06 ⇒ integer factor 6 ⇒ α = 6.0.
        assert_eq!(alpha_after(true, 100, 1500), 6 * 128);
        // Δ = 3 s: 1 + 20 + 1 = 22 ⇒ α = 22.0.
        assert_eq!(alpha_after(true, 100, 3000), 22 * 128);
        // Δ = 10 s: 1 + 90 + 20.25 = 111.25 ⇒ 111.
        assert_eq!(alpha_after(true, 100, 10_000), 111 * 128);
    }

    #[test]
    fn alpha_rtt_scaling_clamped() {
        // Δ = 3 s (factor 22). minRTT 50 ms: ×0.5 ⇒ 11.
        assert_eq!(alpha_after(true, 50, 3000), 11 * 128);
        // minRTT 5 ms: ratio 20 clamped to 10 ⇒ 22·8/80 = 2 (integer).
        assert_eq!(alpha_after(true, 5, 3000), 2 * 128);
        // minRTT 400 ms: ratio 0.25 clamped to 0.5 ⇒ 44.
        assert_eq!(alpha_after(true, 400, 3000), 44 * 128);
        // Scaling off: 22 whatever the RTT.
        assert_eq!(alpha_after(false, 50, 3000), 22 * 128);
        assert_eq!(alpha_after(false, 5, 3000), 22 * 128);
    }

    #[test]
    fn beta_from_rtt_ratio_and_alpha_scaled_by_it() {
        let mut h = Htcp::new(true, false);
        let mut s = sk_at(0, 1000, 500);
        h.init(&mut s);
        // RTT samples in Open: minRTT 100 ms, maxRTT climbs in ≤ 20 ms steps.
        for rtt in [100, 110, 125, 150, 140, 150, 200] {
            ack(&mut h, &mut s, 1, rtt);
        }
        // 125 → 150 (+25 ms) and 150 → 200 (+50 ms) are not accepted as steps; via 140 it climbs.
        assert_eq!((h.min_rtt, h.max_rtt), (100, 150));
        // First congestion event at 3 s: modeswitch not yet on ⇒ β = 0.5; α(3 s) = 22.
        s.now_ns = 3_000_000_000;
        assert_eq!(h.ssthresh(&mut s), 500);
        assert_eq!((h.beta, h.alpha, h.modeswitch), (64, 22 * 128, true));
        // maxRTT fades: 100 + 50·95/100 = 147.
        assert_eq!(h.max_rtt, 147);
        h.set_state(&mut s, CaState::Recovery);
        s.now_ns = 3_100_000_000;
        s.ca_state = CaState::Recovery;
        h.set_state(&mut s, CaState::Open);
        s.ca_state = CaState::Open;
        assert_eq!(h.last_cong, 3100);
        ack(&mut h, &mut s, 1, 150); // maxRTT back to 150
        // Second event 2 s later: β = 100·128/150 = 85 (0.664); factor(2 s) = 1 + 10 + 0.25 ⇒ 11;
        // α = 2·11·(128 − 85) = 946 (7.39 = 2·11·(1 − 0.664)); ssthresh = 1000·85>>7 = 664.
        s.now_ns = 5_100_000_000;
        assert_eq!(h.ssthresh(&mut s), 664);
        assert_eq!((h.beta, h.alpha), (85, 946));
        // β is clamped to [0.5, 0.8].
        h.min_rtt = 100;
        h.max_rtt = 101;
        h.beta_update(100, 101);
        assert_eq!(h.beta, 102); // 12800/101 = 126 ⇒ BETA_MAX = 102 (0.797)
        h.beta_update(100, 400);
        assert_eq!(h.beta, 64); // 32 ⇒ BETA_MIN = 64 (0.5)
        // minRTT ≤ 10 ms: always 0.5.
        h.beta_update(10, 11);
        assert_eq!(h.beta, BETA_MIN);
    }

    #[test]
    fn bandwidth_switch_resets_beta() {
        let mut h = Htcp::new(true, true);
        h.modeswitch = true;
        h.old_max_b = 1000;
        h.max_b = 1100; // +10 %: within ±20 % ⇒ adaptive β
        h.beta_update(100, 125);
        assert_eq!(h.beta, 102); // 12800/125 = 102
        assert_eq!(h.old_max_b, 1100);
        h.max_b = 1400; // +27 %
        h.beta_update(100, 125);
        assert_eq!((h.beta, h.modeswitch), (BETA_MIN, false));
    }

    #[test]
    fn throughput_estimate() {
        let mut h = Htcp::new(true, true);
        let mut s = sk_at(0, 100, 50);
        h.init(&mut s);
        ack(&mut h, &mut s, 1, 100); // minRTT 100 ms, packetcount 1 (elapsed 0 < minRTT)
        // 99 more packets by 200 ms: ≥ cwnd − α(1) = 99 and ≥ minRTT elapsed ⇒ Bi = 100·1000/200 = 500/s.
        s.now_ns = 200_000_000;
        ack(&mut h, &mut s, 99, -1);
        // Just after backoff (Δ/minRTT = 2 ≤ 3): min = max = Bi.
        assert_eq!((h.bi, h.max_b, h.min_b, h.packetcount, h.lasttime), (500, 500, 500, 0, 200));
        // Later (Δ = 1 s = 10 minRTT): EWMA (3·500 + 1000)/4 = 625.
        s.now_ns = 1_000_000_000;
        h.lasttime = 900;
        ack(&mut h, &mut s, 100, -1);
        assert_eq!((h.bi, h.max_b), (625, 625));
        // Outside Open/Disorder the sample restarts.
        s.ca_state = CaState::Recovery;
        s.now_ns = 1_050_000_000;
        ack(&mut h, &mut s, 10, -1);
        assert_eq!((h.packetcount, h.lasttime), (0, 1050));
    }

    #[test]
    fn growth_alpha_per_rtt() {
        let mut h = Htcp::new(false, false);
        let mut s = sk_at(0, 100, 50);
        h.init(&mut s);
        // α = 1 (Δ ≤ 1 s): Reno-like: the increment happens on the ACK after cnt reaches cwnd.
        for _ in 0..100 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (100, 100));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (101, 0));
        // Δ = 3 s: α is recomputed at each increment ⇒ 22; cnt·22 ≥ 101 needs cnt = 5.
        s.now_ns = 3_000_000_000;
        h.alpha_update(3000);
        for _ in 0..5 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (101, 5));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.alpha), (102, 22 * 128));
        // Credits per ACK = packets acked by it (set by pkts_acked in Open).
        ack(&mut h, &mut s, 3, -1);
        h.cong_avoid(&mut s, 3);
        assert_eq!(s.snd_cwnd_cnt, 3);
        assert_eq!(h.pkts_acked, 1);
    }

    #[test]
    fn undo_restores_congestion_memory() {
        let mut h = Htcp::new(true, true);
        let mut s = sk_at(1000, 100, 50);
        h.init(&mut s);
        s.now_ns = 5_000_000_000;
        h.set_state(&mut s, CaState::Recovery);
        assert_eq!(h.last_cong, 5000);
        s.prior_cwnd = 120;
        assert_eq!(h.undo_cwnd(&mut s), 120);
        assert_eq!(h.last_cong, 1000);
        // Back in Open after an undo: last_cong untouched.
        h.set_state(&mut s, CaState::Open);
        assert_eq!(h.last_cong, 1000);
    }

    fn with(j: serde_json::Value) -> Result<Htcp, String> {
        let m = j.as_object().unwrap().clone();
        Htcp::from_params(&Params { scheme: "htcp", obj: Some(&m) })
    }

    #[test]
    fn params() {
        let h = with(serde_json::json!({})).unwrap();
        assert_eq!((h.use_rtt_scaling, h.use_bandwidth_switch), (true, true));
        assert!(PARAMS.iter().all(|p| p.default == 1.0));
        let h = with(serde_json::json!({"use_rtt_scaling": 0, "use_bandwidth_switch": false})).unwrap();
        assert_eq!((h.use_rtt_scaling, h.use_bandwidth_switch), (false, false));
        assert!(with(serde_json::json!({"use_rtt_scaling": 2})).err().unwrap().contains("boolean"));
        let e = crate::cc::make("htcp", &serde_json::json!({"rtt_scaling": 1})).err().unwrap();
        assert!(e.contains("use_rtt_scaling") && e.contains("use_bandwidth_switch"), "{}", e);
    }
}
