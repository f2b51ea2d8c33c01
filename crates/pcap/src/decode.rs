//! Header decoding: link layer → IPv4 → TCP/UDP. Bounds-checked against the captured bytes
//! (a snapped packet yields what was captured; wire lengths come from the IP header).

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// TCP flag bits (the 8 bits of byte 13).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// The fields of one IPv4 packet (transport fields zero when absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    pub src: u32,
    pub dst: u32,
    pub proto: u8,
    /// ECN codepoint (two low bits of the TOS byte).
    pub ecn: u8,
    pub ip_id: u16,
    /// IP total length (bytes on the wire at the IP layer).
    pub ip_len: u32,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Transport payload bytes (from the length fields, not the captured bytes).
    pub payload: u32,
    /// Timestamp option present (`tsval`, `tsecr` valid).
    pub has_ts: bool,
    pub tsval: u32,
    pub tsecr: u32,
    /// SACK blocks (left, right), up to 4.
    pub n_sack: u8,
    pub sack: [(u32, u32); 4],
    /// Offset of the transport header in the captured bytes, and its captured length.
    pub l4_off: u16,
    pub l4_cap: u16,
}

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

#[inline]
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Offset of the IPv4 header for `linktype`, `None` if the frame carries no IPv4 (IPv6, ARP,
/// an unknown link type, or too short).
pub fn ipv4_offset(linktype: u16, d: &[u8]) -> Option<usize> {
    match linktype {
        // Ethernet, with any number of 802.1Q / 802.1ad tags
        1 => {
            let mut o = 12;
            loop {
                if d.len() < o + 2 {
                    return None;
                }
                match be16(d, o) {
                    0x0800 => return Some(o + 2),
                    0x8100 | 0x88a8 | 0x9100 => o += 4,
                    _ => return None,
                }
            }
        }
        // raw IP (LINKTYPE_RAW, LINKTYPE_IPV4, and DLT_RAW's OpenBSD value)
        101 | 228 | 12 | 14 => (d.first().is_some_and(|b| b >> 4 == 4)).then_some(0),
        // Linux cooked capture v1: protocol at 14
        113 => (d.len() >= 16 && be16(d, 14) == 0x0800).then_some(16),
        // Linux cooked capture v2: protocol at 0
        276 => (d.len() >= 20 && be16(d, 0) == 0x0800).then_some(20),
        // BSD loopback: 4-byte address family in host order (AF_INET = 2)
        0 | 108 => {
            if d.len() < 4 {
                return None;
            }
            let fam_le = u32::from_le_bytes([d[0], d[1], d[2], d[3]]);
            let fam_be = u32::from_be_bytes([d[0], d[1], d[2], d[3]]);
            (fam_le == 2 || fam_be == 2).then_some(4)
        }
        _ => None,
    }
}

/// Decode the IPv4 packet in frame `d` into `f`. Returns false when the frame holds no
/// well-formed IPv4 header (the caller counts it as skipped).
pub fn decode(linktype: u16, d: &[u8], f: &mut Fields) -> bool {
    let Some(o) = ipv4_offset(linktype, d) else { return false };
    decode_ipv4(&d[o..], o, f)
}

fn decode_ipv4(b: &[u8], base: usize, f: &mut Fields) -> bool {
    *f = Fields::default();
    if b.len() < 20 || b[0] >> 4 != 4 {
        return false;
    }
    let ihl = ((b[0] & 0x0f) as usize) * 4;
    let total = be16(b, 2) as usize;
    if ihl < 20 || b.len() < ihl || total < ihl {
        return false;
    }
    f.src = be32(b, 12);
    f.dst = be32(b, 16);
    f.proto = b[9];
    f.ecn = b[1] & 3;
    f.ip_id = be16(b, 4);
    f.ip_len = total as u32;
    // a non-first fragment carries no transport header
    if be16(b, 6) & 0x1fff != 0 {
        return true;
    }
    let cap_end = b.len().min(total);
    let t = &b[ihl..cap_end];
    f.l4_off = (base + ihl) as u16;
    f.l4_cap = t.len().min(u16::MAX as usize) as u16;
    match f.proto {
        PROTO_TCP if t.len() >= 20 => {
            f.sport = be16(t, 0);
            f.dport = be16(t, 2);
            f.seq = be32(t, 4);
            f.ack = be32(t, 8);
            let doff = ((t[12] >> 4) as usize) * 4;
            f.flags = t[13];
            f.window = be16(t, 14);
            f.payload = (total - ihl).saturating_sub(doff) as u32;
            if doff > 20 {
                tcp_options(&t[20..doff.min(t.len())], f);
            }
        }
        PROTO_UDP if t.len() >= 8 => {
            f.sport = be16(t, 0);
            f.dport = be16(t, 2);
            f.payload = (total - ihl).saturating_sub(8) as u32;
        }
        _ => {}
    }
    true
}

fn tcp_options(o: &[u8], f: &mut Fields) {
    let mut i = 0;
    while i < o.len() {
        match o[i] {
            0 => return,
            1 => i += 1,
            kind => {
                if i + 1 >= o.len() {
                    return;
                }
                let len = o[i + 1] as usize;
                if len < 2 || i + len > o.len() {
                    return;
                }
                let v = &o[i + 2..i + len];
                match kind {
                    8 if v.len() == 8 => {
                        f.has_ts = true;
                        f.tsval = be32(v, 0);
                        f.tsecr = be32(v, 4);
                    }
                    5 => {
                        let n = (v.len() / 8).min(4);
                        for k in 0..n {
                            f.sack[k] = (be32(v, 8 * k), be32(v, 8 * k + 4));
                        }
                        f.n_sack = n as u8;
                    }
                    _ => {}
                }
                i += len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_vlan_and_cooked_frames() {
        let mut ip = vec![0u8; 40];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&40u16.to_be_bytes());
        ip[9] = PROTO_TCP;
        ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
        ip[20 + 12] = 5 << 4;
        ip[20 + 13] = ACK;
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x81, 0x00, 0, 5, 0x08, 0x00]);
        eth.extend_from_slice(&ip);
        let mut f = Fields::default();
        assert!(decode(1, &eth, &mut f));
        assert_eq!((f.src, f.flags, f.ip_len, f.l4_off), (0x0a00_0001, ACK, 40, 38));
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&ip);
        assert!(decode(113, &sll, &mut f));
        assert!(!decode(1, &eth[..13], &mut f));
        let mut v6 = ip.clone();
        v6[0] = 0x60;
        assert!(!decode(101, &v6, &mut f));
    }
}
