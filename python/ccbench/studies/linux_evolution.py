"""Linux TCP evolution (E. Sastre Ferrández, *Evolution of the Linux TCP stack: a simulation
study*, MSc thesis, UCLouvain, 2015): 13 congestion controls on one 5-MiB transfer under random
loss, and a 1-MiB main flow against 1-7 background flows, with the thesis's 90 % intervals.

What ccbench runs is the **full-duplex point-to-point reading** with the **Linux stack
generations as TCP profiles** (`tcp: {profile: linux-2.6.36 ...}`: the behaviours of those
kernels the simulator models, ccbench.config.profiles). ns-3's half-duplex CSMA channel is not
modelled (README.md), so the thesis's absolute numbers (kilobytes per second, minutes per
transfer) are not comparable; its rankings and trends are checked where they should survive.
"""
from __future__ import annotations

import math

import polars as pl
import yaml

from .common import STUDIES_DIR, Check, Ctx, Output, Table, fig_path, patch

NAME = "linux-evolution"
TITLE = "Evolution of the Linux TCP stack"
CAMPAIGNS = {"sim1": "sim1-single.yaml", "sim2": "sim2-background.yaml"}
INTRO = ("E. Sastre Ferrández, *Evolution of the Linux TCP stack: a simulation study*, MSc "
         "thesis, UCLouvain, 2015 (Ch. 5, Tables 5.1-5.11). **Only partly expressible today**: "
         "ccbench runs the study's topology as the full-duplex point-to-point network it "
         "describes, with each kernel as a TCP profile (IW, initial RTO, TLP, RTT resolution, "
         "SACK compression; not PRR/rate-halving, early retransmit, F-RTO, TSQ); the thesis ran ns-3's half-duplex CSMA channel "
         "(which caps a 200 Mbit/s / 98 ms link at about 10 frames per second, hence its "
         "kilobytes-per-second goodputs) and kernels 2.6.36-3.12. The published columns are "
         "printed for reference; the checks are the trends that do not depend on those two.")
Z90 = 1.645  # the thesis's normal-approximation 90 % interval
KNOWN: dict[str, str] = {
    "ranking": (
        "the profiles differ only in what the simulator models (IW, initial RTO, TLP, RTT "
        "resolution, SACK compression). At medium scale linux-2.6.36 is best in 9 of 24 (CC, N) "
        "cases (IW 3 on every flow slows the background flows as much as the main flow) and "
        "linux-3.7, 3.10 and 3.12 tie in the other 15 (identical times in all 24 cases: TLP, "
        "their only modelled difference, does not fire without random loss; ties count for the "
        "older profile). The thesis's clear 2.6.36 lead arose under "
        "ns-3's half-duplex CSMA channel and from changes the profiles do not model (PRR, early "
        "retransmit, the F-RTO rewrite, TSQ)"),
}
KNOWN_REDUCED: dict[str, str] = {}


def known(ctx: Ctx, key: str) -> str:
    return KNOWN.get(key) or (KNOWN_REDUCED.get(key, "") if ctx.reduced else "")


def published() -> dict:
    return yaml.safe_load((STUDIES_DIR / NAME / "published.yaml").read_text())


def reduce(key: str, doc: dict, scale: str) -> dict:
    """medium: 3 repeats (sim1), all 6 (sim2). reduced (CI): reno, cubic, lp at 0 and 2 % loss;
    cubic and lp at N = 2 and 8; 2 repeats."""
    A = ("sweep", "axes")
    if scale == "medium":
        return patch(doc, {"sweep.repeats": 3}) if key == "sim1" else doc
    prof = {"path": "tcp.profile", "values": ["linux-2.6.36", "linux-3.12", "current"]}
    if key == "sim1":
        return patch(doc, {A + ("cc",): {"path": "flows[0].scheme", "values": ["reno", "cubic", "lp"]},
                           A + ("loss",): {"path": "central.loss.left", "values": [0, 0.02]},
                           A + ("profile",): prof, "sweep.repeats": 2})
    return patch(doc, {A + ("cc",): {"path": "flows[0].scheme", "values": ["cubic", "lp"]},
                       A + ("clients",): [2, 8], A + ("profile",): prof, "sweep.repeats": 2})


def kernel(key: str, doc: dict, scale: str) -> dict | None:
    """This kernel has reno and cubic: the single-flow runs without loss, one repeat, 20 s (the
    5 MiB take about 3 s; the run is real time)."""
    if key != "sim1" or scale == "reduced":
        return None
    return patch(doc, {("sweep", "axes", "cc"): {"path": "flows[0].scheme", "values": ["reno", "cubic"]},
                       ("sweep", "axes", "loss"): {"path": "central.loss.left", "values": [0]},
                       ("sweep", "axes", "profile"): {"path": "tcp.profile", "values": ["current"]},
                       "sweep.repeats": 1, "duration": 20})


