//! The scenario both backends run: duration, seed, sampling, nodes, links, paths, flows and
//! their workloads — the resolved experiment of docs/architecture.md, as the Python config
//! layer writes it, every value validated and in base units. Endpoint settings (`tcp`) are a
//! type parameter: the simulator reads its TCP configuration, the emulator leaves them to the
//! kernel's sysctls and routes (and ignores them here).

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::app::OnOff;
use crate::arrivals::ArrivalsConfig;
use crate::LinkConfig;

/// The scheme name of a non-TCP constant-bit-rate source.
pub const UDP_SCHEME: &str = "udp";
/// The scheme name of a latency probe: ping-like packets at a fixed interval, echoed by the
/// receiving host (Flent's RRUL pings; docs/experiment-file.md "Latency probes").
pub const PROBE_SCHEME: &str = "probe";
/// Smallest probe packet: IPv4 + UDP headers and a 4-byte sequence number.
pub const PROBE_MIN_SIZE: u32 = 32;

/// A probe flow's packets (`"probe"` of a resolved flow).
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct ProbeConfig {
    /// Time between two probes.
    pub interval_ns: u64,
    /// IP bytes of a probe and of its echo.
    pub size: u32,
}

/// How a flow's endpoints talk: TCP (and the [`UDP_SCHEME`] constant-bit-rate source), or the
/// congestion-controlled datagram transport (crates/dgram, docs/datagram.md), whose `scheme`
/// then names a datagram scheme (`"transport": "dgram"` in the resolved flow).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Tcp,
    Dgram,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(bound(deserialize = "T: DeserializeOwned + Default"))]
pub struct Scenario<T = serde::de::IgnoredAny> {
    pub duration_ns: u64,
    #[serde(default)]
    pub seed: u64,
    /// TCP payload bytes per segment.
    #[serde(default = "default_mss")]
    pub mss: u32,
    /// Flow/queue samples and per-interval aggregates.
    #[serde(default = "default_sample_interval")]
    pub sample_interval_ns: u64,
    #[serde(default = "default_true")]
    pub record_packets: bool,
    /// One-way-delay histogram bucket.
    #[serde(default = "default_hist_bucket")]
    pub hist_bucket_ns: u64,
    /// Endpoint settings of every flow without its own.
    #[serde(default)]
    pub tcp: T,
    #[serde(default)]
    pub nodes: Vec<Node>,
    pub links: Vec<LinkConfig>,
    #[serde(default)]
    pub bottleneck_links: Vec<u32>,
    pub flows: Vec<Flow<T>>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Node {
    pub name: String,
    #[serde(default)]
    pub kind: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(bound(deserialize = "T: DeserializeOwned"))]
pub struct Flow<T = serde::de::IgnoredAny> {
    pub id: u32,
    #[serde(default)]
    pub label: String,
    /// Congestion control, or [`UDP_SCHEME`] for a constant-bit-rate source; a datagram
    /// scheme when `transport` is [`Transport::Dgram`].
    pub scheme: String,
    #[serde(default)]
    pub transport: Transport,
    #[serde(default)]
    pub params: serde_json::Value,
    #[serde(default)]
    pub src: String,
    #[serde(default)]
    pub dst: String,
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Finite flow: application bytes to send; `None` = bulk until stopped.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Link ids crossed by data, in order.
    pub path: Vec<u32>,
    /// Link ids crossed by ACKs, in order.
    pub rev_path: Vec<u32>,
    /// ECN for this flow: `None` = negotiated iff the CC needs it (DCTCP), `Some(true)` =
    /// negotiated, `Some(false)` = never (a peer without ECN; DCTCP falls back to dctcp-reno).
    #[serde(default)]
    pub ecn: Option<bool>,
    /// Endpoint settings of this flow (its group's `tcp:` merged over the top-level one);
    /// `None` = the scenario's `tcp`.
    #[serde(default = "none")]
    pub tcp: Option<T>,
    /// Application-limited stream: the application writes at this rate (bit/s of payload for
    /// TCP; of IP packets for `udp`, the constant bit rate). `None` = as fast as TCP sends.
    #[serde(default)]
    pub app_rate_bps: Option<u64>,
    /// On/off source: the application is active for `on_ns`, idle for `off_ns`, repeatedly.
    #[serde(default)]
    pub onoff: Option<OnOff>,
    /// Short-flow arrivals: this flow is the template (hosts, route, scheme) of a group whose
    /// connections arrive as a Poisson process; it sends nothing itself.
    #[serde(default)]
    pub arrivals: Option<ArrivalsConfig>,
    /// A BPF scheme (`scheme: {bpf: ...}`, docs/bpf-schemes.md): its program, and for the
    /// simulator the shared object built from it.
    #[serde(default)]
    pub bpf: Option<BpfProgram>,
    /// A latency probe ([`PROBE_SCHEME`]): its interval and packet size.
    #[serde(default)]
    pub probe: Option<ProbeConfig>,
}

/// A BPF congestion control of a flow (`"bpf"` of a resolved flow).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct BpfProgram {
    /// The program: C source (`.c`) or a BPF object (`.o`).
    pub path: String,
    /// The congestion-control name it registers (`.name`), when read from the source.
    #[serde(default)]
    pub cc: Option<String>,
    /// The program compiled natively for the simulator (a shared object; the simulator backend
    /// builds it at run time, ccbench.backends.bpfsim). `None` on the kernel backend.
    #[serde(default)]
    pub sim_object: Option<String>,
    /// The program's global variables recorded into the flows table as `cc_<name>` columns
    /// (`record:` of the scheme; dots become underscores). The simulator build exports them
    /// through `ccbench_record_value(i)`.
    #[serde(default)]
    pub record: Vec<String>,
}

