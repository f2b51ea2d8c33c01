"""The congestion-control catalogue: every registered scheme run alone in one standard scenario.

    ccbench catalogue -o docs            # → docs/cc-catalogue.md, docs/cc-catalogue/<name>.png

Everything in the markdown comes from the simulator's registry (`ccbench.schemes()`: name,
description, source, parameters) and from the runs (`ccbench.analysis`); nothing is typed in by
hand. The only per-scheme knowledge kept here is *which* of a scheme's exported `cc_<var>`
columns is worth drawing next to cwnd (`KEY_VARS`); a scheme without an entry, or whose run does
not export the variable, gets a cwnd-only plot.

The scenario (`SCENARIO`): one flow alone on a 20 Mbit/s central link with 20 ms one-way delay
(base RTT 40 ms), a droptail queue of 1 BDP at each end, 30 s, samples every 10 ms, no per-packet
records. A scheme whose registry entry says it needs ECN (`needs_ecn`, Linux
TCP_CONG_NEEDS_ECN: DCTCP) gets the same queue with an ECN step-marking threshold
(`ECN_THRESHOLD`), and its entry says so.
"""
from __future__ import annotations

import concurrent.futures as cf
import copy
import math
import multiprocessing
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

SCENARIO: dict = {
    "duration": 30,
    "seed": 1,
    "packets": False,
    "sample-interval": "10ms",
    "central": {"rate": "20Mbit", "delay": "20ms", "queue": "1bdp"},
    "flows": [{"scheme": "reno"}],
}

# DCTCP's marking threshold K: the DCTCP paper (Alizadeh et al., SIGCOMM 2010, §3.4) needs
# K > C·RTT/7 ≈ 0.14 BDP for full utilisation; 0.17 BDP (RFC 8257 §3.1 leaves K to the operator)
# rounds that up.
ECN_THRESHOLD = "0.17bdp"

# Mode encodings of the schemes' `cc_mode` samples (the enums in crates/sim/src/cc/<name>.rs).
_BBR_MODES = {0: "STARTUP", 1: "DRAIN", 2: "PROBE_BW", 3: "PROBE_RTT"}


@dataclass(frozen=True)
class KeyVar:
    """A CC state variable drawn beside cwnd."""

    column: str  # cc_<column> in the flows table
    label: str  # axis / legend text, with its unit
    scale: float = 1.0  # multiply the sample by this (e.g. bit/s → Mbit/s)
    same_axis: bool = False  # a window in packets: drawn on the cwnd axis instead of a twin axis


@dataclass(frozen=True)
class Plan:
    var: KeyVar | None = None
    modes: tuple[str, dict] | None = None  # (column, {value: name}) drawn as background bands


