//! The simulator's pending events: packed `u128` entries in a binary heap, or in a radix heap
//! for runs with many event targets.
//!
//! An entry is `(time, seq, kind, index)` packed into one `u128` so that ordering is a single
//! integer compare: time in the high 64 bits, then the insertion sequence number (32 bits),
//! the kind (4 bits) and the target index (28 bits). `seq` is unique among pending entries, so
//! entries never tie and the pop order is (time, seq) exactly — ties in time in insertion
//! order — whatever the structure; when `seq` would overflow its 32 bits the pending entries
//! are renumbered in order ([`Events::renumber`]), which keeps that order.
//!
//! Why a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest
//! path problem", J. ACM 37(2), 1990; the one-level form): a discrete-event loop only
//! inserts entries at or after the last one taken, so an entry can be filed by the highest
//! bit in which it differs from that last entry — one XOR and one leading-zero count — and
//! only the lowest non-empty bucket is ever sorted out, by re-filing its entries against its
//! least. With a thousand flows ~3300 wake-ups are pending, most of them timers far ahead of
//! the links' next arrivals; a binary heap sifted every new arrival past them (its pushes and
//! pops took ~930 more instructions per bottleneck packet than with one flow; the radix heap
//! saves ~620 of them, docs/benchmarks.md).
//!
//! An entry inserted below the last one taken (only possible between two `run_until` calls,
//! when the loop peeked at an event it did not run) re-files everything once against it.
//!
//! With few pending entries a binary heap is cheaper (a few levels; the radix heap's
//! re-filing costs 10 % more loop time with one flow), so the loop picks by the number of
//! event targets ([`Events::for_targets`]): the radix heap from [`RADIX_FROM`] (≈ 170
//! flows of a dumbbell; the two break even near 100 flows, ~740 entries pending). Both give
//! the same order.

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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Event targets (links + 2 × connections) from which the radix heap is used.
pub(super) const RADIX_FROM: usize = 1024;

/// Bucket 0 holds the entry equal to `last` (at most one: entries are unique); bucket
/// `b` ≥ 1 the entries whose highest bit differing from `last` is bit `b - 1`.
const BUCKETS: usize = 129;

#[inline]
fn bucket(e: u128, last: u128) -> usize {
    (128 - (e ^ last).leading_zeros()) as usize
}

/// The radix heap.
struct Radix {
    buckets: Vec<Vec<u128>>,
    /// Non-empty buckets 1..=128 (bit `b - 1` for bucket `b`).
    full: u128,
    /// No pending entry is below it: the last entry peeked at or taken.
    last: u128,
    len: usize,
}

impl Radix {
    fn new() -> Self {
        Radix { buckets: vec![Vec::new(); BUCKETS], full: 0, last: 0, len: 0 }
    }

    #[inline]
    fn push(&mut self, e: u128) {
        if e < self.last {
            self.refile(e);
        }
        self.file(e);
        self.len += 1;
    }

    #[inline]
    fn file(&mut self, e: u128) {
        let b = bucket(e, self.last);
        self.buckets[b].push(e);
        if b > 0 {
            self.full |= 1 << (b - 1);
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u128> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            self.take_lowest();
        }
        Some(self.buckets[0][0])
    }

    /// Take the least entry (the one `peek` returned; call that first).
    #[inline]
    fn pop(&mut self) {
        if self.buckets[0].pop().is_some() {
            self.len -= 1;
        }
    }

    /// Make the least pending entry `last` (and so bucket 0's): re-file the lowest non-empty
    /// bucket against its least entry; every entry of it lands in a lower bucket.
    fn take_lowest(&mut self) {
        let b = self.full.trailing_zeros() as usize + 1;
        let mut v = std::mem::take(&mut self.buckets[b]);
        self.full &= !(1 << (b - 1));
        self.last = *v.iter().min().expect("a non-empty bucket");
        for &e in &v {
            self.file(e);
        }
        v.clear();
        self.buckets[b] = v; // keep its allocation
    }

    /// Re-file every pending entry against `new_last`, which is below all of them.
    #[cold]
    fn refile(&mut self, new_last: u128) {
        let all = self.drain_all();
        self.last = new_last;
        for e in all {
            self.file(e);
        }
    }

    fn drain_all(&mut self) -> Vec<u128> {
        let mut all = Vec::with_capacity(self.len);
        for b in &mut self.buckets {
            all.append(b);
        }
        self.full = 0;
        all
    }

    /// Put back `evs`, the entries `drain_all` took (renumbered, so `last` starts again).
    fn refill(&mut self, evs: Vec<u128>) {
        self.last = 0;
        self.len = evs.len();
        for e in evs {
            self.file(e);
        }
    }
}

