//! Congestion control written in Python (docs/python-schemes.md).
//!
//! A user object is wrapped as a [`sim::cc::CongestionControl`] ([`PyCc`], per-ACK hooks as in
//! Linux `tcp_congestion_ops`) or as the driver of a [`Periodic`] controller ([`PyDriver`]).
//! Cost per hook: one call of a bound method looked up once at construction, with the socket
//! as one preallocated object ([`PySock`]) whose attributes read and write the sender's live
//! `Sock` through a pointer that is valid only during the call, and plain ints for the rest.
//! Hooks the class does not define are never called.
//!
//! An exception in user code is recorded once (flow, simulated time, hook, traceback) in the
//! run's [`ErrorSlot`]; the flow's CC then stops calling Python and the runner raises
//! `SchemeError` at its next check.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyAttributeError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use sim::cc::external::{intern, Command, Driver, ExternalCc, Interval, IntervalStats, Periodic, PeriodicHandle};
use sim::cc::{
    tcp_reno_ssthresh, AckSample, CaEvent, CaState, CongestionControl, LostSkb, PacingStatus, RateSample, Sock,
};
use sim::experiment::FlowConfig;

pyo3::create_exception!(_core, SchemeError, PyRuntimeError, "An exception raised by a Python congestion-control scheme.");

/// The first error of a run: "flow N (label) at t=... s, in Class.hook:\n<traceback>".
pub type ErrorSlot = Arc<Mutex<Option<String>>>;

/// What the error slot holds when the user pressed Ctrl-C inside a Python hook: the run stops
/// as an interrupted run (KeyboardInterrupt), not as the scheme's failure.
pub const INTERRUPTED: &str = "\u{0}interrupted";

fn record_error(slot: &ErrorSlot, py: Python<'_>, err: PyErr, who: &Who, now_ns: u64, hook: &str) -> String {
    if err.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        let mut g = slot.lock().unwrap();
        if g.is_none() {
            *g = Some(INTERRUPTED.to_string());
        }
        return INTERRUPTED.to_string();
    }
    let tb = py
        .import("traceback")
        .and_then(|m| m.call_method1("format_exception", (err.get_type(py), err.value(py), err.traceback(py))))
        .and_then(|l| PyString::new(py, "").call_method1("join", (l,)))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| err.to_string());
    let msg = format!(
        "flow {} ({}) at t={:.9} s, in {}.{}:\n{}",
        who.flow + 1,
        who.label,
        now_ns as f64 * 1e-9,
        who.class,
        hook,
        tb.trim_end()
    );
    let mut g = slot.lock().unwrap();
    if g.is_none() {
        *g = Some(msg.clone());
    }
    msg
}

/// Whose hook failed.
#[derive(Clone)]
struct Who {
    flow: u32,
    label: String,
    class: String,
}

// ---------------------------------------------------------------------------------------------
// The socket as seen from Python
// ---------------------------------------------------------------------------------------------

/// `sk` in every hook: the congestion-control slice of the TCP socket (Linux `struct tcp_sock`).
/// Valid only during the call it is passed to.
#[pyclass(frozen, name = "Sock", module = "ccbench._core")]
pub struct PySock {
    ptr: Cell<*mut Sock>,
    writable: Cell<bool>,
}

// SAFETY: only touched with the GIL held, from the thread running the simulation.
unsafe impl Send for PySock {}
unsafe impl Sync for PySock {}

impl PySock {
    fn new() -> Self {
        PySock { ptr: Cell::new(std::ptr::null_mut()), writable: Cell::new(false) }
    }
    #[inline]
    fn get(&self) -> PyResult<&Sock> {
        let p = self.ptr.get();
        if p.is_null() {
            return Err(PyRuntimeError::new_err("sk is only valid during the hook it was passed to"));
        }
        // SAFETY: set from a live `&mut Sock` for the duration of one hook call.
        Ok(unsafe { &*p })
    }
    #[inline]
    fn get_mut(&self) -> PyResult<&mut Sock> {
        if !self.writable.get() {
            return Err(PyAttributeError::new_err(
                "sk is read-only here: a periodic controller commands through its return value",
            ));
        }
        let p = self.ptr.get();
        if p.is_null() {
            return Err(PyRuntimeError::new_err("sk is only valid during the hook it was passed to"));
        }
        // SAFETY: as in `get`; the sender is not otherwise borrowed while the hook runs.
        Ok(unsafe { &mut *p })
    }
}

