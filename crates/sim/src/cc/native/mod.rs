//! BPF congestion control in the simulator: a struct_ops `tcp_congestion_ops` program compiled
//! natively against ccbench's simulator `vmlinux.h` and BPF header stand-ins
//! (python/ccbench/schemes/bpf/sim/, built by ccbench.backends.bpfsim), loaded with `dlopen`
//! ([`loader`]) and run as a [`CongestionControl`] ([`NativeCc`]): before each hook the
//! simulator's [`Sock`] is copied into the C `struct tcp_sock` ([`abi`]), the hook runs, and the
//! fields a struct_ops program may write are copied back (net/ipv4/bpf_tcp_ca.c's list:
//! `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`, `app_limited`, `sk_pacing_rate`,
//! `sk_pacing_status`; `snd_cwnd_stamp`, `ecn_flags`, `icsk_ack.pending` and the private area
//! `icsk_ca_priv` stay in the C socket, which lives as long as the flow).
//!
//! [`NativePrograms`] is the [`ExternalCc`] that gives such flows their congestion control; the
//! engine asks it before the registry (and before a Python scheme source).

mod abi;
mod loader;

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::external::{intern, ExternalCc};
use super::{AckSample, CaEvent, CaState, CongestionControl, PacingStatus, RateSample, Sock};
use crate::experiment::{Experiment, FlowConfig};
use abi::{CAckSample, CRateSample, CTcpSock, SockPtr, TCP_CONG_NEEDS_ECN, TCP_ECN_OK};
pub use loader::Program;

/// One flow's instance of a loaded program: its C socket (private area, storage, the fields
/// the simulator does not keep) and the program.
pub struct NativeCc {
    name: &'static str,
    prog: Arc<Program>,
    /// The recorded globals (dots as underscores; the recorder adds `cc_`), in `ccbench_record_value` order.
    record: Arc<[&'static str]>,
    /// Boxed so its address, which the program may keep (storage), never changes.
    sock: Box<UnsafeCell<CTcpSock>>,
    /// Values copied in before the hook, to write back only what the program changed.
    in_pacing_rate: u64,
    in_pacing_status: u32,
    in_app_limited: u32,
}

// SAFETY: the C socket is owned by this instance and only touched through it; the program's
// copy is private to one simulation (loader.rs).
unsafe impl Send for NativeCc {}

fn pacing_code(p: PacingStatus) -> u32 {
    match p {
        PacingStatus::None => 0,
        PacingStatus::Needed => 1,
        PacingStatus::Fq => 2,
    }
}

fn state_code(s: CaState) -> u8 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

fn event_code(e: CaEvent) -> i32 {
    match e {
        CaEvent::TxStart => 0,
        CaEvent::CwndRestart => 1,
        CaEvent::CompleteCwr => 2,
        CaEvent::Loss => 3,
        CaEvent::EcnNoCe => 4,
        CaEvent::EcnIsCe => 5,
    }
}

/// The start of connection `conn`'s `bpf_get_prandom_u32` stream in a run with `seed`.
fn prandom_seed(seed: u64, conn: u32) -> u64 {
    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ((conn as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03))
}

impl NativeCc {
    pub fn new(prog: Arc<Program>, name: &'static str, seed: u64, conn: u32, record: Arc<[&'static str]>) -> Self {
        let mut c = CTcpSock::zeroed();
        c.inet_conn.sk.ccbench_prandom = prandom_seed(seed, conn);
        c.inet_conn.sk.sk_max_pacing_rate = u64::MAX;
        NativeCc { name, prog, record, sock: Box::new(UnsafeCell::new(c)), in_pacing_rate: 0, in_pacing_status: 0,
                   in_app_limited: 0 }
    }

    fn ptr(&self) -> SockPtr {
        self.sock.get()
    }