fn none<T>() -> Option<T> {
    None
}
fn default_mss() -> u32 {
    1448
}
fn default_sample_interval() -> u64 {
    10_000_000
}
fn default_true() -> bool {
    true
}
fn default_hist_bucket() -> u64 {
    10_000
}

impl<T> Scenario<T> {
    /// Structural checks the config layer should already guarantee; they protect the event
    /// loop from indexing errors when the backend is driven directly.
    pub fn validate(&self) -> Result<(), String> {
        if self.duration_ns == 0 {
            return Err("duration_ns must be > 0".into());
        }
        if self.sample_interval_ns == 0 || self.hist_bucket_ns == 0 {
            return Err("sample_interval_ns and hist_bucket_ns must be > 0".into());
        }
        for (i, l) in self.links.iter().enumerate() {
            if l.id as usize != i {
                return Err(format!("links[{i}].id is {} (ids must equal positions)", l.id));
            }
            if l.rate_bps == Some(0) {
                return Err(format!("links[{i}].rate_bps is 0 (use null for unlimited)"));
            }
            check_conditions(l).map_err(|e| format!("links[{i}] ({}): {e}", l.name))?;
            check_channel(l, &self.links).map_err(|e| format!("links[{i}] ({}): {e}", l.name))?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.id as usize != i {
                return Err(format!("flows[{i}].id is {} (ids must equal positions)", f.id));
            }
            for (what, path) in [("path", &f.path), ("rev_path", &f.rev_path)] {
                if path.is_empty() {
                    return Err(format!("flows[{i}].{what} is empty"));
                }
                for w in path.windows(2) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    if a >= self.links.len() || b >= self.links.len() {
                        return Err(format!("flows[{i}].{what} names an unknown link"));
                    }
                    if self.links[a].dst != self.links[b].src {
                        return Err(format!(
                            "flows[{i}].{what}: link {} ends at {} but link {} starts at {}",
                            a, self.links[a].dst, b, self.links[b].src
                        ));
                    }
                }
                if path.iter().any(|&l| l as usize >= self.links.len()) {
                    return Err(format!("flows[{i}].{what} names an unknown link"));
                }
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(format!("flows[{i}].stop_ns must be after start_ns"));
                }
            }
            check_workload(f).map_err(|e| format!("flows[{i}]: {e}"))?;
        }
        for &b in &self.bottleneck_links {
            if b as usize >= self.links.len() {
                return Err(format!("bottleneck link {b} does not exist"));
            }
        }
        Ok(())
    }
}

