//! The simulator's pending events: a binary heap of packed `u128` entries.
//!
//! An entry is `(time, seq, kind, index)` packed into one `u128` so that ordering is a single
//! integer compare: time in the high 64 bits, then the insertion sequence number (32 bits),
//! the kind (4 bits) and the target index (28 bits). `seq` is unique among pending entries, so
//! the pop order is (time, seq) exactly — ties in insertion order — whatever the heap's shape;
//! when `seq` would overflow its 32 bits the pending entries are renumbered in order
//! ([`Events::renumber`]), which keeps that order.
//!
//! With a thousand flows about 3300 entries are pending (52 KB, within the L2 cache). A 4-ary
//! heap (half the levels per pop; LaMarca and Ladner, J. Exp. Algorithmics 1, 1996) was
//! measured against this one at 1000 flows: the same cache misses, 1 % more instructions,
//! no faster (docs/benchmarks.md), so the standard library's heap stays.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an event does; its index names a link, a connection or a flow.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Kind {
    Link = 0,
    Sender = 1,
    Receiver = 2,
    Start = 3,
    Stop = 4,
    Sample = 5,
    /// The application of a connection acts (writes, pauses).
    App = 6,
    /// The next short flow of an arrival group (index: its template flow).
    Arrival = 7,
    /// A link's exit FIFO hands packets to the next node (host noise on; index: the link).
    Exit = 8,
}

impl Kind {
    #[inline]
    fn from_bits(k: u8) -> Kind {
        match k {
            0 => Kind::Link,
            1 => Kind::Sender,
            2 => Kind::Receiver,
            3 => Kind::Start,
            4 => Kind::Stop,
            5 => Kind::Sample,
            6 => Kind::App,
            7 => Kind::Arrival,
            _ => Kind::Exit,
        }
    }
}

const SEQ_SHIFT: u32 = 32;
const KIND_SHIFT: u32 = 28;
/// Largest target index an entry can hold.
pub(super) const EV_IDX_MASK: u64 = (1 << KIND_SHIFT) - 1;
pub(super) const SEQ_MAX: u64 = u32::MAX as u64;

#[inline]
fn pack(t: u64, seq: u64, kind: Kind, idx: u32) -> u128 {
    debug_assert!(seq <= SEQ_MAX && idx as u64 <= EV_IDX_MASK);
    ((t as u128) << 64) | (seq << SEQ_SHIFT | (kind as u64) << KIND_SHIFT | idx as u64) as u128
}

/// (time, kind, index) of a packed entry.
#[inline]
fn unpack(e: u128) -> (u64, Kind, u32) {
    let lo = e as u64;
    ((e >> 64) as u64, Kind::from_bits(((lo >> KIND_SHIFT) & 15) as u8), (lo & EV_IDX_MASK) as u32)
}

/// Pending events, earliest (time, seq) first.
#[derive(Default)]
pub(super) struct Events {
    heap: BinaryHeap<Reverse<u128>>,
    /// The last sequence number given.
    pub(super) seq: u64,
}

impl Events {
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Add an event at `t`; among events at the same time it comes after those added before.
    #[inline]
    pub(super) fn push(&mut self, t: u64, kind: Kind, idx: u32) {
        if self.seq >= SEQ_MAX {
            self.renumber();
        }
        self.seq += 1;
        self.heap.push(Reverse(pack(t, self.seq, kind, idx)));
    }

    /// The earliest event as (time, kind, index), without taking it.
    #[inline]
    pub(super) fn peek(&self) -> Option<(u64, Kind, u32)> {
        self.heap.peek().map(|&Reverse(e)| unpack(e))
    }

    /// Take the earliest event (the one [`Events::peek`] returned).
    #[inline]
    pub(super) fn pop(&mut self) {
        self.heap.pop();
    }

    /// Give the pending entries the sequence numbers 1..=n in their current order (same
    /// (time, seq) order, so the run is unchanged) to make room for new ones.
    #[cold]
    pub(super) fn renumber(&mut self) {
        let mut evs: Vec<u128> = std::mem::take(&mut self.heap).into_iter().map(|Reverse(e)| e).collect();
        evs.sort_unstable();
        let low = !((SEQ_MAX << SEQ_SHIFT) as u128);
        for (i, e) in evs.iter_mut().enumerate() {
            *e = (*e & low) | (((i as u64 + 1) << SEQ_SHIFT) as u128);
        }
        self.seq = evs.len() as u64;
        self.heap = evs.into_iter().map(Reverse).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        // A pseudo-random mix of times with many ties: the pops must be sorted by
        // (time, insertion order), as a stable sort of the pushes would give.
        let mut ev = Events::default();
        let mut want = vec![];
        let mut x: u64 = 12345;
        let mut out = vec![];
        for i in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = (x >> 33) % 300;
            ev.push(t, Kind::Link, i);
            want.push((t, i));
            if i % 3 == 0 {
                // interleave pops, as the loop does
                let (t, _, idx) = ev.peek().unwrap();
                ev.pop();
                out.push((t, idx));
            }
        }
        while let Some((t, _, idx)) = ev.peek() {
            ev.pop();
            out.push((t, idx));
        }
        // Every popped (time, idx) must come out non-decreasing in time and, within a time,
        // in push order among those pending together; check against a simulated reference.
        let mut pending: Vec<(u64, u32)> = vec![];
        let mut reference = vec![];
        for (i, &(t, idx)) in want.iter().enumerate() {
            pending.push((t, idx));
            if i % 3 == 0 {
                let k = (0..pending.len()).min_by_key(|&k| (pending[k].0, k)).unwrap();
                reference.push(pending.remove(k));
            }
        }
        pending.sort_by_key(|p| p.0); // stable: ties keep push order
        reference.extend(pending);
        assert_eq!(out, reference);
    }

    #[test]
    fn renumbering_keeps_the_order() {
        let mut ev = Events::default();
        for i in 0..100u32 {
            ev.push((i % 7) as u64, Kind::Sender, i);
        }
        ev.seq = SEQ_MAX;
        ev.push(3, Kind::Receiver, 1000); // renumbers first
        assert_eq!(ev.seq, 101);
        let mut got = vec![];
        while let Some((t, k, i)) = ev.peek() {
            ev.pop();
            got.push((t, k, i));
        }
        let mut want: Vec<(u64, Kind, u32)> = (0..100u32).map(|i| ((i % 7) as u64, Kind::Sender, i)).collect();
        want.push((3, Kind::Receiver, 1000));
        want.sort_by_key(|w| w.0);
        assert_eq!(got, want);
    }
}
