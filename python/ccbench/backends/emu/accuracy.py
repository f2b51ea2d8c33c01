"""The accuracy verdict of an emulation run: which timing and loss conditions outside the
model make its results untrustworthy. Thresholds are justified in docs/emulation.md
("Accuracy flags")."""
from __future__ import annotations

MAX_RELEASE_P99_NS = 250_000
MAX_RELEASE_P99_RTT_FRAC = 0.01
MAX_RELEASE_P999_RTT_FRAC = 0.05
MAX_STEAL_FRAC = 0.05
MAX_ENGINE_CPU_FRAC = 0.95


def release_limits(exp: dict) -> tuple[int, int]:
    """(p99, p99.9) release-error limits in ns: p99 at most 250 µs and 1 % of the smallest
    base RTT, p99.9 at most 5 % of it (twice the p99 cap without an RTT)."""
    rtts = [f.get("base_rtt_ns") for f in exp["flows"] if f.get("base_rtt_ns")]
    min_rtt = min(rtts) if rtts else None
    p99_lim = MAX_RELEASE_P99_NS
    if min_rtt:
        p99_lim = min(p99_lim, int(MAX_RELEASE_P99_RTT_FRAC * min_rtt))
    p999_lim = int(MAX_RELEASE_P999_RTT_FRAC * min_rtt) if min_rtt else 2 * MAX_RELEASE_P99_NS
    return p99_lim, p999_lim


def accuracy(exp: dict, meta: dict) -> dict:
    """The run's accuracy verdict: flags and the thresholds behind them."""
    p99_lim, p999_lim = release_limits(exp)
    re_ = meta["release_error_ns"]
    reasons = []
    if re_["p99"] > p99_lim:
        reasons.append(f"release error p99 {re_['p99'] / 1e3:.0f} µs > {p99_lim / 1e3:.0f} µs")
    if re_["p999"] > p999_lim:
        reasons.append(f"release error p99.9 {re_['p999'] / 1e3:.0f} µs > {p999_lim / 1e3:.0f} µs")
    if meta.get("tun_drops"):
        reasons.append(f"{meta['tun_drops']} packets dropped by TUN devices (outside the model)")
    c = meta["engine"].get("counters", {})
    if c.get("tun_write_errors"):
        reasons.append(f"{c['tun_write_errors']} TUN write errors")
    if c.get("dead_fds"):
        reasons.append(f"{c['dead_fds']} TUN fds failed during the run")
    steal = meta.get("steal_frac")
    if steal is not None and steal > MAX_STEAL_FRAC:
        reasons.append(f"host steal time {steal * 100:.1f} % > {MAX_STEAL_FRAC * 100:.0f} %")
    busy = meta.get("engine_busy_frac")
    if busy is None:
        busy = meta.get("engine_cpu_frac", 0)
    if busy > MAX_ENGINE_CPU_FRAC:
        reasons.append(f"engine busy {busy * 100:.0f} % of its core (CPU time minus idle "
                       f"spinning) > {MAX_ENGINE_CPU_FRAC * 100:.0f} % (saturated)")
    for b in meta.get("bpf", []):
        r = b.get("repairs") or {}
        n = r.get("replayed_ssthresh", 0) + r.get("restored_cwnd", 0)
        if n:
            reasons.append(f"the kernel did not run {b.get('cc')}'s loss response {n} time(s); "
                           "repaired on the next ACK, after one ACK's worth of runaway window "
                           "(docs/bpf-schemes.md, 'Programs the kernel does not run')")
    # a command scheme's program may speak UDP (no socket for the TCP monitor to find): the
    # engine saw its data packets
    seen = {f.get("flow"): f.get("connected") for f in meta.get("engine_flows", [])}
    for a in meta.get("agents", []):
        connected = a.get("connected", True) or (a.get("command") and seen.get(a.get("flow")))
        if a.get("error") or not connected:
            reasons.append(f"flow {a['flow'] + 1}: {a.get('error') or 'did not connect'}")
    return {"accurate": not reasons, "inaccurate_reasons": reasons,
            "thresholds": {"release_p99_ns": p99_lim, "release_p999_ns": p999_lim,
                           "steal_frac": MAX_STEAL_FRAC, "engine_cpu_frac": MAX_ENGINE_CPU_FRAC,
                           "tun_drops": 0}}