/// Sets the pointer for one call and clears it afterwards (also on unwinding).
struct Bind<'a>(&'a PySock);
impl<'a> Bind<'a> {
    fn new(s: &'a PySock, sk: *mut Sock, writable: bool) -> Self {
        s.ptr.set(sk);
        s.writable.set(writable);
        Bind(s)
    }
}
impl Drop for Bind<'_> {
    fn drop(&mut self) {
        self.0.ptr.set(std::ptr::null_mut());
    }
}

macro_rules! ro {
    ($($name:ident : $t:ty = |$s:ident| $e:expr;)* { $($rest:tt)* }) => {
        #[pymethods]
        impl PySock {
            $(#[getter] fn $name(&self) -> PyResult<$t> { let $s = self.get()?; Ok($e) })*
            $($rest)*
        }
    };
}

ro! {
    now_ns: u64 = |s| s.now_ns;
    now_us: u64 = |s| s.now_us;
    mss: u32 = |s| s.mss;
    init_cwnd: u32 = |s| s.init_cwnd;
    srtt_us: u32 = |s| s.srtt_us;
    min_rtt_us: u32 = |s| s.min_rtt_us;
    delivered: u64 = |s| s.delivered;
    delivered_mstamp_us: u64 = |s| s.delivered_mstamp_us;
    delivered_ce: u64 = |s| s.delivered_ce;
    ecn_ok: bool = |s| s.ecn_ok;
    lost: u64 = |s| s.lost;
    app_limited: u64 = |s| s.app_limited;
    snd_una: u64 = |s| s.snd_una;
    snd_nxt: u64 = |s| s.snd_nxt;
    packets_out: u32 = |s| s.packets_out;
    sacked_out: u32 = |s| s.sacked_out;
    lost_out: u32 = |s| s.lost_out;
    retrans_out: u32 = |s| s.retrans_out;
    total_retrans: u64 = |s| s.total_retrans;
    is_cwnd_limited_flag: bool = |s| s.is_cwnd_limited_flag;
    max_packets_out: u32 = |s| s.max_packets_out;
    ca_state: &'static str = |s| s.ca_state.as_str();
    rto_ns: u64 = |s| s.rto_ns;
    lsndtime_ns: u64 = |s| s.lsndtime_ns;
    snd_wnd: u64 = |s| s.snd_wnd;
    wstamp_ns: u64 = |s| s.wstamp_ns;
    in_slow_start: bool = |s| s.in_slow_start();
    packets_in_flight: u32 = |s| s.packets_in_flight();
    is_cwnd_limited: bool = |s| s.is_cwnd_limited();
    current_ssthresh: u32 = |s| s.current_ssthresh();
{
    #[getter]
    fn cwnd(&self) -> PyResult<u32> {
        Ok(self.get()?.cwnd)
    }
    #[setter]
    fn set_cwnd(&self, v: u32) -> PyResult<()> {
        self.get_mut()?.cwnd = v;
        Ok(())
    }
    #[getter]
    fn ssthresh(&self) -> PyResult<u32> {
        Ok(self.get()?.ssthresh)
    }
    #[setter]
    fn set_ssthresh(&self, v: u32) -> PyResult<()> {
        self.get_mut()?.ssthresh = v;
        Ok(())
    }
    #[getter]
    fn snd_cwnd_cnt(&self) -> PyResult<u32> {
        Ok(self.get()?.snd_cwnd_cnt)
    }
    #[setter]
    fn set_snd_cwnd_cnt(&self, v: u32) -> PyResult<()> {
        self.get_mut()?.snd_cwnd_cnt = v;
        Ok(())
    }
    #[getter]
    fn cwnd_clamp(&self) -> PyResult<u32> {
        Ok(self.get()?.cwnd_clamp)
    }
    #[setter]
    fn set_cwnd_clamp(&self, v: u32) -> PyResult<()> {
        self.get_mut()?.cwnd_clamp = v;
        Ok(())
    }
    #[getter]
    fn prior_cwnd(&self) -> PyResult<u32> {
        Ok(self.get()?.prior_cwnd)
    }
    /// `sk_pacing_rate` in bit/s (enforced when `pacing_status` is not "none" and > 0).
    #[getter]
    fn pacing_rate(&self) -> PyResult<f64> {
        Ok(self.get()?.pacing_rate_bps)
    }
    #[setter]
    fn set_pacing_rate(&self, v: f64) -> PyResult<()> {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(PyValueError::new_err(format!("pacing_rate must be a finite rate >= 0 bit/s, got {v}")));
        }
        self.get_mut()?.pacing_rate_bps = v;
        Ok(())
    }
    /// "none", "needed" (the scheme asked for TCP-internal pacing, as BBR does in init) or "fq".
    #[getter]
    fn pacing_status(&self) -> PyResult<&'static str> {
        Ok(match self.get()?.pacing_status {
            PacingStatus::None => "none",
            PacingStatus::Needed => "needed",
            PacingStatus::Fq => "fq",
        })
    }
    #[setter]
    fn set_pacing_status(&self, v: &str) -> PyResult<()> {
        let st = match v {
            "none" => PacingStatus::None,
            "needed" => PacingStatus::Needed,
            "fq" => PacingStatus::Fq,
            _ => return Err(PyValueError::new_err(format!("pacing_status {v:?}: use \"none\", \"needed\" or \"fq\""))),
        };
        self.get_mut()?.pacing_status = st;
        Ok(())
    }
    #[getter]
    fn pacing_shift(&self) -> PyResult<u32> {
        Ok(self.get()?.pacing_shift)
    }
    #[setter]
    fn set_pacing_shift(&self, v: u32) -> PyResult<()> {
        self.get_mut()?.pacing_shift = v;
        Ok(())
    }
}
}

