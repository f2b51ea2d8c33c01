//! One direction of a link: queue → serialiser (rate) → propagation delay line.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use serde::Deserialize;

use crate::delay::{stable_hash, DelayFn, DelaySchedule};
use crate::impair::{Jitter, JitterConfig, Loss, LossConfig};
use crate::queue::{Qdisc, QueueConfig};
use crate::csma::{Attempt, Channel, Device, Phase};
use crate::rate::{RateTrace, Server};
use crate::{Nanos, PktMeta, Rng};

/// A directed link as it appears in the resolved experiment.
#[derive(Clone, Debug, Deserialize)]
pub struct LinkConfig {
    pub id: u32,
    pub name: String,
    pub src: String,
    pub dst: String,
    /// Free-form role used by analysis ("left", "central", "right").
    #[serde(default)]
    pub role: String,
    /// Line rate in bit/s; `None` means unlimited (no serialisation delay).
    pub rate_bps: Option<u64>,
    /// One-way propagation delay.
    pub delay_ns: u64,
    pub queue: QueueConfig,
    /// Bytes added to every packet when serialising (e.g. 14 for Ethernet framing); not
    /// counted by the queue limit. Default 0: the wire carries IP packets.
    #[serde(default)]
    pub overhead_bytes: u32,
    /// Variable propagation delay; `None` = the constant `delay_ns`.
    #[serde(default)]
    pub delay_schedule: Option<DelaySchedule>,
    /// This direction sees every switch of `delay_schedule` this much later (CoCo-Beholder's
    /// r1-then-r2 switching); 0 = both directions switch atomically.
    #[serde(default)]
    pub delay_skew_ns: u64,
    /// When a packet's delay is read: `propagation` (default: the instant it starts
    /// propagating, i.e. its serialisation ends, so packets queued at a switch get the new
    /// delay) or `enqueue` (netem: the instant it enters the link).
    #[serde(default)]
    pub delay_at: DelayAt,
    #[serde(default)]
    pub jitter: Option<JitterConfig>,
    /// Let packets overtake each other on this direction (jitter / falling delay reorder).
    /// Default false: a packet never arrives before the one ahead of it.
    #[serde(default)]
    pub reorder: bool,
    #[serde(default)]
    pub loss: Option<LossConfig>,
    /// Time-varying rate (mahimahi trace or rate series); overrides `rate_bps` for service
    /// (`rate_bps` then holds the trace's mean rate, for BDP sizing and analysis).
    #[serde(default)]
    pub rate_trace: Option<RateTrace>,
    /// Radio-state promotion: a packet that arrives after the direction was idle for
    /// `idle_ns` (or as the very first packet) waits `delay_ns` before the link serves again.
    #[serde(default)]
    pub promotion: Option<Promotion>,
    /// Name of a shared half-duplex channel (ns-3 CSMA semantics, [`crate::csma`]): every link
    /// naming the same channel is one device on one medium, sending one frame at a time at the
    /// common rate, each frame holding the medium for its propagation delay too. `None`: this
    /// direction has the line to itself (full duplex).
    #[serde(default)]
    pub channel: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DelayAt {
    #[default]
    Propagation,
    Enqueue,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Promotion {
    pub idle_ns: u64,
    pub delay_ns: u64,
}

impl LinkConfig {
    /// A plain link: constant rate and delay, no impairments.
    pub fn simple(id: u32, name: &str, rate_bps: Option<u64>, delay_ns: u64, queue: QueueConfig) -> Self {
        let (src, dst) = name.split_once("->").unwrap_or((name, name));
        LinkConfig {
            id,
            name: name.into(),
            src: src.into(),
            dst: dst.into(),
            role: String::new(),
            rate_bps,
            delay_ns,
            queue,
            overhead_bytes: 0,
            delay_schedule: None,
            delay_skew_ns: 0,
            delay_at: DelayAt::Propagation,
            jitter: None,
            reorder: false,
            loss: None,
            rate_trace: None,
            promotion: None,
            channel: None,
        }
    }
}

/// Why a link dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The queue discipline (full buffer, AQM).
    Queue,
    /// The random-loss model (`loss`).
    Loss,
    /// A shared half-duplex channel: the frame found the channel busy on every attempt
    /// ([`crate::csma::MAX_RETRIES`]).
    Channel,
}

/// Random-stream tags of a link's elements (see [`Link::with_seed`]).
const LOSS_STREAM: u64 = 0x4c4f_5353; // "LOSS"
const JITTER_STREAM: u64 = 0x4a49_5454; // "JITT"
const CSMA_STREAM: u64 = 0x4353_4d41; // "CSMA"

/// Counters of a link since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub enqueued_pkts: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    /// Packets and bytes that finished serialisation (left the queue onto the wire).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Packets and bytes dropped by the random-loss model (included in `dropped_*`).
    pub lost_pkts: u64,
    pub lost_bytes: u64,
    /// Frames a shared channel dropped after too many busy attempts (included in `dropped_*`).
    pub channel_drops: u64,
}

