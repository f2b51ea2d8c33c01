//! `monitor`: `TCP_INFO` of another program's socket through netlink sock_diag (INET_DIAG),
//! for command schemes, whose sockets the agent does not own.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use super::tcp_info;
use super::{die, errno_msg, write_out, Args};
use netmodel::records::FlowSamples;
use crate::clock;

pub const NETLINK_SOCK_DIAG: i32 = 4;
pub const SOCK_DIAG_BY_FAMILY: u16 = 20;
pub const NLM_F_REQUEST: u16 = 1;
pub const NLM_F_DUMP: u16 = 0x300;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
// include/uapi/linux/inet_diag.h
pub const INET_DIAG_INFO: u16 = 2;
pub const INET_DIAG_VEGASINFO: u16 = 3;
pub const INET_DIAG_CONG: u16 = 4;
pub const INET_DIAG_BBRINFO: u16 = 16;
/// Every TCP state but LISTEN, TIME_WAIT and CLOSE (bit = 1 << TCP_*; include/net/tcp_states.h).
pub const DIAG_STATES: u32 = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9) | (1 << 11);
pub const DIAG_MSG_LEN: usize = 72; // struct inet_diag_msg

/// One dump of this namespace's TCP sockets; returns (tcp_info, BBR info, CC name) of the
/// socket talking to `peer` with `port` at either end that has acknowledged the most bytes.
pub fn diag_dump(nl: i32, seq: u32, peer: u32, port: u16, rx: &mut [u8]) -> Option<(Vec<u8>, Option<Vec<u8>>, String)> {
    let mut req = [0u8; 16 + 56];
    req[0..4].copy_from_slice(&(16u32 + 56).to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req[8..12].copy_from_slice(&seq.to_ne_bytes());
    req[16] = libc::AF_INET as u8;
    req[17] = libc::IPPROTO_TCP as u8;
    req[18] = (1u8 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | (1 << (INET_DIAG_CONG - 1));
    req[20..24].copy_from_slice(&DIAG_STATES.to_ne_bytes());
    // SAFETY: sending our buffer on our netlink socket.
    if unsafe { libc::send(nl, req.as_ptr() as *const _, req.len(), 0) } < 0 {
        return None;
    }
    let mut best: Option<(u64, Vec<u8>, Option<Vec<u8>>, String)> = None;
    loop {
        // SAFETY: receiving into our buffer of its length.
        let n = unsafe { libc::recv(nl, rx.as_mut_ptr() as *mut _, rx.len(), 0) };
        if n <= 0 {
            break;
        }
        let buf = &rx[..n as usize];
        let mut off = 0;
        let mut finished = false;
        while off + 16 <= buf.len() {
            let len = u32::from_ne_bytes(buf[off..off + 4].try_into().unwrap()) as usize;
            let typ = u16::from_ne_bytes(buf[off + 4..off + 6].try_into().unwrap());
            if len < 16 || off + len > buf.len() {
                finished = true;
                break;
            }
            if typ == NLMSG_DONE || typ == NLMSG_ERROR {
                finished = true;
                break;
            }
            let m = &buf[off + 16..off + len];
            if typ == SOCK_DIAG_BY_FAMILY && m.len() >= DIAG_MSG_LEN {
                let sport = u16::from_be_bytes([m[4], m[5]]);
                let dport = u16::from_be_bytes([m[6], m[7]]);
                let dst = u32::from_be_bytes(m[24..28].try_into().unwrap());
                if dst == peer && (sport == port || dport == port) {
                    let (mut info, mut cc, mut name) = (None, None, String::new());
                    let mut a = DIAG_MSG_LEN;
                    while a + 4 <= m.len() {
                        let alen = u16::from_ne_bytes([m[a], m[a + 1]]) as usize;
                        let atyp = u16::from_ne_bytes([m[a + 2], m[a + 3]]);
                        if alen < 4 || a + alen > m.len() {
                            break;
                        }
                        let data = &m[a + 4..a + alen];
                        match atyp {
                            INET_DIAG_INFO => info = Some(data.to_vec()),
                            INET_DIAG_BBRINFO => cc = Some(data.to_vec()),
                            INET_DIAG_CONG => name = String::from_utf8_lossy(data).trim_end_matches('\0').to_string(),
                            _ => {}
                        }
                        a += (alen + 3) & !3;
                    }
                    if let Some(info) = info {
                        let acked = tcp_info::bytes_acked(&info).unwrap_or(0);
                        if best.as_ref().is_none_or(|b| acked >= b.0) {
                            best = Some((acked, info, cc, name));
                        }
                    }
                }
            }
            off += (len + 3) & !3;
        }
        if finished {
            break;
        }
    }
    best.map(|(_, i, c, n)| (i, c, n))
}

/// `monitor --peer ADDR --port P --t0 T0 [--start S] --end E [--interval I] [--flow F] [--out DIR]`:
/// samples, on the experiment's time grid, the TCP_INFO (and BBR's info) of the socket in
/// this namespace that talks to ADDR with port P at either end — the socket of a program we
/// did not write (command schemes). One netlink dump per sample (tens of µs for a few sockets).
pub fn monitor(a: &Args) {
    let peer: std::net::Ipv4Addr = a.str("peer").parse().unwrap_or_else(|_| die(2, "--peer: not an IPv4 address"));
    let peer = u32::from(peer);
    let port = a.u64("port", None) as u16;
    let t0 = a.u64("t0", None);
    let start = a.u64("start", Some(0));
    let end = t0 + a.u64("end", None);
    let interval = a.u64("interval", Some(10_000_000)).max(1);
    let out_path = a.0.get("out").cloned();
    let flow = a.u64("flow", Some(0)) as u32;
    clock::set_timer_slack(1);
    // SAFETY: a netlink socket we own.
    let nl = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, NETLINK_SOCK_DIAG) };
    if nl < 0 {
        die(1, &errno_msg("netlink socket"));
    }
    // SIGTERM (the driver at the end of the run) stops sampling; the samples are still written.
    // SAFETY: the handler only stores an atomic.
    unsafe { libc::signal(libc::SIGTERM, on_term as *const () as libc::sighandler_t) };
    println!("monitoring");
    std::io::stdout().flush().ok();
    let mut rx = vec![0u8; 1 << 16];
    let mut samples = FlowSamples::default();
    let mut cc_name = String::new();
    let mut k = start.div_ceil(interval);
    let mut seq = 1u32;
    loop {
        let t = k * interval;
        if t0 + t > end || MONITOR_STOP.load(Ordering::Relaxed) {
            break;
        }
        clock::sleep_until(t0 + t);
        if MONITOR_STOP.load(Ordering::Relaxed) {
            break;
        }
        if let Some((info, cc, name)) = diag_dump(nl, seq, peer, port, &mut rx) {
            if !name.is_empty() {
                cc_name = name;
            }
            tcp_info::push(&mut samples, t, flow, &info, cc.as_deref());
        }
        seq = seq.wrapping_add(1);
        k += 1;
    }
    let n = samples.len();
    if let Some(p) = out_path {
        write_out(&p, &samples.table());
    }
    println!("{}", serde_json::json!({"cc": cc_name, "connected": n > 0, "samples": n, "monitor": true}));
}

pub static MONITOR_STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: libc::c_int) {
    MONITOR_STOP.store(true, Ordering::Relaxed);
}
