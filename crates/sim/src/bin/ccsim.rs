//! `ccsim RESOLVED.json`: run a resolved experiment without Python and print a JSON summary
//! (events, wall time, the event loop's own CPU time, per-flow delivered bytes). Used by
//! benchmarks (benches/flows_scaling.py) and profiling.

use std::time::Instant;

use sim::{Col, Sim};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: ccsim RESOLVED.json   (make one with `ccbench resolve FILE.yaml`)");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| {
        eprintln!("ccsim: cannot read {}: {e}", args[1]);
        std::process::exit(2);
    });
    let exp = sim::experiment::from_json(&text).unwrap_or_else(|e| {
        eprintln!("ccsim: {e}");
        std::process::exit(2);
    });
    let t0 = Instant::now();
    let mut sim = Sim::new(&exp).unwrap_or_else(|e| {
        eprintln!("ccsim: {e}");
        std::process::exit(2);
    });
    let c0 = thread_cpu_s();
    sim.run_until(sim.end());
    let loop_cpu = thread_cpu_s() - c0;
    let out = sim.finish();
    let wall = t0.elapsed().as_secs_f64();
    let delivered = match out.table("flowstats").and_then(|t| t.get("delivered_bytes")) {
        Some(Col::U64(v)) => v.clone(),
        _ => vec![],
    };
    let summary = serde_json::json!({
        "wall_time_s": wall,
        "loop_cpu_s": loop_cpu,
        "sim": out.stats,
        "delivered_bytes": delivered,
    });
    println!("{summary}");
}

/// CPU time of this thread, seconds (the event loop alone, without set-up and output).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
