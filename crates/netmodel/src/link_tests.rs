//! Tests of one direction of a link (`link.rs`): serialisation, delay, jitter and reordering,
//! loss, delay schedules, rate traces, radio promotion, shared half-duplex channels.

use super::*;

fn cfg(rate: Option<u64>, delay: u64, packets: Option<u32>) -> LinkConfig {
    LinkConfig::simple(0, "a->b", rate, delay, QueueConfig::droptail(packets, None))
}

fn p(id: u32) -> PktMeta {
    PktMeta { id, size: 1500, flow: 0, ecn: crate::ECN_NOT_ECT }
}

/// Drive the link as an event loop would and return (id, arrival time) pairs.
fn run(link: &mut Link) -> Vec<(u32, Nanos)> {
    let mut out = vec![];
    while let Some(t) = link.next_event_time() {
        while let Some((pkt, at)) = link.pop_arrival(t) {
            assert!(at <= t, "arrival reported after the wake time");
            out.push((pkt.id, at));
        }
    }
    out
}

#[test]
fn back_to_back_packets_are_serialised_then_delayed() {
    // 100 Mbit/s: 1500 B take 120 µs; 10 ms propagation.
    let mut l = Link::new(&cfg(Some(100_000_000), 10_000_000, Some(1000)));
    for i in 0..3 {
        l.enqueue(0, p(i));
    }
    let arr = run(&mut l);
    assert_eq!(arr, vec![(0, 10_120_000), (1, 10_240_000), (2, 10_360_000)]);
    assert_eq!(l.stats.tx_pkts, 3);
    assert_eq!(l.stats.tx_bytes, 4500);
}

#[test]
fn full_queue_delay_is_limit_times_tx_time() {
    // A full 1000-packet queue at 100 Mbit/s: the 1000th queued packet waits for 1000
    // serialisations (the one on the wire plus 999 ahead of it) before its own.
    let mut l = Link::new(&cfg(Some(100_000_000), 0, Some(1000)));
    for i in 0..1002 {
        l.enqueue(0, p(i)); // first goes on the wire, 1000 queue, the last is dropped
    }
    assert_eq!(l.queue_packets(), 1000);
    assert_eq!(l.take_drops().map(|d| d.id).collect::<Vec<_>>(), vec![1001]);
    let arr = run(&mut l);
    assert_eq!(arr.len(), 1001);
    assert_eq!(arr.last().unwrap(), &(1000, 1001 * 120_000));
    assert_eq!(l.stats.dropped_pkts, 1);
}

#[test]
fn unlimited_rate_only_delays() {
    let mut l = Link::new(&cfg(None, 5_000, None));
    l.enqueue(100, p(0));
    l.enqueue(100, p(1));
    assert_eq!(run(&mut l), vec![(0, 5_100), (1, 5_100)]);
}

#[test]
fn idle_link_starts_serialising_at_arrival_time() {
    let mut l = Link::new(&cfg(Some(1_000_000_000), 0, Some(10)));
    l.enqueue(1_000, p(0));
    assert_eq!(l.next_event_time(), Some(13_000));
    // A later arrival while idle again starts at its own time, not earlier.
    assert_eq!(run(&mut l), vec![(0, 13_000)]);
    l.enqueue(50_000, p(1));
    assert_eq!(run(&mut l), vec![(1, 62_000)]);
}

const MS: u64 = 1_000_000;

fn arrivals_of(l: &mut Link, sends: &[(Nanos, u32)]) -> Vec<(u32, Nanos)> {
    // Interleave sends and arrivals in time order, as an event loop does.
    let mut out = vec![];
    let mut i = 0;
    loop {
        let next_send = sends.get(i).map(|s| s.0);
        match (next_send, l.next_event_time()) {
            (Some(s), Some(a)) if s <= a => {
                l.enqueue(s, p(sends[i].1));
                i += 1;
            }
            (Some(s), None) => {
                l.enqueue(s, p(sends[i].1));
                i += 1;
            }
            (_, Some(a)) => {
                while let Some((pkt, at)) = l.pop_arrival(a) {
                    out.push((pkt.id, at));
                }
            }
            (None, None) => break,
        }
        let _ = l.take_drops().count();
    }
    out
}

