//! TCP-NV ("New Vegas", L. Brakmo) as in Linux net/ipv4/tcp_nv.c (4.8+; 5.x/6.x form). Intended
//! by its author for data centres with NV-only traffic.
//!
//! Rules (kernel): on every ACK with an RTT sample (Open/Disorder only) NV smooths the RTT
//! (`nv_rtt_factor` 128/256: half old, half new), computes the delivery-rate proxy
//! `rate = in_flight·80000/avg_rtt` (units of 100 bit/s; `in_flight` in bytes) and keeps its
//! per-RTT maximum and a windowed minimum RTT (`nv_min_rtt`, swapped for `nv_min_rtt_new`
//! every `nv_reset_period` ≈ 5 s, randomised ×[0.75, 1.25)). Once per RTT:
//! `cwnd_by_slope = max_rate·min_rtt/(80000·mss)` (the window that rate needs without a
//! queue) and `max_win = cwnd_by_slope + nv_pad`:
//! * cwnd > max_win (after ≥ `nv_rtt_min_cnt` RTTs and ≥ 60 samples, 30 in the first slow
//!   start): congestion ⇒ stop growth, ssthresh = max_win, cwnd −= max(2, 30 %·(cwnd − max_win))
//!   (or cwnd = max_win if the gap ≤ 2); with too few samples growth is stopped after 10 RTTs;
//! * cwnd ≤ max_win − `nv_pad_buffer` (≥ 20 samples): no congestion ⇒ allow growth;
//! * in between: hold.
//! Growth itself is Reno (`cwnd_growth_factor` 0) or slower after RTOs (factor < 0 ⇒ +1 per
//! cwnd·2^−factor packets; the factor recovers after 8 congestion-free decisions).
//! Loss: ssthresh = cwnd·819/1024 (80 %).
//!
//! Simulator mapping and known differences:
//! * `ack_sample.in_flight` is bytes in Linux (`end_seq − snd_una` at transmit); ccbench's
//!   `AckSample::in_flight` counts packets, so NV uses `in_flight·mss` (loses only the partial
//!   last segment);
//! * jiffies at HZ = 1000 (`now_ns / 1 ms`); the reset-period randomisation uses a per-flow
//!   deterministic xorshift generator seeded at `init` (the kernel uses `get_random_bytes`), so
//!   runs stay reproducible;
//! * the BPF `BPF_SOCK_OPS_BASE_RTT` hook is absent (`nv_base_rtt = nv_lower_bound_rtt = 0`,
//!   as without a BPF program).
//! Only the kernel's three module parameters are tunable; the other `nv_*` values are the
//! kernel's file-local constants.

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaState, CongestionControl, ParamInfo, Params,
    SchemeInfo, Sock,
};

