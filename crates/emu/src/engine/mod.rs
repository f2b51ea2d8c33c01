//! The real-time engine of the emulation backend (run by the `ccbench-emu` binary).
//!
//! It owns the TUN fds of every host namespace, reads each packet a host's kernel sends,
//! carries it hop by hop through the topology's links (the same `netmodel::Link` code the
//! simulator uses, driven by CLOCK_MONOTONIC) and writes it into the destination host's TUN at
//! the time the model says it arrives. Everything happens on one thread pinned to one CPU:
//! wait with `ppoll` until shortly before the next deadline, then spin (see docs/emulation.md).
//!
//! Model times are enqueued at their *intended* values (a late wake-up never shifts the
//! model); only the release into the destination TUN happens at the actual time, and the
//! difference (release error) is recorded for every packet.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::capture::EmuCapture;
use crate::clock::mono_ns;
use crate::columns::write_table;
use netmodel::records::{Col, Recorder, Table, NO_RECORD};
use crate::packet::{self, SeqUnwrap, PROTO_TCP, TCP_ACK, TCP_SYN};
use crate::runtime::{parse_addr, Runtime};
use crate::vnet::VH;

mod tun_io;
use netmodel::link::DropReason;
use netmodel::{Link, Nanos, PktMeta};

/// A slot's buffer: room for a `virtio_net_hdr` ([`VH`] bytes) and then the packet.
const BUF: usize = 2048;
/// The largest packet a TUN with offloads hands over (a 64-KB GSO packet and its header).
const BIG: usize = VH + 65_536;
/// Packets read from one TUN before the model is advanced again.
const READ_BURST: usize = 32;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Data,
    Ack,
}

/// Where a packet goes: flow, direction, and the path (index into `Engine::paths`).
#[derive(Clone, Copy)]
struct Route {
    flow: u32,
    dir: Dir,
    path: u32,
    dst_host: u16,
}

struct Slot {
    /// `buf[VH..VH + len]` is the packet; `buf[..VH]` its `virtio_net_hdr` when written.
    buf: Box<[u8; BUF]>,
    len: u16,
    /// Its transport checksum is partial (offloads): (start, offset) for `NEEDS_CSUM`.
    csum: Option<(u16, u16)>,
    hop: u16,
    route: Route,
    ecn: u8,
    /// A data packet (counted in the records), sent (read from its host) at `sent`.
    data: bool,
    /// Payload bytes of a datagram counted as data (0 otherwise): added to the flow's delivered
    /// UDP bytes when it is released, without parsing the packet again.
    udp_payload: u16,
    sent: u64,
    /// Its per-packet record ([`NO_RECORD`] if none).
    rec: u32,
}

impl Slot {
    fn pkt(&self) -> &[u8] {
        &self.buf[VH..VH + self.len as usize]
    }
}

#[derive(Default)]
struct FlowState {
    isn: Option<u32>,
    seq: SeqUnwrap,
    ack: SeqUnwrap,
    max_end: u64,
    max_acked: u64,
    completed_ns: Option<u64>,
    data_pkts: u64,
    /// UDP flows: payload bytes sent (the next datagram's `seq`, as the simulator) and delivered.
    udp_sent: u64,
    udp_delivered: u64,
}

/// Release times of every packet the engine writes (data and ACKs): the `emu_release` table
/// and the release-error percentiles.
#[derive(Default)]
struct Release {
    /// Release error (actual − intended), ns.
    err: Vec<u32>,
    flow: Vec<u32>,
    data: Vec<bool>,
    intended: Vec<i64>,
    actual: Vec<i64>,
}

