//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016)
//! as in Linux net/ipv4/tcp_bbr.c, the 5.4–6.x form, and the shallow-buffer variant `bbr-shallow`
//! (cwnd_gain 1.5 in PROBE_BW: S. Claypool et al., "Sharing but not Caring: Performance of TCP
//! BBR and TCP CUBIC at the Network Bottleneck", AICT 2019, whose `tcp_bbrshallow.c` is a 4.19
//! `tcp_bbr.c` with that one constant changed).
//!
//! Kernel version followed: **5.4–6.x** `tcp_bbr.c` — the version with EDT-aware inflight
//! (`bbr_packets_in_net_at_edt`, 4.20+), the 1 % pacing margin (4.20+), `is_ack_delayed` in the
//! min_rtt filter (4.19+), ACK-aggregation provisioning (`extra_acked`, 5.1+) and the
//! `bbr_bdp`/`bbr_quantization_budget`/`bbr_inflight` split (5.1+). The older behaviours are
//! parameters: `edt = false`, `pacing_margin_percent = 0`, `extra_acked_gain = 0` give the
//! 4.19 module; additionally `ack_delayed_filter = false` gives 4.9–4.17 (modulo the `+2`
//! quantization term, whose kernel version is not verified).
//!
//! Units are the kernel's: gains ×256 (`BBR_UNIT`), bandwidth in packets/µs ×2^24 (`BW_UNIT`),
//! cwnd in packets, `min_rtt_us` in µs, `min_rtt_stamp`/`probe_rtt_done_stamp` in jiffies
//! (HZ = 1000, i.e. ms), pacing rate in bytes/s (exported to the endpoint as bit/s).
//!
//! Known differences from the kernel:
//! * `prandom_u32_max(bbr_cycle_rand)` (random PROBE_BW start phase) draws from a splitmix64
//!   generator seeded by the parameters `seed`/`stream` (the engine fills them with the
//!   experiment seed and the flow id), so runs are reproducible.
//! * `tso_segs_goal` takes `MAX_TCP_HEADER` = 320 bytes (x86-64 build); it only matters above
//!   ≈ 530 Mbit/s where the 64 KB GSO cap binds.
//! * `sk_max_pacing_rate` is unlimited (no `SO_MAX_PACING_RATE`).

use super::rng::{splitmix64, splitmix64_state};
use super::{
    CaEvent, CaState, CongestionControl, Minmax, PacingStatus, ParamInfo, Params, RateSample,
    SchemeInfo, Sock,
};

/// `BBR_SCALE` / `BBR_UNIT`: gains are fixed point ×256.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// `BW_SCALE` / `BW_UNIT`: bandwidth is packets/µs ×2^24.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `CYCLE_LEN`: phases of the PROBE_BW pacing-gain cycle.
pub const CYCLE_LEN: usize = 8;
/// `TCP_INIT_CWND` (include/net/tcp.h): cwnd cap without an RTT sample; slow-start floor.
const TCP_INIT_CWND: u32 = 10;
/// `GSO_MAX_SIZE` (bytes) and `MAX_TCP_HEADER` (bytes, x86-64: L1_CACHE_ALIGN(128 + MAX_HEADER)).
const GSO_MAX_SIZE: u64 = 65536;
const MAX_TCP_HEADER: u64 = 320;
/// Jiffies per second (HZ = 1000): the kernel keeps min_rtt_stamp and the PROBE_RTT deadline in jiffies.
const NS_PER_JIFFY: u64 = 1_000_000;
/// `bbr_ack_epoch_acked_reset_thresh`: restart the ACK-aggregation epoch beyond this count.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;

/// BBR modes (`enum bbr_mode`); the numeric value is exported as `mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup = 0,
    /// Drain any queue created during STARTUP.
    Drain = 1,
    /// Discover and share bandwidth: pace around the estimate with the gain cycle.
    ProbeBw = 2,
    /// Cut inflight to the minimum to re-measure min_rtt.
    ProbeRtt = 3,
}

macro_rules! bbr_params {
    ($cwnd_gain:expr) => {
        &[
            ParamInfo { name: "high_gain", default: 739.0 / 256.0, doc: "STARTUP pacing and cwnd gain, DRAIN cwnd gain (kernel 256·2885/1000 + 1 = 739/256 ≈ 2.885 = 2/ln 2)" },
            ParamInfo { name: "drain_gain", default: 88.0 / 256.0, doc: "DRAIN pacing gain (kernel 256·1000/2885 = 88/256 ≈ 1/2.885)" },
            ParamInfo { name: "cwnd_gain", default: $cwnd_gain, doc: "PROBE_BW cwnd gain: cwnd = cwnd_gain·BDP + extras (2.0; 1.5 in bbr-shallow, Claypool et al. AICT 2019)" },
            ParamInfo { name: "pacing_gain_up", default: 1.25, doc: "PROBE_BW probing phase gain (cycle index 0)" },
            ParamInfo { name: "pacing_gain_down", default: 0.75, doc: "PROBE_BW draining phase gain (cycle index 1); the other 6 phases cruise at 1.0" },
            ParamInfo { name: "cycle_rand", default: 7.0, doc: "PROBE_BW starts at a random phase among this many (never the draining phase)" },
            ParamInfo { name: "bw_rtts", default: 10.0, doc: "max-bandwidth filter window, packet-timed rounds (CYCLE_LEN + 2)" },
            ParamInfo { name: "min_rtt_win_sec", default: 10.0, doc: "min_rtt filter window (s); its expiry triggers PROBE_RTT" },
            ParamInfo { name: "probe_rtt_mode_ms", default: 200.0, doc: "minimum PROBE_RTT dwell at cwnd_min_target (ms); 0 disables PROBE_RTT" },
            ParamInfo { name: "cwnd_min_target", default: 4.0, doc: "PROBE_RTT cwnd cap and global cwnd floor (packets)" },
            ParamInfo { name: "min_tso_rate", default: 1_200_000.0, doc: "pacing rate (bit/s) below which min_tso_segs = 1 (else 2)" },
            ParamInfo { name: "pacing_margin_percent", default: 1.0, doc: "pace this many percent below the estimate (4.20+; 0 = 4.9–4.19)" },
            ParamInfo { name: "full_bw_thresh", default: 1.25, doc: "STARTUP: bw still growing if max_bw ≥ full_bw_thresh·full_bw" },
            ParamInfo { name: "full_bw_cnt", default: 3.0, doc: "rounds without such growth before the pipe is estimated full" },
            ParamInfo { name: "lt_bw", default: 1.0, doc: "long-term bandwidth (token-bucket policer) detection and use" },
            ParamInfo { name: "lt_intvl_min_rtts", default: 4.0, doc: "minimum rounds of an LT sampling interval (maximum is 4×)" },
            ParamInfo { name: "lt_loss_thresh", default: 50.0, doc: "LT interval is lossy if lost/delivered ≥ lt_loss_thresh/256 (≈ 20 %)" },
            ParamInfo { name: "lt_bw_max_rtts", default: 48.0, doc: "rounds to use the LT (policed) bandwidth before re-probing" },
            ParamInfo { name: "extra_acked_gain", default: 1.0, doc: "ACK-aggregation cwnd allowance gain (5.1+; 0 disables, as 4.9–4.19)" },
            ParamInfo { name: "extra_acked_win_rtts", default: 5.0, doc: "rounds per extra_acked max-filter bucket (two buckets ⇒ 5–10 rounds)" },
            ParamInfo { name: "extra_acked_max_us", default: 100_000.0, doc: "cap of the aggregation allowance: bw × this many µs" },
            ParamInfo { name: "edt", default: 1.0, doc: "discount packets the pacer will have delivered by the EDT of the next skb (4.20+; 0 = use in_flight)" },
            ParamInfo { name: "ack_delayed_filter", default: 1.0, doc: "on min_rtt expiry ignore samples from likely-delayed ACKs (4.19+)" },
            ParamInfo { name: "seed", default: 0.0, doc: "RNG seed for the random PROBE_BW start phase (the engine sets the experiment seed)" },
            ParamInfo { name: "stream", default: 0.0, doc: "RNG stream (the engine sets the flow id)" },
        ]
    };
}

