//! Streaming pcap / pcapng reader.
//!
//! Formats: classic pcap (magic `a1b2c3d4` µs or `a1b23c4d` ns, either byte order) and
//! pcapng (Section Header, Interface Description, Enhanced / Simple / obsolete Packet
//! Blocks; other blocks are skipped; a new section may change the byte order). Timestamps
//! come out in nanoseconds since the epoch, honouring each interface's `if_tsresol` and
//! `if_tsoffset`.
//!
//! Memory: one block at a time in a reused buffer; a block or record longer than
//! [`MAX_BLOCK`] is an error (no capture format puts a packet that large in one block), so the
//! reader's memory is bounded whatever the file size. Every inconsistency (bad magic, length
//! fields that do not add up, a file ending inside a block, a packet on an undeclared
//! interface) is an [`Error`] with the byte offset of the block concerned.

use std::fmt;
use std::io::{self, Read};

/// Largest block (pcapng) or record (pcap) accepted, bytes: 16 MiB, far above any snap length
/// (tcpdump's maximum is 256 KiB).
pub const MAX_BLOCK: usize = 16 << 20;

#[derive(Debug)]
pub struct Error {
    /// Byte offset of the block or record at fault.
    pub offset: u64,
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.msg)
    }
}

impl std::error::Error for Error {}

fn err<T>(offset: u64, msg: impl Into<String>) -> Result<T, Error> {
    Err(Error { offset, msg: msg.into() })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap,
    Pcapng,
}

#[derive(Clone, Copy, Debug)]
struct Iface {
    linktype: u16,
    snaplen: u32,
    /// Timestamp unit: ns = ts * mul / div.
    mul: u64,
    div: u64,
    offset_s: i64,
}

impl Iface {
    fn new(linktype: u16, snaplen: u32) -> Self {
        Iface { linktype, snaplen, mul: 1000, div: 1, offset_s: 0 }
    }
    fn ns(&self, ts: u64) -> u64 {
        let base = if self.div == 1 {
            ts.saturating_mul(self.mul)
        } else {
            ((ts as u128 * self.mul as u128) / self.div as u128) as u64
        };
        base.saturating_add_signed(self.offset_s.saturating_mul(1_000_000_000))
    }
}

/// One packet: valid until the next call to [`Reader::next`].
#[derive(Debug)]
pub struct Packet<'a> {
    pub ts_ns: u64,
    pub linktype: u16,
    /// Interface id (pcapng; 0 in pcap).
    pub iface: u32,
    /// Captured bytes.
    pub data: &'a [u8],
    /// Length on the wire (≥ data.len()).
    pub orig_len: u32,
}

pub struct Reader<R: Read> {
    r: R,
    format: Format,
    big: bool,
    /// Offset of the next unread byte.
    pos: u64,
    buf: Vec<u8>,
    ifaces: Vec<Iface>,
    /// pcap: nanosecond-resolution magic.
    nanos: bool,
}

fn u16_at(b: &[u8], i: usize, big: bool) -> u16 {
    let a = [b[i], b[i + 1]];
    if big { u16::from_be_bytes(a) } else { u16::from_le_bytes(a) }
}

fn u32_at(b: &[u8], i: usize, big: bool) -> u32 {
    let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
    if big { u32::from_be_bytes(a) } else { u32::from_le_bytes(a) }
}

