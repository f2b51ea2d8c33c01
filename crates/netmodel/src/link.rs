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

/// One direction of a link. The fields the packet path reads on every enqueue, serialisation
/// end and arrival (the packet on the wire, the delay line, the queue, the per-packet options'
/// presence, the drop lists and the counters) come first and together (`repr(C)`, the struct
/// aligned to a cache line): with thousands of links most of them are cold in the caches, and
/// a link touched by a packet then costs a few adjacent lines instead of a scattered dozen.
/// Rarely used elements (loss, jitter, delay schedule, shared channel) are boxed so that their
/// absence is one pointer test.
#[repr(C, align(64))]
pub struct Link {
    /// The packet being serialised, the time its last bit leaves (`Nanos::MAX` = never: a
    /// `once` trace ran out) and the time it will reach the far end.
    tx: Option<(PktMeta, Nanos, Nanos)>,
    /// Packets propagating, with their arrival time at the far end (non-decreasing).
    pipe: VecDeque<(PktMeta, Nanos)>,
    queue: Box<dyn Qdisc>,
    /// Arrival time of the last packet put on the wire (order-preserving mode).
    last_arrival: Nanos,
    /// No service starts before this instant (radio promotion).
    blocked_until: Nanos,
    delay_ns: Nanos,
    overhead_bytes: u32,
    reorder: bool,
    delay_at_enqueue: bool,
    /// The sending device when this direction is on a shared half-duplex channel.
    csma: Option<Box<Device>>,
    /// Per-flow occupancy of a sending host's link (TCP small queues), when tracked.
    host: Option<Box<HostQueue>>,
    loss: Option<Box<Loss>>,
    jitter: Option<Box<Jitter>>,
    delay: Option<Box<DelayFn>>,
    server: Server,
    drops: Vec<PktMeta>,
    pub stats: LinkStats,
    losses: Vec<PktMeta>,
    /// Frames the channel dropped (MAC drops), taken with the other drops.
    mac_drops: Vec<PktMeta>,
    promotion: Option<Promotion>,
    last_enqueue: Option<Nanos>,
    rate_bps: Option<u64>,
    skew_ns: Nanos,
    /// Delay taken at enqueue, per packet id (only with `delay_at: enqueue`).
    enq_delay: HashMap<u32, Nanos>,
    /// Reordering mode: packets propagating, earliest arrival first (ties in send order).
    heap: BinaryHeap<Reverse<(Nanos, u64, u32, u32, u32, u8)>>,
    heap_seq: u64,
}

/// Bytes of [`Link`] that the packet path reads (the fields up to and including `stats`).
const HOT_BYTES: usize = std::mem::offset_of!(Link, losses);

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
            delay: cfg.delay_schedule.as_ref().map(|d| Box::new(DelayFn::new(d))),
            skew_ns: cfg.delay_skew_ns,
            delay_at_enqueue: cfg.delay_at == DelayAt::Enqueue,
            enq_delay: HashMap::new(),
            jitter: cfg.jitter.as_ref().map(|j| Box::new(Jitter::new(j, Rng::new(seed, key ^ JITTER_STREAM)))),
            loss: cfg.loss.as_ref().map(|l| Box::new(Loss::new(l, Rng::new(seed, key ^ LOSS_STREAM)))),
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
                (Some(_), Some(rate)) => Some(Box::new(Device::new(Channel::new(), Rng::new(seed, key ^ CSMA_STREAM), rate))),
                (Some(_), None) => panic!("link {}: a shared channel needs a rate", cfg.name),
                (None, _) => None,
            },
            mac_drops: Vec::new(),
            host: None,
            stats: LinkStats::default(),
        }
    }

    /// Ask the CPU to bring this link's hot fields (the first [`HOT_BYTES`] of the struct)
    /// into its caches, for an owner that knows which link it touches next (the simulator, at
    /// its next event). Only a hint ([`crate::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self) {
        crate::prefetch(self, HOT_BYTES);
    }

    /// As [`Link::prefetch`] for what the link's hot fields point to: the queue discipline,
    /// the head of its delay line. Reads the link itself, so call it once its hot fields are
    /// likely cached (after [`Link::prefetch`], a little earlier).
    #[inline(always)]
    pub fn prefetch_parts(&self) {
        crate::prefetch(&*self.queue, 128);
        if let Some(front) = self.pipe.front() {
            crate::prefetch(front, 24);
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

    /// Whether this link is a device on a shared channel (its next event then depends on the
    /// other devices' attempts, not only on its own state).
    pub fn shared_channel(&self) -> bool {
        self.csma.is_some()
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
#[path = "link_tests.rs"]
mod tests;
