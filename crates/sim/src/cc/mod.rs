//! Congestion-control interface, modelled on Linux `struct tcp_congestion_ops`
//! (include/net/tcp.h), the shared window helpers of net/ipv4/tcp_cong.c, and the scheme
//! registry. One algorithm per file; each file ends with its registration (`SCHEMES`: name,
//! description, source, parameters, constructor) as a kernel module ends with its ops table,
//! and the `registry!` list below names the files. Shared helpers: `minmax.rs` (windowed
//! filters, lib/win_minmax.c), `netmodel::params` (parameter tables and typed access, shared with the datagram schemes), `rng.rs`
//! (seeded generators).
//!
//! Units follow Linux: `cwnd`, `ssthresh` and `acked` are packet (segment) counts; times handed
//! to a CC are µs (`now_us`) or ns (`now_ns`).
//!
//! A CC never sees the sender itself: every hook gets a `&mut Sock`, the slice of
//! `struct tcp_sock` that congestion control reads or writes. The sender keeps its
//! live state in this struct (no copying per ACK).

pub mod external;
mod minmax;
pub mod native;
mod rng;

pub use minmax::{Minmax, WindowMin};
pub use netmodel::params::{ParamInfo, Params};

/// `TCP_INFINITE_SSTHRESH` (include/net/tcp.h): ssthresh before the first reduction.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `icsk_ca_state` (`enum tcp_ca_state`, include/net/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

