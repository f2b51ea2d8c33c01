//! ccbench-emu: the real-time engine of the emulation backend (`emu::engine`).
//!
//! Usage: `ccbench-emu RUNTIME.json` — prints `ready` once set up, then reads `go <t0_ns>`
//! (absolute CLOCK_MONOTONIC time of experiment time 0) from stdin, runs until
//! t0 + duration (or SIGINT/SIGTERM) — printing `progress t_ns=T bytes=B0,B1,...` (per-flow
//! data bytes released so far) every `progress_ns` of the runtime config —, writes column files and `stats.json` to `out_dir`,
//! prints `done`, and exits at the next line on stdin (the driver reads the TUN counters
//! while the engine still holds the interfaces).

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use emu::clock::{self, mono_ns};
use emu::engine::Engine;
use emu::runtime::Runtime;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn fail(msg: &str) -> ! {
    eprintln!("ccbench-emu: {msg}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        fail("usage: ccbench-emu RUNTIME.json");
    }
    clock::die_with_parent(libc::SIGKILL);
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", args[1])));
    let rt: Runtime = serde_json::from_str(&text).unwrap_or_else(|e| fail(&format!("bad runtime config: {e}")));
    // SAFETY: installing an async-signal-safe handler that only stores an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    if let Some(cpu) = rt.engine_cpu {
        if let Err(e) = clock::pin_to_cpu(cpu) {
            eprintln!("ccbench-emu: cannot pin to CPU {cpu}: {e}");
        }
    }
    clock::set_timer_slack(1);
    // Highest CFS priority: on a shared machine the engine must win its CPU back at once on
    // every wake-up. (Not SCHED_FIFO: a spinning real-time thread is throttled by
    // sched_rt_runtime_us, which stalls it for tens of milliseconds each second.)
    let (group_ok, nice_ok) = clock::prioritise(rt.engine_nice);
    let slice_ok = rt.engine_slice_ns > 0 && clock::short_slice(rt.engine_nice, rt.engine_slice_ns);
    let mut eng = Engine::new(&rt).unwrap_or_else(|e| fail(&e));

    println!("ready");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok();
    let t0: u64 = line
        .trim()
        .strip_prefix("go ")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fail(&format!("expected `go <t0_ns>` on stdin, got {line:?}")));
    eng.set_t0(t0);
    let cpu0 = clock::thread_cpu_ns();
    let wall0 = mono_ns();
    clock::sleep_spin_until(t0, rt.spin_ns);
    eng.run(rt.experiment.duration_ns, rt.spin_ns, &STOP);
    let wall = mono_ns() - wall0.max(t0);
    let cpu = clock::thread_cpu_ns() - cpu0;
    let run = serde_json::json!({
        "run_id": rt.run_id,
        "interrupted": STOP.load(Ordering::Relaxed),
        "t0_mono_ns": t0,
        "wall_ns": wall,
        "engine_cpu": rt.engine_cpu,
        "spin_ns": rt.spin_ns,
        "nice": if nice_ok { Some(rt.engine_nice) } else { None },
        "autogroup_nice": if group_ok { Some(rt.engine_nice) } else { None },
        "sched_slice_ns": if slice_ok { Some(rt.engine_slice_ns) } else { None },
    });
    let serde_json::Value::Object(run) = run else { unreachable!() };
    eng.write_output(Path::new(&rt.out_dir), wall, cpu, run)
        .unwrap_or_else(|e| fail(&format!("write {}: {e}", rt.out_dir)));
    println!("done");
    std::io::stdout().flush().ok();
    // Keep the TUN fds (and so the interfaces) until the driver has read their counters.
    line.clear();
    std::io::stdin().lock().read_line(&mut line).ok();
}
