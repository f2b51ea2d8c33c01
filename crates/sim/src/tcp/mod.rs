//! Linux-faithful TCP endpoint as a pure state machine (no clock, no I/O): the event loop
//! passes `now` (ns) into every call. See linux-tcp.md §1–§8 for the behaviour modelled and
//! `sender.rs` / `receiver.rs` for what is (and is not) implemented.
//!
//! Sequence numbers are byte offsets; 0 is the first payload byte after the handshake.

mod receiver;
mod sender;
#[cfg(test)]
mod harness_tests;

pub use receiver::TcpReceiver;
pub use sender::TcpSender;

/// IPv4 (20) + TCP (20) + timestamp option (12, aligned) header bytes on every segment.
pub const HDR_BYTES: u32 = 52;
/// IP bytes of a SYN / SYN-ACK: 20 + 20 + 20 option bytes (MSS 4, SACK-permitted 2,
/// timestamps 10, window scale 3, padding) as Linux sends them.
pub const SYN_BYTES: u32 = 60;

/// Endpoint configuration (Linux defaults, linux-tcp.md §10).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default)]
pub struct TcpConfig {
    /// Payload bytes per segment (1448 at MTU 1500 with timestamps).
    pub mss: u32,
    /// Initial congestion window, packets (`TCP_INIT_CWND`).
    pub init_cwnd: u32,
    /// Receive window the receiver advertises (no autotuning).
    pub rwnd_bytes: u64,
    /// Receiver delays ACKs (every 2nd full segment, 40 ms timer, quick-ACK); false = ACK every segment.
    pub delayed_ack: bool,
    /// SACK (+ D-SACK) negotiated. `false` is not supported yet (NewReno core): the sender
    /// ignores it and the receiver then sends no SACK blocks.
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
    /// Receiver SACK compression (≥ 4.18): after 3 immediate dupACKs for the same rcv_nxt,
    /// out-of-order ACKs are delayed by `comp_sack_delay_ns`, at most `TCP_COMP_SACK_NR` at a time.
    pub sack_compression: bool,
    /// `tcp_comp_sack_delay_ns` upper bound (1 ms). Linux uses min(this, rtt/20); see receiver.rs.
    pub comp_sack_delay_ns: u64,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            init_cwnd: 10,
            rwnd_bytes: 32 << 20,
            delayed_ack: true,
            sack: true,
            min_rto_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            pacing_default: false,
            slow_start_after_idle: true,
            tlp: true,
            sack_compression: true,
            comp_sack_delay_ns: 1_000_000,
        }
    }
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
    pub ect: bool,
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
    /// Advertised receive window (bytes beyond `ack`).
    pub rwnd: u64,
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

/// Linux `icsk_ca_state`.
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

/// One flow-state sample (the `flows` table row, minus time and flow id).
#[derive(Clone, Copy, Debug)]
pub struct FlowSample {
    /// Congestion window, packets.
    pub cwnd: u32,
    /// Slow-start threshold, packets; `u32::MAX` = infinite.
    pub ssthresh: u32,
    /// Smoothed RTT (µs), 0 before the first sample.
    pub srtt_us: f64,
    /// RTT variation as tcp_info reports it (`mdev_us/4`, i.e. the smoothed mean deviation), µs.
    pub rttvar_us: f64,
    /// Windowed minimum RTT (µs), 0 before the first sample.
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
