//! The discrete-event loop: links, hosts and recorders driven in virtual time.
//!
//! Events are small `Copy` entries `(time, seq, kind, index)` in a binary heap; `seq` breaks
//! ties in insertion order, which makes a run a pure function of the experiment and seed.
//! Every event target (link, sender, receiver) has at most one *live* wake-up: `sched[t]`
//! holds its time and entries that no longer match are skipped (lazy deletion), so the
//! heap never needs a decrease-key.
//!
//! Packets live in a slab and move through the network as 12-byte handles
//! ([`netmodel::PktMeta`]); their TCP headers stay in the slab. In steady state nothing is
//! allocated per packet or per event.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use netmodel::{DropReason, Link, PktMeta};

use crate::cc;
use crate::experiment::Experiment;
use crate::output::{Output, RunStats};
use crate::record::Recorder;
use crate::tcp::{AckSeg, DataSeg, TcpReceiver, TcpSender};

#[derive(Clone, Copy)]
enum Seg {
    Data(DataSeg),
    Ack(AckSeg),
}

/// Link handles ([`PktMeta::id`]) carry the routing state, so forwarding never touches the
/// slab: slab index in the low 24 bits, hop (index into the route) in the next 7, and the
/// top bit set for packets on the ACK route.
const IDX_MASK: u32 = (1 << 24) - 1;
const HOP_SHIFT: u32 = 24;
const HOP_MASK: u32 = 0x7f << HOP_SHIFT;
const ACK_BIT: u32 = 1 << 31;
/// Longest route a handle can express.
pub const MAX_HOPS: usize = 127;

#[derive(Clone, Copy)]
struct Packet {
    flow: u32,
    /// Time the sending host emitted it.
    sent_ns: u64,
    /// Packet-record index (data packets with per-packet records on), else u32::MAX.
    rec: u32,
    size: u32,
    seg: Seg,
}

/// Pool of in-network packets; freed slots are reused.
struct Slab {
    items: Vec<Packet>,
    free: Vec<u32>,
}

impl Slab {
    fn insert(&mut self, p: Packet) -> u32 {
        assert!(self.items.len() < IDX_MASK as usize, "more than 2^24 packets in the network");
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = p;
                i
            }
            None => {
                self.items.push(p);
                (self.items.len() - 1) as u32
            }
        }
    }
    fn remove(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.items[i as usize]
    }
    fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Link = 0,
    Sender = 1,
    Receiver = 2,
    Start = 3,
    Stop = 4,
    Sample = 5,
}

type Ev = Reverse<(u64, u64, u8, u32)>;

struct FlowState {
    sender: TcpSender,
    receiver: TcpReceiver,
    active: bool,
    started: bool,
    start_ns: u64,
    app_bytes: u64,
}