impl<R: Read> Reader<R> {
    /// Read the file header; fails on anything that is not pcap or pcapng.
    pub fn new(mut r: R) -> Result<Self, Error> {
        let mut head = [0u8; 4];
        match read_full(&mut r, &mut head) {
            Ok(4) => {}
            Ok(0) => return err(0, "empty file: not a pcap or pcapng capture"),
            Ok(n) => return err(0, format!("file is {n} bytes long: too short for a capture header")),
            Err(e) => return err(0, format!("read error: {e}")),
        }
        let mut rd = Reader { r, format: Format::Pcap, big: false, pos: 4, buf: Vec::with_capacity(65536), ifaces: vec![], nanos: false };
        let le = u32::from_le_bytes(head);
        let be = u32::from_be_bytes(head);
        match (le, be) {
            (0xA1B2_C3D4, _) | (0xA1B2_3C4D, _) => {
                rd.nanos = le == 0xA1B2_3C4D;
                rd.pcap_header(false)?;
            }
            (_, 0xA1B2_C3D4) | (_, 0xA1B2_3C4D) => {
                rd.nanos = be == 0xA1B2_3C4D;
                rd.pcap_header(true)?;
            }
            (0x0A0D_0D0A, _) => {
                rd.format = Format::Pcapng;
                rd.section(0)?;
            }
            _ => return err(0, format!("magic number {le:#010x} is neither pcap nor pcapng")),
        }
        Ok(rd)
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    fn fill(&mut self, n: usize, block_at: u64, what: &str) -> Result<(), Error> {
        self.buf.clear();
        self.buf.resize(n, 0);
        match read_full(&mut self.r, &mut self.buf) {
            Ok(k) if k == n => {
                self.pos += n as u64;
                Ok(())
            }
            Ok(k) => err(block_at, format!("truncated capture: the {what} needs {n} more bytes but the file ends after {k}")),
            Err(e) => err(block_at, format!("read error: {e}")),
        }
    }

    fn pcap_header(&mut self, big: bool) -> Result<(), Error> {
        self.big = big;
        self.fill(20, 0, "file header")?;
        let b = &self.buf;
        let major = u16_at(b, 0, big);
        let snaplen = u32_at(b, 12, big);
        let linktype = (u32_at(b, 16, big) & 0xffff) as u16;
        if major != 2 {
            return err(0, format!("pcap version {major} is not supported (expected 2)"));
        }
        let mut i = Iface::new(linktype, snaplen);
        if self.nanos {
            i.mul = 1;
        }
        self.ifaces.push(i);
        Ok(())
    }

    /// Read a Section Header Block whose type field is already consumed (at `at`).
    fn section(&mut self, at: u64) -> Result<(), Error> {
        let mut hdr = [0u8; 8];
        match read_full(&mut self.r, &mut hdr) {
            Ok(8) => self.pos += 8,
            Ok(_) => return err(at, "truncated capture: the section header block is cut short"),
            Err(e) => return err(at, format!("read error: {e}")),
        }
        let big = match u32::from_le_bytes(hdr[4..8].try_into().unwrap()) {
            0x1A2B_3C4D => false,
            0x4D3C_2B1A => true,
            m => return err(at, format!("section header byte-order magic {m:#010x} is invalid")),
        };
        self.big = big;
        let total = u32_at(&hdr, 0, big) as usize;
        if total < 28 || total % 4 != 0 || total > MAX_BLOCK {
            return err(at, format!("section header block length {total} is invalid"));
        }
        self.fill(total - 12, at, "section header block")?;
        let major = u16_at(&self.buf, 0, big);
        if major != 1 {
            return err(at, format!("pcapng major version {major} is not supported (expected 1)"));
        }
        if u32_at(&self.buf, total - 16, big) as usize != total {
            return err(at, "section header block: trailing length differs from the leading one");
        }
        self.ifaces.clear();
        Ok(())
    }

    /// The next packet, `None` at the end of the file.
    pub fn next(&mut self) -> Result<Option<Packet<'_>>, Error> {
        match self.format {
            Format::Pcap => self.next_pcap(),
            Format::Pcapng => self.next_pcapng(),
        }
    }