def main_flow(ctx: Ctx, key: str, kernel: bool = False) -> pl.DataFrame:
    """Flow 0 of every run: completion time (s), goodput (kB/s, payload / completion time),
    retransmission share."""
    idx = (ctx.kernel_index if kernel else ctx.index)[key]
    rows = []
    for r in idx.filter(pl.col("flow") == 0).iter_rows(named=True):
        d = ctx.run_dir(key, r["run_key"], kernel)
        fs = pl.read_parquet(d / "flowstats.parquet").filter(pl.col("flow") == 0).row(0, named=True)
        done = fs["completed_ns"]
        t = (done - fs["start_ns"]) / 1e9 if done is not None else float("nan")
        rows.append({"cc": r["cc"], "x": r["loss"] if key == "sim1" else r["clients"],
                     "profile": r.get("profile") or "current", "repeat": r["repeat"],
                     "delay_s": t, "goodput_kBps": fs["app_bytes"] / 1000 / t if done else float("nan"),
                     "retrans_share": fs["retrans_pkts"] / max(fs["sent_pkts"], 1)})
    return pl.DataFrame(rows)


def _ci(df, col, **eq):
    f = df
    for k, v in eq.items():
        f = f.filter(pl.col(k) == v)
    xs = [x for x in f[col].to_list() if x is not None and not math.isnan(x)]
    if not xs:
        return float("nan"), float("nan")
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, Z90 * sd / math.sqrt(len(xs))


KERNELS = {"linux-2.6.36": "2.6.36", "linux-3.7": "3.7.0", "linux-3.10": "3.10.0",
           "linux-3.12": "3.12.0"}


