//! Copa, as described in V. Arun and H. Balakrishnan, "Copa: Practical Delay-Based Congestion
//! Control for the Internet", NSDI 2018 (the revised version with the errata applied; §2
//! algorithm, §2.2 velocity, §3 competitive mode). The paper's user-space implementation
//! (genericCC, used by Pantheon) is the model for the details the paper leaves open.
//!
//! Per ACK: RTTstanding = min RTT over the last srtt/2, RTTmin = min RTT over 10 s,
//! d_q = RTTstanding − RTTmin, target rate λ_t = 1/(δ·d_q) packets/s, current rate
//! λ = cwnd/RTTstanding. If λ ≤ λ_t, cwnd += v/(δ·cwnd) per ACKed packet, else −= v/(δ·cwnd).
//! Once per RTT the direction of the cwnd change is compared with the previous one: after 3 RTTs
//! in the same direction the velocity v doubles every RTT, a change of direction resets it to 1.
//! Slow start doubles cwnd per RTT until λ first exceeds λ_t. Pacing at 2·cwnd/RTTstanding.
//!
//! Competitive mode (§3): if the queue was not "nearly empty" (d_q < 10 % of the RTT range
//! RTTmax − RTTmin, RTTmax over the last 4 RTTs) at any time in the last 5 RTTs, a buffer-filling
//! competitor is assumed and 1/δ follows AIMD: +1 per RTT without loss, halved on an RTT with a
//! loss (δ ≤ 0.5 always). When the queue empties again Copa returns to the default δ = 0.5.
//!
//! **Competitive mode alone and delayed ACKs.** The reference (genericCC `RTTWindow::is_copa`:
//! min raw RTT over 4·srtt < RTTmin + 0.1·(max RTT over 4·srtt − RTTmin), RTTstanding = min over
//! srtt/2, RTTmin over max(10 s, 20·RTTmin)) runs over UDP with **one ACK per packet**. With the
//! Linux receiver's delayed ACKs (`tcp_send_delayed_ack`, tcp/receiver.rs) a sender gets one RTT sample per two
//! packets; each ACK releases two packets that queue behind each other at the bottleneck, and
//! the first of each pair is held at the receiver until the second arrives, so no sample ever
//! sees a truly empty queue: the floor of d_q is 0.3–1 packet time (0.3–0.6 ms at 20 Mbit/s),
//! while "nearly empty" for a lone Copa flow (range RTTmax − RTTmin ≈ 4–10 ms) is 0.4–1 ms. A
//! trough is missed now and then; competitive mode then raises 1/δ every RTT, the larger queue
//! keeps the detector from seeing an empty queue, and the excursion lasts until a deep trough
//! (positive feedback). Measured alone (20 Mbit/s, 44.6 ms, 500 packets, 5–20 s): default mode
//! 78.5 % with delayed ACKs, 100 % with `tcp: {delayed-ack: false}` — the detector itself
//! matches the paper; the paper's "always default when alone" does not survive TCP delayed
//! ACKs.
//!
//! Mapping onto the Linux-like core: Copa implements `cong_control` (it owns cwnd and pacing);
//! cwnd is kept fractional and written as max(round(cwnd), 2) packets. Losses do not reduce cwnd
//! (Copa reacts to delay; only competitive mode uses losses, through δ); after an RTO the core's
//! Loss-state cwnd is adopted and v = 1. The rate comparison is done as cwnd·δ·d_q ≤ RTTstanding
//! (equivalent to λ ≤ λ_t, and finite when d_q = 0).

use super::{
    CaEvent, CongestionControl, Minmax, PacingStatus, ParamInfo, Params, RateSample, SchemeInfo,
    Sock, WindowMin,
};

