//! The discrete-event loop: links, hosts and recorders driven in virtual time.
//!
//! Events are small `Copy` entries `(time, seq, kind, index)` in a binary heap (`events.rs`);
//! `seq` breaks ties in insertion order, which makes a run a pure function of the experiment
//! and seed. Every event target (link, sender, receiver) has at most one *live* wake-up:
//! `sched[t]` holds its time and entries that no longer match are skipped (lazy deletion), so
//! the heap never needs a decrease-key.
//!
//! Child modules hold the loop's other parts: `sampling.rs` (periodic `flows`/`queues` rows
//! and the output tables), `capture_taps.rs` (the pcapng capture's taps), `exits.rs` (link
//! exits under host noise), `dgram.rs` and `probe.rs` (the datagram and probe endpoints).
//!
//! Packets live in a slab and move through the network as 12-byte handles
//! ([`netmodel::PktMeta`]); their TCP headers stay in the slab. In steady state nothing is
//! allocated per packet or per event.
//!
//! Endpoints are *connections*: one per resolved flow (same id), plus one per short-flow
//! arrival (ids after the resolved flows), created when it arrives and freed when all its
//! bytes are acknowledged. A connection's packets carry its id in [`PktMeta::flow`] (routing,
//! per-flow queues) and are recorded under its resolved flow (for an arrival, its group's
//! template flow); per-connection FCTs go to the `conns` table.

use std::sync::Arc;

use netmodel::{DropReason, Link, PktMeta};

use crate::capture::{Capture, CaptureConfig};
use crate::cc;
use crate::cc::external::ExternalCc;
use crate::experiment::{Experiment, FlowConfig, UDP_SCHEME};
use crate::noise::Noise;
use crate::output::RunStats;
use netmodel::records::{ConnRow, QueueRow, Recorder, NO_RECORD};
use crate::tcp::{AckSeg, DataSeg, TcpConfig, TcpReceiver, TcpSender};
use crate::workload::{AppAction, AppModel, Arrivals};
use netmodel::scenario::Transport;

#[path = "events.rs"]
mod events;
use events::{Events, Kind, EV_IDX_MASK};

#[path = "dgram.rs"]
mod dgram_end;
use dgram_end::DgramEnd;

#[derive(Clone, Copy)]
enum Seg {
    Data(DataSeg),
    Ack(AckSeg),
    /// A UDP datagram.
    Udp,
    /// A datagram-transport data packet: its sequence number (dgram.rs).
    DgramData(u64),
    /// A datagram-transport acknowledgement: its index in the connection's table (dgram.rs).
    DgramAck(u32),
    /// A latency probe (`echo`: its way back; probe.rs).
    Probe { seq: u64, echo: bool },
}

impl Seg {
    /// Whether it is a data packet of the records (not a SYN, not an ACK).
    #[inline]
    fn is_data(&self) -> bool {
        match self {
            Seg::Data(d) => !d.syn,
            Seg::Udp | Seg::DgramData(_) => true,
            Seg::Ack(_) | Seg::DgramAck(_) | Seg::Probe { .. } => false,
        }
    }
}

/// IPv4 (20) + UDP (8) header bytes of a datagram.
pub const UDP_HDR_BYTES: u32 = 28;

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
    /// Packet-record index (data packets with per-packet records on), else `NO_RECORD`.
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

enum Endpoint {
    Tcp { sender: TcpSender, receiver: TcpReceiver },
    /// Constant-bit-rate UDP source: datagrams of `size` IP bytes from the app model.
    Udp { next_seq: u64, delivered_payload: u64 },
    /// The congestion-controlled datagram transport (dgram.rs).
    Dgram(Box<DgramEnd>),
    /// Latency probes (probe.rs).
    Probe(probe::ProbeEndpoint),
}

struct Conn {
    ep: Endpoint,
    active: bool,
    app: Option<AppModel>,
}

