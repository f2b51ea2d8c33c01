//! `TCP_INFO` (and BBR's `TCP_CC_INFO`) samples as `flows` rows (`netmodel::records::FlowRow`):
//! the fields of `struct tcp_info` (include/uapi/linux/tcp.h) and `struct tcp_bbr_info`
//! (include/uapi/linux/inet_diag.h) by name. The one reader of these structs in the agent:
//! control.rs reads its interval reports through the same constants.

use netmodel::records::{FlowRow, FlowSamples};

/// `cc_<name>` columns of BBR's `tcp_bbr_info`: bottleneck bandwidth (bit/s), min RTT (µs),
/// pacing and cwnd gains.
pub const BBR_COLUMNS: [&str; 4] = ["btl_bw", "min_rtt_us", "pacing_gain", "cwnd_gain"];

/// A field of a kernel struct: its byte offset and its width (`__u8`, `__u32`, `__u64`),
/// read in the host's byte order and widened to u64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

const fn u8f(offset: usize) -> Field {
    Field { offset, size: 1 }
}

const fn u32f(offset: usize) -> Field {
    Field { offset, size: 4 }
}

const fn u64f(offset: usize) -> Field {
    Field { offset, size: 8 }
}

impl Field {
    /// The first byte after the field: a struct at least this long has it.
    pub const fn end(self) -> usize {
        self.offset + self.size
    }

    /// The field's value in `b` (panics if `b` is shorter than `end()`).
    pub fn read(self, b: &[u8]) -> u64 {
        let o = self.offset;
        match self.size {
            1 => b[o] as u64,
            4 => u32::from_ne_bytes(b[o..o + 4].try_into().unwrap()) as u64,
            8 => u64::from_ne_bytes(b[o..o + 8].try_into().unwrap()),
            _ => unreachable!("fields are __u8, __u32 or __u64"),
        }
    }
}

// `struct tcp_info` (include/uapi/linux/tcp.h), the fields the agent reads.
pub const TCPI_CA_STATE: Field = u8f(1);
/// The byte holding the bitfields `tcpi_delivery_rate_app_limited:1` (bit 0) and
/// `tcpi_fastopen_client_fail:2`.
pub const TCPI_APP_LIMITED_BYTE: Field = u8f(7);
pub const TCPI_SND_MSS: Field = u32f(16);
pub const TCPI_UNACKED: Field = u32f(24);
pub const TCPI_SACKED: Field = u32f(28);
pub const TCPI_LOST: Field = u32f(32);
pub const TCPI_RETRANS: Field = u32f(36);
pub const TCPI_RTT: Field = u32f(68);
pub const TCPI_RTTVAR: Field = u32f(72);
pub const TCPI_SND_SSTHRESH: Field = u32f(76);
pub const TCPI_SND_CWND: Field = u32f(80);
pub const TCPI_TOTAL_RETRANS: Field = u32f(100);
pub const TCPI_PACING_RATE: Field = u64f(104);
pub const TCPI_BYTES_ACKED: Field = u64f(120);
pub const TCPI_SEGS_IN: Field = u32f(140);
pub const TCPI_MIN_RTT: Field = u32f(148);
pub const TCPI_DELIVERY_RATE: Field = u64f(160);
pub const TCPI_DELIVERED: Field = u32f(192);
pub const TCPI_DELIVERED_CE: Field = u32f(196);
pub const TCPI_BYTES_SENT: Field = u64f(200);
pub const TCPI_BYTES_RETRANS: Field = u64f(208);
pub const TCPI_SND_WND: Field = u32f(228);

/// `tcpi_snd_ssthresh` at or above this: no threshold yet (`TCP_INFINITE_SSTHRESH`).
pub const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;
/// `tcpi_min_rtt` before any RTT sample (`~0U`).
pub const NO_MIN_RTT: u64 = 0xffff_ffff;
/// `tcpi_pacing_rate` when pacing is unlimited (`~0UL`).
pub const NO_PACING_RATE: u64 = u64::MAX;