/// Default-mode δ (packets⁻¹·… the paper's δ = 0.5: 1/δ = 2 packets of queue per flow).
pub const COPA_DEFAULT_DELTA: f64 = 0.5;
/// RTTmin window (µs): 10 s [Copa §2].
pub const COPA_MIN_RTT_WIN_US: u64 = 10_000_000;
/// Consecutive same-direction RTTs before the velocity starts doubling [Copa §2.2].
pub const COPA_VELOCITY_SAME_DIR_RTTS: u32 = 3;
/// Competitive-mode detection: the queue must have been nearly empty within this many RTTs [§3].
pub const COPA_EMPTY_CHECK_RTTS: u64 = 5;
/// RTTmax window for the "nearly empty" threshold, in RTTs [§3].
pub const COPA_MAX_RTT_WIN_RTTS: u64 = 4;
/// "Nearly empty": d_q below this fraction of RTTmax − RTTmin [§3].
pub const COPA_NEARLY_EMPTY_FRAC: f64 = 0.1;
/// Pacing gain: packets paced at 2·cwnd/RTTstanding [§2].
pub const COPA_PACING_GAIN: f64 = 2.0;

/// Modes (traced as numbers).
pub const MODE_SLOW_START: f64 = 0.0;
pub const MODE_DEFAULT: f64 = 1.0;
pub const MODE_COMPETITIVE: f64 = 2.0;

pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "delta", default: 0.5, doc: "default-mode δ: target rate 1/(δ·d_q); 1/δ ≈ packets each flow keeps queued" },
    ParamInfo { name: "competitive", default: 1.0, doc: "enable competitive-mode switching (AIMD on 1/δ when the queue never empties in 5 RTTs)" },
    ParamInfo { name: "velocity", default: 1.0, doc: "enable the velocity parameter (0: v = 1 always)" },
    ParamInfo { name: "pacing", default: 1.0, doc: "pace at 2·cwnd/RTTstanding (0: window-limited bursts)" },
];

#[derive(Clone, Debug)]
pub struct Copa {
    default_delta: f64,
    competitive_on: bool,
    velocity_on: bool,
    pacing_on: bool,
    /// Fractional cwnd (packets).
    cwnd: f64,
    delta: f64,
    velocity: f64,
    /// Direction of the last per-RTT cwnd change (+1 / −1, 0 = none yet) and its run length.
    direction: i32,
    same_dir_rtts: u32,
    /// cwnd at the start of the current RTT and the RTT's end marker (snd_nxt).
    cwnd_at_rtt_start: f64,
    rtt_marker: u64,
    in_slow_start: bool,
    competitive: bool,
    loss_in_rtt: bool,
    standing: WindowMin,
    min_rtt: Minmax,
    max_rtt: Minmax,
    rtt_standing_us: u64,
    rtt_min_us: u64,
    d_q_us: u64,
    last_nearly_empty_us: u64,
    srtt_us: u64,
}

impl Copa {
    pub fn new(default_delta: f64, competitive_on: bool, velocity_on: bool, pacing_on: bool) -> Self {
        Copa {
            default_delta,
            competitive_on,
            velocity_on,
            pacing_on,
            cwnd: 10.0,
            delta: default_delta,
            velocity: 1.0,
            direction: 0,
            same_dir_rtts: 0,
            cwnd_at_rtt_start: 10.0,
            rtt_marker: 0,
            in_slow_start: true,
            competitive: false,
            loss_in_rtt: false,
            standing: WindowMin::default(),
            min_rtt: Minmax::new(0, u64::MAX),
            max_rtt: Minmax::new(0, 0),
            rtt_standing_us: 0,
            rtt_min_us: 0,
            d_q_us: 0,
            last_nearly_empty_us: 0,
            srtt_us: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Copa::new(
            p.float("delta", COPA_DEFAULT_DELTA, 1e-3, 10.0)?,
            p.bool("competitive", true)?,
            p.bool("velocity", true)?,
            p.bool("pacing", true)?,
        ))
    }

    /// λ ≤ λ_t ⇔ cwnd/RTTstanding ≤ 1/(δ·d_q) ⇔ cwnd·δ·d_q ≤ RTTstanding.
    pub fn below_target(cwnd: f64, delta: f64, d_q_us: u64, rtt_standing_us: u64) -> bool {
        cwnd * delta * d_q_us as f64 <= rtt_standing_us as f64
    }

    /// Target rate λ_t in packets/s (∞ when d_q = 0).
    pub fn target_rate_pps(delta: f64, d_q_us: u64) -> f64 {
        if d_q_us == 0 {
            f64::INFINITY
        } else {
            1e6 / (delta * d_q_us as f64)
        }
    }