pub struct Link {
    rate_bps: Option<u64>,
    delay_ns: Nanos,
    overhead_bytes: u32,
    queue: Box<dyn Qdisc>,
    server: Server,
    delay: Option<DelayFn>,
    skew_ns: Nanos,
    delay_at_enqueue: bool,
    /// Delay taken at enqueue, per packet id (only with `delay_at: enqueue`).
    enq_delay: HashMap<u32, Nanos>,
    jitter: Option<Jitter>,
    loss: Option<Loss>,
    reorder: bool,
    promotion: Option<Promotion>,
    last_enqueue: Option<Nanos>,
    /// No service starts before this instant (radio promotion).
    blocked_until: Nanos,
    /// The packet being serialised, the time its last bit leaves (`Nanos::MAX` = never: a
    /// `once` trace ran out) and the time it will reach the far end.
    tx: Option<(PktMeta, Nanos, Nanos)>,
    /// Packets propagating, with their arrival time at the far end (non-decreasing).
    pipe: VecDeque<(PktMeta, Nanos)>,
    /// Reordering mode: packets propagating, earliest arrival first (ties in send order).
    heap: BinaryHeap<Reverse<(Nanos, u64, u32, u32, u32, u8)>>,
    heap_seq: u64,
    /// Arrival time of the last packet put on the wire (order-preserving mode).
    last_arrival: Nanos,
    drops: Vec<PktMeta>,
    losses: Vec<PktMeta>,
    /// The sending device when this direction is on a shared half-duplex channel.
    csma: Option<Device>,
    /// Frames the channel dropped (MAC drops), taken with the other drops.
    mac_drops: Vec<PktMeta>,
    /// Per-flow occupancy of a sending host's link (TCP small queues), when tracked.
    host: Option<Box<HostQueue>>,
    pub stats: LinkStats,
}

/// What each flow has in a host's link — queued or being serialised — for TCP Small Queues
/// (`sk_wmem_alloc` counts an skb until the device completes its transmission), and whether
/// a flow waits for a transmission to complete (the link then wakes its owner at each one).
#[derive(Default)]
struct HostQueue {
    /// flow -> (IP bytes, packets)
    per_flow: HashMap<u32, (u64, u64)>,
    waiting: bool,
}

impl HostQueue {
    fn add(&mut self, p: &PktMeta) {
        let e = self.per_flow.entry(p.flow).or_default();
        e.0 += p.size as u64;
        e.1 += 1;
    }
    fn sub(&mut self, p: &PktMeta) {
        if let Some(e) = self.per_flow.get_mut(&p.flow) {
            e.0 = e.0.saturating_sub(p.size as u64);
            e.1 = e.1.saturating_sub(1);
        }
    }
}

impl Link {
    /// A link whose random elements (loss, jitter, AQM) use seed 0. Prefer [`Link::with_seed`].
    pub fn new(cfg: &LinkConfig) -> Self {
        Self::with_seed(cfg, 0)
    }

    /// A link whose loss and jitter draw from independent streams of `seed`, keyed by the
    /// link's *name* and the element: numeric link ids shift when flows are added to a
    /// dumbbell, names do not, so adding a flow never changes another link's pattern.
    pub fn with_seed(cfg: &LinkConfig, seed: u64) -> Self {
        let key = stable_hash(&cfg.name);
        Link {
            rate_bps: cfg.rate_bps,
            delay_ns: cfg.delay_ns,
            overhead_bytes: cfg.overhead_bytes,
            queue: cfg.queue.build_seeded(seed, key),
            server: Server::new(cfg.rate_bps, cfg.rate_trace.as_ref()),
            delay: cfg.delay_schedule.as_ref().map(DelayFn::new),
            skew_ns: cfg.delay_skew_ns,
            delay_at_enqueue: cfg.delay_at == DelayAt::Enqueue,
            enq_delay: HashMap::new(),
            jitter: cfg.jitter.as_ref().map(|j| Jitter::new(j, Rng::new(seed, key ^ JITTER_STREAM))),
            loss: cfg.loss.as_ref().map(|l| Loss::new(l, Rng::new(seed, key ^ LOSS_STREAM))),
            reorder: cfg.reorder,
            promotion: cfg.promotion,
            last_enqueue: None,
            blocked_until: 0,
            tx: None,
            pipe: VecDeque::new(),
            heap: BinaryHeap::new(),
            heap_seq: 0,
            last_arrival: 0,
            drops: Vec::new(),
            losses: Vec::new(),
            csma: match (&cfg.channel, cfg.rate_bps) {
                (Some(_), Some(rate)) => Some(Device::new(Channel::new(), Rng::new(seed, key ^ CSMA_STREAM), rate)),
                (Some(_), None) => panic!("link {}: a shared channel needs a rate", cfg.name),
                (None, _) => None,
            },
            mac_drops: Vec::new(),
            host: None,
            stats: LinkStats::default(),
        }
    }

    /// Links for `cfgs` (in order), the links that name the same `channel` sharing one medium.
    pub fn build_all(cfgs: impl IntoIterator<Item = LinkConfig>, seed: u64) -> Vec<Link> {
        let mut channels: HashMap<String, Channel> = HashMap::new();
        cfgs.into_iter()
            .map(|c| {
                let mut l = Link::with_seed(&c, seed);
                if let (Some(name), Some(d)) = (&c.channel, l.csma.as_mut()) {
                    d.channel = channels.entry(name.clone()).or_default().clone();
                }
                l
            })
            .collect()
    }

