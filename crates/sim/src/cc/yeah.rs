//! YeAH-TCP (Yet Another Highspeed TCP) as in Linux net/ipv4/tcp_yeah.c, 3.x era (≈ 3.14–3.19);
//! Baiocchi, Castellani, Vacirca, "YeAH-TCP: Yet Another Highspeed TCP", PFLDnet 2007.
//!
//! Rules (kernel): Vegas RTT sampling ([`VegasRtt`]: `minRTT` of the last RTT, lifetime
//! `baseRTT`). In congestion avoidance YeAH is in **fast mode** (Scalable: +1 per
//! min(cwnd, 100) packets acked) or **slow mode** (Reno: +1 per cwnd ACKs). Once per RTT (≥ 3
//! samples): `queue = cwnd·(rtt − baseRTT)/rtt`; slow mode when `queue > 80` or the queueing
//! delay exceeds baseRTT/8; in slow mode, with `queue > 80`, **precautionary decongestion**
//! removes min(queue, cwnd/2) packets (not below `reno_count`) and sets ssthresh = cwnd.
//! `reno_count` estimates the competing Reno flows' window; on loss the reduction is the
//! measured queue (between cwnd/8 and cwnd/2) unless YeAH has been in slow mode for ≥ 16 RTTs
//! (competition with Reno ⇒ halve).
//!
//! Kernel quirks reproduced: YeAH never consults `doing_vegas_now` (Vegas' set_state/cwnd_event
//! hooks only restart the per-RTT bookkeeping, there is no Reno fallback outside Open); the
//! per-RTT step runs only
//! when cwnd-limited (the early return comes first); `pkts_acked` is remembered only in Open and
//! is counted once, later ACKs in the same call count 1 (`yeah->pkts_acked = 1`); Reno mode
//! counts ACKs, not packets (3.x `tcp_cong_avoid_ai(tp, cwnd)`).
//!
//! Known difference: slow start uses the simulator's `tcp_slow_start` (4.0+, packet counting)
//! and `cwnd < ssthresh`; 3.x tested `cwnd <= ssthresh`. ssthresh is floored at 2 (the 3.18+
//! `max_t(int, cwnd − reduction, 2)`). Undo is the default `max(cwnd, prior_cwnd)`.
//! YeAH has no module parameters (all constants are `#define`s).

use super::vegas::VegasRtt;
use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, CongestionControl, ParamInfo,
    Params, SchemeInfo, Sock,
};

/// `TCP_YEAH_ALPHA`: packets queued at the bottleneck tolerated before decongestion.
pub const TCP_YEAH_ALPHA: u32 = 80;
/// `TCP_YEAH_GAMMA`: fraction (1/γ) of the queue removed per RTT by decongestion.
pub const TCP_YEAH_GAMMA: u32 = 1;
/// `TCP_YEAH_DELTA`: log2 of the minimum fraction of cwnd removed on loss (cwnd/8).
pub const TCP_YEAH_DELTA: u32 = 3;
/// `TCP_YEAH_EPSILON`: log2 of the maximum fraction removed by decongestion (cwnd/2).
pub const TCP_YEAH_EPSILON: u32 = 1;
/// `TCP_YEAH_PHY`: maximum queueing delay as a fraction of baseRTT (1/8).
pub const TCP_YEAH_PHY: u32 = 8;
/// `TCP_YEAH_RHO`: consecutive slow-mode RTTs after which a loss means Reno competition.
pub const TCP_YEAH_RHO: u32 = 16;
/// `TCP_YEAH_ZETA`: fast-mode RTTs after which `reno_count` is reset.
pub const TCP_YEAH_ZETA: u32 = 50;
/// `TCP_SCALABLE_AI_CNT`: fast mode adds 1 per min(cwnd, 100) packets acked.
pub const TCP_SCALABLE_AI_CNT: u32 = 100;

/// No module parameters in Linux.
pub static PARAMS: &[ParamInfo] = &[];

#[derive(Clone, Debug, Default)]
pub struct Yeah {
    v: VegasRtt,
    /// Queue estimate (packets) of the last per-RTT step.
    last_q: u32,
    /// Consecutive slow-mode RTTs (0 = fast mode).
    doing_reno_now: u32,
    /// Estimated window of competing Reno flows.
    reno_count: u32,
    /// Fast-mode RTTs since the last reset.
    fast_count: u32,
    /// Packets acked by the latest ACK in Open (consumed by the Scalable increment).
    pkts_acked: u32,
    /// Precautionary decongestions done (traces/tests).
    decongestions: u64,
}

