//! IPv4/TCP/UDP headers from a segment's fields, with valid IP and TCP/UDP checksums.
//!
//! Options are laid out as Linux lays them out, so header sizes match the simulator's size
//! model (`crates/sim/src/tcp/mod.rs`): every segment carries NOP NOP TIMESTAMP (12 bytes);
//! an ACK with SACK blocks adds NOP NOP SACK (4 + 8 per block, at most 3 next to
//! timestamps); a SYN / SYN-ACK carries MSS, SACK-permitted, TIMESTAMP, NOP, WSCALE
//! (20 bytes; `tcp_options_write` in net/ipv4/tcp_output.c).
//!
//! Only headers are written; the payload is `payload` zero bytes that the caller may or may
//! not append. Zero bytes add nothing to the one's-complement sum, so the TCP/UDP checksum
//! is that of the full packet either way.

use crate::decode::{PROTO_TCP, PROTO_UDP};

/// SYN options.
#[derive(Clone, Copy, Debug)]
pub struct SynOpts {
    pub mss: u16,
    pub wscale: u8,
    pub sack_ok: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TcpSeg<'a> {
    pub src: u32,
    pub dst: u32,
    pub ip_id: u16,
    pub ecn: u8,
    pub ttl: u8,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// (TSval, TSecr)
    pub ts: Option<(u32, u32)>,
    pub sack: &'a [(u32, u32)],
    pub syn: Option<SynOpts>,
    pub payload: u32,
}

fn sum16(b: &[u8], mut s: u32) -> u32 {
    let mut i = 0;
    while i + 1 < b.len() {
        s += u16::from_be_bytes([b[i], b[i + 1]]) as u32;
        i += 2;
    }
    if i < b.len() {
        s += (b[i] as u32) << 8;
    }
    s
}

fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn ipv4(out: &mut Vec<u8>, src: u32, dst: u32, id: u16, ecn: u8, ttl: u8, proto: u8, total: u32) {
    let start = out.len();
    out.extend_from_slice(&[0x45, ecn & 3]);
    out.extend_from_slice(&(total.min(65535) as u16).to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&0x4000u16.to_be_bytes()); // DF
    out.extend_from_slice(&[if ttl == 0 { 64 } else { ttl }, proto, 0, 0]);
    out.extend_from_slice(&src.to_be_bytes());
    out.extend_from_slice(&dst.to_be_bytes());
    let ck = fold(sum16(&out[start..start + 20], 0));
    out[start + 10..start + 12].copy_from_slice(&ck.to_be_bytes());
}

fn pseudo(src: u32, dst: u32, proto: u8, l4_len: u32) -> u32 {
    let mut s = 0u32;
    s += src >> 16;
    s += src & 0xffff;
    s += dst >> 16;
    s += dst & 0xffff;
    s += proto as u32;
    s += l4_len;
    s
}

/// TCP header length (20 + options) of `seg`.
pub fn tcp_header_len(seg: &TcpSeg) -> u32 {
    let mut n = 20;
    if seg.syn.is_some() {
        n += 20;
    } else {
        if seg.ts.is_some() {
            n += 12;
        }
        if !seg.sack.is_empty() {
            n += 4 + 8 * seg.sack.len().min(if seg.ts.is_some() { 3 } else { 4 }) as u32;
        }
    }
    n
}

