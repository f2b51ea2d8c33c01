//! The C types a natively compiled BPF congestion control sees, mirrored field for field from
//! ccbench's simulator `vmlinux.h` (python/ccbench/schemes/bpf/sim/vmlinux.h), and the layout
//! record the object's runtime reports (`ccbench_sim_abi()`), checked before a program is used.
//! Change both sides together and bump [`ABI_VERSION`] with `CCBENCH_SIM_ABI`.

use std::mem::{offset_of, size_of};
use std::os::raw::{c_char, c_int, c_long, c_void};

/// `CCBENCH_SIM_ABI` of bpf/bpf_helpers.h that this simulator speaks.
pub const ABI_VERSION: u32 = 1;

/// Linux `ICSK_CA_PRIV_SIZE`: the congestion control's private area in the socket.
pub const ICSK_CA_PRIV_SIZE: usize = 104;

/// `TCP_CONG_NEEDS_ECN` (include/net/tcp.h).
pub const TCP_CONG_NEEDS_ECN: u32 = 0x2;
/// `TCP_ECN_OK` (include/net/tcp_ecn.h).
pub const TCP_ECN_OK: u8 = 0x1;

/// `struct sock`: the pacing fields and the simulator's own (storage list, clock, random state).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CSockBase {
    pub sk_pacing_rate: u64,
    pub sk_max_pacing_rate: u64,
    pub sk_pacing_status: u32,
    pub sk_pacing_shift: u8,
    pub pad0: [u8; 3],
    pub ccbench_storage: usize,
    pub ccbench_now_ns: u64,
    pub ccbench_prandom: u64,
}

/// The anonymous `icsk_ack` struct of `inet_connection_sock`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CIcskAck {
    pub pending: u8,
    pub quick: u8,
    pub pingpong: u8,
    pub retry: u8,
    pub ato: u32,
}

/// `struct inet_connection_sock` (with `inet_sock` = `sock` folded in).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CIcsk {
    pub sk: CSockBase,
    pub icsk_rto: u32,
    pub icsk_ca_state: u8,
    pub icsk_retransmits: u8,
    pub pad1: [u8; 2],
    pub icsk_ack: CIcskAck,
    pub icsk_ca_priv: [u64; ICSK_CA_PRIV_SIZE / 8],
}

/// `struct tcp_sock`: what a hook's `struct sock *sk` points to.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CTcpSock {
    pub inet_conn: CIcsk,
    pub mss_cache: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub rcv_nxt: u32,
    pub snd_wnd: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd_cnt: u32,
    pub snd_cwnd_clamp: u32,
    pub snd_cwnd_stamp: u32,
    pub prior_cwnd: u32,
    pub srtt_us: u32,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub max_packets_out: u32,
    pub total_retrans: u32,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub lost: u32,
    pub app_limited: u32,
    pub lsndtime: u32,
    pub rtt_min_us: u32,
    pub tcp_mstamp: u64,
    pub tcp_clock_cache: u64,
    pub tcp_wstamp_ns: u64,
    pub delivered_mstamp: u64,
    pub ecn_flags: u8,
    pub is_cwnd_limited: u8,
    pub pad2: [u8; 6],
}

impl CTcpSock {
    /// A socket as `calloc` leaves it: all zero.
    pub fn zeroed() -> Self {
        // SAFETY: every field is an integer or an array of integers, for which 0 is valid.
        unsafe { std::mem::zeroed() }
    }
}

/// `struct ack_sample`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CAckSample {
    pub pkts_acked: u32,
    pub rtt_us: i32,
    pub in_flight: u32,
}

/// `struct rate_sample`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CRateSample {
    pub prior_mstamp: u64,
    pub prior_delivered: u32,
    pub prior_delivered_ce: u32,
    pub delivered: i32,
    pub delivered_ce: i32,
    pub interval_us: c_long,
    pub snd_interval_us: u32,
    pub rcv_interval_us: u32,
    pub rtt_us: c_long,
    pub losses: c_int,
    pub acked_sacked: u32,
    pub prior_in_flight: u32,
    pub last_end_seq: u32,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    pub is_ack_delayed: bool,
}

/// A hook's socket argument.
pub type SockPtr = *mut CTcpSock;

/// `struct tcp_congestion_ops` (6.10+ `cong_control` signature).
#[repr(C)]
pub struct COps {
    pub ssthresh: Option<unsafe extern "C" fn(SockPtr) -> u32>,
    pub cong_avoid: Option<unsafe extern "C" fn(SockPtr, u32, u32)>,
    pub set_state: Option<unsafe extern "C" fn(SockPtr, u8)>,
    pub cwnd_event: Option<unsafe extern "C" fn(SockPtr, c_int)>,
    pub in_ack_event: Option<unsafe extern "C" fn(SockPtr, u32)>,
    pub pkts_acked: Option<unsafe extern "C" fn(SockPtr, *const CAckSample)>,
    pub min_tso_segs: Option<unsafe extern "C" fn(SockPtr) -> u32>,
    pub cong_control: Option<unsafe extern "C" fn(SockPtr, u32, c_int, *const CRateSample)>,
    pub undo_cwnd: Option<unsafe extern "C" fn(SockPtr) -> u32>,
    pub sndbuf_expand: Option<unsafe extern "C" fn(SockPtr) -> u32>,
    pub get_info: Option<unsafe extern "C" fn(SockPtr, u32, *mut c_int, *mut c_void) -> usize>,
    pub name: [c_char; 16],
    pub owner: *mut c_void,
    pub key: u32,
    pub flags: u32,
    pub init: Option<unsafe extern "C" fn(SockPtr)>,
    pub release: Option<unsafe extern "C" fn(SockPtr)>,
}

