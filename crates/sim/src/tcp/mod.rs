//! Linux-faithful TCP endpoint as a pure state machine (no clock, no I/O): the event loop
//! passes `now` (ns) into every call. The behaviour is Linux 6.x's (net/ipv4/tcp_input.c,
//! tcp_output.c, tcp_timer.c, tcp_recovery.c, tcp_rate.c); `sender/mod.rs` and `receiver.rs` say
//! what is (and is not) implemented.
//!
//! Sequence numbers are byte offsets; 0 is the first payload byte after the handshake.

mod receiver;
mod sender;
#[cfg(test)]
mod harness_tests;
#[cfg(test)]
mod ecn_tests;

pub use crate::cc::CaState;
pub use receiver::TcpReceiver;
pub use sender::TcpSender;

/// IPv4 (20) + TCP (20) + timestamp option (12, aligned) header bytes on every segment.
pub const HDR_BYTES: u32 = 52;
/// IP bytes of a SYN / SYN-ACK: 20 + 20 + 20 option bytes (MSS 4, SACK-permitted 2,
/// timestamps 10, window scale 3, padding) as Linux sends them.
pub const SYN_BYTES: u32 = 60;

/// F-RTO generation (`net.ipv4.tcp_frto` = 2 in every one; sender/undo.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum Frto {
    /// No F-RTO (`tcp_frto` = 0): every RTO is a conventional timeout recovery.
    #[serde(rename = "off")]
    Off,
    /// The F-RTO of 2.6.22-3.9 (`tcp_enter_frto` / `tcp_process_frto`, SACK-enhanced, RFC 4138
    /// appendix B): the timeout keeps the window until two ACKs judge it; a spurious timeout is
    /// answered by `tcp_frto_response` 0, a rate-halving CWR to the halved ssthresh.
    #[serde(rename = "pre-3.10")]
    Pre310,
    /// RFC 5682 as rewritten in 3.10 ("tcp: new F-RTO implementation"): after the RTO
    /// retransmission's ACK the sender sends new data; an ACK of never-retransmitted data then
    /// shows the timeout spurious and the reduction is undone.
    #[serde(rename = "rfc5682")]
    Rfc5682,
}

/// TCP Small Queues generation (sender/output.rs `tsq_check`): how much of a sender's data may
/// sit in its host's link (qdisc and device) before it stops and waits for a transmission to
/// complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum Tsq {
    /// No limit: everything the windows allow goes into the host's link at once.
    #[serde(rename = "off")]
    Off,
    /// 3.6-3.11 ("tcp: TCP Small Queues", 46d3ceabd8d9): new data stops while the flow has
    /// `limit_output_bytes` or more of skb truesize in the host's link.
    #[serde(rename = "3.6")]
    V3_6,
    /// 3.12-4.x ("tcp: TSQ can use a dynamic limit", c9eeec26e32e): the limit is two skbs or
    /// 1 ms at the pacing rate, at most `limit_output_bytes`.
    #[serde(rename = "3.12")]
    V3_12,
    /// Today's `tcp_small_queue_check`: as 3.12, the cap only for unpaced flows, twice the
    /// limit for retransmissions, and never while at most one skb is unacknowledged.
    #[serde(rename = "current")]
    Current,
}

