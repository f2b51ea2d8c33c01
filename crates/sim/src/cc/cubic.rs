//! CUBIC as in Linux net/ipv4/tcp_cubic.c (5.7+/6.x form, "v2.3" with µs HyStart); Ha, Rhee &
//! Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", ACM SIGOPS OSR 42(5), 2008, and
//! RFC 8312/9438 for the model.
//!
//! Arithmetic choices:
//! * Integer/fixed-point exactly where the kernel uses it: time in `BICTCP_HZ` units (2^-10 s),
//!   `cube_factor = 2^40 / (bic_scale·10)`, `delta = (cube_rtt_scale·offs³) >> 40`,
//!   `beta_scale = 8·(1024+β)/3/(1024−β)` (integer, = 15 for β = 717), packet-unit cwnd.
//! * Cube root: the kernel uses a 64-entry table plus one Newton–Raphson step (avg error ≈ 0.2 %).
//!   We compute the **exact integer floor cube root** instead (own implementation), so `bic_K`
//!   can differ from the kernel's by a few units of 2^-10 s (≈ 0.2 %, a few ms).
//! * Jiffies: HZ = 1000 (`tcp_jiffies32` = now in ms). `epoch_start`, `last_time`, the once-per-jiffy
//!   update, the HZ/32 (31 ms) hold-off and `usecs_to_jiffies(delay_min)` (rounded up) all use it.
//! * `offs³·cube_rtt_scale` is computed in 128 bits and saturated (the kernel's u64 product would
//!   overflow after ≈ 300 s without a loss; irrelevant in practice).
//! * HyStart round tracking as in ≥ 6.13 and the 6.1+ stable trees (25c1a9ca53db): the round
//!   reset runs on every slow-start ACK, the `hystart_low_window` test only gates detection.
//! * HyStart uses µs timestamps (`tcp_mstamp`) as in ≥ 5.7; the ACK-train threshold includes the
//!   TSO/GRO cushion `min(1 ms, gso_max_size·4/pacing_rate)` with gso_max_size = 65536 B and is
//!   halved when the socket is not paced (no fq and no internal pacing), as in the kernel.
//!
//! Older kernels (`generation`, set by the TCP profiles of 2.6.36-3.12): [`Era`] lists the
//! behaviours of tcp_cubic.c before each change, as read in the releases' own files (2.6.36.2,
//! 2.6.38.3, 2.6.39.4, 3.0.1, 3.2.0, 3.3.8, 3.10.4, 3.12.0, 3.18.30, 3.19.0, 4.0.5, 4.1.15,
//! 4.2.8, 5.6.4): HyStart on the ms clock before 5.6 (its delay threshold delay_min/16 before
//! 3.19, floored at 2 ms before 2.6.39), no initial 5 %-per-RTT floor before 3.3, the
//! TCP-friendly estimate and `cnt` counted in ACKs before 3.19, `cnt` ≥ 1 before 4.0, no epoch
//! shift after idle before 4.3. Where only stable trees were at hand (3.3.8, 4.0.5, 4.2.8, 5.6.4)
//! the release is the first one whose tree was read with the change. Not modelled:
//! `bictcp_undo_cwnd`'s `loss_cwnd` (the undo is the stack's here). The stack's own ACK counting
//! of those kernels (slow start +1 per ACK) is `TcpConfig::count_acks`, which the profiles set.

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, CongestionControl,
    PacingStatus, ParamInfo, Params, SchemeInfo, Sock,
};