KEY_VARS: dict[str, Plan] = {
    "bbr": Plan(KeyVar("btl_bw", "btl_bw: max-filtered bottleneck bandwidth (Mbit/s)", 1e-6),
                ("mode", _BBR_MODES)),
    "bbr-shallow": Plan(KeyVar("btl_bw", "btl_bw: max-filtered bottleneck bandwidth (Mbit/s)", 1e-6),
                        ("mode", _BBR_MODES)),
    "bbr3": Plan(KeyVar("btl_bw", "btl_bw: bottleneck bandwidth estimate (Mbit/s)", 1e-6),
                 ("mode", _BBR_MODES)),
    "dctcp": Plan(KeyVar("alpha", "alpha: EWMA of the fraction of CE-marked packets")),
    "cubic": Plan(KeyVar("w_max", "W_max: window before the last reduction (packets)", same_axis=True)),
    "bic": Plan(KeyVar("last_max_cwnd", "last_max_cwnd (packets)", same_axis=True)),
    "westwood": Plan(KeyVar("bw_est_bps", "bw_est: ACK-rate bandwidth estimate (Mbit/s)", 1e-6)),
    "htcp": Plan(KeyVar("alpha", "alpha: additive increase per RTT (packets)")),
    "highspeed": Plan(KeyVar("ai", "a(w): additive increase per RTT (packets)")),
    "vegas": Plan(KeyVar("diff", "diff = cwnd·(RTT − base RTT)/RTT (packets queued)")),
    "veno": Plan(KeyVar("backlog", "backlog N = cwnd·(RTT − base RTT)/RTT (packets)")),
    "yeah": Plan(KeyVar("queue", "queue: estimated packets in the bottleneck queue"),
                 ("mode", {0: "fast (STCP)", 1: "slow (Reno)"})),
    "lp": Plan(KeyVar("sowd_us", "sowd: LP's smoothed one-way-delay estimate (exported µs ÷ 1000)", 1e-3)),
    "nv": Plan(KeyVar("avg_rtt_us", "RTT of the last measurement (ms)", 1e-3)),
    "illinois": Plan(KeyVar("alpha", "alpha: additive increase per RTT (packets)")),
    "hldg": Plan(KeyVar("gbar_max_ms", "ḡ_max: smoothed max-RTT gradient (ms)"),
                 ("mode", {0: "DELAY", 1: "LOSS", 2: "PROBE"})),
    "cdg": Plan(KeyVar("gbar_max_ms", "ḡ_max: smoothed max-RTT gradient (ms)")),
    "copa": Plan(KeyVar("d_q_ms", "d_q: queueing-delay estimate (ms)"),
                 ("mode", {0: "slow start", 1: "default", 2: "competitive"})),
    # datagram schemes (docs/datagram-schemes.md); the PCC family and fixed: rate_mbps (default)
    "ledbat": Plan(KeyVar("qdelay_ms", "queuing delay estimate (ms)")),
    "ledbat-utp": Plan(KeyVar("qdelay_ms", "queuing delay estimate (ms)")),
    "scream": Plan(KeyVar("target_mbps", "target media rate (Mbit/s)")),
    "sprout": Plan(KeyVar("forecast_100ms_pkts", "forecast: packets deliverable in 100 ms", same_axis=True)),
    "verus": Plan(KeyVar("d_est_ms", "D_est: delay target on the profile (ms)")),
    "quic-cubic": Plan(KeyVar("w_max_pkts", "W_max (packets)", same_axis=True)),
    "quic-cubic-chromium": Plan(KeyVar("w_max_pkts", "W_max (packets)", same_axis=True)),
    "aimd-dgram": Plan(KeyVar("losses", "loss events")),
    "indigo": Plan(KeyVar("delay_ms", "queuing delay input: EWMA of RTT − min RTT (ms)")),
}

_BAND_COLOURS = ("#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#9467bd")


def fmt_default(v, shipped: str | None = None) -> str:
    """A parameter default as people write it: integers without a point, others to 6 digits; a
    file parameter as the file the package ships for it, or "required"."""
    if shipped is not None:
        from .config.schemes import SCHEMES_DIR
        return "shipped " + Path("schemes", Path(shipped).relative_to(SCHEMES_DIR)).as_posix()
    if isinstance(v, bool):
        return str(v).lower()
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "required"    # no default (e.g. tao's rule-table path)
    if isinstance(v, (int, float)) and math.isfinite(v) and float(v) == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def scenario_doc(scheme: dict) -> dict:
    """The standard scenario's experiment document for one registry entry."""
    doc = copy.deepcopy(SCENARIO)
    doc["flows"][0]["scheme"] = scheme["name"]
    if scheme.get("needs_ecn"):
        doc["central"]["queue"] = {"limit": SCENARIO["central"]["queue"],
                                   "ecn-threshold": ECN_THRESHOLD}
    return doc


def _is_dgram(exp: dict) -> bool:
    return exp["flows"][0].get("transport") == "dgram"


def _central_link(exp: dict) -> dict:
    """The bottleneck link the flow's data crosses (r1->r2)."""
    flow = exp["flows"][0]
    bl = {int(x) for x in exp.get("bottleneck_links") or []}
    lid = next(int(x) for x in flow["path"] if int(x) in bl)
    return next(l for l in exp["links"] if int(l["id"]) == lid)


