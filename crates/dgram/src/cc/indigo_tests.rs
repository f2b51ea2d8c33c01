//! Tests of `indigo.rs`: the LSTM against hand-computed values, the checkpoint's tensors found
//! by name, the state Indigo feeds, a synthetic policy's behaviour on the test link, clear
//! errors, and (opt-in) the published model.

use super::super::make as mk;
use super::super::testlink::{Link, MS, SEC};
use super::super::tf_checkpoint::tests::save;
use super::*;

fn cleanup(prefix: &str) {
    std::fs::remove_dir_all(std::path::Path::new(prefix).parent().unwrap()).ok();
}

/// One cell step, gates i, j, f, o in that order and forget bias 1, against the values worked
/// out by hand: x = 1, c = 0.2, h = 0.4; i = 0.72, j = 0.52, f = −0.12, o = 2.04;
/// c' = 0.2·σ(0.88) + σ(0.72)·tanh(0.52) = 0.4626688, h' = tanh(c')·σ(2.04) = 0.3825185.
#[test]
fn lstm_cell_matches_hand_computation() {
    let l = Layer { kernel: vec![0.5, 1.0, -0.5, 2.0, 0.3, -0.7, 0.2, 0.1], bias: vec![0.1, -0.2, 0.3, 0.0], inputs: 1, units: 1 };
    let (mut c, mut h) = (vec![0.2f32], vec![0.4f32]);
    l.step(&[1.0], &mut c, &mut h);
    assert!((c[0] - 0.462_668_8).abs() < 1e-6, "{}", c[0]);
    assert!((h[0] - 0.382_518_5).abs() < 1e-6, "{}", h[0]);
}

/// A 9-input, 2-unit model written as a checkpoint under Indigo's variable names (with the
/// `global/cnt` counter the reference saves too) loads by name, and two forward steps give the
/// hand-computed scores: unit 0 sees the input's last element through the same gate weights
/// as above (recurrent weights 0.3, −0.7, 0.2, 0.1), unit 1 stays 0. Step 1: c = σ(0.6)·tanh(0.8)
/// = 0.4287395, h = 0.3560775; step 2: c = 0.6378327, h = 0.4983385; scores = b + h·w.
#[test]
fn checkpoint_policy_forward_matches_hand_computation() {
    let (u, inp) = (2usize, 9usize);
    let mut kernel = vec![0f32; (inp + u) * 4 * u];
    let put = |k: &mut Vec<f32>, row: usize, gate: usize, v: f32| k[row * 4 * u + gate * u] = v;
    for (g, v) in [0.5, 1.0, -0.5, 2.0].into_iter().enumerate() {
        put(&mut kernel, 8, g, v);
    }
    for (g, v) in [0.3, -0.7, 0.2, 0.1].into_iter().enumerate() {
        put(&mut kernel, inp, g, v); // row of h[0]
    }
    let mut bias = vec![0f32; 4 * u];
    bias[0] = 0.1;
    bias[u] = -0.2;
    bias[2 * u] = 0.3;
    let w = [1.0, -1.0, 0.0, 2.0, 0.5, 9.0, 9.0, 9.0, 9.0, 9.0]; // row of h[1] must not matter
    let b = [0.0, 0.1, 0.2, 0.0, 0.0];
    let prefix = save(
        &format!("ccbench-indigo-fwd-{}", std::process::id()),
        &[
            ("global/cnt", &[], &[42.0]),
            ("global/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel", &[inp + u, 4 * u], &kernel),
            ("global/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias", &[4 * u], &bias),
            ("global/fully_connected/weights", &[u, 5], &w),
            ("global/fully_connected/biases", &[5], &b),
        ],
    );
    let p = Policy::load(&format!("{prefix}.index")).unwrap();
    cleanup(&prefix);
    assert_eq!(p.layers.len(), 1);
    let mut st = p.zero_state();
    let x = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    let hand = [(0.428_739_5f32, 0.356_077_5f32), (0.637_832_7, 0.498_338_5)];
    for (c, h) in hand {
        let s = p.scores(&x, &mut st);
        assert!((st[0].0[0] - c).abs() < 1e-6 && (st[0].1[0] - h).abs() < 1e-6, "{:?}", st);
        assert_eq!(st[0].1[1], 0.0);
        for k in 0..5 {
            assert!((s[k] - (b[k] + h * w[k])).abs() < 1e-6, "{s:?}");
        }
        assert_eq!(argmax(&s), 3);
    }
}

/// A constant policy (zero weights; the output biases pick one action).
fn constant_policy(action: usize) -> Policy {
    let (u, inp) = (1, STATE_DIM + ACTIONS.len());
    let mut b = vec![0f32; 5];
    b[action] = 1.0;
    let l = Layer { kernel: vec![0.0; (inp + u) * 4 * u], bias: vec![0.0; 4 * u], inputs: inp, units: u };
    Policy { layers: vec![l], w: vec![0.0; 5], b }
}