    /// Once per RTT: velocity from the direction of the cwnd change, competitive-mode δ.
    fn per_rtt(&mut self, now_us: u64) {
        let dir = if self.cwnd > self.cwnd_at_rtt_start {
            1
        } else if self.cwnd < self.cwnd_at_rtt_start {
            -1
        } else {
            0
        };
        if self.velocity_on && dir != 0 && dir == self.direction {
            self.same_dir_rtts += 1;
            if self.same_dir_rtts >= COPA_VELOCITY_SAME_DIR_RTTS {
                self.velocity *= 2.0;
            }
        } else {
            if dir != 0 {
                self.direction = dir;
            }
            self.same_dir_rtts = 0;
            self.velocity = 1.0;
        }
        // v must not change cwnd by more than it is (cap at cwnd·δ per RTT ≈ doubling).
        self.velocity = self.velocity.min((self.cwnd * self.delta).max(1.0));
        self.cwnd_at_rtt_start = self.cwnd;

        if self.competitive_on {
            let srtt = self.srtt_us.max(1);
            let empty_recently =
                now_us.saturating_sub(self.last_nearly_empty_us) <= COPA_EMPTY_CHECK_RTTS * srtt;
            if !empty_recently {
                if !self.competitive {
                    self.competitive = true;
                }
                // AIMD on 1/δ: +1 per RTT, halved on an RTT with a loss; δ ≤ default.
                let mut inv = 1.0 / self.delta;
                if self.loss_in_rtt {
                    inv /= 2.0;
                } else {
                    inv += 1.0;
                }
                self.delta = (1.0 / inv).min(self.default_delta);
            } else if self.competitive {
                self.competitive = false;
                self.delta = self.default_delta;
            }
        }
        self.loss_in_rtt = false;
    }

    fn write(&self, sk: &mut Sock) {
        let c = self.cwnd.round().max(2.0).min(sk.cwnd_clamp as f64);
        sk.cwnd = c as u32;
        if self.pacing_on && self.rtt_standing_us > 0 {
            sk.pacing_rate_bps = COPA_PACING_GAIN * self.cwnd.max(2.0) * sk.mss as f64 * 8.0 * 1e6
                / self.rtt_standing_us as f64;
        }
    }
}

