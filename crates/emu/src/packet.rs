//! Just enough IPv4/TCP/UDP parsing for the engine: addresses, ports, TCP sequence/ack numbers
//! and flags, payload length, and ECN rewriting with the header checksum kept valid.

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

pub const TCP_FIN: u8 = 0x01;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_ACK: u8 = 0x10;

/// The header fields of one IPv4 packet (TCP/UDP fields are zero for other protocols).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    pub src: u32,
    pub dst: u32,
    pub proto: u8,
    pub ecn: u8,
    /// IP total length (bytes on the link).
    pub len: u32,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// Transport payload bytes.
    pub payload: u32,
}

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

#[inline]
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Parse an IPv4 packet as read from a TUN (IFF_NO_PI). `None` for anything that is not a
/// well-formed IPv4 header (IPv6 never appears: the namespaces have it disabled).
pub fn parse(b: &[u8]) -> Option<Headers> {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let ihl = ((b[0] & 0x0f) as usize) * 4;
    let total = be16(b, 2) as usize;
    if ihl < 20 || total < ihl || total > b.len() {
        return None;
    }
    let mut h = Headers {
        src: be32(b, 12),
        dst: be32(b, 16),
        proto: b[9],
        ecn: b[1] & 0x03,
        len: total as u32,
        ..Default::default()
    };
    let t = &b[ihl..total];
    match h.proto {
        PROTO_TCP if t.len() >= 20 => {
            let doff = ((t[12] >> 4) as usize) * 4;
            h.sport = be16(t, 0);
            h.dport = be16(t, 2);
            h.seq = be32(t, 4);
            h.ack = be32(t, 8);
            h.flags = t[13];
            h.payload = t.len().saturating_sub(doff) as u32;
        }
        PROTO_UDP if t.len() >= 8 => {
            h.sport = be16(t, 0);
            h.dport = be16(t, 2);
            h.payload = (t.len() - 8) as u32;
        }
        _ => {}
    }
    Some(h)
}

/// Set the ECN field of an IPv4 header and update its checksum (RFC 1624 incremental update).
pub fn set_ecn(b: &mut [u8], ecn: u8) {
    let old = u16::from_be_bytes([b[0], b[1]]);
    b[1] = (b[1] & !0x03) | (ecn & 0x03);
    let new = u16::from_be_bytes([b[0], b[1]]);
    let ck = u16::from_be_bytes([b[10], b[11]]);
    // HC' = ~(~HC + ~m + m')
    let mut sum = (!ck as u32) + (!old as u32) + new as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let ck = !(sum as u16);
    b[10..12].copy_from_slice(&ck.to_be_bytes());
}

/// Extends 32-bit sequence numbers (relative to an initial one) to 64 bits.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqUnwrap {
    last: u64,
}

impl SeqUnwrap {
    /// The 64-bit value of `rel` (a 32-bit offset from the base) closest to the last one.
    pub fn unwrap(&mut self, rel: u32) -> u64 {
        let d = rel.wrapping_sub(self.last as u32) as i32 as i64;
        let v = (self.last as i64 + d).max(0) as u64;
        if v > self.last {
            self.last = v;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip_checksum(h: &[u8]) -> u16 {
        let mut s = 0u32;
        for i in (0..h.len()).step_by(2) {
            s += u16::from_be_bytes([h[i], h[i + 1]]) as u32;
        }
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    fn tcp_packet(payload: usize) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut b = vec![0u8; total];
        b[0] = 0x45;
        b[1] = 0x02; // ECT(0)
        b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        b[8] = 64;
        b[9] = PROTO_TCP;
        b[12..16].copy_from_slice(&[10, 77, 0, 1]);
        b[16..20].copy_from_slice(&[10, 77, 0, 2]);
        let ck = ip_checksum(&b[..20]);
        b[10..12].copy_from_slice(&ck.to_be_bytes());
        let t = &mut b[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&10001u16.to_be_bytes());
        t[4..8].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
        t[8..12].copy_from_slice(&7u32.to_be_bytes());
        t[12] = 8 << 4;
        t[13] = TCP_ACK;
        b
    }

    #[test]
    fn parses_tcp_fields() {
        let b = tcp_packet(1448);
        let h = parse(&b).unwrap();
        assert_eq!(h.src, 0x0a4d_0001);
        assert_eq!(h.dst, 0x0a4d_0002);
        assert_eq!((h.sport, h.dport), (40000, 10001));
        assert_eq!(h.seq, 0xffff_fff0);
        assert_eq!(h.ack, 7);
        assert_eq!(h.payload, 1448);
        assert_eq!(h.len, 1500);
        assert_eq!(h.ecn, 2);
        assert_eq!(h.flags, TCP_ACK);
        assert!(parse(&b[..10]).is_none());
    }

    #[test]
    fn ecn_rewrite_keeps_checksum_valid() {
        let mut b = tcp_packet(0);
        set_ecn(&mut b, 3);
        assert_eq!(b[1] & 3, 3);
        assert_eq!(ip_checksum(&b[..20]), 0);
    }

    #[test]
    fn sequence_unwrap_crosses_2_32() {
        let mut u = SeqUnwrap::default();
        assert_eq!(u.unwrap(0), 0);
        assert_eq!(u.unwrap(0x7000_0000), 0x7000_0000);
        assert_eq!(u.unwrap(0xe000_0000), 0xe000_0000);
        assert_eq!(u.unwrap(0xffff_ff00), 0xffff_ff00);
        assert_eq!(u.unwrap(0x0000_0100), 0x1_0000_0100);
        // an old (retransmitted) sequence number just below still maps below
        assert_eq!(u.unwrap(0xffff_f000), 0xffff_f000);
    }
}