pub struct Sim {
    now: u64,
    end: u64,
    sample_ns: u64,
    links: Vec<Link>,
    bottlenecks: Vec<u32>,
    seed: u64,
    /// The resolved flows (templates of their connections).
    cfgs: Vec<FlowConfig>,
    tcp: TcpConfig,
    /// Connections by id; `None` once a short flow is freed (or for an arrival template).
    conns: Vec<Option<Box<Conn>>>,
    /// Per connection: its resolved flow (route and recorder row); kept apart from the
    /// bulky connection state so that forwarding reads small, hot arrays.
    conn_flow: Vec<u32>,
    /// Per resolved flow: (data route, ACK route) as link ids.
    routes: Vec<(Box<[u32]>, Box<[u32]>)>,
    /// Per resolved flow: its arrival process (arrival groups only).
    arrivals: Vec<Option<Arrivals>>,
    /// Short flows, in arrival order (connection `n_flows + i` is `conn_log[i]`).
    conn_log: Vec<ConnRow>,
    pkts: Slab,
    events: Events,
    /// Live wake-up time per target: links, then (sender, receiver) per connection.
    sched: Vec<u64>,
    rec: Recorder,
    stats: RunStats,
    /// Data packets (not SYNs) currently inside the network, for the conservation check.
    data_in_net: u64,
    cc_scratch: Vec<(&'static str, f64)>,
    drop_scratch: Vec<(PktMeta, DropReason)>,
    /// Source of user-supplied congestion control (cc/external.rs), asked before the registry.
    ext: Option<Arc<dyn ExternalCc>>,
    /// pcapng capture (`set_capture`); None in ordinary runs.
    capture: Option<Box<Capture>>,
    /// Host/router timing noise (`None`: exact timing).
    noise: Option<Box<Noise>>,
    /// Per link: connections stopped by TCP Small Queues on it, polled again when one of its
    /// transmissions completes (empty unless a flow has `tsq` on).
    tsq_waiters: Vec<Vec<u32>>,
    /// Connections waiting in `tsq_waiters`, all links together (0: no link needs a look).
    tsq_waiting: usize,
    /// Per link: whether it was quiescent at its last sample and no packet was offered to it
    /// since; `on_sample` then repeats its last `queues` row (`quiet_rows`) without touching
    /// the link. One byte per link, as every enqueue clears it.
    quiet: Vec<bool>,
    quiet_rows: Vec<QueueRow>,
}

impl Sim {
    pub fn new(exp: &Experiment) -> Result<Self, String> {
        Self::with_external(exp, None)
    }