    /// Copy the simulator's socket into the C one and make it the runtime's current socket.
    fn load(&mut self, sk: &Sock) -> SockPtr {
        let p = self.ptr();
        // SAFETY: the socket is ours and no hook is running.
        let c = unsafe { &mut *p };
        let b = &mut c.inet_conn.sk;
        b.sk_pacing_rate = (sk.pacing_rate_bps / 8.0) as u64;
        b.sk_pacing_status = pacing_code(sk.pacing_status);
        b.sk_pacing_shift = sk.pacing_shift.min(255) as u8;
        b.ccbench_now_ns = sk.now_ns;
        self.in_pacing_rate = b.sk_pacing_rate;
        self.in_pacing_status = b.sk_pacing_status;
        c.inet_conn.icsk_rto = (sk.rto_ns / 1000).min(u32::MAX as u64) as u32;
        c.inet_conn.icsk_ca_state = state_code(sk.ca_state);
        c.mss_cache = sk.mss;
        c.snd_una = sk.snd_una as u32;
        c.snd_nxt = sk.snd_nxt as u32;
        c.snd_wnd = sk.snd_wnd.min(u32::MAX as u64) as u32;
        c.snd_cwnd = sk.cwnd;
        c.snd_ssthresh = sk.ssthresh;
        c.snd_cwnd_cnt = sk.snd_cwnd_cnt;
        c.snd_cwnd_clamp = sk.cwnd_clamp;
        c.prior_cwnd = sk.prior_cwnd;
        c.srtt_us = sk.srtt_us.saturating_mul(8);
        c.packets_out = sk.packets_out;
        c.sacked_out = sk.sacked_out;
        c.lost_out = sk.lost_out;
        c.retrans_out = sk.retrans_out;
        c.max_packets_out = sk.max_packets_out;
        c.total_retrans = sk.total_retrans as u32;
        c.delivered = sk.delivered as u32;
        c.delivered_ce = sk.delivered_ce as u32;
        c.lost = sk.lost as u32;
        c.app_limited = sk.app_limited as u32;
        self.in_app_limited = c.app_limited;
        c.lsndtime = (sk.lsndtime_ns / 1_000_000) as u32;
        c.rtt_min_us = sk.min_rtt_us;
        c.tcp_mstamp = sk.now_us;
        c.tcp_clock_cache = sk.now_ns;
        c.tcp_wstamp_ns = sk.wstamp_ns;
        c.delivered_mstamp = sk.delivered_mstamp_us;
        c.ecn_flags = if sk.ecn_ok { c.ecn_flags | TCP_ECN_OK } else { c.ecn_flags & !TCP_ECN_OK };
        c.is_cwnd_limited = sk.is_cwnd_limited_flag as u8;
        self.prog.set_current(p);
        p
    }

    /// Copy back what a struct_ops program may write.
    fn store(&self, sk: &mut Sock) {
        // SAFETY: the hook has returned.
        let c = unsafe { &*self.ptr() };
        sk.cwnd = c.snd_cwnd;
        sk.ssthresh = c.snd_ssthresh;
        sk.snd_cwnd_cnt = c.snd_cwnd_cnt;
        let b = &c.inet_conn.sk;
        if b.sk_pacing_rate != self.in_pacing_rate {
            sk.pacing_rate_bps = b.sk_pacing_rate as f64 * 8.0;
        }
        if b.sk_pacing_status != self.in_pacing_status {
            sk.pacing_status = match b.sk_pacing_status {
                0 => PacingStatus::None,
                2 => PacingStatus::Fq,
                _ => PacingStatus::Needed,
            };
        }
        if c.app_limited != self.in_app_limited {
            // the program's u32 in the simulator's 64-bit count of delivered packets
            sk.app_limited = if c.app_limited == 0 { 0 } else { (sk.delivered & !0xffff_ffff) | c.app_limited as u64 };
        }
    }
}

impl Drop for NativeCc {
    fn drop(&mut self) {
        if let Some(release) = self.prog.ops().release {
            let p = self.ptr();
            self.prog.set_current(p);
            // SAFETY: p is this flow's socket; the hook is the program's.
            unsafe { release(p) };
        }
        self.prog.free_sock(self.ptr());
        self.prog.set_current(std::ptr::null_mut());
    }
}

