//! The TUN devices' offloads (`IFF_VNET_HDR`, `TUNSETOFFLOAD` with checksum and TCPv4
//! segmentation): every packet read or written carries a 10-byte `virtio_net_hdr` first.
//!
//! With them a host's kernel hands the engine its TCP segments unsegmented (up to 64 KB, the
//! `skb` its TCP built anyway: Linux builds GSO-sized skbs whatever the device, and without
//! the offload segments them in software just before the TUN) and with the transport checksum
//! left to the device. The engine cuts such a packet into the MSS-sized segments the wire would
//! carry — the same headers Linux's `tcp_gso_segment` and `inet_gso_segment` write: sequence
//! numbers advanced, FIN and PSH on the last segment only, CWR on the first only, IPv4 ids
//! counting up, header checksums recomputed — and each segment goes through the model on its
//! own. Packets are written back with their checksum still partial (`NEEDS_CSUM`), which the
//! receiving kernel accepts without verifying, as it does from a virtio NIC; when the run
//! captures packets the engine completes the checksums first, so captures hold real ones.
//! This saves the sender's kernel its software segmentation and checksums and the engine a
//! read per segment; the packets on the modelled links are the same.

/// Size of `struct virtio_net_hdr` (the TUN's default `TUNSETVNETHDRSZ`).
pub const VH: usize = 10;

const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_ECN: u8 = 0x80;

/// The fields of a `virtio_net_hdr` (little-endian on the TUN: native order on x86 and arm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn read(b: &[u8]) -> VnetHdr {
        let le = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        VnetHdr { flags: b[0], gso_type: b[1], hdr_len: le(2), gso_size: le(4), csum_start: le(6), csum_offset: le(8) }
    }

    pub fn write(&self, b: &mut [u8]) {
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
    }

    /// The transport checksum is still to be completed (partial: the pseudo-header sum).
    pub fn partial(&self) -> bool {
        self.flags & F_NEEDS_CSUM != 0
    }

    /// A TCPv4 packet to cut into `gso_size`-byte segments.
    pub fn tcp4_gso(&self) -> bool {
        self.gso_type & !GSO_ECN == GSO_TCPV4
    }

    /// Some other segmentation, which the engine does not offer the kernel.
    pub fn other_gso(&self) -> bool {
        self.gso_type != GSO_NONE && !self.tcp4_gso()
    }

    /// The header of one packet written to a TUN: no segmentation, the checksum partial or not.
    pub fn single(partial: Option<(u16, u16)>) -> VnetHdr {
        match partial {
            Some((start, offset)) => VnetHdr { flags: F_NEEDS_CSUM, csum_start: start, csum_offset: offset, ..Default::default() },
            None => VnetHdr::default(),
        }
    }
}