/// `rs` in `cong_control`: Linux `struct rate_sample` (net/ipv4/tcp_rate.c), a copy.
#[pyclass(get_all, name = "RateSample", module = "ccbench._core")]
#[derive(Default)]
pub struct PyRateSample {
    prior_mstamp_us: u64,
    prior_valid: bool,
    prior_delivered: u64,
    delivered: i64,
    delivered_ce: i64,
    interval_us: i64,
    snd_interval_us: i64,
    rcv_interval_us: i64,
    rtt_us: i64,
    losses: u32,
    acked_sacked: u32,
    prior_in_flight: u32,
    is_app_limited: bool,
    is_retrans: bool,
    is_ack_delayed: bool,
    tx_in_flight: u32,
    prior_lost: u64,
    lost: u64,
}

impl PyRateSample {
    fn fill(&mut self, r: &RateSample) {
        *self = PyRateSample {
            prior_mstamp_us: r.prior_mstamp_us,
            prior_valid: r.prior_valid,
            prior_delivered: r.prior_delivered,
            delivered: r.delivered,
            delivered_ce: r.delivered_ce,
            interval_us: r.interval_us,
            snd_interval_us: r.snd_interval_us,
            rcv_interval_us: r.rcv_interval_us,
            rtt_us: r.rtt_us,
            losses: r.losses,
            acked_sacked: r.acked_sacked,
            prior_in_flight: r.prior_in_flight,
            is_app_limited: r.is_app_limited,
            is_retrans: r.is_retrans,
            is_ack_delayed: r.is_ack_delayed,
            tx_in_flight: r.tx_in_flight,
            prior_lost: r.prior_lost,
            lost: r.lost,
        };
    }
}