/// `BICTCP_BETA_SCALE`: scale of `beta` (max_cwnd = cwnd·beta/1024).
const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: CUBIC time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// Kernel jiffies per second assumed (HZ = 1000, the common distribution choice).
const HZ: u64 = 1000;
/// `HYSTART_ACK_TRAIN` / `HYSTART_DELAY` bits of `hystart_detect`.
const HYSTART_ACK_TRAIN: u32 = 0x1;
const HYSTART_DELAY: u32 = 0x2;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX` (µs): clamp of the delay-increase threshold.
const HYSTART_DELAY_MIN: u32 = 4000;
const HYSTART_DELAY_MAX: u32 = 16000;
/// `sk_gso_max_size` default (`GSO_MAX_SIZE`, bytes), for the ACK-train cushion.
const GSO_MAX_SIZE: u64 = 65536;

/// Module parameters (Linux names and defaults, tcp_cubic.c `module_param`).
pub static PARAMS: &[ParamInfo] = &[
    ParamInfo { name: "beta", default: 717.0, doc: "multiplicative decrease factor ×1024 (717 ≈ 0.7): ssthresh = max(cwnd·beta/1024, 2)" },
    ParamInfo { name: "bic_scale", default: 41.0, doc: "cubic scaling: C = bic_scale·10/1024 packets/s³ (41 ⇒ C ≈ 0.4)" },
    ParamInfo { name: "fast_convergence", default: 1.0, doc: "release bandwidth faster: W_max = cwnd·(1024+beta)/2048 when cwnd < previous W_max" },
    ParamInfo { name: "tcp_friendliness", default: 1.0, doc: "never grow slower than the Reno estimate (TCP-friendly region)" },
    ParamInfo { name: "hystart", default: 1.0, doc: "hybrid slow start: leave slow start early on ACK-train or delay-increase detection" },
    ParamInfo { name: "hystart_detect", default: 3.0, doc: "HyStart detectors bitmask: 1 = ACK train, 2 = delay increase, 3 = both" },
    ParamInfo { name: "hystart_low_window", default: 16.0, doc: "HyStart only when cwnd ≥ this many packets" },
    ParamInfo { name: "hystart_ack_delta_us", default: 2000.0, doc: "ACKs closer than this (µs) continue an ACK train" },
    ParamInfo { name: "initial_ssthresh", default: 0.0, doc: "initial ssthresh in packets (0 = infinite); used only when hystart is off" },
    ParamInfo { name: "generation", default: 0.0, doc: "Linux release whose tcp_cubic.c to run, as major·10000 + minor·100 + patch (20636 = 2.6.36, 31000 = 3.10); 0 = today's. The TCP profiles set it" },
];

/// The behaviours of older tcp_cubic.c that `generation` switches on, each up to the release
/// that changed it (read in the releases' own net/ipv4/tcp_cubic.c; see docs/cc-catalogue.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Era {
    /// Before 2.6.39 (2.6.38.3 vs 2.6.39.4): HyStart on jiffies (delay samples rounded up to a
    /// whole jiffy, `usecs_to_jiffies`), an ACK train ends at `>=` half the minimum delay, and
    /// `HYSTART_DELAY_MIN` is 2 ms ("tcp_cubic: make the delay threshold of HyStart less
    /// sensitive" made it 4 ms).
    pub hystart_2ms_floor: bool,
    /// Before 3.3 (3.2.0 vs 3.3.8): no floor on growth before the first loss (`last_max_cwnd
    /// == 0 && cnt > 20` ⇒ cnt = 20, at least 5 % per RTT): after a HyStart exit the curve
    /// starts flat at the exit window.
    pub no_initial_growth_floor: bool,
    /// Before 5.6 (5.6.4 has the µs form): HyStart on the ms clock (`bictcp_clock`, delay
    /// samples in ms·8 truncated), the ACK train ends past half the minimum delay with no
    /// TSO/GRO cushion and no pacing awareness, and the round restarts in `bictcp_cong_avoid`.
    pub hystart_ms: bool,
    /// Before 3.19 (3.18.30 vs 3.19.0): the delay-increase threshold is delay_min/16 ("tcp_cubic:
    /// refine Hystart delay threshold" made it /8), and the TCP-friendly estimate counts ACKs,
    /// not packets ACKed (`ack_cnt++`), with `cnt` rescaled by the averaged packets per ACK
    /// (`delayed_ack`, 15/16 EWMA ×16, `ACK_RATIO_LIMIT` 32) and applied per ACK.
    pub ack_count: bool,
    /// Before 4.0 (3.19.0 vs 4.0.5): `cnt` may fall to 1 (cwnd may double per RTT); today it is
    /// at least 2 (1.5× per RTT).
    pub cnt_min_one: bool,
    /// Before 4.3: no epoch shift after an idle period ("tcp_cubic: better follow cubic curve
    /// after idle period", 30927520dbae, September 2015; the 4.2.8 stable release has it, 4.1.15
    /// not).
    pub no_idle_shift: bool,
}

impl Era {
    /// The behaviours of release `g` (major·10000 + minor·100 + patch; 0 = today).
    pub fn of(g: u32) -> Era {
        if g == 0 {
            return Era::default();
        }
        Era {
            hystart_2ms_floor: g < 2_06_39,
            no_initial_growth_floor: g < 3_03_00,
            hystart_ms: g < 5_06_00,
            ack_count: g < 3_19_00,
            cnt_min_one: g < 4_00_00,
            no_idle_shift: g < 4_03_00,
        }
    }
}

/// `ACK_RATIO_SHIFT` and `ACK_RATIO_LIMIT` of the kernels before 3.19.
const ACK_RATIO_SHIFT: u32 = 4;
const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;

/// Resolved parameters and the derived constants of `cubictcp_register`.
#[derive(Clone, Debug)]
pub struct CubicParams {
    pub beta: u32,
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: u32,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u32,
    pub initial_ssthresh: u32,
    /// `generation` and the older behaviours it selects.
    pub generation: u32,
    pub era: Era,
    /// `cube_rtt_scale = bic_scale·10`.
    cube_rtt_scale: u64,
    /// `beta_scale = 8·(1024+beta)/3/(1024−beta)`: Reno-estimate ACK count per +1, ×8.
    beta_scale: u32,
    /// `cube_factor = 2^(10+3·BICTCP_HZ) / (bic_scale·10)`.
    cube_factor: u64,
}

impl CubicParams {
    pub fn new(
        beta: u32,
        bic_scale: u32,
        fast_convergence: bool,
        tcp_friendliness: bool,
        hystart: bool,
        hystart_detect: u32,
        hystart_low_window: u32,
        hystart_ack_delta_us: u32,
        initial_ssthresh: u32,
    ) -> Self {
        let cube_rtt_scale = bic_scale as u64 * 10;
        CubicParams {
            beta,
            bic_scale,
            fast_convergence,
            tcp_friendliness,
            hystart,
            hystart_detect,
            hystart_low_window,
            hystart_ack_delta_us,
            initial_ssthresh,
            generation: 0,
            era: Era::default(),
            cube_rtt_scale,
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale,
        }
    }
}

impl CubicParams {
    /// The same parameters with the behaviours of Linux release `g` (0 = today's).
    pub fn with_generation(mut self, g: u32) -> Self {
        self.generation = g;
        self.era = Era::of(g);
        self
    }
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams::new(717, 41, true, true, true, 3, 16, 2000, 0)
    }
}

/// Exact floor of the cube root of a 64-bit integer (digit-by-digit, 3 bits per step).
pub fn cubic_root(a: u64) -> u32 {
    let mut x = a;
    let mut y: u64 = 0;
    let mut s: i32 = 63;
    while s >= 0 {
        y <<= 1;
        let b = 3 * y * (y + 1) + 1;
        if (x >> s) >= b {
            x -= b << s;
            y += 1;
        }
        s -= 3;
    }
    y as u32
}