impl CaState {
    pub fn as_str(&self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// Linux `sk_pacing_status`: who asked for pacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingStatus {
    /// Not paced (no fq, CC did not request pacing): `sk_pacing_rate` is computed but not enforced.
    None,
    /// The CC requested TCP-internal pacing (BBR sets this in `init`; Linux ≥ 4.13).
    Needed,
    /// Paced by the `fq` qdisc (the endpoint's `pacing_default` flag models its presence).
    Fq,
}

/// The part of `struct tcp_sock` a congestion-control module may read or write.
#[derive(Clone, Debug)]
pub struct Sock {
    /// Current time (ns) and the same in µs (`tp->tcp_mstamp`).
    pub now_ns: u64,
    pub now_us: u64,
    /// Payload bytes per segment (`mss_cache`).
    pub mss: u32,
    /// Congestion window (packets), `snd_cwnd`.
    pub cwnd: u32,
    /// Slow-start threshold (packets); `TCP_INFINITE_SSTHRESH` until the first reduction.
    pub ssthresh: u32,
    /// AI credit counter (`snd_cwnd_cnt`), used by `tcp_cong_avoid_ai`.
    pub snd_cwnd_cnt: u32,
    /// Upper bound of cwnd (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// cwnd before the last reduction (`prior_cwnd`), used by undo.
    pub prior_cwnd: u32,
    /// Initial window (packets), `tcp_init_cwnd`.
    pub init_cwnd: u32,
    /// Smoothed RTT in µs (Linux keeps it ×8 in `srtt_us`; this is `srtt_us >> 3`); 0 = no sample yet.
    pub srtt_us: u32,
    /// Windowed minimum RTT in µs (`tcp_min_rtt`), `u32::MAX` before the first sample.
    pub min_rtt_us: u32,
    /// Packets delivered (cumulatively ACKed or SACKed), `tp->delivered`.
    pub delivered: u64,
    /// Time (µs) of the last delivery, `tp->delivered_mstamp` (reset to the send time when a
    /// transmission starts with nothing in flight). Maintained by the sender's rate sampler.
    pub delivered_mstamp_us: u64,
    /// Earliest departure time (ns) of the next transmission, `tp->tcp_wstamp_ns` (EDT pacing).
    /// BBR uses it to estimate the packets still "in the network" at that time.
    pub wstamp_ns: u64,
    /// Packets delivered by ACKs that carried ECE (`tp->delivered_ce`, `tcp_count_delivered`).
    pub delivered_ce: u64,
    /// ECN negotiated on this connection (`tp->ecn_flags & TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// Total packets marked lost (`tp->lost`).
    pub lost: u64,
    /// `tp->app_limited`: 0, or the `delivered` count at which the app-limited bubble ends.
    pub app_limited: u64,
    /// Byte sequence numbers: oldest unacknowledged and next new byte.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Scoreboard counters (packets).
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Total retransmitted segments (`total_retrans`).
    pub total_retrans: u64,
    /// `tp->is_cwnd_limited` and `max_packets_out` as maintained by `tcp_cwnd_validate`.
    pub is_cwnd_limited_flag: bool,
    pub max_packets_out: u32,
    /// `sk_pacing_rate` in bit/s. For CCs without `cong_control` the core rewrites it after each ACK
    /// (Linux `tcp_update_pacing_rate`); BBR-like CCs set it themselves. Enforced only when
    /// `pacing_status != None` and the rate is > 0.
    pub pacing_rate_bps: f64,
    pub pacing_status: PacingStatus,
    /// `sk_pacing_shift` (TSQ/TSO sizing; 10 ⇒ ~1 ms of data), kept for BBR.
    pub pacing_shift: u32,
    /// Congestion-avoidance state (`icsk_ca_state`).
    pub ca_state: CaState,
    /// Current retransmission timeout (ns), `icsk_rto`.
    pub rto_ns: u64,
    /// Time of the last data transmission (ns), `lsndtime`.
    pub lsndtime_ns: u64,
    /// Peer's advertised receive window (bytes).
    pub snd_wnd: u64,
    /// RTT-measurement tick (µs) of a tick-based endpoint (`rtt_granularity_ns` / 1000; 0 = µs
    /// samples). FreeBSD's h_ertt reports `ticks − tx_ts + 1`, one tick above the floored
    /// samples the core delivers; the FreeBSD-derived CCs (HLDG) add it back.
    pub rtt_tick_us: u32,
    /// Slow start and additive increase count ACKs, not packets ACKed (Linux before 3.13 and
    /// 3.19; `TcpConfig::count_acks`, set by the TCP profiles of 2.6.36-3.12).
    pub count_acks: bool,
}

impl Sock {
    pub fn new(mss: u32, init_cwnd: u32) -> Self {
        Sock {
            now_ns: 0,
            now_us: 0,
            mss,
            cwnd: init_cwnd,
            ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: 0,
            init_cwnd,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            delivered: 0,
            delivered_mstamp_us: 0,
            wstamp_ns: 0,
            delivered_ce: 0,
            ecn_ok: false,
            lost: 0,
            app_limited: 0,
            snd_una: 0,
            snd_nxt: 0,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            total_retrans: 0,
            is_cwnd_limited_flag: false,
            max_packets_out: 0,
            pacing_rate_bps: 0.0,
            pacing_status: PacingStatus::None,
            pacing_shift: 10,
            ca_state: CaState::Open,
            rto_ns: 0,
            lsndtime_ns: 0,
            snd_wnd: 0,
            rtt_tick_us: 0,
            count_acks: false,
        }
    }

