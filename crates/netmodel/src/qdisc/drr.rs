//! The flow scheduler shared by FQ-CoDel and FQ-PIE: Linux `sch_fq_codel.c` / `sch_fq_pie.c`
//! deficit round robin, with the per-flow AQM plugged in through [`FlowAqm`].
//!
//! Packets are queued per flow (`PktMeta::flow`, no hashing); flows are served by deficit round
//! robin with a byte quantum. A flow that becomes active joins the "new" list with a full
//! quantum; the new list is always served before the "old" list of backlogged flows. A flow
//! whose deficit is spent is topped up by one quantum and moved to the tail of the old list. A
//! new flow found empty makes one pass through the old list (if that list is not empty) before
//! it leaves, so that a flow cannot starve the others by going idle and coming back new; an
//! empty old flow leaves the lists.
//!
//! What happens when a limit is exceeded is [`Overflow`]: FQ-CoDel's head drop from the
//! fattest flow, or FQ-PIE's drop of the arrival.

use std::collections::{HashMap, VecDeque};
use std::ops::{Deref, DerefMut};

use super::{over_limit, Qdisc};
use crate::{Nanos, PktMeta};

/// The per-flow active queue management run under [`Drr`].
pub trait FlowAqm {
    /// Per-flow AQM state (CoDel's or PIE's variables).
    type State;

    /// State of a flow seen for the first time.
    fn new_state(&self) -> Self::State;

    /// Called first in every enqueue and dequeue (before a new flow is created) with all the
    /// flows: the place for periodic work due by `now`.
    fn catch_up(&mut self, _now: Nanos, _flows: &mut [DrrFlow<Self::State>]) {}

    /// Whether to queue `pkt` (which may be CE-marked) on `flow`, whose queue does not hold it
    /// yet. Under [`Overflow::DropArrival`] only asked when the arrival is within the limits.
    fn admit(&mut self, _flow: &mut DrrFlow<Self::State>, _pkt: &mut PktMeta) -> bool {
        true
    }

    /// The arrival on `flow` was dropped (over the limit, or refused by [`Self::admit`]).
    fn rejected(&mut self, _flow: &mut Self::State) {}

    /// `n` packets were dropped from the head of `flow` by [`Overflow::DropFattest`].
    fn head_dropped(&mut self, _flow: &mut Self::State, _n: u32) {}

    /// The flow's next packet to send, popped from `queue` (the AQM may drop packets first,
    /// into `drops`). `None` only when the flow's queue is empty.
    fn dequeue(
        &mut self,
        now: Nanos,
        flow: &mut Self::State,
        queue: &mut FlowQueue<'_>,
        drops: &mut Vec<PktMeta>,
    ) -> Option<(PktMeta, Nanos)>;

    /// Packets CE-marked so far.
    fn marks(&self) -> u64;
}

/// What a full qdisc does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// `fq_codel_drop`: the arrival is queued; then, when over the packet, byte or memory
    /// limit, the flow with the largest byte backlog loses packets from its head until half
    /// its backlog is gone (at least one packet, at most `batch`). Among equally fat flows the
    /// lowest flow id loses.
    DropFattest { batch: u32 },
    /// `fq_pie`: an arrival that would exceed the packet or byte limit is dropped; exceeding
    /// the memory limit is only counted in [`Drr::overmemory`].
    DropArrival,
}

/// One flow: its packets (with their enqueue times), byte backlog, DRR deficit and AQM state.
/// It derefs to its AQM state.
pub struct DrrFlow<S> {
    pub(crate) id: u32,
    pub(crate) q: VecDeque<(PktMeta, Nanos)>,
    pub(crate) backlog: u64,
    pub(crate) deficit: i64,
    /// On the new or the old list (Linux: `!list_empty(&flow->flowchain)`).
    pub(crate) listed: bool,
    pub(crate) state: S,
}

impl<S> Deref for DrrFlow<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.state
    }
}

impl<S> DerefMut for DrrFlow<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.state
    }
}

/// One flow's queue as the AQM sees it at dequeue: popping keeps the flow's and the qdisc's
/// counters right.
pub struct FlowQueue<'a> {
    q: &'a mut VecDeque<(PktMeta, Nanos)>,
    flow_backlog: &'a mut u64,
    len: &'a mut usize,
    bytes: &'a mut u64,
}

