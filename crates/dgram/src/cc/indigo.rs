//! `indigo`: Indigo, the congestion control learned by imitation (DAgger) of an oracle that
//! knows each training network's ideal window, evaluated from a TensorFlow checkpoint of its
//! trained LSTM policy (Pantheon's `indigo`; the published checkpoint is shipped).
//!
//! Sources: F. Y. Yan et al., "Pantheon: the training ground for Internet congestion-control
//! research", USENIX ATC 2018, §5 (Indigo: an LSTM maps a congestion signal vector to a window
//! change every step). Reference implementation github.com/StanfordSNR/indigo at 463d89b (the
//! commit Pantheon's `third_party/indigo` pins; Pantheon's `src/wrappers/indigo.py` runs its
//! `dagger/run_sender.py` and `env/run_receiver.py`):
//!
//! - `dagger/models.py` (`DaggerLSTM`): one `BasicLSTMCell` layer of 32 units in a
//!   `MultiRNNCell` (so its variables are `…/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/{kernel,
//!   bias}`), then `layers.linear` (`…/fully_connected/{weights,biases}`) to 5 action scores
//!   and a softmax. TensorFlow 1.x `rnn_cell_impl.py` (`BasicLSTMCell.call`; Pantheon installs
//!   TensorFlow 1.14): gates = [input, h] · kernel + bias split into i, j, f, o;
//!   c' = c·σ(f + 1) + σ(i)·tanh(j) (forget bias 1.0), h' = tanh(c')·σ(o); the output is h'.
//! - `dagger/run_sender.py` (`Learner.sample_action`): the input is the normalised state
//!   followed by a one-hot of the previous action (starting with the last action, index 4), the
//!   LSTM state starts at zero and is carried from step to step, the action is the argmax of
//!   the softmax (the same as of the scores). The checkpoint is `dagger/model/model` (TensorFlow
//!   prefix: `model.index` + `model.data-00000-of-00001`, read by `tf_checkpoint.rs`).
//! - `helpers/helpers.py` (`normalize`): the state [delay, delivery rate, send rate, cwnd] is
//!   divided by [200, 200, 200, 5000]; times are integer ms since the sender's first timestamp.
//! - `env/sender.py` (`Sender`): state_dim 4; actions `/2`, `−10`, `+0`, `+10`, `×2` on the
//!   window (packets), then at least 2; the window starts at 10 and has no upper bound; a step
//!   ends at the first acknowledgement more than 10 ms (`step_len_ms`) after the step began
//!   (the first step begins at the first acknowledgement). Per acknowledgement it updates three
//!   EWMAs (weight 1/8 on the new sample; a step's first sample initialises them and they are
//!   cleared after each action): the queuing delay RTT − min RTT (ms), the delivery rate
//!   (bytes acknowledged since the packet's send, over the ms since the acknowledgement that
//!   preceded its send, ≥ 1 ms, as BBR does; Mbit/s) and the send rate (bytes sent since the
//!   packet, over its RTT, ≥ 1 ms; Mbit/s). It sends while `seq_num − next_ack < cwnd`, where
//!   next_ack is one past the highest sequence number acknowledged, so the window is whole
//!   packets (⌈cwnd⌉) and a packet below the highest acknowledged one no longer counts.
//! - `env/receiver.py`: every datagram is acknowledged at once, echoing its send timestamp and
//!   the sender's counters.
//!
//! The published checkpoint (Apache-2.0, as its repository) is shipped in
//! `python/ccbench/schemes/indigo/` with its licence and origin; the experiment layer hands its
//! absolute path to this scheme when a flow names no other,
//! `{"scheme": "indigo", "params": {"model": "/path/dagger/model/model"}}` (the prefix, as
//! TensorFlow names a checkpoint, or its `.index` file) — a policy trained anew, say.
//!
//! Each datagram stands for one of Indigo's: the byte counts behind the delivery and send rates
//! are the sizes Indigo's own datagrams would have (`ref_datagram_bytes`: 1403 to 1436 bytes by
//! which protobuf fields are zero), not the transport's datagram size.
//!
//! Differences: the datagrams on the wire are the transport's (1472 bytes, where Indigo's are its
//! 1436-byte messages), so at a given link rate 2.4 % fewer of them pass per second and the
//! policy's rate inputs read that much lower; the window is enforced by the transport, which counts
//! bytes neither acknowledged nor declared lost — the window given to it is widened by the
//! packets below the highest acknowledgement it still counts, so the reference's rule holds —
//! and which lets one packet out whenever nothing is in flight (Indigo sends one after 1 s
//! without any event); the LSTM is evaluated in f32 like TensorFlow, but sums in another order
//! (scores agree to ~10⁻⁶; only a near-tie could choose differently).

