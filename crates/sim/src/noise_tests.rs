//! Event-loop tests of host noise on in-order link exits (`Sim::exit_in_order`): one wake-up
//! per packet and hop gives the tables of one event at the arrival and one at the hand-over;
//! and of the queue rows repeated for quiescent links (`Sim::quiet`, `Sim::quiet_rows`).

use super::*;
use crate::output::{Col, Output};

const SEC: u64 = 1_000_000_000;

/// Two CUBIC flows and a reverse Reno flow over a 20 Mbit/s, 5 ms dumbbell with 1 Gbit/s
/// access links and the default-like noise tables; per-packet records on.
fn exp() -> Experiment {
    let link = |id: u32, src: &str, dst: &str, rate: u64, delay: u64, q: u32| {
        format!(
            r#"{{"id": {id}, "name": "{src}->{dst}", "src": "{src}", "dst": "{dst}", "rate_bps": {rate},
            "delay_ns": {delay}, "queue": {{"kind": "droptail", "packets": {q}, "bytes": null}}}}"#
        )
    };
    let links = [
        link(0, "a", "r1", 1_000_000_000, 1_000_000, 1000),
        link(1, "r1", "r2", 20_000_000, 5_000_000, 40),
        link(2, "r2", "b", 1_000_000_000, 1_000_000, 1000),
        link(3, "b", "r2", 1_000_000_000, 1_000_000, 1000),
        link(4, "r2", "r1", 20_000_000, 5_000_000, 40),
        link(5, "r1", "a", 1_000_000_000, 1_000_000, 1000),
    ]
    .join(",");
    let flow = |id: u32, scheme: &str, start: u64, fwd: bool| {
        let (p, r) = if fwd { ("[0, 1, 2]", "[3, 4, 5]") } else { ("[3, 4, 5]", "[0, 1, 2]") };
        format!(r#"{{"id": {id}, "scheme": "{scheme}", "params": {{}}, "start_ns": {start}, "path": {p}, "rev_path": {r}}}"#)
    };
    let flows = [flow(0, "cubic", 0, true), flow(1, "cubic", SEC / 2, true), flow(2, "reno", SEC, false)].join(",");
    let table = "[[0.0, 1000], [0.5, 20000], [0.9, 40000], [0.99, 100000]]";
    let json = format!(
        r#"{{"duration_ns": {d}, "seed": 3, "record_packets": true, "links": [{links}], "bottleneck_links": [1],
        "flows": [{flows}],
        "host_noise": {{"host_ns": {table}, "router_ns": {table}, "timer_ns": {table}, "clock_ppm": 50.0}}}}"#,
        d = 4 * SEC
    );
    crate::experiment::from_json(&json).unwrap()
}

fn bytes(out: &Output) -> Vec<(String, Vec<u8>)> {
    out.column_bytes()
}

#[test]
fn in_order_exits_give_the_tables_of_an_event_per_arrival() {
    let fast = Sim::new(&exp()).unwrap();
    // Routes end at links 2 and 5 (hosts b and a); the others feed routers and have no noise.
    let exits = &fast.noise.as_ref().unwrap().exits;
    assert_eq!(exits.iter().map(|e| (e.hosts, e.in_order)).collect::<Vec<_>>(),
               [false, false, true, false, false, true].map(|h| (h, h)));
    let mut slow = Sim::new(&exp()).unwrap();
    slow.noise.as_mut().unwrap().exits.iter_mut().for_each(|e| e.in_order = false);
    let (fast, slow) = (fast.finish(), slow.finish());
    assert!(fast.stats.packets > 5000, "{}", fast.stats.packets);
    // One wake-up per packet at a host-bound exit instead of two.
    assert!(
        (fast.stats.events as f64) < 0.8 * slow.stats.events as f64,
        "{} events against {}",
        fast.stats.events,
        slow.stats.events
    );
    assert_eq!(fast.stats.data_in_flight_at_end, slow.stats.data_in_flight_at_end);
    let (x, y) = (bytes(&fast), bytes(&slow));
    assert_eq!(x.iter().map(|(n, _)| n).collect::<Vec<_>>(), y.iter().map(|(n, _)| n).collect::<Vec<_>>());
    for ((n, a), (_, b)) in x.iter().zip(&y) {
        assert!(a == b, "{n} differs");
    }
}

#[test]
fn stepping_a_noisy_run_changes_nothing() {
    let whole = Sim::new(&exp()).unwrap().finish();
    let mut sim = Sim::new(&exp()).unwrap();
    let mut held = 0;
    while !sim.finished() {
        let t = sim.now() + 700_001;
        sim.run_until(t);
        // deliveries up to now are recorded by now: rows drained here carry their fates
        held = held.max(sim.held_rows()[0].1);
    }
    assert!(held > 0);
    let stepped = sim.finish();
    assert_eq!(stepped.stats.data_in_flight_at_end, whole.stats.data_in_flight_at_end);
    let (x, y) = (bytes(&stepped), bytes(&whole));
    assert_eq!(x.iter().map(|(n, _)| n).collect::<Vec<_>>(), y.iter().map(|(n, _)| n).collect::<Vec<_>>());
    for ((n, a), (_, b)) in x.iter().zip(&y) {
        assert!(a == b, "{n} differs");
    }
}

/// `on_sample` repeats the last row of a link that stayed quiescent (`quiet`, `quiet_rows`) instead of
/// reading it: every row must still be what the link reads at that instant. An on/off flow
/// leaves its links idle for seconds and then busy again.
#[test]
fn repeated_queue_rows_are_what_the_links_read() {
    let mut e = exp();
    e.host_noise = None;
    e.flows[1].onoff = Some(netmodel::app::OnOff { on_ns: 300_000_000, off_ns: 700_000_000 });
    let mut sim = Sim::new(&e).unwrap();
    let (step, n) = (e.sample_interval_ns, sim.links.len());
    let mut repeated = 0;
    let mut k = 0;
    while !sim.finished() {
        sim.run_until(k * step);
        repeated += sim.quiet.iter().filter(|&&q| q).count();
        let chunk = sim.drain_records(1);
        let q = chunk.iter().find(|t| t.name == "queues").expect("a row per link");
        let Some(Col::U64(tx)) = q.get("tx_bytes") else { panic!() };
        let Some(Col::U32(pk)) = q.get("packets") else { panic!() };
        let Some(Col::F64(so)) = q.get("sojourn_us") else { panic!() };
        assert_eq!(tx.len(), n);
        for l in 0..n {
            sim.links[l].sync(k * step);
            let r = QueueRow::of(&sim.links[l]);
            assert_eq!((tx[l], pk[l]), (r.tx_bytes, r.packets), "link {l} at tick {k}");
            assert!(so[l].to_bits() == r.sojourn_us.to_bits(), "link {l} at tick {k}");
        }
        k += 1;
    }
    assert!(repeated > 100, "{repeated} repeated rows");
}