impl CongestionControl for NativeCc {
    fn name(&self) -> &'static str {
        self.name
    }

    fn init(&mut self, sk: &mut Sock) {
        if let Some(f) = self.prog.ops().init {
            let p = self.load(sk);
            // SAFETY (all hooks): p is this flow's live socket, the function the program's hook.
            unsafe { f(p) };
            self.store(sk);
        }
    }

    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        let f = self.prog.ops().ssthresh.expect("checked at load");
        let p = self.load(sk);
        let v = unsafe { f(p) };
        self.store(sk);
        v
    }

    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if let Some(f) = self.prog.ops().cong_avoid {
            let p = self.load(sk);
            unsafe { f(p, sk.snd_una as u32, acked) };
            self.store(sk);
        }
    }

    fn has_cong_control(&self) -> bool {
        self.prog.ops().cong_control.is_some()
    }

    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) -> bool {
        let Some(f) = self.prog.ops().cong_control else { return false };
        let crs = rate_sample(rs);
        let p = self.load(sk);
        unsafe { f(p, sk.snd_una as u32, 0, &crs) };
        self.store(sk);
        true
    }

    fn sndbuf_expand(&self) -> u32 {
        match self.prog.ops().sndbuf_expand {
            // the socket as the last hook left it
            Some(f) => unsafe { f(self.ptr()) }.max(2),
            None => 2,
        }
    }

    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if let Some(f) = self.prog.ops().set_state {
            let p = self.load(sk);
            unsafe { f(p, state_code(new_state)) };
            self.store(sk);
        }
    }

    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if let Some(f) = self.prog.ops().cwnd_event {
            let p = self.load(sk);
            unsafe { f(p, event_code(ev)) };
            self.store(sk);
        }
    }

    fn pkts_acked(&mut self, sk: &mut Sock, sample: &AckSample) {
        if let Some(f) = self.prog.ops().pkts_acked {
            let s = CAckSample {
                pkts_acked: sample.pkts_acked,
                rtt_us: sample.rtt_us.clamp(-1, i32::MAX as i64) as i32,
                in_flight: sample.in_flight,
            };
            let p = self.load(sk);
            unsafe { f(p, &s) };
            self.store(sk);
        }
    }

    fn in_ack_event(&mut self, sk: &mut Sock, flags: u32) {
        if let Some(f) = self.prog.ops().in_ack_event {
            let p = self.load(sk);
            unsafe { f(p, flags) };
            self.store(sk);
        }
    }

    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        let f = self.prog.ops().undo_cwnd.expect("checked at load");
        let p = self.load(sk);
        let v = unsafe { f(p) };
        self.store(sk);
        v
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        for (i, col) in self.record.iter().enumerate() {
            out.push((col, self.prog.record_value(i as u32)));
        }
    }

    fn needs_ecn(&self) -> bool {
        self.prog.ops().flags & TCP_CONG_NEEDS_ECN != 0
    }
}

/// `struct rate_sample` from the simulator's.
fn rate_sample(rs: &RateSample) -> CRateSample {
    CRateSample {
        prior_mstamp: if rs.prior_valid { rs.prior_mstamp_us } else { 0 },
        prior_delivered: rs.prior_delivered as u32,
        prior_delivered_ce: 0,
        delivered: rs.delivered.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        delivered_ce: rs.delivered_ce.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        interval_us: rs.interval_us as _,
        snd_interval_us: rs.snd_interval_us.max(0) as u32,
        rcv_interval_us: rs.rcv_interval_us.max(0) as u32,
        rtt_us: rs.rtt_us as _,
        losses: rs.losses as i32,
        acked_sacked: rs.acked_sacked,
        prior_in_flight: rs.prior_in_flight,
        last_end_seq: 0,
        is_app_limited: rs.is_app_limited,
        is_retrans: rs.is_retrans,
        is_ack_delayed: rs.is_ack_delayed,
    }
}

