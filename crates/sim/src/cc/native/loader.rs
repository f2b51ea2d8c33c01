//! Loading a natively compiled BPF congestion control (a shared object built by
//! ccbench.backends.bpfsim) with `dlopen`. Each load maps a private copy of the object (the file
//! is copied to a temporary name, opened and the copy unlinked), so the program's globals
//! (.bss, .data) belong to one run: shared by that run's flows, as a registered struct_ops
//! program's globals are shared by all its sockets in the kernel, and fresh for the next run
//! in the same process.

use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::abi::{Abi, COps, SockPtr};

/// A loaded program: the mapped object and its `tcp_congestion_ops`.
pub struct Program {
    handle: *mut libc::c_void,
    ops: *const COps,
    current: *mut SockPtr,
    sock_free: unsafe extern "C" fn(SockPtr),
    /// `ccbench_record_value` of a build with recorded variables (bpfsim.record_unit).
    record_value: Option<unsafe extern "C" fn(u32) -> f64>,
    /// The ops table's `.name`.
    pub name: String,
}

// SAFETY: a Program is used by one simulation at a time (the engine is single-threaded); its
// copy of the object is private to it, so no other thread touches the object's globals.
unsafe impl Send for Program {}
unsafe impl Sync for Program {}

static COPIES: AtomicU64 = AtomicU64::new(0);

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a C string valid until the next dl call on this thread.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() { "unknown dlopen error".into() } else { CStr::from_ptr(e).to_string_lossy().into_owned() }
    }
}

impl Program {
    /// Map a private copy of `path` and check it against the simulator's types.
    pub fn load(path: &str) -> Result<Program, String> {
        let src = Path::new(path);
        let copy = std::env::temp_dir().join(format!(
            "ccbench-bpf-sim-{}-{}.so", std::process::id(), COPIES.fetch_add(1, Ordering::Relaxed)));
        std::fs::copy(src, &copy).map_err(|e| format!("cannot read {path}: {e}"))?;
        let c = CString::new(copy.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: c is a valid C string; the object's constructors are ccbench's runtime and
        // the program's (none in a BPF program).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        let _ = std::fs::remove_file(&copy);
        if handle.is_null() {
            return Err(format!("cannot load {path}: {}", dl_error()));
        }
        let mut p = Program { handle, ops: std::ptr::null(), current: std::ptr::null_mut(),
                              sock_free: noop_free, record_value: None, name: String::new() };
        let abi_fn = p.symbol("ccbench_sim_abi")?;
        let free_fn = p.symbol("ccbench_sim_sock_free")?;
        // SAFETY: the symbols are the runtime's functions of these signatures
        // (ccbench_sim_runtime.c); the record they return is static in the object.
        let abi: &Abi = unsafe {
            let f: unsafe extern "C" fn() -> *const Abi = std::mem::transmute(abi_fn);
            &*f()
        };
        abi.check().map_err(|e| format!("{path} does not match this simulator: {e}; rebuild it \
                                         (delete ~/.cache/ccbench/bpf-sim)"))?;
        p.ops = abi.ops;
        p.current = abi.current;
        p.sock_free = unsafe { std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn(SockPtr)>(free_fn) };
        // SAFETY: ops points to the program's static tcp_congestion_ops.
        let ops = unsafe { &*p.ops };
        let name: Vec<u8> = ops.name.iter().take_while(|&&b| b != 0).map(|&b| b as u8).collect();
        p.name = String::from_utf8_lossy(&name).into_owned();
        if ops.ssthresh.is_none() || ops.undo_cwnd.is_none()
            || (ops.cong_avoid.is_none() && ops.cong_control.is_none()) {
            return Err(format!("{path}: the tcp_congestion_ops {:?} lacks ssthresh, undo_cwnd or \
                                both cong_avoid and cong_control, which the kernel requires", p.name));
        }
        Ok(p)
    }

    /// Make `ccbench_record_value` callable: the build must have been made with `record:`.
    pub fn enable_record(&mut self) -> Result<(), String> {
        let f = self.symbol("ccbench_record_value")
            .map_err(|_| "the simulator build has no recorded variables (ccbench_record_value); \
                          it was built without record:".to_string())?;
        // SAFETY: the generated function has this signature (bpfsim.record_unit).
        self.record_value = Some(unsafe { std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn(u32) -> f64>(f) });
        Ok(())
    }

    /// The `i`-th recorded variable's value now (0.0 without recorded variables).
    pub fn record_value(&self, i: u32) -> f64 {
        // SAFETY: a plain read of the program's globals, on the simulation's thread.
        self.record_value.map_or(0.0, |f| unsafe { f(i) })
    }

    fn symbol(&self, name: &str) -> Result<*mut libc::c_void, String> {
        let c = CString::new(name).unwrap();
        // SAFETY: handle is a live dlopen handle, c a valid C string.
        let s = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        if s.is_null() {
            Err(format!("the object has no {name}: it was not built by ccbench's simulator build"))
        } else {
            Ok(s)
        }
    }

    /// The program's ops table.
    pub fn ops(&self) -> &COps {
        // SAFETY: checked non-null in `load`; static for the object's lifetime.
        unsafe { &*self.ops }
    }

    /// Tell the runtime which socket's hook runs now (its clock and random stream).
    #[inline]
    pub(super) fn set_current(&self, sk: SockPtr) {
        // SAFETY: `current` points to the runtime's global, private to this copy.
        unsafe { *self.current = sk }
    }

    /// Free the socket-local storage the program created for `sk`.
    pub(super) fn free_sock(&self, sk: SockPtr) {
        // SAFETY: sk is a socket this program's hooks were given; the function only frees
        // the storage list it built.
        unsafe { (self.sock_free)(sk) }
    }
}

unsafe extern "C" fn noop_free(_: SockPtr) {}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: no socket of this program outlives it (each holds an Arc<Program>).
        unsafe {
            libc::dlclose(self.handle);
        }
    }
}