fn sum16(b: &[u8], mut acc: u32) -> u32 {
    let mut it = b.chunks_exact(2);
    for c in &mut it {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [x] = it.remainder() {
        acc += (*x as u32) << 8;
    }
    acc
}

fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// Recompute an IPv4 header's checksum in place (`ihl` bytes).
pub fn ip_checksum(p: &mut [u8], ihl: usize) {
    p[10] = 0;
    p[11] = 0;
    let c = !fold(sum16(&p[..ihl], 0));
    p[10..12].copy_from_slice(&c.to_be_bytes());
}

/// The folded pseudo-header sum of an IPv4 packet whose transport part is `l4_len` bytes: what
/// a partial checksum field holds.
fn pseudo(p: &[u8], l4_len: usize) -> u16 {
    let s = sum16(&p[12..20], 0) + p[9] as u32 + l4_len as u32;
    fold(s)
}

/// Complete a partial transport checksum in place: the one's complement of the sum from
/// `start` to the end, the field holding the pseudo-header sum (as Linux's `skb_checksum_help`;
/// a UDP result of 0 is written 0xffff).
pub fn complete(p: &mut [u8], start: usize, offset: usize) {
    let at = start + offset;
    if at + 2 > p.len() {
        return;
    }
    let mut c = !fold(sum16(&p[start..], 0));
    if c == 0 && p[9] == crate::packet::PROTO_UDP {
        c = 0xffff;
    }
    p[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// A TCPv4 GSO packet to cut into `mss`-byte segments ([`Tcp4Cut::write`] builds each one).
pub struct Tcp4Cut<'a> {
    p: &'a [u8],
    ihl: usize,
    hl: usize,
    mss: usize,
    total: usize,
    n: usize,
}

/// The cut of GSO packet `p` (IP header first) into `mss`-byte payloads, or `None` if `p` is
/// not a well-formed TCPv4 packet or one segment would not fit `room` bytes.
pub fn cut_tcp4(p: &[u8], mss: usize, room: usize) -> Option<Tcp4Cut<'_>> {
    if p.len() < 40 || p[0] >> 4 != 4 || p[9] != crate::packet::PROTO_TCP || mss == 0 {
        return None;
    }
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([p[2], p[3]]) as usize;
    if ihl < 20 || total < ihl + 20 || total > p.len() {
        return None;
    }
    let thl = ((p[ihl + 12] >> 4) as usize) * 4;
    let hl = ihl + thl;
    if thl < 20 || total < hl || hl + mss > room {
        return None;
    }
    Some(Tcp4Cut { p, ihl, hl, mss, total, n: (total - hl).div_ceil(mss).max(1) })
}

impl Tcp4Cut<'_> {
    pub fn segments(&self) -> usize {
        self.n
    }

    /// Write segment `k` into `dst` (headers rewritten, the TCP checksum left partial); its
    /// length.
    pub fn write(&self, k: usize, dst: &mut [u8]) -> usize {
        let (p, ihl, hl) = (self.p, self.ihl, self.hl);
        let from = hl + k * self.mss;
        let len = self.mss.min(self.total - from);
        dst[..hl].copy_from_slice(&p[..hl]);
        dst[hl..hl + len].copy_from_slice(&p[from..from + len]);
        let s = &mut dst[..hl + len];
        s[2..4].copy_from_slice(&((hl + len) as u16).to_be_bytes());
        let id0 = u16::from_be_bytes([p[4], p[5]]);
        s[4..6].copy_from_slice(&id0.wrapping_add(k as u16).to_be_bytes());
        ip_checksum(s, ihl);
        let seq0 = u32::from_be_bytes([p[ihl + 4], p[ihl + 5], p[ihl + 6], p[ihl + 7]]);
        s[ihl + 4..ihl + 8].copy_from_slice(&seq0.wrapping_add((k * self.mss) as u32).to_be_bytes());
        if k + 1 < self.n {
            s[ihl + 13] &= !(0x01 | 0x08); // FIN, PSH: the last segment's
        }
        if k > 0 {
            s[ihl + 13] &= !0x80; // CWR: the first segment's
        }
        let ps = pseudo(s, hl - ihl + len);
        s[ihl + 16..ihl + 18].copy_from_slice(&ps.to_be_bytes());
        hl + len
    }
}

/// The most segments one coalesced write carries (44 × 1448 bytes of payload fit 64 KB).
pub const MAX_JOIN: usize = 44;

/// Payload bytes of a TCPv4 segment (0 if it is none).
pub fn tcp_payload(p: &[u8]) -> usize {
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    if p.len() < ihl + 20 || p[9] != crate::packet::PROTO_TCP {
        return 0;
    }
    p.len().saturating_sub(ihl + ((p[ihl + 12] >> 4) as usize) * 4)
}

/// Whether TCPv4 segment `next` continues `head`'s run (`bytes` of payload so far, all of
/// `head`'s size) so that the two can reach the receiver as one GSO packet, as Linux's GRO
/// would merge them (`tcp_gro_receive`): the same IPv4 header but for length, id and checksum,
/// the same TCP header (ports, ACK, window, options) but for sequence number, checksum and
/// PSH, the sequence number where the run ends, no flag but ACK and PSH, and every segment
/// before it full-sized.
pub fn joins(head: &[u8], next: &[u8], bytes: usize) -> bool {
    let ihl = ((head[0] & 0x0f) as usize) * 4;
    if head.len() < ihl + 20 || next.len() < ihl + 20 || head[9] != crate::packet::PROTO_TCP {
        return false;
    }
    let thl = ((head[ihl + 12] >> 4) as usize) * 4;
    let hl = ihl + thl;
    let (mss, n) = (head.len() - hl, next.len() - hl.min(next.len()));
    if mss == 0 || n == 0 || n > mss || bytes % mss != 0 || next.len() < hl {
        return false;
    }
    let plain = |p: &[u8]| p[ihl + 13] & !0x08 == 0x10; // ACK, maybe PSH
    let same = |a: std::ops::Range<usize>| head[a.clone()] == next[a];
    let seq = |p: &[u8]| u32::from_be_bytes([p[ihl + 4], p[ihl + 5], p[ihl + 6], p[ihl + 7]]);
    plain(head) && plain(next) && head[ihl + 13] & 0x08 == 0
        && same(0..2) && same(6..10) && same(12..ihl + 4) && same(ihl + 8..ihl + 13)
        && same(ihl + 14..ihl + 16) && same(ihl + 18..hl)
        && seq(next) == seq(head).wrapping_add(bytes as u32)
}