/// `nv_pad_buffer`: do not grow cwnd if this close (packets) to max_win.
pub const NV_PAD_BUFFER: u32 = 2;
/// `nv_cong_dec_mult` = 30·128/100: decrease cwnd by 30 % of the excess (×128).
pub const NV_CONG_DEC_MULT: u32 = 30 * 128 / 100;
/// `nv_ssthresh_factor` = 8 (×1/8 ⇒ 1.0): on congestion ssthresh = max_win.
pub const NV_SSTHRESH_FACTOR: u32 = 8;
/// `nv_rtt_factor` = 128 (/256): avg_rtt = ½ new + ½ old.
pub const NV_RTT_FACTOR: u64 = 128;
/// `nv_loss_dec_factor` = 819 (/1024 ⇒ 80 %): loss ssthresh.
pub const NV_LOSS_DEC_FACTOR: u32 = 819;
/// `nv_cwnd_growth_rate_neg`: congestion-free decisions before the (negative) growth factor
/// is raised by one.
pub const NV_CWND_GROWTH_RATE_NEG: u32 = 8;
/// `nv_cwnd_growth_rate_pos` = 0: growth stays Reno-like (never faster).
pub const NV_CWND_GROWTH_RATE_POS: u32 = 0;
/// `nv_dec_eval_min_calls`: samples needed before a decrease.
pub const NV_DEC_EVAL_MIN_CALLS: u32 = 60;
/// `nv_inc_eval_min_calls`: samples needed before allowing growth.
pub const NV_INC_EVAL_MIN_CALLS: u32 = 20;
/// `nv_ssthresh_eval_min_calls`: samples needed to stop the first slow start.
pub const NV_SSTHRESH_EVAL_MIN_CALLS: u32 = 30;
/// `nv_stop_rtt_cnt`: RTTs without a decision after which growth stops.
pub const NV_STOP_RTT_CNT: u32 = 10;
/// `nv_rtt_min_cnt`: RTTs before a congestion decision.
pub const NV_RTT_MIN_CNT: u32 = 2;
/// `NV_INIT_RTT`: no-sample value.
pub const NV_INIT_RTT: u32 = u32::MAX;
/// `NV_MIN_CWND`: initial/minimum of the per-flow decision floor `nv_min_cwnd`.
pub const NV_MIN_CWND: u32 = 4;
/// `NV_MIN_CWND_GROW`: step of that floor when only one sample arrives per RTT.
pub const NV_MIN_CWND_GROW: u32 = 2;
/// `NV_TSO_CWND_BOUND`: bound of that floor.
pub const NV_TSO_CWND_BOUND: u32 = 80;
/// Jiffies per second assumed (HZ = 1000).
const HZ: u64 = 1000;

/// Module parameters (tcp_nv.c `module_param`).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "nv_pad", default: 10.0, doc: "max queued packets allowed in the network: max_win = cwnd_by_slope + nv_pad" },
    ParamInfo { name: "nv_reset_period", default: 5.0, doc: "min-RTT reset period in seconds (randomised ×[0.75, 1.25))" },
    ParamInfo { name: "nv_min_cwnd", default: 2.0, doc: "NV does not decrease cwnd below this (packets) without losses" },
];

#[derive(Clone, Debug)]
pub struct Nv {
    nv_pad: u32,
    nv_reset_period: u32,
    nv_min_cwnd_param: u32,
    /// When (jiffies) to switch to `nv_min_rtt_new`.
    min_rtt_reset_jiffies: u64,
    /// Growth factor (kernel s8): < 0 ⇒ less than 1 packet per RTT.
    cwnd_growth_factor: i32,
    allow_cwnd_growth: bool,
    reset: bool,
    catchup: bool,
    /// Samples since the last evaluation (kernel u8, saturating at 255).
    eval_call_cnt: u32,
    /// Decision floor, grows with TSO/LRO-like one-ACK-per-RTT behaviour (kernel u8).
    min_cwnd: u32,
    /// RTTs without a CA decision (kernel u8).
    rtt_cnt: u32,
    /// Smoothed RTT (µs).
    last_rtt: u32,
    /// Active and future minimum RTT (µs).
    min_rtt: u32,
    min_rtt_new: u32,
    base_rtt: u32,
    lower_bound_rtt: u32,
    /// Max rate (100 bit/s) seen during the current RTT.
    rtt_max_rate: u32,
    rtt_start_seq: u64,
    last_snd_una: u64,
    no_cong_cnt: u32,
    /// Last max_win computed (packets), for traces.
    max_win: u32,
    /// Deterministic replacement of get_random_bytes.
    rng: u32,
}

impl Nv {
    pub fn new(nv_pad: u32, nv_reset_period: u32, nv_min_cwnd: u32) -> Self {
        Nv {
            nv_pad,
            nv_reset_period,
            nv_min_cwnd_param: nv_min_cwnd,
            min_rtt_reset_jiffies: 0,
            cwnd_growth_factor: 0,
            allow_cwnd_growth: true,
            reset: false,
            catchup: false,
            eval_call_cnt: 0,
            min_cwnd: NV_MIN_CWND,
            rtt_cnt: 0,
            last_rtt: 0,
            min_rtt: NV_INIT_RTT,
            min_rtt_new: NV_INIT_RTT,
            base_rtt: 0,
            lower_bound_rtt: 0,
            rtt_max_rate: 0,
            rtt_start_seq: 0,
            last_snd_una: 0,
            no_cong_cnt: 0,
            max_win: 0,
            rng: 0x2545_f491,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Nv::new(
            p.int("nv_pad", 10, 0, 1 << 20)? as u32,
            p.int("nv_reset_period", 5, 1, 1 << 20)? as u32,
            p.int("nv_min_cwnd", 2, 1, 1 << 20)? as u32,
        ))
    }

