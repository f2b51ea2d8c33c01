//! BBRv3 as in the Linux v3 tree (github.com/google/bbr, branch v3, net/ipv4/tcp_bbr.c) and the
//! IETF draft draft-ietf-ccwg-bbr: loss- and ECN-aware probing with a long-term upper bound
//! (`bw_hi`, `inflight_hi`) and a short-term lower bound (`bw_lo`, `inflight_lo`), PROBE_BW
//! sub-states DOWN / CRUISE / REFILL / UP, a 2 % loss threshold, ECN alpha, and PROBE_RTT every
//! 5 s at cwnd = 0.5·BDP.
//!
//! Units as the kernel: gains ×256, bandwidth packets/µs ×2^24, cwnd in packets, jiffies = ms.
//! `u32::MAX` plays the kernel's `~0U` ("unset") for `bw_lo`, `inflight_lo`, `inflight_hi`.
//!
//! Known differences from the v3 tree:
//! * the app-limited "fast path" (`bbr_run_fast_path`, a CPU optimisation) is not taken: the full
//!   model update runs on every ACK;
//! * PLB (protective load balancing) and TLP-repair loss accounting (`CA_EVENT_TLP_RECOVERY`,
//!   `is_acking_tlp_retrans_seq`) are not modelled;
//! * ECN: the sender logic is enabled by the parameter `ecn` (the kernel's per-route
//!   `TCP_ECN_LOW` flag) and, as in the kernel, only when min_rtt ≤ 5 ms; an ACK's ECE is taken
//!   as `rs.delivered_ce > 0`. With `ecn` off (default) the ECN path is inert;
//! * random draws (probe wait, Reno-coexistence rounds) use splitmix64 seeded by `seed`/`stream`.

use super::bbr::{BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT};
use super::rng::{splitmix64, splitmix64_state};
use super::{
    CaEvent, CaState, CongestionControl, LostSkb, PacingStatus, ParamInfo, Params, RateSample,
    SchemeInfo, Sock,
};

/// `GSO_LEGACY_MAX_SIZE` and `MAX_TCP_HEADER` (x86-64), bytes.
const GSO_MAX_SIZE: u64 = 65536;
const MAX_TCP_HEADER: u64 = 320;
/// `sysctl_tcp_min_tso_segs` default.
const TCP_MIN_TSO_SEGS: u32 = 2;
const NS_PER_JIFFY: u64 = 1_000_000;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_ecn_max_rtt_us`: sender ECN logic only at RTTs up to this.
const ECN_MAX_RTT_US: u32 = 5000;
const UNSET: u32 = u32::MAX;

/// PROBE_BW phases (`enum bbr_pacing_gain_phase`), exported as `phase`.
pub const UP: usize = 0;
pub const DOWN: usize = 1;
pub const CRUISE: usize = 2;
pub const REFILL: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// Where the ACKs stand relative to a bandwidth probe (`enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "startup_pacing_gain", default: 710.0 / 256.0, doc: "STARTUP pacing gain (256·277/100 + 1 = 710/256 ≈ 4·ln 2)" },
    ParamInfo { name: "startup_cwnd_gain", default: 2.0, doc: "STARTUP and DRAIN cwnd gain" },
    ParamInfo { name: "drain_gain", default: 88.0 / 256.0, doc: "DRAIN pacing gain (256·1000/2885 = 88/256)" },
    ParamInfo { name: "cwnd_gain", default: 2.0, doc: "PROBE_BW cwnd gain (+0.25 in PROBE_UP)" },
    ParamInfo { name: "pacing_gain_up", default: 1.25, doc: "PROBE_UP pacing gain" },
    ParamInfo { name: "pacing_gain_down", default: 232.0 / 256.0, doc: "PROBE_DOWN pacing gain (256·91/100 = 232/256 ≈ 0.91)" },
    ParamInfo { name: "beta", default: 77.0 / 256.0, doc: "multiplicative cut of bw_lo/inflight_lo on a lossy round and of inflight_hi on too-high loss (256·30/100 = 77/256 ≈ 0.3)" },
    ParamInfo { name: "loss_thresh", default: 5.0 / 256.0, doc: "loss rate per flight above which inflight is too high (256·2/100 = 5/256 ≈ 2 %)" },
    ParamInfo { name: "inflight_headroom", default: 38.0 / 256.0, doc: "headroom left below inflight_hi in CRUISE/PROBE_RTT (256·15/100 = 38/256 ≈ 15 %)" },
    ParamInfo { name: "full_loss_cnt", default: 6.0, doc: "loss events in a STARTUP recovery round (with too-high loss) that end STARTUP; 0 disables" },
    ParamInfo { name: "bw_probe_max_rounds", default: 63.0, doc: "Reno-coexistence bound on rounds between bw probes" },
    ParamInfo { name: "bw_probe_rand_rounds", default: 2.0, doc: "random rounds subtracted from that bound" },
    ParamInfo { name: "bw_probe_base_us", default: 2_000_000.0, doc: "minimum wall-clock wait between bw probes (µs)" },
    ParamInfo { name: "bw_probe_rand_us", default: 1_000_000.0, doc: "random extra wait (µs)" },
    ParamInfo { name: "probe_rtt_win_ms", default: 5000.0, doc: "PROBE_RTT when no RTT sample ≤ the probe_rtt min for this long (ms)" },
    ParamInfo { name: "probe_rtt_mode_ms", default: 200.0, doc: "PROBE_RTT dwell (ms)" },
    ParamInfo { name: "probe_rtt_cwnd_gain", default: 0.5, doc: "PROBE_RTT cwnd = max(4, gain·BDP)" },
    ParamInfo { name: "min_rtt_win_sec", default: 10.0, doc: "min_rtt filter window (s)" },
    ParamInfo { name: "cwnd_min_target", default: 4.0, doc: "cwnd floor (packets)" },
    ParamInfo { name: "extra_acked_gain", default: 1.0, doc: "ACK-aggregation allowance gain (0 disables)" },
    ParamInfo { name: "ecn", default: 0.0, doc: "use shallow-threshold ECN signals (the route's TCP_ECN_LOW); needs ECN on the path" },
    ParamInfo { name: "ecn_alpha_gain", default: 16.0 / 256.0, doc: "EWMA gain of the CE ratio (1/16)" },
    ParamInfo { name: "ecn_factor", default: 85.0 / 256.0, doc: "ECN cut of inflight_lo: 1 − ecn_factor·alpha (256/3 = 85/256)" },
    ParamInfo { name: "ecn_thresh", default: 0.5, doc: "CE ratio above which inflight is too high" },
    ParamInfo { name: "seed", default: 0.0, doc: "RNG seed for the randomised probe timing (the engine sets the experiment seed)" },
    ParamInfo { name: "stream", default: 0.0, doc: "RNG stream (the engine sets the flow id)" },
];

