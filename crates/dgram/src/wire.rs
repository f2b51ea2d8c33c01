//! The transport's wire format: what a datagram carries above UDP. Two messages, both
//! little-endian, both starting with a kind byte and a version byte:
//!
//! ```text
//! data (DATA_HDR = 26 bytes, then padding to `size`):
//!   0  kind = 1      u8
//!   1  version = 1   u8
//!   2  flow          u32   the flow's id (the resolved experiment's)
//!   6  seq           u64   0, 1, 2, ... in send order (never reused: no retransmissions)
//!  14  sent_ns       u64   sender clock when the packet left
//!  22  size          u32   bytes of this datagram (header + padding): what the sender counts
//!
//! acknowledgement (ACK_HDR = 17 bytes, then feedback, then runs):
//!   0  kind = 2      u8
//!   1  version = 1   u8
//!   2  flow          u32
//!   6  ack_ns        u64   receiver clock when this acknowledgement left
//!  14  n_feedback    u8    0..=16 values of the scheme's receiver half
//!  15  n_runs        u16
//!  17  feedback      n_feedback × f64
//!      runs          n_runs × (first_seq u64, count u16, count × hold u32)
//! ```
//!
//! A *run* is packets with consecutive sequence numbers received one after the other; runs
//! are listed in arrival order, so the packets of an acknowledgement are in the order the
//! receiver got them. `hold` is `ack_ns − recv_ns` of each packet (ns, at most 4.29 s: the
//! receiver acknowledges within its policy's interval), so the receive time is
//! `ack_ns − hold` and the sender's RTT sample removes the hold exactly (as QUIC's ACK Delay
//! does, RFC 9000 §19.3, per packet here). An acknowledgement fits one 1500-byte IP packet
//! ([`MAX_ACK_BYTES`]); a receiver with more to report sends several.

/// Bytes of the data header.
pub const DATA_HDR: usize = 26;
/// Bytes of the acknowledgement's fixed part.
pub const ACK_HDR: usize = 17;
/// Most feedback values an acknowledgement carries.
pub const MAX_FEEDBACK: usize = 16;
/// Largest acknowledgement (datagram bytes): a 1500-byte IP packet less IPv4 and UDP headers.
pub const MAX_ACK_BYTES: usize = 1472;
const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
const VERSION: u8 = 1;
/// Bytes of one run's fixed part (first_seq, count).
const RUN_HDR: usize = 10;

/// The header of a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    pub flow: u32,
    pub seq: u64,
    pub sent_ns: u64,
    /// Datagram bytes, header included (at least [`DATA_HDR`]).
    pub size: u32,
}

/// One acknowledgement: the packets it reports in arrival order and the receiver half's
/// feedback values.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Ack {
    pub flow: u32,
    /// Receiver clock when it left.
    pub ack_ns: u64,
    /// (seq, receiver clock of arrival), in arrival order.
    pub packets: Vec<(u64, u64)>,
    pub feedback: Vec<f64>,
}

/// What is wrong with a datagram that does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the message needs.
    Short { need: usize, got: usize },
    UnknownKind(u8),
    UnknownVersion(u8),
    /// A data packet whose `size` is below the header or above the bytes received.
    BadSize { size: u32, got: usize },
    TooManyFeedback(usize),
    /// A run of zero packets, a hold after the acknowledgement left, or bytes left over.
    Malformed(&'static str),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Short { need, got } => write!(f, "datagram too short: {got} bytes, need {need}"),
            WireError::UnknownKind(k) => write!(f, "unknown message kind {k}"),
            WireError::UnknownVersion(v) => write!(f, "unknown wire version {v} (this build speaks {VERSION})"),
            WireError::BadSize { size, got } => write!(f, "data packet claims {size} bytes, {got} received"),
            WireError::TooManyFeedback(n) => write!(f, "{n} feedback values (at most {MAX_FEEDBACK})"),
            WireError::Malformed(what) => write!(f, "malformed acknowledgement: {what}"),
        }
    }
}