/// Endpoint configuration (Linux defaults: include/net/tcp.h, Documentation/networking/ip-sysctl.rst).
/// Its `Default` is the authority for the defaults of the experiment file's `tcp:` keys
/// (serialised for Python by `ccbench._core.tcp_defaults()`; python/ccbench/config/tcpkeys.py).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct TcpConfig {
    /// Payload bytes per segment (1448 at MTU 1500 with timestamps).
    pub mss: u32,
    /// Initial congestion window, packets (`TCP_INIT_CWND`).
    pub init_cwnd: u32,
    /// A fixed receive window the receiver advertises (no autotuning); None = Linux's
    /// autotuned window from `rmem` (receiver.rs).
    pub rwnd_bytes: Option<u64>,
    /// `tcp_rmem` [min, default, max] bytes: the receive buffer starts at default and DRS grows
    /// it up to max (the window is half the buffer, `scaling_ratio` 50 %).
    pub rmem: [u64; 3],
    /// `tcp_moderate_rcvbuf`: DRS receive-buffer autotuning. Linux default on.
    pub moderate_rcvbuf: bool,
    /// `tcp_adv_win_scale` of the kernels before 6.5: the window is `space − space/2^n` of the
    /// buffer (n > 0) or `space/2^−n` (n ≤ 0); 2 before 3.4, 1 from 3.4. None = today's
    /// `scaling_ratio`, held at its initial 50 % (receiver.rs).
    pub adv_win_scale: Option<i32>,
    /// Segments the SYN-ACK's window may offer at most (`tcp_select_initial_window`'s
    /// `init_cwnd`, the route's `initrwnd`): 4 before 2.6.38, 10 to 3.11, 20 (twice
    /// `TCP_INIT_CWND`) from 3.12 to 4.19; None = no cap (≥ 4.20, the offer is the buffer's).
    pub init_rwnd: Option<u32>,
    /// DRS as before 3.13 (`tcp_rcv_space_adjust`: the buffer and `window_clamp` follow twice the
    /// bytes read in the last RTT, no slow-start boost; `rcvq_space` starts at the SYN-ACK's
    /// window; `tcp_fixup_rcvbuf` at establishment). false = today's.
    pub legacy_drs: bool,
    /// The Linux release (major·10000 + minor·100 + patch) whose congestion-control modules a
    /// TCP profile runs: handed to schemes with a `generation` parameter (cubic) that do not set
    /// it. None = today's.
    pub cc_generation: Option<u32>,
    /// Slow start and additive increase count ACKs, not packets ACKed, as Linux before 3.13
    /// ("tcp: properly handle stretch acks in slow start") and 3.19 ("tcp: fix the timid
    /// additive increase on stretch ACKs"): with delayed ACKs both grow at about half the rate.
    pub count_acks: bool,
    /// The receiver ACKs a full-sized segment carrying PSH as soon as its application has read
    /// it (`ICSK_ACK_PUSHED` set in `tcp_measure_rcv_mss`, sent by `tcp_cleanup_rbuf`), as Linux
    /// since 6.6 ("tcp: fix delayed ACKs for MSS boundary condition", 4720852ed9af, also in the
    /// stable trees); false = it waits for its pair or the delayed-ACK timer, as before.
    pub push_ack: bool,
    /// `tcp_wmem` [min, default, max] bytes: the send buffer (`sk_sndbuf`, in skb truesize)
    /// starts at default and `tcp_sndbuf_expand` grows it up to max; the application may keep
    /// at most that much memory written and not yet ACKed (sender/sndbuf.rs).
    pub wmem: [u64; 3],
    /// Receiver delays ACKs (every 2nd full segment, 40 ms timer, quick-ACK); false = ACK every segment.
    pub delayed_ack: bool,
    /// SACK (+ D-SACK) negotiated. `false`: the receiver sends no SACK blocks and the sender
    /// uses Linux's non-SACK (NewReno, RFC 6582) recovery (`tcp_is_reno()` in tcp_input.c).
    pub sack: bool,
    /// `TCP_RTO_MIN` (ns).
    pub min_rto_ns: u64,
    /// `TCP_TIMEOUT_INIT` (ns).
    pub initial_rto_ns: u64,
    /// Model an `fq` qdisc on the sender: enforce Linux's default `sk_pacing_rate`
    /// (2× cwnd/srtt in slow start, 1.2× in CA) for non-BBR CCs. Off by default.
    pub pacing_default: bool,
    /// `tcp_slow_start_after_idle` (RFC 2861 restart and cwnd validation). Linux default on.
    pub slow_start_after_idle: bool,
    /// Tail loss probes (`tcp_early_retrans` = 3). Linux default on.
    pub tlp: bool,
    /// RACK loss detection (Linux ≥ 4.4, RFC 8985). `false`: the FACK/dupthresh scoreboard of
    /// the kernels before it (`tcp_update_scoreboard`, `tcp_mark_lost_retrans`; sender/rack.rs).
    pub rack: bool,
    /// Early retransmit (RFC 5827, Linux 3.5–4.3 with `rack: false`; delayed by max(srtt/4,
    /// 2 ms) as `tcp_early_retrans` 2 and 3 did): with fewer than 4 packets out, at least one
    /// SACKed and no new data to send, the head is retransmitted without waiting for 3 SACKs.
    /// RACK subsumes it; it matters only with `rack: false`.
    pub early_retransmit: bool,
    /// Proportional Rate Reduction in Recovery/CWR (Linux ≥ 3.2, RFC 6937). `false`: the
    /// rate-halving of earlier kernels (`tcp_cwnd_down`: cwnd −1 every second ACK down to the
    /// CC's `min_cwnd`, never above in-flight + 1; ends at min(cwnd, ssthresh)).
    pub prr: bool,
    /// Receiver SACK compression (≥ 4.18): after 3 immediate dupACKs for the same rcv_nxt,
    /// out-of-order ACKs are delayed by `comp_sack_delay_ns`, at most `TCP_COMP_SACK_NR` at a time.
    pub sack_compression: bool,
    /// `net.ipv4.tcp_min_tso_segs`: the fewest segments `tcp_tso_autosize` puts in one skb
    /// (Linux's default 2). The simulator uses it for the send buffer's skb accounting only:
    /// its sender does not form multi-segment sends.
    pub min_tso_segs: u32,
    /// `tcp_tso_should_defer` (TSO's Nagle test, John Heffner's): with multi-segment skbs the
    /// sender holds back a send the windows allow when it is smaller than an autosized skb and
    /// a third of the window, the next ACK is due within min(srtt/2, 1 ms), and something was
    /// sent in the last millisecond; the next ACK then sends more at once. Linux has no switch
    /// for it; here it is opt-in (default false: every ACK that opens the window sends) until
    /// the agreement matrix shows it helps everywhere (sender/defer.rs, docs/fidelity.md).
    pub tso_defer: bool,
    /// Undo of spurious reductions (`tcp_try_undo_recovery`, `_partial`, `_dsack`, `_loss`): the
    /// reduction is reverted when D-SACKs show every retransmission of the episode was needless
    /// or a timestamp echo shows the original arrived (Eifel detection, RFC 3522). Every Linux
    /// generation has it; false only for ablation (sender/undo.rs).
    pub undo: bool,
    /// F-RTO, the spurious-RTO detection after a timeout (sender/undo.rs).
    pub frto: Frto,
    /// TCP Small Queues on the sender's first link. Off by default: the kernels ccbench
    /// compares with see their link behind a TUN device (and ns-3 DCE's behind its NetDevice),
    /// which frees each skb as it takes it, so TSQ never binds there (docs/simulator.md).
    pub tsq: Tsq,
    /// `net.ipv4.tcp_limit_output_bytes` (TSQ's cap): 131072 in 3.6, 4 MiB today.
    pub limit_output_bytes: u64,
    /// `tcp_comp_sack_delay_ns` upper bound (1 ms). Linux uses min(this, rtt/20); see receiver.rs.
    pub comp_sack_delay_ns: u64,
    /// ECN negotiated (RFC 3168). Set per flow by the engine (`flow_tcp_config`).
    pub ecn: bool,
    /// Receiver runs DCTCP's CE-state ACK machine (`dctcp_ece_ack_update`) instead of the
    /// RFC 3168 "ECE until CWR" echo; set by the engine when the flow's CC needs ECN.
    pub ecn_precise_ack: bool,
    /// Granularity of every RTT sample the estimator and the CC see (ns); 0 = Linux's µs.
    /// Samples are floored to a multiple (at least one tick), like tick-based stacks
    /// (FreeBSD `ticks`, pre-4.x Linux jiffies). See `TcpSender::quantise_rtt_us`.
    pub rtt_granularity_ns: u64,
    /// Delayed-ACK timeout (ns): Linux `TCP_DELACK_MIN` = `TCP_ATO_MIN` = 40 ms; the FreeBSD
    /// profile uses 100 ms (`net.inet.tcp.delacktime`). Replaces both constants in the receiver.
    pub delayed_ack_timeout_ns: u64,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            init_cwnd: 10,
            rwnd_bytes: None,
            rmem: [4096, 131072, 33554432],
            moderate_rcvbuf: true,
            adv_win_scale: None,
            init_rwnd: None,
            legacy_drs: false,
            cc_generation: None,
            count_acks: false,
            push_ack: true,
            wmem: [4096, 16384, 4194304],
            delayed_ack: true,
            sack: true,
            min_rto_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            pacing_default: false,
            slow_start_after_idle: true,
            tlp: true,
            rack: true,
            early_retransmit: true,
            prr: true,
            sack_compression: true,
            min_tso_segs: 2,
            tso_defer: false,
            undo: true,
            frto: Frto::Rfc5682,
            tsq: Tsq::Off,
            limit_output_bytes: 4 << 20,
            comp_sack_delay_ns: 1_000_000,
            ecn: false,
            ecn_precise_ack: false,
            rtt_granularity_ns: 0,
            delayed_ack_timeout_ns: 40_000_000,
        }
    }
}

