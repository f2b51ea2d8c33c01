//! `TCP_INFO` (and BBR's `TCP_CC_INFO`) samples as `flows` rows (`netmodel::records::FlowRow`):
//! struct offsets from include/uapi/linux/tcp.h and inet_diag.h (`tcp_bbr_info`).

use netmodel::records::{FlowRow, FlowSamples};

/// `cc_<name>` columns of BBR's `tcp_bbr_info`: bottleneck bandwidth (bit/s), min RTT (µs),
/// pacing and cwnd gains.
pub const BBR_COLUMNS: [&str; 4] = ["btl_bw", "min_rtt_us", "pacing_gain", "cwnd_gain"];

fn u32_at(b: &[u8], o: usize) -> u64 {
    u32::from_ne_bytes(b[o..o + 4].try_into().unwrap()) as u64
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_ne_bytes(b[o..o + 8].try_into().unwrap())
}

/// `tcpi_bytes_acked` (it counts the SYN too), if the struct is long enough.
pub fn bytes_acked(info: &[u8]) -> Option<u64> {
    (info.len() >= 128).then(|| u64_at(info, 120))
}

/// `tcpi_total_retrans`, if the struct is long enough.
pub fn total_retrans(info: &[u8]) -> Option<u64> {
    (info.len() >= 104).then(|| u32_at(info, 100))
}

/// A `struct tcp_info` as a flows row (short, older structs read as zeros).
pub fn row(info: &[u8]) -> FlowRow {
    let mut buf = [0u8; 512];
    let n = info.len().min(buf.len());
    buf[..n].copy_from_slice(&info[..n]);
    let b = &buf;
    let ca_state = if (b[1] as usize) < netmodel::records::CA_STATES.len() { b[1] } else { 0 };
    let (unacked, sacked, lost, retrans_out) = (u32_at(b, 24), u32_at(b, 28), u32_at(b, 32), u32_at(b, 36));
    let ssthresh = u32_at(b, 76);
    let min_rtt = u32_at(b, 148);
    let pacing = u64_at(b, 104);
    FlowRow {
        cwnd: u32_at(b, 80) as u32,
        ssthresh: (ssthresh < 0x7fff_ffff).then_some(ssthresh as u32),
        // tcpi_rtt is 0 until the first RTT sample (tcp_init_sock), while tcpi_rttvar then
        // reads the initial mdev (TCP_TIMEOUT_INIT / 4): both null until a sample, as the
        // simulator's
        srtt_us: if u32_at(b, 68) == 0 { f64::NAN } else { u32_at(b, 68) as f64 },
        rttvar_us: if u32_at(b, 68) == 0 { f64::NAN } else { u32_at(b, 72) as f64 },
        min_rtt_us: if min_rtt == 0xffff_ffff { f64::NAN } else { min_rtt as f64 },
        inflight: (unacked + retrans_out).saturating_sub(sacked + lost) as u32,
        delivered: u32_at(b, 192),
        bytes_acked: u64_at(b, 120),
        retrans: u32_at(b, 100),
        lost,
        ca_state,
        pacing_rate_bps: if pacing == u64::MAX { f64::NAN } else { (pacing * 8) as f64 },
        delivery_rate_bps: (u64_at(b, 160) * 8) as f64,
    }
}

/// BBR's `tcp_bbr_info` as `cc_*` values (None: too short).
pub fn bbr_values(cc: &[u8]) -> Option<[(&'static str, f64); 4]> {
    if cc.len() < 20 {
        return None;
    }
    let bw = u32_at(cc, 0) | (u32_at(cc, 4) << 32); // bytes/s
    Some([
        (BBR_COLUMNS[0], (bw * 8) as f64),
        (BBR_COLUMNS[1], u32_at(cc, 8) as f64),
        (BBR_COLUMNS[2], u32_at(cc, 12) as f64 / 256.0),
        (BBR_COLUMNS[3], u32_at(cc, 16) as f64 / 256.0),
    ])
}

/// Record one sample of `tcp_info` (and BBR's info) at experiment time `t`.
pub fn push(out: &mut FlowSamples, t: u64, flow: u32, info: &[u8], cc: Option<&[u8]>) {
    let bbr = cc.and_then(bbr_values);
    out.push(t, flow, &row(info), bbr.as_ref().map_or(&[][..], |v| &v[..]));
}

/// One TCP_INFO (+ TCP_CC_INFO when `bbr`) sample of our own socket.
pub fn sample(fd: i32, t: u64, flow: u32, bbr: bool, out: &mut FlowSamples) {
    let mut info = [0u8; 512];
    let mut len: libc::socklen_t = info.len() as _;
    // SAFETY: getsockopt into our buffer with its length.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) };
    if r != 0 || len < 200 {
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
