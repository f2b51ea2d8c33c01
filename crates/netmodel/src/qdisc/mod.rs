//! Active queue management disciplines, one file each, written after the Linux qdiscs named in
//! each file (same state machines, same fixed-point arithmetic, same defaults). Differences
//! from Linux are listed at the top of each file. All of them count sizes in IP bytes (see
//! [`crate::queue`]) and take the time as an argument: no clock, no timers. Periodic work
//! (PIE's probability update) is replayed lazily, at the exact instants it was due, the next
//! time the discipline is called; between calls its inputs do not change, so this is exact.

pub mod codel;
pub mod drr;
pub mod fq_codel;
pub mod fq_pie;
pub mod pie;
pub mod red;

/// `serde(default = ...)` helpers shared by the configurations.
pub(crate) mod defaults {
    pub fn t() -> bool {
        true
    }
    pub fn ms5() -> u64 {
        5_000_000
    }
    pub fn ms15() -> u64 {
        15_000_000
    }
    pub fn ms100() -> u64 {
        100_000_000
    }
    pub fn ms150() -> u64 {
        150_000_000
    }
    /// `psched_mtu()` of an Ethernet device (1500 + 14), used as the DRR quantum.
    pub fn quantum() -> u32 {
        1514
    }
    /// The MTU the AQMs compare backlogs with, in IP bytes (Linux: `psched_mtu()` = 1514 in
    /// L2 bytes; 1500 IP bytes keeps Linux's "one / two full-sized packets" meaning).
    pub fn mtu() -> u32 {
        1500
    }
    pub fn memory_limit() -> u64 {
        32 << 20
    }
}