    /// As [`Sim::new`], with `ext` asked first for every connection's congestion control.
    pub fn with_external(exp: &Experiment, ext: Option<Arc<dyn ExternalCc>>) -> Result<Self, String> {
        exp.validate()?;
        // BPF schemes built for the simulator (cc/native) come before `ext`
        let ext = cc::native::with_programs(exp, ext)?;
        if let Some(f) = exp.flows.iter().find(|f| f.path.len() > MAX_HOPS || f.rev_path.len() > MAX_HOPS) {
            return Err(format!("flow {}: routes longer than {MAX_HOPS} links are not supported", f.id + 1));
        }
        let mut tcp = exp.tcp.clone();
        tcp.mss = exp.mss;
        let mut conns = Vec::with_capacity(exp.flows.len());
        for f in &exp.flows {
            let conn = if f.arrivals.is_some() {
                // Checked here so a bad scheme fails before the run, not at the first arrival.
                Self::make_cc(ext.as_deref(), f, exp.seed, f.id, f.tcp.as_ref().unwrap_or(&tcp).cc_generation)?;
                None
            } else {
                let app = (f.app_rate_bps.is_some() || f.onoff.is_some()).then(|| {
                    let chunk = if f.scheme == UDP_SCHEME { (exp.mss + crate::tcp::HDR_BYTES) as u64 } else { exp.mss as u64 };
                    AppModel::new(f.app_rate_bps, f.onoff, chunk)
                });
                let ep = if f.transport == Transport::Dgram {
                    Endpoint::Dgram(Box::new(DgramEnd::new(f, exp.seed, exp.mss)?))
                } else if f.scheme == UDP_SCHEME {
                    Endpoint::Udp { next_seq: 0, delivered_payload: 0 }
                } else if let Some(p) = f.probe {
                    Endpoint::Probe(probe::ProbeEndpoint::new(p))
                } else {
                    Self::tcp_endpoint(ext.as_deref(), &tcp, f, exp.seed, f.id, exp.mss, if app.is_some() { None } else { Some(f.bytes) })?
                };
                Some(Box::new(Conn { ep, active: false, app }))
            };
            conns.push(conn);
        }
        let n_links = exp.links.len();
        let n_flows = conns.len();
        assert!(n_links.max(n_flows) as u64 <= EV_IDX_MASK, "more than 2^28 links or flows");
        let mut sim = Sim {
            now: 0,
            end: exp.duration_ns,
            sample_ns: exp.sample_interval_ns,
            links: Link::build_all(exp.links.iter().map(|l| Self::clocked(exp, l)), exp.seed),
            bottlenecks: exp.bottleneck_links.clone(),
            seed: exp.seed,
            cfgs: exp.flows.clone(),
            tcp,
            conns,
            conn_flow: (0..n_flows as u32).collect(),
            routes: exp.flows.iter().map(|f| (f.path.clone().into(), f.rev_path.clone().into())).collect(),
            arrivals: exp.flows.iter().map(|f| f.arrivals.as_ref().map(|a| Arrivals::new(a, exp.seed, f.id))).collect(),
            conn_log: Vec::new(),
            pkts: Slab { items: Vec::new(), free: Vec::new() },
            events: Events::for_targets(n_links + 2 * n_flows),
            sched: vec![u64::MAX; n_links + 2 * n_flows],
            rec: Recorder::new(n_flows, exp.sample_interval_ns, exp.hist_bucket_ns, exp.record_packets),
            stats: RunStats::default(),
            data_in_net: 0,
            cc_scratch: Vec::new(),
            drop_scratch: Vec::new(),
            tsq_waiters: vec![Vec::new(); n_links],
            tsq_waiting: 0,
            quiet: vec![false; n_links],
            quiet_rows: vec![QueueRow::default(); n_links],
            ext,
            capture: None,
            noise: exp.host_noise.as_ref().map(|c| Box::new(Noise::new(c, exp.seed, n_links))),
        };
        if let Some(n) = sim.noise.as_deref_mut() {
            // An exit has noise only if some route ends there (docs: `router_ns` once per path).
            let mut hosts = vec![false; n_links];
            for p in sim.routes.iter().flat_map(|(p, r)| [p.last(), r.last()]).flatten() {
                hosts[*p as usize] = true;
            }
            for ((e, l), h) in n.exits.iter_mut().zip(&sim.links).zip(hosts) {
                e.hosts = h;
                e.in_order = h && l.fifo_exit();
            }
        }
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
        sim.expect_samples();
        sim.push(0, Kind::Sample, 0);
        Ok(sim)
    }

    /// Link `l` as built: with host noise on, a constant rate runs on the link's own clock.
    fn clocked(exp: &Experiment, l: &netmodel::LinkConfig) -> netmodel::LinkConfig {
        let mut l = l.clone();
        if let (Some(n), Some(r)) = (&exp.host_noise, l.rate_bps) {
            l.rate_bps = Some(crate::noise::clocked_rate(n, exp.seed, l.id, r));
        }
        l
    }