/// `st` in a periodic controller's `on_interval`: one monitor interval's statistics.
#[pyclass(get_all, name = "IntervalStats", module = "ccbench._core")]
#[derive(Default, Clone)]
pub struct PyStats {
    start_ns: u64,
    end_ns: u64,
    duration_s: f64,
    acks: u64,
    delivered: u64,
    delivered_bytes: u64,
    lost: u64,
    sent_bytes: u64,
    retrans: u64,
    delivered_ce: u64,
    rtt_samples: u64,
    rtt_min_us: f64,
    rtt_max_us: f64,
    rtt_mean_us: f64,
    rtt_first_us: f64,
    rtt_last_us: f64,
    rtt_gradient: f64,
    throughput_bps: f64,
    send_rate_bps: f64,
    delivery_rate_bps: f64,
    app_limited: bool,
    cwnd: u32,
    inflight: u32,
    srtt_us: u32,
    min_rtt_us: u32,
    pacing_rate_bps: f64,
}

macro_rules! stats_dict {
    ($($f:ident),* $(,)?) => {
        #[pymethods]
        impl PyStats {
            /// The fields as a dict.
            fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                let d = PyDict::new(py);
                $(d.set_item(stringify!($f), self.$f)?;)*
                Ok(d)
            }
            /// Pickles as a `types.SimpleNamespace` with the same attributes (vector envs).
            fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (), Bound<'py, PyDict>)> {
                Ok((py.import("types")?.getattr("SimpleNamespace")?, (), self.as_dict(py)?))
            }
            fn __repr__(&self) -> String {
                let mut s = String::from("IntervalStats(");
                $(s.push_str(&format!("{}={:?}, ", stringify!($f), self.$f));)*
                s.truncate(s.len() - 2);
                s.push(')');
                s
            }
        }
    };
}

stats_dict!(start_ns, end_ns, duration_s, acks, delivered, delivered_bytes, lost, sent_bytes, retrans,
    delivered_ce, rtt_samples, rtt_min_us, rtt_max_us, rtt_mean_us, rtt_first_us, rtt_last_us,
    rtt_gradient, throughput_bps, send_rate_bps, delivery_rate_bps, app_limited, cwnd, inflight,
    srtt_us, min_rtt_us, pacing_rate_bps);