def measure(res) -> dict:
    """The catalogue's numbers for one run (definitions: docs/metrics.md)."""
    import polars as pl

    from . import analysis

    exp = res.experiment
    link = _central_link(exp)
    ps = analysis.pantheon_summary(res).filter(pl.col("flow") == "all").to_dicts()[0]
    tot = analysis.analyze(res, grouping="total", interval=0.5).summary.to_dicts()[0]
    util = analysis.link_utilization(res, [link["id"]]).to_dicts()[0]
    q = analysis.queue_timeseries(res, [link["id"]])
    fl = res.flows
    fs = res.flowstats
    return {
        "tput_mbps": ps["avg_tput_mbps"],
        "utilization_pct": util["utilization_pct"],
        "mean_qdelay_ms": q["qdelay_ms"].mean() if q.height else None,
        "mean_queue_pkts": q["packets"].mean() if q.height else None,
        "mean_delay_ms": tot["mean_delay_ms"],
        "p95_delay_ms": ps["p95_delay_ms"],
        "loss_pct": tot["loss_pct"],
        "retrans_pkts": int(fs["retrans_pkts"].sum()) if fs is not None else 0,
        "mean_cwnd": fl["cwnd"].mean() if fl.height and (fl["cwnd"] > 0).any() else None,
    }


def _bands(ax, t, v, names: dict) -> list:
    """Shade the runs of constant mode; returns legend handles for the modes that occur."""
    from matplotlib.patches import Patch

    seen = {}
    i = 0
    n = len(v)
    while i < n:
        j = i
        while j + 1 < n and v[j + 1] == v[i]:
            j += 1
        val = v[i]
        if val is not None and not (isinstance(val, float) and math.isnan(val)):
            k = int(val)
            colour = _BAND_COLOURS[k % len(_BAND_COLOURS)]
            end = t[j + 1] if j + 1 < n else t[j]
            ax.axvspan(t[i], end, color=colour, alpha=0.12, lw=0)
            seen.setdefault(k, colour)
        i = j + 1
    return [Patch(color=c, alpha=0.3, label=f"mode {names.get(k, k)}") for k, c in sorted(seen.items())]