    /// Offer a packet to the link at `now`: the loss model may drop it, else the queue may.
    /// Dropped packets are collected and must be taken with [`Link::take_drops`].
    pub fn enqueue(&mut self, now: Nanos, pkt: PktMeta) {
        self.advance(now);
        if let Some(p) = self.promotion {
            if self.last_enqueue.is_none_or(|t| now.saturating_sub(t) >= p.idle_ns) {
                self.blocked_until = self.blocked_until.max(now + p.delay_ns);
            }
            self.last_enqueue = Some(now);
        }
        if self.loss.as_mut().is_some_and(|l| l.lose()) {
            self.losses.push(pkt);
            self.stats.dropped_pkts += 1;
            self.stats.dropped_bytes += pkt.size as u64;
            self.stats.lost_pkts += 1;
            self.stats.lost_bytes += pkt.size as u64;
            return;
        }
        if let Some(h) = self.host.as_deref_mut() {
            h.add(&pkt); // count_drops takes it off again if the queue refuses it
        }
        let before = self.drops.len();
        self.queue.enqueue(now, pkt, &mut self.drops);
        let accepted = !self.drops[before..].iter().any(|d| d.id == pkt.id);
        if accepted {
            self.stats.enqueued_pkts += 1;
            if self.delay_at_enqueue {
                let d = self.scheduled_delay(now);
                self.enq_delay.insert(pkt.id, d);
            }
        }
        self.count_drops(before);
        if self.csma.is_some() {
            if self.csma.as_ref().is_some_and(|d| d.phase == Phase::Ready) {
                self.csma_take_next(now);
            }
        } else if self.tx.is_none() {
            self.start_next(now, false);
        }
    }

    /// Earliest time at which a packet reaches the far end. Serialisation ends need no
    /// wake-up of their own: `advance` replays them with their exact times whenever the link
    /// is next touched, so an owner only has to wake the link for arrivals (one event per
    /// packet per link instead of two).
    pub fn next_event_time(&self) -> Option<Nanos> {
        if let Some(d) = &self.csma {
            // On a shared channel the device's own steps are events too: the engines must
            // process both directions' attempts in time order (who senses first wins).
            let own = self.tx.map(|(_, end, _)| end).into_iter().chain(d.next_wake());
            return own.chain(self.pipe.front().map(|&(_, t)| t)).min();
        }
        let waiting = self.host.as_ref().is_some_and(|h| h.waiting);
        let a = self.tx.and_then(|(_, end, arr)| (end != Nanos::MAX).then_some(if waiting { end } else { arr }));
        let b = if self.reorder {
            self.heap.peek().map(|Reverse(e)| e.0)
        } else {
            self.pipe.front().map(|&(_, t)| t)
        };
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether packets leave this link in the order they were put on the wire and nothing but
    /// their arrivals needs the owner's attention: not reordering, not on a shared channel, and
    /// a queue that drops only at enqueue. Then [`Link::peek_arrival`] names the next packet to
    /// leave, so an owner can act on it (draw its host's processing delay) before it arrives.
    pub fn fifo_exit(&self) -> bool {
        !self.reorder && self.csma.is_none() && !self.queue.drops_at_dequeue()
    }

    /// The next packet to reach the far end and its arrival time, without advancing the link
    /// (`fifo_exit` links only); `None` if no packet is on its way.
    #[inline]
    pub fn peek_arrival(&self) -> Option<(PktMeta, Nanos)> {
        debug_assert!(!self.reorder && self.csma.is_none());
        match self.pipe.front() {
            Some(&front) => Some(front),
            None => self.tx.and_then(|(p, end, arr)| (end != Nanos::MAX).then_some((p, arr))),
        }
    }

    /// Nothing queued, nothing being serialised, no frame in backoff: until the next
    /// `enqueue`, time changes nothing a queue sample reads (occupancy, counters, marks,
    /// sojourn), so a sample taken now stays valid.
    pub fn quiescent(&self) -> bool {
        self.tx.is_none()
            && self.queue.len_packets() == 0
            && self.csma.as_ref().is_none_or(|d| matches!(d.phase, Phase::Ready))
    }

    /// Whether a TCP Small Queues owner waits for this link's next transmission to complete.
    #[inline]
    pub fn host_waiting(&self) -> bool {
        self.host.as_ref().is_some_and(|h| h.waiting)
    }

    /// The next packet that has reached the far end by `now`, if any.
    pub fn pop_arrival(&mut self, now: Nanos) -> Option<(PktMeta, Nanos)> {
        self.advance(now);
        if self.reorder {
            match self.heap.peek() {
                Some(Reverse(e)) if e.0 <= now => {
                    let Reverse((t, _, id, size, flow, ecn)) = self.heap.pop().unwrap();
                    Some((PktMeta { id, size, flow, ecn }, t))
                }
                _ => None,
            }
        } else {
            match self.pipe.front() {
                Some(&(_, t)) if t <= now => self.pipe.pop_front(),
                _ => None,
            }
        }
    }

    /// Whether any dropped packets wait to be taken (a cheap test before
    /// [`Link::take_drops`] / [`Link::take_drops_with_reason`]).
    #[inline]
    pub fn has_drops(&self) -> bool {
        !self.drops.is_empty() || !self.losses.is_empty() || !self.mac_drops.is_empty()
    }

    /// Packets dropped since the last call, queue drops first, then random losses, then
    /// channel (MAC) drops.
    pub fn take_drops(&mut self) -> impl Iterator<Item = PktMeta> + '_ {
        self.drops.drain(..).chain(self.losses.drain(..)).chain(self.mac_drops.drain(..))
    }