    #[inline]
    fn jiffies(sk: &Sock) -> u64 {
        sk.now_ns / (1_000_000_000 / HZ)
    }

    fn random_byte(&mut self) -> u32 {
        // xorshift32
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rng = x;
        x >> 24
    }

    /// `tcpnv_reset`.
    fn soft_reset(&mut self, sk: &Sock) {
        self.reset = false;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.last_rtt = 0;
        self.rtt_max_rate = 0;
        self.rtt_start_seq = sk.snd_una;
        self.eval_call_cnt = 0;
        self.last_snd_una = sk.snd_una;
    }

    /// `nv_get_bounded_rtt` (bounds only exist with the BPF base-RTT hook).
    fn bounded_rtt(&self, val: u32) -> u32 {
        if self.lower_bound_rtt > 0 && val < self.lower_bound_rtt {
            self.lower_bound_rtt
        } else if self.base_rtt > 0 && val > self.base_rtt {
            self.base_rtt
        } else {
            val
        }
    }
}

impl Default for Nv {
    fn default() -> Self {
        Nv::new(10, 5, 2)
    }
}

impl CongestionControl for Nv {
    fn name(&self) -> &'static str {
        "nv"
    }

    fn init(&mut self, sk: &mut Sock) {
        let (pad, period, minc) = (self.nv_pad, self.nv_reset_period, self.nv_min_cwnd_param);
        *self = Nv::new(pad, period, minc);
        self.soft_reset(sk);
        self.rng = ((sk.now_ns ^ (sk.now_ns >> 32)) as u32 ^ 0x9e37_79b9) | 1;
        self.min_rtt_reset_jiffies = Self::jiffies(sk) + 2 * HZ;
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        // Only grow cwnd if NV has not detected congestion.
        if !self.allow_cwnd_growth {
            return;
        }
        let mut acked = acked;
        if sk.in_slow_start() {
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        let cnt = if self.cwnd_growth_factor < 0 {
            sk.cwnd << (-self.cwnd_growth_factor) as u32
        } else {
            4u32.max(sk.cwnd >> self.cwnd_growth_factor as u32)
        };
        tcp_cong_avoid_ai(sk, cnt, acked);
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        ((sk.cwnd as u64 * NV_LOSS_DEC_FACTOR as u64 >> 10) as u32).max(2)
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Open && self.reset {
            self.soft_reset(sk);
        } else if matches!(new_state, CaState::Loss | CaState::Cwr | CaState::Recovery) {
            self.reset = true;
            self.allow_cwnd_growth = false;
            if new_state == CaState::Loss {
                // Reset the growth factor to Reno's, then slow it down if allowed.
                if self.cwnd_growth_factor > 0 {
                    self.cwnd_growth_factor = 0;
                }
                if NV_CWND_GROWTH_RATE_NEG > 0 && self.cwnd_growth_factor > -8 {
                    self.cwnd_growth_factor -= 1;
                }
            }
        }
    }

    /// `tcpnv_acked`: the NV congestion-avoidance computations.
    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        // Some calls are for duplicates without timestamps.
        if sample.rtt_us < 0 {
            return;
        }
        if sk.ca_state != CaState::Open && sk.ca_state != CaState::Disorder {
            return;
        }
        // Stop cwnd growth if we were in catch-up mode.
        if self.catchup && sk.cwnd >= self.nv_min_cwnd_param {
            self.catchup = false;
            self.allow_cwnd_growth = false;
        }
        let bytes_acked = sk.snd_una.wrapping_sub(self.last_snd_una);
        self.last_snd_una = sk.snd_una;
        if sample.in_flight == 0 {
            return;
        }
        let rtt_us = sample.rtt_us.min(u32::MAX as i64) as u32;
        // Moving average of the RTT.
        let mut avg_rtt = if NV_RTT_FACTOR > 0 {
            let a = if self.last_rtt > 0 {
                ((rtt_us as u64 * NV_RTT_FACTOR + self.last_rtt as u64 * (256 - NV_RTT_FACTOR)) >> 8) as u32
            } else {
                self.min_rtt = rtt_us << 1;
                rtt_us
            };
            self.last_rtt = a;
            a
        } else {
            rtt_us
        };
        // Rate in 100 bit/s: bytes·8/µs·1e6/100 = bytes·80000/µs.
        let in_flight_bytes = sample.in_flight as u64 * sk.mss as u64;
        let rate = (in_flight_bytes * 80000 / (avg_rtt.max(1) as u64)) as u32;
        // Maximum rate seen during this RTT (possibly longer: needs enough calls).
        if self.rtt_max_rate < rate {
            self.rtt_max_rate = rate;
        }
        if self.eval_call_cnt < 255 {
            self.eval_call_cnt += 1;
        }
        // Bounds apply only to the min-RTT update.
        avg_rtt = self.bounded_rtt(avg_rtt);
        if avg_rtt < self.min_rtt {
            self.min_rtt = avg_rtt;
        }
        if avg_rtt < self.min_rtt_new {
            self.min_rtt_new = avg_rtt;
        }
        // Every nv_reset_period·[0.75, 1.25) s the active min RTT is replaced by the new one.
        let now = Self::jiffies(sk);
        if now >= self.min_rtt_reset_jiffies {
            self.min_rtt = self.min_rtt_new;
            self.min_rtt_new = NV_INIT_RTT;
            let rand = self.random_byte() as u64;
            self.min_rtt_reset_jiffies = now + ((self.nv_reset_period as u64 * (384 + rand) * HZ) >> 9);
            // Every so often decrease the decision floor in case it is stale.
            self.min_cwnd = (self.min_cwnd / 2).max(NV_MIN_CWND);
        }
        // Once per RTT: congestion avoidance decision.
        if self.rtt_start_seq < sk.snd_una {
            self.rtt_start_seq = sk.snd_nxt;
            if self.rtt_cnt < 0xff {
                self.rtt_cnt += 1;
            }
            // Only one call this RTT: cwnd too small for TSO/LRO/coalescing ⇒ raise the floor.
            if self.eval_call_cnt == 1
                && bytes_acked >= (self.min_cwnd as u64 - 1) * sk.mss as u64
                && self.min_cwnd < NV_TSO_CWND_BOUND + 1
            {
                self.min_cwnd = (self.min_cwnd + NV_MIN_CWND_GROW).min(NV_TSO_CWND_BOUND + 1);
                self.rtt_start_seq = sk.snd_nxt + self.min_cwnd as u64 * sk.mss as u64;
                self.eval_call_cnt = 0;
                self.allow_cwnd_growth = true;
                return;
            }
            // Ideal cwnd for the current rate: slope = 80000·mss/min_rtt.
            let cwnd_by_slope =
                (self.rtt_max_rate as u64 * self.min_rtt as u64 / (80000 * sk.mss as u64)) as u32;
            let max_win = cwnd_by_slope.wrapping_add(self.nv_pad);
            self.max_win = max_win;
            if sk.cwnd > max_win {
                // Congestion, if there is enough data to decide.
                if self.rtt_cnt < NV_RTT_MIN_CNT {
                    return;
                } else if sk.ssthresh == super::TCP_INFINITE_SSTHRESH {
                    if self.eval_call_cnt < NV_SSTHRESH_EVAL_MIN_CALLS {
                        return;
                    }
                } else if self.eval_call_cnt < NV_DEC_EVAL_MIN_CALLS {
                    if self.allow_cwnd_growth && self.rtt_cnt > NV_STOP_RTT_CNT {
                        self.allow_cwnd_growth = false;
                    }
                    return;
                }
                self.allow_cwnd_growth = false;
                sk.ssthresh = (NV_SSTHRESH_FACTOR * max_win) >> 3;
                if sk.cwnd - max_win > 2 {
                    // Gap > 2: exponential decrease.
                    let dec = 2u32.max(((sk.cwnd - max_win) * NV_CONG_DEC_MULT) >> 7);
                    sk.cwnd -= dec;
                } else if NV_CONG_DEC_MULT > 0 {
                    sk.cwnd = max_win;
                }
                if self.cwnd_growth_factor > 0 {
                    self.cwnd_growth_factor = 0;
                }
                self.no_cong_cnt = 0;
            } else if sk.cwnd <= max_win.wrapping_sub(NV_PAD_BUFFER) {
                // No congestion: grow if allowed.
                if self.eval_call_cnt < NV_INC_EVAL_MIN_CALLS {
                    return;
                }
                self.allow_cwnd_growth = true;
                self.no_cong_cnt += 1;
                if self.cwnd_growth_factor < 0
                    && NV_CWND_GROWTH_RATE_NEG > 0
                    && self.no_cong_cnt > NV_CWND_GROWTH_RATE_NEG
                {
                    self.cwnd_growth_factor += 1;
                    self.no_cong_cnt = 0;
                } else if self.cwnd_growth_factor >= 0
                    && NV_CWND_GROWTH_RATE_POS > 0
                    && self.no_cong_cnt > NV_CWND_GROWTH_RATE_POS
                {
                    self.cwnd_growth_factor += 1;
                    self.no_cong_cnt = 0;
                }
            } else {
                // In between: do nothing.
                return;
            }
            self.eval_call_cnt = 0;
            self.rtt_cnt = 0;
            self.rtt_max_rate = 0;
            // NV itself never takes cwnd below nv_min_cwnd.
            if sk.cwnd < self.nv_min_cwnd_param {
                sk.cwnd = self.nv_min_cwnd_param;
            }
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let us = |v: u32| if v == NV_INIT_RTT { f64::NAN } else { v as f64 };
        out.push(("min_rtt_us", us(self.min_rtt)));
        out.push(("avg_rtt_us", self.last_rtt as f64));
        out.push(("max_rate_bps", self.rtt_max_rate as f64 * 100.0));
        out.push(("max_win", self.max_win as f64));
        out.push(("allow_growth", if self.allow_cwnd_growth { 1.0 } else { 0.0 }));
        out.push(("growth_factor", self.cwnd_growth_factor as f64));
        out.push(("decision_floor", self.min_cwnd as f64));
        out.push(("eval_calls", self.eval_call_cnt as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "nv",
    description: "TCP-NV: per RTT compares cwnd with the window the measured rate needs at min RTT plus nv_pad; decreases by 30 % of the excess",
    source: "Linux net/ipv4/tcp_nv.c (4.8+/5.x/6.x)",
    params: PARAMS,
    make: |p| Ok(Box::new(Nv::from_params(p)?)),
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
        s.snd_nxt = 1000 * MSS;
        s
    }

    fn ack(nv: &mut Nv, sk: &mut Sock, rtt_us: i64, in_flight: u32) {
        nv.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us, in_flight });
    }

    /// NV with min_rtt 10 ms, smoothed RTT 20 ms, `rtt_cnt` RTTs and `calls` samples so far,
    /// then the sample (20 ms, 100 packets in flight) whose ACK ends the RTT.
    /// rate = 100·1448·80000/20000 = 579 200; cwnd_by_slope = 579 200·10 000/(80 000·1448) = 50;
    /// max_win = 60.
    fn decide(cwnd: u32, ssthresh: u32, rtt_cnt: u32, calls: u32) -> (Nv, Sock) {
        let mut nv = Nv::default();
        let mut sk = sock(cwnd, ssthresh);
        nv.init(&mut sk);
        nv.min_rtt = 10_000;
        nv.min_rtt_new = 10_000;
        nv.last_rtt = 20_000;
        nv.rtt_cnt = rtt_cnt;
        nv.eval_call_cnt = calls;
        sk.snd_una = 10 * MSS;
        ack(&mut nv, &mut sk, 20_000, 100);
        (nv, sk)
    }

    #[test]
    fn congestion_decision_from_rate_slope() {
        // cwnd 100 > 60 with 2 RTTs and 60 samples: ssthresh = 60, cwnd −= max(2, 40·38 >> 7 = 11).
        let (nv, sk) = decide(100, 200, 1, 59);
        assert_eq!(nv.max_win, 60);
        assert_eq!((sk.cwnd, sk.ssthresh, nv.allow_cwnd_growth), (89, 60, false));
        assert_eq!((nv.eval_call_cnt, nv.rtt_cnt, nv.rtt_max_rate), (0, 0, 0));
        // Gap ≤ 2 ⇒ cwnd = max_win.
        let (_, sk) = decide(62, 200, 1, 59);
        assert_eq!((sk.cwnd, sk.ssthresh), (60, 60));
    }

    #[test]
    fn not_enough_data_defers_the_decrease() {
        // 59 samples < 60: no decision, counters kept, growth still allowed (≤ 10 RTTs).
        let (nv, sk) = decide(100, 200, 1, 58);
        assert_eq!((sk.cwnd, sk.ssthresh, nv.allow_cwnd_growth), (100, 200, true));
        assert_eq!((nv.eval_call_cnt, nv.rtt_cnt, nv.rtt_max_rate), (59, 2, 579_200));
        // Same after more than 10 RTTs: growth is stopped.
        let (nv, sk) = decide(100, 200, 10, 58);
        assert_eq!((sk.cwnd, nv.allow_cwnd_growth), (100, false));
        // Only 1 RTT so far: no decision whatever the samples.
        let (_, sk) = decide(100, 200, 0, 200);
        assert_eq!(sk.cwnd, 100);
        // First slow start (ssthresh infinite): 30 samples suffice.
        let (_, sk) = decide(100, TCP_INFINITE_SSTHRESH, 1, 29);
        assert_eq!((sk.cwnd, sk.ssthresh), (89, 60));
        let (_, sk) = decide(100, TCP_INFINITE_SSTHRESH, 1, 28);
        assert_eq!(sk.cwnd, 100);
    }

    #[test]
    fn no_congestion_allows_growth_and_in_between_holds() {
        // cwnd 58 ≤ 60 − 2 with ≥ 20 samples ⇒ allow growth, state reset.
        let mut nv = Nv::default();
        let mut sk = sock(58, 200);
        nv.init(&mut sk);
        nv.min_rtt = 10_000;
        nv.last_rtt = 20_000;
        nv.allow_cwnd_growth = false;
        nv.eval_call_cnt = 19;
        sk.snd_una = 10 * MSS;
        ack(&mut nv, &mut sk, 20_000, 100);
        assert_eq!((nv.allow_cwnd_growth, nv.no_cong_cnt, nv.eval_call_cnt), (true, 1, 0));
        // cwnd 59 or 60: in between ⇒ nothing, counters kept.
        for cwnd in [59, 60] {
            let (nv, sk) = decide(cwnd, 200, 1, 100);
            assert_eq!((sk.cwnd, nv.eval_call_cnt, nv.rtt_cnt, nv.no_cong_cnt), (cwnd, 101, 2, 0));
        }
    }

    #[test]
    fn rtt_smoothing_and_min_rtt_reset() {
        let mut nv = Nv::default();
        let mut sk = sock(10, 100);
        nv.init(&mut sk);
        assert_eq!(nv.min_rtt_reset_jiffies, 2000);
        // First sample: avg = rtt, min_rtt = 2·rtt then min ⇒ rtt.
        ack(&mut nv, &mut sk, 10_000, 10);
        assert_eq!((nv.last_rtt, nv.min_rtt, nv.min_rtt_new), (10_000, 10_000, 10_000));
        // (20 000·128 + 10 000·128) >> 8 = 15 000.
        ack(&mut nv, &mut sk, 20_000, 10);
        assert_eq!(nv.last_rtt, 15_000);
        // rate = 10·1448·80000/10000 = 115 840 (first sample) is the max so far.
        assert_eq!(nv.rtt_max_rate, 115_840);
        // No sample without data in flight, none with rtt −1, none outside Open/Disorder.
        ack(&mut nv, &mut sk, 5_000, 0);
        ack(&mut nv, &mut sk, -1, 10);
        sk.ca_state = CaState::Recovery;
        ack(&mut nv, &mut sk, 5_000, 10);
        assert_eq!((nv.eval_call_cnt, nv.last_rtt), (2, 15_000));
        sk.ca_state = CaState::Open;
        // At 2 s the active min RTT becomes min_rtt_new (avg 15 000 → 17 500 now) and the next
        // reset is 5 s·(384 + r)/512 later, r a byte ⇒ within [3.75 s, 6.25 s).
        sk.now_ns = 2_000_000_000;
        nv.min_rtt_new = 12_345;
        ack(&mut nv, &mut sk, 20_000, 10);
        assert_eq!((nv.min_rtt, nv.min_rtt_new), (12_345, NV_INIT_RTT));
        let next = nv.min_rtt_reset_jiffies - 2000;
        assert!((3750..6250).contains(&next), "{}", next);
        assert_eq!(nv.min_cwnd, NV_MIN_CWND);
    }

    #[test]
    fn single_sample_rtts_raise_the_decision_floor() {
        let mut nv = Nv::default();
        let mut sk = sock(10, 100);
        nv.init(&mut sk);
        sk.snd_una = 5 * MSS; // ≥ (4 − 1)·mss acked, first call of the RTT
        ack(&mut nv, &mut sk, 10_000, 10);
        assert_eq!(nv.min_cwnd, 6);
        assert_eq!(nv.rtt_start_seq, sk.snd_nxt + 6 * MSS);
        assert_eq!((nv.eval_call_cnt, nv.allow_cwnd_growth), (0, true));
    }

    #[test]
    fn growth_factor_after_rto_and_loss_ssthresh() {
        let mut nv = Nv::default();
        let mut sk = sock(10, 5);
        nv.init(&mut sk);
        // Factor 0: Reno (+1 per max(4, cwnd) packets).
        sk.snd_cwnd_cnt = 9;
        nv.cong_avoid(&mut sk, 1);
        assert_eq!(sk.cwnd, 11);
        // RTO: growth stopped, factor −1.
        nv.set_state(&mut sk, CaState::Loss);
        assert_eq!((nv.allow_cwnd_growth, nv.cwnd_growth_factor, nv.reset), (false, -1, true));
        nv.cong_avoid(&mut sk, 100);
        assert_eq!(sk.cwnd, 11);
        // Once allowed again: +1 per 2·cwnd = 22 packets.
        nv.allow_cwnd_growth = true;
        sk.snd_cwnd_cnt = 0;
        nv.cong_avoid(&mut sk, 21);
        assert_eq!(sk.cwnd, 11);
        nv.cong_avoid(&mut sk, 1);
        assert_eq!(sk.cwnd, 12);
        // Back to Open after a reduction: soft reset.
        nv.eval_call_cnt = 7;
        nv.set_state(&mut sk, CaState::Open);
        assert_eq!((nv.eval_call_cnt, nv.reset), (0, false));
        // Factor floor at −8.
        for _ in 0..20 {
            nv.set_state(&mut sk, CaState::Loss);
        }
        assert_eq!(nv.cwnd_growth_factor, -8);
        // Loss ssthresh: 100·819 >> 10 = 79.
        sk.cwnd = 100;
        assert_eq!(nv.ssthresh(&mut sk), 79);
        sk.cwnd = 2;
        assert_eq!(nv.ssthresh(&mut sk), 2);
        let e = crate::cc::make("nv", &serde_json::json!({"nv_pad_buffer": 1})).err().unwrap();
        assert!(e.contains("nv_pad, nv_reset_period, nv_min_cwnd"), "{}", e);
    }
}