def plot(res, name: str, path: Path, plan: Plan | None) -> str:
    """cwnd (and ssthresh) over time, with the scheme's key variable; returns what it shows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fl = res.flows.sort("time_ns")
    t = (fl["time_ns"].cast(float) / 1e9).to_list()
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=80)
    handles = []
    shows = ["cwnd (packets)"]
    if _is_dgram(res.experiment):
        shows = ["packets in flight (black)"]
        handles += ax.plot(t, fl["inflight"].to_list(), color="black", lw=1.0, label="in flight",
                           zorder=3)
        if (fl["cwnd"] > 0).any():
            handles += ax.plot(t, fl["cwnd"].to_list(), color="grey", lw=0.8, label="window")
            shows.append("the scheme's window (grey)")
        if plan is None or not plan.var:
            plan = Plan(var=KeyVar("rate_mbps", "sending rate (Mbit/s)", 1.0, False))
    else:
        handles += ax.plot(t, fl["cwnd"].to_list(), color="black", lw=1.0, label="cwnd", zorder=3)
    ss = fl["ssthresh"].to_list()
    if any(s is not None for s in ss):
        ss = [math.nan if s is None else s for s in ss]
        handles += ax.plot(t, ss, color="grey", lw=0.8, ls="--", label="ssthresh")
        shows.append("ssthresh (dashed; absent while infinite)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("packets")
    ax.set_xlim(0, res.experiment["duration_ns"] / 1e9)
    ax.grid(alpha=0.3)
    plan = plan or Plan()
    if plan.modes and f"cc_{plan.modes[0]}" in fl.columns:
        col, names = plan.modes
        handles += _bands(ax, t, fl[f"cc_{col}"].to_list(), names)
        shows.append(f"the `{col}` as background bands ({', '.join(names.values())})")
    var = plan.var
    if var and f"cc_{var.column}" in fl.columns:
        y = [math.nan if v is None else v * var.scale for v in fl[f"cc_{var.column}"].to_list()]
        if var.same_axis:
            handles += ax.plot(t, y, color="tab:red", lw=0.9, ls=":", label=var.label)
            shows.append(f"`{var.column}` on the same axis (red, dotted): {var.label}")
        else:
            ax2 = ax.twinx()
            ax.set_zorder(ax2.get_zorder() + 1)  # cwnd in front of the twin variable
            ax.patch.set_visible(False)
            handles += ax2.plot(t, y, color="tab:red", lw=0.7, alpha=0.7, label=var.label)
            ax2.set_ylabel(var.column, color="tab:red")
            ax2.tick_params(axis="y", colors="tab:red")
            shows.append(f"`{var.column}` on the right axis (red): {var.label}")
    exp = res.experiment
    link = _central_link(exp)
    ax.set_title(f"{name}: one flow alone, {link['rate_bps'] / 1e6:g} Mbit/s, "
                 f"{exp['flows'][0]['base_rtt_ns'] / 1e6:g} ms base RTT, "
                 f"{_queue_text(link['queue'])} queue", fontsize=9)
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=3, frameon=False)
    fig.savefig(path, dpi=80, bbox_inches="tight")
    plt.close(fig)
    return "; ".join(shows)


def run_one(scheme: dict, png: str, keep: str | None = None) -> dict:
    """Run one scheme in the scenario, draw its plot, return its numbers (a pool task)."""
    from . import api, config

    exp = config.resolve(scenario_doc(scheme), schemes=api.registry())
    tmp = None
    if keep:
        out = Path(keep) / scheme["name"]
    else:
        tmp = tempfile.mkdtemp(prefix="ccbench-catalogue-")
        out = Path(tmp) / scheme["name"]
    try:
        res = api.run(exp, out, packets=False)
        shows = plot(res, scheme["name"], Path(png), KEY_VARS.get(scheme["name"]))
        m = measure(res)
        link = _central_link(res.experiment)
        return {"name": scheme["name"], "metrics": m, "shows": shows, "png": png,
                "queue": link["queue"], "wall_s": res.meta["wall_time_s"],
                "base_rtt_ms": res.experiment["flows"][0]["base_rtt_ns"] / 1e6,
                "mss": res.experiment["mss"], "rate_bps": link["rate_bps"]}
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _n(v, spec=".2f") -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _anchor(name: str) -> str:
    return "scheme-" + name


def _queue_text(q: dict) -> str:
    s = f"droptail, {q['packets']} packets"
    if q.get("ecn_threshold_packets") is not None:
        s += f", ECN CE-marking at ≥ {q['ecn_threshold_packets']} packets waiting"
    return s


def markdown(schemes: list[dict], runs: dict[str, dict], png_rel: str) -> str:
    """The catalogue page. `runs` maps a scheme name to `run_one`'s result."""
    out = _scenario_md(schemes, runs) + _comparison_md(schemes, runs)
    for s in schemes:
        out += _scheme_md(s, runs[s["name"]], png_rel)
    return "\n".join(out)