/// Combinations of application models the engine supports.
fn check_workload<T>(f: &Flow<T>) -> Result<(), String> {
    if f.app_rate_bps == Some(0) {
        return Err("app_rate_bps is 0".into());
    }
    if let Some(o) = f.onoff {
        if o.on_ns == 0 {
            return Err("onoff.on_ns is 0".into());
        }
    }
    if (f.scheme == PROBE_SCHEME) != f.probe.is_some() {
        return Err("a probe flow (scheme \"probe\") and its probe settings go together".into());
    }
    if let Some(p) = f.probe {
        if p.interval_ns == 0 || !(PROBE_MIN_SIZE..=65_535).contains(&p.size) {
            return Err(format!("probe: interval_ns must be > 0 and size in {PROBE_MIN_SIZE}..=65535"));
        }
        if f.bytes.is_some() || f.app_rate_bps.is_some() || f.onoff.is_some() || f.arrivals.is_some() {
            return Err("a probe flow sends its probes only: no bytes, app_rate_bps, onoff or arrivals".into());
        }
    }
    let udp = f.scheme == UDP_SCHEME;
    if udp && f.app_rate_bps.is_none() {
        return Err("a udp flow needs app_rate_bps (its constant bit rate)".into());
    }
    if udp && f.bytes.is_some() {
        return Err("a udp flow has no byte count".into());
    }
    if f.bytes.is_some() && (f.app_rate_bps.is_some() || f.onoff.is_some()) {
        return Err("bytes and app_rate_bps/onoff are exclusive".into());
    }
    if let Some(a) = &f.arrivals {
        if !(a.rate_per_s.is_finite() && a.rate_per_s > 0.0) {
            return Err(format!("arrivals.rate_per_s = {} must be > 0", a.rate_per_s));
        }
        a.size.validate()?;
        if udp || f.bytes.is_some() || f.app_rate_bps.is_some() || f.onoff.is_some() {
            return Err("arrivals take their sizes from arrivals.size: no udp, bytes, app_rate_bps or onoff".into());
        }
    }
    Ok(())
}

/// A link on a shared half-duplex channel: a constant rate and delay, the same on every link
/// of the channel (one medium has one rate and one propagation delay, as an ns-3 CsmaChannel),
/// and none of the per-direction elements a shared medium has no place for.
fn check_channel(l: &LinkConfig, all: &[LinkConfig]) -> Result<(), String> {
    let Some(name) = &l.channel else { return Ok(()) };
    if name.is_empty() {
        return Err("channel is an empty name".into());
    }
    if l.rate_bps.is_none() {
        return Err(format!("channel {name}: a shared channel needs a rate (rate_bps is null)"));
    }
    let unsupported = [
        ("rate_trace", l.rate_trace.is_some()),
        ("delay_schedule", l.delay_schedule.is_some()),
        ("jitter", l.jitter.is_some()),
        ("reorder", l.reorder),
        ("promotion", l.promotion.is_some()),
    ];
    if let Some((what, _)) = unsupported.iter().find(|(_, on)| *on) {
        return Err(format!("channel {name}: {what} is not supported on a shared half-duplex channel"));
    }
    for o in all.iter().filter(|o| o.channel.as_deref() == Some(name.as_str())) {
        if (o.rate_bps, o.delay_ns) != (l.rate_bps, l.delay_ns) {
            return Err(format!(
                "channel {name}: links {} and {} differ in rate_bps or delay_ns (one medium has one rate and one delay)",
                l.name, o.name
            ));
        }
    }
    Ok(())
}