    /// `tcp_in_slow_start`: cwnd < ssthresh.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_packets_in_flight` = packets_out − (sacked_out + lost_out) + retrans_out.
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_is_cwnd_limited` (include/net/tcp.h, 6.x): limited in the current window, or in slow
    /// start while at least half of the window was used.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited_flag {
            return true;
        }
        if self.in_slow_start() {
            return self.cwnd < 2 * self.max_packets_out;
        }
        false
    }

    /// Whether the transmit path currently enforces `pacing_rate_bps`.
    #[inline]
    pub fn is_paced(&self) -> bool {
        self.pacing_status != PacingStatus::None && self.pacing_rate_bps > 0.0
    }

    /// `tcp_current_ssthresh`: ssthresh, or ¾·cwnd if larger, outside CWR/Recovery.
    pub fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }
}

/// Linux `enum tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// Congestion window restart after idle (RFC 2861).
    CwndRestart,
    /// End of a cwnd reduction (CWR or Recovery completed).
    CompleteCwr,
    /// RTO fired (entering Loss).
    Loss,
    /// ECN: a received data packet was not CE-marked / was CE-marked. In Linux these reach the
    /// *receiving* socket's CC; ccbench's receiver has no CC instance and runs the DCTCP ACK state
    /// machine itself (`cc::dctcp::CeAckState`), so a data sender never sees them, as in Linux.
    EcnNoCe,
    EcnIsCe,
}

/// `in_ack_event` flags (Linux `CA_ACK_*`).
pub const CA_ACK_SLOWPATH: u32 = 1 << 0;
pub const CA_ACK_WIN_UPDATE: u32 = 1 << 1;
pub const CA_ACK_ECE: u32 = 1 << 2;

/// Linux `struct ack_sample`, given to `pkts_acked`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Packets newly cumulatively ACKed (including ones SACKed earlier).
    pub pkts_acked: u32,
    /// RTT of the newest (S)ACKed never-retransmitted packet in µs, −1 if none.
    pub rtt_us: i64,
    /// Packets in flight when the newest ACKed packet was sent.
    pub in_flight: u32,
}

/// Linux `struct rate_sample` (net/ipv4/tcp_rate.c), given to `cong_control`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// `tx.delivered_mstamp` of the packet the sample is anchored on (µs); valid when `prior_valid`.
    pub prior_mstamp_us: u64,
    pub prior_valid: bool,
    /// `tp->delivered` when that packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over the interval; −1 = invalid sample.
    pub delivered: i64,
    pub delivered_ce: i64,
    /// max(send phase, ACK phase) in µs; −1 = invalid (e.g. shorter than min_rtt).
    pub interval_us: i64,
    pub snd_interval_us: i64,
    pub rcv_interval_us: i64,
    /// RTT of the last (S)ACKed packet in µs, −1 if none.
    pub rtt_us: i64,
    /// Packets newly marked lost by this ACK.
    pub losses: u32,
    /// Packets newly ACKed or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample's packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// The sample's packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK was probably delayed by the receiver.
    pub is_ack_delayed: bool,
    /// Packets in flight when the sample's packet was (re)sent, itself included
    /// (`rs->tx_in_flight`, BBRv3 tcp_rate.c).
    pub tx_in_flight: u32,
    /// `tp->lost` when that packet was sent (`scb->tx.lost`).
    pub prior_lost: u64,
    /// Packets marked lost since that packet was sent, this ACK's marks included
    /// (`rs->lost` = tp->lost − tx.lost, BBRv3).
    pub lost: u64,
}

/// Transmit-time snapshot of a packet just marked lost, for `skb_marked_lost` (BBRv3).
#[derive(Clone, Copy, Debug, Default)]
pub struct LostSkb {
    /// Packets in flight when it was sent, itself included (`tx.in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when it was sent (`tx.lost`).
    pub tx_lost: u64,
    /// Sent while application-limited (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// Its rate-sampling snapshot is still valid (`tx.delivered_mstamp != 0`).
    pub tx_valid: bool,
}