#[derive(Clone, Debug)]
pub struct Bbr3Params {
    pub startup_pacing_gain: u32,
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub pacing_gain: [u32; 4],
    pub beta: u32,
    pub loss_thresh: u32,
    pub inflight_headroom: u32,
    pub full_loss_cnt: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub bw_probe_cwnd_gain: u32,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_us: u64,
    pub bw_probe_rand_us: u32,
    pub probe_rtt_win_ms: u64,
    pub probe_rtt_mode_ms: u64,
    pub probe_rtt_cwnd_gain: u32,
    pub min_rtt_win_sec: u64,
    pub cwnd_min_target: u32,
    pub tso_rtt_shift: u32,
    pub pacing_margin_percent: u32,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_max_us: u64,
    pub ecn: bool,
    pub ecn_alpha_gain: u32,
    pub ecn_alpha_init: u32,
    pub ecn_factor: u32,
    pub ecn_thresh: u32,
    pub ecn_reprobe_gain: u32,
    pub full_ecn_cnt: u32,
    pub seed: u64,
    pub stream: u64,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        let u = BBR_UNIT;
        Bbr3Params {
            startup_pacing_gain: u * 277 / 100 + 1,
            startup_cwnd_gain: u * 2,
            drain_gain: u * 1000 / 2885,
            cwnd_gain: u * 2,
            pacing_gain: [u * 5 / 4, u * 91 / 100, u, u],
            beta: u * 30 / 100,
            loss_thresh: u * 2 / 100,
            inflight_headroom: u * 15 / 100,
            full_loss_cnt: 6,
            full_bw_thresh: u * 5 / 4,
            full_bw_cnt: 3,
            bw_probe_cwnd_gain: 1,
            bw_probe_max_rounds: 63,
            bw_probe_rand_rounds: 2,
            bw_probe_base_us: 2_000_000,
            bw_probe_rand_us: 1_000_000,
            probe_rtt_win_ms: 5000,
            probe_rtt_mode_ms: 200,
            probe_rtt_cwnd_gain: u / 2,
            min_rtt_win_sec: 10,
            cwnd_min_target: 4,
            tso_rtt_shift: 9,
            pacing_margin_percent: 1,
            extra_acked_gain: u,
            extra_acked_win_rtts: 5,
            extra_acked_max_us: 100_000,
            ecn: false,
            ecn_alpha_gain: u / 16,
            ecn_alpha_init: u,
            ecn_factor: u / 3,
            ecn_thresh: u / 2,
            ecn_reprobe_gain: u / 2,
            full_ecn_cnt: 2,
            seed: 0,
            stream: 0,
        }
    }
}

impl Bbr3Params {
    pub fn from_params(p: &Params) -> Result<Self, String> {
        let d = Bbr3Params::default();
        let g = |k: &str, def: u32, lo: f64, hi: f64| -> Result<u32, String> {
            Ok((p.float(k, def as f64 / BBR_UNIT as f64, lo, hi)? * BBR_UNIT as f64).round() as u32)
        };
        let mut pacing_gain = d.pacing_gain;
        pacing_gain[UP] = g("pacing_gain_up", d.pacing_gain[UP], 1.0, 3.0)?;
        pacing_gain[DOWN] = g("pacing_gain_down", d.pacing_gain[DOWN], 0.0, 1.0)?;
        Ok(Bbr3Params {
            startup_pacing_gain: g("startup_pacing_gain", d.startup_pacing_gain, 1.0, 3.99)?,
            startup_cwnd_gain: g("startup_cwnd_gain", d.startup_cwnd_gain, 1.0, 3.99)?,
            drain_gain: g("drain_gain", d.drain_gain, 0.0, 1.0)?,
            cwnd_gain: g("cwnd_gain", d.cwnd_gain, 0.25, 3.99)?,
            pacing_gain,
            beta: g("beta", d.beta, 0.0, 1.0)?,
            loss_thresh: g("loss_thresh", d.loss_thresh, 0.0, 0.99)?,
            inflight_headroom: g("inflight_headroom", d.inflight_headroom, 0.0, 0.99)?,
            full_loss_cnt: p.int("full_loss_cnt", 6, 0, 15)? as u32,
            bw_probe_max_rounds: p.int("bw_probe_max_rounds", 63, 1, 255)? as u32,
            bw_probe_rand_rounds: p.int("bw_probe_rand_rounds", 2, 1, 255)? as u32,
            bw_probe_base_us: p.int("bw_probe_base_us", 2_000_000, 0, 1 << 32)? as u64,
            bw_probe_rand_us: p.int("bw_probe_rand_us", 1_000_000, 1, 1 << 31)? as u32,
            probe_rtt_win_ms: p.int("probe_rtt_win_ms", 5000, 1, 3_600_000)? as u64,
            probe_rtt_mode_ms: p.int("probe_rtt_mode_ms", 200, 0, 60_000)? as u64,
            probe_rtt_cwnd_gain: g("probe_rtt_cwnd_gain", d.probe_rtt_cwnd_gain, 0.0, 1.0)?,
            min_rtt_win_sec: p.int("min_rtt_win_sec", 10, 1, 3600)? as u64,
            cwnd_min_target: p.int("cwnd_min_target", 4, 1, 1000)? as u32,
            extra_acked_gain: g("extra_acked_gain", d.extra_acked_gain, 0.0, 3.99)?,
            ecn: p.bool("ecn", false)?,
            ecn_alpha_gain: g("ecn_alpha_gain", d.ecn_alpha_gain, 0.0, 1.0)?,
            ecn_factor: g("ecn_factor", d.ecn_factor, 0.0, 1.0)?,
            ecn_thresh: g("ecn_thresh", d.ecn_thresh, 0.0, 1.0)?,
            seed: p.u64("seed")?,
            stream: p.u64("stream")?,
            ..d
        })
    }
}

