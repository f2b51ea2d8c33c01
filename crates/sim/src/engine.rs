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

use netmodel::{Link, PktMeta};

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

#[derive(Clone, Copy)]
struct Packet {
    flow: u32,
    /// Index in the flow's path (data) or rev_path (ACK) of the link it is on.
    hop: u16,
    /// Time the sending host emitted it.
    sent_ns: u64,
    /// Packet-record index (data packets with per-packet records on), else u32::MAX.
    rec: u32,
    size: u32,
    /// ECN codepoint of the IP header (netmodel::ECN_*); queues may turn ECT into CE.
    ecn: u8,
    seg: Seg,
}

/// Pool of in-network packets; freed slots are reused.
struct Slab {
    items: Vec<Packet>,
    free: Vec<u32>,
}

impl Slab {
    fn insert(&mut self, p: Packet) -> u32 {
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
    path: Vec<u32>,
    rev_path: Vec<u32>,
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
    drop_scratch: Vec<PktMeta>,
}

impl Sim {
    pub fn new(exp: &Experiment) -> Result<Self, String> {
        exp.validate()?;
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
                path: f.path.clone(),
                rev_path: f.rev_path.clone(),
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
            links: exp.links.iter().map(Link::new).collect(),
            bottlenecks: exp.bottleneck_links.clone(),
            flows,
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
            self.pkts.items[m.id as usize].ecn = m.ecn; // a CE mark travels with the packet
            self.forward(m.id);
        }
        self.collect_drops(l);
        let t = self.links[l as usize].next_event_time();
        self.wake(Kind::Link, l, t);
    }

    fn collect_drops(&mut self, l: u32) {
        self.drop_scratch.extend(self.links[l as usize].take_drops());
        for i in 0..self.drop_scratch.len() {
            let id = self.drop_scratch[i].id;
            let p = self.pkts.remove(id);
            if let Seg::Data(d) = p.seg {
                if !d.syn {
                    self.data_in_net -= 1;
                    self.rec.dropped(self.now, p.flow, p.size, l, p.rec);
                }
            }
        }
        self.drop_scratch.clear();
    }

    /// Put packet `id` onto link `l` now.
    fn enqueue(&mut self, l: u32, id: u32) {
        let p = &self.pkts.items[id as usize];
        let meta = PktMeta { id, size: p.size, flow: p.flow, ecn: p.ecn };
        self.links[l as usize].enqueue(self.now, meta);
        self.collect_drops(l);
        let t = self.links[l as usize].next_event_time();
        self.wake(Kind::Link, l, t);
    }

    /// A packet reached the far end of its current link: next hop or its destination host.
    fn forward(&mut self, id: u32) {
        let p = &mut self.pkts.items[id as usize];
        p.hop += 1;
        let (flow, hop) = (p.flow as usize, p.hop as usize);
        let path = match p.seg {
            Seg::Data(_) => &self.flows[flow].path,
            Seg::Ack(_) => &self.flows[flow].rev_path,
        };
        if hop < path.len() {
            let l = path[hop];
            self.enqueue(l, id);
            return;
        }
        let p = self.pkts.remove(id);
        match p.seg {
            Seg::Data(mut seg) => {
                seg.ce = p.ecn == netmodel::ECN_CE; // a queue on the way may have marked it
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
            let first = self.flows[f as usize].path[0];
            let ecn = if seg.ect { netmodel::ECN_ECT0 } else { netmodel::ECN_NOT_ECT };
            let id = self.pkts.insert(Packet { flow: f, hop: 0, sent_ns: now, rec, size, ecn, seg: Seg::Data(seg) });
            self.stats.packets += 1;
            self.enqueue(first, id);
        }
        let t = self.flows[f as usize].sender.next_timer();
        self.wake(Kind::Sender, f, t);
    }

    fn flush_receiver(&mut self, f: u32) {
        let now = self.now;
        while let Some(ack) = self.flows[f as usize].receiver.poll_ack(now) {
            let size = ack.ip_bytes();
            let first = self.flows[f as usize].rev_path[0];
            let ecn = netmodel::ECN_NOT_ECT;
            let id = self.pkts.insert(Packet { flow: f, hop: 0, sent_ns: now, rec: u32::MAX, size, ecn, seg: Seg::Ack(ack) });
            self.stats.packets += 1;
            self.enqueue(first, id);
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
        for (i, l) in self.links.iter().enumerate() {
            self.rec.queue_sample(
                now,
                i as u32,
                l.queue_packets() as u32,
                l.queue_bytes(),
                l.stats.dropped_pkts,
                l.stats.dropped_bytes,
                l.stats.tx_bytes,
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