/// Parameters of `bbr` (kernel names without the `bbr_` prefix; gains as real numbers, stored ×256).
pub static PARAMS: &[ParamInfo] = bbr_params!(2.0);
/// Parameters of `bbr-shallow`: identical except the cwnd_gain default 1.5.
pub static SHALLOW_PARAMS: &[ParamInfo] = bbr_params!(1.5);

/// Resolved parameters (gains in BBR_UNIT).
#[derive(Clone, Debug)]
pub struct BbrParams {
    pub high_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub pacing_gain: [u32; CYCLE_LEN],
    pub cycle_rand: u32,
    pub bw_rtts: u32,
    pub min_rtt_win_sec: u32,
    pub probe_rtt_mode_ms: u32,
    pub cwnd_min_target: u32,
    /// bit/s.
    pub min_tso_rate: u64,
    pub pacing_margin_percent: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub lt_bw: bool,
    pub lt_intvl_min_rtts: u32,
    pub lt_loss_thresh: u32,
    /// `bbr_lt_bw_ratio` = BBR_UNIT/8 and `bbr_lt_bw_diff` = 4000/8 bytes/s.
    pub lt_bw_ratio: u32,
    pub lt_bw_diff: u64,
    pub lt_bw_max_rtts: u32,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_max_us: u64,
    pub edt: bool,
    pub ack_delayed_filter: bool,
    pub seed: u64,
    pub stream: u64,
}

impl BbrParams {
    /// The kernel's constants with the given PROBE_BW cwnd gain (×256).
    pub fn with_cwnd_gain(cwnd_gain: u32) -> Self {
        let u = BBR_UNIT;
        BbrParams {
            high_gain: u * 2885 / 1000 + 1,
            drain_gain: u * 1000 / 2885,
            cwnd_gain,
            pacing_gain: [u * 5 / 4, u * 3 / 4, u, u, u, u, u, u],
            cycle_rand: 7,
            bw_rtts: CYCLE_LEN as u32 + 2,
            min_rtt_win_sec: 10,
            probe_rtt_mode_ms: 200,
            cwnd_min_target: 4,
            min_tso_rate: 1_200_000,
            pacing_margin_percent: 1,
            full_bw_thresh: u * 5 / 4,
            full_bw_cnt: 3,
            lt_bw: true,
            lt_intvl_min_rtts: 4,
            lt_loss_thresh: 50,
            lt_bw_ratio: u / 8,
            lt_bw_diff: 4000 / 8,
            lt_bw_max_rtts: 48,
            extra_acked_gain: u,
            extra_acked_win_rtts: 5,
            extra_acked_max_us: 100_000,
            edt: true,
            ack_delayed_filter: true,
            seed: 0,
            stream: 0,
        }
    }

    /// Parse from the experiment parameters; `default_cwnd_gain` ×256 (512 bbr, 384 bbr-shallow).
    pub fn from_params(p: &Params, default_cwnd_gain: u32) -> Result<Self, String> {
        let d = BbrParams::with_cwnd_gain(default_cwnd_gain);
        let gain = |k: &str, def: u32, lo: f64, hi: f64| -> Result<u32, String> {
            let x = p.float(k, def as f64 / BBR_UNIT as f64, lo, hi)?;
            Ok((x * BBR_UNIT as f64).round() as u32)
        };
        let up = gain("pacing_gain_up", d.pacing_gain[0], 1.0, 3.0)?;
        let down = gain("pacing_gain_down", d.pacing_gain[1], 0.0, 1.0)?;
        let mut pacing_gain = d.pacing_gain;
        pacing_gain[0] = up;
        pacing_gain[1] = down;
        Ok(BbrParams {
            high_gain: gain("high_gain", d.high_gain, 1.0, 3.99)?,
            drain_gain: gain("drain_gain", d.drain_gain, 0.0, 1.0)?,
            cwnd_gain: gain("cwnd_gain", d.cwnd_gain, 0.25, 3.99)?,
            pacing_gain,
            cycle_rand: p.int("cycle_rand", 7, 1, 7)? as u32,
            bw_rtts: p.int("bw_rtts", d.bw_rtts as i64, 1, 1000)? as u32,
            min_rtt_win_sec: p.int("min_rtt_win_sec", 10, 1, 3600)? as u32,
            probe_rtt_mode_ms: p.int("probe_rtt_mode_ms", 200, 0, 60_000)? as u32,
            cwnd_min_target: p.int("cwnd_min_target", 4, 1, 1000)? as u32,
            min_tso_rate: p.int("min_tso_rate", 1_200_000, 0, 1 << 40)? as u64,
            pacing_margin_percent: p.int("pacing_margin_percent", 1, 0, 99)? as u32,
            full_bw_thresh: gain("full_bw_thresh", d.full_bw_thresh, 1.0, 3.99)?,
            full_bw_cnt: p.int("full_bw_cnt", 3, 1, 3)? as u32,
            lt_bw: p.bool("lt_bw", true)?,
            lt_intvl_min_rtts: p.int("lt_intvl_min_rtts", 4, 1, 31)? as u32,
            lt_loss_thresh: p.int("lt_loss_thresh", 50, 1, 256)? as u32,
            lt_bw_ratio: d.lt_bw_ratio,
            lt_bw_diff: d.lt_bw_diff,
            lt_bw_max_rtts: p.int("lt_bw_max_rtts", 48, 1, 127)? as u32,
            extra_acked_gain: gain("extra_acked_gain", d.extra_acked_gain, 0.0, 3.99)?,
            extra_acked_win_rtts: p.int("extra_acked_win_rtts", 5, 1, 31)? as u32,
            extra_acked_max_us: p.int("extra_acked_max_us", 100_000, 0, 10_000_000)? as u64,
            edt: p.bool("edt", true)?,
            ack_delayed_filter: p.bool("ack_delayed_filter", true)?,
            seed: p.u64("seed")?,
            stream: p.u64("stream")?,
        })
    }
}

/// Per-connection state (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    name: &'static str,
    pub p: BbrParams,
    rng: u64,
    /// `mss_cache` at the last hook call (for the bit/s export in `sample`).
    mss: u32,
    pub mode: Mode,
    /// Min RTT in the min_rtt_win_sec window (µs); u32::MAX = none.
    pub min_rtt_us: u32,
    /// Jiffies of min_rtt_us.
    pub min_rtt_stamp: u64,
    /// End time (jiffies) of PROBE_RTT; 0 = not yet at the cwnd floor.
    pub probe_rtt_done_stamp: u64,
    /// Max recent delivery rate, packets/µs ×2^24, windowed over `bw_rtts` rounds.
    pub bw: Minmax,
    /// Packet-timed rounds elapsed.
    pub rtt_cnt: u64,
    /// `tp->delivered` at the end of the current round.
    pub next_rtt_delivered: u64,
    /// Start (µs) of the current gain-cycle phase.
    pub cycle_mstamp: u64,
    pub prev_ca_state: CaState,
    pub packet_conservation: bool,
    pub round_start: bool,
    pub idle_restart: bool,
    pub probe_rtt_round_done: bool,
    pub lt_is_sampling: bool,
    pub lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    /// LT estimated delivery rate, packets/µs ×2^24.
    pub lt_bw: u64,
    pub lt_last_delivered: u64,
    /// LT interval start, ms (`tp->delivered_mstamp` / 1000).
    pub lt_last_stamp: u64,
    pub lt_last_lost: u64,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub full_bw_reached: bool,
    pub full_bw_cnt: u32,
    pub cycle_idx: usize,
    pub has_seen_rtt: bool,
    /// Last known good cwnd, restored after recovery and PROBE_RTT.
    pub prior_cwnd: u32,
    /// Recent bw, to estimate if the pipe is full.
    pub full_bw: u64,
    pub ack_epoch_mstamp: u64,
    pub extra_acked: [u32; 2],
    pub ack_epoch_acked: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_win_idx: usize,
}