def analyse(ctx: Ctx) -> Output:
    out = Output()
    pub = published()
    s1 = main_flow(ctx, "sim1")
    k1 = main_flow(ctx, "sim1", True) if "sim1" in ctx.kernel_index else None
    profs = [p for p in (*KERNELS, "current") if p in set(s1["profile"].to_list())]
    losses = sorted(set(s1["x"].to_list()))
    rows = []
    for cc in dict.fromkeys(s1["cc"].to_list()):
        p = pub["sim1"][cc]
        row = [cc, f"{p['goodput_kBps']:.3f} ({p['best_kernel']})"]
        for pr in profs:
            m, h = _ci(s1, "goodput_kBps", cc=cc, x=0, profile=pr)
            row.append(f"{m:.0f} ± {h:.0f}")
        for x in losses[1:]:
            row.append(f"{_ci(s1, 'goodput_kBps', cc=cc, x=x, profile=profs[-1])[0]:.0f}")
        if k1 is not None:
            row.append(f"{_ci(k1, 'goodput_kBps', cc=cc, x=0)[0]:.0f}"
                       if k1.filter(pl.col("cc") == cc).height else "–")
        rows.append(row)
    out.tables.append(Table(
        "Simulation 1: goodput of the 5-MiB transfer, kB/s",
        ["CC", "published, CSMA (best kernel)"] + [f"ccbench {pr}, 0 % (90 % CI)" for pr in profs]
        + [f"ccbench {profs[-1]}, loss {x * 100:g} %" for x in losses[1:]]
        + (["kernel (this machine's Linux) 0 %"] if k1 is not None else []), rows,
        note="The published goodputs are capped by the half-duplex CSMA channel at about "
             "1460 B / (2 × 98.06 ms) = 7.44 kB/s; on the full-duplex link the same transfer "
             "runs at hundreds of kB/s to MB/s. Compare rankings, not values. 'kernel' is this "
             "machine's Linux on the emulation backend."))
    s2 = main_flow(ctx, "sim2")
    ns = sorted(set(s2["x"].to_list()))
    p2 = [p for p in (*KERNELS, "current") if p in set(s2["profile"].to_list())]
    rows2 = []
    for cc in dict.fromkeys(s2["cc"].to_list()):
        for n in ns:
            pk = pub["sim2_delay"].get(n, {}).get(cc, {})
            row = [cc, n]
            for pr in p2:
                if pr in KERNELS:
                    v = pk.get(KERNELS[pr])
                    row.append(f"{v[0]:g} ± {v[1]:g}" if v else "–")
                m, h = _ci(s2, "delay_s", cc=cc, x=n, profile=pr)
                row.append(f"{m:.2f} ± {h:.2f}")
            rows2.append(row)
    hdr = []
    for pr in p2:
        hdr += ([f"{KERNELS[pr]} published (CSMA)", f"{pr} ccbench"] if pr in KERNELS
                else [f"{pr} ccbench"])
    out.tables.append(Table(
        "Simulation 2: delay (s) of the 1-MiB main flow against N − 1 background flows, "
        "mean ± 90 % CI", ["CC", "N"] + hdr, rows2))
    cur = p2[-1]
    # trends that should survive the channel and the kernel version
    grow = [(cc, _ci(s2, "delay_s", cc=cc, x=ns[0], profile=cur)[0],
             _ci(s2, "delay_s", cc=cc, x=ns[-1], profile=cur)[0])
            for cc in dict.fromkeys(s2["cc"].to_list())]
    out.checks.append(Check(
        f"main flow: its delay grows as background flows are added (N {ns[0]} → {ns[-1]}, {cur})",
        all(b > a for _, a, b in grow), "; ".join(f"{c} {a:.2f} → {b:.2f} s" for c, a, b in grow)))
    slow = {cc: _ci(s2, "delay_s", cc=cc, x=ns[-1], profile=cur)[0]
            for cc in dict.fromkeys(s2["cc"].to_list())}
    out.checks.append(Check(
        f"LP (the scavenger) is the slowest main flow (N = {ns[-1]})",
        max(slow, key=slow.get) == "lp", ", ".join(f"{c} {v:.2f} s" for c, v in slow.items()),
        known=known(ctx, "lp-slowest")))
    if len(losses) > 1:
        g0 = _ci(s1, "goodput_kBps", cc="reno", x=losses[0], profile=profs[-1])[0]
        g2 = _ci(s1, "goodput_kBps", cc="reno", x=losses[1], profile=profs[-1])[0]
        out.checks.append(Check(
            "the thesis's 'random loss changes nothing visible' is the CSMA channel's doing: on "
            f"the full-duplex link {losses[1] * 100:g} % loss cuts Reno's goodput severalfold",
            g2 < g0 / 3, f"Reno {g0:.0f} → {g2:.0f} kB/s"))
    c0 = _ci(s1, "delay_s", cc="cubic", x=0, profile=profs[-1])[0]
    out.checks.append(Check(
        "on the full-duplex link the 5-MiB transfer is about one BDP and completes within "
        "~10-15 RTTs, dominated by slow start", 1.5 <= c0 <= 4.0, f"CUBIC at 0 % loss: {c0:.2f} s"))
    old = [p for p in p2 if p in KERNELS]
    if len(old) >= 2:
        best = {}
        for cc in dict.fromkeys(s2["cc"].to_list()):
            for n in ns:
                d = {pr: _ci(s2, "delay_s", cc=cc, x=n, profile=pr)[0] for pr in old}
                b = min(d, key=d.get)
                best[b] = best.get(b, 0) + 1
        tot = sum(best.values())
        out.checks.append(Check(
            "kernel ranking (simulation 2): 2.6.36 is the best kernel for most algorithms",
            best.get("linux-2.6.36", 0) > tot / 2,
            "best profile per (CC, N): " + ", ".join(f"{k} {v}/{tot}" for k, v in sorted(best.items())),
            known=known(ctx, "ranking")))
        c26 = _ci(s1, "delay_s", cc="cubic", x=0, profile="linux-2.6.36")[0]
        c312 = _ci(s1, "delay_s", cc="cubic", x=0, profile=old[-1])[0]
        out.notes.append(f"profiles, single flow at 0 % loss: CUBIC's 5 MiB takes {c26:.2f} s "
                         f"with linux-2.6.36 (IW 3) vs {c312:.2f} s with {old[-1]} (IW 10).")
    out.notes.append("Runs without random loss repeat exactly in the simulator (zero-width "
                     "intervals); the thesis's spread came from ns-3's random run numbers.")
    _figure(ctx, s2.filter(pl.col("profile") == cur), out)
    return out


def _figure(ctx: Ctx, s2: pl.DataFrame, out: Output) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for cc in dict.fromkeys(s2["cc"].to_list()):
        ns = sorted(set(s2.filter(pl.col("cc") == cc)["x"].to_list()))
        ms = [_ci(s2, "delay_s", cc=cc, x=n) for n in ns]
        ax.errorbar(ns, [m for m, _ in ms], yerr=[h for _, h in ms], marker="o", capsize=3, label=cc)
    ax.set(xlabel="clients N (N − 1 background flows)", ylabel="main-flow delay, s (90 % CI)",
           title="Simulation 2, full-duplex reading")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(fig_path(ctx, "linux-evolution.png"), dpi=90)
    plt.close(fig)
    out.figures.append(("linux-evolution.png", "Main-flow completion time against the number of "
                        "clients, mean and the thesis's 90 % interval"))