#[derive(Default)]
struct Counters {
    read_pkts: u64,
    read_bytes: u64,
    released_pkts: u64,
    write_errors: u64,
    not_ipv4: u64,
    unroutable: u64,
    model_drops: u64,
    dead_fds: u64,
    polls: u64,
    spins: u64,
    in_net_at_end: u64,
    /// Time spent in zero-timeout ppoll calls that found nothing (spinning, not working), ns.
    idle_spin_ns: u64,
    /// Offloads: reads that were GSO packets, and the segments cut from them.
    gso_reads: u64,
    gso_segments: u64,
    /// Offloads: packets too long for a slot or of a segmentation the engine does not do.
    refused: u64,
    /// Offloads: writes that carried several due segments of one flow, and those segments.
    joined_writes: u64,
    joined_segments: u64,
}

pub struct Engine {
    t0: u64,
    fds: Vec<i32>,
    /// The TUNs carry a `virtio_net_hdr` (offloads on: crate::vnet).
    vnet: bool,
    /// Offloads: the buffer a TUN packet is read into before it is cut into slots, and the
    /// headers of a joined run of due segments (their payloads are written from the slots).
    big: Vec<u8>,
    joined: Vec<u8>,
    /// Offloads: runs of due segments may be joined when the engine is this late (ns): about
    /// one write's time, i.e. when it has fallen behind, not while it keeps pace (see
    /// `tun_io::write_due`; 16 CUBIC flows at 4 Gbit/s: 97-99 % of the rate with 0 or 5 µs,
    /// 86-94 % with 25 µs). `None`: never.
    join_late: Option<u64>,
    /// Offloads: packets due for release, written when the model has been advanced (a run of
    /// one flow's segments due together goes out as one GSO packet).
    due: Vec<(u32, u64)>,
    dead: Vec<bool>,
    addr_host: HashMap<u32, u16>,
    links: Vec<Link>,
    /// Each link's next event time (`u64::MAX`: none), noted whenever the link changes; `None`
    /// when links share a channel (their events depend on each other): then they are asked.
    next_at: Option<Vec<u64>>,
    /// (time, link) of the noted next events, earliest first; stale entries are skipped.
    next_heap: BinaryHeap<Reverse<(u64, u32)>>,
    paths: Vec<Vec<u32>>,
    /// (src host, dst host) → route, for packets not matched by port.
    pair_routes: HashMap<(u16, u16), Route>,
    port_base: u16,
    flow_ends: Vec<(u16, u16)>,
    flow_bytes: Vec<Option<u64>>,
    start_ns: Vec<u64>,
    /// Flows of UDP datagrams: `scheme: udp` (constant bit rate, no ACKs) and the datagram
    /// transport's (acknowledged by UDP datagrams on the reverse route); no TCP state.
    flow_udp: Vec<bool>,
    /// Flows with short-flow arrivals: one connection per arrival, keyed by the client port.
    flow_multi: Vec<bool>,
    /// Latency-probe flows (`scheme: probe`): routed, never recorded.
    flow_probe: Vec<bool>,
    conns: HashMap<(u32, u16), FlowState>,
    flows: Vec<FlowState>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    in_net: u64,
    sample_interval: u64,
    next_sample: u64,
    rec: Recorder,
    release: Release,
    n: Counters,
    record_release: bool,
    drop_buf: Vec<(PktMeta, DropReason)>,
    /// `--pcap` (None: no capture; crate::capture).
    capture: Option<EmuCapture>,
    /// Per flow: bytes (IP length) of data-direction packets released to the receiver.
    delivered: Vec<u64>,
    /// Period of the progress lines on stdout (0: none) and the time of the next one.
    progress_ns: u64,
    next_progress: u64,
}