impl Bbr {
    pub fn new(name: &'static str, p: BbrParams) -> Self {
        let rng = splitmix64_state(p.seed, p.stream, 0x4242_4252_5631);
        Bbr {
            name,
            p,
            rng,
            mss: 1448,
            mode: Mode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: Minmax::new(0, 0),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Bbr::new("bbr", BbrParams::from_params(p, 2 * BBR_UNIT)?))
    }

    pub fn shallow_from_params(p: &Params) -> Result<Self, String> {
        Ok(Bbr::new("bbr-shallow", BbrParams::from_params(p, BBR_UNIT * 3 / 2)?))
    }

    #[inline]
    fn jiffies(sk: &Sock) -> u64 {
        sk.now_ns / NS_PER_JIFFY
    }

    /// `prandom_u32_max(n)`: uniform in [0, n).
    fn rand_below(&mut self, n: u32) -> u32 {
        let r = (splitmix64(&mut self.rng) >> 32) as u32;
        ((r as u64 * n as u64) >> 32) as u32
    }

    /// Windowed max recent bandwidth (`bbr_max_bw`), packets/µs ×2^24.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// Estimated path bandwidth (`bbr_bw`): the LT (policed) rate while it is in use.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_extra_acked`: max extra ACKed over the last 5–10 rounds.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: rate·mss·gain (with the pacing margin) in bytes/s; the
    /// multiplication order is the kernel's (u64 there; u128 here, identical unless it overflows).
    pub fn rate_bytes_per_sec(&self, sk: &Sock, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * sk.mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - self.p.pacing_margin_percent)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// `bbr_bw_to_pacing_rate` (bytes/s; no sk_max_pacing_rate cap).
    fn bw_to_pacing_rate(&self, sk: &Sock, bw: u64, gain: u32) -> u64 {
        self.rate_bytes_per_sec(sk, bw, gain)
    }

    /// Current `sk_pacing_rate` in bytes/s.
    #[inline]
    fn sk_pacing_rate(sk: &Sock) -> u64 {
        (sk.pacing_rate_bps / 8.0) as u64
    }

    #[inline]
    fn set_sk_pacing_rate(sk: &mut Sock, bytes_per_sec: u64) {
        sk.pacing_rate_bps = bytes_per_sec as f64 * 8.0;
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / srtt (1 ms without a sample).
    fn init_pacing_rate_from_rtt(&mut self, sk: &mut Sock) {
        let rtt_us = if sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            sk.srtt_us.max(1) as u64
        } else {
            1000
        };
        let bw = sk.cwnd as u64 * BW_UNIT / rtt_us;
        let r = self.bw_to_pacing_rate(sk, bw, self.p.high_gain);
        Self::set_sk_pacing_rate(sk, r);
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is estimated full.
    fn set_pacing_rate(&mut self, sk: &mut Sock, bw: u64, gain: u32) {
        let rate = self.bw_to_pacing_rate(sk, bw, gain);
        if !self.has_seen_rtt && sk.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(sk);
        }
        if self.full_bw_reached || rate > Self::sk_pacing_rate(sk) {
            Self::set_sk_pacing_rate(sk, rate);
        }
    }