def _scenario_md(schemes: list[dict], runs: dict[str, dict]) -> list[str]:
    """The page's title and its scenario section (lines)."""
    import yaml

    out = []
    w = out.append
    any_run = next(iter(runs.values()))
    rate = any_run["rate_bps"]
    rtt = any_run["base_rtt_ms"]
    bdp_bytes = rate * rtt / 1e3 / 8
    plain_names = [s["name"] for s in schemes if not s.get("needs_ecn")]
    plain = runs[plain_names[0]] if plain_names else any_run
    ecn = [s["name"] for s in schemes if s.get("needs_ecn")]
    w("# Congestion-control catalogue\n")
    w("<!-- Generated by `ccbench catalogue -o docs` (python/ccbench/catalogue.py). Do not edit: "
      "rerun the command. -->\n")
    n_dg = sum(s.get("transport") == "dgram" for s in schemes)
    w(f"Every congestion-control scheme in the simulator's registry ({len(schemes) - n_dg} TCP "
      f"schemes and {n_dg} datagram schemes — Pantheon's user-space algorithms on ccbench's "
      "datagram transport, [datagram.md](datagram.md); one more, `tao`, needs a rule table of "
      "the user's and is not run here; `indigo` runs its published checkpoint, shipped; `ccbench schemes` "
      "lists them, `ccbench schemes NAME` shows one), each "
      "run alone in one standard scenario. Descriptions, sources and parameters come from the "
      "registry; plots and numbers from the runs. Regenerate this page with `ccbench catalogue "
      "-o docs`.\n")
    w("## The scenario\n")
    w(f"One flow, left to right, alone on a {rate / 1e6:g} Mbit/s central link with "
      f"{SCENARIO['central']['delay']} one-way delay (side links unlimited, zero delay): base RTT "
      f"{rtt:g} ms, BDP {bdp_bytes / 1e3:g} kB = {math.ceil(bdp_bytes / (any_run['mss'] + 52))} "
      f"packets of {any_run['mss'] + 52} bytes. Queue at each end of the central link: "
      f"{_queue_text(plain['queue'])} (1 BDP). {SCENARIO['duration']} s, seed {SCENARIO['seed']}, "
      f"samples every {SCENARIO['sample-interval']}, no per-packet records (metrics from the "
      "per-interval aggregates).\n")
    if ecn:
        eq = runs[ecn[0]]["queue"]
        w(f"Schemes that need ECN ({', '.join(ecn)}) negotiate it and get the same queue with "
          f"an ECN step-marking threshold of {ECN_THRESHOLD} ({_queue_text(eq)}).\n")
    w("As an experiment file (`ccbench run` it with any scheme):\n")
    w("```yaml\n" + yaml.safe_dump(SCENARIO, sort_keys=False, allow_unicode=True).rstrip() + "\n```\n")
    w("Columns: **throughput** = delivered bits over first..last arrival (Pantheon's average "
      "throughput); **utilisation** = bits the central link serialised over the flow's active "
      "period ÷ its rate (`analysis.link_utilization`); **queueing delay** = time average of the "
      f"central queue's backlog ÷ link rate over the {SCENARIO['sample-interval']} samples "
      "(`analysis.queue_timeseries`); "
      "**one-way delay** = mean and 95th percentile over delivered packets (propagation "
      f"{rtt / 2:g} ms + serialisation + queueing); **loss** = bytes dropped on the path / bytes "
      "sent (ccbench's one loss figure; packets still in flight at the end are not loss); "
      "**retransmitted** = data segments sent again; **mean cwnd** = mean of the "
      f"{SCENARIO['sample-interval']} cwnd samples. "
      "Definitions: [metrics.md](metrics.md).\n")
    return out