impl PyStats {
    pub fn from_stats(st: &IntervalStats) -> Self {
        let dur = st.end_ns.saturating_sub(st.start_ns) as f64 * 1e-9;
        let per_s = |b: f64| if dur > 0.0 { b * 8.0 / dur } else { 0.0 };
        PyStats {
            start_ns: st.start_ns,
            end_ns: st.end_ns,
            duration_s: dur,
            acks: st.acks,
            delivered: st.delivered,
            delivered_bytes: st.delivered * st.mss as u64,
            lost: st.lost,
            sent_bytes: st.sent_bytes,
            retrans: st.retrans,
            delivered_ce: st.delivered_ce,
            rtt_samples: st.rtt_samples,
            rtt_min_us: st.rtt_min_us,
            rtt_max_us: st.rtt_max_us,
            rtt_mean_us: st.rtt_mean_us,
            rtt_first_us: st.rtt_first_us,
            rtt_last_us: st.rtt_last_us,
            // µs per s = s per s × 1e6.
            rtt_gradient: st.rtt_slope * 1e-6,
            throughput_bps: per_s((st.delivered * st.mss as u64) as f64),
            send_rate_bps: per_s((st.sent_bytes + st.retrans * st.mss as u64) as f64),
            delivery_rate_bps: st.delivery_rate_bps,
            app_limited: st.app_limited,
            cwnd: st.cwnd,
            inflight: st.inflight,
            srtt_us: st.srtt_us,
            min_rtt_us: st.min_rtt_us,
            pacing_rate_bps: st.pacing_rate_bps,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Per-ACK schemes
// ---------------------------------------------------------------------------------------------

struct Hooks {
    init: Option<PyObject>,
    ssthresh: Option<PyObject>,
    cong_avoid: Option<PyObject>,
    cong_control: Option<PyObject>,
    set_state: Option<PyObject>,
    cwnd_event: Option<PyObject>,
    pkts_acked: Option<PyObject>,
    in_ack_event: Option<PyObject>,
    skb_marked_lost: Option<PyObject>,
    undo_cwnd: Option<PyObject>,
}

fn method(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<PyObject>> {
    match obj.getattr(name) {
        Ok(m) if m.is_none() => Ok(None),
        Ok(m) if m.is_callable() => Ok(Some(m.unbind())),
        Ok(_) => Err(PyTypeError::new_err(format!("{name} of a Python scheme must be a method"))),
        Err(e) if e.is_instance_of::<PyAttributeError>(obj.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Names of the instance attributes recorded as `cc_<name>` columns (`record = (...)`).
fn record_names(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(&'static str, Py<PyString>)>> {
    let Ok(rec) = obj.getattr("record") else { return Ok(Vec::new()) };
    if rec.is_none() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = rec
        .extract()
        .map_err(|_| PyTypeError::new_err("record must be a list of attribute names, e.g. record = (\"alpha\",)"))?;
    Ok(names.iter().map(|n| (intern(n), PyString::new(obj.py(), n).unbind())).collect())
}

fn sample_attrs(obj: &PyObject, names: &[(&'static str, Py<PyString>)], out: &mut Vec<(&'static str, f64)>) {
    if names.is_empty() {
        return;
    }
    Python::with_gil(|py| {
        let o = obj.bind(py);
        for (n, key) in names {
            let v = o
                .getattr(key.bind(py))
                .ok()
                .and_then(|v| if v.is_none() { None } else { v.extract::<f64>().ok() })
                .unwrap_or(f64::NAN);
            out.push((n, v));
        }
    });
}

fn state_name(s: CaState) -> &'static str {
    s.as_str()
}

fn event_name(e: CaEvent) -> &'static str {
    match e {
        CaEvent::TxStart => "tx_start",
        CaEvent::CwndRestart => "cwnd_restart",
        CaEvent::CompleteCwr => "complete_cwr",
        CaEvent::Loss => "loss",
        CaEvent::EcnNoCe => "ecn_no_ce",
        CaEvent::EcnIsCe => "ecn_is_ce",
    }
}

/// A Python object with `tcp_congestion_ops`-like methods, as a simulator CC.
pub struct PyCc {
    name: &'static str,
    obj: PyObject,
    h: Hooks,
    sock: Py<PySock>,
    rs: Py<PyRateSample>,
    record: Vec<(&'static str, Py<PyString>)>,
    needs_ecn: bool,
    non_sack: bool,
    who: Who,
    errors: ErrorSlot,
    failed: bool,
}

impl PyCc {
    fn new(py: Python<'_>, name: &str, obj: Bound<'_, PyAny>, who: Who, errors: ErrorSlot) -> PyResult<Self> {
        let h = Hooks {
            init: method(&obj, "init")?,
            ssthresh: method(&obj, "ssthresh")?,
            cong_avoid: method(&obj, "cong_avoid")?,
            cong_control: method(&obj, "cong_control")?,
            set_state: method(&obj, "set_state")?,
            cwnd_event: method(&obj, "cwnd_event")?,
            pkts_acked: method(&obj, "pkts_acked")?,
            in_ack_event: method(&obj, "in_ack_event")?,
            skb_marked_lost: method(&obj, "skb_marked_lost")?,
            undo_cwnd: method(&obj, "undo_cwnd")?,
        };
        if h.ssthresh.is_none() && h.cong_control.is_none() {
            return Err(PyTypeError::new_err(format!(
                "Python scheme {} defines neither ssthresh() nor cong_control(): a per-ACK scheme needs ssthresh \
                 (subclass ccbench.cc.Scheme for Reno's), a periodic controller needs on_interval()",
                who.class
            )));
        }
        let flag = |n: &str| -> PyResult<bool> {
            match obj.getattr(n) {
                Ok(v) => v.is_truthy(),
                Err(_) => Ok(false),
            }
        };
        Ok(PyCc {
            name: intern(name),
            record: record_names(&obj)?,
            needs_ecn: flag("needs_ecn")?,
            non_sack: flag("non_sack_recovery")?,
            obj: obj.unbind(),
            h,
            sock: Py::new(py, PySock::new())?,
            rs: Py::new(py, PyRateSample::default())?,
            who,
            errors,
            failed: false,
        })
    }

    /// Call `m(sk, *args)` with `sk` bound to the live socket; `None` after a failure.
    #[inline]
    fn call<'py, A>(&mut self, py: Python<'py>, sk: &mut Sock, hook: &str, m: &PyObject, args: A) -> Option<Bound<'py, PyAny>>
    where
        A: IntoPyObject<'py, Target = PyTuple>,
    {
        let now = sk.now_ns;
        let sock = self.sock.bind(py);
        let r = {
            let _b = Bind::new(sock.get(), sk as *mut Sock, true);
            m.bind(py).call1(args)
        };
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                record_error(&self.errors, py, e, &self.who, now, hook);
                self.failed = true;
                None
            }
        }
    }

    fn ret_u32(&mut self, py: Python<'_>, v: Option<Bound<'_, PyAny>>, hook: &str, now: u64) -> Option<u32> {
        match v?.extract::<u32>() {
            Ok(x) => Some(x),
            Err(e) => {
                let e = PyTypeError::new_err(format!("{hook}() must return a packet count (int in [0, 2^32)): {e}"));
                record_error(&self.errors, py, e, &self.who, now, hook);
                self.failed = true;
                None
            }
        }
    }
}

impl CongestionControl for PyCc {
    fn name(&self) -> &'static str {
        self.name
    }
    fn init(&mut self, sk: &mut Sock) {
        if self.h.init.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.init.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "init", &m, (s,));
        });
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        if self.failed || self.h.ssthresh.is_none() {
            return tcp_reno_ssthresh(sk);
        }
        Python::with_gil(|py| {
            let m = self.h.ssthresh.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            let now = sk.now_ns;
            let v = self.call(py, sk, "ssthresh", &m, (s,));
            self.ret_u32(py, v, "ssthresh", now).unwrap_or_else(|| tcp_reno_ssthresh(sk))
        })
    }
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        if self.failed || self.h.cong_avoid.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.cong_avoid.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "cong_avoid", &m, (s, acked));
        });
    }
    fn has_cong_control(&self) -> bool {
        self.h.cong_control.is_some()
    }
    fn cong_control(&mut self, sk: &mut Sock, rs: &RateSample) -> bool {
        if self.failed || self.h.cong_control.is_none() {
            return true;
        }
        Python::with_gil(|py| {
            self.rs.bind(py).borrow_mut().fill(rs);
            let m = self.h.cong_control.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            let r = self.rs.clone_ref(py);
            match self.call(py, sk, "cong_control", &m, (s, r)) {
                Some(v) if !v.is_none() => v.is_truthy().unwrap_or(true),
                _ => true,
            }
        })
    }
    fn set_state(&mut self, sk: &mut Sock, new_state: CaState) {
        if self.failed || self.h.set_state.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.set_state.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "set_state", &m, (s, state_name(new_state)));
        });
    }
    fn cwnd_event(&mut self, sk: &mut Sock, ev: CaEvent) {
        if self.failed || self.h.cwnd_event.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.cwnd_event.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "cwnd_event", &m, (s, event_name(ev)));
        });
    }
    fn pkts_acked(&mut self, sk: &mut Sock, a: &AckSample) {
        if self.failed || self.h.pkts_acked.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.pkts_acked.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "pkts_acked", &m, (s, a.pkts_acked, a.rtt_us, a.in_flight));
        });
    }
    fn in_ack_event(&mut self, sk: &mut Sock, flags: u32) {
        if self.failed || self.h.in_ack_event.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.in_ack_event.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "in_ack_event", &m, (s, flags));
        });
    }
    fn skb_marked_lost(&mut self, sk: &mut Sock, skb: &LostSkb) {
        if self.failed || self.h.skb_marked_lost.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let m = self.h.skb_marked_lost.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            self.call(py, sk, "skb_marked_lost", &m, (s, skb.tx_in_flight, skb.tx_lost, skb.is_app_limited, skb.tx_valid));
        });
    }
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        if self.failed || self.h.undo_cwnd.is_none() {
            return sk.cwnd.max(sk.prior_cwnd);
        }
        Python::with_gil(|py| {
            let m = self.h.undo_cwnd.as_ref().unwrap().clone_ref(py);
            let s = self.sock.clone_ref(py);
            let now = sk.now_ns;
            let v = self.call(py, sk, "undo_cwnd", &m, (s,));
            self.ret_u32(py, v, "undo_cwnd", now).unwrap_or(sk.cwnd)
        })
    }
    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        sample_attrs(&self.obj, &self.record, out);
    }
    fn needs_ecn(&self) -> bool {
        self.needs_ecn
    }
    fn needs_non_sack_recovery(&self) -> bool {
        self.non_sack
    }
}