/// The state of a step, worked out by hand from `env/sender.py`: two packets leave at 0 ms,
/// counted as Indigo's datagrams would be whatever the transport's size (1500 here): the first
/// has every field zero but its payload (1403 bytes), the second adds seq_num and sent_bytes
/// (1417). The first is acknowledged at 20 ms (RTT 20, delay 0, delivery 0.008·1403/20 =
/// 0.5612, send 0.008·2820/20 = 1.128 Mbit/s; the step begins), the second at 32 ms (delay 12,
/// delivery 0.008·2820/32 = 0.705, send 0.008·1417/32 = 0.35425): 32 − 20 > 10 ends the step
/// with the EWMAs 1.5 ms, 0.579175 and 1.03128125 Mbit/s and the window 10; `/2` gives 5.
#[test]
fn the_step_feeds_the_reference_state() {
    let mut s = Indigo::new(constant_policy(0));
    s.on_start(0);
    s.on_send(0, 0, 1500, 1500);
    s.on_send(0, 1, 1500, 3000);
    let ack = |seq: u64, ms: u64, inflight: u64| Acked {
        now_ns: ms * MS,
        seq,
        bytes: 1500,
        sent_ns: 0,
        recv_ns: 0,
        rtt_ns: ms * MS,
        delivered_bytes: 1500 * (seq + 1),
        inflight_bytes: inflight,
    };
    s.on_ack(&ack(0, 20, 1500));
    assert_eq!(s.steps, 0);
    s.on_ack(&ack(1, 32, 0));
    assert_eq!(s.steps, 1);
    assert_eq!(s.sent_bytes, 1403 + 1417);
    assert_eq!(ref_datagram_bytes(7, 3, 1403, 2, 1403), 1436); // every field set
    let want = [1.5, 0.579175, 1.03128125, 10.0];
    assert!(s.last_state.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12), "{:?}", s.last_state);
    assert_eq!((s.cwnd, s.prev_action), (5.0, 0));
    assert!(s.ewma.is_none());
    assert_eq!(s.control().cwnd_bytes, Some(5 * 1500));
    // /2 again would give 2.5; the window is ⌈2.5⌉ = 3 packets; never below 2
    s.act([0.0; 3]);
    assert_eq!(s.control().cwnd_bytes, Some(3 * 1500));
    s.act([0.0; 3]);
    assert_eq!(s.cwnd, 2.0);
}

/// The window counts packets from one past the highest acknowledgement, as Indigo's does: a
/// packet below it that the transport still counts widens the transport's window.
#[test]
fn the_window_counts_from_the_highest_acknowledgement() {
    let mut s = Indigo::new(constant_policy(2));
    s.on_start(0);
    for q in 0..10 {
        s.on_send(0, q, 1000, 1000 * (q + 1));
    }
    assert_eq!(s.control().cwnd_bytes, Some(10 * 1000));
    // packet 5 acknowledged, 0..4 not (yet): Indigo counts 6..9 (4), the transport 9 packets
    let a = Acked { now_ns: 5 * MS, seq: 5, bytes: 1000, sent_ns: 0, recv_ns: 0, rtt_ns: 5 * MS, delivered_bytes: 1000, inflight_bytes: 9000 };
    s.on_ack(&a);
    assert_eq!(s.control().cwnd_bytes, Some(10 * 1000 + 5 * 1000));
}

/// A policy that holds the queuing delay near `target_ms`: the one unit's cell input is
/// 10·(delay − target) (saturated), input and output gates open, the forget gate shut, so h is
/// +0.76 above the target and −0.76 below; the output turns that into `−10` or `+10`.
fn delay_target_policy(target_ms: f32) -> Vec<(&'static str, Vec<usize>, Vec<f32>)> {
    let (u, inp) = (1usize, 9usize);
    let mut kernel = vec![0f32; (inp + u) * 4];
    kernel[1] = 10.0 * 200.0; // row 0 (delay / 200), gate j
    let bias = vec![30.0, -10.0 * target_ms, -30.0, 30.0];
    vec![
        ("global/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel", vec![inp + u, 4], kernel),
        ("global/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias", vec![4], bias),
        ("global/fully_connected/weights", vec![1, 5], vec![0.0, 10.0, 0.0, -10.0, 0.0]),
        ("global/fully_connected/biases", vec![5], vec![-100.0, 0.0, -100.0, 0.0, -100.0]),
    ]
}

fn run_policy(target_ms: f32) -> (f64, f64, f64) {
    let t = delay_target_policy(target_ms);
    let refs: Vec<(&str, &[usize], &[f32])> = t.iter().map(|(n, s, v)| (*n, &s[..], &v[..])).collect();
    let prefix = save(&format!("ccbench-indigo-run-{}-{target_ms}", std::process::id()), &refs);
    let cc = mk("indigo", &serde_json::json!({ "model": prefix }), 1).unwrap();
    cleanup(&prefix);
    let mut l = Link::new(20.0, 40.0, 500, 1);
    let f = l.add(cc, 0, 20 * SEC);
    l.run(20 * SEC);
    let q = |p| l.owd_ms(f, 5 * SEC, 20 * SEC, p) - 20.0;
    (l.tput_bps(f, 5 * SEC, 20 * SEC) / 20e6, q(0.5), l.var_mean(f, "steps", 19 * SEC, 20 * SEC))
}

