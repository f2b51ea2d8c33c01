//! dgram: a congestion-controlled datagram transport beside the TCP endpoint.
//!
//! Pantheon's user-space schemes (PCC, LEDBAT, Sprout, Verus, SCReAM, Indigo, RemyCC, QUIC
//! Cubic) are not TCP window algorithms: they send sequenced datagrams at a rate and/or under
//! a window their algorithm sets, and their receivers acknowledge each packet or report per
//! interval. This crate holds that transport **without I/O**: callers pass the time in
//! (`u64` nanoseconds) and hand packets in and out, so the same code is the simulator's
//! datagram endpoint (virtual time) and the `ccbench-dgram` process that sends real UDP on
//! the kernel backend (wall-clock time).
//!
//! - [`cc`]: the interface every algorithm implements ([`cc::DgramCc`]), its feedback types,
//!   and the registry (`cc::make`, `cc::schemes`): one file per algorithm under `src/cc/`,
//!   each ending with its registration as the TCP algorithms of the simulator do.
//! - [`wire`]: the binary format of data packets and acknowledgements.
//! - [`sender`]: sequencing, pacing, the window, loss detection and the RTT estimate around
//!   one algorithm; [`receiver`]: acknowledgement by the scheme's policy, the receiver half.
//!
//! Docs: docs/datagram.md.

pub mod cc;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use receiver::Receiver;
pub use sender::{Sender, SenderConfig};

/// The seed a flow's algorithm is built with: the experiment's seed and the flow id mixed
/// (splitmix64), the same on both backends.
pub fn flow_seed(seed: u64, flow: u32) -> u64 {
    let mut z = seed ^ (flow as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Datagram bytes of a packet whose IP packet is `ip_bytes` (IPv4 20 + UDP 8 less).
pub fn dgram_bytes(ip_bytes: u32) -> u32 {
    ip_bytes.saturating_sub(28).max(wire::DATA_HDR as u32)
}