/// The headers of the GSO packet that joins a run of segments (each accepted by [`joins`]):
/// into `out`, its `virtio_net_hdr` and the first segment's IPv4 and TCP headers with the
/// run's total length, the last segment's PSH (`last`) and the checksums (TCP's partial), for
/// `payload` bytes in all; the payloads follow in order (written with `writev`). Returns the
/// length of the segment headers.
pub fn join_head(first: &[u8], last: &[u8], payload: usize, out: &mut Vec<u8>) -> usize {
    let ihl = ((first[0] & 0x0f) as usize) * 4;
    let hl = ihl + ((first[ihl + 12] >> 4) as usize) * 4;
    let mss = first.len() - hl;
    let total = hl + payload;
    out.clear();
    out.resize(VH, 0);
    out.extend_from_slice(&first[..hl]);
    let h = &mut out[VH..];
    h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    h[ihl + 13] |= last[ihl + 13] & 0x08;
    ip_checksum(h, ihl);
    let ps = pseudo(h, total - ihl);
    h[ihl + 16..ihl + 18].copy_from_slice(&ps.to_be_bytes());
    let gso = payload > mss;
    VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: if gso { GSO_TCPV4 } else { GSO_NONE },
        hdr_len: hl as u16,
        gso_size: if gso { mss as u16 } else { 0 },
        csum_start: ihl as u16,
        csum_offset: 16,
    }
    .write(&mut out[..VH]);
    hl
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run of segments `segs` as one GSO packet in `out` (`virtio_net_hdr` first): what the
    /// engine writes with `writev` from [`join_head`] and the payloads, in one buffer.
    fn merge_tcp4(segs: &[&[u8]], out: &mut Vec<u8>) {
        let payload: usize = segs.iter().map(|p| tcp_payload(p)).sum();
        let hl = join_head(segs[0], segs[segs.len() - 1], payload, out);
        for p in segs {
            out.extend_from_slice(&p[hl..]);
        }
    }

    /// Every segment of `p` cut at `mss`, as the engine writes them into its slots.
    fn segments(p: &[u8], mss: usize) -> Vec<Vec<u8>> {
        let cut = cut_tcp4(p, mss, 2048).unwrap();
        let mut seg = vec![0u8; 2048];
        (0..cut.segments())
            .map(|k| {
                let n = cut.write(k, &mut seg);
                seg[..n].to_vec()
            })
            .collect()
    }

    /// A TCPv4 packet with `payload` bytes (pattern), PSH|ACK (and `extra` flags), seq 1000,
    /// its TCP checksum partial.
    fn big(payload: usize, extra: u8) -> Vec<u8> {
        let total = 40 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[4..6].copy_from_slice(&7u16.to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 77, 0, 1]);
        p[16..20].copy_from_slice(&[10, 77, 0, 2]);
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&10000u16.to_be_bytes());
        p[24..28].copy_from_slice(&1000u32.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = 0x18 | extra;
        for (i, b) in p[40..].iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        ip_checksum(&mut p, 20);
        let ps = pseudo(&p, 20 + payload);
        p[36..38].copy_from_slice(&ps.to_be_bytes());
        p
    }

    /// The full TCP checksum computed from scratch (field zeroed): what a receiver verifies.
    fn tcp_checksum_ok(s: &[u8]) -> bool {
        let l4 = s.len() - 20;
        let mut acc = sum16(&s[12..20], 0) + 6 + l4 as u32;
        acc = sum16(&s[20..], acc);
        fold(acc) == 0xffff
    }

    #[test]
    fn cuts_gso_packets_as_linux_does() {
        let p = big(3000, 0x01 | 0x80); // FIN and CWR set on the whole
        let got = segments(&p, 1448);
        assert_eq!(got.len(), 3);
        let lens: Vec<usize> = got.iter().map(|s| s.len() - 40).collect();
        assert_eq!(lens, vec![1448, 1448, 104]);
        for (k, s) in got.iter().enumerate() {
            let h = crate::packet::parse(s).unwrap();
            assert_eq!(h.seq, 1000 + (k * 1448) as u32);
            assert_eq!(h.len as usize, s.len());
            assert_eq!(u16::from_be_bytes([s[4], s[5]]), 7 + k as u16);
            assert_eq!(fold(sum16(&s[..20], 0)), 0xffff, "IP checksum of segment {k}");
            assert_eq!(&s[40..], &p[40 + k * 1448..40 + k * 1448 + lens[k]]);
            let f = s[33];
            assert_eq!(f & 0x01 != 0, k == 2, "FIN only on the last");
            assert_eq!(f & 0x08 != 0, k == 2, "PSH only on the last");
            assert_eq!(f & 0x80 != 0, k == 0, "CWR only on the first");
            let mut done = s.clone();
            complete(&mut done, 20, 16);
            assert!(tcp_checksum_ok(&done), "segment {k}'s completed checksum");
        }
    }

    #[test]
    fn merging_undoes_cutting() {
        let p = big(5000, 0);
        let got = segments(&p, 1448);
        for k in 1..got.len() {
            assert!(joins(&got[0], &got[k], k * 1448), "segment {k} continues the run");
        }
        assert!(!joins(&got[0], &got[2], 1448), "a gap in sequence numbers");
        assert!(!joins(&got[3], &got[0], 1448), "the short last segment cannot lead a run");
        let mut other = got[1].clone();
        other[30] ^= 1; // a different ACK number
        assert!(!joins(&got[0], &other, 1448));
        let mut ce = got[1].clone();
        ce[1] |= 3; // marked CE by a queue
        assert!(!joins(&got[0], &ce, 1448));
        let mut out = Vec::new();
        let refs: Vec<&[u8]> = got.iter().map(|s| s.as_slice()).collect();
        merge_tcp4(&refs, &mut out);
        let h = VnetHdr::read(&out);
        assert!(h.tcp4_gso() && h.partial());
        assert_eq!((h.gso_size, h.hdr_len, h.csum_start, h.csum_offset), (1448, 40, 20, 16));
        let again = segments(&out[VH..], h.gso_size as usize);
        assert_eq!(again.len(), got.len());
        for (a, b) in again.iter().zip(&got) {
            // the same bytes but the IPv4 id (counted up from the first) and its checksum
            assert_eq!(a[..4], b[..4]);
            assert_eq!(a[12..], b[12..]);
        }
        merge_tcp4(&refs[..1], &mut out);
        assert_eq!(VnetHdr::read(&out).gso_type, GSO_NONE, "one segment is no GSO packet");
    }

    #[test]
    fn refuses_what_it_cannot_cut() {
        let mut p = big(3000, 0);
        assert!(cut_tcp4(&p, 4000, 2048).is_none(), "segment larger than the buffer");
        p[9] = 17;
        assert!(cut_tcp4(&p, 1448, 2048).is_none(), "not TCP");
        assert!(cut_tcp4(&p[..30], 1448, 2048).is_none(), "truncated header");
        p[9] = 6;
        assert!(cut_tcp4(&p[..2000], 1448, 2048).is_none(), "shorter than its IP length");
    }

    #[test]
    fn header_round_trip_and_kinds() {
        let h = VnetHdr { flags: 1, gso_type: GSO_TCPV4 | GSO_ECN, hdr_len: 52, gso_size: 1448, csum_start: 20, csum_offset: 16 };
        let mut b = [0u8; VH];
        h.write(&mut b);
        assert_eq!(VnetHdr::read(&b), h);
        assert!(h.partial() && h.tcp4_gso() && !h.other_gso());
        let udp = VnetHdr { gso_type: 5, ..h };
        assert!(udp.other_gso() && !udp.tcp4_gso());
        assert_eq!(VnetHdr::single(None), VnetHdr::default());
        assert!(VnetHdr::single(Some((20, 6))).partial());
    }

    #[test]
    fn udp_zero_checksum_is_written_all_ones() {
        // a UDP datagram whose checksum comes out 0: complete() writes 0xffff (RFC 768)
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[9] = 17;
        p[2..4].copy_from_slice(&28u16.to_be_bytes());
        // choose the field so that the sum of the UDP part is 0xffff: complement 0
        let s = fold(sum16(&p[20..], 0));
        p[26..28].copy_from_slice(&(!s).to_be_bytes());
        complete(&mut p, 20, 6);
        assert_eq!(&p[26..28], &[0xff, 0xff]);
    }
}