    fn next_pcap(&mut self) -> Result<Option<Packet<'_>>, Error> {
        let at = self.pos;
        let mut h = [0u8; 16];
        match read_full(&mut self.r, &mut h) {
            Ok(0) => return Ok(None),
            Ok(16) => self.pos += 16,
            Ok(k) => return err(at, format!("truncated capture: record header cut after {k} of 16 bytes")),
            Err(e) => return err(at, format!("read error: {e}")),
        }
        let big = self.big;
        let sec = u32_at(&h, 0, big) as u64;
        let frac = u32_at(&h, 4, big) as u64;
        let incl = u32_at(&h, 8, big) as usize;
        let orig = u32_at(&h, 12, big);
        if incl > MAX_BLOCK {
            return err(at, format!("record claims {incl} captured bytes (limit {MAX_BLOCK}): corrupt capture"));
        }
        if frac >= if self.nanos { 1_000_000_000 } else { 1_000_000 } {
            return err(at, format!("record timestamp fraction {frac} is out of range: corrupt capture"));
        }
        self.fill(incl, at, "packet record")?;
        let i = self.ifaces[0];
        let ts_ns = sec * 1_000_000_000 + if self.nanos { frac } else { frac * 1000 };
        Ok(Some(Packet { ts_ns, linktype: i.linktype, iface: 0, data: &self.buf[..incl], orig_len: orig.max(incl as u32) }))
    }

    fn next_pcapng(&mut self) -> Result<Option<Packet<'_>>, Error> {
        loop {
            let at = self.pos;
            let mut h = [0u8; 8];
            match read_full(&mut self.r, &mut h) {
                Ok(0) => return Ok(None),
                Ok(8) => {}
                Ok(k) => return err(at, format!("truncated capture: block header cut after {k} of 8 bytes")),
                Err(e) => return err(at, format!("read error: {e}")),
            }
            let kind_le = u32::from_le_bytes(h[0..4].try_into().unwrap());
            if kind_le == 0x0A0D_0D0A {
                self.pos += 4;
                // re-read the section header with its own byte order: its length is in h[4..8]
                let rest = h[4..8].to_vec();
                self.section_after(at, &rest)?;
                continue;
            }
            self.pos += 8;
            let big = self.big;
            let kind = u32_at(&h, 0, big);
            let total = u32_at(&h, 4, big) as usize;
            if total < 12 || total % 4 != 0 {
                return err(at, format!("block of type {kind:#x} has invalid length {total}"));
            }
            if total > MAX_BLOCK {
                return err(at, format!("block of type {kind:#x} claims {total} bytes (limit {MAX_BLOCK}): corrupt capture"));
            }
            self.fill(total - 8, at, "block")?;
            let body_len = total - 12;
            if u32_at(&self.buf, body_len, big) as usize != total {
                return err(at, format!("block of type {kind:#x}: trailing length differs from the leading one ({total})"));
            }
            match kind {
                1 => self.interface(at, body_len)?,
                6 | 2 => {
                    // EPB: if_id u32, ts hi, ts lo, caplen, origlen; OPB: if_id u16, drops u16, ...
                    if body_len < 20 {
                        return err(at, "packet block shorter than its fixed fields");
                    }
                    let b = &self.buf;
                    let iface = if kind == 6 { u32_at(b, 0, big) } else { u16_at(b, 0, big) as u32 };
                    let ts = ((u32_at(b, 4, big) as u64) << 32) | u32_at(b, 8, big) as u64;
                    let cap = u32_at(b, 12, big) as usize;
                    let orig = u32_at(b, 16, big);
                    if cap > body_len - 20 {
                        return err(at, format!("packet block: captured length {cap} exceeds the block ({} bytes)", body_len - 20));
                    }
                    let Some(i) = self.ifaces.get(iface as usize).copied() else {
                        return err(at, format!("packet on interface {iface}, but only {} are described", self.ifaces.len()));
                    };
                    return Ok(Some(Packet { ts_ns: i.ns(ts), linktype: i.linktype, iface, data: &self.buf[20..20 + cap], orig_len: orig.max(cap as u32) }));
                }
                3 => {
                    if body_len < 4 {
                        return err(at, "simple packet block shorter than its fixed field");
                    }
                    let Some(i) = self.ifaces.first().copied() else {
                        return err(at, "simple packet block before any interface description");
                    };
                    let orig = u32_at(&self.buf, 0, big);
                    let mut cap = (orig as usize).min(body_len - 4);
                    if i.snaplen > 0 {
                        cap = cap.min(i.snaplen as usize);
                    }
                    return Ok(Some(Packet { ts_ns: 0, linktype: i.linktype, iface: 0, data: &self.buf[4..4 + cap], orig_len: orig }));
                }
                _ => {} // name resolution, statistics, custom, ...: skipped
            }
        }
    }

    /// A new section: `len_bytes` are the 4 bytes after the block type (the block length in
    /// the section's yet unknown byte order).
    fn section_after(&mut self, at: u64, len_bytes: &[u8]) -> Result<(), Error> {
        let mut bom = [0u8; 4];
        match read_full(&mut self.r, &mut bom) {
            Ok(4) => self.pos += 8,
            _ => return err(at, "truncated capture: the section header block is cut short"),
        }
        let big = match u32::from_le_bytes(bom) {
            0x1A2B_3C4D => false,
            0x4D3C_2B1A => true,
            m => return err(at, format!("section header byte-order magic {m:#010x} is invalid")),
        };
        self.big = big;
        let total = u32_at(len_bytes, 0, big) as usize;
        if total < 28 || total % 4 != 0 || total > MAX_BLOCK {
            return err(at, format!("section header block length {total} is invalid"));
        }
        self.fill(total - 12, at, "section header block")?;
        if u16_at(&self.buf, 0, big) != 1 {
            return err(at, "pcapng major version is not 1");
        }
        self.ifaces.clear();
        Ok(())
    }

    fn interface(&mut self, at: u64, body_len: usize) -> Result<(), Error> {
        let big = self.big;
        if body_len < 8 {
            return err(at, "interface description block shorter than its fixed fields");
        }
        let b = &self.buf;
        let mut i = Iface::new(u16_at(b, 0, big), u32_at(b, 4, big));
        let mut o = 8;
        while o + 4 <= body_len {
            let code = u16_at(b, o, big);
            let len = u16_at(b, o + 2, big) as usize;
            let v = o + 4;
            if v + len > body_len {
                return err(at, format!("interface option {code} runs past the end of its block"));
            }
            match code {
                0 => break,
                9 if len >= 1 => {
                    let r = b[v];
                    let (mul, div) = if r & 0x80 == 0 {
                        let e = (r & 0x7f) as u32;
                        if e > 19 {
                            return err(at, format!("if_tsresol 10^-{e} is out of range"));
                        }
                        if e <= 9 { (10u64.pow(9 - e), 1) } else { (1, 10u64.pow(e - 9)) }
                    } else {
                        let e = (r & 0x7f) as u32;
                        if e > 63 {
                            return err(at, format!("if_tsresol 2^-{e} is out of range"));
                        }
                        (1_000_000_000, 1u64 << e)
                    };
                    i.mul = mul;
                    i.div = div;
                }
                14 if len >= 8 => {
                    let a: [u8; 8] = b[v..v + 8].try_into().unwrap();
                    i.offset_s = if big { i64::from_be_bytes(a) } else { i64::from_le_bytes(a) };
                }
                _ => {}
            }
            o = v + ((len + 3) & !3);
        }
        self.ifaces.push(i);
        Ok(())
    }
}

