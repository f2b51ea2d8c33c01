//! TCP Hybla (Caini & Firrincieli, Int. J. Satellite Communications 2004) as in Linux
//! net/ipv4/tcp_hybla.c, 3.x era (the 5.x/6.x file differs only in using µs SRTT).
//!
//! Hybla makes a long-RTT flow grow as a Reno flow with the reference RTT `rtt0` (25 ms) would:
//! with ρ = SRTT/rtt0 (≥ 1), slow start adds 2^ρ − 1 segments per ACK and congestion avoidance
//! ρ²/cwnd per ACK. ρ is kept with 3 fractional bits (`rho_3ls`), ρ² with 7 (`rho2_7ls`), and
//! fractions of a segment accumulate in `snd_cwnd_cents` (1/128 units). ρ is recomputed
//! whenever SRTT reaches a new minimum. Hybla runs only in the Open state; elsewhere it is Reno.
//! ssthresh and undo are Reno's.
//!
//! Known differences:
//! * The kernel's SRTT is ×8 µs (`srtt_us`); the simulator's `Sock::srtt_us` is already divided
//!   by 8, so ρ·8 = 8·srtt_us/(rtt0·1000) loses the 3 fractional bits of SRTT (< 1 µs).
//! * `init` in Linux runs after the handshake, with SRTT from the SYN/SYN-ACK exchange, and sets
//!   cwnd = ρ (integer part). If the simulator calls `init` before any RTT sample (SRTT = 0),
//!   cwnd is left at the initial window and ρ is computed from the first SRTT instead (the
//!   kernel would set ρ = 1, cwnd = 1 and never revise ρ because its minimum SRTT would be 0).
//! * Growth is per ACK (not per packet acked), as in the kernel: with delayed ACKs Hybla gets
//!   half the per-RTT increase of the model, while Reno's packet-counting AI does not.

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, CaState, CongestionControl, ParamInfo, Params, SchemeInfo,
    Sock,
};

/// `hybla_fraction` table: 2^(k/8)·128 for k = 0..7 (fraction part of 2^ρ in 1/128 units).
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// cwnd clamp set by `hybla_init` (packets).
const HYBLA_CWND_CLAMP: u32 = 65535;

/// Module parameters (tcp_hybla.c `module_param`).
pub static PARAMS: &[ParamInfo] = &[ParamInfo {
    name: "rtt0",
    default: 25.0,
    doc: "reference round-trip time in ms (default 1/40 s = 25 ms): ρ = SRTT/rtt0",
}];

/// Per-connection state (`struct hybla`).
#[derive(Clone, Debug)]
pub struct Hybla {
    /// Reference RTT (ms).
    rtt0_ms: u32,
    /// Hybla active (Open state).
    hybla_en: bool,
    /// Fractions of a segment accumulated, 1/128 units.
    snd_cwnd_cents: u32,
    /// ρ integer part, ρ² integer part, ρ ×8, ρ² ×128.
    rho: u32,
    rho2: u32,
    rho_3ls: u32,
    rho2_7ls: u32,
    /// Minimum SRTT seen (µs).
    minrtt_us: u32,
}

impl Hybla {
    pub fn new(rtt0_ms: u32) -> Self {
        Hybla {
            rtt0_ms: rtt0_ms.max(1),
            hybla_en: true,
            snd_cwnd_cents: 0,
            rho: 0,
            rho2: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            minrtt_us: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Hybla::new(p.int("rtt0", 25, 1, 100_000)? as u32))
    }

    /// `hybla_recalc_param`: ρ·8 = max(8·SRTT/rtt0, 8); ρ²·128 = (ρ·8)²·2.
    fn recalc_param(&mut self, sk: &Sock) {
        let srtt_x8 = sk.srtt_us as u64 * 8;
        self.rho_3ls = (srtt_x8 / (self.rtt0_ms as u64 * 1000)).clamp(8, u32::MAX as u64) as u32;
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = ((self.rho_3ls as u64 * self.rho_3ls as u64) << 1).min(u32::MAX as u64) as u32;
        self.rho2 = self.rho2_7ls >> 7;
    }

    /// ρ as a real number.
    pub fn rho(&self) -> f64 {
        self.rho_3ls as f64 / 8.0
    }

    /// Reno `cong_avoid` (used outside the Open state).
    fn reno_cong_avoid(sk: &mut Sock, acked: u32) {
        let mut acked = acked;
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        let w = sk.cwnd;
        tcp_cong_avoid_ai(sk, w, acked);
    }
}

impl Default for Hybla {
    fn default() -> Self {
        Hybla::new(25)
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }

    /// `hybla_init`: ρ from the current SRTT, cwnd = ρ, cwnd clamp 65535.
    fn init(&mut self, sk: &mut Sock) {
        *self = Hybla::new(self.rtt0_ms);
        sk.cwnd_clamp = HYBLA_CWND_CLAMP;
        self.recalc_param(sk);
        if sk.srtt_us == 0 {
            // No RTT yet (see the module doc): revise ρ at the first SRTT, keep the initial window.
            self.minrtt_us = u32::MAX;
        } else {
            self.minrtt_us = sk.srtt_us;
            sk.cwnd = self.rho;
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        super::tcp_reno_ssthresh(sk)
    }

    /// `hybla_state`: Hybla only in Open.
    fn set_state(&mut self, _sk: &mut Sock, new_state: CaState) {
        self.hybla_en = new_state == CaState::Open;
    }

    /// `hybla_cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        // Recalculate ρ only if this SRTT is the lowest.
        if sk.srtt_us != 0 && sk.srtt_us < self.minrtt_us {
            self.recalc_param(sk);
            self.minrtt_us = sk.srtt_us;
        }
        if !sk.is_cwnd_limited() {
            return;
        }
        if !self.hybla_en {
            Self::reno_cong_avoid(sk, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc_param(sk);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let is_slowstart = sk.in_slow_start();
        let increment: u32 = if is_slowstart {
            // INC = 2^ρ − 1, ×128: 2^int · (2^frac ×128) − 128.
            (1u32 << self.rho.min(16)) * FRACTIONS[rho_fractions as usize] - 128
        } else {
            // INC = ρ²/W, ×128.
            let inc = self.rho2_7ls / sk.cwnd.max(1);
            if inc < 128 {
                sk.snd_cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        sk.cwnd = sk.cwnd.saturating_add(increment >> 7);
        self.snd_cwnd_cents += odd;
        // Whole segments out of the accumulated fractions.
        while self.snd_cwnd_cents >= 128 {
            sk.cwnd += 1;
            self.snd_cwnd_cents -= 128;
            sk.snd_cwnd_cnt = 0;
        }
        // No increment for a whole window of ACKs: Reno's +1.
        if increment == 0 && odd == 0 && sk.snd_cwnd_cnt >= sk.cwnd {
            sk.cwnd += 1;
            sk.snd_cwnd_cnt = 0;
        }
        if is_slowstart {
            sk.cwnd = sk.cwnd.min(sk.ssthresh);
        }
        sk.cwnd = sk.cwnd.min(sk.cwnd_clamp);
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rho", self.rho()));
        out.push(("rho2", self.rho2_7ls as f64 / 128.0));
        out.push(("hybla_en", if self.hybla_en { 1.0 } else { 0.0 }));
        out.push(("cents", self.snd_cwnd_cents as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "hybla",
    description: "Hybla: growth scaled by rho = SRTT/25 ms (slow start 2^rho − 1, CA rho²/cwnd per ACK) for long-RTT paths",
    source: "Linux net/ipv4/tcp_hybla.c (3.x); Caini & Firrincieli, Int. J. Satellite Communications and Networking 22(5) 2004",
    params: PARAMS,
    make: |p| Ok(Box::new(Hybla::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(srtt_ms: u32, cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.srtt_us = srtt_ms * 1000;
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s.is_cwnd_limited_flag = true;
        s
    }

    fn hybla_for(s: &mut Sock) -> Hybla {
        let mut h = Hybla::default();
        let (c, t) = (s.cwnd, s.ssthresh);
        h.init(s);
        s.cwnd = c;
        s.ssthresh = t;
        h
    }

    #[test]
    fn rho_fixed_point() {
        // SRTT 200 ms: ρ = 8 (ρ·8 = 64), ρ² = 64 (ρ²·128 = 8192).
        let mut s = sk(200, 10, 1000);
        let h = hybla_for(&mut s);
        assert_eq!((h.rho_3ls, h.rho, h.rho2_7ls, h.rho2), (64, 8, 8192, 64));
        // SRTT 60 ms: ρ·8 = 480000/25000 = 19 (ρ = 2.375), ρ²·128 = 19²·2 = 722 (5.64).
        let mut s = sk(60, 10, 1000);
        let h = hybla_for(&mut s);
        assert_eq!((h.rho_3ls, h.rho, h.rho2_7ls, h.rho2), (19, 2, 722, 5));
        // SRTT below rtt0: ρ = 1.
        let mut s = sk(20, 10, 1000);
        let h = hybla_for(&mut s);
        assert_eq!((h.rho_3ls, h.rho2_7ls), (8, 128));
        // rtt0 parameter: 200 ms with rtt0 = 50 ms ⇒ ρ = 4.
        let mut h = Hybla::new(50);
        let mut s = sk(200, 10, 1000);
        h.init(&mut s);
        assert_eq!(h.rho_3ls, 32);
    }

    #[test]
    fn init_sets_cwnd_rho_and_clamp() {
        let mut h = Hybla::default();
        let mut s = sk(200, 10, 1000);
        h.init(&mut s);
        assert_eq!((s.cwnd, s.cwnd_clamp), (8, 65535));
        // Without an SRTT the initial window stays; ρ follows the first SRTT.
        let mut h = Hybla::default();
        let mut s = sk(0, 10, 1000);
        h.init(&mut s);
        assert_eq!(s.cwnd, 10);
        s.srtt_us = 100_000;
        h.cong_avoid(&mut s, 1);
        assert_eq!(h.rho, 4);
        assert_eq!(s.cwnd, 10 + 15); // 2^4 − 1
    }

    #[test]
    fn slow_start_increment_two_to_rho_minus_one() {
        // ρ = 8: +255 per ACK (32640/128), capped at ssthresh.
        let mut s = sk(200, 10, 1000);
        let mut h = hybla_for(&mut s);
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (265, 0));
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 520);
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 775);
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 1000); // 1030 capped at ssthresh
        // ρ = 2.375: 4·165 − 128 = 532 ⇒ +4 and 20/128 per ACK (2^2.375 − 1 = 4.19).
        let mut s = sk(60, 10, 1000);
        let mut h = hybla_for(&mut s);
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (14, 20));
        for _ in 0..5 {
            h.cong_avoid(&mut s, 1);
        }
        // 6 ACKs: 24 segments + 120/128.
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (34, 120));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (39, 12));
        // Per ACK, not per packet: a stretch ACK of 2 gets the same increment.
        let mut s = sk(200, 10, 1000);
        let mut h = hybla_for(&mut s);
        h.cong_avoid(&mut s, 2);
        assert_eq!(s.cwnd, 265);
    }

    #[test]
    fn congestion_avoidance_rho_squared_over_cwnd() {
        // ρ = 8, cwnd 1000: 8192/1000 = 8/128 per ACK ⇒ +1 every 16 ACKs.
        let mut s = sk(200, 1000, 500);
        let mut h = hybla_for(&mut s);
        for _ in 0..15 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, h.snd_cwnd_cents, s.snd_cwnd_cnt), (1000, 120, 15));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents, s.snd_cwnd_cnt), (1001, 0, 0));
        // ρ = 8, cwnd 100: 81/128 per ACK (ρ²/cwnd = 0.64).
        let mut s = sk(200, 100, 50);
        let mut h = hybla_for(&mut s);
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (100, 81));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (101, 34));
        // ρ = 8, cwnd 50: 163/128 ⇒ +1 and 35/128.
        let mut s = sk(200, 50, 20);
        let mut h = hybla_for(&mut s);
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, h.snd_cwnd_cents), (51, 35));
        // ρ = 1, cwnd 200: increment 128/200 = 0 ⇒ Reno fallback, +1 after cwnd ACKs.
        let mut s = sk(20, 200, 100);
        let mut h = hybla_for(&mut s);
        for _ in 0..199 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (200, 199));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (201, 0));
    }

    #[test]
    fn reno_outside_open_and_rho_on_new_min_srtt() {
        let mut s = sk(200, 10, 1000);
        let mut h = hybla_for(&mut s);
        s.ca_state = CaState::Disorder;
        h.set_state(&mut s, CaState::Disorder);
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, 11); // Reno slow start
        h.set_state(&mut s, CaState::Open);
        // SRTT drops to 100 ms: ρ = 4 ⇒ +15 per ACK in slow start.
        s.srtt_us = 100_000;
        h.cong_avoid(&mut s, 1);
        assert_eq!((h.rho, s.cwnd), (4, 26));
        // A larger SRTT later does not raise ρ.
        s.srtt_us = 300_000;
        h.cong_avoid(&mut s, 1);
        assert_eq!((h.rho, s.cwnd), (4, 41));
        // Reno ssthresh.
        s.cwnd = 41;
        assert_eq!(h.ssthresh(&mut s), 20);
        // Not cwnd-limited: no growth.
        s.is_cwnd_limited_flag = false;
        s.ssthresh = 30;
        let c = s.cwnd;
        h.cong_avoid(&mut s, 1);
        assert_eq!(s.cwnd, c);
    }

    #[test]
    fn params() {
        let m = serde_json::json!({"rtt0": 50});
        let h = Hybla::from_params(&Params { scheme: "hybla", obj: m.as_object() }).unwrap();
        assert_eq!(h.rtt0_ms, 50);
        let h = Hybla::from_params(&Params { scheme: "hybla", obj: None }).unwrap();
        assert_eq!((h.rtt0_ms as f64, PARAMS[0].name, PARAMS[0].default), (25.0, "rtt0", 25.0));
        let e = crate::cc::make("hybla", &serde_json::json!({"rtt0": 0})).err().unwrap();
        assert!(e.contains("rtt0"), "{}", e);
        let e = crate::cc::make("hybla", &serde_json::json!({"rtt": 25})).err().unwrap();
        assert!(e.contains("rtt0"), "{}", e);
    }
}