/// A congestion-control algorithm: Linux `struct tcp_congestion_ops`.
///
/// Call order per ACK is that of `tcp_ack()` (net/ipv4/tcp_input.c): `pkts_acked` from the
/// scoreboard update, `in_ack_event`, state changes via `set_state`/`ssthresh` from the
/// recovery state machine, then either `cong_control` (if `has_cong_control`) or the core's
/// PRR / `cong_avoid`.
pub trait CongestionControl: Send {
    /// Scheme name (as in the registry).
    fn name(&self) -> &'static str;
    /// Connection established (`init`); may set ssthresh, pacing status, etc.
    fn init(&mut self, _sk: &mut Sock) {}
    /// New ssthresh on entering CWR/Recovery/Loss (`ssthresh`, mandatory).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32;
    /// Window growth on an ACK in Open/Disorder/Loss when the core allows growth.
    fn cong_avoid(&mut self, _sk: &mut Sock, _acked: u32) {}
    /// Whether this CC implements `cong_control` (BBR-like). If true the core skips PRR,
    /// `cong_avoid`, the end-of-reduction cwnd reset, restart-after-idle and its own pacing rate.
    fn has_cong_control(&self) -> bool {
        false
    }
    /// Called on every ACK instead of the core's cwnd logic when `has_cong_control()`.
    /// Returns whether it handled cwnd (if false the core falls back to PRR / `cong_avoid`).
    fn cong_control(&mut self, _sk: &mut Sock, _rs: &RateSample) -> bool {
        false
    }
    /// `sndbuf_expand`: the send buffer `tcp_sndbuf_expand` provisions, in multiples of the
    /// window's worst-case memory (Linux default 2; BBR 3).
    fn sndbuf_expand(&self) -> u32 {
        2
    }
    /// CA state change (called before the state is written to `sk.ca_state`).
    fn set_state(&mut self, _sk: &mut Sock, _new_state: CaState) {}
    /// CA events (`cwnd_event`).
    fn cwnd_event(&mut self, _sk: &mut Sock, _ev: CaEvent) {}
    /// ACK that (S)ACKed data: RTT sample (`pkts_acked`).
    fn pkts_acked(&mut self, _sk: &mut Sock, _sample: &AckSample) {}
    /// Every ACK (`in_ack_event`), flags `CA_ACK_*`.
    fn in_ack_event(&mut self, _sk: &mut Sock, _flags: u32) {}
    /// A packet was just marked lost, after `tp->lost` counted it (`skb_marked_lost`, BBRv3).
    fn skb_marked_lost(&mut self, _sk: &mut Sock, _skb: &LostSkb) {}
    /// cwnd to restore after a spurious reduction (`undo_cwnd`).
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_undo_cwnd(sk)
    }
    /// Floor of rate-halving recovery (`tcp: {prr: false}`, kernels before 3.2): the `min_cwnd`
    /// hook of those kernels' `tcp_congestion_ops`, through `tcp_cwnd_min()`; without the hook,
    /// ssthresh. Reno-like modules used `tcp_reno_min_cwnd` (ssthresh/2): see [`reno_min_cwnd`].
    fn min_cwnd(&self, sk: &Sock) -> u32 {
        sk.ssthresh
    }
    /// The CC's own trace variables, appended as (name, value).
    fn sample(&self, _out: &mut Vec<(&'static str, f64)>) {}
    /// Linux `TCP_CONG_NEEDS_ECN`: the connection requests ECN even when the flow's group does
    /// not ask for it (DCTCP). The engine negotiates ECN for such flows unless the group says
    /// `ecn: false`; the receiver then runs the DCTCP ACK state machine.
    fn needs_ecn(&self) -> bool {
        false
    }
    /// ccbench: the sender may hold small sends for the next ACK as Linux's TCP does
    /// (`tcp_tso_should_defer`, tcp/sender/defer.rs; `tcp: {tso-defer: …}`). False for an
    /// algorithm whose reference implementation sends each packet when its window or pacing
    /// allows (Copa's user-space genericCC over UDP): its model would otherwise change with
    /// the host stack it was never run on.
    fn tso_defer(&self) -> bool {
        true
    }
    /// ccbench: the endpoint must use non-SACK (NewReno, RFC 6582) recovery for this flow, as if
    /// SACK were not negotiated (the `newreno` scheme). The engine turns SACK off at both ends.
    fn needs_non_sack_recovery(&self) -> bool {
        false
    }
}

/// `tcp_slow_start` (tcp_cong.c, packet-counting form ≥ 4.0): cwnd = min(cwnd + acked, ssthresh),
/// clamped; returns the `acked` left over for congestion avoidance. With `count_acks` the form
/// before 3.13: +1 per ACK.
pub fn tcp_slow_start(sk: &mut Sock, acked: u32) -> u32 {
    if sk.count_acks {
        // before 3.13 ("tcp: properly handle stretch acks in slow start"): one packet per ACK,
        // however many it ACKed, and nothing left over for congestion avoidance
        sk.cwnd = sk.cwnd.saturating_add(1).min(sk.cwnd_clamp);
        return 0;
    }
    let cwnd = sk.cwnd.saturating_add(acked).min(sk.ssthresh);
    let left = acked - (cwnd - sk.cwnd);
    sk.cwnd = cwnd.min(sk.cwnd_clamp);
    left
}

/// `tcp_cong_avoid_ai` (tcp_cong.c): cwnd += 1 per `w` packets acked, credit carried in
/// `snd_cwnd_cnt`. With `count_acks` the form before 3.19: one credit per ACK.
pub fn tcp_cong_avoid_ai(sk: &mut Sock, w: u32, acked: u32) {
    if sk.count_acks {
        // before 3.19 ("tcp: fix the timid additive increase on stretch ACKs"): one credit per
        // ACK, so delayed ACKs halve the growth
        if sk.snd_cwnd_cnt >= w {
            if sk.cwnd < sk.cwnd_clamp {
                sk.cwnd += 1;
            }
            sk.snd_cwnd_cnt = 0;
        } else {
            sk.snd_cwnd_cnt += 1;
        }
        return;
    }
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if sk.snd_cwnd_cnt >= w {
        sk.snd_cwnd_cnt = 0;
        sk.cwnd += 1;
    }
    sk.snd_cwnd_cnt += acked;
    if sk.snd_cwnd_cnt >= w {
        let delta = sk.snd_cwnd_cnt / w;
        sk.snd_cwnd_cnt -= delta * w;
        sk.cwnd += delta;
    }
    sk.cwnd = sk.cwnd.min(sk.cwnd_clamp);
}

/// `tcp_reno_undo_cwnd`: max(cwnd, prior_cwnd).
pub fn tcp_reno_undo_cwnd(sk: &Sock) -> u32 {
    sk.cwnd.max(sk.prior_cwnd)
}

/// `tcp_reno_min_cwnd` (tcp_cong.c before 3.2's PRR made the hook unused): ssthresh/2. The
/// 2.6.36-era modules with it: reno, scalable, illinois, hybla, highspeed, vegas, yeah, lp
/// (westwood had its own; cubic, bic, htcp and veno had none, so ssthresh).
pub fn reno_min_cwnd(sk: &Sock) -> u32 {
    sk.ssthresh / 2
}

/// `tcp_reno_ssthresh`: max(cwnd/2, 2).
pub fn tcp_reno_ssthresh(sk: &Sock) -> u32 {
    (sk.cwnd >> 1).max(2)
}

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------

/// A registered scheme: what its file declares at its end (`<module>::SCHEMES`).
pub struct SchemeInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamInfo],
    /// Constructor from the checked parameters.
    pub make: fn(&Params) -> Result<Box<dyn CongestionControl>, String>,
}