    /// A TCP sender/receiver pair for resolved flow `f` as connection `conn`: `bytes` =
    /// `Some(n)` a finite or bulk (`None`) flow, `None` = driven by an application model.
    fn tcp_endpoint(ext: Option<&dyn ExternalCc>, tcp: &TcpConfig, f: &FlowConfig, seed: u64, conn: u32, mss: u32,
                    bytes: Option<Option<u64>>) -> Result<Endpoint, String> {
        let cc = Self::make_cc(ext, f, seed, conn, f.tcp.as_ref().unwrap_or(tcp).cc_generation)?;
        let ftcp = crate::tcp::flow_tcp_config(tcp, f.tcp.as_ref(), f.ecn, mss, cc.as_ref());
        let receiver = TcpReceiver::new(&ftcp);
        let sender = match bytes {
            Some(b) => TcpSender::new(&ftcp, cc, b),
            None => TcpSender::new_app_driven(&ftcp, cc),
        };
        Ok(Endpoint::Tcp { sender, receiver })
    }

    /// Connection `conn`'s congestion control: `ext`'s if it claims the flow, else the registry's
    /// (with the flow's `cc_generation`, a TCP profile's kernel, for schemes that take one).
    fn make_cc(ext: Option<&dyn ExternalCc>, f: &FlowConfig, seed: u64, conn: u32, generation: Option<u32>)
               -> Result<Box<dyn cc::CongestionControl>, String> {
        let made = match ext.and_then(|x| x.make(f, conn)) {
            Some(r) => r,
            None => {
                let params = cc::engine_params(&f.scheme, &f.params, seed, conn as u64);
                cc::make(&f.scheme, &cc::with_generation(&f.scheme, &params, generation))
            }
        };
        made.map_err(|e| format!("flow {} ({}): {e}", f.id + 1, f.label))
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// Write pcapng captures of this run (see [`crate::capture`]); call before running.
    pub fn set_capture(&mut self, cfg: &CaptureConfig, exp: &Experiment) -> Result<(), String> {
        self.capture = Some(Box::new(Capture::new(cfg, exp)?));
        // A capture writes each packet's exit when it happens: every exit is an event again.
        if let Some(n) = self.noise.as_deref_mut() {
            n.exits.iter_mut().for_each(|e| e.in_order = false);
        }
        Ok(())
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    #[inline]
    fn push(&mut self, t: u64, kind: Kind, idx: u32) {
        self.events.push(t, kind, idx);
        self.stats.max_pending_events = self.stats.max_pending_events.max(self.events.len() as u64);
    }

    fn target(&self, kind: Kind, idx: u32) -> usize {
        let nl = self.links.len();
        match kind {
            Kind::Link => idx as usize,
            Kind::Sender => nl + 2 * idx as usize,
            Kind::Receiver => nl + 2 * idx as usize + 1,
            _ => unreachable!(),
        }
    }

    /// Make sure target (kind, idx) wakes at `t` (or earlier if already scheduled earlier).
    fn wake(&mut self, kind: Kind, idx: u32, t: Option<u64>) {
        let Some(mut t) = t else { return };
        let tg = self.target(kind, idx);
        if let (Some(n), false) = (self.noise.as_deref_mut(), kind == Kind::Link) {
            t = n.slacken(tg, t); // a host timer fires after its slack
        }
        let t = t.max(self.now);
        if t < self.sched[tg] || self.sched[tg] < self.now {
            self.sched[tg] = t;
            self.push(t, kind, idx);
        }
    }

    /// Run every event with time ≤ `until` (clamped to the experiment's end).
    pub fn run_until(&mut self, until: u64) {
        let until = until.min(self.end);
        while let Some((t, kind, idx)) = self.events.peek() {
            if t > until {
                break;
            }
            self.events.pop();
            self.now = t;
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
                Kind::App => self.on_app(idx),
                Kind::Arrival => self.on_arrival(idx),
                Kind::Exit => self.on_exit(idx),
            }
        }
        self.now = self.now.max(until);
        if self.noise.is_some() {
            self.exits_reached(until);
        }
    }

    pub fn finished(&self) -> bool {
        self.now >= self.end
    }

    fn on_link(&mut self, l: u32) {
        let now = self.now;
        if self.tsq_waiting > 0 && !self.tsq_waiters[l as usize].is_empty() {
            // A transmission may have completed: the throttled senders try again (each
            // registers anew if it is still over its limit).
            let waiters = std::mem::take(&mut self.tsq_waiters[l as usize]);
            self.tsq_waiting -= waiters.len();
            self.links[l as usize].set_host_waiting(false);
            for c in waiters {
                self.flush_sender(c);
            }
        }
        if self.in_order_exit(l) {
            self.exit_in_order(l);
        } else {
            while let Some((m, _)) = self.links[l as usize].pop_arrival(now) {
                if self.capture.is_some() {
                    self.capture_exit(l, m);
                }
                if self.noisy_exit(l) {
                    self.exit_noisy(l, m);
                } else {
                    self.forward(m, false);
                }
            }
        }
        self.collect_drops(l);
        self.wake_link(l);
    }

    /// Link `l`'s one wake-up: its next arrival, or with host noise on an in-order exit
    /// ([`Sim::exit_in_order`]) the next hand-over.
    #[inline(always)]
    fn wake_link(&mut self, l: u32) {
        let t = if self.in_order_exit(l) { self.next_hand_over(l) } else { self.links[l as usize].next_event_time() };
        self.wake(Kind::Link, l, t);
    }

    #[inline(always)]
    fn in_order_exit(&self, l: u32) -> bool {
        self.noise.as_deref().is_some_and(|n| n.exits[l as usize].in_order)
    }

    /// Whether link `l`'s exit has host noise (noise on and some route ends there).
    #[inline(always)]
    fn noisy_exit(&self, l: u32) -> bool {
        self.noise.as_deref().is_some_and(|n| n.exits[l as usize].hosts)
    }

    #[inline]
    fn collect_drops(&mut self, l: u32) {
        if self.links[l as usize].has_drops() {
            self.collect_drops_slow(l);
        }
    }

    #[inline(never)]
    fn collect_drops_slow(&mut self, l: u32) {
        self.drop_scratch.extend(self.links[l as usize].take_drops_with_reason());
        for i in 0..self.drop_scratch.len() {
            let (m, why) = self.drop_scratch[i];
            let p = self.pkts.remove(m.id & IDX_MASK);
            let data = match p.seg {
                Seg::Data(d) => !d.syn,
                Seg::Udp | Seg::DgramData(_) => true,
                Seg::Ack(_) | Seg::Probe { .. } => false,
                Seg::DgramAck(k) => {
                    self.dgram_ack_dropped(m.flow, k);
                    false
                }
            };
            if data {
                self.data_in_net -= 1;
                self.rec.dropped(self.now, p.flow, p.size, l, p.rec, why);
            }
        }
        self.drop_scratch.clear();
    }

    /// Put a packet onto link `l` now.
    fn enqueue(&mut self, l: u32, meta: PktMeta) {
        if self.capture.is_some() {
            self.capture_enter(l, meta);
        }
        self.quiet[l as usize] = false;
        self.links[l as usize].enqueue(self.now, meta);
        self.collect_drops(l);
        self.wake_link(l);
    }

    /// A packet reached the far end of its current link: next hop or its destination host.
    /// `recorded`: its arrival at the host was already recorded ([`Sim::exit_noisy`]).
    fn forward(&mut self, meta: PktMeta, recorded: bool) {
        let conn = meta.flow;
        let hop = ((meta.id & HOP_MASK) >> HOP_SHIFT) + 1;
        let route = &self.routes[self.conn_flow[conn as usize] as usize];
        let path = if meta.id & ACK_BIT != 0 { &route.1 } else { &route.0 };
        if (hop as usize) < path.len() {
            let l = path[hop as usize];
            let id = (meta.id & !HOP_MASK) | (hop << HOP_SHIFT);
            self.enqueue(l, PktMeta { id, ..meta });
            return;
        }
        let p = self.pkts.remove(meta.id & IDX_MASK);
        let now = self.now;
        match p.seg {
            Seg::Data(mut seg) => {
                seg.ce = meta.ecn == netmodel::ECN_CE; // a queue on the way may have marked it
                if !seg.syn && !recorded {
                    self.data_in_net -= 1;
                    self.rec.delivered(now, p.flow, p.size, p.sent_ns, p.rec);
                }
                // A freed short flow's late duplicates are counted as delivered and dropped.
                if let Some(Endpoint::Tcp { receiver, .. }) = self.conns[conn as usize].as_deref_mut().map(|c| &mut c.ep) {
                    receiver.on_data(now, &seg);
                    self.flush_receiver(conn);
                }
            }
            Seg::Ack(ack) => {
                let Some(c) = self.conns[conn as usize].as_deref_mut() else { return };
                if let (true, Endpoint::Tcp { sender, .. }) = (c.active, &mut c.ep) {
                    sender.on_ack(now, &ack);
                    let done = sender.completed_at().is_some();
                    self.flush_sender(conn);
                    if done && conn as usize >= self.cfgs.len() {
                        self.free_short_flow(conn);
                    }
                }
            }
            Seg::Probe { seq, echo } => self.probe_arrived(conn, seq, echo, p.size),
            Seg::Udp => {
                if !recorded {
                    self.data_in_net -= 1;
                    self.rec.delivered(now, p.flow, p.size, p.sent_ns, p.rec);
                }
                if let Some(Endpoint::Udp { delivered_payload, .. }) = self.conns[conn as usize].as_deref_mut().map(|c| &mut c.ep) {
                    *delivered_payload += (p.size - UDP_HDR_BYTES) as u64;
                }
            }
            Seg::DgramData(seq) => {
                if !recorded {
                    self.data_in_net -= 1;
                    self.rec.delivered(now, p.flow, p.size, p.sent_ns, p.rec);
                }
                self.on_dgram_data(conn, seq, p.sent_ns, p.size);
            }
            Seg::DgramAck(k) => self.on_dgram_ack(conn, k),
        }
    }

    fn sender_of(&mut self, c: u32) -> Option<&mut TcpSender> {
        match self.conns[c as usize].as_deref_mut().map(|c| &mut c.ep) {
            Some(Endpoint::Tcp { sender, .. }) => Some(sender),
            _ => None,
        }
    }

    fn receiver_of(&mut self, c: u32) -> Option<&mut TcpReceiver> {
        match self.conns[c as usize].as_deref_mut().map(|c| &mut c.ep) {
            Some(Endpoint::Tcp { receiver, .. }) => Some(receiver),
            _ => None,
        }
    }

    fn flush_sender(&mut self, c: u32) {
        let now = self.now;
        let f = self.conn_flow[c as usize];
        let first = self.routes[f as usize].0[0];
        let tsq = self.sender_of(c).is_some_and(|s| s.uses_tsq());
        if tsq {
            self.links[first as usize].track_host_queue();
        }
        loop {
            if tsq {
                let (b, n) = self.links[first as usize].host_queue(now, c);
                if let Some(sender) = self.sender_of(c) {
                    sender.set_host_queue(b, n);
                }
            }
            let Some(sender) = self.sender_of(c) else { return };
            let Some(seg) = sender.poll_transmit(now) else { break };
            let size = seg.ip_bytes();
            let rec = if seg.syn {
                NO_RECORD
            } else {
                self.data_in_net += 1;
                self.rec.sent(now, f, seg.seq, size, seg.retrans)
            };
            let ecn = if seg.ect { netmodel::ECN_ECT0 } else { netmodel::ECN_NOT_ECT };
            let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec, size, seg: Seg::Data(seg) });
            self.stats.packets += 1;
            self.enqueue(first, PktMeta { id, size, flow: c, ecn });
        }
        if tsq && self.sender_of(c).is_some_and(|s| s.tsq_throttled()) {
            let w = &mut self.tsq_waiters[first as usize];
            if !w.contains(&c) {
                w.push(c);
                self.tsq_waiting += 1;
            }
            self.links[first as usize].set_host_waiting(true);
            self.wake_link(first);
        }
        let t = self.sender_of(c).and_then(|s| s.next_timer());
        self.wake(Kind::Sender, c, t);
    }