use super::tf_checkpoint::{self, Tensor};
use super::{Acked, Control, DgramCc, Lost, ParamInfo, Params, SchemeInfo};
use std::collections::{BTreeMap, VecDeque};

/// The action set in the model's output order (`env/sender.py` `action_mapping`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Div(f64),
    Sub(f64),
    Add(f64),
    Mul(f64),
}
const ACTIONS: [Op; 5] = [Op::Div(2.0), Op::Sub(10.0), Op::Add(0.0), Op::Add(10.0), Op::Mul(2.0)];
const STATE_DIM: usize = 4;
const NORM: [f64; STATE_DIM] = [200.0, 200.0, 200.0, 5000.0];
const STEP_MS: i64 = 10;
const START_CWND: f64 = 10.0;
const MIN_CWND: f64 = 2.0;
const FORGET_BIAS: f32 = 1.0;

impl Op {
    fn apply(self, w: f64) -> f64 {
        match self {
            Op::Div(v) => w / v,
            Op::Sub(v) => w - v,
            Op::Add(v) => w + v,
            Op::Mul(v) => w * v,
        }
    }
}

/// One `BasicLSTMCell`: kernel [inputs + units, 4·units] row-major, bias [4·units].
#[derive(Clone, Debug)]
struct Layer {
    kernel: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    units: usize,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Layer {
    /// One step: updates (c, h) in place from input `x`; the output is the new h.
    fn step(&self, x: &[f32], c: &mut [f32], h: &mut [f32]) {
        let (u, cols) = (self.units, 4 * self.units);
        let mut g = self.bias.clone();
        for (r, v) in x.iter().chain(h.iter()).enumerate() {
            let row = &self.kernel[r * cols..(r + 1) * cols];
            g.iter_mut().zip(row).for_each(|(a, k)| *a += v * k);
        }
        for k in 0..u {
            let (i, j, f, o) = (g[k], g[u + k], g[2 * u + k], g[3 * u + k]);
            c[k] = c[k] * sigmoid(f + FORGET_BIAS) + sigmoid(i) * j.tanh();
            h[k] = c[k].tanh() * sigmoid(o);
        }
    }
}

/// Indigo's policy: stacked LSTM layers and a linear layer to one score per action.
#[derive(Clone, Debug)]
pub struct Policy {
    layers: Vec<Layer>,
    w: Vec<f32>,
    b: Vec<f32>,
}

/// The LSTM's (c, h) per layer.
pub type LstmState = Vec<(Vec<f32>, Vec<f32>)>;

fn find<'a>(t: &'a BTreeMap<String, Tensor>, suffixes: &[&str]) -> Result<Option<(&'a String, &'a Tensor)>, String> {
    let hits: Vec<_> = t.iter().filter(|(k, _)| suffixes.iter().any(|s| k.ends_with(&format!("/{s}")) || *k == s)).collect();
    match hits.len() {
        0 => Ok(None),
        1 => Ok(Some(hits[0])),
        _ => Err(format!("several tensors end in {}: {}", suffixes[0], hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>().join(", "))),
    }
}

fn shape_err(name: &str, t: &Tensor, want: &str) -> String {
    format!("tensor {name:?} has shape {:?}, expected {want}", t.shape)
}

