//! `TCP_INFO` (and BBR's `TCP_CC_INFO`) samples in the flows table's units and column names.

/// One TCP_INFO (+ TCP_CC_INFO) sample of our own socket, in the flows table's units.
pub fn sample(fd: i32, t: u64, bbr: bool, out: &mut String) {
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
    format_info(&info[..len as usize], t, bbr, if cc_ok { Some(&cc[..clen as usize]) } else { None }, out);
}

/// Format a `struct tcp_info` (and BBR's `tcp_bbr_info` when `bbr`) as one CSV row.
pub fn format_info(info: &[u8], t: u64, bbr: bool, cc: Option<&[u8]>, out: &mut String) {
    let mut buf = [0u8; 512];
    let n = info.len().min(buf.len());
    buf[..n].copy_from_slice(&info[..n]); // short (older) structs read as zeros
    let info = &buf;
    let u8_ = |o: usize| info[o] as u64;
    let u32_ = |o: usize| u32::from_ne_bytes(info[o..o + 4].try_into().unwrap()) as u64;
    let u64_ = |o: usize| u64::from_ne_bytes(info[o..o + 8].try_into().unwrap());
    // struct tcp_info offsets (include/uapi/linux/tcp.h)
    let ca_state = ["open", "disorder", "cwr", "recovery", "loss"].get(u8_(1) as usize).copied().unwrap_or("open");
    let (unacked, sacked, lost, retrans_out) = (u32_(24), u32_(28), u32_(32), u32_(36));
    let rtt = u32_(68);
    let rttvar = u32_(72);
    let ssthresh = u32_(76);
    let cwnd = u32_(80);
    let total_retrans = u32_(100);
    let pacing = u64_(104);
    let bytes_acked = u64_(120);
    let min_rtt = u32_(148);
    let delivery = u64_(160);
    let delivered = u32_(192);
    let inflight = (unacked + retrans_out).saturating_sub(sacked + lost);
    let ss = if ssthresh >= 0x7fff_ffff { String::new() } else { ssthresh.to_string() };
    let min_rtt_s = if min_rtt == 0xffff_ffff { String::new() } else { min_rtt.to_string() };
    let pacing_s = if pacing == u64::MAX { String::new() } else { (pacing * 8).to_string() };
    use std::fmt::Write as _;
    let _ = write!(
        out,
        "{t},{cwnd},{ss},{rtt},{rttvar},{min_rtt_s},{inflight},{delivered},{bytes_acked},{total_retrans},{lost},{ca_state},{pacing_s},{}",
        delivery * 8
    );
    if bbr {
        match cc {
            Some(cc) if cc.len() >= 20 => {
                let w = |o: usize| u32::from_ne_bytes(cc[o..o + 4].try_into().unwrap()) as u64;
                let bw = w(0) | (w(4) << 32); // bytes/s
                let _ = write!(out, ",{},{},{},{}", bw * 8, w(8), w(12) as f64 / 256.0, w(16) as f64 / 256.0);
            }
            _ => out.push_str(",,,,"),
        }
    }
    out.push('\n');
}

pub const HEADER: &str = "time_ns,cwnd,ssthresh,srtt_us,rttvar_us,min_rtt_us,inflight,delivered,bytes_acked,retrans,lost,ca_state,pacing_rate_bps,delivery_rate_bps";