/// Loaded from a checkpoint file and run on 20 Mbit/s, 40 ms, a synthetic delay-target policy
/// keeps the link busy and the queue near its target: the policy's decisions reach the window.
#[test]
fn a_synthetic_policy_steers_the_queue() {
    let (t20, q20, steps) = run_policy(20.0);
    let (t60, q60, _) = run_policy(60.0);
    eprintln!("delay-target policy: 20 ms -> utilisation {t20:.3}, median queue {q20:.1} ms; 60 ms -> {t60:.3}, {q60:.1} ms; {steps} steps in 20 s");
    assert!(t20 > 0.85 && t60 > 0.95, "{t20} {t60}");
    assert!((q20 - 20.0).abs() < 12.0, "{q20}");
    assert!((q60 - 60.0).abs() < 15.0, "{q60}");
    // one step per ~11 ms: more than 10 ms between the acknowledgements that end them
    assert!((1500.0..1820.0).contains(&steps), "{steps}");
}

/// Without a checkpoint, or with a foreign one, the error names the parameter, the file and
/// what is wrong.
#[test]
fn clear_errors_for_missing_or_foreign_checkpoints() {
    let e = mk("indigo", &serde_json::Value::Null, 1).err().unwrap();
    assert!(e.contains("\"model\"") && e.contains("dagger/model/model"), "{e}");
    let e = mk("indigo", &serde_json::json!({"model": 3}), 1).err().unwrap();
    assert!(e.contains("must be a string"), "{e}");
    let e = mk("indigo", &serde_json::json!({"model": "/nonexistent/model"}), 1).err().unwrap();
    assert!(e.contains("\"model\"") && e.contains("not a TensorFlow checkpoint"), "{e}");
    let prefix = save(&format!("ccbench-indigo-foreign-{}", std::process::id()), &[("dense/kernel", &[2, 2], &[1.0, 2.0, 3.0, 4.0])]);
    let e = mk("indigo", &serde_json::json!({ "model": prefix }), 1).err().unwrap();
    assert!(e.contains(&prefix) && e.contains("not Indigo's DaggerLSTM model") && e.contains("dense/kernel"), "{e}");
    cleanup(&prefix);
    let t = delay_target_policy(20.0);
    let mut refs: Vec<(&str, &[usize], &[f32])> = t.iter().map(|(n, s, v)| (*n, &s[..], &v[..])).collect();
    refs[2] = ("global/fully_connected/weights", &[5, 1], &t[2].2);
    let prefix = save(&format!("ccbench-indigo-shape-{}", std::process::id()), &refs);
    let e = mk("indigo", &serde_json::json!({ "model": prefix }), 1).err().unwrap();
    assert!(e.contains("fully_connected/weights") && e.contains("[5, 1]") && e.contains("expected [1, 5]"), "{e}");
    cleanup(&prefix);
}

/// The published checkpoint, shipped in python/ccbench/schemes/indigo/ (`$CCBENCH_INDIGO_MODEL`
/// names another): one layer of 32 units; on a 100 Mbit/s, 20 ms link with a 1000-packet buffer
/// it fills the link with a short queue (measured at 463d89b: utilisation 1.000, queue median
/// and p95 2.8 ms, window 190 packets ≈ BDP + 23, no loss).
#[test]
fn published_indigo_model() {
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/ccbench/schemes/indigo/model");
    let path = std::env::var("CCBENCH_INDIGO_MODEL").unwrap_or_else(|_| shipped.to_string());
    let p = Policy::load(&path).unwrap();
    assert_eq!((p.layers.len(), p.layers[0].units, p.layers[0].inputs), (1, 32, 9));
    let mut l = Link::new(100.0, 20.0, 1000, 1);
    let f = l.add(mk("indigo", &serde_json::json!({ "model": path }), 1).unwrap(), 0, 10 * SEC);
    l.run(10 * SEC);
    let t = l.tput_bps(f, 2 * SEC, 10 * SEC) / 100e6;
    let (q50, q95) = (l.owd_ms(f, 2 * SEC, 10 * SEC, 0.5) - 10.0, l.owd_ms(f, 2 * SEC, 10 * SEC, 0.95) - 10.0);
    let w = l.var_mean(f, "cwnd_pkts", 2 * SEC, 10 * SEC);
    eprintln!("published Indigo, 100 Mbit/s, 20 ms: utilisation {t:.3}, queue median {q50:.1} ms, p95 {q95:.1} ms, mean window {w:.0} packets, {} losses", l.losses(f));
    assert!(t > 0.95, "utilisation {t}");
    assert!(q95 < 10.0, "p95 queue {q95} ms");
}