impl Policy {
    /// The policy in a checkpoint's tensors (names as `DaggerLSTM` creates them, in any
    /// variable scope; `weights`/`biases` for the cell as TensorFlow before 1.5 named them).
    pub fn from_tensors(t: &BTreeMap<String, Tensor>) -> Result<Policy, String> {
        let mut layers: Vec<Layer> = Vec::new();
        let mut inputs = STATE_DIM + ACTIONS.len();
        loop {
            let cell = format!("multi_rnn_cell/cell_{}/basic_lstm_cell", layers.len());
            let Some((kn, k)) = find(t, &[&format!("{cell}/kernel"), &format!("{cell}/weights")])? else { break };
            let (bn, b) = find(t, &[&format!("{cell}/bias"), &format!("{cell}/biases")])?.ok_or_else(|| format!("{kn:?} has no bias beside it"))?;
            let [rows, cols] = k.shape[..] else { return Err(shape_err(kn, k, "[inputs + units, 4 × units]")) };
            let units = cols / 4;
            if cols % 4 != 0 || units == 0 || rows != inputs + units {
                return Err(shape_err(kn, k, &format!("[{inputs} + units, 4 × units] (input {inputs} = state {STATE_DIM} + {} actions for the first layer)", ACTIONS.len())));
            }
            if b.shape != [cols] {
                return Err(shape_err(bn, b, &format!("[{cols}]")));
            }
            layers.push(Layer { kernel: k.values.clone(), bias: b.values.clone(), inputs, units });
            inputs = units;
        }
        if layers.is_empty() {
            let names: Vec<&str> = t.keys().map(|k| k.as_str()).collect();
            return Err(format!(
                "no LSTM layer (…/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel): not Indigo's DaggerLSTM model; float tensors found: {}",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ));
        }
        let (wn, w) = find(t, &["fully_connected/weights"])?.ok_or("no output layer (…/fully_connected/weights): not Indigo's DaggerLSTM model")?;
        let (bn, b) = find(t, &["fully_connected/biases"])?.ok_or("no output-layer biases (…/fully_connected/biases)")?;
        if w.shape != [inputs, ACTIONS.len()] {
            return Err(shape_err(wn, w, &format!("[{inputs}, {}] (the LSTM's units × Indigo's {} actions)", ACTIONS.len(), ACTIONS.len())));
        }
        if b.shape != [ACTIONS.len()] {
            return Err(shape_err(bn, b, &format!("[{}]", ACTIONS.len())));
        }
        Ok(Policy { layers, w: w.values.clone(), b: b.values.clone() })
    }

    /// The policy of the checkpoint a user's path names (see `tf_checkpoint::prefix_of`).
    pub fn load(path: &str) -> Result<Policy, String> {
        let prefix = tf_checkpoint::prefix_of(path)?;
        let tensors = tf_checkpoint::read(&prefix)?;
        Policy::from_tensors(&tensors).map_err(|e| format!("{prefix:?}: {e}"))
    }

    pub fn zero_state(&self) -> LstmState {
        self.layers.iter().map(|l| (vec![0.0; l.units], vec![0.0; l.units])).collect()
    }

    /// One step of the network: the action scores for input `x`, the state carried in `st`.
    pub fn scores(&self, x: &[f32], st: &mut LstmState) -> Vec<f32> {
        let mut input = x.to_vec();
        for (l, (c, h)) in self.layers.iter().zip(st.iter_mut()) {
            debug_assert_eq!(input.len(), l.inputs);
            l.step(&input, c, h);
            input.clone_from(h);
        }
        let n = self.b.len();
        let mut s = self.b.clone();
        for (r, v) in input.iter().enumerate() {
            s.iter_mut().zip(&self.w[r * n..(r + 1) * n]).for_each(|(a, w)| *a += v * w);
        }
        s
    }
}

/// Index of the largest score (the first on a tie, as numpy's argmax).
fn argmax(s: &[f32]) -> usize {
    s.iter().enumerate().fold(0, |best, (i, v)| if *v > s[best] { i } else { best })
}

/// What a packet carried, as Indigo's `Data` datagram does: its send time and the sender's
/// counters when it left.
#[derive(Clone, Copy)]
struct SentInfo {
    send_ms: i64,
    sent_bytes: u64,
    delivered: u64,
    delivered_ms: i64,
    /// The size of the reference's datagram for this packet (`ref_datagram_bytes`).
    bytes: u64,
}