impl FlowQueue<'_> {
    /// Remove the head packet (with its enqueue time), updating every backlog counter.
    pub fn pop(&mut self) -> Option<(PktMeta, Nanos)> {
        let e = self.q.pop_front()?;
        *self.flow_backlog -= e.0.size as u64;
        *self.len -= 1;
        *self.bytes -= e.0.size as u64;
        Some(e)
    }
    /// Bytes queued in this flow.
    pub fn flow_backlog(&self) -> u64 {
        *self.flow_backlog
    }
    /// Bytes queued in the whole qdisc.
    pub fn qdisc_backlog(&self) -> u64 {
        *self.bytes
    }
}

/// The DRR flow scheduler with AQM `A` on each flow.
pub struct Drr<A: FlowAqm> {
    pub(crate) flows: Vec<DrrFlow<A::State>>,
    index: HashMap<u32, usize>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    len: usize,
    bytes: u64,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
    memory_limit: Option<u64>,
    quantum: i64,
    overflow: Overflow,
    pub(crate) aqm: A,
    /// Arrivals while over the memory limit under [`Overflow::DropArrival`] (Linux fq_pie's
    /// `overmemory`).
    pub overmemory: u64,
    sojourn: Option<Nanos>,
}

impl<A: FlowAqm> Drr<A> {
    pub fn with_aqm(
        aqm: A,
        quantum: u32,
        limit_packets: Option<u32>,
        limit_bytes: Option<u64>,
        memory_limit: Option<u64>,
        overflow: Overflow,
    ) -> Self {
        let overflow = match overflow {
            Overflow::DropFattest { batch } => Overflow::DropFattest { batch: batch.max(1) },
            o => o,
        };
        Drr {
            flows: Vec::new(),
            index: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            bytes: 0,
            limit_packets,
            limit_bytes,
            memory_limit,
            quantum: quantum as i64,
            overflow,
            aqm,
            overmemory: 0,
            sojourn: None,
        }
    }

    /// The flow with id `id`, if it has been seen.
    pub(crate) fn flow(&self, id: u32) -> Option<&DrrFlow<A::State>> {
        self.index.get(&id).map(|&i| &self.flows[i])
    }

    fn flow_index(&mut self, id: u32) -> usize {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        let i = self.flows.len();
        let state = self.aqm.new_state();
        self.flows.push(DrrFlow { id, q: VecDeque::new(), backlog: 0, deficit: 0, listed: false, state });
        self.index.insert(id, i);
        i
    }