// `struct tcp_bbr_info` (include/uapi/linux/inet_diag.h)
pub const BBR_BW_LO: Field = u32f(0);
pub const BBR_BW_HI: Field = u32f(4);
pub const BBR_MIN_RTT: Field = u32f(8);
pub const BBR_PACING_GAIN: Field = u32f(12);
pub const BBR_CWND_GAIN: Field = u32f(16);

/// `tcpi_bytes_acked` (it counts the SYN too), if the struct is long enough.
pub fn bytes_acked(info: &[u8]) -> Option<u64> {
    (info.len() >= TCPI_BYTES_ACKED.end()).then(|| TCPI_BYTES_ACKED.read(info))
}

/// `tcpi_total_retrans`, if the struct is long enough.
pub fn total_retrans(info: &[u8]) -> Option<u64> {
    (info.len() >= TCPI_TOTAL_RETRANS.end()).then(|| TCPI_TOTAL_RETRANS.read(info))
}

/// A `struct tcp_info` as a flows row (short, older structs read as zeros).
pub fn row(info: &[u8]) -> FlowRow {
    let mut buf = [0u8; 512];
    let n = info.len().min(buf.len());
    buf[..n].copy_from_slice(&info[..n]);
    let b = &buf;
    let ca_state = TCPI_CA_STATE.read(b) as u8;
    let ca_state = if (ca_state as usize) < netmodel::records::CA_STATES.len() { ca_state } else { 0 };
    let (unacked, sacked) = (TCPI_UNACKED.read(b), TCPI_SACKED.read(b));
    let (lost, retrans_out) = (TCPI_LOST.read(b), TCPI_RETRANS.read(b));
    let ssthresh = TCPI_SND_SSTHRESH.read(b);
    let min_rtt = TCPI_MIN_RTT.read(b);
    let pacing = TCPI_PACING_RATE.read(b);
    let rtt = TCPI_RTT.read(b);
    FlowRow {
        cwnd: TCPI_SND_CWND.read(b) as u32,
        ssthresh: (ssthresh < INFINITE_SSTHRESH).then_some(ssthresh as u32),
        // tcpi_rtt is 0 until the first RTT sample (tcp_init_sock), while tcpi_rttvar then
        // reads the initial mdev (TCP_TIMEOUT_INIT / 4): both null until a sample, as the
        // simulator's
        srtt_us: if rtt == 0 { f64::NAN } else { rtt as f64 },
        rttvar_us: if rtt == 0 { f64::NAN } else { TCPI_RTTVAR.read(b) as f64 },
        min_rtt_us: if min_rtt == NO_MIN_RTT { f64::NAN } else { min_rtt as f64 },
        inflight: (unacked + retrans_out).saturating_sub(sacked + lost) as u32,
        delivered: TCPI_DELIVERED.read(b),
        bytes_acked: TCPI_BYTES_ACKED.read(b),
        retrans: TCPI_TOTAL_RETRANS.read(b),
        lost,
        ca_state,
        pacing_rate_bps: if pacing == NO_PACING_RATE { f64::NAN } else { (pacing * 8) as f64 },
        delivery_rate_bps: (TCPI_DELIVERY_RATE.read(b) * 8) as f64,
    }
}