/// Append the IPv4 + TCP headers of `seg` to `out`; returns the IP total length
/// (headers + `seg.payload`).
pub fn tcp(out: &mut Vec<u8>, seg: &TcpSeg) -> u32 {
    let thl = tcp_header_len(seg);
    let total = 20 + thl + seg.payload;
    let ip_start = out.len();
    ipv4(out, seg.src, seg.dst, seg.ip_id, seg.ecn, seg.ttl, PROTO_TCP, total);
    let t = out.len();
    out.extend_from_slice(&seg.sport.to_be_bytes());
    out.extend_from_slice(&seg.dport.to_be_bytes());
    out.extend_from_slice(&seg.seq.to_be_bytes());
    out.extend_from_slice(&seg.ack.to_be_bytes());
    out.extend_from_slice(&[((thl / 4) as u8) << 4, seg.flags]);
    out.extend_from_slice(&seg.window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    let ts = |out: &mut Vec<u8>, (v, e): (u32, u32)| {
        out.extend_from_slice(&[8, 10]);
        out.extend_from_slice(&v.to_be_bytes());
        out.extend_from_slice(&e.to_be_bytes());
    };
    if let Some(s) = seg.syn {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&s.mss.to_be_bytes());
        out.extend_from_slice(&[if s.sack_ok { 4 } else { 1 }, if s.sack_ok { 2 } else { 1 }]);
        ts(out, seg.ts.unwrap_or((0, 0)));
        out.extend_from_slice(&[1, 3, 3, s.wscale]);
    } else {
        if let Some(v) = seg.ts {
            out.extend_from_slice(&[1, 1]);
            ts(out, v);
        }
        if !seg.sack.is_empty() {
            let n = seg.sack.len().min(if seg.ts.is_some() { 3 } else { 4 });
            out.extend_from_slice(&[1, 1, 5, (2 + 8 * n) as u8]);
            for &(l, r) in &seg.sack[..n] {
                out.extend_from_slice(&l.to_be_bytes());
                out.extend_from_slice(&r.to_be_bytes());
            }
        }
    }
    debug_assert_eq!(out.len() - t, thl as usize);
    let ck = fold(sum16(&out[t..], pseudo(seg.src, seg.dst, PROTO_TCP, thl + seg.payload)));
    out[t + 16..t + 18].copy_from_slice(&ck.to_be_bytes());
    debug_assert_eq!(out.len() - ip_start, 20 + thl as usize);
    total
}

/// Append the IPv4 + UDP headers of a datagram with `payload` zero bytes; returns the IP
/// total length.
#[allow(clippy::too_many_arguments)]
pub fn udp(out: &mut Vec<u8>, src: u32, dst: u32, ip_id: u16, ecn: u8, sport: u16, dport: u16, payload: u32) -> u32 {
    let total = 28 + payload;
    ipv4(out, src, dst, ip_id, ecn, 64, PROTO_UDP, total);
    let t = out.len();
    let ulen = (8 + payload).min(65535) as u16;
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&ulen.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    let mut ck = fold(sum16(&out[t..], pseudo(src, dst, PROTO_UDP, ulen as u32)));
    if ck == 0 {
        ck = 0xffff;
    }
    out[t + 6..t + 8].copy_from_slice(&ck.to_be_bytes());
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Fields, ACK};

    fn verify_tcp_checksum(pkt: &[u8]) -> bool {
        let total = u16::from_be_bytes([pkt[2], pkt[3]]) as u32;
        let src = u32::from_be_bytes(pkt[12..16].try_into().unwrap());
        let dst = u32::from_be_bytes(pkt[16..20].try_into().unwrap());
        fold(sum16(&pkt[20..], pseudo(src, dst, PROTO_TCP, total - 20))) == 0
    }

    #[test]
    fn round_trips_through_the_decoder_with_valid_checksums() {
        let sack = [(1000, 2448), (5000, 6448)];
        let seg = TcpSeg {
            src: 0x0a4d_0001, dst: 0x0a4d_0002, ip_id: 7, ecn: 2, ttl: 64, sport: 40000, dport: 10000,
            seq: 123, ack: 456, flags: ACK, window: 512, ts: Some((11, 22)), sack: &sack, syn: None, payload: 0,
        };
        let mut b = vec![];
        let total = tcp(&mut b, &seg);
        assert_eq!(total, 52 + 4 + 16);
        assert_eq!(b.len() as u32, total);
        assert!(verify_tcp_checksum(&b));
        assert_eq!(fold(sum16(&b[..20], 0)), 0, "IP checksum");
        let mut f = Fields::default();
        assert!(decode(crate::LINKTYPE_RAW, &b, &mut f));
        assert_eq!((f.seq, f.ack, f.window, f.tsval, f.tsecr, f.n_sack, f.ecn), (123, 456, 512, 11, 22, 2, 2));
        assert_eq!(f.sack[1], (5000, 6448));
        // with payload: the checksum of headers + zeros is that of the headers
        let mut d = vec![];
        let seg = TcpSeg { payload: 1448, sack: &[], ..seg };
        assert_eq!(tcp(&mut d, &seg), 1500);
        d.resize(1500, 0);
        assert!(verify_tcp_checksum(&d));
        // SYN: 60 bytes
        let mut s = vec![];
        let syn = TcpSeg { syn: Some(SynOpts { mss: 1448, wscale: 9, sack_ok: true }), ..seg };
        assert_eq!(tcp(&mut s, &TcpSeg { payload: 0, ..syn }), 60);
    }
}