    fn flush_receiver(&mut self, c: u32) {
        let now = self.now;
        let f = self.conn_flow[c as usize];
        let first = self.routes[f as usize].1[0];
        loop {
            let Some(receiver) = self.receiver_of(c) else { return };
            let Some(ack) = receiver.poll_ack(now) else { break };
            let size = ack.ip_bytes();
            let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec: NO_RECORD, size, seg: Seg::Ack(ack) }) | ACK_BIT;
            self.stats.packets += 1;
            self.enqueue(first, PktMeta { id, size, flow: c, ecn: netmodel::ECN_NOT_ECT });
        }
        let t = self.receiver_of(c).and_then(|r| r.next_timer());
        self.wake(Kind::Receiver, c, t);
    }

    /// Send one UDP datagram of `size` IP bytes on connection `c`.
    fn send_udp(&mut self, c: u32, size: u32) {
        let now = self.now;
        let f = self.conn_flow[c as usize];
        let Some(Endpoint::Udp { next_seq, .. }) = self.conns[c as usize].as_deref_mut().map(|c| &mut c.ep) else { return };
        let seq = *next_seq;
        *next_seq += (size - UDP_HDR_BYTES) as u64;
        self.data_in_net += 1;
        let rec = self.rec.sent(now, f, seq, size, false);
        let first = self.routes[f as usize].0[0];
        let id = self.pkts.insert(Packet { flow: f, sent_ns: now, rec, size, seg: Seg::Udp });
        self.stats.packets += 1;
        self.enqueue(first, PktMeta { id, size, flow: c, ecn: netmodel::ECN_NOT_ECT });
    }

    fn on_sender_timer(&mut self, c: u32) {
        let now = self.now;
        let Some(conn) = self.conns[c as usize].as_deref_mut() else { return };
        if let Endpoint::Dgram(_) = conn.ep {
            return self.on_dgram_sender_timer(c);
        }
        let (true, Endpoint::Tcp { sender, .. }) = (conn.active, &mut conn.ep) else { return };
        if sender.next_timer().is_some_and(|t| t <= now) {
            sender.on_timer(now);
        }
        self.flush_sender(c);
    }

    fn on_receiver_timer(&mut self, c: u32) {
        let now = self.now;
        if self.dgram_of(c).is_some() {
            return self.flush_dgram_receiver(c);
        }
        let Some(receiver) = self.receiver_of(c) else { return };
        if receiver.next_timer().is_some_and(|t| t <= now) {
            receiver.on_timer(now);
        }
        self.flush_receiver(c);
    }

    fn on_start(&mut self, f: u32) {
        let now = self.now;
        if let Some(arr) = self.arrivals[f as usize].as_mut() {
            let t = now + arr.next_gap();
            if t < self.end {
                self.push(t, Kind::Arrival, f);
            }
            return;
        }
        let Some(conn) = self.conns[f as usize].as_deref_mut() else { return };
        conn.active = true;
        let has_app = conn.app.is_some() || matches!(conn.ep, Endpoint::Probe(_));
        match &mut conn.ep {
            Endpoint::Tcp { sender, .. } => sender.open(now),
            Endpoint::Dgram(d) => {
                d.start(now);
                return self.flush_dgram_sender(f);
            }
            Endpoint::Udp { .. } | Endpoint::Probe(_) => {}
        }
        self.flush_sender(f);
        if has_app {
            self.on_app(f);
        }
    }

    /// The application of connection `c` acts now (see [`AppModel::step`]).
    fn on_app(&mut self, c: u32) {
        let now = self.now;
        let Some(conn) = self.conns[c as usize].as_deref_mut() else { return };
        if !conn.active {
            return;
        }
        if matches!(conn.ep, Endpoint::Probe(_)) {
            return self.probe_tick(c);
        }
        let Some(app) = conn.app.as_mut() else { return };
        let (act, next) = app.step(now);
        match (&mut conn.ep, act) {
            (Endpoint::Tcp { sender, .. }, AppAction::Write(n)) => {
                sender.app_write(now, n);
                self.flush_sender(c);
            }
            (Endpoint::Tcp { sender, .. }, AppAction::Pause) => sender.app_pause(now),
            (Endpoint::Udp { .. }, AppAction::Write(n)) => self.send_udp(c, n.min(u32::MAX as u64) as u32),
            _ => {}
        }
        let stop = self.cfgs[self.conn_flow[c as usize] as usize].stop_ns.unwrap_or(u64::MAX);
        if let Some(t) = next.filter(|&t| t < self.end.min(stop)) {
            self.push(t, Kind::App, c);
        }
    }

    /// A short flow of template flow `f` arrives: a new connection with a size drawn from
    /// the group's distribution, over the template's hosts and route.
    fn on_arrival(&mut self, f: u32) {
        let now = self.now;
        let Some(arr) = self.arrivals[f as usize].as_mut() else { return };
        let size = arr.next_size();
        let next = now + arr.next_gap();
        if next < self.end.min(self.cfgs[f as usize].stop_ns.unwrap_or(u64::MAX)) {
            self.push(next, Kind::Arrival, f);
        }
        let c = self.conns.len() as u32;
        assert!((c as u64) <= EV_IDX_MASK, "more than 2^28 connections");
        let ep = Self::tcp_endpoint(self.ext.as_deref(), &self.tcp, &self.cfgs[f as usize], self.seed, c, self.tcp.mss, Some(Some(size)))
            .expect("scheme checked at construction");
        self.conns.push(Some(Box::new(Conn { ep, active: true, app: None })));
        self.conn_flow.push(f);
        self.sched.extend([u64::MAX, u64::MAX]);
        self.conn_log.push(ConnRow { conn: c, flow: f, size, start_ns: now, completed_ns: None, acked: 0, retrans: 0 });
        if let Some(s) = self.sender_of(c) {
            s.open(now);
        }
        self.flush_sender(c);
    }

    /// A short flow completed: log it and free its state. Its packets still in the network
    /// (late duplicates, ACKs) are dropped on arrival; its timers are cancelled.
    fn free_short_flow(&mut self, c: u32) {
        let Some(conn) = self.conns[c as usize].take() else { return };
        if let Endpoint::Tcp { sender, .. } = &conn.ep {
            let log = &mut self.conn_log[c as usize - self.cfgs.len()];
            log.completed_ns = sender.completed_at();
            let s = sender.sample(self.now);
            log.acked = s.bytes_acked;
            log.retrans = s.retrans;
        }
        let tg = self.target(Kind::Sender, c);
        self.sched[tg] = u64::MAX;
        self.sched[tg + 1] = u64::MAX;
    }

    /// The application is killed at its stop time (as CoCo-Beholder kills its flows): the
    /// sender sends nothing more; packets already in the network still arrive and are ACKed.
    /// For an arrival group, no more flows arrive; flows already open run to completion.
    fn on_stop(&mut self, f: u32) {
        if self.arrivals[f as usize].take().is_some() {
            return;
        }
        if let Some(c) = self.conns[f as usize].as_deref_mut() {
            c.active = false;
            if let Endpoint::Dgram(d) = &mut c.ep {
                d.stop();
            }
        }
        let tg = self.target(Kind::Sender, f);
        self.sched[tg] = u64::MAX;
    }
}

#[path = "probe.rs"]
mod probe;

#[cfg(test)]
#[path = "workload_tests.rs"]
mod workload_tests;

#[cfg(test)]
#[path = "csma_tests.rs"]
mod csma_tests;

#[cfg(test)]
#[path = "noise_tests.rs"]
mod noise_tests;

#[path = "exits.rs"]
mod exits;

#[path = "capture_taps.rs"]
mod capture_taps;

#[path = "sampling.rs"]
mod sampling;