/// `struct ccbench_sim_abi` (ccbench_sim_runtime.c): the object's view of the types.
#[repr(C)]
pub struct Abi {
    pub version: u32,
    pub sizeof_tcp_sock: u32,
    pub sizeof_ack_sample: u32,
    pub sizeof_rate_sample: u32,
    pub sizeof_ops: u32,
    pub off_icsk_ca_priv: u32,
    pub off_snd_cwnd: u32,
    pub off_tcp_mstamp: u32,
    pub off_ecn_flags: u32,
    pub off_ops_name: u32,
    pub off_ops_init: u32,
    pub ops: *mut COps,
    pub current: *mut SockPtr,
}

impl Abi {
    /// Whether the object was built against the same types as this simulator; `Err` names the
    /// first difference.
    pub fn check(&self) -> Result<(), String> {
        if self.version != ABI_VERSION {
            return Err(format!("it was built for interface version {} and this simulator speaks {}",
                               self.version, ABI_VERSION));
        }
        let ours = [
            ("sizeof(struct tcp_sock)", size_of::<CTcpSock>()),
            ("sizeof(struct ack_sample)", size_of::<CAckSample>()),
            ("sizeof(struct rate_sample)", size_of::<CRateSample>()),
            ("sizeof(struct tcp_congestion_ops)", size_of::<COps>()),
            ("offsetof(icsk_ca_priv)", offset_of!(CIcsk, icsk_ca_priv)),
            ("offsetof(snd_cwnd)", offset_of!(CTcpSock, snd_cwnd)),
            ("offsetof(tcp_mstamp)", offset_of!(CTcpSock, tcp_mstamp)),
            ("offsetof(ecn_flags)", offset_of!(CTcpSock, ecn_flags)),
            ("offsetof(ops.name)", offset_of!(COps, name)),
            ("offsetof(ops.init)", offset_of!(COps, init)),
        ];
        let theirs = [
            self.sizeof_tcp_sock, self.sizeof_ack_sample, self.sizeof_rate_sample, self.sizeof_ops,
            self.off_icsk_ca_priv, self.off_snd_cwnd, self.off_tcp_mstamp, self.off_ecn_flags,
            self.off_ops_name, self.off_ops_init,
        ];
        for ((what, o), t) in ours.iter().zip(theirs) {
            if *o as u32 != t {
                return Err(format!("its {what} is {t} where the simulator's is {o}"));
            }
        }
        if self.ops.is_null() || self.current.is_null() {
            return Err("its runtime reports no tcp_congestion_ops".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours() -> Abi {
        Abi {
            version: ABI_VERSION,
            sizeof_tcp_sock: size_of::<CTcpSock>() as u32,
            sizeof_ack_sample: size_of::<CAckSample>() as u32,
            sizeof_rate_sample: size_of::<CRateSample>() as u32,
            sizeof_ops: size_of::<COps>() as u32,
            off_icsk_ca_priv: offset_of!(CIcsk, icsk_ca_priv) as u32,
            off_snd_cwnd: offset_of!(CTcpSock, snd_cwnd) as u32,
            off_tcp_mstamp: offset_of!(CTcpSock, tcp_mstamp) as u32,
            off_ecn_flags: offset_of!(CTcpSock, ecn_flags) as u32,
            off_ops_name: offset_of!(COps, name) as u32,
            off_ops_init: offset_of!(COps, init) as u32,
            ops: std::ptr::NonNull::dangling().as_ptr(),
            current: std::ptr::NonNull::dangling().as_ptr(),
        }
    }

    /// The private area is Linux's 104 bytes, 8-byte aligned; an object built against other
    /// types is refused with the first difference named.
    #[test]
    fn layout_is_checked() {
        assert_eq!(std::mem::size_of_val(&CTcpSock::zeroed().inet_conn.icsk_ca_priv), ICSK_CA_PRIV_SIZE);
        assert_eq!(offset_of!(CIcsk, icsk_ca_priv) % 8, 0);
        assert!(ours().check().is_ok());
        let e = Abi { sizeof_tcp_sock: 8, ..ours() }.check().unwrap_err();
        assert!(e.contains("sizeof(struct tcp_sock) is 8"), "{e}");
        let e = Abi { version: 99, ..ours() }.check().unwrap_err();
        assert!(e.contains("version 99"), "{e}");
        let e = Abi { ops: std::ptr::null_mut(), ..ours() }.check().unwrap_err();
        assert!(e.contains("no tcp_congestion_ops"), "{e}");
    }
}