pub struct Sim {
    now: u64,
    end: u64,
    sample_ns: u64,
    links: Vec<Link>,
    bottlenecks: Vec<u32>,
    flows: Vec<FlowState>,
    /// Per flow: (data route, ACK route) as link ids; kept apart from the bulky flow state
    /// so that forwarding reads one small, hot array.
    routes: Vec<(Box<[u32]>, Box<[u32]>)>,
    pkts: Slab,
    heap: BinaryHeap<Ev>,
    seq: u64,
    /// Live wake-up time per target: links, then senders, then receivers.
    sched: Vec<u64>,
    rec: Recorder,
    stats: RunStats,
    /// Data packets (not SYNs) currently inside the network, for the conservation check.
    data_in_net: u64,
    cc_scratch: Vec<(&'static str, f64)>,
    drop_scratch: Vec<(PktMeta, DropReason)>,
}

impl Sim {
    pub fn new(exp: &Experiment) -> Result<Self, String> {
        exp.validate()?;
        if let Some(f) = exp.flows.iter().find(|f| f.path.len() > MAX_HOPS || f.rev_path.len() > MAX_HOPS) {
            return Err(format!("flow {}: routes longer than {MAX_HOPS} links are not supported", f.id + 1));
        }
        let mut tcp = exp.tcp.clone();
        tcp.mss = exp.mss;
        let mut flows = Vec::with_capacity(exp.flows.len());
        for f in &exp.flows {
            let cc = cc::make(&f.scheme, &cc::engine_params(&f.scheme, &f.params, exp.seed, f.id as u64))
                .map_err(|e| format!("flow {} ({}): {e}", f.id + 1, f.label))?;
            let ftcp = crate::tcp::flow_tcp_config(&tcp, f.tcp.as_ref(), f.ecn, exp.mss, cc.as_ref());
            flows.push(FlowState {
                sender: TcpSender::new(&ftcp, cc, f.bytes),
                receiver: TcpReceiver::new(&ftcp),
                active: false,
                started: false,
                start_ns: f.start_ns,
                app_bytes: 0,
            });
        }
        let n_links = exp.links.len();
        let n_flows = flows.len();
        let mut sim = Sim {
            now: 0,
            end: exp.duration_ns,
            sample_ns: exp.sample_interval_ns,
            links: exp.links.iter().map(|l| Link::with_seed(l, exp.seed)).collect(),
            bottlenecks: exp.bottleneck_links.clone(),
            flows,
            routes: exp.flows.iter().map(|f| (f.path.clone().into(), f.rev_path.clone().into())).collect(),
            pkts: Slab { items: Vec::new(), free: Vec::new() },
            heap: BinaryHeap::new(),
            seq: 0,
            sched: vec![u64::MAX; n_links + 2 * n_flows],
            rec: Recorder::new(n_flows, exp.sample_interval_ns, exp.hist_bucket_ns, exp.record_packets),
            stats: RunStats::default(),
            data_in_net: 0,
            cc_scratch: Vec::new(),
            drop_scratch: Vec::new(),
        };
        for f in &exp.flows {
            if f.start_ns < sim.end {
                sim.push(f.start_ns, Kind::Start, f.id);
            }
            if let Some(stop) = f.stop_ns {
                if stop < sim.end {
                    sim.push(stop, Kind::Stop, f.id);
                }
            }
        }
        sim.push(0, Kind::Sample, 0);
        Ok(sim)
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    fn push(&mut self, t: u64, kind: Kind, idx: u32) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, kind as u8, idx)));
        self.stats.max_pending_events = self.stats.max_pending_events.max(self.heap.len() as u64);
    }

    fn target(&self, kind: Kind, idx: u32) -> usize {
        let nl = self.links.len();
        let nf = self.flows.len();
        match kind {
            Kind::Link => idx as usize,
            Kind::Sender => nl + idx as usize,
            Kind::Receiver => nl + nf + idx as usize,
            _ => unreachable!(),
        }
    }

    /// Make sure target (kind, idx) wakes at `t` (or earlier if already scheduled earlier).
    fn wake(&mut self, kind: Kind, idx: u32, t: Option<u64>) {
        let Some(t) = t else { return };
        let t = t.max(self.now);
        let tg = self.target(kind, idx);
        if t < self.sched[tg] || self.sched[tg] < self.now {
            self.sched[tg] = t;
            self.push(t, kind, idx);
        }
    }

    /// Run every event with time ≤ `until` (clamped to the experiment's end).
    pub fn run_until(&mut self, until: u64) {
        let until = until.min(self.end);
        while let Some(&Reverse((t, _, kind, idx))) = self.heap.peek() {
            if t > until {
                break;
            }
            self.heap.pop();
            self.now = t;
            let kind = match kind {
                0 => Kind::Link,
                1 => Kind::Sender,
                2 => Kind::Receiver,
                3 => Kind::Start,
                4 => Kind::Stop,
                _ => Kind::Sample,
            };
            match kind {
                Kind::Link | Kind::Sender | Kind::Receiver => {
                    let tg = self.target(kind, idx);
                    if self.sched[tg] != t {
                        continue; // superseded wake-up
                    }
                    self.sched[tg] = u64::MAX;
                }
                _ => {}
            }
            self.stats.events += 1;
            match kind {
                Kind::Link => self.on_link(idx),
                Kind::Sender => self.on_sender_timer(idx),
                Kind::Receiver => self.on_receiver_timer(idx),
                Kind::Start => self.on_start(idx),
                Kind::Stop => self.on_stop(idx),
                Kind::Sample => self.on_sample(),
            }
        }
        self.now = self.now.max(until);
    }

    pub fn finished(&self) -> bool {
        self.now >= self.end
    }

    fn on_link(&mut self, l: u32) {
        let now = self.now;
        while let Some((m, _)) = self.links[l as usize].pop_arrival(now) {
            self.forward(m);
        }
        self.collect_drops(l);
        let t = self.links[l as usize].next_event_time();
        self.wake(Kind::Link, l, t);
    }

    fn collect_drops(&mut self, l: u32) {
        self.drop_scratch.extend(self.links[l as usize].take_drops_with_reason());
        for i in 0..self.drop_scratch.len() {
            let (m, why) = self.drop_scratch[i];
            let p = self.pkts.remove(m.id & IDX_MASK);
            if let Seg::Data(d) = p.seg {
                if !d.syn {
                    self.data_in_net -= 1;
                    self.rec.dropped(self.now, p.flow, p.size, l, p.rec, why == DropReason::Loss);
                }
            }
        }
        self.drop_scratch.clear();
    }

    /// Put a packet onto link `l` now.
    fn enqueue(&mut self, l: u32, meta: PktMeta) {
        self.links[l as usize].enqueue(self.now, meta);
        self.collect_drops(l);
        let t = self.links[l as usize].next_event_time();
        self.wake(Kind::Link, l, t);
    }

    /// A packet reached the far end of its current link: next hop or its destination host.
    fn forward(&mut self, meta: PktMeta) {
        let flow = meta.flow as usize;
        let hop = ((meta.id & HOP_MASK) >> HOP_SHIFT) + 1;
        let route = &self.routes[flow];
        let path = if meta.id & ACK_BIT != 0 { &route.1 } else { &route.0 };
        if (hop as usize) < path.len() {
            let l = path[hop as usize];
            let id = (meta.id & !HOP_MASK) | (hop << HOP_SHIFT);
            self.enqueue(l, PktMeta { id, ..meta });
            return;
        }
        let p = self.pkts.remove(meta.id & IDX_MASK);
        match p.seg {
            Seg::Data(mut seg) => {
                seg.ce = meta.ecn == netmodel::ECN_CE; // a queue on the way may have marked it
                if !seg.syn {
                    self.data_in_net -= 1;
                    self.rec.delivered(self.now, p.flow, p.size, p.sent_ns, p.rec);
                }
                self.flows[flow].receiver.on_data(self.now, &seg);
                self.flush_receiver(p.flow);
            }
            Seg::Ack(ack) => {
                if self.flows[flow].active {
                    self.flows[flow].sender.on_ack(self.now, &ack);
                    self.flush_sender(p.flow);
                }
            }
        }
    }

    fn flush_sender(&mut self, f: u32) {
        let now = self.now;
        while let Some(seg) = self.flows[f as usize].sender.poll_transmit(now) {
            let size = seg.ip_bytes();
            let rec = if seg.syn {
                u32::MAX
            } else {
                self.data_in_net += 1;
                self.rec.sent(now, f, seg.seq, size, seg.retrans)
            };
            let first = self.routes[f as usize].0[0];
            let ecn = if seg.ect { netmodel::ECN_ECT0 } else { netmodel::ECN_NOT_ECT };
            let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec, size, seg: Seg::Data(seg) });
            self.stats.packets += 1;
            self.enqueue(first, PktMeta { id, size, flow: f, ecn });
        }
        let t = self.flows[f as usize].sender.next_timer();
        self.wake(Kind::Sender, f, t);
    }

    fn flush_receiver(&mut self, f: u32) {
        let now = self.now;
        while let Some(ack) = self.flows[f as usize].receiver.poll_ack(now) {
            let size = ack.ip_bytes();
            let first = self.routes[f as usize].1[0];
            let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec: u32::MAX, size, seg: Seg::Ack(ack) }) | ACK_BIT;
            self.stats.packets += 1;
            self.enqueue(first, PktMeta { id, size, flow: f, ecn: netmodel::ECN_NOT_ECT });
        }
        let t = self.flows[f as usize].receiver.next_timer();
        self.wake(Kind::Receiver, f, t);
    }

    fn on_sender_timer(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        if !fs.active {
            return;
        }
        if fs.sender.next_timer().is_some_and(|t| t <= self.now) {
            fs.sender.on_timer(self.now);
        }
        self.flush_sender(f);
    }

    fn on_receiver_timer(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        if fs.receiver.next_timer().is_some_and(|t| t <= self.now) {
            fs.receiver.on_timer(self.now);
        }
        self.flush_receiver(f);
    }

    fn on_start(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        fs.active = true;
        fs.started = true;
        fs.sender.open(self.now);
        self.flush_sender(f);
    }

    /// The application is killed at its stop time (as CoCo-Beholder kills its flows): the
    /// sender sends nothing more; packets already in the network still arrive and are ACKed.
    fn on_stop(&mut self, f: u32) {
        self.flows[f as usize].active = false;
        let tg = self.target(Kind::Sender, f);
        self.sched[tg] = u64::MAX;
    }

    fn on_sample(&mut self) {
        let now = self.now;
        for f in 0..self.flows.len() {
            let fs = &self.flows[f];
            if !fs.active {
                continue;
            }
            let s = fs.sender.sample(now);
            self.cc_scratch.clear();
            fs.sender.cc_sample(&mut self.cc_scratch);
            self.rec.flow_sample(now, f as u32, &s, &self.cc_scratch);
        }
        for l in 0..self.links.len() {
            // Serialisations that ended by now may have dequeued (and, for AQMs, dropped).
            self.links[l].sync(now);
            self.collect_drops(l as u32);
        }
        for (i, l) in self.links.iter().enumerate() {
            self.rec.queue_sample(
                now,
                i as u32,
                l.queue_packets() as u32,
                l.queue_bytes(),
                l.stats.dropped_pkts,
                l.stats.dropped_bytes,
                l.stats.tx_bytes,
                l.stats.lost_pkts,
            );
        }
        let next = now + self.sample_ns;
        if next <= self.end {
            self.push(next, Kind::Sample, 0);
        }
    }

    /// Run to the end (if not done yet) and build the output tables.
    pub fn finish(mut self) -> Output {
        self.run_until(self.end);
        let mut stats = std::mem::take(&mut self.stats);
        stats.sim_time_ns = self.end;
        stats.bottleneck_packets =
            self.bottlenecks.iter().map(|&b| self.links[b as usize].stats.tx_pkts).sum();
        stats.data_in_flight_at_end = self.data_in_net;
        let end = self.end;
        stats.delay_switches = self
            .links
            .iter_mut()
            .enumerate()
            .filter_map(|(i, l)| {
                let steps = l.delay_steps(end);
                (!steps.is_empty()).then_some(crate::output::DelaySwitches { link: i as u32, steps })
            })
            .collect();
        stats.random_losses = self.links.iter().map(|l| l.stats.lost_pkts).collect();
        debug_assert!(self.pkts.live() as u64 >= self.data_in_net);
        let start: Vec<u64> = self.flows.iter().map(|f| f.start_ns).collect();
        let completed: Vec<Option<u64>> = self.flows.iter().map(|f| f.sender.completed_at()).collect();
        for f in self.flows.iter_mut() {
            f.app_bytes = f.sender.sample(self.end).bytes_acked;
        }
        let app: Vec<u64> = self.flows.iter().map(|f| f.app_bytes).collect();
        let tables = self.rec.finish(&start, &completed, &app);
        Output { tables, stats }
    }
}

/// Convenience: run a resolved experiment given as JSON to completion.
pub fn run_json(json: &str) -> Result<Output, String> {
    let exp = Experiment::from_json(json)?;
    Ok(Sim::new(&exp)?.finish())
}