/// The endpoint configuration of one flow: the flow's own `tcp` (else the experiment's), with
/// the run's MSS, ECN negotiated per `ecn` (None = iff the CC needs it, Linux
/// `TCP_CONG_NEEDS_ECN`) and SACK off when the CC needs non-SACK recovery (`newreno`).
pub fn flow_tcp_config(
    global: &TcpConfig,
    flow: Option<&TcpConfig>,
    ecn: Option<bool>,
    mss: u32,
    cc: &dyn crate::cc::CongestionControl,
) -> TcpConfig {
    let mut t = flow.unwrap_or(global).clone();
    t.mss = mss;
    t.ecn = ecn.unwrap_or(t.ecn || cc.needs_ecn());
    t.ecn_precise_ack = t.ecn && cc.needs_ecn();
    if cc.needs_non_sack_recovery() {
        t.sack = false;
    }
    t
}

/// A data segment (sender → receiver).
#[derive(Clone, Copy, Debug, Default)]
pub struct DataSeg {
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes (0 for a SYN).
    pub len: u32,
    pub syn: bool,
    /// This transmission is a retransmission (incl. TLP probes of old data).
    pub retrans: bool,
    /// Timestamp option value (sender clock, ns; Linux's TSval has ms granularity).
    pub tsval_ns: u64,
    /// Timestamp echo: the TSval of the latest ACK the sender received (receiver clock, ns);
    /// the receiver's RTT samples for receive-buffer autotuning (`tcp_rcv_rtt_measure_ts`).
    pub tsecr_ns: u64,
    /// ECT(0) codepoint set by the sender (ECN negotiated; RFC 3168 §6.1.5 rules in sender/output.rs).
    pub ect: bool,
    /// CE-marked by a queue on the way (set by the engine on arrival).
    pub ce: bool,
    /// TCP CWR flag (the sender reduced its window after an ECE).
    pub cwr: bool,
    /// TCP PSH flag: the last segment of an application write (`tcp_push` → `tcp_mark_push`),
    /// or of half the largest window offered within a long one (`forced_push`).
    pub psh: bool,
}