/// Per-connection state (`struct bictcp`).
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// Increase cwnd by 1 after `cnt` ACKed packets.
    cnt: u32,
    /// W_max (packets).
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffies of the last `cnt` update.
    last_time: u64,
    /// Origin point of the cubic function (packets).
    bic_origin_point: u32,
    /// Time from epoch start to the origin point, 2^-10 s units.
    bic_k: u32,
    /// Minimum RTT seen (µs), 0 = none.
    delay_min: u32,
    /// Jiffies at the start of the current epoch (None = no epoch; the kernel uses 0).
    epoch_start: Option<u64>,
    /// ACKed packets counted for the Reno estimate.
    ack_cnt: u32,
    /// Reno-equivalent cwnd estimate (packets).
    tcp_cwnd: u32,
    // HyStart
    sample_cnt: u8,
    found: bool,
    round_start: u64,
    end_seq: u64,
    last_ack: u64,
    curr_rtt: u32,
    /// Before 3.19: averaged packets per ACK ×16 (`delayed_ack`).
    delayed_ack: u32,
}

impl Cubic {
    pub fn new(p: CubicParams) -> Self {
        Cubic {
            p,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u32::MAX,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, String> {
        Ok(Cubic::new(CubicParams::new(
            p.int("beta", 717, 1, 1023)? as u32,
            p.int("bic_scale", 41, 1, 1 << 20)? as u32,
            p.bool("fast_convergence", true)?,
            p.bool("tcp_friendliness", true)?,
            p.bool("hystart", true)?,
            p.int("hystart_detect", 3, 0, 3)? as u32,
            p.int("hystart_low_window", 16, 0, 1 << 30)? as u32,
            p.int("hystart_ack_delta_us", 2000, 0, 1 << 30)? as u32,
            p.int("initial_ssthresh", 0, 0, 0x7fff_ffff)? as u32,
        )
        .with_generation(p.int("generation", 0, 0, 99_99_99)? as u32)))
    }

    #[inline]
    fn jiffies(sk: &Sock) -> u64 {
        sk.now_ns / (1_000_000_000 / HZ)
    }

    /// `bictcp_reset`: everything but the parameters and (kernel: fields after `unused`) HyStart.
    fn reset(&mut self) {
        let p = self.p.clone();
        let (round_start, end_seq, last_ack, curr_rtt, sample_cnt) =
            (self.round_start, self.end_seq, self.last_ack, self.curr_rtt, self.sample_cnt);
        *self = Cubic::new(p);
        self.round_start = round_start;
        self.end_seq = end_seq;
        self.last_ack = last_ack;
        self.curr_rtt = curr_rtt;
        self.sample_cnt = sample_cnt;
        self.found = false;
    }

    /// HyStart's clock: µs (`tcp_mstamp`), or ms (`bictcp_clock`, jiffies at HZ = 1000)
    /// before 5.6.
    fn hystart_now(&self, sk: &Sock) -> u64 {
        if self.p.era.hystart_ms { sk.now_ns / 1_000_000 } else { sk.now_us }
    }

    /// `delay_min` in jiffies, for the one-RTT look-ahead of `bictcp_update` (µs today, ms·8
    /// on the ms clock).
    fn delay_min_jiffies(&self) -> u64 {
        if self.p.era.hystart_ms {
            (self.delay_min >> 3) as u64 * HZ / 1000
        } else {
            (self.delay_min as u64 * HZ).div_ceil(1_000_000) // usecs_to_jiffies
        }
    }

    fn hystart_reset(&mut self, sk: &Sock) {
        let now = self.hystart_now(sk);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = sk.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: compute `cnt` from the cubic curve and the TCP-friendly estimate.
    fn update(&mut self, sk: &Sock, cwnd: u32, acked: u32) {
        let now = Self::jiffies(sk);
        // before 3.19 the TCP-friendly estimate counted ACKs, not packets ACKed
        let counted = if self.p.era.ack_count { 1 } else { acked };
        self.ack_cnt = self.ack_cnt.wrapping_add(counted);
        if self.last_cwnd == cwnd && now.wrapping_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // The cubic function updates cnt at most once per jiffy; every reduction clears
        // epoch_start, which forces a recalculation.
        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            if self.epoch_start.is_none() {
                self.epoch_start = Some(now);
                self.ack_cnt = counted;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max − cwnd)/C) in 2^-10 s: cube_factor·ΔW = ΔW·2^30/C.
                    self.bic_k =
                        cubic_root(self.p.cube_factor * (self.last_max_cwnd - cwnd) as u64);
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            // t = elapsed + delay_min (one RTT ahead), jiffies -> 2^-10 s.
            let epoch = self.epoch_start.unwrap();
            let delay_j = self.delay_min_jiffies();
            let t = ((now.saturating_sub(epoch) + delay_j) << BICTCP_HZ) / HZ;
            let k = self.bic_k as u64;
            let offs = if t < k { k - t } else { t - k };
            let d = (self.p.cube_rtt_scale as u128 * (offs as u128).pow(3)) >> (10 + 3 * BICTCP_HZ);
            let delta = d.min(u32::MAX as u128) as u32;
            let bic_target = if t < k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if bic_target > cwnd { cwnd / (bic_target - cwnd) } else { 100 * cwnd };
            // Initial growth may be too conservative while the bandwidth is unknown: ≥ 5 %/RTT
            // (from 3.3).
            if self.last_max_cwnd == 0 && self.cnt > 20 && !self.p.era.no_initial_growth_floor {
                self.cnt = 20;
            }
        }
        // TCP-friendly region.
        if self.p.tcp_friendliness {
            let delta = (cwnd * self.p.beta_scale) >> 3;
            if delta > 0 {
                while self.ack_cnt > delta {
                    self.ack_cnt -= delta;
                    self.tcp_cwnd += 1;
                }
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        if self.p.era.ack_count {
            // before 3.19: cnt in ACKs, from the averaged packets per ACK
            self.cnt = (((self.cnt as u64) << ACK_RATIO_SHIFT) / self.delayed_ack.max(1) as u64) as u32;
        }
        // At most 1 packet per 2 ACKed: cwnd grows at most 1.5× per RTT (from 4.0; before, cnt
        // ≥ 1 let it double).
        self.cnt = self.cnt.max(if self.p.era.cnt_min_one { 1 } else { 2 });
    }

    /// `hystart_update` before 5.6: the ms clock, delay samples and `delay_min` in ms·8, the
    /// ACK train past `delay_min`/2 with no cushion, the delay threshold delay_min/16 before 3.19
    /// (clamped to 2 ms before 2.6.39, 4 ms after, and 16 ms); the round restarts in
    /// `cong_avoid` and the low-window gate is the caller's.
    fn hystart_update_ms(&mut self, sk: &mut Sock, delay: u32) {
        let now = sk.now_ns / 1_000_000;
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0
            && now.wrapping_sub(self.last_ack) <= (self.p.hystart_ack_delta_us / 1000) as u64
        {
            self.last_ack = now;
            let thresh = (self.delay_min >> 4) as u64; // ms
            let since = now.wrapping_sub(self.round_start);
            if since > thresh || (self.p.era.hystart_2ms_floor && since == thresh) {
                self.found = true;
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                if self.curr_rtt > delay {
                    self.curr_rtt = delay;
                }
                self.sample_cnt += 1;
            } else {
                let lo = if self.p.era.hystart_2ms_floor { 2 << 3 } else { 4 << 3 };
                let x = if self.p.era.ack_count { self.delay_min >> 4 } else { self.delay_min >> 3 };
                if self.curr_rtt > self.delay_min + x.clamp(lo, 16 << 3) {
                    self.found = true;
                }
            }
        }
        if self.found {
            sk.ssthresh = sk.cwnd;
        }
    }

    /// `hystart_ack_delay`: TSO/GRO cushion for the ACK-train test (µs).
    fn hystart_ack_delay(sk: &Sock) -> u32 {
        let rate_bytes = sk.pacing_rate_bps / 8.0;
        if rate_bytes <= 0.0 {
            return 0;
        }
        let d = (GSO_MAX_SIZE as f64 * 4.0 * 1e6 / rate_bytes).floor();
        d.min(1000.0) as u32
    }

    fn hystart_update(&mut self, sk: &mut Sock, delay: u32) {
        if sk.snd_una > self.end_seq {
            self.hystart_reset(sk);
        }
        // The low-window test comes after the round reset (Linux 25c1a9ca53db "tcp_cubic: fix
        // incorrect HyStart round start detection", 6.13, backported to 6.1+ stable): rounds are
        // tracked from the first ACK, so they start with the first packet of a flight. Testing
        // cwnd before the reset (the 5.7–6.12 form) starts the first tracked round when cwnd
        // reaches 16, mid-flight, and every later round stays mid-flight: its first 8 delay
        // samples then see the queue built by the flight's first half.
        if sk.cwnd < self.p.hystart_low_window {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = sk.now_us;
            if now.wrapping_sub(self.last_ack) <= self.p.hystart_ack_delta_us as u64 {
                self.last_ack = now;
                let mut threshold = self.delay_min + Self::hystart_ack_delay(sk);
                // Unpaced: the train triggers past delay_min/2 (pacing may spread it over RTT/2).
                if sk.pacing_status == PacingStatus::None {
                    threshold >>= 1;
                }
                if now.wrapping_sub(self.round_start) > threshold as u64 {
                    self.found = true;
                    sk.ssthresh = sk.cwnd;
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    sk.ssthresh = sk.cwnd;
                }
            }
        }
    }

    /// K in seconds (for tests and traces).
    pub fn k_seconds(&self) -> f64 {
        self.bic_k as f64 / 1024.0
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, sk: &mut Sock) {
        self.reset();
        if self.p.hystart {
            self.hystart_reset(sk);
        }
        if !self.p.hystart && self.p.initial_ssthresh != 0 {
            sk.ssthresh = self.p.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.epoch_start = None; // end of epoch
        let cwnd = sk.cwnd;
        // W_max and fast convergence.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.p.beta) as u64) / (2 * BICTCP_BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        ((cwnd as u64 * self.p.beta as u64 / BICTCP_BETA_SCALE as u64) as u32).max(2)
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if !sk.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if sk.in_slow_start() {
            // before 5.6 the HyStart round restarts here, on the ACK past end_seq
            if self.p.era.hystart_ms && self.p.hystart && sk.snd_una > self.end_seq {
                self.hystart_reset(sk);
            }
            acked = tcp_slow_start(sk, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(sk, sk.cwnd, acked);
        let cnt = self.cnt;
        // before 3.19 tcp_cong_avoid_ai counted ACKs (cnt was rescaled to ACKs above)
        tcp_cong_avoid_ai(sk, cnt, if self.p.era.ack_count { 1 } else { acked });
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(sk);
        }
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::TxStart && !self.p.era.no_idle_shift {
            // Idle (application-limited): shift the epoch so cwnd keeps following the curve.
            let now = Self::jiffies(sk);
            let lsnd = sk.lsndtime_ns / (1_000_000_000 / HZ);
            if let Some(e) = self.epoch_start {
                if now > lsnd {
                    self.epoch_start = Some((e + (now - lsnd)).min(now));
                }
            }
        }
    }

    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        if self.p.era.ack_count && sk.ca_state == CaState::Open {
            // before 3.19: packets per ACK, averaged 15/16 (×16)
            let r = self.delayed_ack - (self.delayed_ack >> ACK_RATIO_SHIFT) + sample.pkts_acked;
            self.delayed_ack = r.clamp(1, ACK_RATIO_LIMIT);
        }
        // Some calls are for duplicates without an RTT.
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples right after fast recovery (first second of an epoch).
        if let Some(e) = self.epoch_start {
            if Self::jiffies(sk).wrapping_sub(e) < HZ {
                return;
            }
        }
        let rtt_us = sample.rtt_us.min(u32::MAX as i64 / 8) as u64;
        let delay = if !self.p.era.hystart_ms {
            (rtt_us as u32).max(1)
        } else if self.p.era.hystart_2ms_floor {
            (rtt_us.div_ceil(1000) << 3).max(1) as u32 // usecs_to_jiffies(rtt) << 3
        } else {
            ((rtt_us << 3) / 1000).max(1) as u32 // ms·8
        };
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && sk.in_slow_start() && self.p.hystart {
            if !self.p.era.hystart_ms {
                self.hystart_update(sk, delay);
            } else if sk.cwnd >= self.p.hystart_low_window {
                self.hystart_update_ms(sk, delay);
            }
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cnt", self.cnt as f64));
        out.push(("w_max", self.last_max_cwnd as f64));
        out.push(("k_s", self.k_seconds()));
        out.push(("origin", self.bic_origin_point as f64));
        out.push(("delay_min_us", self.delay_min as f64));
        out.push(("tcp_cwnd", self.tcp_cwnd as f64));
        out.push(("hystart_found", if self.found { 1.0 } else { 0.0 }));
    }
}

/// Registration (the module's `tcp_congestion_ops`), listed in `cc::registry!`.
pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "cubic",
    description: "CUBIC with HyStart (ACK train + delay), fast convergence and the TCP-friendly region, integer arithmetic as Linux",
    source: "Linux net/ipv4/tcp_cubic.c (5.7+/6.x; `generation` selects the behaviours of 2.6.36-5.5); RFC 8312/9438; Ha, Rhee & Xu, ACM SIGOPS OSR 42(5) 2008",
    params: PARAMS,
    make: |p| Ok(Box::new(Cubic::from_params(p)?)),
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

    #[test]
    fn cube_root_exact() {
        for &(a, r) in &[(0u64, 0u32), (1, 1), (7, 1), (8, 2), (26, 2), (27, 3), (1_000_000, 100), (999_999, 99)] {
            assert_eq!(cubic_root(a), r, "cbrt({})", a);
        }
        let big = (2_642_245u64).pow(3); // largest cube < 2^64
        assert_eq!(cubic_root(big), 2_642_245);
        assert_eq!(cubic_root(big - 1), 2_642_244);
        assert_eq!(cubic_root(u64::MAX), 2_642_245);
    }

    #[test]
    fn derived_constants_match_kernel() {
        let p = CubicParams::default();
        assert_eq!(p.beta_scale, 15);
        assert_eq!(p.cube_rtt_scale, 410);
        assert_eq!(p.cube_factor, (1u64 << 40) / 410);
    }

    #[test]
    fn ssthresh_beta_and_fast_convergence() {
        let mut c = Cubic::new(CubicParams::default());
        let mut s = sk_at(0, 100, 1000);
        assert_eq!(c.ssthresh(&mut s), 70); // 100·717/1024 = 70.02
        assert_eq!(c.last_max_cwnd, 100);
        s.cwnd = 80; // below W_max: fast convergence W_max = 80·1741/2048 = 68
        assert_eq!(c.ssthresh(&mut s), 56);
        assert_eq!(c.last_max_cwnd, 68);
        s.cwnd = 2;
        assert_eq!(c.ssthresh(&mut s), 2);
        let mut nofc = Cubic::new(CubicParams::new(717, 41, false, true, true, 3, 16, 2000, 0));
        let mut s = sk_at(0, 100, 1000);
        nofc.ssthresh(&mut s);
        s.cwnd = 80;
        nofc.ssthresh(&mut s);
        assert_eq!(nofc.last_max_cwnd, 80);
    }

    /// K = cbrt(W_max·(1−β)/C) and W(t) = C·(t−K)³ + W_max against hand-computed values.
    #[test]
    fn k_and_window_curve() {
        let mut c = Cubic::new(CubicParams::new(717, 41, true, false, false, 0, 16, 2000, 0));
        let mut s = sk_at(1000, 100, 1000);
        c.ssthresh(&mut s); // W_max = 100
        s.cwnd = 70;
        s.ssthresh = 70;
        c.delay_min = 0; // t = elapsed only
        c.update(&s, 70, 1);
        // Hand value: C = 410/1024 = 0.400390625; K = cbrt(30/C) = cbrt(74.9268) = 4.2153 s
        // = 4316.5 in 2^-10 s; integer floor cbrt(2^40/410·30) = 4316.
        assert_eq!(c.bic_k, 4316);
        assert!((c.k_seconds() - 4.2153).abs() < 0.001);
        assert_eq!(c.bic_origin_point, 100);
        // At t = 0: target = 100 − C·K³; in fixed point delta = 410·4316³ >> 40 = 29 (29.98
        // floored) ⇒ target 71 ⇒ cnt = 70/(71−70) = 70.
        assert_eq!(c.cnt, 70);
        // At t = 2 s (2048 units): offs = 2268; delta = 410·2268³ >> 40 = 4 (hand: 0.4004·2.2148³ = 4.35)
        // target = 96 ⇒ cnt = 70/(96−70) = 2.
        s.now_ns += 2_000_000_000;
        c.update(&s, 70, 1);
        assert_eq!(c.cnt, 2);
        // At t = K + 1 s (5340 units, offs = 1024): delta = 410·1024³>>40 = 0 (0.4004 → floor 0):
        // target = origin = 100; with cwnd 99: cnt = 99.
        let mut s2 = s.clone();
        s2.now_ns = 1_000_000_000 + 5_215_000_000; // elapsed 5215 ms -> t = 5340 units
        c.update(&s2, 99, 1);
        assert_eq!(c.cnt, 99);
        // At t = K + 3 s (elapsed 7215 ms ⇒ 7388 units, offs = 3072): delta = 410·3072³>>40 = 10
        // (hand 0.4004·27 = 10.8) ⇒ target 110.
        let mut s3 = s.clone();
        s3.now_ns = 1_000_000_000 + 7_215_000_000;
        c.update(&s3, 105, 1);
        assert_eq!(c.cnt, 105 / (110 - 105));
    }

    #[test]
    fn cnt_updates_once_per_jiffy_and_holds_31ms() {
        let mut c = Cubic::new(CubicParams::new(717, 41, true, false, false, 0, 16, 2000, 0));
        let mut s = sk_at(1000, 100, 1000);
        c.ssthresh(&mut s);
        c.update(&s, 70, 1);
        let cnt0 = c.cnt;
        c.cnt = 12345; // marker: unchanged cwnd within HZ/32 ⇒ no recalculation
        s.now_ns += 20_000_000;
        c.update(&s, 70, 1);
        assert_eq!(c.cnt, 12345);
        s.now_ns += 20_000_000; // 40 ms > 31 ms
        c.update(&s, 70, 1);
        assert_ne!(c.cnt, 12345);
        assert!(c.cnt <= cnt0);
    }

    #[test]
    fn tcp_friendly_region_caps_cnt() {
        // cwnd just below W_max (plateau, slow cubic growth), friendliness on: the Reno
        // estimate must take over. W_max 710, cwnd 700: K = cbrt(2^40/410·10) = 2993 units;
        // at t = 102 units cubic target = 710 − 9 = 701 ⇒ cnt 700 before the friendly cap.
        let mut c = Cubic::new(CubicParams::new(717, 41, true, true, false, 0, 16, 2000, 0));
        let mut s = sk_at(1000, 700, 100000);
        c.last_max_cwnd = 710;
        c.update(&s, 700, 1);
        assert_eq!(c.bic_k, 2993);
        // Feed 700·15/8 = 1312 acks per Reno +1; 3000 acks ⇒ tcp_cwnd = 702.
        s.now_ns += 100_000_000;
        c.update(&s, 700, 3000);
        assert_eq!(c.tcp_cwnd, 702);
        assert_eq!(c.cnt, 700 / 2);
    }

    #[test]
    fn first_epoch_growth_at_least_5_percent() {
        let mut c = Cubic::new(CubicParams::new(717, 41, true, false, false, 0, 16, 2000, 0));
        let s = sk_at(1000, 100, 50);
        c.update(&s, 100, 1); // no W_max yet: origin = cwnd, target ≈ cwnd ⇒ cnt capped at 20
        assert_eq!(c.cnt, 20);
    }

    #[test]
    fn hystart_delay_exit() {
        let mut c = Cubic::new(CubicParams::new(717, 41, true, true, true, HYSTART_DELAY, 16, 2000, 0));
        let mut s = sk_at(0, 16, crate::cc::TCP_INFINITE_SSTHRESH);
        s.snd_nxt = 100 * 1448;
        c.init(&mut s);
        // Round 1: 10 ms RTT samples establish delay_min = 10 ms.
        for i in 0..10 {
            s.now_us += 1000;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 10_000 + i, in_flight: 16 });
        }
        assert!(!c.found);
        // Threshold = delay_min + clamp(10000/8, 4000, 16000) = 14 ms. New round with 13.9 ms: no exit.
        s.snd_una = s.snd_nxt + 1;
        s.snd_nxt += 100 * 1448;
        for _ in 0..10 {
            s.now_us += 1000;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 13_900, in_flight: 16 });
        }
        assert!(!c.found);
        // Next round: 14.5 ms > 14 ms after 8 samples ⇒ exit, ssthresh = cwnd.
        s.snd_una = s.snd_nxt + 1;
        s.snd_nxt += 100 * 1448;
        for i in 0..9 {
            s.now_us += 1000;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 14_500, in_flight: 16 });
            if i < 8 {
                assert!(!c.found, "exit only after {} samples", HYSTART_MIN_SAMPLES);
            }
        }
        assert!(c.found);
        assert_eq!(s.ssthresh, 16);
    }

    /// The delay threshold is delay_min/8 (clamped to 4..16 ms): at an 80-ms delay_min it is
    /// 10 ms, so a round whose first 8 samples are 9 ms above it continues slow start and one
    /// 11 ms above it ends slow start (with delay_min/4 the threshold would be 16 ms).
    #[test]
    fn hystart_delay_threshold_is_an_eighth_of_delay_min() {
        for (extra_us, exits) in [(9_000i64, false), (11_000, true)] {
            let mut c = Cubic::new(CubicParams::new(717, 41, true, true, true, HYSTART_DELAY, 16, 2000, 0));
            let mut s = sk_at(0, 16, crate::cc::TCP_INFINITE_SSTHRESH);
            s.snd_nxt = 100 * 1448;
            c.init(&mut s);
            for _ in 0..10 {
                s.now_us += 1000;
                c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 80_000, in_flight: 16 });
            }
            s.snd_una = s.snd_nxt + 1;
            s.snd_nxt += 100 * 1448;
            for _ in 0..10 {
                s.now_us += 1000;
                c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 80_000 + extra_us, in_flight: 16 });
            }
            assert_eq!(c.found, exits, "{} µs above delay_min", extra_us);
        }
    }

    /// Far past the plateau the cubic target runs away, but cnt never drops below 2: cwnd grows
    /// at most by one packet per two ACKed (1.5× per RTT), as `bictcp_update` ends.
    #[test]
    fn growth_is_capped_at_one_packet_per_two_acked() {
        let mut c = Cubic::new(CubicParams::new(717, 41, true, false, false, 0, 16, 2000, 0));
        c.last_max_cwnd = 50;
        let s = sk_at(1000, 100, 50);
        c.update(&s, 100, 1); // epoch starts above W_max: K = 0, origin = cwnd
        let s = sk_at(11_000, 100, 50);
        c.update(&s, 100, 1); // 10 s later the curve is thousands of packets above cwnd
        assert_eq!(c.cnt, 2);
    }

    #[test]
    fn hystart_ack_train_exit_unpaced() {
        let mut c = Cubic::new(CubicParams::new(717, 41, true, true, true, HYSTART_ACK_TRAIN, 16, 2000, 0));
        let mut s = sk_at(0, 32, crate::cc::TCP_INFINITE_SSTHRESH);
        s.snd_nxt = 1_000_000;
        c.init(&mut s);
        // delay_min 20 ms; unpaced, rate 0 ⇒ threshold = 10 ms. ACKs every 1 ms (a train).
        let mut exit_at = None;
        for i in 1..=20u64 {
            s.now_us = i * 1000;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 2, rtt_us: 20_000, in_flight: 32 });
            if c.found && exit_at.is_none() {
                exit_at = Some(i);
            }
        }
        assert_eq!(exit_at, Some(11)); // 11 ms > 10 ms since round start
        assert_eq!(s.ssthresh, 32);
    }

    /// Linux ≥ 6.13 (25c1a9ca53db, in the 6.1+ stable trees): the round reset runs on every
    /// slow-start ACK, also while cwnd < hystart_low_window, so the first tracked round ends
    /// with the ACK of the initial window's last packet and rounds stay aligned with flights.
    #[test]
    fn hystart_rounds_tracked_below_low_window() {
        let mut c = Cubic::new(CubicParams::default());
        let mut s = sk_at(0, 10, crate::cc::TCP_INFINITE_SSTHRESH);
        s.snd_nxt = 1; // init at the handshake: nothing sent yet
        c.init(&mut s);
        assert_eq!(c.end_seq, 1);
        // First ACK of the initial window (cwnd 10 < 16): a round starts here, ending with
        // snd_nxt now (IW of 10 plus the 2 just released).
        s.now_us = 80_000;
        s.snd_una = 1 + 1448;
        s.snd_nxt = 1 + 12 * 1448;
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 80_000, in_flight: 10 });
        assert_eq!((c.round_start, c.end_seq), (80_000, 1 + 12 * 1448));
        // cwnd reaches 16 within that round: no new round (pre-fix: a reset at cwnd 16, with
        // end_seq = snd_nxt in the middle of the next flight).
        for k in 2..=9u64 {
            s.now_us = 80_000 + k * 240;
            s.snd_una = 1 + k * 1448;
            s.snd_nxt = 1 + (10 + 2 * k) * 1448;
            s.cwnd = 10 + k as u32;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 80_000, in_flight: 10 });
        }
        assert_eq!((c.round_start, c.end_seq), (80_000, 1 + 12 * 1448));
        assert_eq!(c.sample_cnt, 4); // samples counted only at cwnd ≥ 16 (ACKs 6–9)
        // The ACK past end_seq opens the next round, whose end is the flight just sent.
        s.now_us = 80_000 + 12 * 240;
        s.snd_una = 1 + 13 * 1448;
        s.snd_nxt = 1 + 36 * 1448;
        s.cwnd = 22;
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: 80_000, in_flight: 20 });
        assert_eq!((c.round_start, c.end_seq, c.sample_cnt), (80_000 + 12 * 240, 1 + 36 * 1448, 1));
    }

    fn gen(g: u32, detect: u32, friendly: bool) -> Cubic {
        Cubic::new(CubicParams::new(717, 41, true, friendly, true, detect, 16, 2000, 0).with_generation(g))
    }

    fn at(s: &mut Sock, us: u64) {
        s.now_us = us;
        s.now_ns = us * 1000;
    }

    #[test]
    fn era_of_each_release() {
        assert_eq!(Era::of(0), Era::default());
        let e = Era::of(2_06_36);
        assert!(e.hystart_2ms_floor && e.no_initial_growth_floor && e.hystart_ms && e.ack_count
            && e.cnt_min_one && e.no_idle_shift);
        let e = Era::of(3_10_00);
        assert!(!e.hystart_2ms_floor && !e.no_initial_growth_floor);
        assert!(e.hystart_ms && e.ack_count && e.cnt_min_one && e.no_idle_shift);
        let e = Era::of(3_19_00);
        assert!(!e.ack_count && e.cnt_min_one && e.hystart_ms);
        assert_eq!(Era::of(5_06_00), Era::default());
    }

    /// One round of `delay_min` samples, then one of `delay_min + extra`: does HyStart's delay
    /// test end slow start? (Before 5.6 the round restarts in `cong_avoid`.)
    fn delay_exit(g: u32, delay_min_us: i64, extra_us: i64) -> bool {
        let mut c = gen(g, HYSTART_DELAY, true);
        let mut s = sk_at(0, 16, crate::cc::TCP_INFINITE_SSTHRESH);
        s.snd_nxt = 100 * 1448;
        c.init(&mut s);
        let mut t = 0;
        for rtt in [delay_min_us, delay_min_us + extra_us] {
            for _ in 0..10 {
                t += 1000;
                at(&mut s, t);
                c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt_us: rtt, in_flight: 16 });
            }
            s.snd_una = s.snd_nxt + 1;
            s.snd_nxt += 100 * 1448;
            c.cong_avoid(&mut s, 1);
        }
        c.found
    }

    /// The delay-increase threshold: delay_min/8 today (3.19, "tcp_cubic: refine Hystart delay
    /// threshold"), delay_min/16 before, clamped to at least 4 ms (2 ms before 2.6.39).
    #[test]
    fn hystart_delay_threshold_per_generation() {
        // 80 ms: today 10 ms, 3.x 5 ms — a round 6 ms slower ends slow start only in 3.x
        assert!(!delay_exit(0, 80_000, 6_000));
        assert!(delay_exit(3_10_00, 80_000, 6_000));
        assert!(!delay_exit(3_10_00, 80_000, 4_000));
        // 40 ms: 2.5 ms in 2.6.36 (2 ms floor), 4 ms in 3.x (4 ms floor)
        assert!(delay_exit(2_06_36, 40_000, 3_000));
        assert!(!delay_exit(3_10_00, 40_000, 3_000));
        assert!(delay_exit(3_10_00, 40_000, 5_000));
    }

    /// Before 5.6 the ACK train ends past delay_min/2 (ms clock) even on a paced socket; today a
    /// paced socket's train must span delay_min plus the TSO/GRO cushion.
    #[test]
    fn hystart_ack_train_before_5_6_ignores_pacing() {
        let exit_at = |g: u32| {
            let mut c = gen(g, HYSTART_ACK_TRAIN, true);
            let mut s = sk_at(0, 32, crate::cc::TCP_INFINITE_SSTHRESH);
            s.pacing_status = PacingStatus::Fq;
            s.pacing_rate_bps = 100e6;
            s.snd_nxt = 1_000_000;
            c.init(&mut s);
            (1..=40u64).find(|&i| {
                at(&mut s, i * 1000);
                c.pkts_acked(&mut s, &AckSample { pkts_acked: 2, rtt_us: 20_000, in_flight: 32 });
                c.found
            })
        };
        assert_eq!(exit_at(3_10_00), Some(11)); // > 10 ms = delay_min/2
        assert!(exit_at(0).unwrap() > 20, "{:?}", exit_at(0));
    }

    /// Before 3.3 nothing floors the growth before the first loss: after a HyStart exit the
    /// curve starts flat at the exit window (cnt 100·cwnd); from 3.3 cnt ≤ 20 (5 % per RTT).
    /// Before 3.19 cnt is then counted in ACKs (two packets per ACK: half).
    #[test]
    fn initial_growth_floor_from_3_3() {
        let cnt = |g: u32| {
            let mut c = gen(g, 0, false);
            let s = sk_at(1000, 100, 50);
            c.update(&s, 100, 1);
            c.cnt
        };
        assert_eq!(cnt(0), 20);
        assert_eq!(cnt(3_19_00), 20);
        assert_eq!(cnt(3_10_00), 10);
        assert_eq!(cnt(2_06_36), 100 * 100 / 2);
    }

    /// Before 3.19 the TCP-friendly estimate counts ACKs: with delayed ACKs (2 packets each) it
    /// grows at half the Reno rate today's counts.
    #[test]
    fn tcp_friendly_estimate_counted_acks_before_3_19() {
        let reno = |g: u32| {
            let mut c = gen(g, 0, true);
            c.last_max_cwnd = 710;
            let mut s = sk_at(1000, 700, 100_000);
            c.update(&s, 700, 2);
            for _ in 0..1400 {
                c.update(&s, 700, 2); // within 31 ms: counted, not recomputed
            }
            s.now_ns += 100_000_000;
            c.update(&s, 700, 2);
            c.tcp_cwnd
        };
        // 700·15/8 = 1312 per +1: 2804 packets → +2 today, 1402 ACKs → +1 before 3.19
        assert_eq!(reno(0), 702);
        assert_eq!(reno(3_10_00), 701);
    }

    /// Before 3.19 `cnt` is rescaled by the averaged packets per ACK: stretch ACKs of 4 packets
    /// (`delayed_ack` → 64) make it a quarter, applied per ACK.
    #[test]
    fn delayed_ack_ratio_rescales_cnt_before_3_19() {
        let mut c = gen(3_10_00, 0, false);
        let mut s = sk_at(1000, 100, 50);
        for _ in 0..100 {
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 4, rtt_us: -1, in_flight: 100 });
        }
        assert_eq!(c.delayed_ack, 64);
        c.update(&s, 100, 4);
        assert_eq!(c.cnt, 20 / 4);
        // ... and only in the Open state
        let mut d = gen(3_10_00, 0, false);
        s.ca_state = CaState::Recovery;
        d.pkts_acked(&mut s, &AckSample { pkts_acked: 4, rtt_us: -1, in_flight: 100 });
        assert_eq!(d.delayed_ack, 32);
    }

    /// Before 4.0 `cnt` may fall to 1: far above the curve cwnd doubles per RTT (today 1.5×).
    #[test]
    fn growth_may_double_per_rtt_before_4_0() {
        let cnt = |g: u32| {
            let mut c = gen(g, 0, false);
            c.last_max_cwnd = 50;
            c.update(&sk_at(1000, 100, 50), 100, 1);
            c.update(&sk_at(11_000, 100, 50), 100, 1);
            c.cnt
        };
        assert_eq!(cnt(0), 2);
        assert_eq!(cnt(3_19_00), 1);
    }

    /// Before 4.3 an idle period does not shift the epoch ("tcp_cubic: better follow cubic
    /// curve after idle period"), so cwnd jumps along the curve when sending resumes.
    #[test]
    fn no_epoch_shift_after_idle_before_4_2() {
        let epoch = |g: u32| {
            let mut c = gen(g, 0, false);
            let mut s = sk_at(1000, 100, 50);
            c.update(&s, 100, 1);
            s.lsndtime_ns = 2_000_000_000;
            s.now_ns = 5_000_000_000;
            c.cwnd_event(&mut s, CaEvent::TxStart);
            c.epoch_start
        };
        assert_eq!(epoch(0), Some(1000 + 3000));
        assert_eq!(epoch(4_01_00), Some(1000));
    }

    #[test]
    fn loss_state_resets_w_max() {
        let mut c = Cubic::new(CubicParams::default());
        let mut s = sk_at(0, 100, 1000);
        c.ssthresh(&mut s);
        assert_eq!(c.last_max_cwnd, 100);
        c.set_state(&mut s, CaState::Loss);
        assert_eq!(c.last_max_cwnd, 0);
    }
}
