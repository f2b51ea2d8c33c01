//! BIC-TCP (Xu, Harfoush, Rhee, "Binary Increase Congestion Control (BIC) for Fast Long-Distance
//! Networks", INFOCOM 2004) as in Linux net/ipv4/tcp_bic.c, 2.6.32–3.x era.
//!
//! Below `low_window` BIC is Reno. Above it, after a loss at W_max the window first does a
//! binary search towards W_max (per RTT: +(W_max − cwnd)/B, at most `max_increment`, and a slow
//! `smooth_part` crawl within B of W_max), then "max probing" past W_max (slow, then
//! (cwnd − W_max)/(B−1) per RTT, then `max_increment` per RTT). The per-ACK divisor `cnt` is
//! scaled by the measured packets-per-ACK ratio (`delayed_ack`, EWMA 15/16).
//!
//! Era choices and known differences:
//! * 2.6.32–3.x rules (the kernels of the source studies): the "first epoch" cap cnt ≤ 20 applies
//!   while `last_max_cwnd == 0`; `loss_cwnd` survives the Loss-state reset and `undo_cwnd` =
//!   max(cwnd, loss_cwnd). (2.6.2x tested `loss_cwnd == 0` and undid to last_max_cwnd; later
//!   kernels (≈ 4.13, version not verified) dropped loss_cwnd and use Reno's undo.)
//! * `initial_ssthresh` defaults to 0 (= infinite), its value in 2.6.24, 2.6.32 and later
//!   (checked in those sources); the earliest 2.6 releases used 100 (version not verified). Set
//!   it as a parameter to reproduce those.
//! * Slow start and the AI step use the shared packet-counting helpers (`tcp_slow_start` with
//!   leftover, `tcp_cong_avoid_ai(cnt, acked)`) as tcp_bic.c does since 4.x, not the 2.6-era
//!   per-ACK forms; slow start is `cwnd < ssthresh` (2.6 used ≤).
//! * `epoch_start` is written but never read by the kernel module; it is omitted.
//! * Jiffies: HZ = 1000 (as cubic.rs), so the HZ/32 hold-off is 31 ms.

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaState, CongestionControl, ParamInfo, Params,
    SchemeInfo, Sock,
};