/// Bytes of Indigo's `Data` datagram (`env/datagram.proto`, proto3) with these fields: the
/// 1400-byte payload string (tag, 2-byte length, data) and each non-zero field (proto3 leaves
/// zeros out): seq_num, send_ts, delivered_time fixed32 (5 bytes with the tag), sent_bytes,
/// delivered fixed64 (9). The sender counts these in `sent_bytes` and the receiver echoes them
/// as `ack_bytes` (`env/sender.py`, `env/receiver.py`): 1436 once every field is non-zero.
fn ref_datagram_bytes(seq: u64, send_ms: i64, sent_bytes: u64, delivered_ms: i64, delivered: u64) -> u64 {
    let nz = |v: bool, n: u64| if v { n } else { 0 };
    1403 + nz(seq != 0, 5) + nz(send_ms != 0, 5) + nz(sent_bytes != 0, 9) + nz(delivered_ms != 0, 5) + nz(delivered != 0, 9)
}

pub struct Indigo {
    policy: Policy,
    lstm: LstmState,
    prev_action: usize,
    cwnd: f64,
    epoch_ns: Option<u64>,
    /// Per packet from `base`: what it carried, None once acknowledged or lost.
    sent: VecDeque<Option<SentInfo>>,
    base: u64,
    next_seq: u64,
    next_ack: u64,
    sent_bytes: u64,
    delivered: u64,
    delivered_ms: i64,
    min_rtt: f64,
    ewma: Option<[f64; 3]>,
    step_start_ms: Option<i64>,
    /// Bytes the transport counts in flight, after the last call.
    tx_inflight: u64,
    pkt: u64,
    steps: u64,
    last_state: [f64; STATE_DIM],
}

impl Indigo {
    fn new(policy: Policy) -> Indigo {
        Indigo {
            lstm: policy.zero_state(),
            policy,
            prev_action: ACTIONS.len() - 1,
            cwnd: START_CWND,
            epoch_ns: None,
            sent: VecDeque::new(),
            base: 0,
            next_seq: 0,
            next_ack: 0,
            sent_bytes: 0,
            delivered: 0,
            delivered_ms: 0,
            min_rtt: f64::INFINITY,
            ewma: None,
            step_start_ms: None,
            tx_inflight: 0,
            pkt: 1500,
            steps: 0,
            last_state: [0.0; STATE_DIM],
        }
    }

    /// Integer ms since the sender's first timestamp (`helpers.py` `curr_ts_ms`).
    fn ms(&mut self, now_ns: u64) -> i64 {
        let e = *self.epoch_ns.get_or_insert(now_ns);
        (now_ns.saturating_sub(e) / 1_000_000) as i64
    }

    fn take(&mut self, seq: u64) -> Option<SentInfo> {
        let i = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        let info = self.sent.get_mut(i)?.take();
        while let Some(None) = self.sent.front() {
            self.sent.pop_front();
            self.base += 1;
        }
        info
    }

    /// The step's end: feed the state, apply the chosen action.
    fn act(&mut self, e: [f64; 3]) {
        let state = [e[0], e[1], e[2], self.cwnd];
        let mut x = [0f32; STATE_DIM + ACTIONS.len()];
        for k in 0..STATE_DIM {
            x[k] = (state[k] / NORM[k]) as f32;
        }
        x[STATE_DIM + self.prev_action] = 1.0;
        let scores = self.policy.scores(&x, &mut self.lstm);
        let a = argmax(&scores);
        self.prev_action = a;
        self.cwnd = ACTIONS[a].apply(self.cwnd).max(MIN_CWND);
        self.last_state = state;
        self.steps += 1;
    }
}