fn jittery(reorder: bool, seed: u64) -> Link {
    let mut c = cfg(Some(100_000_000), 10 * MS, None);
    c.jitter = Some(JitterConfig::Netem { jitter_ns: 5 * MS });
    c.reorder = reorder;
    Link::with_seed(&c, seed)
}

#[test]
fn jitter_never_reorders_unless_asked() {
    // One packet every 200 µs; ±5 ms jitter would reorder most neighbours.
    let sends: Vec<(Nanos, u32)> = (0..2000).map(|i| (i as u64 * 200_000, i)).collect();
    let ordered = arrivals_of(&mut jittery(false, 1), &sends);
    assert_eq!(ordered.len(), 2000);
    assert!(ordered.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    // Each arrival is max(own, previous): never before its own time, and the spread of
    // delays is still there.
    let delays: Vec<i64> = ordered.iter().map(|&(id, t)| t as i64 - (id as i64 * 200_000 + 120_000)).collect();
    assert!(delays.iter().all(|&d| d >= 5 * MS as i64));
    let mixed = arrivals_of(&mut jittery(true, 1), &sends);
    assert_eq!(mixed.len(), 2000);
    let inversions = mixed.windows(2).filter(|w| w[0].0 > w[1].0).count();
    assert!(inversions > 100, "reorder mode: {inversions} inversions");
    assert!(mixed.windows(2).all(|w| w[0].1 <= w[1].1), "arrivals come out in time order");
    // Reorder mode: every delay in [10 − 5, 10 + 5] ms.
    for &(id, t) in &mixed {
        let d = t - (id as u64 * 200_000 + 120_000);
        assert!((5 * MS..=15 * MS).contains(&d), "delay {d}");
    }
}

#[test]
fn same_seed_same_jitter_and_loss_other_seed_or_link_differs() {
    let pattern = |seed: u64, name: &str| {
        let mut c = cfg(Some(100_000_000), 10 * MS, None);
        c.name = name.into();
        c.jitter = Some(JitterConfig::Normal { sd_ns: 2 * MS, mean_ns: 0 });
        c.loss = Some(LossConfig::Bernoulli { p: 0.05 });
        let mut l = Link::with_seed(&c, seed);
        let sends: Vec<(Nanos, u32)> = (0..3000).map(|i| (i as u64 * 200_000, i)).collect();
        let mut lost = vec![];
        let mut out = vec![];
        for &(t, id) in &sends {
            while let Some(a) = l.next_event_time().filter(|&a| a <= t) {
                while let Some(x) = l.pop_arrival(a) {
                    out.push(x.1);
                }
            }
            l.enqueue(t, p(id));
            lost.extend(l.take_drops_with_reason().map(|(d, r)| {
                assert_eq!(r, DropReason::Loss);
                d.id
            }));
        }
        (lost, out)
    };
    let a = pattern(1, "r1->r2");
    assert_eq!(a, pattern(1, "r1->r2"));
    assert!((100..200).contains(&a.0.len()), "5 % of 3000: {}", a.0.len());
    let b = pattern(2, "r1->r2");
    let c = pattern(1, "r2->r1");
    for other in [&b, &c] {
        assert_ne!(a.0, other.0);
        assert_ne!(a.1, other.1);
        let common = a.0.iter().filter(|x| other.0.contains(x)).count();
        // Independent 5 % patterns share ≈ 5 % of their losses.
        assert!(common < 30, "{common} common losses");
    }
}

#[test]
fn loss_drops_are_counted_apart_from_queue_drops() {
    let mut c = cfg(Some(100_000_000), 0, Some(5));
    c.loss = Some(LossConfig::Bernoulli { p: 0.5 });
    let mut l = Link::with_seed(&c, 3);
    for i in 0..100 {
        l.enqueue(0, p(i));
    }
    let (mut q, mut r) = (0, 0);
    for (_, why) in l.take_drops_with_reason() {
        match why {
            DropReason::Queue => q += 1,
            DropReason::Loss => r += 1,
            DropReason::Channel => panic!("no shared channel here"),
        }
    }
    assert_eq!(l.stats.lost_pkts, r);
    assert_eq!(l.stats.dropped_pkts, q + r);
    assert_eq!(q + r + 6, 100); // 1 on the wire + 5 queued
    assert!((30..70).contains(&r), "{r}");
}

#[test]
fn one_way_delay_follows_the_schedule_at_propagation_start_or_at_enqueue() {
    use crate::DelaySchedule;
    // 10 ms until 1 s, then 50 ms. 1 Mbit/s: a 1500-byte packet takes 12 ms.
    let sched = DelaySchedule::Series { points: vec![(0, 10 * MS), (1000 * MS, 50 * MS)], linear: false };
    let mut c = cfg(Some(1_000_000), 0, None);
    c.delay_schedule = Some(sched.clone());
    c.delay_ns = 10 * MS;
    // Sent at 980 and 995 ms: they leave the serialiser at 992 ms (before the switch)
    // and 1007 ms (after it).
    let mut l = Link::with_seed(&c, 0);
    let out = arrivals_of(&mut l, &[(980 * MS, 0), (995 * MS, 1)]);
    assert_eq!(out, vec![(0, 992 * MS + 10 * MS), (1, 1007 * MS + 50 * MS)]);
    // netem semantics: delay read at enqueue (both before the switch): 10 ms each.
    c.delay_at = DelayAt::Enqueue;
    let mut l = Link::with_seed(&c, 0);
    let out = arrivals_of(&mut l, &[(980 * MS, 0), (995 * MS, 1)]);
    assert_eq!(out, vec![(0, 1002 * MS), (1, 1017 * MS)]);
    // Skew: this direction switches 8 ms later, so the packet leaving at 1007 ms keeps 10.
    c.delay_at = DelayAt::Propagation;
    c.delay_skew_ns = 8 * MS;
    let mut l = Link::with_seed(&c, 0);
    let out = arrivals_of(&mut l, &[(980 * MS, 0), (995 * MS, 1)]);
    assert_eq!(out, vec![(0, 1002 * MS), (1, 1017 * MS)]);
    assert_eq!(l.delay_steps(3000 * MS), vec![(0, 10 * MS), (1008 * MS, 50 * MS)]);
}

#[test]
fn falling_delay_does_not_let_packets_overtake() {
    use crate::DelaySchedule;
    let sched = DelaySchedule::Square { low_ns: 0, high_ns: 100 * MS, period_ns: 200 * MS, start_high: true };
    let mut c = cfg(None, 0, None);
    c.delay_schedule = Some(sched);
    let mut l = Link::with_seed(&c, 0);
    // Sent at 99 ms (100 ms delay → 199 ms) and at 101 ms (0 delay → 101 ms, but behind).
    assert_eq!(arrivals_of(&mut l, &[(99 * MS, 0), (101 * MS, 1)]), vec![(0, 199 * MS), (1, 199 * MS)]);
    c.reorder = true;
    let mut l = Link::with_seed(&c, 0);
    assert_eq!(arrivals_of(&mut l, &[(99 * MS, 0), (101 * MS, 1)]), vec![(1, 101 * MS), (0, 199 * MS)]);
}

#[test]
fn trace_link_serves_at_opportunities() {
    let mut c = cfg(Some(12_000_000), 5 * MS, None);
    c.rate_trace = Some(RateTrace::Mahimahi { ms: vec![1, 2, 3, 4], once: false, opportunity_bytes: 1500 });
    let mut l = Link::with_seed(&c, 0);
    let out = arrivals_of(&mut l, &[(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]);
    assert_eq!(out, vec![(0, 6 * MS), (1, 7 * MS), (2, 8 * MS), (3, 9 * MS), (4, 10 * MS)]);
}

#[test]
fn promotion_delays_the_first_packet_after_idle() {
    let mut c = cfg(None, 10 * MS, None);
    c.promotion = Some(Promotion { idle_ns: 1000 * MS, delay_ns: 300 * MS });
    let mut l = Link::with_seed(&c, 0);
    let out = arrivals_of(&mut l, &[(0, 0), (100 * MS, 1), (500 * MS, 2), (2000 * MS, 3)]);
    // First packet: promoted 0 → 300 ms; the second waits for the same promotion; the
    // third finds the radio up; the fourth arrives after 1.5 s idle and is promoted again.
    assert_eq!(out, vec![(0, 310 * MS), (1, 310 * MS), (2, 510 * MS), (3, 2310 * MS)]);
}

/// The two directions of a half-duplex channel, built together so that they share it.
fn half_duplex(rate: u64, delay: Nanos, seed: u64) -> Vec<Link> {
    let mk = |name: &str| {
        let mut c = cfg(Some(rate), delay, Some(100));
        c.name = name.into();
        c.channel = Some("a-b".into());
        c
    };
    Link::build_all([mk("a->b"), mk("b->a")], seed)
}

/// Drive several links as an event loop does: sends `(time, link, id)` in time order,
/// each link woken at its own next event. Returns (link, id, arrival) and the drops.
fn drive(links: &mut [Link], sends: &[(Nanos, usize, u32)]) -> (Vec<(usize, u32, Nanos)>, Vec<(u32, DropReason)>) {
    let (mut out, mut drops) = (vec![], vec![]);
    let mut i = 0;
    loop {
        let next_link = (0..links.len()).filter_map(|l| links[l].next_event_time().map(|t| (t, l))).min();
        match (sends.get(i), next_link) {
            (Some(&(t, l, id)), n) if n.is_none_or(|(a, _)| t <= a) => {
                links[l].enqueue(t, p(id));
                i += 1;
            }
            (_, Some((t, l))) => {
                while let Some((pkt, at)) = links[l].pop_arrival(t) {
                    out.push((l, pkt.id, at));
                }
            }
            (None, None) => break,
            _ => unreachable!(),
        }
        for l in links.iter_mut() {
            drops.extend(l.take_drops_with_reason().map(|(d, r)| (d.id, r)));
        }
    }
    (out, drops)
}

#[test]
fn one_direction_of_a_shared_channel_waits_out_each_frames_propagation() {
    // 10 Mbit/s, 1 ms: a 1500-byte frame takes 1.2 ms on the wire and holds the channel
    // until its last bit arrives 1 ms later. Five frames queued at once: the first goes at
    // 0, each next one senses the channel busy after the 9.6-µs gap and backs off (1 slot,
    // then 1-2, 1-6, ... µs) until the channel is idle: the spacing of arrivals is at least
    // 2.2 ms, against 1.2 ms on a full-duplex link.
    let mut links = half_duplex(10_000_000, MS, 1);
    let sends: Vec<_> = (0..5).map(|i| (0, 0, i)).collect();
    let (out, drops) = drive(&mut links, &sends);
    assert!(drops.is_empty());
    assert_eq!(out.iter().map(|o| o.1).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    assert_eq!(out[0].2, 2_200_000);
    for w in out.windows(2) {
        let gap = w[1].2 - w[0].2;
        // At least the busy period; at most that plus one backoff of the tenth try
        // (the device senses every ≤ 1023 µs once its window stops growing).
        assert!((2_200_000..2_200_000 + 1_100_000).contains(&gap), "{gap}");
    }
    let full = {
        let mut l = Link::new(&cfg(Some(10_000_000), MS, Some(100)));
        drive(std::slice::from_mut(&mut l), &sends).0
    };
    assert_eq!(full.last().unwrap().2, 5 * 1_200_000 + MS);
    assert!(out.last().unwrap().2 > 4 * 2_200_000 + 2_200_000);
}

#[test]
fn both_directions_share_the_channel_one_frame_at_a_time() {
    // Both ends saturate a 10 Mbit/s, 1 ms channel for 2 s. Every frame holds the channel
    // from its first bit until its last bit arrives (1.2 + 1 ms), so the busy periods of
    // all delivered frames, from both directions, never overlap, and the two directions
    // together carry at most 2 s / 2.2 ms = 909 frames (a full-duplex link: 2 x 1666).
    let mut links = half_duplex(10_000_000, MS, 5);
    let mut sends = vec![];
    for k in 0..1000u32 {
        let t = k as u64 * 2 * MS; // 6 Mbit/s offered per direction
        sends.push((t, 0, 2 * k));
        sends.push((t, 1, 2 * k + 1));
    }
    let (out, drops) = drive(&mut links, &sends);
    let in_2s: Vec<_> = out.iter().filter(|o| o.2 <= 2000 * MS).collect();
    let mut busy: Vec<(Nanos, Nanos)> = in_2s.iter().map(|o| (o.2 - 2_200_000, o.2)).collect();
    busy.sort();
    assert!(busy.windows(2).all(|w| w[1].0 >= w[0].1), "two frames on the channel at once");
    assert!(in_2s.len() <= 909, "{}", in_2s.len());
    // Contention with backoff wastes some idle time, but the channel stays mostly busy,
    // and neither direction starves.
    assert!(in_2s.len() > 750, "{}", in_2s.len());
    let a = in_2s.iter().filter(|o| o.0 == 0).count();
    assert!(a > 300 && in_2s.len() - a > 300, "a->b {a} of {}", in_2s.len());
    // Offered 2 x 500 frames/s against ~450 frames/s of channel: the 100-packet queues
    // overflow (queue drops); every packet is either delivered or dropped.
    assert!(drops.iter().any(|d| d.1 == DropReason::Queue));
    assert_eq!(out.len() + drops.len(), 2000);
    assert_eq!(links[0].stats.tx_pkts + links[1].stats.tx_pkts, out.len() as u64);
}

#[test]
fn a_shared_channel_repeats_with_its_seed_and_drops_frames_it_cannot_send() {
    // 1 Mbit/s, 200 ms: a 1500-byte frame holds the channel for 212 ms, longer than a frame
    // can keep trying (1000 backoffs, about 0.5 s) when the other side competes; so frames
    // are dropped by the channel (MAC drops), reported with their reason and counted.
    let run = |seed: u64| {
        let mut links = half_duplex(1_000_000, 200 * MS, seed);
        let sends: Vec<_> = (0..40u32).map(|k| (k as u64 * 50 * MS, (k % 2) as usize, k)).collect();
        let r = drive(&mut links, &sends);
        (r, links[0].stats.channel_drops + links[1].stats.channel_drops)
    };
    let (a, mac) = run(1);
    assert_eq!(a, run(1).0);
    assert_ne!(a.0, run(2).0.0, "the backoff draws come from the seed");
    let channel = a.1.iter().filter(|d| d.1 == DropReason::Channel).count() as u64;
    assert!(channel > 0 && channel == mac, "{channel} channel drops, stats {mac}");
    assert_eq!(a.0.len() + a.1.len(), 40);
}

#[test]
fn links_without_a_channel_name_do_not_share_one() {
    // Two links built together but without `channel`: each direction has its own line.
    let mut links = Link::build_all([cfg(Some(10_000_000), MS, Some(100)), cfg(Some(10_000_000), MS, Some(100))], 0);
    let (out, _) = drive(&mut links, &[(0, 0, 0), (0, 1, 1)]);
    assert_eq!(out.iter().map(|o| o.2).collect::<Vec<_>>(), vec![2_200_000, 2_200_000]);
    // The same two on one channel: the second waits for the first's propagation.
    let mut links = half_duplex(10_000_000, MS, 0);
    let (out, _) = drive(&mut links, &[(0, 0, 0), (0, 1, 1)]);
    assert_eq!(out[0].2, 2_200_000);
    assert!(out[1].2 >= 4_400_000, "{out:?}");
}
