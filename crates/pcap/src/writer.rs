//! pcapng writer (the block layout of the pcapng specification, draft-ietf-opsawg-pcapng):
//! one Section Header Block, Interface Description Blocks with `if_name`, `if_description`
//! and `if_tsresol` = 9 (nanoseconds), and Enhanced Packet Blocks. Little-endian sections.
//!
//! The writer keeps one scratch buffer for the block being built, so writing allocates
//! nothing per packet.

use std::io::{self, Write};

const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 0x0000_0001;
const EPB: u32 = 0x0000_0006;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const OPT_END: u16 = 0;
const OPT_COMMENT: u16 = 1;
const SHB_USERAPPL: u16 = 4;
const IF_NAME: u16 = 2;
const IF_DESCRIPTION: u16 = 3;
const IF_TSRESOL: u16 = 9;

/// Writes a pcapng section to `W`.
pub struct PcapngWriter<W: Write> {
    w: W,
    interfaces: u32,
    block: Vec<u8>,
    packets: u64,
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

fn put_opt(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    b.extend_from_slice(&code.to_le_bytes());
    b.extend_from_slice(&(value.len() as u16).to_le_bytes());
    b.extend_from_slice(value);
    b.resize(pad4(b.len()), 0);
}

impl<W: Write> PcapngWriter<W> {
    /// Start a section; `app` is written as `shb_userappl`, `comment` as `opt_comment`.
    pub fn new(w: W, app: &str, comment: Option<&str>) -> io::Result<Self> {
        let mut s = PcapngWriter { w, interfaces: 0, block: Vec::with_capacity(4096), packets: 0 };
        let mut body = Vec::new();
        body.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes()); // major
        body.extend_from_slice(&0u16.to_le_bytes()); // minor
        body.extend_from_slice(&(-1i64).to_le_bytes()); // section length: not given
        if let Some(c) = comment {
            put_opt(&mut body, OPT_COMMENT, c.as_bytes());
        }
        put_opt(&mut body, SHB_USERAPPL, app.as_bytes());
        put_opt(&mut body, OPT_END, &[]);
        s.emit(SHB, &body)?;
        Ok(s)
    }

    fn emit(&mut self, kind: u32, body: &[u8]) -> io::Result<()> {
        let total = (12 + pad4(body.len())) as u32;
        self.block.clear();
        self.block.extend_from_slice(&kind.to_le_bytes());
        self.block.extend_from_slice(&total.to_le_bytes());
        self.block.extend_from_slice(body);
        self.block.resize(8 + pad4(body.len()), 0);
        self.block.extend_from_slice(&total.to_le_bytes());
        self.w.write_all(&self.block)
    }

    /// Describe an interface (`linktype`, e.g. [`crate::LINKTYPE_RAW`]; `snaplen` 0 = none);
    /// returns its id for [`Self::packet`]. Timestamps are in nanoseconds.
    pub fn add_interface(&mut self, name: &str, description: Option<&str>, linktype: u16, snaplen: u32) -> io::Result<u32> {
        let mut body = Vec::new();
        body.extend_from_slice(&linktype.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&snaplen.to_le_bytes());
        put_opt(&mut body, IF_NAME, name.as_bytes());
        if let Some(d) = description {
            put_opt(&mut body, IF_DESCRIPTION, d.as_bytes());
        }
        put_opt(&mut body, IF_TSRESOL, &[9]);
        put_opt(&mut body, OPT_END, &[]);
        self.emit(IDB, &body)?;
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// One packet seen on interface `iface` at `ts_ns` (ns since the Unix epoch): `data` are
    /// the captured bytes, `orig_len` the packet's length on the wire (≥ `data.len()`).
    pub fn packet(&mut self, iface: u32, ts_ns: u64, data: &[u8], orig_len: u32) -> io::Result<()> {
        assert!(iface < self.interfaces, "packet on undeclared interface {iface}");
        let caplen = data.len();
        let total = (32 + pad4(caplen)) as u32;
        let b = &mut self.block;
        b.clear();
        b.extend_from_slice(&EPB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&iface.to_le_bytes());
        b.extend_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
        b.extend_from_slice(&(ts_ns as u32).to_le_bytes());
        b.extend_from_slice(&(caplen as u32).to_le_bytes());
        b.extend_from_slice(&orig_len.max(caplen as u32).to_le_bytes());
        b.extend_from_slice(data);
        b.resize(28 + pad4(caplen), 0);
        b.extend_from_slice(&total.to_le_bytes());
        self.packets += 1;
        self.w.write_all(&self.block)
    }

    pub fn packets(&self) -> u64 {
        self.packets
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_and_lengths_match() {
        let mut w = PcapngWriter::new(Vec::new(), "test", Some("c")).unwrap();
        let i = w.add_interface("h1", Some("host h1"), crate::LINKTYPE_RAW, 0).unwrap();
        w.packet(i, 1_500_000_000_123_456_789, &[0x45; 41], 1500).unwrap();
        let b = w.into_inner();
        assert_eq!(b.len() % 4, 0);
        let mut off = 0;
        let mut kinds = vec![];
        while off < b.len() {
            let kind = u32::from_le_bytes(b[off..off + 4].try_into().unwrap());
            let len = u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as usize;
            assert_eq!(len % 4, 0);
            let trailer = u32::from_le_bytes(b[off + len - 4..off + len].try_into().unwrap()) as usize;
            assert_eq!(len, trailer);
            kinds.push(kind);
            off += len;
        }
        assert_eq!(kinds, vec![SHB, IDB, EPB]);
    }
}