// ---------------------------------------------------------------------------------------------
// Periodic controllers
// ---------------------------------------------------------------------------------------------

/// A Python object with `on_interval(sk, st)` (and optionally `init(sk)`) driving a [`Periodic`].
pub struct PyDriver {
    obj: PyObject,
    init: Option<PyObject>,
    on_interval: PyObject,
    sock: Py<PySock>,
    stats: Py<PyStats>,
    record: Vec<(&'static str, Py<PyString>)>,
    who: Who,
    errors: ErrorSlot,
}

fn num(v: &Bound<'_, PyAny>, key: &str) -> PyResult<f64> {
    v.extract::<f64>().map_err(|_| {
        let t = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        PyTypeError::new_err(format!("command {key:?} must be a number, got {t} {}", v.repr().map(|r| r.to_string()).unwrap_or_default()))
    })
}

fn parse_command(v: &Bound<'_, PyAny>, prev: Command) -> PyResult<Command> {
    if v.is_none() {
        return Ok(prev);
    }
    let d = v.downcast::<PyDict>().map_err(|_| {
        PyTypeError::new_err("on_interval() must return None (keep the command) or a dict {\"cwnd\": packets, \"pacing_rate\": bit/s}")
    })?;
    let mut c = Command::default();
    for (k, val) in d.iter() {
        let k: String = k.extract()?;
        match k.as_str() {
            "cwnd" => c.cwnd = if val.is_none() { None } else { Some(num(&val, "cwnd")?.round().clamp(1.0, u32::MAX as f64) as u32) },
            "pacing_rate" => c.pacing_rate_bps = if val.is_none() { None } else { Some(num(&val, "pacing_rate")?) },
            _ => return Err(PyValueError::new_err(format!("unknown command key {k:?}: use \"cwnd\" and/or \"pacing_rate\""))),
        }
    }
    if let Some(r) = c.pacing_rate_bps {
        if !(r >= 0.0 && r.is_finite()) {
            return Err(PyValueError::new_err(format!("pacing_rate must be a finite rate >= 0 bit/s, got {r}")));
        }
    }
    Ok(c)
}

impl PyDriver {
    fn run(&mut self, sk: &Sock, st: Option<&IntervalStats>, prev: Command) -> Result<Command, String> {
        Python::with_gil(|py| {
            let sock = self.sock.bind(py);
            let r = {
                let _b = Bind::new(sock.get(), sk as *const Sock as *mut Sock, false);
                match st {
                    Some(st) => {
                        *self.stats.bind(py).borrow_mut() = PyStats::from_stats(st);
                        self.on_interval.bind(py).call1((sock, self.stats.bind(py)))
                    }
                    None => match &self.init {
                        Some(m) => m.bind(py).call1((sock,)),
                        None => return Ok(prev),
                    },
                }
            };
            let hook = if st.is_some() { "on_interval" } else { "init" };
            match r.and_then(|v| parse_command(&v, prev)) {
                Ok(c) => Ok(c),
                Err(e) => Err(record_error(&self.errors, py, e, &self.who, sk.now_ns, hook)),
            }
        })
    }
}

impl Driver for PyDriver {
    fn init(&mut self, sk: &Sock) -> Result<Command, String> {
        self.run(sk, None, Command::default())
    }
    fn on_interval(&mut self, sk: &Sock, st: &IntervalStats) -> Result<Command, String> {
        // The previous command stays in force when the controller returns None.
        let prev = Command { cwnd: Some(sk.cwnd), pacing_rate_bps: Some(sk.pacing_rate_bps) };
        self.run(sk, Some(st), prev)
    }
    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        sample_attrs(&self.obj, &self.record, out);
    }
}

