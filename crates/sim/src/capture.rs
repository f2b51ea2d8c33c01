//! Packet capture of a simulated run: pcapng files at the capture points, with IPv4/TCP/UDP
//! headers synthesised from the simulator's segments (crates/pcap `synth`).
//!
//! Capture points (one pcapng file each, one interface, nanosecond timestamps):
//! * every host: what its interface sends (at the instant the host hands a packet to its
//!   first link) and receives (at the instant the last link delivers it);
//! * both sides of every bottleneck link `u→v`: packets entering the link are seen on `u`'s
//!   side (before its queue, so queue drops show as packets missing on the far side), packets
//!   leaving it on `v`'s side (after serialisation and propagation). With both directions of a
//!   central pair as bottlenecks, file `u-v.pcapng` is `u`'s side of the `u–v` link.
//!
//! Header fields, as Linux would put them on the wire for the simulator's TCP:
//! * addresses are given by the caller (the emulator's host addresses); the receiver port is
//!   `port_base + flow id` (the emulator's), the sender's an ephemeral port per connection;
//! * sequence numbers: the simulator's byte offsets plus a per-connection ISN (+1 after the
//!   SYN), so retransmissions repeat the original sequence numbers; ACK numbers likewise,
//!   SACK and D-SACK blocks translated the same way;
//! * timestamps option on every segment: TSval in milliseconds of the sender's clock (Linux's
//!   `tcp_time_stamp` granularity) plus a per-connection offset; the receiver's ACKs echo the
//!   TSval the simulator echoes (`AckSeg::tsecr_ns`); data segments echo the TSval of the
//!   latest ACK the sender received before sending (RFC 7323 `ts_recent`);
//! * window: the scale is the smallest that fits the fixed `rwnd_bytes`, else rmem[2] (Linux's
//!   choice, offered in the SYN / SYN-ACK); ACKs carry the receiver's advertised window (the
//!   SYN-ACK its unscaled initial window); the sender advertises the fixed window or rmem[2];
//! * IP id: a per-direction counter of each connection (Linux's per-socket `inet_id` with DF
//!   set); ECN: the packet's codepoint *at that capture point* (CE after a marking queue); ECE
//!   and CWR flags as the simulator sets them, ECE|CWR on a SYN and ECE on a SYN-ACK when the
//!   connection negotiates ECN (RFC 3168 §6.1.1); PSH on the data segments that end an application write,
//!   as the simulated sender marks them.
//!
//! Payload bytes are zeros. With `snaplen` 0 they are written in full; otherwise each packet
//! is cut to `snaplen` bytes (the lengths on the wire stay in the headers and in the block's
//! original length, as `tcpdump -s` does). The TCP/UDP checksums are those of the full
//! packet either way.
//!
//! Capture only observes: it never changes an event, a random draw or a table.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use pcap::decode::{ACK, CWR, ECE, PSH, SYN};
use pcap::synth::{self, SynOpts, TcpSeg};
use pcap::writer::PcapngWriter;

use crate::experiment::Experiment;
use crate::tcp::{AckSeg, DataSeg, TcpConfig};

/// What the caller asks for (`run_sim(..., capture=...)` in the bindings).
#[derive(Clone, Debug, serde::Deserialize)]
pub struct CaptureConfig {
    /// Directory the pcapng files are written to (created if missing).
    pub dir: PathBuf,
    /// Bytes kept per packet; 0 = whole packets (zero payload written out).
    #[serde(default)]
    pub snaplen: u32,
    /// IPv4 address of every host, by node name (dotted quad).
    pub addresses: std::collections::HashMap<String, String>,
    /// Receiver port of flow `i` is `port_base + i`.
    #[serde(default = "default_port_base")]
    pub port_base: u16,
    /// Wall-clock time of experiment time 0, ns since the Unix epoch (pcapng timestamps).
    #[serde(default)]
    pub epoch_ns: u64,
}

fn default_port_base() -> u16 {
    10000
}

/// Per capture point: its file name and packet count (for the run's metadata).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CaptureSummary {
    pub dir: String,
    pub snaplen: u32,
    pub points: Vec<PointSummary>,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PointSummary {
    pub name: String,
    pub file: String,
    /// "host" or "bottleneck"
    pub kind: String,
    pub description: String,
    pub packets: u64,
}