impl Engine {
    #[inline]
    fn now(&self) -> u64 {
        mono_ns().saturating_sub(self.t0)
    }

    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        let i = self.slots.len() as u32;
        self.slots.push(Slot {
            buf: Box::new([0u8; BUF]),
            len: 0,
            csum: None,
            hop: 0,
            route: Route { flow: 0, dir: Dir::Data, path: 0, dst_host: 0 },
            ecn: 0,
            data: false,
            udp_payload: 0,
            sent: 0,
            rec: NO_RECORD,
        });
        i
    }

    /// Earliest model event (link arrival) or sample time.
    fn next_deadline(&mut self) -> u64 {
        self.earliest().map_or(self.next_sample, |(t, _)| t.min(self.next_sample))
    }

    /// The earliest link event and its link (the lowest index among equal times).
    fn earliest(&mut self) -> Option<(Nanos, usize)> {
        let mut best: Option<(Nanos, usize)> = None;
        match &self.next_at {
            Some(next) => {
                // entries whose link has moved on since are stale
                while let Some(&Reverse((t, l))) = self.next_heap.peek() {
                    if next[l as usize] == t {
                        return Some((t, l as usize));
                    }
                    self.next_heap.pop();
                }
            }
            None => {
                for (i, l) in self.links.iter().enumerate() {
                    if let Some(e) = l.next_event_time() {
                        if best.is_none_or(|(b, _)| e < b) {
                            best = Some((e, i));
                        }
                    }
                }
            }
        }
        best
    }

    /// Link `l` changed: note its next event time.
    #[inline]
    fn touch(&mut self, l: usize) {
        if let Some(next) = self.next_at.as_mut() {
            let t = self.links[l].next_event_time().unwrap_or(u64::MAX);
            if t != next[l] {
                next[l] = t;
                if t != u64::MAX {
                    self.next_heap.push(Reverse((t, l as u32)));
                }
            }
        }
    }

    /// Process every model event with time ≤ `until`, in time order.
    fn advance(&mut self, until: u64) {
        loop {
            let best = self.earliest();
            let t_link = best.map_or(u64::MAX, |b| b.0);
            if self.next_sample <= until && self.next_sample <= t_link {
                let ts = self.next_sample;
                self.sample_queues(ts);
                self.next_sample += self.sample_interval;
                continue;
            }
            let Some((t, l)) = best else { break };
            if t > until {
                break;
            }
            while let Some((meta, at)) = self.links[l].pop_arrival(t) {
                self.on_arrival(meta, at);
            }
            self.touch(l);
            self.collect_drops(l, t);
        }
        self.write_due();
    }

    fn sample_queues(&mut self, t: u64) {
        for i in 0..self.links.len() {
            self.links[i].sync(t);
            self.touch(i);
            self.collect_drops(i, t);
            self.rec.queues.push(t, i as u32, &self.links[i]);
        }
    }

    fn collect_drops(&mut self, l: usize, t: u64) {
        let mut tmp = std::mem::take(&mut self.drop_buf);
        tmp.extend(self.links[l].take_drops_with_reason());
        for (p, why) in tmp.drain(..) {
            self.drop_packet(p, l, t, why);
        }
        self.drop_buf = tmp;
    }

    fn drop_packet(&mut self, p: PktMeta, l: usize, t: u64, why: DropReason) {
        let s = &self.slots[p.id as usize];
        if s.data {
            self.rec.dropped(t, s.route.flow, p.size, l as u32, s.rec, why);
        }
        self.n.model_drops += 1;
        self.in_net -= 1;
        self.free.push(p.id);
    }

    fn on_arrival(&mut self, meta: PktMeta, at: u64) {
        let id = meta.id as usize;
        let s = &mut self.slots[id];
        if meta.ecn != s.ecn {
            packet::set_ecn(&mut s.buf[VH..], meta.ecn);
            s.ecn = meta.ecn;
        }
        let path = &self.paths[s.route.path as usize];
        if let Some(c) = self.capture.as_mut() {
            c.exit(path[s.hop as usize] as usize, at, s.pkt());
        }
        s.hop += 1;
        if (s.hop as usize) < path.len() {
            let l = path[s.hop as usize] as usize;
            if let Some(c) = self.capture.as_mut() {
                c.enter(l, at, s.pkt());
            }
            self.links[l].enqueue(at, meta);
            self.touch(l);
            self.collect_drops(l, at);
        } else {
            self.release(meta.id, at);
        }
    }

    /// Write a packet into its destination host's TUN (intended time `at`); with offloads,
    /// once the model has been advanced to now ([`Self::write_due`]).
    fn release(&mut self, id: u32, at: u64) {
        if self.vnet {
            self.due.push((id, at));
            return;
        }
        let s = &self.slots[id as usize];
        let bytes = &s.buf[VH..VH + s.len as usize];
        // SAFETY: writing our own buffer to a TUN fd we own.
        let w = unsafe { libc::write(self.fds[s.route.dst_host as usize], bytes.as_ptr() as *const libc::c_void, bytes.len()) };
        let actual = self.now();
        self.released(id, at, actual, w >= 0);
    }

    /// Bookkeeping of packet `id` written at `actual` (intended `at`): records, release error,
    /// delivered and acknowledged bytes; its slot is freed.
    fn released(&mut self, id: u32, at: u64, actual: u64, ok: bool) {
        if !ok {
            self.n.write_errors += 1;
        }
        let s = &self.slots[id as usize];
        if let Some(c) = self.capture.as_mut() {
            c.host(s.route.dst_host, actual, s.pkt());
        }
        self.n.released_pkts += 1;
        let err = actual.saturating_sub(at);
        self.release.err.push(err.min(u32::MAX as u64) as u32);
        let route = s.route;
        if route.dir == Dir::Data {
            self.delivered[route.flow as usize] += s.len as u64;
        }
        if self.record_release {
            self.release.flow.push(route.flow);
            self.release.data.push(route.dir == Dir::Data);
            self.release.intended.push(at as i64);
            self.release.actual.push(actual as i64);
        }
        if s.data {
            self.rec.delivered(actual, route.flow, s.len as u32, s.sent, s.rec);
        }
        self.flows[route.flow as usize].udp_delivered += s.udp_payload as u64;
        if route.dir == Dir::Ack {
            if let Some(h) = packet::parse(s.pkt()) {
                if h.proto == PROTO_TCP && h.flags & TCP_ACK != 0 {
                    let multi = self.flow_multi[route.flow as usize];
                    let f = if multi {
                        self.conns.entry((route.flow, h.dport)).or_default()
                    } else {
                        &mut self.flows[route.flow as usize]
                    };
                    if let Some(isn) = f.isn {
                        let a = f.ack.unwrap(h.ack.wrapping_sub(isn).wrapping_sub(1));
                        // a FIN consumes one sequence number past the data
                        let a = a.min(f.max_end);
                        if a > f.max_acked {
                            f.max_acked = a;
                        }
                        if let Some(b) = self.flow_bytes[route.flow as usize].filter(|_| !multi) {
                            if f.completed_ns.is_none() && f.max_acked >= b {
                                f.completed_ns = Some(actual);
                            }
                        }
                    }
                }
            }
        }
        self.in_net -= 1;
        self.free.push(id);
    }

    fn route(&self, h: &packet::Headers, src_host: u16, dst_host: u16) -> Option<Route> {
        if h.proto == PROTO_TCP || h.proto == packet::PROTO_UDP {
            let nf = self.flow_ends.len() as u32;
            let fd = (h.dport as u32).wrapping_sub(self.port_base as u32);
            if fd < nf && self.flow_ends[fd as usize] == (src_host, dst_host) {
                return Some(Route { flow: fd, dir: Dir::Data, path: 2 * fd, dst_host });
            }
            let fs = (h.sport as u32).wrapping_sub(self.port_base as u32);
            if fs < nf && self.flow_ends[fs as usize] == (dst_host, src_host) {
                return Some(Route { flow: fs, dir: Dir::Ack, path: 2 * fs + 1, dst_host });
            }
        }
        self.pair_routes.get(&(src_host, dst_host)).copied()
    }

    /// One packet was read from host `src_host`'s TUN at time `t` into slot `id`.
    fn on_read(&mut self, id: u32, src_host: u16, t: u64) {
        let len = self.slots[id as usize].len as usize;
        self.n.read_pkts += 1;
        self.n.read_bytes += len as u64;
        let Some(h) = packet::parse(self.slots[id as usize].pkt()) else {
            self.n.not_ipv4 += 1;
            self.free.push(id);
            return;
        };
        let Some(&dst_host) = self.addr_host.get(&h.dst) else {
            self.n.unroutable += 1;
            self.free.push(id);
            return;
        };
        let Some(route) = self.route(&h, src_host, dst_host) else {
            self.n.unroutable += 1;
            self.free.push(id);
            return;
        };
        let mut sent: Option<(u64, bool)> = None; // a data packet: (seq, retransmission)
        let mut udp_payload = 0u16;
        if route.dir == Dir::Data && h.proto == packet::PROTO_UDP && !self.flow_probe[route.flow as usize] {
            // A datagram towards the flow's receiver (UDP CBR, the datagram transport, or a
            // command scheme's UDP program): every one is a data packet (seq = payload bytes
            // sent before it). Latency probes are measurement traffic, not recorded (as in the
            // simulator).
            udp_payload = h.payload.min(u16::MAX as u32) as u16;
            let f = &mut self.flows[route.flow as usize];
            let seq = f.udp_sent;
            f.udp_sent += h.payload as u64;
            f.max_end = f.udp_sent;
            f.data_pkts += 1;
            sent = Some((seq, false));
        } else if route.dir == Dir::Data && h.proto == PROTO_TCP {
            let multi = self.flow_multi[route.flow as usize];
            if multi && h.flags & TCP_SYN != 0 {
                self.flows[route.flow as usize].isn = Some(0); // connected (at least once)
            }
            // arrivals: each connection's sequence numbers relative to its own ISN
            let f = if multi {
                self.conns.entry((route.flow, h.sport)).or_default()
            } else {
                &mut self.flows[route.flow as usize]
            };
            // SYN (the sender connects) or SYN-ACK (the sender is the server: command schemes,
            // Pantheon wrappers whose `run_first` is the sender): both carry the sender's ISN.
            if h.flags & TCP_SYN != 0 {
                *f = FlowState { isn: Some(h.seq), ..Default::default() };
            }
            if h.payload > 0 {
                if let Some(isn) = f.isn {
                    let seq = f.seq.unwrap(h.seq.wrapping_sub(isn).wrapping_sub(1));
                    let end = seq + h.payload as u64;
                    let retrans = seq < f.max_end;
                    f.max_end = f.max_end.max(end);
                    f.data_pkts += 1;
                    if multi {
                        self.flows[route.flow as usize].data_pkts += 1;
                    }
                    sent = Some((seq, retrans));
                }
            }
        }
        let rec = match sent {
            Some((seq, retrans)) => self.rec.sent(t, route.flow, seq, h.len, retrans),
            None => NO_RECORD,
        };
        let s = &mut self.slots[id as usize];
        s.hop = 0;
        s.route = route;
        s.ecn = h.ecn;
        s.data = sent.is_some();
        s.udp_payload = udp_payload;
        s.sent = t;
        s.rec = rec;
        self.in_net += 1;
        let meta = PktMeta { id, size: h.len, flow: route.flow, ecn: h.ecn };
        if let Some(c) = self.capture.as_mut() {
            c.host(src_host, t, self.slots[id as usize].pkt());
        }
        self.advance(t);
        match self.paths[route.path as usize].first() {
            Some(&l) => {
                if let Some(c) = self.capture.as_mut() {
                    c.enter(l as usize, t, self.slots[id as usize].pkt());
                }
                self.links[l as usize].enqueue(t, meta);
                self.touch(l as usize);
                self.collect_drops(l as usize, t);
            }
            None => self.release(id, t),
        }
    }

    /// One `progress t_ns=T bytes=B0,B1,...` line on stdout (read by the Python driver).
    fn print_progress(&self, t: u64) {
        use std::io::Write;
        let mut line = format!("progress t_ns={t} bytes=");
        for (i, b) in self.delivered.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&b.to_string());
        }
        line.push('\n');
        let mut out = std::io::stdout().lock();
        out.write_all(line.as_bytes()).ok();
        out.flush().ok();
    }

    /// Carry packets until experiment time `duration` or until `stop` is set.
    pub fn run(&mut self, duration: u64, spin_ns: u64, stop: &AtomicBool) {
        let mut pfds: Vec<libc::pollfd> =
            self.fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = self.now();
            if now >= duration {
                self.advance(duration);
                break;
            }
            self.advance(now);
            if self.progress_ns > 0 && now >= self.next_progress {
                self.print_progress(now);
                self.next_progress = now - now % self.progress_ns + self.progress_ns;
            }
            let mut deadline = self.next_deadline().min(duration);
            if self.progress_ns > 0 {
                deadline = deadline.min(self.next_progress);
            }
            let now = self.now();
            let timeout_ns = if deadline > now + spin_ns { deadline - now - spin_ns } else { 0 };
            if timeout_ns == 0 {
                self.n.spins += 1;
            } else {
                self.n.polls += 1;
            }
            for (p, &d) in pfds.iter_mut().zip(&self.dead) {
                if d {
                    p.fd = -1;
                }
            }
            let ts = libc::timespec {
                tv_sec: (timeout_ns / 1_000_000_000) as _,
                tv_nsec: (timeout_ns % 1_000_000_000) as _,
            };
            let before = if timeout_ns == 0 { mono_ns() } else { 0 };
            // SAFETY: valid pollfd array and timespec.
            let n = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
            if timeout_ns == 0 && n == 0 {
                self.n.idle_spin_ns += mono_ns() - before;
            }
            if n > 0 {
                for h in 0..pfds.len() {
                    if pfds[h].revents != 0 && !self.dead[h] {
                        self.read_tun(h);
                    }
                }
            }
        }
    }
}