impl Default for Copa {
    fn default() -> Self {
        Copa::new(COPA_DEFAULT_DELTA, true, true, true)
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn init(&mut self, sk: &mut Sock) {
        *self = Copa::new(self.default_delta, self.competitive_on, self.velocity_on, self.pacing_on);
        self.cwnd = sk.cwnd as f64;
        self.cwnd_at_rtt_start = self.cwnd;
        self.rtt_marker = sk.snd_nxt;
        if self.pacing_on {
            sk.pacing_status = PacingStatus::Needed;
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        // Loss does not reduce Copa's window; competitive mode notes it for δ.
        self.loss_in_rtt = true;
        sk.cwnd.max(2)
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// genericCC sends each packet as its window and pacing allow: a burst released by TSO
    /// deferral would fill the queue Copa reads as "nearly empty" and keep it in competitive
    /// mode (alone at 20 Mbit/s × 44.6 ms: default mode 0 % of the time with deferral, 76 %
    /// without).
    fn tso_defer(&self) -> bool {
        false
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            // RTO: start again from the core's Loss-state window.
            self.cwnd = sk.cwnd as f64;
            self.velocity = 1.0;
            self.same_dir_rtts = 0;
            self.loss_in_rtt = true;
        }
    }

    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) -> bool {
        let now = sk.now_us;
        if rs.losses > 0 {
            self.loss_in_rtt = true;
        }
        if rs.rtt_us > 0 {
            let rtt = rs.rtt_us as u64;
            self.srtt_us = if sk.srtt_us > 0 { sk.srtt_us as u64 } else { rtt };
            self.rtt_min_us = self.min_rtt.running_min(COPA_MIN_RTT_WIN_US, now, rtt);
            self.rtt_standing_us = self.standing.update(now, rtt, self.srtt_us / 2);
            let rtt_max = self.max_rtt.running_max(COPA_MAX_RTT_WIN_RTTS * self.srtt_us, now, rtt);
            self.d_q_us = self.rtt_standing_us.saturating_sub(self.rtt_min_us);
            let range = rtt_max.saturating_sub(self.rtt_min_us) as f64;
            if self.d_q_us as f64 <= COPA_NEARLY_EMPTY_FRAC * range {
                self.last_nearly_empty_us = now;
            }
        }
        if self.rtt_standing_us == 0 {
            return true; // no RTT sample yet: keep the initial window
        }
        let acked = rs.acked_sacked as f64;
        if acked > 0.0 {
            let below = Self::below_target(self.cwnd, self.delta, self.d_q_us, self.rtt_standing_us);
            if self.in_slow_start {
                if below {
                    self.cwnd += acked; // doubles per RTT
                } else {
                    self.in_slow_start = false;
                }
            }
            if !self.in_slow_start {
                let step = self.velocity / (self.delta * self.cwnd.max(1.0)) * acked;
                if below {
                    self.cwnd += step;
                } else {
                    self.cwnd = (self.cwnd - step).max(2.0);
                }
            }
        }
        if sk.snd_una >= self.rtt_marker {
            self.rtt_marker = sk.snd_nxt;
            self.per_rtt(now);
        }
        self.write(sk);
        true
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let mode = if self.in_slow_start {
            MODE_SLOW_START
        } else if self.competitive {
            MODE_COMPETITIVE
        } else {
            MODE_DEFAULT
        };
        out.push(("delta", self.delta));
        out.push(("mode", mode));
        out.push(("velocity", self.velocity));
        out.push(("d_q_ms", self.d_q_us as f64 / 1000.0));
        out.push(("rtt_standing_ms", self.rtt_standing_us as f64 / 1000.0));
        out.push(("rtt_min_ms", self.rtt_min_us as f64 / 1000.0));
        out.push(("cwnd_frac", self.cwnd));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "copa",
    description: "Copa: target rate 1/(delta·d_q) from the standing RTT (min over srtt/2) minus min RTT (10 s); cwnd ±v/(delta·cwnd) per ACK with velocity doubling; paced at 2·cwnd/RTT; competitive mode (AIMD on 1/delta) when the queue never empties in 5 RTTs",
    source: "Arun & Balakrishnan, NSDI 2018 (revised version), genericCC for unstated details",
    params: PARAMS,
    make: |p| Ok(Box::new(Copa::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn sock(cwnd: u32) -> Sock {
        let mut s = Sock::new(MSS, 10);
        s.cwnd = cwnd;
        s.srtt_us = 50_000;
        s.snd_nxt = 1_000_000;
        s
    }

    fn ack(c: &mut Copa, sk: &mut Sock, t_us: u64, rtt_us: i64, acked: u32) {
        sk.now_us = t_us;
        sk.now_ns = t_us * 1000;
        let rs = RateSample { rtt_us, acked_sacked: acked, ..Default::default() };
        c.cong_control(sk, &rs);
    }

    #[test]
    fn target_rate_comparison() {
        // δ = 0.5, d_q = 4 ms ⇒ λ_t = 1/(0.5·0.004) = 500 pkt/s.
        assert!((Copa::target_rate_pps(0.5, 4000) - 500.0).abs() < 1e-9);
        // RTTstanding 44 ms: λ = cwnd/0.044; λ ≤ 500 ⇔ cwnd ≤ 22.
        assert!(Copa::below_target(22.0, 0.5, 4000, 44_000));
        assert!(!Copa::below_target(22.5, 0.5, 4000, 44_000));
        // No queue: always below target.
        assert!(Copa::below_target(1e9, 0.5, 0, 40_000));
        assert_eq!(Copa::target_rate_pps(0.5, 0), f64::INFINITY);
    }

    #[test]
    fn per_ack_step_is_v_over_delta_cwnd() {
        let mut c = Copa::default();
        let mut sk = sock(20);
        c.init(&mut sk);
        c.in_slow_start = false;
        // RTTmin 40 ms, then standing 44 ms ⇒ d_q = 4 ms, λ_t = 500 pkt/s; cwnd 20 ⇒ 454.5 pkt/s
        // ≤ 500 ⇒ +1/(0.5·20) = +0.1 per ACKed packet.
        ack(&mut c, &mut sk, 1_000, 40_000, 0);
        ack(&mut c, &mut sk, 100_000, 44_000, 1);
        assert_eq!((c.rtt_min_us, c.rtt_standing_us, c.d_q_us), (40_000, 44_000, 4000));
        assert!((c.cwnd - 20.1).abs() < 1e-9, "{}", c.cwnd);
        // Queue 10 ms (standing 50 ms once the 44 ms sample leaves the srtt/2 = 25 ms window):
        // λ_t = 200 pkt/s < 20.1/0.05 = 402 ⇒ −1/(0.5·20.1) per packet, 2 packets: −0.199.
        ack(&mut c, &mut sk, 200_000, 50_000, 2);
        assert_eq!(c.d_q_us, 10_000);
        assert!((c.cwnd - (20.1 - 2.0 / (0.5 * 20.1))).abs() < 1e-9, "{}", c.cwnd);
        assert_eq!(sk.cwnd, 20);
        // Pacing 2·cwnd/RTTstanding.
        let want = 2.0 * c.cwnd * MSS as f64 * 8.0 / 0.05;
        assert!((sk.pacing_rate_bps - want).abs() < 1e-6);
        assert_eq!(sk.pacing_status, PacingStatus::Needed);
    }

    #[test]
    fn velocity_doubles_after_three_rtts_same_direction_and_resets() {
        let mut c = Copa::default();
        c.cwnd = 100.0;
        c.cwnd_at_rtt_start = 100.0;
        c.competitive_on = false;
        let mut vs = Vec::new();
        // Eight RTTs of increase, then one of decrease.
        for i in 0..8 {
            c.cwnd += 1.0 + i as f64;
            c.per_rtt(0);
            vs.push(c.velocity);
        }
        // RTT 1 sets the direction (v = 1), RTTs 2–3 same direction (v = 1), from the 4th
        // consecutive RTT in that direction v doubles every RTT.
        assert_eq!(vs, [1.0, 1.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
        c.cwnd -= 1.0;
        c.per_rtt(0);
        assert_eq!(c.velocity, 1.0);
        // Capped at cwnd·δ.
        let mut c = Copa::default();
        c.cwnd = 10.0;
        c.velocity = 64.0;
        c.direction = 1;
        c.same_dir_rtts = 5;
        c.competitive_on = false;
        c.cwnd_at_rtt_start = 9.0;
        c.per_rtt(0);
        assert_eq!(c.velocity, 5.0);
    }

    #[test]
    fn slow_start_doubles_until_above_target() {
        let mut c = Copa::default();
        let mut sk = sock(10);
        c.init(&mut sk);
        ack(&mut c, &mut sk, 1_000, 40_000, 0);
        ack(&mut c, &mut sk, 2_000, 40_000, 4); // d_q = 0: below target, +4
        assert_eq!(c.cwnd, 14.0);
        assert!(c.in_slow_start);
        // d_q = 10 ms: λ_t = 200 pkt/s; 14/0.05 = 280 > 200 ⇒ leave slow start, then −step.
        ack(&mut c, &mut sk, 100_000, 50_000, 1);
        assert!(!c.in_slow_start);
        assert!((c.cwnd - (14.0 - 1.0 / 7.0)).abs() < 1e-9);
    }

    #[test]
    fn competitive_mode_aimd_on_inverse_delta() {
        let mut c = Copa::default();
        c.srtt_us = 10_000;
        c.last_nearly_empty_us = 0;
        // 40 ms after the last empty queue (> 5 RTTs of 10 ms): competitive; 1/δ 2 → 3.
        c.per_rtt(60_000);
        assert!(c.competitive);
        assert!((c.delta - 1.0 / 3.0).abs() < 1e-12);
        c.per_rtt(70_000);
        assert!((c.delta - 0.25).abs() < 1e-12);
        // Loss in the RTT: 1/δ halves 4 → 2.
        c.loss_in_rtt = true;
        c.per_rtt(80_000);
        assert!((c.delta - 0.5).abs() < 1e-12);
        c.per_rtt(90_000);
        c.per_rtt(100_000);
        assert!((c.delta - 0.25).abs() < 1e-12);
        // The queue empties: back to default mode, δ = 0.5.
        c.last_nearly_empty_us = 105_000;
        c.per_rtt(110_000);
        assert!(!c.competitive);
        assert_eq!(c.delta, 0.5);
    }
}
