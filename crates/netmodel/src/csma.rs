//! A shared half-duplex channel with the semantics of ns-3's CSMA model (`CsmaChannel`,
//! `CsmaNetDevice` and `Backoff` in ns-3's `src/csma/model/`).
//!
//! The links that name the same channel (`LinkConfig::channel`) are the *devices* of one
//! medium. The medium carries one frame at a time: a device may start a frame only when the
//! channel is idle; the frame then holds it for its transmission time (the channel's
//! TRANSMITTING state) and for the whole propagation delay after that (PROPAGATING), and the
//! channel is idle again only when the frame's last bit has reached the far end. Both
//! directions of a point-to-point CSMA link therefore share its data rate *and* its delay: a
//! 1518-byte frame on a 200 Mbit/s, 98 ms channel holds it for 60.7 µs + 98 ms, and data and
//! ACKs together get about ten frames per second.
//!
//! A device that finds the channel busy backs off and senses again, as ns-3 does, with a
//! truncated binary exponential backoff: after its n-th failed attempt it waits a whole number
//! of 1-µs slots drawn uniformly from `[1, min(2^min(n, 10) − 1, 1000))` (one slot for n = 1),
//! and after 1000 failed attempts it drops the frame (a MAC drop, [`DropReason::Channel`]) and
//! goes on with the next one. The counter restarts with every frame. After the end of its own
//! transmission a device waits one Ethernet interframe gap (96 bit times) before it takes the
//! next frame from its queue. The slots are drawn from the run's seeded generator, one stream
//! per link name, so a run repeats exactly.
//!
//! What ns-3 models and this does not: nothing about collisions either (ns-3 senses the medium
//! instantly and has none); one ns-3 device owns *one* queue for all its destinations, whereas
//! here every directed link is a device with its own queue, so a router that serves several
//! hosts over one shared segment contends with one backoff per destination.
//!
//! [`DropReason::Channel`]: crate::DropReason::Channel

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::{Nanos, PktMeta, Rng};

/// Backoff slot (ns-3 `Backoff::m_slotTime`).
pub const SLOT_NS: Nanos = 1_000;
/// Fewest and most slots of one backoff (`m_minSlots`, `m_maxSlots`).
pub const MIN_SLOTS: u64 = 1;
pub const MAX_SLOTS: u64 = 1000;
/// The exponent stops growing after this many failed attempts (`m_ceiling`).
pub const CEILING: u32 = 10;
/// Failed attempts after which a frame is dropped (`m_maxRetries`).
pub const MAX_RETRIES: u32 = 1000;
/// Interframe gap after a device's own transmission, in bit times (Ethernet's 96).
pub const IFG_BITS: u64 = 96;

/// One shared medium: the instant from which it is idle (the end of the propagation of the
/// last frame started on it). Cloned into every link that uses the channel.
#[derive(Clone, Debug, Default)]
pub struct Channel(Arc<AtomicU64>);

impl Channel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the channel is idle at `t` (nobody transmitting, nothing propagating).
    pub fn idle_at(&self, t: Nanos) -> bool {
        self.0.load(Ordering::Relaxed) <= t
    }

    /// A device started a frame: the channel is busy until `until`.
    fn seize(&self, until: Nanos) {
        self.0.store(until, Ordering::Relaxed);
    }
}

/// Where a device's transmit machine is (ns-3 `CsmaNetDevice::TxMachineState`, with the frame
/// being sent kept by the link itself while TRANSMITTING).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No frame in hand; the next enqueue starts one at once.
    Ready,
    /// `pkt` found the channel busy and senses it again at `at`.
    Backoff { pkt: PktMeta, at: Nanos },
    /// The link's `tx` frame is on the wire.
    Transmitting,
    /// The interframe gap after a transmission; the device is ready at `until`.
    Gap { until: Nanos },
}

/// What the sending end of a link on a shared channel adds to the link: its transmit state,
/// its backoff counter and generator.
pub(crate) struct Device {
    pub channel: Channel,
    pub phase: Phase,
    retries: u32,
    rng: Rng,
    pub ifg_ns: Nanos,
}