fn percentile(sorted: &[u32], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)] as u64
}
impl Engine {
    /// An engine for the runtime's hosts and experiment: TUN fds made non-blocking, one path
    /// per flow and direction, the links seeded as in the simulator, 4096 packet buffers.
    pub fn new(rt: &Runtime) -> Result<Engine, String> {
        let exp = &rt.experiment;
        exp.validate()?;
        let host_idx: HashMap<&str, u16> =
            rt.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), i as u16)).collect();
        let mut addr_host = HashMap::new();
        for (i, h) in rt.hosts.iter().enumerate() {
            let a = parse_addr(&h.addr).ok_or_else(|| format!("bad address {}", h.addr))?;
            addr_host.insert(a, i as u16);
            // SAFETY: fcntl on an inherited fd.
            unsafe {
                let fl = libc::fcntl(h.fd, libc::F_GETFL);
                libc::fcntl(h.fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
            }
        }
        let host = |name: &str| -> Result<u16, String> {
            host_idx.get(name).copied().ok_or_else(|| format!("flow endpoint {name} is not a host of the runtime config"))
        };
        let mut paths = vec![];
        let mut pair_routes = HashMap::new();
        let mut flow_ends = vec![];
        for (i, f) in exp.flows.iter().enumerate() {
            if f.id as usize != i {
                return Err(format!("flows[{i}].id is {} (ids must be 0..n in order)", f.id));
            }
            let (s, d) = (host(&f.src)?, host(&f.dst)?);
            flow_ends.push((s, d));
            paths.push(f.path.clone());
            paths.push(f.rev_path.clone());
            pair_routes.entry((s, d)).or_insert(Route { flow: f.id, dir: Dir::Data, path: 2 * f.id, dst_host: d });
            pair_routes.entry((d, s)).or_insert(Route { flow: f.id, dir: Dir::Ack, path: 2 * f.id + 1, dst_host: s });
        }
        let mut eng = Engine {
            t0: 0,
            fds: rt.hosts.iter().map(|h| h.fd).collect(),
            vnet: rt.tun_vnet,
            big: if rt.tun_vnet { vec![0u8; BIG] } else { Vec::new() },
            joined: Vec::with_capacity(128),
            due: Vec::new(),
            join_late: rt.tun_join.then_some(rt.join_late_ns),
            dead: vec![false; rt.hosts.len()],
            addr_host,
            next_at: None,
            next_heap: BinaryHeap::new(),
            links: Link::build_all(exp.links.iter().cloned(), exp.seed),
            paths,
            pair_routes,
            port_base: rt.port_base,
            flow_ends,
            flow_bytes: exp.flows.iter().map(|f| f.bytes).collect(),
            start_ns: exp.flows.iter().map(|f| f.start_ns).collect(),
            // datagram-transport flows: every UDP packet towards the receiver is data
            flow_udp: exp.flows.iter().map(|f| f.scheme == "udp" || f.transport == netmodel::scenario::Transport::Dgram).collect(),
            flow_multi: exp.flows.iter().map(|f| f.arrivals.is_some()).collect(),
            flow_probe: exp.flows.iter().map(|f| f.scheme == "probe").collect(),
            conns: HashMap::new(),
            flows: exp.flows.iter().map(|_| FlowState::default()).collect(),
            slots: Vec::new(),
            free: Vec::new(),
            in_net: 0,
            sample_interval: exp.sample_interval_ns.max(1),
            next_sample: 0,
            rec: Recorder::new(exp.flows.len(), exp.sample_interval_ns, exp.hist_bucket_ns, exp.record_packets),
            release: Release::default(),
            n: Counters::default(),
            record_release: rt.record_release,
            drop_buf: Vec::with_capacity(64),
            capture: match &rt.capture {
                Some(c) => Some(EmuCapture::new(c, &rt.hosts, &exp.links, &exp.bottleneck_links)?),
                None => None,
            },
            delivered: vec![0; exp.flows.len()],
            progress_ns: rt.progress_ns,
            next_progress: rt.progress_ns,
        };
        if !eng.links.iter().any(Link::shared_channel) {
            eng.next_at = Some(vec![u64::MAX; eng.links.len()]);
            for l in 0..eng.links.len() {
                eng.touch(l);
            }
        }
        // Pre-allocate packet buffers so the steady state does not allocate.
        for _ in 0..4096 {
            let i = eng.alloc();
            eng.free.push(i);
        }
        eng.release.err.reserve(1 << 20);
        Ok(eng)
    }

    /// Payload bytes acknowledged of flow `i` (UDP: delivered, the simulator's app_bytes of a
    /// UDP flow; arrivals: summed over the flow's connections).
    fn app_bytes(&self, i: usize) -> u64 {
        if self.flow_udp[i] || (self.flows[i].isn.is_none() && !self.flow_multi[i]) {
            // UDP flows, and command schemes that sent datagrams (no TCP connection seen)
            self.flows[i].udp_delivered
        } else if self.flow_multi[i] {
            self.conns.iter().filter(|((fl, _), _)| *fl as usize == i).map(|(_, c)| c.max_acked).sum()
        } else {
            self.flows[i].max_acked
        }
    }

    /// Fix experiment time 0 at CLOCK_MONOTONIC `t0` (ns).
    pub fn set_t0(&mut self, t0: u64) {
        self.t0 = t0;
        if let Some(c) = self.capture.as_mut() {
            // wall-clock time of experiment time 0, for the capture's timestamps
            let (real, mono) = (crate::clock::realtime_ns(), mono_ns());
            c.set_epoch((real as i128 - mono as i128 + t0 as i128).max(0) as u64);
        }
    }

    /// Write the recorded columns and `stats.json` (the engine's counters, release-error
    /// percentiles and per-flow totals merged into `stats`, the run-level fields) to `out`.
    /// `wall`/`cpu`: wall and engine-thread CPU time of the run, ns.
    pub fn write_output(mut self, out: &Path, wall: u64, cpu: u64, mut stats: serde_json::Map<String, serde_json::Value>) -> std::io::Result<()> {
        std::fs::create_dir_all(out)?;
        self.n.in_net_at_end = self.in_net;
        let completed: Vec<Option<u64>> = self.flows.iter().map(|f| f.completed_ns).collect();
        let app_bytes: Vec<u64> = (0..self.flows.len()).map(|i| self.app_bytes(i)).collect();
        let rec = std::mem::replace(&mut self.rec, Recorder::new(0, 1, 1, false));
        for t in rec.finish(&self.start_ns, &completed, &app_bytes) {
            // the engine samples no sender state: `flows` comes from the agents
            if t.name != "flows" {
                write_table(out, &t)?;
            }
        }
        let r = std::mem::take(&mut self.release);
        if self.record_release {
            write_table(out, &Table::new("emu_release")
                .col("flow", Col::U32(r.flow))
                .col("data", Col::Bool(r.data))
                .col("intended_ns", Col::I64(r.intended))
                .col("actual_ns", Col::I64(r.actual)))?;
        }
        let mut errs = r.err;
        errs.sort_unstable();
        let mean = if errs.is_empty() { 0.0 } else { errs.iter().map(|&e| e as f64).sum::<f64>() / errs.len() as f64 };
        let over = |t: u32| errs.len() - errs.partition_point(|&e| e <= t);
        let flows: Vec<_> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                serde_json::json!({
                    "flow": i, "connected": f.isn.is_some() || f.data_pkts > 0, "data_pkts": f.data_pkts,
                    "max_seq_end": f.max_end,
                    "app_bytes": app_bytes[i],
                    "connections": if self.flow_multi[i] { Some(self.conns.keys().filter(|(fl, _)| *fl as usize == i).count()) } else { None },
                    "completed_ns": f.completed_ns,
                })
            })
            .collect();
        let n = &self.n;
        let engine = serde_json::json!({
            "engine_cpu_ns": cpu,
            "engine_cpu_frac": if wall > 0 { cpu as f64 / wall as f64 } else { 0.0 },
            // CPU share doing work: CPU time minus idle spinning before deadlines
            "engine_busy_frac": if wall > 0 { cpu.saturating_sub(self.n.idle_spin_ns) as f64 / wall as f64 } else { 0.0 },
            "idle_spin_ns": self.n.idle_spin_ns,
            "release_error_ns": {
                "count": errs.len(), "mean": mean, "min": percentile(&errs, 0.0),
                "p50": percentile(&errs, 0.5), "p90": percentile(&errs, 0.9),
                "p99": percentile(&errs, 0.99), "p999": percentile(&errs, 0.999),
                "max": percentile(&errs, 1.0),
                "over_100us": over(100_000), "over_1ms": over(1_000_000),
            },
            "counters": {
                "read_pkts": n.read_pkts, "read_bytes": n.read_bytes, "released_pkts": n.released_pkts,
                "tun_write_errors": n.write_errors, "not_ipv4": n.not_ipv4, "unroutable": n.unroutable,
                "model_drops": n.model_drops, "dead_fds": n.dead_fds, "polls": n.polls, "spins": n.spins,
                "in_net_at_end": n.in_net_at_end, "slots": self.slots.len(),
                "gso_reads": n.gso_reads, "gso_segments": n.gso_segments, "refused": n.refused,
                "joined_writes": n.joined_writes, "joined_segments": n.joined_segments,
            },
            "links": self.links.iter().map(|l| serde_json::json!({
                "enqueued_pkts": l.stats.enqueued_pkts, "dropped_pkts": l.stats.dropped_pkts,
                "tx_pkts": l.stats.tx_pkts, "tx_bytes": l.stats.tx_bytes,
            })).collect::<Vec<_>>(),
            "flows": flows,
            "capture": self.capture.take().map(|c| c.finish()),
            });
        if let serde_json::Value::Object(e) = engine {
            stats.extend(e);
        }
        std::fs::write(out.join("stats.json"), serde_json::to_string_pretty(&serde_json::Value::Object(stats)).unwrap())
    }
}
