//! The engine's packet capture (`ccbench run --backend emu --pcap`): the real bytes of every
//! packet at the same capture points as the simulator's (crates/sim/src/capture.rs) — each
//! host's interface (a packet read from its TUN at the read time; a packet written into its
//! TUN at the release time) and both sides of each bottleneck link (entering the link at its
//! model enqueue time, leaving it at its model arrival time, with the ECN codepoint as the
//! link left it). One pcapng file per point, raw IPv4, nanosecond timestamps on the wall
//! clock (CLOCK_REALTIME of experiment time 0 plus the engine's time).
//!
//! Writing is buffered (256 KiB per file); a write error stops the capture (reported in
//! stats.json) without disturbing the run.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use netmodel::LinkConfig;
use pcap::writer::PcapngWriter;

use crate::runtime::{CaptureConfig, Host};

pub struct EmuCapture {
    writers: Vec<PcapngWriter<BufWriter<File>>>,
    points: Vec<serde_json::Value>,
    counts: Vec<u64>,
    host_point: Vec<u32>,
    link_in: Vec<Option<u32>>,
    link_out: Vec<Option<u32>>,
    snaplen: usize,
    epoch_ns: u64,
    dir: String,
    error: Option<String>,
}

impl EmuCapture {
    pub fn new(cfg: &CaptureConfig, hosts: &[Host], links: &[LinkConfig], bottlenecks: &[u32]) -> Result<Self, String> {
        std::fs::create_dir_all(&cfg.dir).map_err(|e| format!("capture: cannot create {}: {e}", cfg.dir))?;
        let mut c = EmuCapture {
            writers: vec![],
            points: vec![],
            counts: vec![],
            host_point: vec![],
            link_in: vec![None; links.len()],
            link_out: vec![None; links.len()],
            snaplen: cfg.snaplen as usize,
            epoch_ns: 0,
            dir: cfg.dir.clone(),
            error: None,
        };
        for h in hosts {
            let p = c.point(&h.name, "host", &format!("interface of host {}", h.name))?;
            c.host_point.push(p);
        }
        let mut sides: Vec<((String, String), u32)> = vec![];
        for &b in bottlenecks {
            let l = links.iter().find(|l| l.id == b).ok_or_else(|| format!("capture: bottleneck link {b} does not exist"))?;
            for (at, peer) in [(&l.src, &l.dst), (&l.dst, &l.src)] {
                if !sides.iter().any(|(k, _)| k.0 == *at && k.1 == *peer) {
                    let name = format!("{at}-{peer}");
                    let p = c.point(&name, "bottleneck", &format!("{at}'s side of the {at}-{peer} bottleneck"))?;
                    sides.push(((at.clone(), peer.clone()), p));
                }
            }
            let find = |a: &str, b: &str| sides.iter().find(|(k, _)| k.0 == a && k.1 == b).map(|x| x.1);
            c.link_in[b as usize] = find(&l.src, &l.dst);
            c.link_out[b as usize] = find(&l.dst, &l.src);
        }
        Ok(c)
    }

    fn point(&mut self, name: &str, kind: &str, desc: &str) -> Result<u32, String> {
        let file = pcap::capture_file_name(name)?;
        let path = Path::new(&self.dir).join(&file);
        let f = File::create(&path).map_err(|e| format!("capture: cannot create {}: {e}", path.display()))?;
        let w = PcapngWriter::new(BufWriter::with_capacity(1 << 18, f), "ccbench emulator", None)
            .and_then(|mut w| w.add_interface(name, Some(desc), pcap::LINKTYPE_RAW, self.snaplen as u32).map(|_| w))
            .map_err(|e| format!("capture: writing {}: {e}", path.display()))?;
        self.writers.push(w);
        self.counts.push(0);
        self.points.push(serde_json::json!({"name": name, "file": file, "kind": kind, "description": desc}));
        Ok(self.writers.len() as u32 - 1)
    }

    /// Wall-clock time (ns since the epoch) of experiment time 0.
    pub fn set_epoch(&mut self, epoch_ns: u64) {
        self.epoch_ns = epoch_ns;
    }

    fn write(&mut self, p: u32, t: u64, b: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let keep = if self.snaplen == 0 { b.len() } else { b.len().min(self.snaplen) };
        let p = p as usize;
        match self.writers[p].packet(0, self.epoch_ns + t, &b[..keep], b.len() as u32) {
            Ok(()) => self.counts[p] += 1,
            Err(e) => self.error = Some(format!("capture: writing {}: {e}", self.points[p]["file"])),
        }
    }

    /// Host `h`'s interface saw packet `b` at `t` (sent or received).
    #[inline]
    pub fn host(&mut self, h: u16, t: u64, b: &[u8]) {
        let p = self.host_point[h as usize];
        self.write(p, t, b);
    }

    /// Packet `b` enters link `l` at `t` (recorded if `l` is a bottleneck).
    #[inline]
    pub fn enter(&mut self, l: usize, t: u64, b: &[u8]) {
        if let Some(p) = self.link_in[l] {
            self.write(p, t, b);
        }
    }

    /// Packet `b` leaves link `l` at `t` (recorded if `l` is a bottleneck).
    #[inline]
    pub fn exit(&mut self, l: usize, t: u64, b: &[u8]) {
        if let Some(p) = self.link_out[l] {
            self.write(p, t, b);
        }
    }

    /// Flush every file; the summary for stats.json (`{"Ok": {...}}` or `{"Err": msg}`, as the
    /// simulator's).
    pub fn finish(mut self) -> serde_json::Value {
        for (w, p) in self.writers.iter_mut().zip(&self.points) {
            if let Err(e) = w.flush() {
                self.error.get_or_insert(format!("capture: writing {}: {e}", p["file"]));
            }
        }
        if let Some(e) = self.error {
            return serde_json::json!({"Err": e});
        }
        let points: Vec<_> = self
            .points
            .into_iter()
            .zip(self.counts)
            .map(|(mut p, n)| {
                p["packets"] = n.into();
                p
            })
            .collect();
        serde_json::json!({"Ok": {"dir": self.dir, "snaplen": self.snaplen, "points": points}})
    }
}