    /// Like [`Link::take_drops`], with the reason of each drop.
    pub fn take_drops_with_reason(&mut self) -> impl Iterator<Item = (PktMeta, DropReason)> + '_ {
        self.drops
            .drain(..)
            .map(|p| (p, DropReason::Queue))
            .chain(self.losses.drain(..).map(|p| (p, DropReason::Loss)))
            .chain(self.mac_drops.drain(..).map(|p| (p, DropReason::Channel)))
    }

    /// Bring the link's state up to `now` (serialisations that ended by then) without
    /// taking arrivals; call before reading occupancy or counters at `now`.
    pub fn sync(&mut self, now: Nanos) {
        self.advance(now);
    }

    pub fn queue_packets(&self) -> usize {
        self.queue.len_packets()
    }

    /// Track what each flow has in this link, queued or being serialised (a sending host's
    /// link under TCP Small Queues).
    pub fn track_host_queue(&mut self) {
        self.host.get_or_insert_with(Default::default);
    }

    /// (IP bytes, packets) `flow` has in the link at `now`, queued or being serialised;
    /// (0, 0) when not tracked.
    pub fn host_queue(&mut self, now: Nanos, flow: u32) -> (u64, u64) {
        self.advance(now);
        self.host.as_ref().and_then(|h| h.per_flow.get(&flow).copied()).unwrap_or((0, 0))
    }

    /// A flow waits for a transmission to complete: [`Link::next_event_time`] then includes
    /// the end of the current serialisation (the owner re-checks its waiters there).
    pub fn set_host_waiting(&mut self, waiting: bool) {
        if let Some(h) = self.host.as_deref_mut() {
            h.waiting = waiting;
        }
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }

    /// Packets CE-marked by this link's queue so far.
    pub fn queue_marks(&self) -> u64 {
        self.queue.marks()
    }

    /// Sojourn time in the queue of the packet most recently dequeued for transmission
    /// (see [`Qdisc::sojourn_ns`]); `None` before the first.
    pub fn queue_sojourn_ns(&self) -> Option<Nanos> {
        self.queue.sojourn_ns()
    }

    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    /// The base propagation delay (the schedule's value at 0 for a variable delay).
    pub fn delay_ns(&self) -> Nanos {
        self.delay_ns
    }

    /// The delay schedule as this direction applies it: `(switch instant, delay)` steps that
    /// start before `end` (skew included). In the simulator these are the exact instants at
    /// which the direction's delay changes. Empty for a constant delay.
    pub fn delay_steps(&mut self, end: Nanos) -> Vec<(Nanos, Nanos)> {
        let skew = self.skew_ns;
        match self.delay.as_mut() {
            None => Vec::new(),
            Some(d) => d
                .steps_until(end.saturating_sub(skew))
                .into_iter()
                .map(|(t, v)| (if t == 0 { 0 } else { t + skew }, v))
                .collect(),
        }
    }

    /// The propagation delay for a packet whose delay is read at `t`.
    fn scheduled_delay(&mut self, t: Nanos) -> Nanos {
        match self.delay.as_mut() {
            None => self.delay_ns,
            Some(d) => d.at(t.saturating_sub(self.skew_ns)),
        }
    }

    /// Move every serialisation that ends by `now` onto the delay line, starting the next
    /// packet at the exact instant the previous one ended.
    fn advance(&mut self, now: Nanos) {
        if self.csma.is_some() {
            return self.advance_csma(now);
        }
        while let Some((p, end, arr)) = self.tx {
            if end > now {
                break;
            }
            self.tx = None;
            self.stats.tx_pkts += 1;
            self.stats.tx_bytes += p.size as u64;
            if let Some(h) = self.host.as_deref_mut() {
                h.sub(&p);
            }
            if self.reorder {
                self.heap_seq += 1;
                self.heap.push(Reverse((arr, self.heap_seq, p.id, p.size, p.flow, p.ecn)));
            } else {
                self.pipe.push_back((p, arr));
            }
            self.start_next(end, true);
        }
    }

    fn start_next(&mut self, t: Nanos, back_to_back: bool) {
        let before = self.drops.len();
        let next = self.queue.dequeue(t, &mut self.drops);
        self.count_drops(before);
        let Some(p) = next else { return };
        let start = t.max(self.blocked_until);
        let bytes = (p.size + self.overhead_bytes) as u64;
        let end = self.server.finish(start, bytes, back_to_back && start == t);
        if end == Nanos::MAX {
            self.tx = Some((p, end, Nanos::MAX));
            return;
        }
        // The packet's propagation delay, fixed now that its departure time is known.
        let base = if self.delay_at_enqueue {
            self.enq_delay.remove(&p.id).unwrap_or(self.delay_ns)
        } else {
            self.scheduled_delay(end)
        };
        let extra = self.jitter.as_mut().map_or(0, |j| j.sample(end));
        let d = (base as i64 + extra).max(0) as u64;
        let mut arr = end + d;
        if !self.reorder {
            arr = arr.max(self.last_arrival);
            self.last_arrival = arr;
        }
        self.tx = Some((p, end, arr));
    }

    /// Shared channel: replay the device's steps due by `now` in time order (end of the
    /// frame on the wire, end of the interframe gap, end of a backoff).
    fn advance_csma(&mut self, now: Nanos) {
        loop {
            let phase = self.csma.as_ref().expect("csma link").phase;
            match (phase, self.tx) {
                (Phase::Transmitting, Some((p, end, arr))) if end <= now => {
                    self.tx = None;
                    self.stats.tx_pkts += 1;
                    self.stats.tx_bytes += p.size as u64;
                    if let Some(h) = self.host.as_deref_mut() {
                        h.sub(&p);
                    }
                    self.pipe.push_back((p, arr));
                    let d = self.csma.as_mut().expect("csma link");
                    d.phase = Phase::Gap { until: end + d.ifg_ns };
                }
                (Phase::Gap { until }, _) if until <= now => {
                    self.csma.as_mut().expect("csma link").phase = Phase::Ready;
                    self.csma_take_next(until);
                }
                (Phase::Backoff { pkt, at }, _) if at <= now => self.csma_attempt(at, pkt),
                _ => return,
            }
        }
    }

    /// A ready device takes the next frame from its queue at `t` and tries to send it.
    fn csma_take_next(&mut self, t: Nanos) {
        let before = self.drops.len();
        let next = self.queue.dequeue(t, &mut self.drops);
        self.count_drops(before);
        if let Some(p) = next {
            self.csma_attempt(t, p);
        }
    }

    /// Sense the channel at `t` for `p`: send it, back off, or drop it and take the next.
    fn csma_attempt(&mut self, t: Nanos, p: PktMeta) {
        let rate = self.rate_bps.expect("a shared channel has a rate");
        let end = t + crate::tx_time_ns((p.size + self.overhead_bytes) as u64, rate);
        let arr = end + self.delay_ns;
        match self.csma.as_mut().expect("csma link").attempt(t, p, arr) {
            Attempt::Sent => self.tx = Some((p, end, arr)),
            Attempt::Deferred => {}
            Attempt::Dropped(p) => {
                self.stats.dropped_pkts += 1;
                self.stats.dropped_bytes += p.size as u64;
                self.stats.channel_drops += 1;
                if let Some(h) = self.host.as_deref_mut() {
                    h.sub(&p);
                }
                self.mac_drops.push(p);
                self.csma_take_next(t);
            }
        }
    }

    fn count_drops(&mut self, from: usize) {
        for d in &self.drops[from..] {
            if let Some(h) = self.host.as_deref_mut() {
                h.sub(d);
            }
            self.stats.dropped_pkts += 1;
            self.stats.dropped_bytes += d.size as u64;
            if self.delay_at_enqueue {
                self.enq_delay.remove(&d.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rate: Option<u64>, delay: u64, packets: Option<u32>) -> LinkConfig {
        LinkConfig::simple(0, "a->b", rate, delay, QueueConfig::droptail(packets, None))
    }

    fn p(id: u32) -> PktMeta {
        PktMeta { id, size: 1500, flow: 0, ecn: crate::ECN_NOT_ECT }
    }

    /// Drive the link as an event loop would and return (id, arrival time) pairs.
    fn run(link: &mut Link) -> Vec<(u32, Nanos)> {
        let mut out = vec![];
        while let Some(t) = link.next_event_time() {
            while let Some((pkt, at)) = link.pop_arrival(t) {
                assert!(at <= t, "arrival reported after the wake time");
                out.push((pkt.id, at));
            }
        }
        out
    }

    #[test]
    fn back_to_back_packets_are_serialised_then_delayed() {
        // 100 Mbit/s: 1500 B take 120 µs; 10 ms propagation.
        let mut l = Link::new(&cfg(Some(100_000_000), 10_000_000, Some(1000)));
        for i in 0..3 {
            l.enqueue(0, p(i));
        }
        let arr = run(&mut l);
        assert_eq!(arr, vec![(0, 10_120_000), (1, 10_240_000), (2, 10_360_000)]);
        assert_eq!(l.stats.tx_pkts, 3);
        assert_eq!(l.stats.tx_bytes, 4500);
    }

    #[test]
    fn full_queue_delay_is_limit_times_tx_time() {
        // A full 1000-packet queue at 100 Mbit/s: the 1000th queued packet waits for 1000
        // serialisations (the one on the wire plus 999 ahead of it) before its own.
        let mut l = Link::new(&cfg(Some(100_000_000), 0, Some(1000)));
        for i in 0..1002 {
            l.enqueue(0, p(i)); // first goes on the wire, 1000 queue, the last is dropped
        }
        assert_eq!(l.queue_packets(), 1000);
        assert_eq!(l.take_drops().map(|d| d.id).collect::<Vec<_>>(), vec![1001]);
        let arr = run(&mut l);
        assert_eq!(arr.len(), 1001);
        assert_eq!(arr.last().unwrap(), &(1000, 1001 * 120_000));
        assert_eq!(l.stats.dropped_pkts, 1);
    }

    #[test]
    fn unlimited_rate_only_delays() {
        let mut l = Link::new(&cfg(None, 5_000, None));
        l.enqueue(100, p(0));
        l.enqueue(100, p(1));
        assert_eq!(run(&mut l), vec![(0, 5_100), (1, 5_100)]);
    }

    #[test]
    fn idle_link_starts_serialising_at_arrival_time() {
        let mut l = Link::new(&cfg(Some(1_000_000_000), 0, Some(10)));
        l.enqueue(1_000, p(0));
        assert_eq!(l.next_event_time(), Some(13_000));
        // A later arrival while idle again starts at its own time, not earlier.
        assert_eq!(run(&mut l), vec![(0, 13_000)]);
        l.enqueue(50_000, p(1));
        assert_eq!(run(&mut l), vec![(1, 62_000)]);
    }

    const MS: u64 = 1_000_000;

    fn arrivals_of(l: &mut Link, sends: &[(Nanos, u32)]) -> Vec<(u32, Nanos)> {
        // Interleave sends and arrivals in time order, as an event loop does.
        let mut out = vec![];
        let mut i = 0;
        loop {
            let next_send = sends.get(i).map(|s| s.0);
            match (next_send, l.next_event_time()) {
                (Some(s), Some(a)) if s <= a => {
                    l.enqueue(s, p(sends[i].1));
                    i += 1;
                }
                (Some(s), None) => {
                    l.enqueue(s, p(sends[i].1));
                    i += 1;
                }
                (_, Some(a)) => {
                    while let Some((pkt, at)) = l.pop_arrival(a) {
                        out.push((pkt.id, at));
                    }
                }
                (None, None) => break,
            }
            let _ = l.take_drops().count();
        }
        out
    }

    fn jittery(reorder: bool, seed: u64) -> Link {
        let mut c = cfg(Some(100_000_000), 10 * MS, None);
        c.jitter = Some(JitterConfig::Netem { jitter_ns: 5 * MS });
        c.reorder = reorder;
        Link::with_seed(&c, seed)
    }

    #[test]
    fn jitter_never_reorders_unless_asked() {
        // One packet every 200 µs; ±5 ms jitter would reorder most neighbours.
        let sends: Vec<(Nanos, u32)> = (0..2000).map(|i| (i as u64 * 200_000, i)).collect();
        let ordered = arrivals_of(&mut jittery(false, 1), &sends);
        assert_eq!(ordered.len(), 2000);
        assert!(ordered.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        // Each arrival is max(own, previous): never before its own time, and the spread of
        // delays is still there.
        let delays: Vec<i64> = ordered.iter().map(|&(id, t)| t as i64 - (id as i64 * 200_000 + 120_000)).collect();
        assert!(delays.iter().all(|&d| d >= 5 * MS as i64));
        let mixed = arrivals_of(&mut jittery(true, 1), &sends);
        assert_eq!(mixed.len(), 2000);
        let inversions = mixed.windows(2).filter(|w| w[0].0 > w[1].0).count();
        assert!(inversions > 100, "reorder mode: {inversions} inversions");
        assert!(mixed.windows(2).all(|w| w[0].1 <= w[1].1), "arrivals come out in time order");
        // Reorder mode: every delay in [10 − 5, 10 + 5] ms.
        for &(id, t) in &mixed {
            let d = t - (id as u64 * 200_000 + 120_000);
            assert!((5 * MS..=15 * MS).contains(&d), "delay {d}");
        }
    }

    #[test]
    fn same_seed_same_jitter_and_loss_other_seed_or_link_differs() {
        let pattern = |seed: u64, name: &str| {
            let mut c = cfg(Some(100_000_000), 10 * MS, None);
            c.name = name.into();
            c.jitter = Some(JitterConfig::Normal { sd_ns: 2 * MS, mean_ns: 0 });
            c.loss = Some(LossConfig::Bernoulli { p: 0.05 });
            let mut l = Link::with_seed(&c, seed);
            let sends: Vec<(Nanos, u32)> = (0..3000).map(|i| (i as u64 * 200_000, i)).collect();
            let mut lost = vec![];
            let mut out = vec![];
            for &(t, id) in &sends {
                while let Some(a) = l.next_event_time().filter(|&a| a <= t) {
                    while let Some(x) = l.pop_arrival(a) {
                        out.push(x.1);
                    }
                }
                l.enqueue(t, p(id));
                lost.extend(l.take_drops_with_reason().map(|(d, r)| {
                    assert_eq!(r, DropReason::Loss);
                    d.id
                }));
            }
            (lost, out)
        };
        let a = pattern(1, "r1->r2");
        assert_eq!(a, pattern(1, "r1->r2"));
        assert!((100..200).contains(&a.0.len()), "5 % of 3000: {}", a.0.len());
        let b = pattern(2, "r1->r2");
        let c = pattern(1, "r2->r1");
        for other in [&b, &c] {
            assert_ne!(a.0, other.0);
            assert_ne!(a.1, other.1);
            let common = a.0.iter().filter(|x| other.0.contains(x)).count();
            // Independent 5 % patterns share ≈ 5 % of their losses.
            assert!(common < 30, "{common} common losses");
        }
    }

    #[test]
    fn loss_drops_are_counted_apart_from_queue_drops() {
        let mut c = cfg(Some(100_000_000), 0, Some(5));
        c.loss = Some(LossConfig::Bernoulli { p: 0.5 });
        let mut l = Link::with_seed(&c, 3);
        for i in 0..100 {
            l.enqueue(0, p(i));
        }
        let (mut q, mut r) = (0, 0);
        for (_, why) in l.take_drops_with_reason() {
            match why {
                DropReason::Queue => q += 1,
                DropReason::Loss => r += 1,
                DropReason::Channel => panic!("no shared channel here"),
            }
        }
        assert_eq!(l.stats.lost_pkts, r);
        assert_eq!(l.stats.dropped_pkts, q + r);
        assert_eq!(q + r + 6, 100); // 1 on the wire + 5 queued
        assert!((30..70).contains(&r), "{r}");
    }

    #[test]
    fn one_way_delay_follows_the_schedule_at_propagation_start_or_at_enqueue() {
        use crate::DelaySchedule;
        // 10 ms until 1 s, then 50 ms. 1 Mbit/s: a 1500-byte packet takes 12 ms.
        let sched = DelaySchedule::Series { points: vec![(0, 10 * MS), (1000 * MS, 50 * MS)], linear: false };
        let mut c = cfg(Some(1_000_000), 0, None);
        c.delay_schedule = Some(sched.clone());
        c.delay_ns = 10 * MS;
        // Sent at 980 and 995 ms: they leave the serialiser at 992 ms (before the switch)
        // and 1007 ms (after it).
        let mut l = Link::with_seed(&c, 0);
        let out = arrivals_of(&mut l, &[(980 * MS, 0), (995 * MS, 1)]);
        assert_eq!(out, vec![(0, 992 * MS + 10 * MS), (1, 1007 * MS + 50 * MS)]);
        // netem semantics: delay read at enqueue (both before the switch): 10 ms each.
        c.delay_at = DelayAt::Enqueue;
        let mut l = Link::with_seed(&c, 0);
        let out = arrivals_of(&mut l, &[(980 * MS, 0), (995 * MS, 1)]);
        assert_eq!(out, vec![(0, 1002 * MS), (1, 1017 * MS)]);
        // Skew: this direction switches 8 ms later, so the packet leaving at 1007 ms keeps 10.
        c.delay_at = DelayAt::Propagation;
        c.delay_skew_ns = 8 * MS;
        let mut l = Link::with_seed(&c, 0);
        let out = arrivals_of(&mut l, &[(980 * MS, 0), (995 * MS, 1)]);
        assert_eq!(out, vec![(0, 1002 * MS), (1, 1017 * MS)]);
        assert_eq!(l.delay_steps(3000 * MS), vec![(0, 10 * MS), (1008 * MS, 50 * MS)]);
    }

    #[test]
    fn falling_delay_does_not_let_packets_overtake() {
        use crate::DelaySchedule;
        let sched = DelaySchedule::Square { low_ns: 0, high_ns: 100 * MS, period_ns: 200 * MS, start_high: true };
        let mut c = cfg(None, 0, None);
        c.delay_schedule = Some(sched);
        let mut l = Link::with_seed(&c, 0);
        // Sent at 99 ms (100 ms delay → 199 ms) and at 101 ms (0 delay → 101 ms, but behind).
        assert_eq!(arrivals_of(&mut l, &[(99 * MS, 0), (101 * MS, 1)]), vec![(0, 199 * MS), (1, 199 * MS)]);
        c.reorder = true;
        let mut l = Link::with_seed(&c, 0);
        assert_eq!(arrivals_of(&mut l, &[(99 * MS, 0), (101 * MS, 1)]), vec![(1, 101 * MS), (0, 199 * MS)]);
    }

    #[test]
    fn trace_link_serves_at_opportunities() {
        let mut c = cfg(Some(12_000_000), 5 * MS, None);
        c.rate_trace = Some(RateTrace::Mahimahi { ms: vec![1, 2, 3, 4], once: false, opportunity_bytes: 1500 });
        let mut l = Link::with_seed(&c, 0);
        let out = arrivals_of(&mut l, &[(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]);
        assert_eq!(out, vec![(0, 6 * MS), (1, 7 * MS), (2, 8 * MS), (3, 9 * MS), (4, 10 * MS)]);
    }

    #[test]
    fn promotion_delays_the_first_packet_after_idle() {
        let mut c = cfg(None, 10 * MS, None);
        c.promotion = Some(Promotion { idle_ns: 1000 * MS, delay_ns: 300 * MS });
        let mut l = Link::with_seed(&c, 0);
        let out = arrivals_of(&mut l, &[(0, 0), (100 * MS, 1), (500 * MS, 2), (2000 * MS, 3)]);
        // First packet: promoted 0 → 300 ms; the second waits for the same promotion; the
        // third finds the radio up; the fourth arrives after 1.5 s idle and is promoted again.
        assert_eq!(out, vec![(0, 310 * MS), (1, 310 * MS), (2, 510 * MS), (3, 2310 * MS)]);
    }

    /// The two directions of a half-duplex channel, built together so that they share it.
    fn half_duplex(rate: u64, delay: Nanos, seed: u64) -> Vec<Link> {
        let mk = |name: &str| {
            let mut c = cfg(Some(rate), delay, Some(100));
            c.name = name.into();
            c.channel = Some("a-b".into());
            c
        };
        Link::build_all([mk("a->b"), mk("b->a")], seed)
    }

    /// Drive several links as an event loop does: sends `(time, link, id)` in time order,
    /// each link woken at its own next event. Returns (link, id, arrival) and the drops.
    fn drive(links: &mut [Link], sends: &[(Nanos, usize, u32)]) -> (Vec<(usize, u32, Nanos)>, Vec<(u32, DropReason)>) {
        let (mut out, mut drops) = (vec![], vec![]);
        let mut i = 0;
        loop {
            let next_link = (0..links.len()).filter_map(|l| links[l].next_event_time().map(|t| (t, l))).min();
            match (sends.get(i), next_link) {
                (Some(&(t, l, id)), n) if n.is_none_or(|(a, _)| t <= a) => {
                    links[l].enqueue(t, p(id));
                    i += 1;
                }
                (_, Some((t, l))) => {
                    while let Some((pkt, at)) = links[l].pop_arrival(t) {
                        out.push((l, pkt.id, at));
                    }
                }
                (None, None) => break,
                _ => unreachable!(),
            }
            for l in links.iter_mut() {
                drops.extend(l.take_drops_with_reason().map(|(d, r)| (d.id, r)));
            }
        }
        (out, drops)
    }

    #[test]
    fn one_direction_of_a_shared_channel_waits_out_each_frames_propagation() {
        // 10 Mbit/s, 1 ms: a 1500-byte frame takes 1.2 ms on the wire and holds the channel
        // until its last bit arrives 1 ms later. Five frames queued at once: the first goes at
        // 0, each next one senses the channel busy after the 9.6-µs gap and backs off (1 slot,
        // then 1-2, 1-6, ... µs) until the channel is idle: the spacing of arrivals is at least
        // 2.2 ms, against 1.2 ms on a full-duplex link.
        let mut links = half_duplex(10_000_000, MS, 1);
        let sends: Vec<_> = (0..5).map(|i| (0, 0, i)).collect();
        let (out, drops) = drive(&mut links, &sends);
        assert!(drops.is_empty());
        assert_eq!(out.iter().map(|o| o.1).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        assert_eq!(out[0].2, 2_200_000);
        for w in out.windows(2) {
            let gap = w[1].2 - w[0].2;
            // At least the busy period; at most that plus one backoff of the tenth try
            // (the device senses every ≤ 1023 µs once its window stops growing).
            assert!((2_200_000..2_200_000 + 1_100_000).contains(&gap), "{gap}");
        }
        let full = {
            let mut l = Link::new(&cfg(Some(10_000_000), MS, Some(100)));
            drive(std::slice::from_mut(&mut l), &sends).0
        };
        assert_eq!(full.last().unwrap().2, 5 * 1_200_000 + MS);
        assert!(out.last().unwrap().2 > 4 * 2_200_000 + 2_200_000);
    }

    #[test]
    fn both_directions_share_the_channel_one_frame_at_a_time() {
        // Both ends saturate a 10 Mbit/s, 1 ms channel for 2 s. Every frame holds the channel
        // from its first bit until its last bit arrives (1.2 + 1 ms), so the busy periods of
        // all delivered frames, from both directions, never overlap, and the two directions
        // together carry at most 2 s / 2.2 ms = 909 frames (a full-duplex link: 2 x 1666).
        let mut links = half_duplex(10_000_000, MS, 5);
        let mut sends = vec![];
        for k in 0..1000u32 {
            let t = k as u64 * 2 * MS; // 6 Mbit/s offered per direction
            sends.push((t, 0, 2 * k));
            sends.push((t, 1, 2 * k + 1));
        }
        let (out, drops) = drive(&mut links, &sends);
        let in_2s: Vec<_> = out.iter().filter(|o| o.2 <= 2000 * MS).collect();
        let mut busy: Vec<(Nanos, Nanos)> = in_2s.iter().map(|o| (o.2 - 2_200_000, o.2)).collect();
        busy.sort();
        assert!(busy.windows(2).all(|w| w[1].0 >= w[0].1), "two frames on the channel at once");
        assert!(in_2s.len() <= 909, "{}", in_2s.len());
        // Contention with backoff wastes some idle time, but the channel stays mostly busy,
        // and neither direction starves.
        assert!(in_2s.len() > 750, "{}", in_2s.len());
        let a = in_2s.iter().filter(|o| o.0 == 0).count();
        assert!(a > 300 && in_2s.len() - a > 300, "a->b {a} of {}", in_2s.len());
        // Offered 2 x 500 frames/s against ~450 frames/s of channel: the 100-packet queues
        // overflow (queue drops); every packet is either delivered or dropped.
        assert!(drops.iter().any(|d| d.1 == DropReason::Queue));
        assert_eq!(out.len() + drops.len(), 2000);
        assert_eq!(links[0].stats.tx_pkts + links[1].stats.tx_pkts, out.len() as u64);
    }

    #[test]
    fn a_shared_channel_repeats_with_its_seed_and_drops_frames_it_cannot_send() {
        // 1 Mbit/s, 200 ms: a 1500-byte frame holds the channel for 212 ms, longer than a frame
        // can keep trying (1000 backoffs, about 0.5 s) when the other side competes; so frames
        // are dropped by the channel (MAC drops), reported with their reason and counted.
        let run = |seed: u64| {
            let mut links = half_duplex(1_000_000, 200 * MS, seed);
            let sends: Vec<_> = (0..40u32).map(|k| (k as u64 * 50 * MS, (k % 2) as usize, k)).collect();
            let r = drive(&mut links, &sends);
            (r, links[0].stats.channel_drops + links[1].stats.channel_drops)
        };
        let (a, mac) = run(1);
        assert_eq!(a, run(1).0);
        assert_ne!(a.0, run(2).0.0, "the backoff draws come from the seed");
        let channel = a.1.iter().filter(|d| d.1 == DropReason::Channel).count() as u64;
        assert!(channel > 0 && channel == mac, "{channel} channel drops, stats {mac}");
        assert_eq!(a.0.len() + a.1.len(), 40);
    }

    #[test]
    fn links_without_a_channel_name_do_not_share_one() {
        // Two links built together but without `channel`: each direction has its own line.
        let mut links = Link::build_all([cfg(Some(10_000_000), MS, Some(100)), cfg(Some(10_000_000), MS, Some(100))], 0);
        let (out, _) = drive(&mut links, &[(0, 0, 0), (0, 1, 1)]);
        assert_eq!(out.iter().map(|o| o.2).collect::<Vec<_>>(), vec![2_200_000, 2_200_000]);
        // The same two on one channel: the second waits for the first's propagation.
        let mut links = half_duplex(10_000_000, MS, 0);
        let (out, _) = drive(&mut links, &[(0, 0, 0), (0, 1, 1)]);
        assert_eq!(out[0].2, 2_200_000);
        assert!(out[1].2 >= 4_400_000, "{out:?}");
    }
}