/// What an attempt to send did.
pub(crate) enum Attempt {
    /// The frame went on the wire; the channel is now busy until its arrival.
    Sent,
    /// The channel was busy; the frame waits for the next attempt (the phase says when).
    Deferred,
    /// The channel was busy for the last allowed time: the frame is dropped.
    Dropped(PktMeta),
}

impl Device {
    pub fn new(channel: Channel, rng: Rng, rate_bps: u64) -> Self {
        Device {
            channel,
            phase: Phase::Ready,
            retries: 0,
            rng,
            ifg_ns: crate::tx_time_ns(IFG_BITS / 8, rate_bps),
        }
    }

    /// Sense the channel at `t` for `pkt`, whose transmission would end at `end` and reach the
    /// far end at `arrival`.
    pub fn attempt(&mut self, t: Nanos, pkt: PktMeta, arrival: Nanos) -> Attempt {
        if self.channel.idle_at(t) {
            self.channel.seize(arrival);
            self.retries = 0;
            self.phase = Phase::Transmitting;
            return Attempt::Sent;
        }
        if self.retries >= MAX_RETRIES {
            self.retries = 0;
            self.phase = Phase::Ready;
            return Attempt::Dropped(pkt);
        }
        self.retries += 1;
        self.phase = Phase::Backoff { pkt, at: t + self.backoff_slots() * SLOT_NS };
        Attempt::Deferred
    }

    /// Slots to wait after the `retries`-th failed attempt: uniform in [1, max) with max =
    /// min(2^min(retries, 10) − 1, 1000), or 1 while that range is empty (ns-3 draws a real
    /// uniform in [min, max) and truncates it, which is the same distribution).
    fn backoff_slots(&mut self) -> u64 {
        let max = ((1u64 << self.retries.min(CEILING)) - 1).min(MAX_SLOTS);
        if max <= MIN_SLOTS {
            MIN_SLOTS
        } else {
            MIN_SLOTS + self.rng.below(max - MIN_SLOTS)
        }
    }

    /// The next instant at which the device acts by itself (a backoff ends, a gap ends).
    pub fn next_wake(&self) -> Option<Nanos> {
        match self.phase {
            Phase::Backoff { at, .. } => Some(at),
            Phase::Gap { until } => Some(until),
            Phase::Ready | Phase::Transmitting => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(seed: u64) -> Device {
        Device::new(Channel::new(), Rng::new(seed, 7), 10_000_000)
    }

    #[test]
    fn backoff_grows_to_its_ceiling_and_stays_in_range() {
        let mut d = dev(1);
        let mut seen_max = [0u64; 12];
        for _ in 0..2000 {
            for n in 1..=11u32 {
                d.retries = n;
                let s = d.backoff_slots();
                let max = ((1u64 << n.min(CEILING)) - 1).min(MAX_SLOTS);
                assert!(s >= MIN_SLOTS && (s < max || (max == 1 && s == 1)), "n={n}: {s} slots");
                seen_max[n as usize] = seen_max[n as usize].max(s);
            }
        }
        // First retry: exactly one slot; second: 1 or 2; from the tenth on up to 999.
        assert_eq!(seen_max[1], 1);
        assert_eq!(seen_max[2], 2);
        assert!(seen_max[10] > 950 && seen_max[11] > 950, "{seen_max:?}");
    }

    #[test]
    fn a_busy_channel_defers_then_drops_after_max_retries() {
        let mut d = dev(2);
        let p = PktMeta { id: 1, size: 1500, flow: 0, ecn: 0 };
        d.channel.seize(Nanos::MAX);
        let mut t = 0;
        let mut waited = 0;
        for i in 0..=MAX_RETRIES {
            match d.attempt(t, p, 0) {
                Attempt::Deferred => {
                    let Phase::Backoff { at, .. } = d.phase else { panic!() };
                    waited += at - t;
                    t = at;
                }
                Attempt::Dropped(q) => {
                    assert_eq!((q, i), (p, MAX_RETRIES));
                    break;
                }
                Attempt::Sent => panic!("sent on a busy channel"),
            }
        }
        assert_eq!(d.phase, Phase::Ready);
        // 1000 backoffs, 991 of them in [1, 1000) slots: about 0.5 s before the drop.
        assert!((450_000_000..550_000_000).contains(&waited), "{waited} ns");
    }
}