/// BBR's `tcp_bbr_info` as `cc_*` values (None: too short).
pub fn bbr_values(cc: &[u8]) -> Option<[(&'static str, f64); 4]> {
    if cc.len() < BBR_CWND_GAIN.end() {
        return None;
    }
    let bw = BBR_BW_LO.read(cc) | (BBR_BW_HI.read(cc) << 32); // bytes/s
    Some([
        (BBR_COLUMNS[0], (bw * 8) as f64),
        (BBR_COLUMNS[1], BBR_MIN_RTT.read(cc) as f64),
        (BBR_COLUMNS[2], BBR_PACING_GAIN.read(cc) as f64 / 256.0),
        (BBR_COLUMNS[3], BBR_CWND_GAIN.read(cc) as f64 / 256.0),
    ])
}

/// Record one sample of `tcp_info` (and BBR's info) at experiment time `t`.
pub fn push(out: &mut FlowSamples, t: u64, flow: u32, info: &[u8], cc: Option<&[u8]>) {
    let bbr = cc.and_then(bbr_values);
    out.push(t, flow, &row(info), bbr.as_ref().map_or(&[][..], |v| &v[..]));
}

/// The shortest `struct tcp_info` sampled: one that reaches through `tcpi_delivered_ce`.
const SAMPLE_MIN_LEN: usize = TCPI_DELIVERED_CE.end();

/// One TCP_INFO (+ TCP_CC_INFO when `bbr`) sample of our own socket.
pub fn sample(fd: i32, t: u64, flow: u32, bbr: bool, out: &mut FlowSamples) {
    let mut info = [0u8; 512];
    let mut len: libc::socklen_t = info.len() as _;
    // SAFETY: getsockopt into our buffer with its length.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) };
    if r != 0 || (len as usize) < SAMPLE_MIN_LEN {
        return;
    }
    let mut cc = [0u8; 64];
    let mut clen: libc::socklen_t = cc.len() as _;
    let cc_ok = bbr && {
        // SAFETY: as above.
        let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, cc.as_mut_ptr() as *mut _, &mut clen) };
        r == 0 && clen >= 20
    };
    push(out, t, flow, &info[..len as usize], cc_ok.then(|| &cc[..clen as usize]));
}

/// Samples of a BBR socket carry the `cc_*` columns even where TCP_CC_INFO failed (NaN).
pub fn declare_bbr(out: &mut FlowSamples) {
    for c in BBR_COLUMNS {
        out.declare_cc(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lengths_checked_are_the_uapi_ones() {
        // a sample needs the struct through tcpi_delivered_ce, a controller's report through
        // tcpi_snd_wnd; tcpi_bytes_acked and tcpi_total_retrans end where they did
        assert_eq!((SAMPLE_MIN_LEN, TCPI_SND_WND.end()), (200, 232));
        assert_eq!((TCPI_BYTES_ACKED.end(), TCPI_TOTAL_RETRANS.end()), (128, 104));
    }

    #[test]
    fn tcp_info_fields_map_to_the_flows_row() {
        let mut info = [0u8; 232];
        info[1] = 3; // TCP_CA_Recovery
        let put32 = |b: &mut [u8], o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
        put32(&mut info, 24, 20); // unacked
        put32(&mut info, 28, 3); // sacked
        put32(&mut info, 32, 2); // lost
        put32(&mut info, 36, 1); // retrans_out
        put32(&mut info, 68, 21_000);
        put32(&mut info, 76, 0x7fff_ffff); // infinite ssthresh
        put32(&mut info, 80, 42);
        put32(&mut info, 148, 0xffff_ffff); // no min RTT yet
        info[104..112].copy_from_slice(&u64::MAX.to_ne_bytes()); // no pacing rate
        info[160..168].copy_from_slice(&1_000u64.to_ne_bytes());
        let r = row(&info);
        assert_eq!((r.cwnd, r.ssthresh, r.ca_state, r.inflight), (42, None, 3, 16));
        assert_eq!(r.srtt_us, 21_000.0);
        assert!(r.min_rtt_us.is_nan() && r.pacing_rate_bps.is_nan());
        assert_eq!(r.delivery_rate_bps, 8_000.0);
        put32(&mut info, 76, 12);
        assert_eq!(row(&info).ssthresh, Some(12));
        // before the first RTT sample: tcpi_rtt 0 and tcpi_rttvar the initial 250 ms
        put32(&mut info, 68, 0);
        put32(&mut info, 72, 250_000);
        let r = row(&info);
        assert!(r.srtt_us.is_nan() && r.rttvar_us.is_nan());
    }
}
