//! The flow agent (`ccbench-agent`): one end of one flow, run inside a host's network
//! namespace. The binary is a small main over these modules:
//!
//! * [`socket`]: socket helpers (addresses, non-blocking, polling, listening);
//! * [`tcp_info`]: `TCP_INFO` / `TCP_CC_INFO` samples in the flows table's units;
//! * [`sock_diag`]: the same samples of another program's socket through netlink sock_diag
//!   (`monitor`, command schemes);
//! * [`app`]: what the sending application writes (bulk, finite, app-rate, on/off);
//! * [`tcp`], [`udp`], [`arrivals`], [`probe`]: the roles (receivers and senders);
//! * [`launch`]: exec a program at an absolute time.
//!
//! Command lines:
//!
//! ```text
//! ccbench-agent server --port P [--t0 T0] [--end E] [--multi 1] [--run ID]
//! ccbench-agent client --dst ADDR --port P --cc NAME [--pacing fq] [--t0 T0] [--start S] [--end E]
//!                      [--stop S2] [--bytes N] [--interval I] [--flow F] [--out DIR] [--run ID]
//!                      [--app-rate BPS --mss M] [--on NS --off NS] [--notsent-lowat B]
//!                      [--control-interval NS | --control-rtt K1000]
//! ccbench-agent server ... [--control 1] [--cc NAME]
//! ccbench-agent udp-server --port P [--t0 T0] [--end E]
//! ccbench-agent udp-client --dst ADDR --port P --rate BPS [--size IP_BYTES] [--t0 T0]
//!                      [--start S] [--stop S2] [--end E] [--spin NS]
//! ccbench-agent probe-server --port P [--t0 T0] [--end E]
//! ccbench-agent probe-client --dst ADDR --port P --interval NS --size IP_BYTES --flow F
//!                      --out DIR [--t0 T0] [--start S] [--stop S2] [--end E]
//! ccbench-agent arrivals-client --dst ADDR --port P --cc NAME --arrivals JSON --seed S
//!                      --flow F --t0 T0 [--start S] [--stop S2] --end E --out DIR
//! ccbench-agent monitor --peer ADDR --port P --t0 T0 [--start S] --end E [--interval I]
//!                      [--flow F] [--out DIR] [--run ID]
//! ccbench-agent launch --at T [--run ID] -- PROGRAM ARGS...
//! ```
//! Without `--t0` the server and client take "now" as time 0 and run until killed (no
//! `--end`): that is how a command scheme or a Pantheon wrapper starts them. `monitor` samples
//! another program's socket through netlink sock_diag (command schemes); `launch` execs a
//! program at an absolute CLOCK_MONOTONIC time.
//! Times: `--t0` is the absolute CLOCK_MONOTONIC time (ns) of experiment time 0; `--start`,
//! `--stop`, `--end` and `--interval` are ns relative to it. The client connects at `start`
//! with `TCP_CONGESTION` set to NAME, sends bulk data (or exactly N bytes) until `stop`
//! (or `end`), and samples `TCP_INFO` (and `TCP_CC_INFO`, which only BBR fills) every
//! `interval` on the experiment's time grid into DIR (the `flows` table as column files,
//! crate::columns; rows for flow F).
//! `--control-interval`/`--control-rtt` (k × sRTT, in thousandths) and the receiver's
//! `--control 1` connect a periodic controller ([`control`]).
//! A finite flow waits until every byte is acknowledged (SIOCOUTQ = 0) before closing. The
//! last line on stdout is a JSON summary. Exit code 3: the congestion control was refused.

use std::collections::HashMap;

pub mod app;
pub mod arrivals;
pub mod control;
pub mod probe;
pub mod sock_diag;
pub mod socket;
pub mod tcp;
pub mod tcp_info;
pub mod udp;

use crate::clock;

pub const NONE: u64 = u64::MAX;
/// `--end` when not given (processes started by a wrapper run until killed): one day, ns.
pub const FOREVER: u64 = 86_400_000_000_000;

pub fn die(code: i32, msg: &str) -> ! {
    eprintln!("ccbench-agent: {msg}");
    println!("{}", serde_json::json!({"error": msg}));
    std::process::exit(code)
}

pub fn errno_msg(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

pub struct Args(pub HashMap<String, String>);

impl Args {
    pub fn parse(v: &[String]) -> Args {
        let mut m = HashMap::new();
        let mut i = 0;
        while i < v.len() {
            let k = v[i].strip_prefix("--").unwrap_or_else(|| die(2, &format!("unexpected argument {}", v[i])));
            let val = v.get(i + 1).cloned().unwrap_or_else(|| die(2, &format!("--{k} needs a value")));
            m.insert(k.to_string(), val);
            i += 2;
        }
        Args(m)
    }
    pub fn str(&self, k: &str) -> String {
        self.0.get(k).cloned().unwrap_or_else(|| die(2, &format!("--{k} is required")))
    }
    pub fn u64(&self, k: &str, default: Option<u64>) -> u64 {
        match self.0.get(k) {
            Some(v) => v.parse().unwrap_or_else(|_| die(2, &format!("--{k}: {v} is not an integer"))),
            None => default.unwrap_or_else(|| die(2, &format!("--{k} is required"))),
        }
    }
}

/// Write a results table into directory `dir` (created), in the one column encoding
/// (crate::columns); exit on failure.
pub fn write_out(dir: &str, t: &netmodel::records::Table) {
    let d = std::path::Path::new(dir);
    if let Err(e) = std::fs::create_dir_all(d).and_then(|_| crate::columns::write_table(d, t)) {
        die(1, &format!("write {dir}: {e}"));
    }
}

/// `--stop` as an absolute time: `t0 + stop`, at most `end` (absent: `end`).
pub fn stop_time(a: &Args, t0: u64, end: u64) -> u64 {
    match a.u64("stop", Some(NONE)) {
        NONE => end,
        s => (t0 + s).min(end),
    }
}

/// `launch --at ABS_NS [--nice N] [--run ID] -- PROGRAM ARGS...`: sleep until CLOCK_MONOTONIC
/// time ABS_NS, then exec PROGRAM (command schemes start at the flow's start without launch
/// latency). With `--nice`, PROGRAM runs at the agents' priority ([`clock::prioritise`]: its
/// session's autogroup and itself at nice N), as ccbench's own ends of a flow do.
pub fn launch(v: &[String]) -> ! {
    let sep = v.iter().position(|x| x == "--").unwrap_or_else(|| die(2, "launch: missing -- PROGRAM"));
    let a = Args::parse(&v[..sep]);
    let at = a.u64("at", None);
    if let Some(n) = a.0.get("nice") {
        clock::prioritise(n.parse().unwrap_or_else(|_| die(2, "launch --nice: not an integer")));
    }
    let argv: Vec<std::ffi::CString> = v[sep + 1..]
        .iter()
        .map(|x| std::ffi::CString::new(x.as_str()).unwrap_or_else(|_| die(2, "launch: NUL in argument")))
        .collect();
    if argv.is_empty() {
        die(2, "launch: missing PROGRAM");
    }
    clock::sleep_until(at);
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: NUL-terminated argv of valid C strings.
    unsafe { libc::execvp(ptrs[0], ptrs.as_ptr()) };
    die(127, &errno_msg(&format!("exec {}", v[sep + 1])))
}