impl DgramCc for Indigo {
    fn name(&self) -> &'static str {
        "indigo"
    }
    fn on_start(&mut self, now_ns: u64) {
        self.ms(now_ns);
    }
    fn on_send(&mut self, now_ns: u64, seq: u64, bytes: u32, inflight: u64) {
        let send_ms = self.ms(now_ns);
        let ref_bytes = ref_datagram_bytes(seq, send_ms, self.sent_bytes, self.delivered_ms, self.delivered);
        let info = SentInfo { send_ms, sent_bytes: self.sent_bytes, delivered: self.delivered, delivered_ms: self.delivered_ms, bytes: ref_bytes };
        if self.sent.is_empty() {
            self.base = seq;
        }
        while self.base + (self.sent.len() as u64) < seq {
            self.sent.push_back(None);
        }
        self.sent.push_back(Some(info));
        self.sent_bytes += ref_bytes;
        self.next_seq = self.next_seq.max(seq + 1);
        self.pkt = bytes as u64;
        self.tx_inflight = inflight;
    }
    fn on_ack(&mut self, a: &Acked) {
        self.tx_inflight = a.inflight_bytes;
        let Some(p) = self.take(a.seq) else { return };
        self.next_ack = self.next_ack.max(a.seq + 1);
        let now = self.ms(a.now_ns);
        let rtt = (now - p.send_ms) as f64;
        self.min_rtt = self.min_rtt.min(rtt);
        self.delivered += p.bytes;
        self.delivered_ms = now;
        let delivery = 0.008 * (self.delivered - p.delivered) as f64 / ((now - p.delivered_ms).max(1) as f64);
        let send = 0.008 * (self.sent_bytes - p.sent_bytes) as f64 / rtt.max(1.0);
        let sample = [rtt - self.min_rtt, delivery, send];
        let e = match self.ewma {
            None => sample,
            Some(o) => [0, 1, 2].map(|k| 0.875 * o[k] + 0.125 * sample[k]),
        };
        self.ewma = Some(e);
        let start = *self.step_start_ms.get_or_insert(now);
        if now - start > STEP_MS {
            self.act(e);
            self.ewma = None;
            self.step_start_ms = Some(now);
        }
    }
    fn on_loss(&mut self, l: &Lost) {
        self.tx_inflight = l.inflight_bytes;
        self.take(l.seq);
    }
    fn control(&self) -> Control {
        // Indigo counts seq_num − next_ack packets against ⌈cwnd⌉; the transport counts bytes it
        // has not seen acknowledged or lost. Widen (or narrow) by the difference.
        let outstanding = self.next_seq.saturating_sub(self.next_ack) * self.pkt;
        let extra = self.tx_inflight as i128 - outstanding as i128;
        let w = (self.cwnd.ceil() as i128) * self.pkt as i128 + extra;
        Control { rate_bps: None, cwnd_bytes: Some(w.clamp(0, u64::MAX as i128) as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_pkts", self.cwnd));
        out.push(("action", self.prev_action as f64));
        out.push(("delay_ms", self.last_state[0]));
        out.push(("delivery_mbps", self.last_state[1]));
        out.push(("send_mbps", self.last_state[2]));
        out.push(("steps", self.steps as f64));
    }
}

static PARAMS: &[ParamInfo] = &[ParamInfo {
    name: "model",
    default: f64::NAN,
    doc: "a string: the TensorFlow checkpoint of Indigo's trained policy — its prefix (indigo/dagger/model/model from github.com/StanfordSNR/indigo) or its .index file, with the .data-00000-of-00001 file beside it; the experiment layer uses the published one it ships (python/ccbench/schemes/indigo/model) when a flow names none",
}];

fn make(p: &Params, _seed: u64) -> Result<Box<dyn DgramCc>, String> {
    let path = super::file_param(
        p,
        "indigo",
        "model",
        "the TensorFlow checkpoint of Indigo's policy, dagger/model/model (with model.index and \
         model.data-00000-of-00001) from github.com/StanfordSNR/indigo; ccbench ships it as \
         python/ccbench/schemes/indigo/model",
    )?;
    let policy = Policy::load(&path).map_err(|e| format!("parameter \"model\" of scheme \"indigo\": {e}"))?;
    Ok(Box::new(Indigo::new(policy)))
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "indigo",
    description: "Indigo's trained LSTM policy (window changes every 10 ms) evaluated from a TensorFlow checkpoint (the published one shipped)",
    source: "Yan et al., USENIX ATC 2018 §5; github.com/StanfordSNR/indigo dagger/models.py, dagger/run_sender.py, env/sender.py, helpers/helpers.py",
    params: PARAMS,
    make,
}];

#[cfg(test)]
#[path = "indigo_tests.rs"]
mod tests;