    /// `fq_codel_drop`: drop from the head of the fattest flow until half its backlog is
    /// gone (at least one packet, at most `batch`); returns that flow's index.
    fn drop_fat(&mut self, batch: u32, drops: &mut Vec<PktMeta>) -> usize {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max || (f.backlog == max && max > 0 && f.id < self.flows[idx].id) {
                max = f.backlog;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let f = &mut self.flows[idx];
        let mut len = 0u64;
        let mut n = 0u32;
        while let Some((p, _)) = f.q.pop_front() {
            len += p.size as u64;
            drops.push(p);
            n += 1;
            if n >= batch || len >= threshold {
                break;
            }
        }
        self.aqm.head_dropped(&mut f.state, n);
        f.backlog -= len;
        self.bytes -= len;
        self.len -= n as usize;
        idx
    }
}

impl<A: FlowAqm + Send> Qdisc for Drr<A>
where
    A::State: Send,
{
    fn enqueue(&mut self, now: Nanos, mut pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        self.aqm.catch_up(now, &mut self.flows);
        let i = self.flow_index(pkt.flow);
        let admit = match self.overflow {
            Overflow::DropFattest { .. } => self.aqm.admit(&mut self.flows[i], &mut pkt),
            Overflow::DropArrival => {
                if self.memory_limit.is_some_and(|l| self.bytes > l + pkt.size as u64) {
                    self.overmemory += 1;
                }
                !over_limit(self.limit_packets, self.limit_bytes, self.len, self.bytes, pkt.size)
                    && self.aqm.admit(&mut self.flows[i], &mut pkt)
            }
        };
        let f = &mut self.flows[i];
        if !admit {
            self.aqm.rejected(&mut f.state);
            drops.push(pkt);
            return;
        }
        f.q.push_back((pkt, now));
        f.backlog += pkt.size as u64;
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        self.len += 1;
        self.bytes += pkt.size as u64;
        if let Overflow::DropFattest { batch } = self.overflow {
            let over = self.limit_packets.is_some_and(|l| self.len as u64 > l as u64)
                || self.limit_bytes.is_some_and(|l| self.bytes > l)
                || self.memory_limit.is_some_and(|l| self.bytes > l);
            if over {
                self.drop_fat(batch, drops);
            }
        }
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<PktMeta>) -> Option<PktMeta> {
        self.aqm.catch_up(now, &mut self.flows);
        loop {
            let from_new = !self.new_flows.is_empty();
            let i = *(if from_new { &self.new_flows } else { &self.old_flows }).front()?;
            if self.flows[i].deficit <= 0 {
                self.flows[i].deficit += self.quantum;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i);
                continue;
            }
            let DrrFlow { q, backlog, state, .. } = &mut self.flows[i];
            let mut queue = FlowQueue { q, flow_backlog: backlog, len: &mut self.len, bytes: &mut self.bytes };
            match self.aqm.dequeue(now, state, &mut queue, drops) {
                None => {
                    // Empty: a new flow takes one pass through the old list (so that it cannot
                    // starve the old ones by going idle and coming back new); otherwise it
                    // leaves the lists.
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            self.old_flows.push_back(i);
                        } else {
                            self.flows[i].listed = false;
                        }
                    } else {
                        self.old_flows.pop_front();
                        self.flows[i].listed = false;
                    }
                }
                Some((p, t)) => {
                    self.flows[i].deficit -= p.size as i64;
                    self.sojourn = Some(now - t);
                    return Some(p);
                }
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.len
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn marks(&self) -> u64 {
        self.aqm.marks()
    }
    fn sojourn_ns(&self) -> Option<Nanos> {
        self.sojourn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ECN_NOT_ECT;

    /// No AQM: every arrival is queued, every dequeue pops the head.
    #[derive(Default)]
    struct PassThrough {
        rejected: u32,
        head_dropped: u32,
    }

    impl FlowAqm for PassThrough {
        type State = ();
        fn new_state(&self) {}
        fn rejected(&mut self, _: &mut ()) {
            self.rejected += 1;
        }
        fn head_dropped(&mut self, _: &mut (), n: u32) {
            self.head_dropped += n;
        }
        fn dequeue(&mut self, _: Nanos, _: &mut (), queue: &mut FlowQueue<'_>, _: &mut Vec<PktMeta>) -> Option<(PktMeta, Nanos)> {
            queue.pop()
        }
        fn marks(&self) -> u64 {
            0
        }
    }

    fn drr(quantum: u32) -> Drr<PassThrough> {
        Drr::with_aqm(PassThrough::default(), quantum, None, None, None, Overflow::DropArrival)
    }

    fn p(id: u32, flow: u32, size: u32) -> PktMeta {
        PktMeta { id, size, flow, ecn: ECN_NOT_ECT }
    }

    fn next(q: &mut Drr<PassThrough>) -> Option<u32> {
        q.dequeue(0, &mut vec![]).map(|m| m.id)
    }

    #[test]
    fn deficit_round_robin_with_mixed_packet_sizes() {
        // Quantum 1000. Flow 1: 2500, 200, 700, 100 bytes; flow 2: four of 400; flow 3: two
        // of 1000.
        let mut q = drr(1000);
        let mut d = vec![];
        for (id, size) in [(10, 2500), (11, 200), (12, 700), (13, 100)] {
            q.enqueue(0, p(id, 1, size), &mut d);
        }
        for id in 20..24 {
            q.enqueue(0, p(id, 2, 400), &mut d);
        }
        for id in 30..32 {
            q.enqueue(0, p(id, 3, 1000), &mut d);
        }
        // New list [1, 2, 3], deficits 1000:
        //   f1 sends 2500 (−1500), +1000 = −500 → old; f2 sends 3 × 400 (−200), +1000 = 800
        //   → old; f3 sends 1000 (0), +1000 → old.
        // Old list [1, 2, 3]:
        //   f1 still ≤ 0: +1000 = 500, to the tail — a packet larger than the quantum costs
        //   its flow the next round; f2 sends 400 (400), then is empty and leaves; f3 sends
        //   1000 (0), +1000 → tail; f1 sends 200 + 700 (−400), +1000 = 600 → tail; f3 is
        //   empty and leaves; f1 sends 100 and leaves.
        let order: Vec<u32> = std::iter::from_fn(|| next(&mut q)).collect();
        assert_eq!(order, vec![10, 20, 21, 22, 30, 23, 31, 11, 12, 13]);
        assert!(d.is_empty());
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
        assert!(q.new_flows.is_empty() && q.old_flows.is_empty());
        assert!(q.flows.iter().all(|f| !f.listed && f.backlog == 0));
        assert_eq!(q.sojourn_ns(), Some(0));
    }

    #[test]
    fn new_flows_first_and_an_emptied_new_flow_passes_through_the_old_list() {
        let mut q = drr(1000);
        let mut d = vec![];
        for id in 0..6 {
            q.enqueue(0, p(id, 1, 600), &mut d); // flow index 0
        }
        assert_eq!((next(&mut q), next(&mut q)), (Some(0), Some(1))); // f1 deficit −200
        q.enqueue(0, p(100, 2, 100), &mut d); // flow index 1, new list behind f1
        assert_eq!(q.flows[1].deficit, 1000);
        // f1 is topped up (800) and moved to the old list; new flow 2 is served first.
        assert_eq!(next(&mut q), Some(100));
        assert_eq!(q.flows[1].deficit, 900);
        // Flow 2 is found empty at the head of the new list: as Linux
        // (`list_move_tail(&flow->flowchain, &q->old_flows)`), it moves to the old list
        // instead of leaving, because that list is not empty. Then f1 is served.
        assert_eq!(next(&mut q), Some(2));
        assert!(q.new_flows.is_empty());
        assert_eq!(q.old_flows, VecDeque::from([0, 1]));
        assert!(q.flows[1].listed && q.flows[1].q.is_empty());
        // So an arrival on flow 2 now is not a new flow: no fresh quantum, no priority; it
        // waits behind f1 (800 − 600 = 200 → one more packet).
        q.enqueue(0, p(101, 2, 100), &mut d);
        assert_eq!(q.flows[1].deficit, 900);
        assert!(q.new_flows.is_empty());
        assert_eq!(next(&mut q), Some(3));
        assert_eq!(next(&mut q), Some(101));
        // Flow 2, now an empty *old* flow, leaves the lists.
        assert_eq!(next(&mut q), Some(4));
        assert!(!q.flows[1].listed);
        assert_eq!(q.old_flows, VecDeque::from([0]));
        // With the old list empty, an emptied new flow leaves the lists at once.
        let mut q = drr(1000);
        q.enqueue(0, p(0, 7, 100), &mut d);
        assert_eq!(next(&mut q), Some(0));
        assert_eq!(next(&mut q), None);
        assert!(q.new_flows.is_empty() && q.old_flows.is_empty() && !q.flows[0].listed);
        q.enqueue(0, p(1, 7, 100), &mut d);
        assert_eq!((q.new_flows.len(), q.flows[0].deficit), (1, 1000));
        assert!(d.is_empty());
    }

    #[test]
    fn overflow_policies() {
        // Drop-arrival: the arrival over the byte limit is dropped and the AQM told.
        let mut q = Drr::with_aqm(PassThrough::default(), 1514, None, Some(2500), None, Overflow::DropArrival);
        let mut d = vec![];
        for id in 0..3 {
            q.enqueue(0, p(id, id, 1000), &mut d);
        }
        assert_eq!(d.iter().map(|m| m.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!((q.aqm.rejected, q.len_packets()), (1, 2));
        // Drop-fattest: between equally fat flows the lowest id loses from its head; a batch
        // of 0 is taken as 1.
        let mut q = Drr::with_aqm(PassThrough::default(), 1514, Some(4), None, None, Overflow::DropFattest { batch: 0 });
        let mut d = vec![];
        for (id, flow) in [(0, 9), (1, 9), (2, 5), (3, 5), (4, 9)] {
            q.enqueue(0, p(id, flow, 1000), &mut d);
        }
        // 5 > 4 after id 4: flow 9 holds 3000 bytes, flow 5 2000: flow 9 loses id 0.
        assert_eq!(d.iter().map(|m| m.id).collect::<Vec<_>>(), vec![0]);
        // Flows 9 and 5 now hold 2000 bytes each; an arrival on flow 1 (1000 bytes, lowest id
        // but not fattest) overflows again: flow 5, the lower id of the two, loses id 2.
        q.enqueue(0, p(5, 1, 1000), &mut d);
        assert_eq!(d.iter().map(|m| m.id).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!((q.aqm.head_dropped, q.aqm.rejected, q.len_packets()), (2, 0, 4));
    }
}