/// The programs of a run's BPF flows, loaded once per run (one copy per distinct object): the
/// [`ExternalCc`] that gives those flows their congestion control.
pub struct NativePrograms {
    by_flow: HashMap<u32, (Arc<Program>, Arc<[&'static str]>)>,
    seed: u64,
}

impl NativePrograms {
    /// Load the simulator builds of `exp`'s BPF flows; `None` when it has none.
    pub fn load(exp: &Experiment) -> Result<Option<Self>, String> {
        let mut by_path: HashMap<&str, Arc<Program>> = HashMap::new();
        let mut by_flow = HashMap::new();
        for f in exp.flows.iter() {
            let Some(b) = &f.bpf else { continue };
            let Some(obj) = b.sim_object.as_deref() else {
                return Err(format!(
                    "flow {} ({}): the BPF scheme {} has no simulator build (bpf.sim_object); run the \
                     experiment through ccbench, which compiles it for --backend sim",
                    f.id + 1, f.label, b.path));
            };
            let prog = match by_path.get(obj) {
                Some(p) => p.clone(),
                None => {
                    let err = |e: String| format!("flow {} ({}), scheme: {{bpf: {}}}: {e}", f.id + 1, f.label, b.path);
                    let mut p = Program::load(obj).map_err(err)?;
                    if !b.record.is_empty() {
                        p.enable_record().map_err(err)?;
                    }
                    let p = Arc::new(p);
                    by_path.insert(obj, p.clone());
                    p
                }
            };
            let cols: Arc<[&'static str]> =
                b.record.iter().map(|v| intern(&v.replace('.', "_"))).collect();
            by_flow.insert(f.id, (prog, cols));
        }
        Ok((!by_flow.is_empty()).then_some(NativePrograms { by_flow, seed: exp.seed }))
    }
}

impl ExternalCc for NativePrograms {
    fn make(&self, flow: &FlowConfig, conn: u32) -> Option<Result<Box<dyn CongestionControl>, String>> {
        let (prog, record) = self.by_flow.get(&flow.id)?;
        Some(Ok(Box::new(NativeCc::new(prog.clone(), intern(&flow.scheme), self.seed, conn, record.clone()))))
    }
}

/// Native programs first, then `rest` (the Python schemes).
struct Chain(Arc<NativePrograms>, Option<Arc<dyn ExternalCc>>);

impl ExternalCc for Chain {
    fn make(&self, flow: &FlowConfig, conn: u32) -> Option<Result<Box<dyn CongestionControl>, String>> {
        self.0.make(flow, conn).or_else(|| self.1.as_ref().and_then(|r| r.make(flow, conn)))
    }
}

/// The external source of `exp`'s congestion controls: its BPF flows' programs ahead of `ext`.
pub fn with_programs(exp: &Experiment, ext: Option<Arc<dyn ExternalCc>>)
                     -> Result<Option<Arc<dyn ExternalCc>>, String> {
    Ok(match NativePrograms::load(exp)? {
        Some(n) => Some(Arc::new(Chain(Arc::new(n), ext))),
        None => ext,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BPF flow that reaches the core without a simulator build is an error naming the
    /// field and the fix; a missing object names the file.
    #[test]
    fn a_bpf_flow_needs_its_simulator_build() {
        let mut exp: Experiment = crate::experiment::from_json(
            r#"{"duration_ns": 1000000, "seed": 1,
                "links": [{"id": 0, "name": "a->b", "src": "a", "dst": "b", "rate_bps": 1000000, "delay_ns": 1000,
                           "queue": {"kind": "droptail", "packets": 10, "bytes": null}}],
                "flows": [{"id": 0, "label": "f", "scheme": "bpf_x", "params": {}, "start_ns": 0,
                           "path": [0], "rev_path": [0], "bpf": {"path": "x.c", "cc": "bpf_x"}}]}"#).unwrap();
        let e = NativePrograms::load(&exp).err().unwrap();
        assert!(e.contains("bpf.sim_object") && e.contains("x.c"), "{e}");
        exp.flows[0].bpf.as_mut().unwrap().sim_object = Some("/nonexistent/x.so".into());
        let e = NativePrograms::load(&exp).err().unwrap();
        assert!(e.contains("scheme: {bpf: x.c}") && e.contains("/nonexistent/x.so"), "{e}");
        exp.flows[0].bpf = None;
        assert!(NativePrograms::load(&exp).unwrap().is_none());
    }
}