/// What a segment is, for [`Capture::record`].
#[derive(Clone, Copy)]
pub enum Wire<'a> {
    Data(&'a DataSeg),
    Ack(&'a AckSeg),
    Udp,
    /// A datagram from the flow's receiver to its sender (the datagram transport's
    /// acknowledgements, a latency probe's echo).
    UdpReply,
}

/// Per connection: the header fields that stay the same for its lifetime.
#[derive(Clone, Copy, Default)]
struct ConnState {
    known: bool,
    isn_s: u32,
    isn_r: u32,
    sport: u16,
    dport: u16,
    src: u32,
    dst: u32,
    ip_id_s: u16,
    ip_id_r: u16,
    ts_off_s: u32,
    ts_off_r: u32,
    /// TSval of the latest ACK the sender received.
    ts_recent_s: u32,
    ecn: bool,
    sack: bool,
    wscale: u8,
    window: u16,
    mss: u16,
    syn_window: u16,
}

/// Per packet in the network (by slab index): fields fixed when the host sent it.
#[derive(Clone, Copy, Default)]
struct SlotState {
    ip_id: u16,
    tsecr: u32,
}

pub struct Capture {
    writers: Vec<PcapngWriter<BufWriter<File>>>,
    summary: CaptureSummary,
    snaplen: u32,
    epoch_ns: u64,
    port_base: u16,
    seed: u64,
    /// Per resolved flow: (source host point, destination host point, src addr, dst addr).
    flow_hosts: Vec<(u32, u32, u32, u32)>,
    /// Per link: capture point of packets entering / leaving it (bottlenecks only).
    link_in: Vec<Option<u32>>,
    link_out: Vec<Option<u32>>,
    conns: Vec<ConnState>,
    slots: Vec<SlotState>,
    buf: Vec<u8>,
    /// First write error; nothing more is written after it.
    error: Option<String>,
}

fn parse_ipv4(s: &str) -> Option<u32> {
    let p: Vec<u8> = s.split('.').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    (p.len() == 4).then(|| u32::from_be_bytes([p[0], p[1], p[2], p[3]]))
}

/// splitmix64: deterministic per-connection ISNs and timestamp offsets.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Capture {
    pub fn new(cfg: &CaptureConfig, exp: &Experiment) -> Result<Self, String> {
        std::fs::create_dir_all(&cfg.dir).map_err(|e| format!("capture: cannot create {}: {e}", cfg.dir.display()))?;
        let mut cap = Capture {
            writers: vec![],
            summary: CaptureSummary { dir: cfg.dir.display().to_string(), snaplen: cfg.snaplen, points: vec![] },
            snaplen: cfg.snaplen,
            epoch_ns: cfg.epoch_ns,
            port_base: cfg.port_base,
            seed: exp.seed,
            flow_hosts: vec![],
            link_in: vec![None; exp.links.len()],
            link_out: vec![None; exp.links.len()],
            conns: vec![],
            slots: vec![],
            buf: Vec::with_capacity(2048),
            error: None,
        };
        let mut host_point = std::collections::HashMap::new();
        let mut addr = std::collections::HashMap::new();
        for n in exp.nodes.iter().filter(|n| n.kind == "host") {
            let a = cfg.addresses.get(&n.name).ok_or_else(|| format!("capture: no address for host {}", n.name))?;
            let a = parse_ipv4(a).ok_or_else(|| format!("capture: address {a:?} of host {} is not an IPv4 address", n.name))?;
            addr.insert(n.name.clone(), a);
            let p = cap.point(&n.name, &n.name, "host", &format!("interface of host {}", n.name))?;
            host_point.insert(n.name.clone(), p);
        }
        for f in &exp.flows {
            let get = |h: &str| -> Result<(u32, u32), String> {
                Ok((*host_point.get(h).ok_or_else(|| format!("capture: flow endpoint {h} is not a host"))?, addr[h]))
            };
            let (sp, sa) = get(&f.src)?;
            let (dp, da) = get(&f.dst)?;
            cap.flow_hosts.push((sp, dp, sa, da));
        }
        let mut sides = std::collections::HashMap::new();
        for &b in &exp.bottleneck_links {
            let l = exp.links.iter().find(|l| l.id == b).ok_or_else(|| format!("capture: bottleneck link {b} does not exist"))?;
            for (at, peer) in [(&l.src, &l.dst), (&l.dst, &l.src)] {
                if !sides.contains_key(&(at.clone(), peer.clone())) {
                    let p = cap.point(&format!("{at}-{peer}"), &format!("{at}-{peer}"), "bottleneck",
                                      &format!("{at}'s side of the {at}-{peer} bottleneck"))?;
                    sides.insert((at.clone(), peer.clone()), p);
                }
            }
            cap.link_in[b as usize] = Some(sides[&(l.src.clone(), l.dst.clone())]);
            cap.link_out[b as usize] = Some(sides[&(l.dst.clone(), l.src.clone())]);
        }
        Ok(cap)
    }

    fn point(&mut self, name: &str, file: &str, kind: &str, desc: &str) -> Result<u32, String> {
        let fname = pcap::capture_file_name(file)?;
        let path = std::path::Path::new(&self.summary.dir).join(&fname);
        let f = File::create(&path).map_err(|e| format!("capture: cannot create {}: {e}", path.display()))?;
        let mut w = PcapngWriter::new(BufWriter::with_capacity(1 << 18, f), "ccbench simulator", None)
            .and_then(|mut w| w.add_interface(name, Some(desc), pcap::LINKTYPE_RAW, self.snaplen).map(|_| w))
            .map_err(|e| format!("capture: writing {}: {e}", path.display()))?;
        w.flush().map_err(|e| format!("capture: writing {}: {e}", path.display()))?;
        self.writers.push(w);
        self.summary.points.push(PointSummary { name: name.into(), file: fname, kind: kind.into(), description: desc.into(), packets: 0 });
        Ok(self.writers.len() as u32 - 1)
    }

    /// Whether connection `conn` has its header state; if not, call [`Self::add_conn`].
    pub fn knows(&self, conn: u32) -> bool {
        self.conns.get(conn as usize).is_some_and(|c| c.known)
    }

    /// Set up connection `conn` of resolved flow `flow` (`tcp`: its endpoint config; None = UDP).
    pub fn add_conn(&mut self, conn: u32, flow: u32, tcp: Option<&TcpConfig>) {
        if self.conns.len() <= conn as usize {
            self.conns.resize(conn as usize + 1, ConnState::default());
        }
        let (_, _, src, dst) = self.flow_hosts[flow as usize];
        let r = mix(self.seed ^ (conn as u64) << 20);
        let (rwnd, ecn, sack, mss) = tcp.map_or((65535, false, false, 1448), |t| (t.rwnd_bytes.unwrap_or(t.rmem[2]), t.ecn, t.sack, t.mss));
        let mut wscale = 0u8;
        while wscale < 14 && (rwnd >> wscale) > 65535 {
            wscale += 1;
        }
        self.conns[conn as usize] = ConnState {
            known: true,
            isn_s: r as u32,
            isn_r: (r >> 32) as u32,
            sport: 32768 + (conn % 28232) as u16,
            dport: self.port_base.wrapping_add(flow as u16),
            src,
            dst,
            ip_id_s: (r >> 8) as u16,
            ip_id_r: (r >> 24) as u16,
            ts_off_s: mix(r) as u32,
            ts_off_r: mix(r ^ 1) as u32,
            ts_recent_s: 0,
            ecn,
            sack,
            wscale,
            window: (rwnd >> wscale).min(65535) as u16,
            mss: mss.min(65535) as u16,
            syn_window: rwnd.min(65535) as u16,
        };
    }

    fn ms(ns: u64, off: u32) -> u32 {
        ((ns / 1_000_000) as u32).wrapping_add(off)
    }

    /// The host sends packet `slot` of connection `conn` now: fix its IP id and TSecr.
    pub fn on_host_send(&mut self, slot: u32, conn: u32, ack_dir: bool) {
        if self.slots.len() <= slot as usize {
            self.slots.resize(slot as usize + 1, SlotState::default());
        }
        let c = &mut self.conns[conn as usize];
        let s = &mut self.slots[slot as usize];
        if ack_dir {
            s.ip_id = c.ip_id_r;
            c.ip_id_r = c.ip_id_r.wrapping_add(1);
        } else {
            s.ip_id = c.ip_id_s;
            c.ip_id_s = c.ip_id_s.wrapping_add(1);
            s.tsecr = c.ts_recent_s;
        }
    }

    /// An ACK reached the sender: later data segments echo its TSval.
    pub fn on_ack_received(&mut self, conn: u32, sent_ns: u64) {
        let c = &mut self.conns[conn as usize];
        c.ts_recent_s = Self::ms(sent_ns, c.ts_off_r);
    }

    /// Write packet `slot` of connection `conn` at capture point `point`, time `now`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(&mut self, point: u32, now: u64, slot: u32, conn: u32, wire: Wire, size: u32, sent_ns: u64, ecn: u8) {
        let c = self.conns[conn as usize];
        let s = self.slots.get(slot as usize).copied().unwrap_or_default();
        self.buf.clear();
        let total = match wire {
            Wire::Data(d) => {
                let syn = d.syn.then_some(SynOpts { mss: c.mss, wscale: c.wscale, sack_ok: c.sack });
                let seg = TcpSeg {
                    src: c.src, dst: c.dst, ip_id: s.ip_id, ecn, ttl: 64, sport: c.sport, dport: c.dport,
                    seq: if d.syn { c.isn_s } else { c.isn_s.wrapping_add(1).wrapping_add(d.seq as u32) },
                    ack: if d.syn { 0 } else { c.isn_r.wrapping_add(1) },
                    flags: if d.syn { SYN | if c.ecn { ECE | CWR } else { 0 } } else { ACK | if d.cwr { CWR } else { 0 } | if d.psh { PSH } else { 0 } },
                    window: if d.syn { c.syn_window } else { c.window },
                    ts: Some((Self::ms(d.tsval_ns, c.ts_off_s), if d.syn { 0 } else { s.tsecr })),
                    sack: &[], syn, payload: d.len,
                };
                synth::tcp(&mut self.buf, &seg)
            }
            Wire::Ack(a) => {
                let mut blocks = [(0u32, 0u32); 3];
                let n = (a.n_sack as usize).min(3);
                let base = c.isn_s.wrapping_add(1);
                for (b, &(l, r)) in blocks.iter_mut().zip(&a.sack[..n]) {
                    *b = (base.wrapping_add(l as u32), base.wrapping_add(r as u32));
                }
                let syn = a.syn.then_some(SynOpts { mss: c.mss, wscale: c.wscale, sack_ok: c.sack });
                let seg = TcpSeg {
                    src: c.dst, dst: c.src, ip_id: s.ip_id, ecn, ttl: 64, sport: c.dport, dport: c.sport,
                    seq: if a.syn { c.isn_r } else { c.isn_r.wrapping_add(1) },
                    ack: base.wrapping_add(a.ack as u32),
                    flags: if a.syn { SYN | ACK } else { ACK } | if a.ece { ECE } else { 0 },
                    window: if a.syn { a.rwnd.min(65535) as u16 } else { (a.rwnd >> c.wscale).min(65535) as u16 },
                    ts: Some((Self::ms(sent_ns, c.ts_off_r), Self::ms(a.tsecr_ns, c.ts_off_s))),
                    sack: &blocks[..n], syn, payload: 0,
                };
                synth::tcp(&mut self.buf, &seg)
            }
            Wire::Udp => {
                let payload = size.saturating_sub(28);
                synth::udp(&mut self.buf, c.src, c.dst, s.ip_id, ecn, c.sport, c.dport, payload)
            }
            Wire::UdpReply => {
                let payload = size.saturating_sub(28);
                synth::udp(&mut self.buf, c.dst, c.src, s.ip_id, ecn, c.dport, c.sport, payload)
            }
        };
        debug_assert_eq!(total, size, "synthesised header length differs from the simulator's size model");
        let keep = if self.snaplen == 0 { total as usize } else { (self.snaplen as usize).min(total as usize) };
        let hdr = self.buf.len();
        if keep > hdr {
            self.buf.resize(keep, 0);
        } else {
            self.buf.truncate(keep);
        }
        let p = point as usize;
        if self.error.is_some() {
            return;
        }
        match self.writers[p].packet(0, self.epoch_ns + now, &self.buf, total) {
            Ok(()) => self.summary.points[p].packets += 1,
            // kept and reported by `finish`: a full disk must not abort the simulation midway
            Err(e) => self.error = Some(format!("capture: writing {}: {e}", self.summary.points[p].file)),
        }
    }

    pub fn host_points(&self, flow: u32) -> (u32, u32) {
        let (s, d, _, _) = self.flow_hosts[flow as usize];
        (s, d)
    }

    pub fn link_points(&self, link: u32) -> (Option<u32>, Option<u32>) {
        (self.link_in[link as usize], self.link_out[link as usize])
    }

    /// Flush every file; the summary goes into the run's stats.
    pub fn finish(mut self) -> Result<CaptureSummary, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (w, p) in self.writers.iter_mut().zip(&self.summary.points) {
            w.flush().map_err(|e| format!("capture: writing {}: {e}", p.file))?;
        }
        Ok(self.summary)
    }
}