// ---------------------------------------------------------------------------------------------
// The factory the engine asks
// ---------------------------------------------------------------------------------------------

/// Per flow id: a Python callable `make(conn) -> (obj, kind, value)` where kind is "ack"
/// (per-ACK scheme), "fixed" (periodic, value = interval in ns), "rtt" (periodic, value =
/// multiple of sRTT) or "gym" (periodic driven through a handle; obj unused).
pub struct PyExternal {
    makers: HashMap<u32, PyObject>,
    pub errors: ErrorSlot,
    /// Handles of "gym" connections by connection id.
    pub handles: Mutex<HashMap<u32, PeriodicHandle>>,
}

impl PyExternal {
    pub fn new(makers: HashMap<u32, PyObject>) -> Self {
        PyExternal { makers, errors: Arc::new(Mutex::new(None)), handles: Mutex::new(HashMap::new()) }
    }

    pub fn take_error(&self) -> Option<String> {
        self.errors.lock().unwrap().take()
    }

    fn build(&self, py: Python<'_>, maker: &PyObject, f: &FlowConfig, conn: u32) -> PyResult<Box<dyn CongestionControl>> {
        let made = maker.bind(py).call1((conn,))?;
        let (obj, kind, value): (Bound<'_, PyAny>, String, f64) = made.extract()?;
        let class = obj.get_type().qualname().map(|q| q.to_string()).unwrap_or_else(|_| "?".into());
        let who = Who { flow: f.id, label: f.label.clone(), class };
        let needs_ecn = obj.getattr("needs_ecn").and_then(|v| v.is_truthy()).unwrap_or(false);
        let periodic = |interval: Interval, driver: Option<Box<dyn Driver>>| -> Box<dyn CongestionControl> {
            let (p, h) = Periodic::new(&f.scheme, interval, driver, needs_ecn);
            self.handles.lock().unwrap().insert(conn, h);
            Box::new(p)
        };
        Ok(match kind.as_str() {
            "ack" => Box::new(PyCc::new(py, &f.scheme, obj, who, self.errors.clone())?),
            "gym" => periodic(Interval::External, None),
            "fixed" | "rtt" => {
                let interval = if kind == "fixed" { Interval::Fixed(value as u64) } else { Interval::Rtt(value) };
                let on_interval = method(&obj, "on_interval")?
                    .ok_or_else(|| PyTypeError::new_err(format!("periodic controller {} has no on_interval()", who.class)))?;
                let d = PyDriver {
                    init: method(&obj, "init")?,
                    on_interval,
                    record: record_names(&obj)?,
                    obj: obj.unbind(),
                    sock: Py::new(py, PySock::new())?,
                    stats: Py::new(py, PyStats::default())?,
                    who,
                    errors: self.errors.clone(),
                };
                periodic(interval, Some(Box::new(d)))
            }
            k => return Err(PyValueError::new_err(format!("unknown Python scheme kind {k:?}"))),
        })
    }
}

impl ExternalCc for PyExternal {
    fn make(&self, f: &FlowConfig, conn: u32) -> Option<Result<Box<dyn CongestionControl>, String>> {
        let maker = self.makers.get(&f.id)?;
        Some(Python::with_gil(|py| {
            self.build(py, maker, f, conn).map_err(|e| {
                let who = Who { flow: f.id, label: f.label.clone(), class: f.scheme.clone() };
                record_error(&self.errors, py, e, &who, 0, "__init__")
            })
        }))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySock>()?;
    m.add_class::<PyRateSample>()?;
    m.add_class::<PyStats>()?;
    m.add("SchemeError", m.py().get_type::<SchemeError>())?;
    Ok(())
}