/// Declares the algorithm modules and lists their `SCHEMES`, in the order `ccbench schemes`
/// shows them.
macro_rules! registry {
    ($($m:ident),* $(,)?) => {
        $(pub mod $m;)*
        static MODULES: &[&[SchemeInfo]] = &[$($m::SCHEMES),*];
    };
}

registry!(
    bbr, bbr3, reno, newreno, dctcp, cubic, bic, westwood, htcp, highspeed, hybla, scalable, vegas,
    veno, yeah, lp, nv, illinois, hldg, copa, cdg,
);

/// All registered schemes.
pub fn schemes() -> impl Iterator<Item = &'static SchemeInfo> {
    MODULES.iter().flat_map(|m| m.iter())
}

/// Construct a scheme by name. `params` is a JSON object (or null) of the scheme's parameters.
pub fn make(name: &str, params: &serde_json::Value) -> Result<Box<dyn CongestionControl>, String> {
    let info = schemes().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = schemes().map(|s| s.name).collect();
        format!("unknown congestion control scheme {:?}; known schemes: {}", name, known.join(", "))
    })?;
    (info.make)(&netmodel::params::checked(name, info.params, params)?)
}

/// The parameters the engine hands to `make` for a flow: schemes that take `seed`/`stream`
/// parameters (randomised CCs) get the experiment seed and the flow id unless the experiment
/// sets them, so their random draws are a pure function of (experiment seed, flow).
pub fn engine_params(name: &str, params: &serde_json::Value, seed: u64, stream: u64) -> serde_json::Value {
    let takes_seed = schemes().any(|s| s.name == name && s.params.iter().any(|p| p.name == "seed"));
    let mut obj = match params {
        serde_json::Value::Null if takes_seed => serde_json::Map::new(),
        serde_json::Value::Object(m) if takes_seed => m.clone(),
        _ => return params.clone(),
    };
    obj.entry("seed").or_insert(serde_json::Value::from(seed));
    obj.entry("stream").or_insert(serde_json::Value::from(stream));
    serde_json::Value::Object(obj)
}

