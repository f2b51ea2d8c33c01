//! The [`Qdisc`] interface, the pieces the disciplines share (the timestamped [`Fifo`], limit
//! test, CE marking) and the active queue management disciplines, one file each, written after
//! the Linux qdiscs named in each file (same state machines, same fixed-point arithmetic, same
//! defaults). Differences from Linux are listed at the top of each file. All of them count
//! sizes in IP bytes (see [`crate::queue`]) and take the time as an argument: no clock, no
//! timers. Periodic work (PIE's probability update) is replayed lazily, at the exact instants
//! it was due, the next time the discipline is called; between calls its inputs do not change,
//! so this is exact. The configuration that builds them, and the plain FIFOs, are in
//! [`crate::queue`]: the dependency goes from there to here only.

use std::collections::VecDeque;

use crate::{Nanos, PktMeta, ECN_CE};

pub mod codel;
pub mod drr;
pub mod fq_codel;
pub mod fq_pie;
pub mod pie;
pub mod red;

/// The interface every queue discipline implements. Drops are reported through `drops`
/// so that disciplines that drop other packets than the arriving one (drop-head, AQMs at
/// dequeue) fit the same interface. `now` never decreases between calls.
pub trait Qdisc: Send {
    /// Offer a packet at time `now`; dropped packets (possibly this one) are pushed to `drops`.
    fn enqueue(&mut self, now: Nanos, pkt: PktMeta, drops: &mut Vec<PktMeta>);
    /// Take the next packet to serialise, if any; packets dropped at dequeue go to `drops`.
    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<PktMeta>) -> Option<PktMeta>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Packets CE-marked by this queue since it was built (a packet that arrives already CE
    /// is not counted again).
    fn marks(&self) -> u64 {
        0
    }
    /// Sojourn time of the packet most recently *dequeued for transmission* (its dequeue time
    /// minus its enqueue time; packets dropped at dequeue do not count), `None` before the
    /// first one. This is the delay CoDel controls and what Linux reports as `ldelay`.
    fn sojourn_ns(&self) -> Option<Nanos> {
        None
    }
    /// Whether `dequeue` may drop packets (AQMs that drop at the head). A loop that touches
    /// the link less often then records such drops at other instants; see
    /// [`crate::Link::fifo_exit`].
    fn drops_at_dequeue(&self) -> bool {
        true
    }
}

/// The codepoint change of a CE mark (Linux `INET_ECN_set_ce`): returns whether the packet is
/// ECN-capable (then it carries CE and must not be dropped); `marks` counts ECT→CE changes.
#[inline]
pub(crate) fn set_ce(pkt: &mut PktMeta, marks: &mut u64) -> bool {
    if !pkt.is_ect() {
        return false;
    }
    if pkt.ecn != ECN_CE {
        pkt.ecn = ECN_CE;
        *marks += 1;
    }
    true
}

/// Would a packet of `size` bytes exceed a limit of a queue holding `len` packets and `bytes`?
#[inline]
pub(crate) fn over_limit(packets: Option<u32>, bytes: Option<u64>, len: usize, held: u64, size: u32) -> bool {
    packets.is_some_and(|l| len as u64 >= l as u64) || bytes.is_some_and(|l| held + size as u64 > l)
}

/// A FIFO of packets with their enqueue times, counting bytes.
#[derive(Default)]
pub(crate) struct Fifo {
    q: VecDeque<(PktMeta, Nanos)>,
    bytes: u64,
}

impl Fifo {
    #[inline]
    pub fn push(&mut self, pkt: PktMeta, now: Nanos) {
        self.bytes += pkt.size as u64;
        self.q.push_back((pkt, now));
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(PktMeta, Nanos)> {
        let e = self.q.pop_front()?;
        self.bytes -= e.0.size as u64;
        Some(e)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

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
