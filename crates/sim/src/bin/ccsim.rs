//! `ccsim RESOLVED.json`: run a resolved experiment without Python and print a JSON summary
//! (events, wall time, per-flow delivered bytes). Used by benchmarks and profiling.

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
    let out = Sim::new(&exp)
        .unwrap_or_else(|e| {
            eprintln!("ccsim: {e}");
            std::process::exit(2);
        })
        .finish();
    let wall = t0.elapsed().as_secs_f64();
    let delivered = match out.table("flowstats").and_then(|t| t.get("delivered_bytes")) {
        Some(Col::U64(v)) => v.clone(),
        _ => vec![],
    };
    let summary = serde_json::json!({
        "wall_time_s": wall,
        "sim": out.stats,
        "delivered_bytes": delivered,
    });
    println!("{summary}");
}