enum Queue {
    Heap(BinaryHeap<Reverse<u128>>),
    Radix(Radix),
}

/// Pending events, earliest (time, seq) first.
pub(super) struct Events {
    q: Queue,
    /// The last sequence number given.
    pub(super) seq: u64,
}

impl Default for Events {
    fn default() -> Self {
        Self::for_targets(0)
    }
}

impl Events {
    /// A queue for a run with `targets` event targets: a radix heap from [`RADIX_FROM`].
    pub(super) fn for_targets(targets: usize) -> Self {
        let q = if targets >= RADIX_FROM { Queue::Radix(Radix::new()) } else { Queue::Heap(BinaryHeap::new()) };
        Events { q, seq: 0 }
    }

    pub(super) fn len(&self) -> usize {
        match &self.q {
            Queue::Heap(h) => h.len(),
            Queue::Radix(r) => r.len,
        }
    }

    /// Add an event at `t`; among events at the same time it comes after those added before.
    #[inline]
    pub(super) fn push(&mut self, t: u64, kind: Kind, idx: u32) {
        if self.seq >= SEQ_MAX {
            self.renumber();
        }
        self.seq += 1;
        let e = pack(t, self.seq, kind, idx);
        match &mut self.q {
            Queue::Heap(h) => h.push(Reverse(e)),
            Queue::Radix(r) => r.push(e),
        }
    }

    /// The earliest event as (time, kind, index), without taking it.
    #[inline]
    pub(super) fn peek(&mut self) -> Option<(u64, Kind, u32)> {
        let e = match &mut self.q {
            Queue::Heap(h) => h.peek().map(|&Reverse(e)| e),
            Queue::Radix(r) => r.peek(),
        };
        e.map(unpack)
    }

    /// Take the earliest event (the one [`Events::peek`] returned; call that first).
    #[inline]
    pub(super) fn pop(&mut self) {
        match &mut self.q {
            Queue::Heap(h) => {
                h.pop();
            }
            Queue::Radix(r) => r.pop(),
        }
    }

    /// Give the pending entries the sequence numbers 1..=n in their current order (same
    /// (time, seq) order, so the run is unchanged) to make room for new ones.
    #[cold]
    pub(super) fn renumber(&mut self) {
        let mut evs: Vec<u128> = match &mut self.q {
            Queue::Heap(h) => std::mem::take(h).into_iter().map(|Reverse(e)| e).collect(),
            Queue::Radix(r) => r.drain_all(),
        };
        evs.sort_unstable();
        let low = !((SEQ_MAX << SEQ_SHIFT) as u128);
        for (i, e) in evs.iter_mut().enumerate() {
            *e = (*e & low) | (((i as u64 + 1) << SEQ_SHIFT) as u128);
        }
        self.seq = evs.len() as u64;
        match &mut self.q {
            Queue::Heap(h) => *h = evs.into_iter().map(Reverse).collect(),
            Queue::Radix(r) => r.refill(evs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both queues: the binary heap and the radix heap.
    fn both() -> [Events; 2] {
        [Events::for_targets(0), Events::for_targets(RADIX_FROM)]
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        for ev in both() {
            pops_in_order(ev);
        }
    }

    fn pops_in_order(mut ev: Events) {
        // A pseudo-random mix of times with many ties: the pops must be sorted by
        // (time, insertion order), as a stable sort of the pushes would give.
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
    fn an_entry_below_the_last_peeked_is_still_taken_first() {
        for ev in both() {
            below_the_last_peeked(ev);
        }
    }

    fn below_the_last_peeked(mut ev: Events) {
        // run_until peeks at an event past its end and leaves it; an exit scheduled before
        // it in between must come out first.
        ev.push(100, Kind::Link, 1);
        ev.push(300, Kind::Link, 2);
        assert_eq!(ev.peek(), Some((100, Kind::Link, 1)));
        ev.pop();
        assert_eq!(ev.peek(), Some((300, Kind::Link, 2)));
        ev.push(200, Kind::Exit, 3);
        ev.push(200, Kind::Exit, 4);
        let mut got = vec![];
        while let Some(x) = ev.peek() {
            ev.pop();
            got.push(x);
        }
        assert_eq!(got, vec![(200, Kind::Exit, 3), (200, Kind::Exit, 4), (300, Kind::Link, 2)]);
        assert_eq!(ev.len(), 0);
    }

    #[test]
    fn renumbering_keeps_the_order() {
        for ev in both() {
            renumbering(ev);
        }
    }

    fn renumbering(mut ev: Events) {
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
