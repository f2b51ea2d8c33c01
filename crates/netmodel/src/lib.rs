//! netmodel: the network elements and results records shared by ccbench's simulator and its
//! emulator.
//!
//! Everything here is pure: no clock, no I/O, no threads. Callers pass the current time
//! (`u64` nanoseconds) into every call, so the same code runs in virtual time (the simulator)
//! and in wall-clock time (the emulator). Rates are bits per second, sizes are bytes.
//!
//! A [`Link`] is one *direction* of a physical link: a queue discipline at its input, a
//! serialiser that sends one packet at a time at the link rate, and a propagation delay line.
//! Packets are represented by a small `Copy` handle ([`PktMeta`]); the owner keeps the packet
//! contents elsewhere (a slab in the simulator, a buffer pool in the emulator).
//!
//! Links that name the same `channel` share one half-duplex medium instead ([`csma`]: ns-3's
//! CSMA bus); build a topology's links with [`Link::build_all`] so that they find each other.
//!
//! [`records`] holds the results tables both backends record: declared columns, the one
//! column encoding, and the recorders.

pub mod app;
pub mod arrivals;
pub mod csma;
pub mod delay;
pub mod impair;
pub mod link;
pub mod qdisc;
pub mod queue;
pub mod rate;
pub mod records;
pub mod params;
pub mod rng;
pub mod scenario;

pub use delay::{DelayFn, DelaySchedule};
pub use impair::{JitterConfig, LossConfig};
pub use link::{DelayAt, DropReason, Link, LinkConfig, LinkStats, Promotion};
pub use rate::RateTrace;
pub use queue::{DropTail, Qdisc, QueueConfig};
pub use rng::Rng;

/// Nanoseconds since the start of the experiment.
pub type Nanos = u64;

/// The handle of a packet inside the network model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PktMeta {
    /// Owner-defined identifier (slab index in the simulator).
    pub id: u32,
    /// Size in bytes as counted by queues and serialisers (IP packet size).
    pub size: u32,
    /// Flow the packet belongs to (for per-flow queues and statistics).
    pub flow: u32,
    /// ECN codepoint of the IP header (RFC 3168): [`ECN_NOT_ECT`], [`ECN_ECT1`], [`ECN_ECT0`]
    /// or [`ECN_CE`]. Queues that mark set it to `ECN_CE`.
    pub ecn: u8,
}

/// RFC 3168 ECN codepoints (the two low bits of the IP TOS / traffic-class byte).
pub const ECN_NOT_ECT: u8 = 0b00;
pub const ECN_ECT1: u8 = 0b01;
pub const ECN_ECT0: u8 = 0b10;
pub const ECN_CE: u8 = 0b11;

impl PktMeta {
    /// ECN-capable transport (ECT(0), ECT(1) or already CE).
    #[inline]
    pub fn is_ect(&self) -> bool {
        self.ecn != ECN_NOT_ECT
    }
}

/// Ask the CPU to bring the `bytes` from `p` on into its caches (a hint for a loop that knows
/// which cold structure it reads next; no effect on behaviour, none on other targets).
#[inline(always)]
pub fn prefetch<T: ?Sized>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = p as *const i8;
        let mut off = 0;
        while off < bytes {
            // SAFETY: a prefetch never faults, whatever the address.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.wrapping_add(off)) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// Transmission time of `bytes` at `rate_bps`, rounded up to whole nanoseconds.
#[inline]
pub fn tx_time_ns(bytes: u64, rate_bps: u64) -> Nanos {
    let bits_ns = bytes * 8 * 1_000_000_000;
    bits_ns.div_ceil(rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_for_common_rates() {
        assert_eq!(tx_time_ns(1500, 100_000_000), 120_000);
        assert_eq!(tx_time_ns(1500, 1_000_000_000), 12_000);
        assert_eq!(tx_time_ns(1500, 10_000_000_000), 1_200);
        // 1 byte at 3 bit/s = 2.67 s, rounded up.
        assert_eq!(tx_time_ns(1, 3), 2_666_666_667);
    }
}