    /// `bbr_min_tso_segs`: 1 below `min_tso_rate` (bit/s) of pacing, else 2.
    pub fn min_tso_segs(&self, sk: &Sock) -> u32 {
        if Self::sk_pacing_rate(sk) < (self.p.min_tso_rate >> 3) {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: ≈ 1 ms (`>> sk_pacing_shift`) of data at the pacing rate, capped by
    /// the GSO size, in [min_tso_segs, 127] segments — computed even though the simulator has no TSO.
    pub fn tso_segs_goal(&self, sk: &Sock) -> u32 {
        let bytes = (Self::sk_pacing_rate(sk) >> sk.pacing_shift).min(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
        let segs = ((bytes / sk.mss.max(1) as u64) as u32).max(self.min_tso_segs(sk));
        segs.min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, sk: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = sk.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(sk.cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw·min_rtt·gain), TCP_INIT_CWND without an RTT sample.
    pub fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        ((((w * gain as u128) >> BBR_SCALE) + BW_UNIT as u128 - 1) / BW_UNIT as u128) as u32
    }

    /// `bbr_quantization_budget`: + 3·tso_segs_goal, round up to even, + 2 in the 1.25 phase.
    pub fn quantization_budget(&self, sk: &Sock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(sk);
        cwnd = (cwnd + 1) & !1u32;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, sk: &Sock, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(sk, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight minus what the pacer delivers before the next EDT.
    pub fn packets_in_net_at_edt(&self, sk: &Sock, inflight_now: u32) -> u32 {
        if !self.p.edt {
            return inflight_now;
        }
        let now_ns = sk.now_ns;
        let edt_ns = sk.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1000;
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(sk) as u64; // the skb departing at EDT
        }
        if interval_delivered >= inflight_at_edt {
            0
        } else {
            (inflight_at_edt - interval_delivered) as u32
        }
    }

    /// `bbr_ack_aggregation_cwnd`.
    pub fn ack_aggregation_cwnd(&self) -> u32 {
        if self.p.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * self.p.extra_acked_max_us as u128 / BW_UNIT as u128) as u64;
        let aggr = (self.p.extra_acked_gain as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// Target cwnd of `bbr_set_cwnd` for the given bw and gain.
    pub fn target_cwnd(&self, sk: &Sock, bw: u64, gain: u32) -> u32 {
        let t = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
        self.quantization_budget(sk, t)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: returns the new cwnd and whether packet
    /// conservation is in force.
    fn set_cwnd_to_recover_or_restore(&mut self, sk: &Sock, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev_state = self.prev_ca_state;
        let state = sk.ca_state;
        let mut cwnd = sk.cwnd;
        // An ACK for P packets releases at most 2·P: deduct the losses, then slow-start to target.
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of Recovery: packet conservation; the round starts now.
            self.packet_conservation = true;
            self.next_rtt_delivered = sk.delivered;
            cwnd = sk.packets_in_flight() + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery: restore the cwnd saved on entry.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(sk.packets_in_flight() + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, sk: &mut Sock, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = sk.cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(sk, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.target_cwnd(sk, bw, gain);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || sk.delivered < TCP_INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(self.p.cwnd_min_target);
            }
        }
        sk.cwnd = cwnd.min(sk.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            sk.cwnd = sk.cwnd.min(self.p.cwnd_min_target);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    pub fn is_next_cycle_phase(&self, sk: &Sock, rs: &RateSample) -> bool {
        let is_full_length =
            sk.delivered_mstamp_us.saturating_sub(self.cycle_mstamp) > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(sk, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probe until inflight reaches pacing_gain·BDP; give up on loss (shallow buffer).
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(sk, bw, self.pacing_gain));
        }
        // Drain phase: stop early once the queue we added is estimated gone.
        is_full_length || inflight <= self.inflight(sk, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, sk: &Sock) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = sk.delivered_mstamp_us;
    }

    fn update_cycle_phase(&mut self, sk: &Sock, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(sk, rs) {
            self.advance_cycle_phase(sk);
        }
    }

    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: start the cycle at a random phase other than the 0.75 phase.
    fn reset_probe_bw_mode(&mut self, sk: &Sock) {
        self.mode = Mode::ProbeBw;
        let r = self.rand_below(self.p.cycle_rand) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase(sk);
    }

    fn reset_mode(&mut self, sk: &Sock) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(sk);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, sk: &Sock) {
        self.lt_last_stamp = sk.delivered_mstamp_us / 1000;
        self.lt_last_delivered = sk.delivered;
        self.lt_last_lost = sk.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, sk: &Sock) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals ⇒ policed; use their average.
    fn lt_bw_interval_done(&mut self, sk: &Sock, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= self.p.lt_bw_ratio as u64 * self.lt_bw
                || self.rate_bytes_per_sec(sk, diff, BBR_UNIT) <= self.p.lt_bw_diff
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// `bbr_lt_bw_sampling` (token-bucket policer detection).
    fn lt_bw_sampling(&mut self, sk: &Sock, rs: &RateSample) {
        if !self.p.lt_bw {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= self.p.lt_bw_max_rtts {
                    self.reset_lt_bw_sampling(sk);
                    self.reset_probe_bw_mode(sk);
                }
            }
            return;
        }
        // Start sampling at the first loss (the policer's tokens are then exhausted).
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(sk);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < self.p.lt_intvl_min_rtts {
            return;
        }
        if self.lt_rtt_cnt > 4 * self.p.lt_intvl_min_rtts {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        // End the interval on a loss.
        if rs.losses == 0 {
            return;
        }
        let lost = sk.lost - self.lt_last_lost;
        let delivered = sk.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < self.p.lt_loss_thresh as u64 * delivered {
            return;
        }
        let t = (sk.delivered_mstamp_us / 1000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return;
        }
        if t as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        let bw = delivered * BW_UNIT / (t as u64 * 1000);
        self.lt_bw_interval_done(sk, bw);
    }

    /// `bbr_update_bw`: packet-timed rounds and the windowed max-bandwidth filter.
    fn update_bw(&mut self, sk: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = sk.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(sk, rs);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        // App-limited samples only count if they raise the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(self.p.bw_rtts as u64, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: max excess of ACKed data over bw·epoch, two buckets.
    fn update_ack_aggregation(&mut self, sk: &Sock, rs: &RateSample) {
        if self.p.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= self.p.extra_acked_win_rtts {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = sk.delivered_mstamp_us.saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked as u64 <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = sk.delivered_mstamp_us;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked as u64 - expected_acked).min(sk.cwnd as u64) as u32;
        // The kernel keeps extra_acked in u16 slots; extra ≤ cwnd fits for any realistic cwnd.
        let extra = extra.min(u16::MAX as u32);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`: 3 non-app-limited rounds with < 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * self.p.full_bw_thresh as u128 >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.p.full_bw_cnt;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, sk: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            sk.ssthresh = self.inflight(sk, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(sk, sk.packets_in_flight()) <= self.inflight(sk, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(sk);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, sk: &mut Sock) {
        if !(self.probe_rtt_done_stamp != 0 && Self::jiffies(sk) > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = Self::jiffies(sk);
        sk.cwnd = sk.cwnd.max(self.prior_cwnd);
        self.reset_mode(sk);
    }

    /// `bbr_update_min_rtt`: 10 s min filter; PROBE_RTT on expiry.
    fn update_min_rtt(&mut self, sk: &mut Sock, rs: &RateSample) {
        let now_j = Self::jiffies(sk);
        let expired = now_j > self.min_rtt_stamp + self.p.min_rtt_win_sec as u64 * 1000;
        let delayed = self.p.ack_delayed_filter && rs.is_ack_delayed;
        if rs.rtt_us >= 0 && (rs.rtt_us <= self.min_rtt_us as i64 || (expired && !delayed)) {
            self.min_rtt_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.min_rtt_stamp = now_j;
        }
        if self.p.probe_rtt_mode_ms > 0 && expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(sk);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            let v = sk.delivered + sk.packets_in_flight() as u64;
            sk.app_limited = if v > 0 { v } else { 1 };
            if self.probe_rtt_done_stamp == 0 && sk.packets_in_flight() <= self.p.cwnd_min_target {
                self.probe_rtt_done_stamp = now_j + self.p.probe_rtt_mode_ms as u64;
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

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (pg, cg) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            Mode::Drain => (self.p.drain_gain, self.p.high_gain),
            Mode::ProbeBw => {
                let pg = if self.lt_use_bw { BBR_UNIT } else { self.p.pacing_gain[self.cycle_idx] };
                (pg, self.p.cwnd_gain)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pg;
        self.cwnd_gain = cg;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, sk: &mut Sock, rs: &RateSample) {
        self.update_bw(sk, rs);
        self.update_ack_aggregation(sk, rs);
        self.update_cycle_phase(sk, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(sk);
        self.update_min_rtt(sk, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        self.name
    }

    /// `bbr_init`.
    fn init(&mut self, sk: &mut Sock) {
        self.mss = sk.mss;
        self.prior_cwnd = 0;
        sk.ssthresh = super::TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = sk.min_rtt_us;
        self.min_rtt_stamp = Self::jiffies(sk);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(sk);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(sk);
        self.reset_startup_mode();
        // The kernel leaves pacing_gain/cwnd_gain to the first ACK; set them for the traces.
        self.update_gains();
        self.ack_epoch_mstamp = sk.now_us;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        if sk.pacing_status == PacingStatus::None {
            sk.pacing_status = PacingStatus::Needed;
        }
    }

    /// `bbr_ssthresh`: save cwnd for recovery exit; no reduction.
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.save_cwnd(sk);
        sk.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_sndbuf_expand`: room for 3 × the window (BBR's cwnd gain and its probing).
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    /// `bbr_main`.
    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) -> bool {
        self.mss = sk.mss;
        self.update_model(sk, rs);
        let bw = self.bw();
        self.set_pacing_rate(sk, bw, self.pacing_gain);
        self.set_cwnd(sk, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    /// `bbr_set_state`: an RTO ends the round and feeds LT sampling with one loss.
    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample { losses: 1, ..Default::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(sk, &rs);
        }
    }

    /// `bbr_cwnd_event`: restart from idle while app-limited.
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

    /// `bbr_undo_cwnd`: spurious slow-down; reset full-pipe detection and LT sampling.
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(sk);
        sk.cwnd
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("mode", self.mode as u8 as f64));
        // bbr_get_info: bw·mss·10^6 >> 24 bytes/s, here in bit/s.
        out.push(("btl_bw", self.bw() as f64 * self.mss as f64 * 8e6 / BW_UNIT as f64));
        out.push(("min_rtt_us", if self.min_rtt_us == u32::MAX { 0.0 } else { self.min_rtt_us as f64 }));
        out.push(("pacing_gain", self.pacing_gain as f64 / BBR_UNIT as f64));
        out.push(("cwnd_gain", self.cwnd_gain as f64 / BBR_UNIT as f64));
        out.push(("round", self.rtt_cnt as f64));
        out.push(("full_bw_reached", self.full_bw_reached as u8 as f64));
        out.push(("lt_use_bw", self.lt_use_bw as u8 as f64));
        out.push(("cycle_idx", self.cycle_idx as f64));
        out.push(("extra_acked", self.extra_acked() as f64));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "bbr",
        description: "BBR v1: model-based (windowed max bandwidth × min RTT), STARTUP/DRAIN/PROBE_BW/PROBE_RTT, gain-cycled pacing, cwnd = 2·BDP + TSO/even/probe extras + ACK-aggregation allowance, policer (long-term bw) detection",
        source: "Linux net/ipv4/tcp_bbr.c (5.4–6.x; 4.19/4.9 via parameters); Cardwell et al., ACM Queue 14(5) 2016",
        params: PARAMS,
        make: |p| Ok(Box::new(Bbr::from_params(p)?)),
    },
    SchemeInfo {
        name: "bbr-shallow",
        description: "BBR v1 with PROBE_BW cwnd_gain 1.5 (BBR_Shallow): everything else as bbr",
        source: "S. Claypool et al., Sharing but not Caring: Performance of TCP BBR and TCP CUBIC at the Network Bottleneck, AICT 2019; their tcp_bbrshallow.c (4.19 tcp_bbr.c with one constant changed)",
        params: SHALLOW_PARAMS,
        make: |p| Ok(Box::new(Bbr::shallow_from_params(p)?)),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    /// 1 packet/ms in BW units: floor(2^24 / 1000).
    const BW_1PPMS: u64 = (1 << 24) / 1000;
    /// Pacing rate (bytes/s) of BW_1PPMS at gain 1 with the 1 % margin:
    /// 16777·1448·256 >> 8 · 990000 >> 24 = 1 433 501.
    const RATE_1PPMS: u64 = 1_433_501;

    fn sk_at_us(us: u64) -> Sock {
        let mut s = Sock::new(MSS, 10);
        set_time(&mut s, us);
        s.srtt_us = 40_000;
        s.min_rtt_us = 40_000;
        s
    }

    fn set_time(sk: &mut Sock, us: u64) {
        sk.now_us = us;
        sk.now_ns = us * 1000;
        sk.wstamp_ns = sk.wstamp_ns.max(sk.now_ns);
    }

    fn bbr() -> Bbr {
        Bbr::new("bbr", BbrParams::with_cwnd_gain(2 * BBR_UNIT))
    }

    /// BBR in PROBE_BW at phase `idx` with bw = 1 packet/ms, min_rtt = 40 ms, paced at 1.0·bw.
    fn probe_bw(idx: usize) -> (Bbr, Sock) {
        let mut sk = sk_at_us(0);
        let mut b = bbr();
        b.init(&mut sk);
        b.min_rtt_us = 40_000;
        b.bw.reset(0, BW_1PPMS);
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = idx;
        b.update_gains();
        sk.pacing_rate_bps = (RATE_1PPMS * 8) as f64;
        (b, sk)
    }

    fn rs(prior_delivered: u64, delivered: i64, interval_us: i64, acked: u32) -> RateSample {
        RateSample { prior_delivered, delivered, interval_us, acked_sacked: acked, rtt_us: -1, ..Default::default() }
    }

    #[test]
    fn kernel_constants() {
        let p = BbrParams::with_cwnd_gain(2 * BBR_UNIT);
        assert_eq!(p.high_gain, 739);
        assert_eq!(p.drain_gain, 88);
        assert_eq!(p.pacing_gain, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!(p.full_bw_thresh, 320);
        assert_eq!((p.lt_bw_ratio, p.lt_bw_diff), (32, 500));
        // Parsed defaults reproduce the kernel's integers exactly; bbr-shallow differs in cwnd_gain only.
        let b = make_named("bbr", serde_json::Value::Null);
        let s = make_named("bbr-shallow", serde_json::Value::Null);
        assert_eq!((b.p.high_gain, b.p.drain_gain, b.p.cwnd_gain), (739, 88, 512));
        assert_eq!((s.p.high_gain, s.p.drain_gain, s.p.cwnd_gain), (739, 88, 384));
        let v = make_named("bbr", serde_json::json!({"cwnd_gain": 1.5, "pacing_gain_up": 1.5, "lt_bw": false}));
        assert_eq!((v.p.cwnd_gain, v.p.pacing_gain[0], v.p.lt_bw), (384, 384, false));
    }

    fn make_named(name: &'static str, v: serde_json::Value) -> Bbr {
        let p = Params { scheme: name, obj: v.as_object() };
        if name == "bbr" {
            Bbr::from_params(&p).unwrap()
        } else {
            Bbr::shallow_from_params(&p).unwrap()
        }
    }

    #[test]
    fn cwnd_target_with_kernel_extras_hand_computed() {
        let (mut b, mut sk) = probe_bw(2);
        // bdp(2.0) = ceil(16777·40000·512/256 / 2^24) = ceil(79.9995) = 80.
        assert_eq!(b.bdp(BW_1PPMS, 512), 80);
        assert_eq!(b.bdp(BW_1PPMS, 320), 50);
        assert_eq!(b.bdp(BW_1PPMS, 384), 60);
        // tso_segs_goal: 1 433 501 >> 10 = 1399 B < 1 MSS ⇒ floor min_tso_segs = 2 ⇒ +6.
        assert_eq!(b.tso_segs_goal(&sk), 2);
        assert_eq!(b.quantization_budget(&sk, 80), 86);
        assert_eq!(b.quantization_budget(&sk, 81), 88); // 87 rounded up to even
        assert_eq!(b.target_cwnd(&sk, BW_1PPMS, 512), 86);
        // The 1.25 phase adds 2.
        b.cycle_idx = 0;
        assert_eq!(b.target_cwnd(&sk, BW_1PPMS, 512), 88);
        b.mode = Mode::Startup; // +2 only in PROBE_BW
        assert_eq!(b.target_cwnd(&sk, BW_1PPMS, 512), 86);
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 2;
        // 80 Mbit/s pacing: 10^7 >> 10 = 9765 B = 6 segments ⇒ +18 ⇒ 98.
        sk.pacing_rate_bps = 8e7;
        assert_eq!(b.tso_segs_goal(&sk), 6);
        assert_eq!(b.quantization_budget(&sk, 80), 98);
        // Below 1.2 Mbit/s min_tso_segs = 1 ⇒ +3 ⇒ 83 ⇒ 84.
        sk.pacing_rate_bps = 1_000_000.0;
        assert_eq!(b.tso_segs_goal(&sk), 1);
        assert_eq!(b.quantization_budget(&sk, 80), 84);
        // 1 Gbit/s: min(122070, 65536 − 1 − 320) / 1448 = 45 segments ⇒ +135.
        sk.pacing_rate_bps = 1e9;
        assert_eq!(b.tso_segs_goal(&sk), 45);
        // ACK aggregation: max of the two buckets, capped by bw·100 ms = 99 packets.
        sk.pacing_rate_bps = (RATE_1PPMS * 8) as f64;
        b.extra_acked = [10, 3];
        assert_eq!(b.ack_aggregation_cwnd(), 10);
        assert_eq!(b.target_cwnd(&sk, BW_1PPMS, 512), 96); // 80 + 10 + 6
        b.extra_acked = [3, 500];
        assert_eq!(b.ack_aggregation_cwnd(), 99);
        b.full_bw_reached = false; // only after the pipe is full
        assert_eq!(b.ack_aggregation_cwnd(), 0);
        b.full_bw_reached = true;
        b.extra_acked = [0, 0];

        // set_cwnd: grow by acked up to the target, snap down to it once the pipe is full.
        sk.delivered = 1000;
        sk.cwnd = 50;
        b.set_cwnd(&mut sk, &rs(0, 5, 40_000, 5), 5, BW_1PPMS, 512);
        assert_eq!(sk.cwnd, 55);
        sk.cwnd = 200;
        b.set_cwnd(&mut sk, &rs(0, 5, 40_000, 5), 5, BW_1PPMS, 512);
        assert_eq!(sk.cwnd, 86);
        // Before the pipe is full cwnd is never cut; it grows only while below target.
        b.full_bw_reached = false;
        sk.cwnd = 200;
        b.set_cwnd(&mut sk, &rs(0, 5, 40_000, 5), 5, BW_1PPMS, 512);
        assert_eq!(sk.cwnd, 200);
        sk.cwnd = 7;
        b.set_cwnd(&mut sk, &rs(0, 1, 40_000, 1), 1, BW_1PPMS, 512);
        assert_eq!(sk.cwnd, 8);
        // Floor cwnd_min_target = 4 after any growth step.
        b.full_bw_reached = true;
        sk.cwnd = 1;
        b.set_cwnd(&mut sk, &rs(0, 1, 40_000, 1), 1, 0, 512);
        assert_eq!(sk.cwnd, 4);
        // PROBE_RTT caps at 4.
        b.mode = Mode::ProbeRtt;
        sk.cwnd = 60;
        b.set_cwnd(&mut sk, &rs(0, 1, 40_000, 1), 1, BW_1PPMS, 256);
        assert_eq!(sk.cwnd, 4);
        // No RTT sample: bdp = TCP_INIT_CWND.
        b.min_rtt_us = u32::MAX;
        assert_eq!(b.bdp(BW_1PPMS, 512), 10);
    }

    #[test]
    fn gain_cycle_phase_advance_rules() {
        // Gain 1.25: at least min_rtt long AND (a loss OR inflight at EDT ≥ inflight(bw, 1.25)).
        // inflight(bw, 1.25) = 50 + 6 + 2 = 58; in_net_at_edt adds the EDT skb (tso goal 2).
        let (b, mut sk) = probe_bw(0);
        assert_eq!(b.pacing_gain, 320);
        assert_eq!(b.inflight(&sk, BW_1PPMS, 320), 58);
        let mut r = rs(0, 1, 40_000, 1);
        r.prior_in_flight = 70;
        sk.delivered_mstamp_us = 40_000; // not > min_rtt yet
        assert!(!b.is_next_cycle_phase(&sk, &r));
        r.losses = 1;
        assert!(!b.is_next_cycle_phase(&sk, &r));
        sk.delivered_mstamp_us = 40_001;
        r.losses = 0;
        r.prior_in_flight = 55;
        assert!(!b.is_next_cycle_phase(&sk, &r));
        r.prior_in_flight = 56;
        assert!(b.is_next_cycle_phase(&sk, &r));
        r.prior_in_flight = 10;
        r.losses = 2;
        assert!(b.is_next_cycle_phase(&sk, &r));
        // EDT: 2 ms of pacing still scheduled ⇒ bw·2000 µs = 1 packet leaves first ⇒ 56 + 2 − 1 < 58.
        r.losses = 0;
        r.prior_in_flight = 56;
        sk.wstamp_ns = sk.now_ns + 2_000_000;
        assert!(!b.is_next_cycle_phase(&sk, &r));
        r.prior_in_flight = 57;
        assert!(b.is_next_cycle_phase(&sk, &r));

        // Gain 0.75: after min_rtt OR as soon as inflight ≤ inflight(bw, 1.0) = 40 + 6 = 46.
        let (b, mut sk) = probe_bw(1);
        assert_eq!(b.pacing_gain, 192);
        sk.delivered_mstamp_us = 10_000;
        r.prior_in_flight = 47;
        assert!(!b.is_next_cycle_phase(&sk, &r));
        r.prior_in_flight = 46;
        assert!(b.is_next_cycle_phase(&sk, &r));
        r.prior_in_flight = 80;
        sk.delivered_mstamp_us = 40_001;
        assert!(b.is_next_cycle_phase(&sk, &r));

        // Gain 1.0: wall clock only.
        let (mut b, mut sk) = probe_bw(7);
        r.prior_in_flight = 0;
        r.losses = 5;
        sk.delivered_mstamp_us = 40_000;
        assert!(!b.is_next_cycle_phase(&sk, &r));
        sk.delivered_mstamp_us = 40_001;
        assert!(b.is_next_cycle_phase(&sk, &r));
        // Advancing wraps 7 → 0 and restarts the phase clock at delivered_mstamp.
        b.update_cycle_phase(&sk, &r);
        assert_eq!((b.cycle_idx, b.cycle_mstamp), (0, 40_001));

        // The random start phase is never the 0.75 phase (index 1); all others occur.
        let mut seen = [0u32; CYCLE_LEN];
        for seed in 0..400u64 {
            let mut p = BbrParams::with_cwnd_gain(512);
            p.seed = seed;
            let mut b = Bbr::new("bbr", p);
            b.reset_probe_bw_mode(&sk);
            seen[b.cycle_idx] += 1;
        }
        assert_eq!(seen[1], 0);
        assert!(seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 20), "{:?}", seen);
    }

    /// One ACK closing a round: prior_delivered = the round's start, `d` packets over 40 ms.
    fn round_ack(b: &mut Bbr, sk: &mut Sock, d: u64, app_limited: bool) {
        let start = sk.delivered;
        sk.delivered += d;
        let t = sk.now_us + 40_000;
        set_time(sk, t);
        sk.delivered_mstamp_us = t;
        let mut r = rs(start.max(b.next_rtt_delivered), d as i64, 40_000, d as u32);
        r.is_app_limited = app_limited;
        r.rtt_us = 40_000;
        b.cong_control(sk, &r);
    }

    #[test]
    fn bandwidth_filter_and_round_counting() {
        let mut sk = sk_at_us(0);
        let mut b = bbr();
        b.init(&mut sk);
        // Round 1 delivers 40 packets in 40 ms (1/ms); later rounds 20 (0.5/ms).
        round_ack(&mut b, &mut sk, 40, false);
        assert_eq!((b.rtt_cnt, b.round_start), (1, true));
        assert_eq!(b.max_bw(), 40 * BW_UNIT / 40_000);
        // An ACK whose packet was sent before the round's end does not start a round.
        let r = rs(0, 1, 40_000, 1);
        b.cong_control(&mut sk, &r);
        assert_eq!((b.rtt_cnt, b.round_start), (1, false));
        for round in 2..=11 {
            round_ack(&mut b, &mut sk, 20, false);
            assert_eq!(b.rtt_cnt, round);
            assert_eq!(b.max_bw(), 40 * BW_UNIT / 40_000, "round {}", round);
        }
        // 10-round window: the round-1 sample expires at round 12.
        round_ack(&mut b, &mut sk, 20, false);
        assert_eq!(b.rtt_cnt, 12);
        assert_eq!(b.max_bw(), 20 * BW_UNIT / 40_000);
        // App-limited samples count only if they raise the estimate.
        round_ack(&mut b, &mut sk, 10, true);
        assert_eq!(b.max_bw(), 20 * BW_UNIT / 40_000);
        round_ack(&mut b, &mut sk, 30, true);
        assert_eq!(b.max_bw(), 30 * BW_UNIT / 40_000);
        // Invalid samples are ignored entirely (no round either).
        let before = b.rtt_cnt;
        b.cong_control(&mut sk, &rs(u64::MAX, -1, -1, 0));
        assert_eq!(b.rtt_cnt, before);
        // btl_bw export in bit/s: 30 packets per 40 ms of 1448 B.
        let mut out = Vec::new();
        b.sample(&mut out);
        let btl = out.iter().find(|(k, _)| *k == "btl_bw").unwrap().1;
        assert!((btl - 30.0 * 1448.0 * 8.0 / 0.040).abs() / btl < 1e-4, "{}", btl);
    }

    #[test]
    fn full_pipe_after_three_rounds_below_25_percent_growth_then_drain() {
        let mut sk = sk_at_us(0);
        let mut b = bbr();
        b.init(&mut sk);
        assert_eq!(b.mode, Mode::Startup);
        round_ack(&mut b, &mut sk, 40, false); // full_bw = 40
        round_ack(&mut b, &mut sk, 49, false); // +22.5 %: not growth
        assert_eq!(b.full_bw_cnt, 1);
        round_ack(&mut b, &mut sk, 50, false); // 50 ≥ 1.25·40: growth, reset
        assert_eq!((b.full_bw_cnt, b.full_bw), (0, 50 * BW_UNIT / 40_000));
        round_ack(&mut b, &mut sk, 55, false);
        round_ack(&mut b, &mut sk, 55, true); // app-limited rounds do not count
        assert_eq!(b.full_bw_cnt, 1);
        round_ack(&mut b, &mut sk, 55, false);
        assert!(!b.full_bw_reached);
        assert_eq!(b.mode, Mode::Startup);
        // Third round without growth: pipe full ⇒ DRAIN, ssthresh = inflight(bw, 1).
        sk.packets_out = 200; // a big STARTUP queue still in flight
        round_ack(&mut b, &mut sk, 55, false);
        assert!(b.full_bw_reached);
        assert_eq!(b.mode, Mode::Drain);
        let bw = 55 * BW_UNIT / 40_000;
        // inflight(bw, 1) at the STARTUP pacing rate (2.885·55/40 ms·1448·0.99 = 5.69 MB/s ⇒
        // tso_segs_goal 3): 55 + 9 = 64.
        assert_eq!(sk.ssthresh, 64);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (88, 739));
        // Drained once inflight ≤ inflight(bw, 1.0): PROBE_BW.
        sk.packets_out = b.inflight(&sk, bw, BBR_UNIT) + 1;
        round_ack(&mut b, &mut sk, 10, false);
        assert_eq!(b.mode, Mode::Drain);
        sk.packets_out -= 1;
        round_ack(&mut b, &mut sk, 10, false);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_ne!(b.cycle_idx, 1);
        assert_eq!(b.cwnd_gain, 512);
    }

    #[test]
    fn probe_rtt_after_10s_without_new_min_for_200ms_at_cwnd_4() {
        let (mut b, mut sk) = probe_bw(2);
        b.min_rtt_stamp = 0;
        sk.cwnd = 86;
        sk.packets_out = 86;
        sk.delivered = 100_000;
        b.next_rtt_delivered = sk.delivered;
        let ack_at = |b: &mut Bbr, sk: &mut Sock, us: u64, rtt: i64, new_round: bool| {
            set_time(sk, us);
            sk.delivered_mstamp_us = us;
            let prior = if new_round { b.next_rtt_delivered } else { 0 };
            sk.delivered += 1;
            let mut r = rs(prior, 40, 40_000, 1);
            r.rtt_us = rtt;
            r.prior_in_flight = sk.packets_in_flight();
            b.cong_control(sk, &r);
        };
        // Larger RTT samples for 10 s do not refresh the 40 ms min; a sample ≤ min does.
        ack_at(&mut b, &mut sk, 5_000_000, 40_000, false);
        assert_eq!(b.min_rtt_stamp, 5_000);
        for k in 1..=100u64 {
            ack_at(&mut b, &mut sk, 5_000_000 + k * 100_000, 45_000, false);
            assert_eq!(b.mode, Mode::ProbeBw, "t = {} ms", 5_000 + k * 100);
        }
        assert_eq!(b.min_rtt_us, 40_000);
        // First ACK after the 10 s window expired: PROBE_RTT, the (larger) sample replaces min_rtt.
        let prior_cwnd = sk.cwnd;
        ack_at(&mut b, &mut sk, 15_000_001 + 1000, 45_000, false);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(b.min_rtt_us, 45_000);
        assert_eq!(b.prior_cwnd, prior_cwnd);
        assert_eq!(sk.cwnd, 4);
        assert_ne!(sk.app_limited, 0); // samples in PROBE_RTT are app-limited
        assert_eq!(b.probe_rtt_done_stamp, 0); // inflight still 86 > 4
        // Inflight drains to 4: the 200 ms dwell starts and a new round begins now.
        sk.packets_out = 4;
        let t0 = 15_100_000;
        ack_at(&mut b, &mut sk, t0, 41_000, false);
        assert_eq!(b.probe_rtt_done_stamp, t0 / 1000 + 200);
        assert_eq!(b.next_rtt_delivered, sk.delivered);
        // A round completes but 200 ms have not elapsed: stay.
        ack_at(&mut b, &mut sk, t0 + 50_000, 41_000, true);
        assert!(b.probe_rtt_round_done);
        ack_at(&mut b, &mut sk, t0 + 200_000, 41_000, false);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(sk.cwnd, 4);
        // After 200 ms (jiffies strictly after the deadline): restore cwnd, back to PROBE_BW.
        ack_at(&mut b, &mut sk, t0 + 201_000, 41_000, false);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert!(sk.cwnd >= prior_cwnd.min(b.target_cwnd(&sk, b.bw(), 512)));
        assert_eq!(b.min_rtt_stamp, (t0 + 201_000) / 1000);
        assert_eq!(b.min_rtt_us, 41_000);
    }

    #[test]
    fn probe_rtt_needs_a_full_round_at_the_floor() {
        let (mut b, mut sk) = probe_bw(2);
        b.mode = Mode::ProbeRtt;
        b.prior_cwnd = 80;
        b.probe_rtt_done_stamp = 1000;
        b.probe_rtt_round_done = false;
        b.next_rtt_delivered = 500;
        sk.delivered = 400;
        sk.packets_out = 4;
        set_time(&mut sk, 1_500_000);
        let r = RateSample { prior_delivered: 10, delivered: 1, interval_us: 40_000, acked_sacked: 1, rtt_us: 40_000, ..Default::default() };
        b.cong_control(&mut sk, &r);
        assert_eq!(b.mode, Mode::ProbeRtt); // 500 ms past the deadline but no round yet
        let r = RateSample { prior_delivered: 500, ..r };
        b.cong_control(&mut sk, &r);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_eq!(sk.cwnd, 81); // restored to 80, then + acked (target 86 or 88)
    }

    #[test]
    fn long_term_bw_detects_a_policer_from_two_consistent_lossy_intervals() {
        let (mut b, mut sk) = probe_bw(2);
        sk.delivered = 1000;
        sk.lost = 10;
        sk.delivered_mstamp_us = 1_000_000;
        // Rounds of 100 delivered / 25 lost (25 % ≥ 50/256) in 40 ms; loss on every round's ACK.
        let lossy_round = |b: &mut Bbr, sk: &mut Sock, delivered: u64, lost: u64| {
            sk.delivered += delivered;
            sk.lost += lost;
            sk.delivered_mstamp_us += 40_000;
            b.round_start = true;
            let r = RateSample { losses: lost as u32, delivered: 1, interval_us: 40_000, ..Default::default() };
            b.lt_bw_sampling(sk, &r);
        };
        // No sampling before the first loss.
        lossy_round(&mut b, &mut sk, 100, 0);
        assert!(!b.lt_is_sampling);
        lossy_round(&mut b, &mut sk, 100, 25);
        assert!(b.lt_is_sampling);
        assert_eq!(b.lt_last_delivered, sk.delivered);
        // The loss that starts the interval also counts its round (lt_rtt_cnt = 1); the 4th
        // round start ends it: 300 packets in 120 ms = 2.5 packets/ms.
        for _ in 0..2 {
            lossy_round(&mut b, &mut sk, 100, 25);
            assert_eq!(b.lt_bw, 0);
        }
        lossy_round(&mut b, &mut sk, 100, 25);
        let bw1 = 300 * BW_UNIT / 120_000;
        assert_eq!(b.lt_bw, bw1);
        assert!(!b.lt_use_bw);
        // Interval 2 at 2.4 packets/ms (within 1/8): policed; use the average.
        for _ in 0..4 {
            lossy_round(&mut b, &mut sk, 96, 24);
        }
        let bw2 = 384 * BW_UNIT / 160_000;
        assert!(b.lt_use_bw);
        assert_eq!(b.lt_bw, (bw2 + bw1) / 2);
        assert_eq!(b.pacing_gain, BBR_UNIT);
        assert_eq!(b.bw(), b.lt_bw);
        // In PROBE_BW lt_bw is used for 48 rounds, then dropped and the cycle restarts.
        for k in 1..48 {
            lossy_round(&mut b, &mut sk, 100, 0);
            assert!(b.lt_use_bw, "round {}", k);
        }
        lossy_round(&mut b, &mut sk, 100, 0);
        assert!(!b.lt_use_bw);
        assert_eq!(b.lt_bw, 0);

        // A loss rate below 20 % never ends an interval; inconsistent rates restart it.
        let (mut b, mut sk) = probe_bw(2);
        sk.delivered_mstamp_us = 1_000_000;
        lossy_round(&mut b, &mut sk, 100, 1);
        for _ in 0..10 {
            lossy_round(&mut b, &mut sk, 100, 15);
        }
        assert_eq!(b.lt_bw, 0);
        // > 16 rounds: the interval is reset.
        for _ in 0..6 {
            lossy_round(&mut b, &mut sk, 100, 15);
        }
        assert!(!b.lt_is_sampling);
    }

    #[test]
    fn packet_conservation_on_recovery_entry_and_restore_on_exit() {
        let (mut b, mut sk) = probe_bw(2);
        b.p.extra_acked_gain = 0; // keep the target at 86 (no ACK-aggregation allowance)
        sk.cwnd = 86;
        sk.delivered = 10_000;
        b.next_rtt_delivered = 10_000;
        // Entering recovery: the core calls ssthresh (saves cwnd) then set_state.
        assert_eq!(b.ssthresh(&mut sk), sk.ssthresh);
        assert_eq!(b.prior_cwnd, 86);
        sk.ca_state = CaState::Recovery;
        sk.packets_out = 70; // 80 in flight before, 10 left (7 SACKed + 3 marked lost)
        sk.sacked_out = 0;
        sk.lost_out = 3;
        sk.delivered += 7;
        let r = RateSample { prior_delivered: 9_000, delivered: 40, interval_us: 40_000, acked_sacked: 7, losses: 3, rtt_us: -1, ..Default::default() };
        b.cong_control(&mut sk, &r);
        // cwnd = in_flight + acked = 67 + 7.
        assert!(b.packet_conservation);
        assert_eq!(sk.cwnd, 67 + 7);
        assert_eq!(b.next_rtt_delivered, sk.delivered);
        // Still the first round: cwnd − losses, but at least in_flight + acked.
        sk.delivered += 2;
        let r = RateSample { acked_sacked: 2, losses: 1, ..r };
        sk.lost_out = 4;
        b.cong_control(&mut sk, &r);
        assert_eq!(sk.cwnd, 73.max(66 + 2));
        // A new round ends conservation: slow start toward the target (+acked).
        let r = RateSample { prior_delivered: sk.delivered, acked_sacked: 2, losses: 0, ..r };
        sk.delivered += 2;
        let c = sk.cwnd;
        b.cong_control(&mut sk, &r);
        assert!(!b.packet_conservation);
        assert_eq!(sk.cwnd, c + 2);
        // Leaving recovery restores the saved cwnd (then capped by the target).
        sk.ca_state = CaState::Open;
        sk.lost_out = 0;
        sk.delivered += 1;
        let r = RateSample { prior_delivered: 0, acked_sacked: 1, ..r };
        b.cong_control(&mut sk, &r);
        assert_eq!(sk.cwnd, 86);
        // RTO: set_state(Loss) resets full_bw and marks a round start.
        b.full_bw = 123;
        b.set_state(&mut sk, CaState::Loss);
        assert_eq!((b.prev_ca_state, b.full_bw, b.round_start), (CaState::Loss, 0, true));
    }

    #[test]
    fn pacing_rate_init_and_never_lowered_before_full_pipe() {
        let mut sk = sk_at_us(0);
        let mut b = bbr();
        b.init(&mut sk);
        assert_eq!(sk.pacing_status, PacingStatus::Needed);
        // high_gain·10 packets/40 ms: bw = 10·2^24/40000 = 4194; ·1448·739/256·0.99 ⇒ 1 034 467 B/s.
        assert_eq!(sk.pacing_rate_bps, 1_034_467.0 * 8.0);
        assert!(b.has_seen_rtt);
        // A low first bw sample does not lower it in STARTUP.
        round_ack(&mut b, &mut sk, 2, false);
        assert_eq!(sk.pacing_rate_bps, 1_034_467.0 * 8.0);
        round_ack(&mut b, &mut sk, 40, false);
        let want = b.rate_bytes_per_sec(&sk, 40 * BW_UNIT / 40_000, 739) as f64 * 8.0;
        assert_eq!(sk.pacing_rate_bps, want);
        // After the pipe is full the rate follows bw·gain down as well.
        let (mut b, mut sk) = probe_bw(2);
        b.set_pacing_rate(&mut sk, BW_1PPMS / 2, BBR_UNIT);
        assert_eq!(sk.pacing_rate_bps, (b.rate_bytes_per_sec(&sk, BW_1PPMS / 2, 256) * 8) as f64);
        // The 1 % margin: 1 packet/ms of 1448 B is 1.448 MB/s, paced at 99 %.
        assert_eq!(b.rate_bytes_per_sec(&sk, BW_1PPMS, 256), RATE_1PPMS);
        assert!((RATE_1PPMS as f64 / 1_448_000.0 - 0.99).abs() < 1e-3);
    }

    #[test]
    fn ack_aggregation_estimates_excess_acked() {
        let (mut b, mut sk) = probe_bw(2);
        sk.cwnd = 100;
        b.ack_epoch_mstamp = 0;
        sk.delivered_mstamp_us = 0;
        // An epoch starts with 5 ACKed; 2 ms later 25 more when bw·2 ms = 1 was expected.
        let r = RateSample { delivered: 5, interval_us: 40_000, acked_sacked: 5, ..Default::default() };
        b.update_ack_aggregation(&sk, &r); // ack_epoch_acked 0 ≤ expected 0 ⇒ new epoch, 5 acked
        assert_eq!((b.ack_epoch_acked, b.extra_acked[0]), (5, 5));
        sk.delivered_mstamp_us = 2_000;
        let r = RateSample { acked_sacked: 25, ..r };
        b.update_ack_aggregation(&sk, &r);
        // expected = 16777·2000 >> 24 = 1; extra = 30 − 1 = 29.
        assert_eq!(b.extra_acked[0], 29);
        // 10 ms into the epoch 9 are expected, 30 were ACKed: still within the epoch; the
        // bucket keeps its max.
        sk.delivered_mstamp_us = 10_000;
        let r = RateSample { acked_sacked: 1, ..r };
        b.update_ack_aggregation(&sk, &r);
        assert_eq!((b.ack_epoch_acked, b.extra_acked[0]), (31, 29));
        // ACKs below the expected rate restart the epoch.
        sk.delivered_mstamp_us = 100_000;
        let r = RateSample { acked_sacked: 1, ..r };
        b.update_ack_aggregation(&sk, &r);
        assert_eq!((b.ack_epoch_acked, b.ack_epoch_mstamp), (1, 100_000));
        // Bucket switch every 5 rounds.
        b.round_start = true;
        for _ in 0..5 {
            b.update_ack_aggregation(&sk, &r);
        }
        assert_eq!(b.extra_acked_win_idx, 1);
        assert_eq!(b.extra_acked(), 29);
    }
}