/// The parts of a rate sample (or of a lost packet's snapshot) that judge "inflight too high".
#[derive(Clone, Copy, Debug, Default)]
struct Signal {
    tx_in_flight: u32,
    lost: u64,
    is_app_limited: bool,
    delivered: i64,
    delivered_ce: i64,
}

/// Per-connection state (`struct bbr`, v3).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    pub p: Bbr3Params,
    rng: u64,
    mss: u32,
    pub mode: Mode,
    pub cycle_idx: usize,
    pub min_rtt_us: u32,
    pub min_rtt_stamp: u64,
    pub probe_rtt_min_us: u32,
    pub probe_rtt_min_stamp: u64,
    pub probe_rtt_done_stamp: u64,
    pub probe_rtt_round_done: bool,
    pub next_rtt_delivered: u64,
    pub rtt_cnt: u64,
    pub cycle_mstamp: u64,
    pub prev_ca_state: CaState,
    pub round_start: bool,
    pub idle_restart: bool,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub full_bw_reached: bool,
    pub full_bw_now: bool,
    pub full_bw: u64,
    pub full_bw_cnt: u32,
    pub has_seen_rtt: bool,
    pub prior_cwnd: u32,
    pub init_cwnd: u32,
    pub ack_epoch_mstamp: u64,
    pub extra_acked: [u32; 2],
    pub ack_epoch_acked: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_win_idx: usize,
    /// Max bw of the last two PROBE_BW cycles.
    pub bw_hi: [u64; 2],
    pub bw_lo: u64,
    pub inflight_hi: u32,
    pub inflight_lo: u32,
    pub bw_latest: u64,
    pub inflight_latest: u32,
    pub loss_round_delivered: u64,
    pub loss_round_start: bool,
    pub loss_in_round: bool,
    pub ecn_in_round: bool,
    pub loss_in_cycle: bool,
    pub ecn_in_cycle: bool,
    pub loss_events_in_round: u32,
    pub startup_ecn_rounds: u32,
    pub ecn_eligible: bool,
    pub ecn_alpha: u32,
    pub alpha_last_delivered: u64,
    pub alpha_last_delivered_ce: u64,
    pub bw_probe_up_cnt: u32,
    pub bw_probe_up_acks: u32,
    pub bw_probe_up_rounds: u32,
    pub probe_wait_us: u64,
    pub rounds_since_probe: u32,
    pub stopped_risky_probe: bool,
    pub prev_probe_too_high: bool,
    pub bw_probe_samples: bool,
    ack_phase: AckPhase,
    undo_bw_lo: u64,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
}

impl Bbr3 {
    pub fn new(p: Bbr3Params) -> Self {
        let rng = splitmix64_state(p.seed, p.stream, 0x4242_5233);
        Bbr3 {
            p,
            rng,
            mss: 1448,
            mode: Mode::Startup,
            cycle_idx: 0,
            min_rtt_us: UNSET,
            min_rtt_stamp: 0,
            probe_rtt_min_us: UNSET,
            probe_rtt_min_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            rtt_cnt: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            round_start: false,
            idle_restart: false,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0,
            full_bw_cnt: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            init_cwnd: 10,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            bw_hi: [0; 2],
            bw_lo: UNSET as u64,
            inflight_hi: UNSET,
            inflight_lo: UNSET,
            bw_latest: 0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            ecn_eligible: false,
            ecn_alpha: BBR_UNIT,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            probe_wait_us: 0,
            rounds_since_probe: 0,
            stopped_risky_probe: false,
            prev_probe_too_high: false,
            bw_probe_samples: false,
            ack_phase: AckPhase::Init,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Bbr3::new(Bbr3Params::from_params(p)?))
    }

    #[inline]
    fn jiffies(sk: &Sock) -> u64 {
        sk.now_ns / NS_PER_JIFFY
    }

    fn rand_below(&mut self, n: u32) -> u32 {
        let r = (splitmix64(&mut self.rng) >> 32) as u32;
        ((r as u64 * n as u64) >> 32) as u32
    }