impl std::error::Error for WireError {}

/// A decoded datagram.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Data(DataHeader),
    Ack(Ack),
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.at + n > self.b.len() {
            return Err(WireError::Short { need: self.at + n, got: self.b.len() });
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
}

impl DataHeader {
    /// Write the header into `out` (cleared) and pad it to `size` bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&[KIND_DATA, VERSION]);
        out.extend_from_slice(&self.flow.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.sent_ns.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.resize((self.size as usize).max(DATA_HDR), 0);
    }
}

/// Most packets one acknowledgement can report with `n_feedback` values, if they form one run
/// (each further run costs [`RUN_HDR`] bytes more).
pub fn ack_capacity(n_feedback: usize) -> usize {
    (MAX_ACK_BYTES - ACK_HDR - 8 * n_feedback - RUN_HDR) / 4
}

/// Runs of `packets` (arrival order): (index of the first packet, count).
fn runs(packets: &[(u64, u64)]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, &(seq, _)) in packets.iter().enumerate() {
        match out.last_mut() {
            Some((s, n)) if packets[*s].0 + *n as u64 == seq && *n < u16::MAX as usize => *n += 1,
            _ => out.push((i, 1)),
        }
    }
    out
}

impl Ack {
    /// Bytes this acknowledgement takes on the wire.
    pub fn encoded_len(&self) -> usize {
        ACK_HDR + 8 * self.feedback.len() + runs(&self.packets).len() * RUN_HDR + 4 * self.packets.len()
    }