/// The parameters with `generation` (a TCP profile's Linux release) added for schemes that
/// model older kernels (a `generation` parameter), unless the experiment sets it itself.
pub fn with_generation(name: &str, params: &serde_json::Value, generation: Option<u32>) -> serde_json::Value {
    let Some(g) = generation else { return params.clone() };
    if !schemes().any(|s| s.name == name && s.params.iter().any(|p| p.name == "generation")) {
        return params.clone();
    }
    let mut obj = match params {
        serde_json::Value::Object(m) => m.clone(),
        serde_json::Value::Null => serde_json::Map::new(),
        _ => return params.clone(),
    };
    obj.entry("generation").or_insert(serde_json::Value::from(g));
    serde_json::Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before 3.13/3.19 slow start and additive increase counted ACKs: a delayed ACK of two
    /// packets adds one packet in slow start (not two, and nothing carried over), and one
    /// credit towards `w`.
    #[test]
    fn count_acks_grows_cwnd_per_ack() {
        let mut s = sk(10, 100);
        s.count_acks = true;
        assert_eq!(tcp_slow_start(&mut s, 2), 0);
        assert_eq!(s.cwnd, 11);
        let mut t = sk(10, 100);
        assert_eq!(tcp_slow_start(&mut t, 2), 0);
        assert_eq!(t.cwnd, 12);
        let (mut a, mut b) = (sk(20, 10), sk(20, 10));
        a.count_acks = true;
        for _ in 0..21 {
            tcp_cong_avoid_ai(&mut a, 20, 2);
            tcp_cong_avoid_ai(&mut b, 20, 2);
        }
        assert_eq!((a.cwnd, b.cwnd), (21, 22));
    }

    /// A TCP profile's release reaches the schemes that model older kernels (cubic's
    /// `generation`), never overrides an explicit parameter and leaves other schemes alone.
    #[test]
    fn profile_generation_reaches_cubic_only() {
        use serde_json::json;
        assert_eq!(with_generation("cubic", &json!(null), Some(31000)), json!({"generation": 31000}));
        assert_eq!(with_generation("cubic", &json!({"generation": 0, "beta": 700}), Some(31000)),
                   json!({"generation": 0, "beta": 700}));
        assert_eq!(with_generation("cubic", &json!({"beta": 700}), None), json!({"beta": 700}));
        assert_eq!(with_generation("reno", &json!(null), Some(31000)), json!(null));
    }

    fn sk(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s
    }

    #[test]
    fn slow_start_caps_at_ssthresh_and_returns_leftover() {
        let mut s = sk(10, 14);
        assert_eq!(tcp_slow_start(&mut s, 2), 0);
        assert_eq!(s.cwnd, 12);
        // 12 + 5 would be 17 > 14: cwnd = 14, 3 left for CA.
        assert_eq!(tcp_slow_start(&mut s, 5), 3);
        assert_eq!(s.cwnd, 14);
    }

    #[test]
    fn cong_avoid_ai_adds_one_per_window_with_credit() {
        let mut s = sk(10, 5);
        // 9 acked: no increase yet, credit 9.
        tcp_cong_avoid_ai(&mut s, 10, 9);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (10, 9));
        // 1 more: cwnd 11, credit 0.
        tcp_cong_avoid_ai(&mut s, 10, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (11, 0));
        // A stretch ACK of 25 at w = 11: +2, credit 3.
        tcp_cong_avoid_ai(&mut s, 11, 25);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (13, 3));
        // Credit accumulated at a higher w (cnt >= new w): +1 and reset first.
        s.snd_cwnd_cnt = 7;
        tcp_cong_avoid_ai(&mut s, 5, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (14, 1));
        // Clamp.
        s.cwnd_clamp = 14;
        tcp_cong_avoid_ai(&mut s, 1, 10);
        assert_eq!(s.cwnd, 14);
    }

    #[test]
    fn reno_undo_and_ssthresh() {
        let mut s = sk(20, 100);
        s.prior_cwnd = 30;
        assert_eq!(tcp_reno_undo_cwnd(&s), 30);
        assert_eq!(tcp_reno_ssthresh(&s), 10);
        s.cwnd = 3;
        assert_eq!(tcp_reno_ssthresh(&s), 2);
    }

    #[test]
    fn is_cwnd_limited_rules() {
        let mut s = sk(10, 100);
        s.max_packets_out = 4;
        assert!(!s.is_cwnd_limited()); // 10 >= 2*4
        s.max_packets_out = 6;
        assert!(s.is_cwnd_limited()); // slow start, more than half used
        s.ssthresh = 5; // CA: only the flag counts
        assert!(!s.is_cwnd_limited());
        s.is_cwnd_limited_flag = true;
        assert!(s.is_cwnd_limited());
    }

    #[test]
    fn registry_errors() {
        let e = make("nosuch", &serde_json::Value::Null).err().unwrap();
        assert!(e.contains("nosuch") && e.contains("reno") && e.contains("cubic"), "{}", e);
        let e = make("cubic", &serde_json::json!({"betta": 700})).err().unwrap();
        assert!(e.contains("betta") && e.contains("beta") && e.contains("hystart_detect"), "{}", e);
        let e = make("reno", &serde_json::json!({"x": 1})).err().unwrap();
        assert!(e.contains("\"x\"") && e.contains("(none)"), "{}", e);
        let e = make("cubic", &serde_json::json!({"beta": "high"})).err().unwrap();
        assert!(e.contains("beta") && e.contains("integer"), "{}", e);
        let e = make("cubic", &serde_json::json!({"hystart": "yes"})).err().unwrap();
        assert!(e.contains("hystart") && e.contains("boolean"), "{}", e);
        let e = make("cubic", &serde_json::json!([1, 2])).err().unwrap();
        assert!(e.contains("object"), "{}", e);
        let e = make("cubic", &serde_json::json!({"beta": 2000})).err().unwrap();
        assert!(e.contains("[1, 1023]"), "{}", e);
        assert_eq!(make("cubic", &serde_json::json!({"beta": 819, "hystart": false})).unwrap().name(), "cubic");
        assert_eq!(make("reno", &serde_json::json!({})).unwrap().name(), "reno");
        // Names are unique (the count grows as schemes are added).
        let mut names: Vec<&str> = schemes().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), schemes().count());
        for s in schemes() {
            assert!(make(s.name, &serde_json::Value::Null).is_ok());
            // Every scheme constructs under its own name.
            assert_eq!(make(s.name, &serde_json::Value::Null).unwrap().name(), s.name);
        }
    }
}