impl Yeah {
    pub fn new() -> Self {
        Yeah { reno_count: 2, ..Default::default() }
    }

    pub fn from_params(_p: &Params) -> Result<Self, String> {
        Ok(Yeah::new())
    }

    /// The once-per-RTT queue estimate and mode decision.
    fn per_rtt(&mut self, sk: &mut Sock) {
        if self.v.cnt_rtt > 2 {
            let rtt = self.v.min_rtt;
            let base = self.v.base_rtt;
            let queue = (sk.cwnd as u64 * rtt.wrapping_sub(base) as u64 / rtt as u64) as u32;
            if queue > TCP_YEAH_ALPHA || rtt.wrapping_sub(base) > base / TCP_YEAH_PHY {
                if queue > TCP_YEAH_ALPHA && sk.cwnd > self.reno_count {
                    let reduction = (queue / TCP_YEAH_GAMMA).min(sk.cwnd >> TCP_YEAH_EPSILON);
                    sk.cwnd -= reduction;
                    sk.cwnd = sk.cwnd.max(self.reno_count);
                    sk.ssthresh = sk.cwnd;
                    self.decongestions += 1;
                }
                if self.reno_count <= 2 {
                    self.reno_count = (sk.cwnd >> 1).max(2);
                } else {
                    self.reno_count += 1;
                }
                self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
            } else {
                self.fast_count += 1;
                if self.fast_count > TCP_YEAH_ZETA {
                    self.reno_count = 2;
                    self.fast_count = 0;
                }
                self.doing_reno_now = 0;
            }
            self.last_q = queue;
        }
        self.v.beg_snd_una = self.v.beg_snd_nxt;
        self.v.beg_snd_nxt = sk.snd_nxt;
        self.v.beg_snd_cwnd = sk.cwnd;
        self.v.next_rtt();
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }
    /// 2.6.36's `.min_cwnd = tcp_reno_min_cwnd` (rate-halving floor).
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        super::reno_min_cwnd(sk)
    }

    fn init(&mut self, sk: &mut Sock) {
        self.v.init(sk);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        // Keep the MD arithmetic in range.
        sk.cwnd_clamp = sk.cwnd_clamp.min(0xffff_ffff / 128);
    }

    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        if sk.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked;
        }
        self.v.pkts_acked(sample);
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        self.v.state(sk, new_state);
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        self.v.cwnd_event(sk, ev);
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            tcp_slow_start(sk, acked);
        } else if self.doing_reno_now == 0 {
            // Fast mode: Scalable TCP.
            sk.snd_cwnd_cnt += self.pkts_acked;
            if sk.snd_cwnd_cnt > sk.cwnd.min(TCP_SCALABLE_AI_CNT) {
                if sk.cwnd < sk.cwnd_clamp {
                    sk.cwnd += 1;
                }
                sk.snd_cwnd_cnt = 0;
            }
            self.pkts_acked = 1;
        } else {
            // Slow mode: Reno, one ACK counted per call.
            let w = sk.cwnd;
            tcp_cong_avoid_ai(sk, w, 1);
        }
        if sk.snd_una > self.v.beg_snd_nxt {
            self.per_rtt(sk);
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        let reduction = if self.doing_reno_now < TCP_YEAH_RHO {
            self.last_q.min((sk.cwnd >> 1).max(2)).max(sk.cwnd >> TCP_YEAH_DELTA)
        } else {
            (sk.cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        (sk.cwnd as i64 - reduction as i64).max(2) as u32
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("queue", self.last_q as f64));
        out.push(("mode", if self.doing_reno_now > 0 { 1.0 } else { 0.0 })); // 0 fast, 1 slow
        out.push(("doing_reno_now", self.doing_reno_now as f64));
        out.push(("reno_count", self.reno_count as f64));
        out.push(("fast_count", self.fast_count as f64));
        out.push(("decongestions", self.decongestions as f64));
        let us = |v: u32| if v == super::vegas::VEGAS_RTT_INIT { f64::NAN } else { v as f64 };
        out.push(("base_rtt_us", us(self.v.base_rtt)));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "yeah",
    description: "YeAH: Scalable growth while the Vegas queue estimate is small, Reno otherwise; precautionary decongestion above 80 packets; loss reduction = queue",
    source: "Linux net/ipv4/tcp_yeah.c (3.x); Baiocchi, Castellani & Vacirca, PFLDnet 2007",
    params: PARAMS,
    make: |p| Ok(Box::new(Yeah::from_params(p)?)),
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
        s.snd_nxt = 1000 * MSS;
        s
    }

    fn sample(y: &mut Yeah, sk: &mut Sock, rtt_us: i64, pkts: u32) {
        y.pkts_acked(sk, &AckSample { pkts_acked: pkts, rtt_us, in_flight: 10 });
    }

    fn fresh(sk: &mut Sock) -> Yeah {
        let mut y = Yeah::new();
        y.init(sk);
        sample(&mut y, sk, 19_999, 0); // baseRTT 20 000
        y.v.next_rtt();
        y
    }

    /// One RTT with minRTT `min_us` (samples +1 µs) ending with an ACK past beg_snd_nxt.
    fn round(y: &mut Yeah, sk: &mut Sock, min_us: u32) {
        for d in [min_us + 2000, min_us - 1, min_us + 100] {
            sample(y, sk, d as i64, 0);
        }
        assert_eq!(y.v.min_rtt, min_us);
        sk.snd_una = y.v.beg_snd_nxt + MSS;
        sk.snd_nxt = sk.snd_una + sk.cwnd as u64 * MSS;
        y.cong_avoid(sk, 0);
    }

    #[test]
    fn queue_estimate_and_slow_mode_without_decongestion() {
        // cwnd 100, base 20 000, rtt 30 000: queue = 100·10000/30000 = 33 ≤ 80, but the queueing
        // delay 10 000 > 20000/8 ⇒ slow mode; reno_count = max(100/2, 2) = 50.
        let mut sk = sock(100, 50);
        let mut y = fresh(&mut sk);
        round(&mut y, &mut sk, 30_000);
        assert_eq!((y.last_q, y.doing_reno_now, y.reno_count, sk.cwnd, sk.ssthresh), (33, 1, 50, 100, 50));
        assert_eq!(y.decongestions, 0);
    }

    #[test]
    fn precautionary_decongestion() {
        // cwnd 300, rtt 30 000: queue = 300·10000/30000 = 100 > 80 ⇒ remove min(100, 150):
        // cwnd 200 = ssthresh; reno_count = 100.
        let mut sk = sock(300, 50);
        let mut y = fresh(&mut sk);
        round(&mut y, &mut sk, 30_000);
        assert_eq!((y.last_q, sk.cwnd, sk.ssthresh, y.reno_count, y.doing_reno_now), (100, 200, 200, 100, 1));
        // Next RTT: queue = 200·10000/30000 = 66 ≤ 80, still slow (delay): reno_count + 1.
        round(&mut y, &mut sk, 30_000);
        assert_eq!((y.last_q, sk.cwnd, y.reno_count, y.doing_reno_now), (66, 200, 101, 2));
        // Decongestion never goes below reno_count: cwnd 90, reno_count 60, rtt 200 000:
        // queue = 90·180000/200000 = 81 > 80 ⇒ 90 − min(81, 45) = 45 → max(45, 60) = 60.
        let mut sk = sock(90, 50);
        let mut y = fresh(&mut sk);
        y.reno_count = 60;
        round(&mut y, &mut sk, 200_000);
        assert_eq!((y.last_q, sk.cwnd, sk.ssthresh, y.reno_count), (81, 60, 60, 61));
        // …and none at all when cwnd ≤ reno_count.
        let mut sk = sock(90, 50);
        let mut y = fresh(&mut sk);
        y.reno_count = 90;
        round(&mut y, &mut sk, 200_000);
        assert_eq!((sk.cwnd, sk.ssthresh, y.decongestions), (90, 50, 0));
    }

    #[test]
    fn fast_mode_and_reno_count_reset() {
        // rtt 20 500: queue = 100·500/20500 = 2, delay 500 ≤ 2500 ⇒ fast.
        let mut sk = sock(100, 50);
        let mut y = fresh(&mut sk);
        y.doing_reno_now = 3;
        y.reno_count = 40;
        y.fast_count = 49;
        round(&mut y, &mut sk, 20_500);
        assert_eq!((y.last_q, y.doing_reno_now, y.fast_count, y.reno_count), (2, 0, 50, 40));
        round(&mut y, &mut sk, 20_500); // 51 > ZETA ⇒ reset
        assert_eq!((y.fast_count, y.reno_count), (0, 2));
        // Delay exactly baseRTT/8 (2 500) is still fast.
        round(&mut y, &mut sk, 22_500);
        assert_eq!(y.doing_reno_now, 0);
        round(&mut y, &mut sk, 22_501);
        assert_eq!(y.doing_reno_now, 1);
    }

    #[test]
    fn too_few_samples_skip_the_decision() {
        let mut sk = sock(300, 50);
        let mut y = fresh(&mut sk);
        sample(&mut y, &mut sk, 90_000, 0);
        sample(&mut y, &mut sk, 90_000, 0);
        sk.snd_una = y.v.beg_snd_nxt + 1;
        y.cong_avoid(&mut sk, 0);
        assert_eq!((sk.cwnd, y.doing_reno_now, y.v.cnt_rtt), (300, 0, 0));
    }

    #[test]
    fn loss_reduction_is_the_queue_bounded_by_cwnd_8_and_cwnd_2() {
        let mut sk = sock(100, 50);
        let mut y = Yeah::new();
        y.reno_count = 50;
        y.fast_count = 7;
        y.last_q = 33; // 100 − min(33, 50) → max(33, 12) = 33 ⇒ 67
        assert_eq!(y.ssthresh(&mut sk), 67);
        assert_eq!((y.reno_count, y.fast_count), (25, 0));
        y.last_q = 2; // at least cwnd/8 = 12 ⇒ 88
        assert_eq!(y.ssthresh(&mut sk), 88);
        y.last_q = 70; // at most cwnd/2 = 50 ⇒ 50
        assert_eq!(y.ssthresh(&mut sk), 50);
        y.last_q = 0;
        y.doing_reno_now = TCP_YEAH_RHO; // competing with Reno ⇒ halve
        assert_eq!(y.ssthresh(&mut sk), 50);
        sk.cwnd = 2;
        y.last_q = 5;
        y.doing_reno_now = 0;
        assert_eq!(y.ssthresh(&mut sk), 2); // floor
    }

    #[test]
    fn fast_mode_is_scalable_and_slow_mode_is_reno() {
        // Fast: +1 when the count exceeds min(cwnd, 100) = 50. First call counts the ACK's
        // pkts_acked (2), later calls 1 each.
        let mut sk = sock(50, 10);
        let mut y = fresh(&mut sk);
        sk.snd_una = 0; // no per-RTT step
        sample(&mut y, &mut sk, 20_000, 2);
        y.cong_avoid(&mut sk, 2);
        assert_eq!(sk.snd_cwnd_cnt, 2);
        for _ in 0..48 {
            y.cong_avoid(&mut sk, 1);
        }
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (50, 50));
        y.cong_avoid(&mut sk, 1);
        assert_eq!((sk.cwnd, sk.snd_cwnd_cnt), (51, 0));
        // pkts_acked outside Open is not remembered.
        sk.ca_state = CaState::Recovery;
        sample(&mut y, &mut sk, 20_000, 9);
        assert_eq!(y.pkts_acked, 1);
        // Slow mode: Reno, +1 per cwnd calls.
        let mut sk = sock(20, 10);
        let mut y = fresh(&mut sk);
        y.doing_reno_now = 1;
        sk.snd_una = 0;
        for i in 0..20 {
            y.cong_avoid(&mut sk, 3);
            assert_eq!(sk.cwnd, if i < 19 { 20 } else { 21 });
        }
        // Not cwnd-limited: no growth and no per-RTT step.
        sk.is_cwnd_limited_flag = false;
        sk.snd_una = y.v.beg_snd_nxt + 1;
        y.cong_avoid(&mut sk, 1);
        assert_eq!(sk.cwnd, 21);
        // init clamps cwnd_clamp for the MD arithmetic.
        assert_eq!(sk.cwnd_clamp, 0xffff_ffff / 128);
    }
}