    /// Write it into `out` (cleared). Panics on more than [`MAX_FEEDBACK`] values (the
    /// receiver truncates them); holds above 4.29 s are written as the maximum.
    pub fn encode(&self, out: &mut Vec<u8>) {
        assert!(self.feedback.len() <= MAX_FEEDBACK, "at most {MAX_FEEDBACK} feedback values");
        let rs = runs(&self.packets);
        out.clear();
        out.extend_from_slice(&[KIND_ACK, VERSION]);
        out.extend_from_slice(&self.flow.to_le_bytes());
        out.extend_from_slice(&self.ack_ns.to_le_bytes());
        out.push(self.feedback.len() as u8);
        out.extend_from_slice(&(rs.len() as u16).to_le_bytes());
        for v in &self.feedback {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for (s, n) in rs {
            out.extend_from_slice(&self.packets[s].0.to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            for &(_, recv) in &self.packets[s..s + n] {
                let hold = self.ack_ns.saturating_sub(recv).min(u32::MAX as u64) as u32;
                out.extend_from_slice(&hold.to_le_bytes());
            }
        }
    }
}

/// Decode one datagram.
pub fn decode(b: &[u8]) -> Result<Message, WireError> {
    let mut r = Reader { b, at: 0 };
    let kind = r.u8()?;
    let version = r.u8()?;
    if kind != KIND_DATA && kind != KIND_ACK {
        return Err(WireError::UnknownKind(kind));
    }
    if version != VERSION {
        return Err(WireError::UnknownVersion(version));
    }
    let flow = r.u32()?;
    if kind == KIND_DATA {
        let seq = r.u64()?;
        let sent_ns = r.u64()?;
        let size = r.u32()?;
        if (size as usize) < DATA_HDR || size as usize > b.len() {
            return Err(WireError::BadSize { size, got: b.len() });
        }
        return Ok(Message::Data(DataHeader { flow, seq, sent_ns, size }));
    }
    let ack_ns = r.u64()?;
    let n_fb = r.u8()? as usize;
    if n_fb > MAX_FEEDBACK {
        return Err(WireError::TooManyFeedback(n_fb));
    }
    let n_runs = r.u16()?;
    let feedback = (0..n_fb).map(|_| r.u64().map(f64::from_bits)).collect::<Result<Vec<_>, _>>()?;
    let mut packets = Vec::new();
    for _ in 0..n_runs {
        let first = r.u64()?;
        let n = r.u16()?;
        if n == 0 {
            return Err(WireError::Malformed("a run of zero packets"));
        }
        for k in 0..n as u64 {
            let hold = r.u32()? as u64;
            let seq = first.checked_add(k).ok_or(WireError::Malformed("sequence number overflows"))?;
            let recv = ack_ns.checked_sub(hold).ok_or(WireError::Malformed("a packet received before time 0"))?;
            packets.push((seq, recv));
        }
    }
    if r.at != b.len() {
        return Err(WireError::Malformed("bytes after the last run"));
    }
    Ok(Message::Ack(Ack { flow, ack_ns, packets, feedback }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trip_and_padding() {
        let h = DataHeader { flow: 7, seq: 1 << 40, sent_ns: 123_456_789, size: 1472 };
        let mut b = Vec::new();
        h.encode(&mut b);
        assert_eq!(b.len(), 1472);
        assert_eq!(decode(&b).unwrap(), Message::Data(h));
    }

    #[test]
    fn ack_round_trip_with_runs_out_of_order() {
        let a = Ack {
            flow: 3,
            ack_ns: 10_000_000,
            // arrival order: 5, 6, 7, then 4 late (reordered), then 9
            packets: vec![(5, 9_000_000), (6, 9_100_000), (7, 9_200_000), (4, 9_300_000), (9, 10_000_000)],
            feedback: vec![1.5, -2.0],
        };
        let mut b = Vec::new();
        a.encode(&mut b);
        assert_eq!(b.len(), a.encoded_len());
        assert_eq!(b.len(), ACK_HDR + 16 + 3 * RUN_HDR + 5 * 4);
        assert_eq!(decode(&b).unwrap(), Message::Ack(a));
    }

    #[test]
    fn capacity_fits_one_ip_packet() {
        let a = Ack { flow: 0, ack_ns: 1 << 30, packets: (0..ack_capacity(2) as u64).map(|s| (s, 1 << 29)).collect(), feedback: vec![0.0; 2] };
        assert!(a.encoded_len() <= MAX_ACK_BYTES);
        let mut b = Vec::new();
        a.encode(&mut b);
        assert_eq!(b.len(), a.encoded_len());
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        assert!(matches!(decode(&[]), Err(WireError::Short { .. })));
        assert_eq!(decode(&[9, 1, 0, 0, 0, 0]), Err(WireError::UnknownKind(9)));
        assert_eq!(decode(&[1, 2, 0, 0, 0, 0]), Err(WireError::UnknownVersion(2)));
        let mut b = Vec::new();
        DataHeader { flow: 1, seq: 2, sent_ns: 3, size: 100 }.encode(&mut b);
        assert!(matches!(decode(&b[..50]), Err(WireError::BadSize { size: 100, got: 50 })));
        assert!(matches!(decode(&b[..20]), Err(WireError::Short { .. })));
        let a = Ack { flow: 1, ack_ns: 100, packets: vec![(1, 90), (2, 95)], feedback: vec![] };
        a.encode(&mut b);
        let full = b.clone();
        assert!(matches!(decode(&full[..full.len() - 1]), Err(WireError::Short { .. })));
        b.push(0);
        assert_eq!(decode(&b), Err(WireError::Malformed("bytes after the last run")));
        let mut z = full.clone();
        z[ACK_HDR + 8] = 0; // the run's count
        z[ACK_HDR + 9] = 0;
        assert!(decode(&z).is_err());
        let mut f = full.clone();
        f[14] = 17;
        assert_eq!(decode(&f), Err(WireError::TooManyFeedback(17)));
        // a hold beyond the acknowledgement's own time
        let mut h = full;
        h[ACK_HDR + RUN_HDR..ACK_HDR + RUN_HDR + 4].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(decode(&h), Err(WireError::Malformed("a packet received before time 0")));
    }
}