/// `BICTCP_BETA_SCALE`: beta is in 1/1024 units.
const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_B`: binary search goes to (max + min)/B per RTT.
const BICTCP_B: u32 = 4;
/// `ACK_RATIO_SHIFT`: `delayed_ack` holds packets/ACK ×16.
const ACK_RATIO_SHIFT: u32 = 4;
/// Kernel jiffies per second assumed (HZ = 1000).
const HZ: u64 = 1000;

/// Module parameters (tcp_bic.c `module_param`, Linux names and defaults).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "fast_convergence", default: 1.0, doc: "on a loss below the previous W_max, set W_max = cwnd·(1024+beta)/2048 to yield bandwidth faster" },
    ParamInfo { name: "max_increment", default: 16.0, doc: "limit on the per-RTT increment (packets) during binary search and max probing" },
    ParamInfo { name: "low_window", default: 14.0, doc: "at or below this cwnd (packets) behave as Reno (TCP friendliness)" },
    ParamInfo { name: "beta", default: 819.0, doc: "multiplicative decrease ×1024 (819 ≈ 0.8): ssthresh = max(cwnd·beta/1024, 2) above low_window" },
    ParamInfo { name: "initial_ssthresh", default: 0.0, doc: "initial ssthresh in packets (0 = infinite)" },
    ParamInfo { name: "smooth_part", default: 20.0, doc: "# of RTTs from W_max − B to W_max: cnt = cwnd·smooth_part/B near W_max" },
];

#[derive(Clone, Debug)]
pub struct BicParams {
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub smooth_part: u32,
}

impl Default for BicParams {
    fn default() -> Self {
        BicParams {
            fast_convergence: true,
            max_increment: 16,
            low_window: 14,
            beta: 819,
            initial_ssthresh: 0,
            smooth_part: 20,
        }
    }
}

/// Per-connection state (`struct bictcp`).
#[derive(Clone, Debug)]
pub struct Bic {
    p: BicParams,
    /// Increase cwnd by 1 after `cnt` packets acked.
    cnt: u32,
    /// W_max: cwnd at the last loss (after fast convergence), packets.
    last_max_cwnd: u32,
    /// cwnd at the last loss (undo target), packets.
    loss_cwnd: u32,
    /// cwnd and jiffies of the last `cnt` update.
    last_cwnd: u32,
    last_time: u64,
    /// Packets per ACK ×16 (EWMA 15/16); starts at 2 (delayed ACKs).
    delayed_ack: u32,
}

impl Bic {
    pub fn new(p: BicParams) -> Self {
        Bic {
            p,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Bic::new(BicParams {
            fast_convergence: p.bool("fast_convergence", true)?,
            max_increment: p.int("max_increment", 16, 1, 1 << 20)? as u32,
            low_window: p.int("low_window", 14, 0, 1 << 20)? as u32,
            beta: p.int("beta", 819, 1, 1023)? as u32,
            initial_ssthresh: p.int("initial_ssthresh", 0, 0, 0x7fff_ffff)? as u32,
            smooth_part: p.int("smooth_part", 20, 1, 1 << 20)? as u32,
        }))
    }

    #[inline]
    fn jiffies(sk: &Sock) -> u64 {
        sk.now_ns / (1_000_000_000 / HZ)
    }

    /// `bictcp_reset` (kernel 2.6.32+: keeps `loss_cwnd`).
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// `bictcp_update`: compute `cnt` for the current cwnd.
    fn update(&mut self, cwnd: u32, now: u64) {
        if self.last_cwnd == cwnd && now.wrapping_sub(self.last_time) <= HZ / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;

        let p = &self.p;
        // Start off normal (Reno).
        if cwnd <= p.low_window {
            self.cnt = cwnd;
            return;
        }
        let w_max = self.last_max_cwnd;
        self.cnt = if cwnd < w_max {
            // Binary increase towards W_max.
            let dist = (w_max - cwnd) / BICTCP_B;
            if dist > p.max_increment {
                cwnd / p.max_increment // linear increase
            } else if dist <= 1 {
                cwnd * p.smooth_part / BICTCP_B // binary search, crawl
            } else {
                cwnd / dist // binary search
            }
        } else if cwnd < w_max + BICTCP_B {
            cwnd * p.smooth_part / BICTCP_B // slow start of max probing
        } else if cwnd < w_max + p.max_increment * (BICTCP_B - 1) {
            cwnd * (BICTCP_B - 1) / (cwnd - w_max) // slow start (accelerating)
        } else {
            cwnd / p.max_increment // linear increase
        };
        // No loss yet (slow start or very low utilisation): at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1);
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }
}

impl Default for Bic {
    fn default() -> Self {
        Bic::new(BicParams::default())
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    /// `bictcp_init`.
    fn init(&mut self, sk: &mut Sock) {
        self.reset();
        self.loss_cwnd = 0;
        if self.p.initial_ssthresh != 0 {
            sk.ssthresh = self.p.initial_ssthresh;
        }
    }

    /// `bictcp_recalc_ssthresh`: W_max with fast convergence; Reno halving at or below
    /// low_window, else cwnd·beta/1024.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        let cwnd = sk.cwnd;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.p.beta) as u64) / (2 * BICTCP_BETA_SCALE) as u64)
                as u32
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        if cwnd <= self.p.low_window {
            (cwnd >> 1).max(2)
        } else {
            ((cwnd as u64 * self.p.beta as u64 / BICTCP_BETA_SCALE as u64) as u32).max(2)
        }
    }

    /// `bictcp_cong_avoid`.
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(sk.cwnd, Self::jiffies(sk));
        let cnt = self.cnt;
        tcp_cong_avoid_ai(sk, cnt, acked);
    }

    /// `bictcp_state`: forget everything but loss_cwnd on RTO.
    fn set_state(&mut self, _sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    /// `bictcp_undo_cwnd` (2.6.32–3.x): max(cwnd, loss_cwnd).
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        sk.cwnd.max(self.loss_cwnd)
    }

    /// `bictcp_acked`: packets-per-ACK ratio, ratio = (15·ratio + sample)/16, in Open only.
    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        if sk.ca_state == CaState::Open {
            // u32 arithmetic as the kernel (the difference may be "negative").
            self.delayed_ack = self
                .delayed_ack
                .wrapping_add(sample.pkts_acked.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT));
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cnt", self.cnt as f64));
        out.push(("last_max_cwnd", self.last_max_cwnd as f64));
        out.push(("loss_cwnd", self.loss_cwnd as f64));
        out.push(("ack_ratio", self.delayed_ack as f64 / (1u32 << ACK_RATIO_SHIFT) as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "bic",
    description: "BIC-TCP: binary search towards the last maximum, then max probing; beta 0.8, Reno below 14 packets",
    source: "Linux net/ipv4/tcp_bic.c (2.6.32–3.x); Xu, Harfoush & Rhee, INFOCOM 2004",
    params: PARAMS,
    make: |p| Ok(Box::new(Bic::from_params(p)?)),
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

    /// BIC with W_max set and an ACK ratio of exactly 1 (no delayed-ACK scaling).
    fn bic_wmax(w_max: u32) -> Bic {
        Bic { last_max_cwnd: w_max, loss_cwnd: w_max, delayed_ack: 1 << ACK_RATIO_SHIFT, ..Bic::default() }
    }

    fn cnt_at(b: &mut Bic, cwnd: u32) -> u32 {
        b.last_cwnd = 0; // force recomputation
        b.update(cwnd, 1000);
        b.cnt
    }

    #[test]
    fn binary_search_and_max_probing_increments() {
        let mut b = bic_wmax(1000);
        // Far below W_max: dist = 100/4 = 25 > 16 ⇒ linear, +16/RTT: cnt = 900/16 = 56.
        assert_eq!(cnt_at(&mut b, 900), 56);
        // Binary search: dist = 40/4 = 10 ⇒ +10/RTT: cnt = 960/10 = 96.
        assert_eq!(cnt_at(&mut b, 960), 96);
        // Within B of W_max: dist = 3/4 = 0 ⇒ smooth: cnt = 997·20/4 = 4985 (+1 per 5 RTTs).
        assert_eq!(cnt_at(&mut b, 997), 4985);
        // Max probing, just above W_max: cnt = 1002·20/4 = 5010.
        assert_eq!(cnt_at(&mut b, 1002), 5010);
        // Accelerating: (cwnd − W_max)/3 per RTT: cnt = 1010·3/10 = 303; 1047·3/47 = 66.
        assert_eq!(cnt_at(&mut b, 1010), 303);
        assert_eq!(cnt_at(&mut b, 1047), 66);
        // From W_max + 48: linear +16/RTT: 1048/16 = 65.
        assert_eq!(cnt_at(&mut b, 1048), 65);
        // Reno at or below low_window.
        assert_eq!(cnt_at(&mut b, 14), 14);
    }

    #[test]
    fn max_increment_caps_the_step() {
        // Default cap: dist 25 > 16 ⇒ cwnd/16.
        let mut b = bic_wmax(1000);
        assert_eq!(cnt_at(&mut b, 900), 900 / 16);
        // max_increment 32: dist 25 ≤ 32 ⇒ binary search cwnd/25 = 36.
        let mut b = Bic::new(BicParams { max_increment: 32, ..BicParams::default() });
        b.last_max_cwnd = 1000;
        b.delayed_ack = 16;
        assert_eq!(cnt_at(&mut b, 900), 36);
        // Per-RTT growth far below W_max is max_increment: one window of single ACKs from 800
        // adds 15 or 16 packets (cnt is recomputed as cwnd grows: 800/16 = 50 … 815/16 = 50).
        let mut b = bic_wmax(1000);
        let mut s = sk_at(1000, 800, 700);
        for _ in 0..800 {
            b.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 816); // 16 increments of 50 ACKs each (cnt = 800/16 … 815/16 = 50)
    }

    #[test]
    fn first_epoch_cap_and_ack_ratio_scaling() {
        let mut b = Bic { delayed_ack: 16, ..Bic::default() };
        // No loss yet: cwnd ≥ W_max + 48 ⇒ cwnd/16, capped at 20 (≥ 5 %/RTT).
        assert_eq!(cnt_at(&mut b, 100), 6);
        assert_eq!(cnt_at(&mut b, 500), 20);
        // Default ratio 2 packets/ACK halves cnt: 960/10 = 96 ⇒ 48.
        let mut b = bic_wmax(1000);
        b.delayed_ack = 2 << ACK_RATIO_SHIFT;
        assert_eq!(cnt_at(&mut b, 960), 48);
    }

    #[test]
    fn delayed_ack_ewma() {
        let mut b = Bic::default();
        let mut s = sk_at(0, 20, 10);
        assert_eq!(b.delayed_ack, 32);
        // One packet per ACK: 32 + 1 − 2 = 31, then fixed point (31>>4 = 1).
        b.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 1000, in_flight: 10 });
        assert_eq!(b.delayed_ack, 31);
        b.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 1000, in_flight: 10 });
        assert_eq!(b.delayed_ack, 31);
        // Stretch ACKs of 4 push it up: 31 + 4 − 1 = 34.
        b.pkts_acked(&mut s, &AckSample { pkts_acked: 4, rtt_us: 1000, in_flight: 10 });
        assert_eq!(b.delayed_ack, 34);
        // Not in Open: ignored.
        s.ca_state = CaState::Recovery;
        b.pkts_acked(&mut s, &AckSample { pkts_acked: 40, rtt_us: 1000, in_flight: 10 });
        assert_eq!(b.delayed_ack, 34);
    }

    #[test]
    fn ssthresh_fast_convergence_and_undo() {
        let mut b = Bic::default();
        let mut s = sk_at(0, 1000, 100_000);
        // 1000·819/1024 = 799.8 ⇒ 799; W_max = 1000.
        assert_eq!(b.ssthresh(&mut s), 799);
        assert_eq!(b.last_max_cwnd, 1000);
        // Loss below W_max: W_max = 900·1843/2048 = 809; ssthresh = 900·819/1024 = 719.
        s.cwnd = 900;
        assert_eq!(b.ssthresh(&mut s), 719);
        assert_eq!(b.last_max_cwnd, 809);
        // Reno at or below low_window.
        s.cwnd = 14;
        assert_eq!(b.ssthresh(&mut s), 7);
        s.cwnd = 15;
        assert_eq!(b.ssthresh(&mut s), 11);
        s.cwnd = 3;
        assert_eq!(b.ssthresh(&mut s), 2);
        // Undo to the cwnd at the last loss; it survives an RTO reset.
        s.cwnd = 500;
        b.ssthresh(&mut s);
        s.cwnd = 400;
        assert_eq!(b.undo_cwnd(&mut s), 500);
        b.set_state(&mut s, CaState::Loss);
        assert_eq!((b.last_max_cwnd, b.loss_cwnd, b.delayed_ack), (0, 500, 32));
        // Without fast convergence W_max is just cwnd.
        let mut b = Bic::new(BicParams { fast_convergence: false, ..BicParams::default() });
        s.cwnd = 1000;
        b.ssthresh(&mut s);
        s.cwnd = 900;
        b.ssthresh(&mut s);
        assert_eq!(b.last_max_cwnd, 900);
    }

    #[test]
    fn cnt_hold_off_31ms() {
        let mut b = bic_wmax(1000);
        b.update(960, 1000);
        assert_eq!(b.cnt, 96);
        b.last_max_cwnd = 2000; // would change cnt if recomputed
        b.update(960, 1031);
        assert_eq!(b.cnt, 96); // same cwnd within HZ/32
        b.update(960, 1032);
        assert_eq!(b.cnt, 960 / 16);
    }

    #[test]
    fn init_sets_initial_ssthresh() {
        let mut b = Bic::new(BicParams { initial_ssthresh: 100, ..BicParams::default() });
        let mut s = sk_at(0, 10, crate::cc::TCP_INFINITE_SSTHRESH);
        b.init(&mut s);
        assert_eq!(s.ssthresh, 100);
        let mut b = Bic::default();
        let mut s = sk_at(0, 10, crate::cc::TCP_INFINITE_SSTHRESH);
        b.init(&mut s);
        assert_eq!(s.ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    }

    fn with(j: serde_json::Value) -> Result<Bic, String> {
        let m = j.as_object().unwrap().clone();
        Bic::from_params(&Params { scheme: "bic", obj: Some(&m) })
    }

    #[test]
    fn params() {
        let b = with(serde_json::json!({})).unwrap();
        let d = BicParams::default();
        assert_eq!(
            (b.p.fast_convergence, b.p.max_increment, b.p.low_window, b.p.beta, b.p.initial_ssthresh, b.p.smooth_part),
            (d.fast_convergence, d.max_increment, d.low_window, d.beta, d.initial_ssthresh, d.smooth_part)
        );
        for p in PARAMS {
            let v = match p.name {
                "fast_convergence" => d.fast_convergence as u32 as f64,
                "max_increment" => d.max_increment as f64,
                "low_window" => d.low_window as f64,
                "beta" => d.beta as f64,
                "initial_ssthresh" => d.initial_ssthresh as f64,
                "smooth_part" => d.smooth_part as f64,
                other => panic!("undocumented parameter {}", other),
            };
            assert_eq!(p.default, v, "{}", p.name);
        }
        let b = with(serde_json::json!({"beta": 717, "max_increment": 32, "fast_convergence": false})).unwrap();
        assert_eq!((b.p.beta, b.p.max_increment, b.p.fast_convergence), (717, 32, false));
        assert!(with(serde_json::json!({"beta": 1024})).err().unwrap().contains("[1, 1023]"));
        let e = crate::cc::make("bic", &serde_json::json!({"max_incr": 8})).err().unwrap();
        for p in PARAMS {
            assert!(e.contains(p.name), "{}", e);
        }
        assert_eq!(crate::cc::make("bic", &serde_json::json!({"low_window": 20})).unwrap().name(), "bic");
    }
}
