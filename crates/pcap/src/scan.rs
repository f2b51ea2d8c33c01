//! Per-packet records from a capture, a chunk at a time: the input of `ccbench import pcap`.
//!
//! [`Scanner`] streams a file through [`Reader`] and [`decode`] and fills a [`Chunk`] of
//! typed columns with at most `max` IPv4 packets; non-IPv4 frames are counted and skipped.
//! Memory is one block buffer plus one chunk, whatever the capture's size.
//!
//! `key` identifies one transmission across capture points: a hash of the IP id, the IP
//! total length and the first (up to [`KEY_BYTES`]) captured transport bytes — the fields a
//! router leaves untouched (TTL, ECN and the IP checksum change on the way). For TCP this
//! covers ports, sequence and ACK numbers, flags, window and the timestamp option, so two
//! transmissions of the same segment (a retransmission) have different keys.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use crate::decode::{decode, Fields};
use crate::reader::{Error, Reader};

/// Transport bytes hashed into `key`.
pub const KEY_BYTES: usize = 64;

/// Columns of one chunk (same length each).
#[derive(Default, Debug)]
pub struct Chunk {
    pub ts_ns: Vec<i64>,
    pub iface: Vec<u32>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub proto: Vec<u8>,
    pub ecn: Vec<u8>,
    pub ip_id: Vec<u32>,
    pub ip_len: Vec<u32>,
    pub sport: Vec<u32>,
    pub dport: Vec<u32>,
    pub seq: Vec<u32>,
    pub ack: Vec<u32>,
    pub flags: Vec<u8>,
    pub window: Vec<u32>,
    pub payload: Vec<u32>,
    pub has_ts: Vec<bool>,
    pub tsval: Vec<u32>,
    pub tsecr: Vec<u32>,
    pub n_sack: Vec<u8>,
    pub key: Vec<u64>,
}

impl Chunk {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
    pub fn clear(&mut self) {
        *self = Chunk::default();
    }
    fn push(&mut self, ts: u64, iface: u32, f: &Fields, key: u64) {
        self.ts_ns.push(ts.min(i64::MAX as u64) as i64);
        self.iface.push(iface);
        self.src.push(f.src);
        self.dst.push(f.dst);
        self.proto.push(f.proto);
        self.ecn.push(f.ecn);
        self.ip_id.push(f.ip_id as u32);
        self.ip_len.push(f.ip_len);
        self.sport.push(f.sport as u32);
        self.dport.push(f.dport as u32);
        self.seq.push(f.seq);
        self.ack.push(f.ack);
        self.flags.push(f.flags);
        self.window.push(f.window as u32);
        self.payload.push(f.payload);
        self.has_ts.push(f.has_ts);
        self.tsval.push(f.tsval);
        self.tsecr.push(f.tsecr);
        self.n_sack.push(f.n_sack);
        self.key.push(key);
    }
}

/// 64-bit FNV-1a then a final avalanche (splitmix64's): fast, deterministic, no allocation.
pub fn key_of(f: &Fields, frame: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for b in f.ip_id.to_be_bytes() {
        eat(b);
    }
    for b in (f.ip_len as u16).to_be_bytes() {
        eat(b);
    }
    let o = f.l4_off as usize;
    let end = (o + (f.l4_cap as usize).min(KEY_BYTES)).min(frame.len());
    for &b in &frame[o.min(end)..end] {
        eat(b);
    }
    let mut z = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Totals over what was scanned so far.
#[derive(Default, Debug, Clone, Copy)]
pub struct Counts {
    pub frames: u64,
    pub frame_bytes: u64,
    pub ipv4: u64,
    /// Frames without an IPv4 header (IPv6, ARP, other link types).
    pub skipped: u64,
}

pub struct Scanner {
    rd: Reader<BufReader<File>>,
    fields: Fields,
    pub counts: Counts,
    done: bool,
}

impl Scanner {
    pub fn open(path: &Path) -> Result<Self, String> {
        let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let rd = Reader::new(BufReader::with_capacity(1 << 20, f)).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Scanner { rd, fields: Fields::default(), counts: Counts::default(), done: false })
    }

    /// Bytes of the file consumed so far.
    pub fn position(&self) -> u64 {
        self.rd.position()
    }

    /// Append up to `max` IPv4 packets to `out`; returns false once the file is exhausted.
    pub fn fill(&mut self, out: &mut Chunk, max: usize) -> Result<bool, Error> {
        if self.done {
            return Ok(false);
        }
        let mut n = 0;
        while n < max {
            let Some(p) = self.rd.next()? else {
                self.done = true;
                return Ok(n > 0);
            };
            self.counts.frames += 1;
            self.counts.frame_bytes += p.orig_len as u64;
            if !decode(p.linktype, p.data, &mut self.fields) {
                self.counts.skipped += 1;
                continue;
            }
            self.counts.ipv4 += 1;
            let k = key_of(&self.fields, p.data);
            out.push(p.ts_ns, p.iface, &self.fields, k);
            n += 1;
        }
        Ok(true)
    }
}