def _comparison_md(schemes: list[dict], runs: dict[str, dict]) -> list[str]:
    """The comparison table, one row per scheme (lines)."""
    out = []
    w = out.append
    w("## Comparison\n")
    w("| scheme | throughput Mbit/s | utilisation % | mean queueing delay ms | mean queue packets | "
      "mean one-way delay ms | p95 one-way delay ms | loss % | retransmitted packets | mean cwnd packets |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for s in schemes:
        m = runs[s["name"]]["metrics"]
        mark = " (ECN)" if s.get("needs_ecn") else ""
        w(f"| [{s['name']}](#{_anchor(s['name'])}){mark} | {_n(m['tput_mbps'])} | "
          f"{_n(m['utilization_pct'], '.1f')} | {_n(m['mean_qdelay_ms'])} | "
          f"{_n(m['mean_queue_pkts'], '.1f')} | {_n(m['mean_delay_ms'])} | "
          f"{_n(m['p95_delay_ms'])} | {_n(m['loss_pct'], '.3f')} | {m['retrans_pkts']} | "
          f"{_n(m['mean_cwnd'], '.1f')} |")
    w("")
    return out


def _scheme_md(s: dict, r: dict, png_rel: str) -> list[str]:
    """One scheme's section: description, source, notes, parameters, plot, measurements."""
    out = []
    w = out.append
    m = r["metrics"]
    w(f'<a id="{_anchor(s["name"])}"></a>\n')
    w(f"## {s['name']}\n")
    w(_cell(s["description"]) + "\n")
    w(f"**Source:** {_cell(s['source'])}\n")
    notes = []
    if s.get("needs_ecn"):
        notes.append(f"Needs ECN: in this scenario its flow negotiates ECN and the central "
                     f"queue marks at {ECN_THRESHOLD} ({_queue_text(r['queue'])}).")
    if s.get("transport") == "dgram":
        notes.append("A datagram scheme ([datagram.md](datagram.md), "
                     "[datagram-schemes.md](datagram-schemes.md)): sequenced UDP datagrams at the "
                     "rate and/or under the window it sets, nothing retransmitted; the plot "
                     "shows packets in flight and its sending rate.")
    if s.get("non_sack_recovery"):
        notes.append("Uses non-SACK (RFC 6582 NewReno) loss recovery whatever the `sack` setting.")
    for n in notes:
        w(f"**Note:** {n}\n")
    if s["params"]:
        w(f"Parameters ({len(s['params'])}; set as `scheme: {{name: {s['name']}, "
          f"{s['params'][0]['name']}: …}}`):\n")
        w("| parameter | default | meaning |")
        w("|---|--:|---|")
        for p in s["params"]:
            w(f"| `{p['name']}` | {fmt_default(p['default'], p.get('shipped'))} | {_cell(p['doc'])} |")
        w("")
    else:
        w("Parameters: none.\n")
    w(f"![{s['name']}: cwnd over time]({png_rel}/{s['name']}.png)\n")
    w(f"The plot shows {r['shows']}.\n")
    w(f"Measured: throughput {_n(m['tput_mbps'])} Mbit/s, utilisation "
      f"{_n(m['utilization_pct'], '.1f')} %, mean queueing delay {_n(m['mean_qdelay_ms'])} ms "
      f"(mean queue {_n(m['mean_queue_pkts'], '.1f')} packets), one-way delay mean "
      f"{_n(m['mean_delay_ms'])} ms / p95 {_n(m['p95_delay_ms'])} ms, loss "
      f"{_n(m['loss_pct'], '.3f')} % (bytes dropped / bytes sent), {m['retrans_pkts']} "
      f"retransmitted packets, mean cwnd "
      f"{_n(m['mean_cwnd'], '.1f')} packets.\n")
    return out


def generate(out_dir: str | Path = "docs", names: list[str] | None = None, *, jobs: int = 2,
             keep: str | Path | None = None, progress=None) -> Path:
    """Run the scenario for every registered scheme (or `names`), write
    `<out_dir>/cc-catalogue/<name>.png` and `<out_dir>/cc-catalogue.md`; returns the .md path.

    `jobs` worker processes run the schemes in parallel; `keep` keeps each run's results
    directory under `<keep>/<name>` (default: temporary, deleted)."""
    from . import api

    # every TCP scheme and every datagram scheme that runs without a file of the user's (tao
    # evaluates a rule table the user brings: docs/datagram-schemes.md; indigo's checkpoint is
    # shipped)
    registry = api.schemes() + [d for d in api.dgram_schemes()
                                if all(p["default"] is not None or "shipped" in p
                                       for p in d["params"])]
    if names:
        by_name = {s["name"].lower(): s for s in registry}
        unknown = [n for n in names if n.lower() not in by_name]
        if unknown:
            raise ValueError(f"unknown scheme(s) {', '.join(unknown)}; known schemes: "
                             + ", ".join(s["name"] for s in registry))
        schemes = [by_name[n.lower()] for n in dict.fromkeys(names)]
    else:
        schemes = registry
    out_dir = Path(out_dir)
    png_dir = out_dir / "cc-catalogue"
    png_dir.mkdir(parents=True, exist_ok=True)
    if not names:  # the full catalogue: drop plots of schemes the registry no longer has
        for old in png_dir.glob("*.png"):
            if old.stem not in {s["name"] for s in schemes}:
                old.unlink()
    runs: dict[str, dict] = {}
    args = [(s, str(png_dir / f"{s['name']}.png"), None if keep is None else str(keep))
            for s in schemes]
    if jobs <= 1:
        for a in args:
            runs[a[0]["name"]] = run_one(*a)
            if progress:
                progress(runs[a[0]["name"]])
    else:
        ctx = multiprocessing.get_context("spawn")  # no fork of a process holding polars threads
        with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futs = {pool.submit(run_one, *a): a[0]["name"] for a in args}
            for f in cf.as_completed(futs):
                r = f.result()
                runs[r["name"]] = r
                if progress:
                    progress(r)
    md = out_dir / "cc-catalogue.md"
    tmp = md.with_suffix(".md.tmp")
    tmp.write_text(markdown(schemes, runs, png_dir.name))
    tmp.replace(md)
    return md