/// Ranges the config layer guarantees for delay schedules, loss and rate traces.
fn check_conditions(l: &LinkConfig) -> Result<(), String> {
    use crate::{DelaySchedule, LossConfig, RateTrace};
    let prob = |name: &str, x: f64| {
        if (0.0..=1.0).contains(&x) { Ok(()) } else { Err(format!("{name} = {x} is not a probability")) }
    };
    match &l.loss {
        Some(LossConfig::Bernoulli { p }) => prob("loss p", *p)?,
        Some(LossConfig::Gilbert { p, r, h, k }) => {
            prob("gilbert p", *p)?;
            prob("gilbert r", *r)?;
            prob("gilbert h", *h)?;
            prob("gilbert k", *k)?;
        }
        None => {}
    }
    match &l.delay_schedule {
        Some(DelaySchedule::Walk { base_ns, step_ns, max_ns, .. }) => {
            if base_ns > max_ns || (base_ns + step_ns > *max_ns && base_ns < step_ns) {
                return Err("delay walk cannot move within [0, max]".into());
            }
        }
        Some(DelaySchedule::Series { points, .. }) => {
            if points.is_empty() || points.windows(2).any(|w| w[1].0 <= w[0].0) {
                return Err("delay series must be non-empty with increasing times".into());
            }
        }
        _ => {}
    }
    match &l.rate_trace {
        Some(RateTrace::Mahimahi { ms, opportunity_bytes, .. }) => {
            if ms.is_empty() || ms.last() == Some(&0) || ms.windows(2).any(|w| w[1] < w[0]) {
                return Err("mahimahi trace must be non-empty, non-decreasing, last > 0".into());
            }
            if *opportunity_bytes == 0 {
                return Err("opportunity_bytes is 0".into());
            }
        }
        Some(RateTrace::Series { points }) => {
            if points.is_empty() || points.windows(2).any(|w| w[1].0 <= w[0].0) {
                return Err("rate series must be non-empty with increasing times".into());
            }
        }
        None => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json(s: &str) -> Result<Scenario, String> {
        let e: Scenario = serde_json::from_str(s).map_err(|e| format!("resolved experiment: {e}"))?;
        e.validate()?;
        Ok(e)
    }

    fn doc(path: &str, extra: &str) -> String {
        format!(
            r#"{{"duration_ns": 1000000000, "seed": 3, "mss": 1448 {extra},
            "links": [
              {{"id": 0, "name": "a1->r1", "src": "a1", "dst": "r1", "rate_bps": null, "delay_ns": 1000,
                "queue": {{"kind": "droptail", "packets": 1000, "bytes": null}}}},
              {{"id": 1, "name": "r1->a1", "src": "r1", "dst": "a1", "rate_bps": 1000000, "delay_ns": 1000,
                "queue": {{"kind": "droptail", "packets": null, "bytes": 15000}}}}],
            "flows": [{{"id": 0, "scheme": "reno", "params": {{}}, "start_ns": 0,
                        "path": {path}, "rev_path": [1]}}]}}"#
        )
    }

    #[test]
    fn parses_the_resolved_schema_with_defaults() {
        let e = from_json(&doc("[0]", "")).unwrap();
        assert_eq!(e.seed, 3);
        assert_eq!(e.sample_interval_ns, 10_000_000);
        assert!(e.record_packets);
        assert_eq!(e.mss, 1448);
        assert_eq!(e.links[0].rate_bps, None);
        assert_eq!(
            e.links[1].queue,
            crate::QueueConfig::droptail(None, Some(15000))
        );
    }

    #[test]
    fn a_shared_channel_needs_one_constant_rate_and_delay() {
        let with = |a: &str, b: &str| doc("[0]", "").replace("\"queue\": {\"kind\": \"droptail\", \"packets\": 1000", &format!("{a}\"queue\": {{\"kind\": \"droptail\", \"packets\": 1000"))
            .replace("\"queue\": {\"kind\": \"droptail\", \"packets\": null", &format!("{b}\"queue\": {{\"kind\": \"droptail\", \"packets\": null"));
        let err = from_json(&with("\"channel\": \"c\", ", "\"channel\": \"c\", ")).unwrap_err();
        assert!(err.contains("links[0] (a1->r1): channel c: a shared channel needs a rate"), "{err}");
        let ok = with("\"channel\": \"c\", ", "\"channel\": \"c\", ").replace("\"rate_bps\": null", "\"rate_bps\": 1000000");
        from_json(&ok).unwrap();
        let err = from_json(&ok.replacen("\"delay_ns\": 1000", "\"delay_ns\": 2000", 1)).unwrap_err();
        assert!(err.contains("differ in rate_bps or delay_ns"), "{err}");
        let err = from_json(&ok.replacen("\"channel\": \"c\", ", "\"channel\": \"c\", \"reorder\": true, ", 1)).unwrap_err();
        assert!(err.contains("reorder is not supported"), "{err}");
    }

    #[test]
    fn rejects_broken_paths_and_unknown_queue_kinds() {
        let err = from_json(&doc("[0, 0]", "")).unwrap_err();
        assert!(err.contains("link 0 ends at r1 but link 0 starts at a1"), "{err}");
        let err = from_json(&doc("[7]", "")).unwrap_err();
        assert!(err.contains("unknown link"), "{err}");
        let bad = doc("[0]", "").replace("droptail\", \"packets\": 1000", "sfq\", \"packets\": 1000");
        let err = from_json(&bad).unwrap_err();
        assert!(err.contains("sfq"), "{err}");
    }
}