impl DataSeg {
    /// Bytes on the wire at the IP layer.
    #[inline]
    pub fn ip_bytes(&self) -> u32 {
        if self.syn {
            SYN_BYTES
        } else {
            self.len + HDR_BYTES
        }
    }
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

/// An acknowledgement (receiver → sender).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSeg {
    /// Cumulative ACK: next expected byte.
    pub ack: u64,
    /// SACK blocks [start, end); if `dsack`, `sack[0]` is the D-SACK block.
    pub sack: [(u64, u64); 3],
    pub n_sack: u8,
    pub dsack: bool,
    /// SYN-ACK.
    pub syn: bool,
    /// Timestamp echo (the TSval of the segment that last advanced the window, ns).
    pub tsecr_ns: u64,
    /// Timestamp value (receiver clock = send time, ns; 0 = none).
    pub tsval_ns: u64,
    /// Advertised receive window (bytes beyond `ack`).
    pub rwnd: u64,
    /// TCP ECE flag (RFC 3168 echo, or DCTCP's per-packet CE echo).
    pub ece: bool,
}

impl AckSeg {
    /// Bytes on the wire at the IP layer: 52, plus the SACK option (2 NOP + kind + len = 4,
    /// 8 per block) when blocks are present; a SYN-ACK carries the 20-byte SYN option set.
    #[inline]
    pub fn ip_bytes(&self) -> u32 {
        if self.syn {
            SYN_BYTES
        } else if self.n_sack > 0 {
            HDR_BYTES + 4 + 8 * self.n_sack as u32
        } else {
            HDR_BYTES
        }
    }
}

/// One flow-state sample (the `flows` table row, minus time and flow id).
#[derive(Clone, Copy, Debug)]
pub struct FlowSample {
    /// Congestion window, packets.
    pub cwnd: u32,
    /// Slow-start threshold, packets; `u32::MAX` = infinite.
    pub ssthresh: u32,
    /// Smoothed RTT (µs), NaN (a null in the table) before the first sample.
    pub srtt_us: f64,
    /// RTT variation as tcp_info reports it (`mdev_us/4`, i.e. the smoothed mean deviation),
    /// µs; NaN before the first sample.
    pub rttvar_us: f64,
    /// Windowed minimum RTT (µs), NaN before the first sample.
    pub min_rtt_us: f64,
    /// Packets in flight (`tcp_packets_in_flight`).
    pub inflight: u32,
    /// Packets delivered (ACKed or SACKed).
    pub delivered: u64,
    /// Payload bytes cumulatively ACKed.
    pub bytes_acked: u64,
    /// Total retransmitted segments (incl. TLP probes and the RTO retransmissions).
    pub retrans: u64,
    /// Total packets marked lost.
    pub lost: u64,
    pub ca_state: CaState,
    /// `sk_pacing_rate` (bit/s) as Linux reports it in tcp_info; it is enforced only when paced.
    pub pacing_rate_bps: f64,
    /// Latest delivery-rate sample (bit/s), as tcp_info's `delivery_rate`.
    pub delivery_rate_bps: f64,
}

impl FlowSample {
    /// The sample as a `flows` row (netmodel::records).
    pub fn row(&self) -> netmodel::records::FlowRow {
        netmodel::records::FlowRow {
            cwnd: self.cwnd,
            ssthresh: (self.ssthresh != u32::MAX).then_some(self.ssthresh),
            srtt_us: self.srtt_us,
            rttvar_us: self.rttvar_us,
            min_rtt_us: self.min_rtt_us,
            inflight: self.inflight,
            delivered: self.delivered,
            bytes_acked: self.bytes_acked,
            retrans: self.retrans,
            lost: self.lost,
            ca_state: self.ca_state as u8,
            pacing_rate_bps: self.pacing_rate_bps,
            delivery_rate_bps: self.delivery_rate_bps,
        }
    }
}