    pub fn max_bw(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw`: the max filter bounded by the short-term lower bound.
    pub fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo)
    }

    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    fn rate_bytes_per_sec(&self, sk: &Sock, rate: u64, gain: u32, margin: u32) -> u64 {
        let mut r = rate as u128 * sk.mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - margin)) as u128;
        ((r >> BW_SCALE) as u64).max(1)
    }

    #[inline]
    fn sk_pacing_rate(sk: &Sock) -> u64 {
        (sk.pacing_rate_bps / 8.0) as u64
    }

    fn init_pacing_rate_from_rtt(&mut self, sk: &mut Sock) {
        let rtt_us = if sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            sk.srtt_us.max(1) as u64
        } else {
            1000
        };
        let bw = sk.cwnd as u64 * BW_UNIT / rtt_us;
        let r = self.rate_bytes_per_sec(sk, bw, self.p.startup_pacing_gain, self.p.pacing_margin_percent);
        sk.pacing_rate_bps = r as f64 * 8.0;
    }

    fn set_pacing_rate(&mut self, sk: &mut Sock, bw: u64, gain: u32) {
        let rate = self.rate_bytes_per_sec(sk, bw, gain, self.p.pacing_margin_percent);
        if !self.has_seen_rtt && sk.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(sk);
        }
        if self.full_bw_reached || rate > Self::sk_pacing_rate(sk) {
            sk.pacing_rate_bps = rate as f64 * 8.0;
        }
    }

    /// `bbr_tso_segs_goal` (v3): pacing-rate allowance plus a min_rtt-based one that halves
    /// every 512 µs of min_rtt.
    pub fn tso_segs_goal(&self, sk: &Sock) -> u32 {
        let mut bytes = Self::sk_pacing_rate(sk) >> sk.pacing_shift;
        if self.p.tso_rtt_shift > 0 {
            let r = self.min_rtt_us >> self.p.tso_rtt_shift;
            if r < 32 {
                bytes += GSO_MAX_SIZE >> r;
            }
        }
        let bytes = bytes.min(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
        ((bytes / sk.mss.max(1) as u64) as u32).max(TCP_MIN_TSO_SEGS)
    }

    fn save_cwnd(&mut self, sk: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = sk.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(sk.cwnd);
        }
    }

    pub fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == UNSET {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        ((((w * gain as u128) >> BBR_SCALE) + BW_UNIT as u128 - 1) / BW_UNIT as u128) as u32
    }

    /// `bbr_quantization_budget` (v3): at least 3 TSO bursts and cwnd_min_target; +2 in PROBE_UP.
    pub fn quantization_budget(&self, sk: &Sock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(sk)).max(self.p.cwnd_min_target);
        if self.mode == Mode::ProbeBw && self.cycle_idx == UP {
            cwnd += 2;
        }
        cwnd
    }

    pub fn inflight(&self, sk: &Sock, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(sk, self.bdp(bw, gain))
    }

    fn packets_in_net_at_edt(&self, sk: &Sock, inflight_now: u32) -> u32 {
        let edt_ns = sk.wstamp_ns.max(sk.now_ns);
        let interval_us = (edt_ns - sk.now_ns) / 1000;
        let delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(sk) as u64;
        }
        at_edt.saturating_sub(delivered) as u32
    }

    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.p.extra_acked_gain == 0 {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * self.p.extra_acked_max_us as u128 / BW_UNIT as u128) as u64;
        let aggr = (self.p.extra_acked_gain as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_probe_rtt_cwnd`: max(cwnd_min_target, 0.5·BDP).
    pub fn probe_rtt_cwnd(&self) -> u32 {
        self.p.cwnd_min_target.max(self.bdp(self.bw(), self.p.probe_rtt_cwnd_gain))
    }

    fn set_cwnd(&mut self, sk: &mut Sock, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = sk.cwnd;
        if acked > 0 {
            let target = self.quantization_budget(sk, self.bdp(bw, gain) + self.ack_aggregation_cwnd());
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd += acked;
            }
            cwnd = cwnd.max(self.p.cwnd_min_target);
        }
        sk.cwnd = cwnd.min(sk.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            sk.cwnd = sk.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    fn update_ack_aggregation(&mut self, sk: &Sock, rs: &RateSample) {
        if self.p.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            let thresh = if self.full_bw_reached { self.p.extra_acked_win_rtts } else { 1 };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = sk.delivered_mstamp_us.saturating_sub(self.ack_epoch_mstamp);
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked as u64 <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = sk.delivered_mstamp_us;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = ((self.ack_epoch_acked as u64 - expected).min(sk.cwnd as u64) as u32).min(u16::MAX as u32);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    fn check_probe_rtt_done(&mut self, sk: &mut Sock) {
        if !(self.probe_rtt_done_stamp != 0 && Self::jiffies(sk) > self.probe_rtt_done_stamp) {
            return;
        }
        self.probe_rtt_min_stamp = Self::jiffies(sk);
        sk.cwnd = sk.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(sk);
    }

    /// `bbr_update_min_rtt` (v3): a 5 s probe_rtt min schedules PROBE_RTT; a 10 s min_rtt.
    fn update_min_rtt(&mut self, sk: &mut Sock, rs: &RateSample) {
        let now_j = Self::jiffies(sk);
        let probe_rtt_expired = now_j > self.probe_rtt_min_stamp + self.p.probe_rtt_win_ms;
        if rs.rtt_us >= 0
            && (rs.rtt_us < self.probe_rtt_min_us as i64 || (probe_rtt_expired && !rs.is_ack_delayed))
        {
            self.probe_rtt_min_us = rs.rtt_us.min(UNSET as i64) as u32;
            self.probe_rtt_min_stamp = now_j;
        }
        let min_rtt_expired = now_j > self.min_rtt_stamp + self.p.min_rtt_win_sec * 1000;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.p.probe_rtt_mode_ms > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(sk);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = sk.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            let v = sk.delivered + sk.packets_in_flight() as u64;
            sk.app_limited = if v > 0 { v } else { 1 };
            if self.probe_rtt_done_stamp == 0 && sk.packets_in_flight() <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = now_j + self.p.probe_rtt_mode_ms;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = sk.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(sk);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        let (pg, cg) = match self.mode {
            Mode::Startup => (self.p.startup_pacing_gain, self.p.startup_cwnd_gain),
            Mode::Drain => (self.p.drain_gain, self.p.startup_cwnd_gain),
            Mode::ProbeBw => {
                let mut cg = self.p.cwnd_gain;
                if self.p.bw_probe_cwnd_gain > 0 && self.cycle_idx == UP {
                    cg += BBR_UNIT * self.p.bw_probe_cwnd_gain / 4;
                }
                (self.p.pacing_gain[self.cycle_idx], cg)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pg;
        self.cwnd_gain = cg;
    }

    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_target_inflight`: BDP, unless congestion cut cwnd.
    fn target_inflight(&self, sk: &Sock) -> u32 {
        self.inflight(sk, self.bw(), BBR_UNIT).min(sk.cwnd)
    }

    pub fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup || (self.mode == Mode::ProbeBw && (self.cycle_idx == REFILL || self.cycle_idx == UP))
    }

    fn has_elapsed_in_phase(&self, sk: &Sock, interval_us: u64) -> bool {
        sk.now_us as i64 - (self.cycle_mstamp + interval_us) as i64 > 0
    }

    fn handle_queue_too_high_in_startup(&mut self, sk: &Sock) {
        self.full_bw_reached = true;
        let bdp = self.inflight(sk, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_update_ecn_alpha`: EWMA of the CE ratio, once per round; −1 if not in use.
    fn update_ecn_alpha(&mut self, sk: &Sock) -> i64 {
        if !self.ecn_eligible && self.p.ecn && self.p.ecn_factor > 0 && self.min_rtt_us <= ECN_MAX_RTT_US {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return -1;
        }
        let delivered = sk.delivered.saturating_sub(self.alpha_last_delivered);
        let delivered_ce = sk.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return -1;
        }
        let ce_ratio = (delivered_ce << BBR_SCALE) / delivered;
        let gain = self.p.ecn_alpha_gain as u64;
        let alpha = ((BBR_UNIT as u64 - gain) * self.ecn_alpha as u64 >> BBR_SCALE) + (gain * ce_ratio >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u32;
        self.alpha_last_delivered = sk.delivered;
        self.alpha_last_delivered_ce = sk.delivered_ce;
        // bbr_check_ecn_too_high_in_startup
        if !self.full_bw_reached && self.p.full_ecn_cnt > 0 && self.p.ecn_thresh > 0 {
            if ce_ratio >= self.p.ecn_thresh as u64 {
                self.startup_ecn_rounds += 1;
            } else {
                self.startup_ecn_rounds = 0;
            }
            if self.startup_ecn_rounds >= self.p.full_ecn_cnt {
                self.handle_queue_too_high_in_startup(sk);
            }
        }
        ce_ratio as i64
    }

    fn raise_inflight_hi_slope(&mut self, sk: &Sock) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (sk.cwnd / growth_this_round).max(1);
    }

    fn probe_inflight_hi_upward(&mut self, sk: &Sock, rs: &RateSample) {
        if !sk.is_cwnd_limited_flag || sk.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(sk);
        }
    }

    /// `bbr_is_inflight_too_high`: loss > loss_thresh of the flight, or CE > ecn_thresh.
    fn is_inflight_too_high(&self, s: &Signal) -> bool {
        if s.lost > 0 && s.tx_in_flight > 0 {
            let thresh = (s.tx_in_flight as u64 * self.p.loss_thresh as u64) >> BBR_SCALE;
            if s.lost > thresh {
                return true;
            }
        }
        if s.delivered_ce > 0 && s.delivered > 0 && self.ecn_eligible && self.p.ecn_thresh > 0 {
            let thresh = (s.delivered as u64 * self.p.ecn_thresh as u64) >> BBR_SCALE;
            if s.delivered_ce as u64 > thresh {
                return true;
            }
        }
        false
    }

    /// `bbr_inflight_hi_from_lost_skb`: the inflight at which the loss rate crossed the threshold.
    fn inflight_hi_from_lost_skb(&self, s: &Signal) -> u32 {
        let inflight_prev = s.tx_in_flight as i64 - 1;
        let lost_prev = s.lost as i64 - 1;
        if inflight_prev < 0 || lost_prev < 0 {
            return UNSET;
        }
        let lt = self.p.loss_thresh as u64;
        let loss_budget = ((inflight_prev as u64 * lt + BBR_UNIT as u64 - 1) >> BBR_SCALE) as i64;
        let lost_prefix = if lost_prev >= loss_budget {
            0
        } else {
            (((loss_budget - lost_prev) as u64) << BBR_SCALE) / (BBR_UNIT as u64 - lt)
        };
        (inflight_prev as u64 + lost_prefix) as u32
    }

    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = ((self.inflight_hi as u64 * self.p.inflight_headroom as u64) >> BBR_SCALE).max(1) as u32;
        (self.inflight_hi.saturating_sub(headroom)).max(self.p.cwnd_min_target)
    }

    fn bound_cwnd_for_inflight_model(&self, sk: &mut Sock) {
        let mut cap = UNSET;
        if self.mode == Mode::ProbeBw && self.cycle_idx != CRUISE {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.cycle_idx == CRUISE) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(self.p.cwnd_min_target);
        sk.cwnd = sk.cwnd.min(cap);
    }

    fn init_lower_bounds(&mut self, sk: &Sock, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET as u64 {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = sk.cwnd;
        }
    }

    /// `bbr_adapt_lower_bounds`: once per round with loss/ECN while not probing, cut bw_lo and
    /// inflight_lo by beta (ECN: by alpha·ecn_factor), never below this round's delivery.
    fn adapt_lower_bounds(&mut self, sk: &Sock) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round && self.p.ecn_factor > 0 {
            self.init_lower_bounds(sk, false);
            let cut = BBR_UNIT as u64 - ((self.ecn_alpha as u64 * self.p.ecn_factor as u64) >> BBR_SCALE);
            ecn_inflight_lo = ((self.inflight_lo as u64 * cut) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(sk, true);
            let cut = (BBR_UNIT - self.p.beta) as u64;
            self.bw_lo = self.bw_latest.max((self.bw_lo * cut) >> BBR_SCALE);
            self.inflight_lo = self.inflight_latest.max(((self.inflight_lo as u64 * cut) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET as u64;
        self.inflight_lo = UNSET;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    fn update_latest_delivery_signals(&mut self, sk: &Sock, rs: &RateSample, sample_bw: u64) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = sk.delivered;
            self.loss_round_start = true;
        }
    }

    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    fn update_congestion_signals(&mut self, sk: &Sock, rs: &RateSample, sample_bw: u64) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(sk);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    fn is_reno_coexistence_probe_time(&self, sk: &Sock) -> bool {
        let rounds = self.p.bw_probe_max_rounds.min(self.target_inflight(sk));
        self.rounds_since_probe >= rounds
    }

    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rand_below(self.p.bw_probe_rand_rounds);
        self.probe_wait_us = self.p.bw_probe_base_us + self.rand_below(self.p.bw_probe_rand_us) as u64;
    }

    fn start_bw_probe_refill(&mut self, sk: &Sock, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = sk.delivered;
        self.cycle_idx = REFILL;
    }

    fn start_bw_probe_up(&mut self, sk: &Sock, sample_bw: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = sk.delivered;
        self.cycle_mstamp = sk.now_us;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.cycle_idx = UP;
        self.raise_inflight_hi_slope(sk);
    }

    fn start_bw_probe_down(&mut self, sk: &Sock) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_mstamp = sk.now_us;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = sk.delivered;
        self.cycle_idx = DOWN;
    }

    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.cycle_idx = CRUISE;
    }

    /// `bbr_handle_inflight_too_high`: cut inflight_hi (once per probe) and stop probing.
    fn handle_inflight_too_high(&mut self, sk: &Sock, s: &Signal) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !s.is_app_limited {
            let floor = ((self.target_inflight(sk) as u64 * (BBR_UNIT - self.p.beta) as u64) >> BBR_SCALE) as u32;
            self.inflight_hi = s.tx_in_flight.max(floor);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == UP {
            self.start_bw_probe_down(sk);
        }
    }

    fn adapt_upper_bounds(&mut self, sk: &Sock, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(sk, 0);
                return true;
            }
        }
        let s = Signal {
            tx_in_flight: rs.tx_in_flight,
            lost: rs.lost,
            is_app_limited: rs.is_app_limited,
            delivered: rs.delivered,
            delivered_ce: rs.delivered_ce,
        };
        if self.is_inflight_too_high(&s) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(sk, &s);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == UP {
                self.probe_inflight_hi_upward(sk, rs);
            }
        }
        false
    }

    fn check_time_to_probe_bw(&mut self, sk: &Sock) -> bool {
        if self.p.ecn_reprobe_gain > 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && sk.ca_state == CaState::Open
        {
            let v = ((self.inflight_hi as u64 * self.p.ecn_reprobe_gain as u64) >> BBR_SCALE).max(1);
            let n = 63 - v.leading_zeros();
            self.start_bw_probe_refill(sk, n);
            return true;
        }
        if self.has_elapsed_in_phase(sk, self.probe_wait_us) || self.is_reno_coexistence_probe_time(sk) {
            self.start_bw_probe_refill(sk, 0);
            return true;
        }
        false
    }

    fn check_time_to_cruise(&self, sk: &Sock, inflight: u32, bw: u64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(sk, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase`: the PROBE_BW DOWN → CRUISE → REFILL → UP → DOWN machine.
    fn update_cycle_phase(&mut self, sk: &Sock, rs: &RateSample, sample_bw: u64) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(sk, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(sk, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            CRUISE => {
                self.check_time_to_probe_bw(sk);
            }
            REFILL => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(sk, sample_bw);
                }
            }
            UP => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if sk.is_cwnd_limited_flag && sk.cwnd >= self.inflight_hi {
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(sk);
                }
            }
            _ => {
                // DOWN
                if self.check_time_to_probe_bw(sk) {
                    return;
                }
                if self.check_time_to_cruise(sk, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    fn exit_probe_rtt(&mut self, sk: &Sock) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(sk);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn check_loss_too_high_in_startup(&mut self, sk: &Sock, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        let s = Signal {
            tx_in_flight: rs.tx_in_flight,
            lost: rs.lost,
            is_app_limited: rs.is_app_limited,
            delivered: rs.delivered,
            delivered_ce: rs.delivered_ce,
        };
        if self.p.full_loss_cnt > 0
            && self.loss_round_start
            && sk.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.p.full_loss_cnt
            && self.is_inflight_too_high(&s)
        {
            self.handle_queue_too_high_in_startup(sk);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * self.p.full_bw_thresh as u128 >> BBR_SCALE) as u64;
        if sample_bw >= thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= self.p.full_bw_cnt;
        self.full_bw_reached |= self.full_bw_now;
    }

    fn check_drain(&mut self, sk: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            sk.ssthresh = self.inflight(sk, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(sk, sk.packets_in_flight()) <= self.inflight(sk, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(sk);
        }
    }

    /// `bbr_note_loss`.
    fn note_loss(&mut self, sk: &Sock) {
        if !self.loss_in_round {
            self.loss_round_delivered = sk.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn init(&mut self, sk: &mut Sock) {
        self.mss = sk.mss;
        self.init_cwnd = sk.cwnd.min(0x7f);
        self.prior_cwnd = sk.prior_cwnd;
        sk.ssthresh = super::TCP_INFINITE_SSTHRESH;
        self.next_rtt_delivered = sk.delivered;
        self.prev_ca_state = CaState::Open;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.probe_rtt_min_us = sk.min_rtt_us;
        self.probe_rtt_min_stamp = Self::jiffies(sk);
        self.min_rtt_us = sk.min_rtt_us;
        self.min_rtt_stamp = Self::jiffies(sk);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(sk);
        self.mode = Mode::Startup;
        self.cycle_idx = 0;
        self.ack_epoch_mstamp = sk.now_us;
        self.loss_round_delivered = sk.delivered + 1;
        self.reset_congestion_signals();
        self.bw_lo = UNSET as u64;
        self.bw_hi = [0; 2];
        self.inflight_lo = UNSET;
        self.inflight_hi = UNSET;
        self.reset_full_bw();
        self.ecn_alpha = self.p.ecn_alpha_init;
        self.update_gains();
        if sk.pacing_status == PacingStatus::None {
            sk.pacing_status = PacingStatus::Needed;
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.save_cwnd(sk);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        sk.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_sndbuf_expand`: room for 3 × the window (BBR's cwnd gain and its probing).
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    /// `bbr_main` (v3).
    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) -> bool {
        self.mss = sk.mss;
        // bbr_update_round_start
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = sk.delivered;
            self.round_start = true;
            self.rtt_cnt += 1;
        }
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(sk);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.delivered_ce > 0;
        let sample_bw = if rs.interval_us > 0 && rs.delivered >= 0 {
            (rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64)
        } else {
            0
        };
        self.update_latest_delivery_signals(sk, rs, sample_bw);
        // bbr_update_model
        self.update_congestion_signals(sk, rs, sample_bw);
        self.update_ack_aggregation(sk, rs);
        self.check_loss_too_high_in_startup(sk, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(sk);
        self.update_cycle_phase(sk, rs, sample_bw);
        self.update_min_rtt(sk, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(sk, bw, self.pacing_gain);
        self.set_cwnd(sk, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(sk);
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = sk.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        true
    }

    /// `bbr_skb_marked_lost`: while probing, find the inflight where loss crossed 2 %.
    fn skb_marked_lost(&mut self, sk: &mut Sock, skb: &LostSkb) {
        self.note_loss(sk);
        if !self.bw_probe_samples || !skb.tx_valid {
            return;
        }
        let mut s = Signal {
            tx_in_flight: skb.tx_in_flight,
            lost: sk.lost - skb.tx_lost,
            is_app_limited: skb.is_app_limited,
            ..Default::default()
        };
        if self.is_inflight_too_high(&s) {
            s.tx_in_flight = self.inflight_hi_from_lost_skb(&s);
            self.handle_inflight_too_high(sk, &s);
        }
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
                self.inflight_lo = sk.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            sk.cwnd = sk.cwnd.max(self.prior_cwnd);
        }
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::TxStart && sk.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = sk.now_us;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(sk, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(sk);
            }
        }
    }

    fn undo_cwnd(&mut self, _sk: &mut Sock) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let bps = |bw: u64| bw as f64 * self.mss as f64 * 8e6 / BW_UNIT as f64;
        let opt = |v: u32| if v == UNSET { -1.0 } else { v as f64 };
        out.push(("mode", self.mode as u8 as f64));
        out.push(("phase", self.cycle_idx as f64));
        out.push(("btl_bw", bps(self.bw())));
        out.push(("bw_hi", bps(self.max_bw())));
        out.push(("bw_lo", if self.bw_lo == UNSET as u64 { -1.0 } else { bps(self.bw_lo) }));
        out.push(("inflight_hi", opt(self.inflight_hi)));
        out.push(("inflight_lo", opt(self.inflight_lo)));
        out.push(("min_rtt_us", if self.min_rtt_us == UNSET { 0.0 } else { self.min_rtt_us as f64 }));
        out.push(("pacing_gain", self.pacing_gain as f64 / BBR_UNIT as f64));
        out.push(("cwnd_gain", self.cwnd_gain as f64 / BBR_UNIT as f64));
        out.push(("round", self.rtt_cnt as f64));
        out.push(("full_bw_reached", self.full_bw_reached as u8 as f64));
        out.push(("ecn_alpha", self.ecn_alpha as f64 / BBR_UNIT as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "bbr3",
    description: "BBRv3: BBR with loss/ECN-bounded probing (inflight_hi/inflight_lo, bw_lo), PROBE_BW DOWN/CRUISE/REFILL/UP, 2 % loss threshold, ECN alpha, PROBE_RTT every 5 s at 0.5·BDP",
    source: "Linux v3 tree github.com/google/bbr (branch v3) net/ipv4/tcp_bbr.c; draft-ietf-ccwg-bbr",
    params: PARAMS,
    make: |p| Ok(Box::new(Bbr3::from_params(p)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 packet/ms in BW units.
    const BW_1PPMS: u64 = (1 << 24) / 1000;

    fn set_time(sk: &mut Sock, us: u64) {
        sk.now_us = us;
        sk.now_ns = us * 1000;
        sk.wstamp_ns = sk.now_ns;
    }

    /// PROBE_BW at `phase`, bw = 1 packet/ms, min_rtt 40 ms ⇒ BDP 40 packets.
    fn probe_bw(phase: usize) -> (Bbr3, Sock) {
        let mut sk = Sock::new(1448, 10);
        set_time(&mut sk, 0);
        sk.srtt_us = 40_000;
        sk.min_rtt_us = 40_000;
        let mut b = Bbr3::new(Bbr3Params::default());
        b.init(&mut sk);
        b.bw_hi = [BW_1PPMS, 0];
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = phase;
        b.update_gains();
        sk.pacing_rate_bps = 1_433_501.0 * 8.0;
        sk.cwnd = 200;
        (b, sk)
    }

    #[test]
    fn kernel_constants() {
        let p = Bbr3Params::default();
        assert_eq!(p.startup_pacing_gain, 710);
        assert_eq!(p.pacing_gain, [320, 232, 256, 256]);
        assert_eq!((p.beta, p.loss_thresh, p.inflight_headroom), (76, 5, 38));
        assert_eq!((p.ecn_alpha_gain, p.ecn_factor, p.ecn_thresh), (16, 85, 128));
        assert_eq!(p.probe_rtt_cwnd_gain, 128);
    }

    #[test]
    fn inflight_hi_cut_when_a_probe_flight_loses_more_than_2_percent() {
        let (mut b, mut sk) = probe_bw(UP);
        b.bw_probe_samples = true;
        b.inflight_hi = 300;
        // Flight of 200 sent while probing; 4 losses (2 %) against a threshold of
        // 200·5/256 = 3.9 ⇒ 3: too high.
        sk.lost = 4;
        b.skb_marked_lost(&mut sk, &LostSkb { tx_in_flight: 200, tx_lost: 0, is_app_limited: false, tx_valid: true });
        // inflight_hi_from_lost_skb: inflight_prev 199, lost_prev 3, budget ceil(199·5/256) = 4
        // ⇒ lost_prefix = (4 − 3)·256/(256 − 5) = 1 ⇒ 200; floor 0.7·target_inflight is smaller.
        assert_eq!(b.inflight_hi, 200);
        assert!(b.prev_probe_too_high && !b.bw_probe_samples);
        assert_eq!(b.cycle_idx, DOWN); // probing stops at once
        // 3 losses of 200 (1.5 %) is not too high.
        let (mut b, mut sk) = probe_bw(UP);
        b.bw_probe_samples = true;
        b.inflight_hi = 300;
        sk.lost = 3;
        b.skb_marked_lost(&mut sk, &LostSkb { tx_in_flight: 200, tx_lost: 0, is_app_limited: false, tx_valid: true });
        assert_eq!((b.inflight_hi, b.cycle_idx), (300, UP));
        assert!(b.loss_in_round);
        // The same judgement from an ACK's rate sample (rs.lost over rs.tx_in_flight).
        let rs = RateSample { tx_in_flight: 100, lost: 3, delivered: 10, interval_us: 40_000, acked_sacked: 1, rtt_us: -1, ..Default::default() };
        let (mut b, sk) = probe_bw(UP);
        b.bw_probe_samples = true;
        b.inflight_hi = 300;
        b.adapt_upper_bounds(&sk, &rs);
        // max(tx_in_flight 100, 0.7·min(inflight(bw, 1) = 40 + 2, cwnd)) = 100.
        assert_eq!(b.inflight_hi, 100);
        assert_eq!(b.cycle_idx, DOWN);
    }

    #[test]
    fn lossy_round_cuts_lower_bounds_by_beta_when_not_probing() {
        let (mut b, mut sk) = probe_bw(CRUISE);
        b.inflight_hi = 100;
        b.loss_round_delivered = 0;
        sk.cwnd = 80;
        sk.delivered = 1000;
        // A loss inside the round, then the ACK that ends the loss round.
        let rs = RateSample { prior_delivered: 0, delivered: 30, interval_us: 40_000, acked_sacked: 1, losses: 1, rtt_us: -1, prior_in_flight: 30, ..Default::default() };
        b.cong_control(&mut sk, &rs);
        // bw_lo = max(bw_latest, 0.7·max_bw); inflight_lo = max(inflight_latest 30, 0.7·cwnd 80 = 56).
        let sample = (30 * BW_UNIT).div_ceil(40_000);
        assert_eq!(b.bw_lo, sample.max(BW_1PPMS * 180 / 256));
        assert_eq!(b.inflight_lo, 56);
        assert!(sk.cwnd <= 56);
        // While probing (REFILL/UP) the lower bounds are not adapted.
        let (mut b, mut sk) = probe_bw(UP);
        b.loss_round_delivered = 0;
        b.cong_control(&mut sk, &rs);
        assert_eq!((b.bw_lo, b.inflight_lo), (UNSET as u64, UNSET));
    }

    #[test]
    fn probe_rtt_every_5s_at_half_bdp() {
        let (mut b, mut sk) = probe_bw(CRUISE);
        b.probe_rtt_min_stamp = 0;
        b.min_rtt_stamp = 0;
        b.inflight_hi = 1000;
        sk.cwnd = 84;
        sk.packets_out = 84;
        let ack = |b: &mut Bbr3, sk: &mut Sock, us: u64, rtt: i64| {
            set_time(sk, us);
            sk.delivered_mstamp_us = us;
            sk.delivered += 1;
            let rs = RateSample { prior_delivered: 0, delivered: 30, interval_us: 40_000, acked_sacked: 1, rtt_us: rtt, prior_in_flight: sk.packets_in_flight(), ..Default::default() };
            b.cong_control(sk, &rs);
        };
        ack(&mut b, &mut sk, 4_999_000, 45_000);
        assert_eq!(b.mode, Mode::ProbeBw);
        ack(&mut b, &mut sk, 5_001_000, 45_000);
        assert_eq!(b.mode, Mode::ProbeRtt);
        // cwnd = max(4, bdp(bw, 0.5)) = 20 (min_rtt is still 40 ms: its 10 s window holds).
        assert_eq!(b.min_rtt_us, 40_000);
        assert_eq!(b.probe_rtt_cwnd(), 20);
        assert_eq!(sk.cwnd, 20);
    }

    #[test]
    fn probe_bw_cycle_down_cruise_refill_up() {
        let (mut b, mut sk) = probe_bw(DOWN);
        b.start_bw_probe_down(&sk);
        assert!(b.probe_wait_us >= 2_000_000 && b.probe_wait_us < 3_000_000);
        b.rounds_since_probe = 0;
        // DOWN → CRUISE once inflight ≤ inflight(bw, 1) = 40 (no inflight_hi yet).
        let rs = RateSample { delivered: 1, interval_us: 40_000, acked_sacked: 1, rtt_us: -1, prior_in_flight: 41, ..Default::default() };
        b.update_cycle_phase(&sk, &rs, 0);
        assert_eq!(b.cycle_idx, DOWN);
        let rs40 = RateSample { prior_in_flight: 40, ..rs };
        b.update_cycle_phase(&sk, &rs40, 0);
        assert_eq!(b.cycle_idx, CRUISE);
        // CRUISE → REFILL after the probe wait (or min(63, target inflight) rounds).
        set_time(&mut sk, b.probe_wait_us + 1);
        b.update_cycle_phase(&sk, &rs40, 0);
        assert_eq!(b.cycle_idx, REFILL);
        assert_eq!(b.bw_lo, UNSET as u64);
        // REFILL → UP after one round.
        b.round_start = true;
        b.update_cycle_phase(&sk, &rs40, 0);
        assert_eq!(b.cycle_idx, UP);
        assert!(b.bw_probe_samples);
    }
}