/// Read until `buf` is full or the input ends; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::PcapngWriter;

    fn sample_ng() -> Vec<u8> {
        let mut w = PcapngWriter::new(Vec::new(), "t", None).unwrap();
        let a = w.add_interface("a", None, crate::LINKTYPE_RAW, 0).unwrap();
        let b = w.add_interface("b", None, crate::LINKTYPE_ETHERNET, 128).unwrap();
        w.packet(a, 1_000_000_123, &[1, 2, 3], 3).unwrap();
        w.packet(b, 2_000_000_456, &[4; 64], 1514).unwrap();
        w.into_inner()
    }

    fn pcap_classic(big: bool, nanos: bool, recs: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let p32 = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let p16 = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut b = vec![];
        b.extend_from_slice(&p32(if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 }));
        b.extend_from_slice(&p16(2));
        b.extend_from_slice(&p16(4));
        b.extend_from_slice(&p32(0));
        b.extend_from_slice(&p32(0));
        b.extend_from_slice(&p32(65535));
        b.extend_from_slice(&p32(1));
        for &(s, f, d) in recs {
            b.extend_from_slice(&p32(s));
            b.extend_from_slice(&p32(f));
            b.extend_from_slice(&p32(d.len() as u32));
            b.extend_from_slice(&p32(d.len() as u32));
            b.extend_from_slice(d);
        }
        b
    }

    #[test]
    fn reads_back_pcapng() {
        let f = sample_ng();
        let mut r = Reader::new(&f[..]).unwrap();
        assert_eq!(r.format(), Format::Pcapng);
        let p = r.next().unwrap().unwrap();
        assert_eq!((p.ts_ns, p.linktype, p.iface, p.data, p.orig_len), (1_000_000_123, 101, 0, &[1u8, 2, 3][..], 3));
        let p = r.next().unwrap().unwrap();
        assert_eq!((p.ts_ns, p.linktype, p.iface, p.data.len(), p.orig_len), (2_000_000_456, 1, 1, 64, 1514));
        assert!(r.next().unwrap().is_none());
    }

    #[test]
    fn reads_classic_pcap_both_orders_and_resolutions() {
        for big in [false, true] {
            for nanos in [false, true] {
                let f = pcap_classic(big, nanos, &[(10, 5, &[9; 60]), (11, 7, &[8; 42])]);
                let mut r = Reader::new(&f[..]).unwrap();
                let p = r.next().unwrap().unwrap();
                let unit = if nanos { 1 } else { 1000 };
                assert_eq!(p.ts_ns, 10_000_000_000 + 5 * unit);
                assert_eq!((p.linktype, p.data.len()), (1, 60));
                assert_eq!(r.next().unwrap().unwrap().ts_ns, 11_000_000_000 + 7 * unit);
                assert!(r.next().unwrap().is_none());
            }
        }
    }

    #[test]
    fn every_truncation_is_an_error_or_a_clean_end() {
        for f in [sample_ng(), pcap_classic(false, false, &[(1, 0, &[7; 100]), (2, 0, &[7; 50])])] {
            for cut in 0..f.len() {
                let part = &f[..cut];
                let mut n = 0;
                let res = Reader::new(part).and_then(|mut r| {
                    while r.next()?.is_some() {
                        n += 1;
                    }
                    Ok(())
                });
                // a cut at a block boundary is a shorter, valid capture; anywhere else an error
                if let Err(e) = res {
                    assert!(e.msg.contains("truncated") || e.msg.contains("empty") || e.msg.contains("too short"), "{e}");
                }
            }
        }
    }

    #[test]
    fn garbage_and_huge_lengths_are_errors() {
        assert!(Reader::new(&b"hello world, not a capture"[..]).is_err());
        let mut f = pcap_classic(false, false, &[(1, 0, &[7; 10])]);
        f[24 + 8..24 + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
        let mut r = Reader::new(&f[..]).unwrap();
        let e = r.next().unwrap_err();
        assert!(e.msg.contains("limit"), "{e}");
        let mut g = sample_ng();
        // corrupt the first EPB's length (after SHB and the two IDBs)
        let mut off = 0;
        for _ in 0..3 {
            off += u32::from_le_bytes(g[off + 4..off + 8].try_into().unwrap()) as usize;
        }
        g[off + 4..off + 8].copy_from_slice(&13u32.to_le_bytes());
        let mut r = Reader::new(&g[..]).unwrap();
        assert!(r.next().unwrap_err().msg.contains("invalid length"));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let base = sample_ng();
        for _ in 0..2000 {
            let mut f = base.clone();
            for _ in 0..4 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x as usize) % f.len();
                f[i] = (x >> 32) as u8;
            }
            if let Ok(mut r) = Reader::new(&f[..]) {
                for _ in 0..10 {
                    match r.next() {
                        Ok(Some(_)) => {}
                        _ => break,
                    }
                }
            }
        }
    }
}
