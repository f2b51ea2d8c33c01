"""Linux TCP evolution (E. Sastre Ferrández, *Evolution of the Linux TCP stack: a simulation
study*, MSc thesis, UCLouvain, 2015): 13 congestion controls on one 5-MiB transfer under random
loss, and a 1-MiB main flow against 1-7 background flows, with the thesis's 90 % intervals.

What ccbench runs is the **full-duplex point-to-point reading** with **today's Linux stack**:
the thesis's kernels (2.6.36-3.12) and ns-3's half-duplex CSMA channel are not modelled
(README.md says what is missing), so its absolute numbers (kilobytes per second, minutes per
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
         "describes, with today's Linux TCP; the thesis ran ns-3's half-duplex CSMA channel "
         "(which caps a 200 Mbit/s / 98 ms link at about 10 frames per second, hence its "
         "kilobytes-per-second goodputs) and kernels 2.6.36-3.12. The published columns are "
         "printed for reference; the checks are the trends that do not depend on those two.")
Z90 = 1.645  # the thesis's normal-approximation 90 % interval
KNOWN: dict[str, str] = {}
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
    if key == "sim1":
        return patch(doc, {A + ("cc",): {"path": "flows[0].scheme", "values": ["reno", "cubic", "lp"]},
                           A + ("loss",): {"path": "central.loss.left", "values": [0, 0.02]},
                           "sweep.repeats": 2})
    return patch(doc, {A + ("cc",): {"path": "flows[0].scheme", "values": ["cubic", "lp"]},
                       A + ("n",): [2, 8], "sweep.repeats": 2})


def kernel(key: str, doc: dict, scale: str) -> dict | None:
    """This kernel has reno and cubic: the single-flow runs at 0 and 2 % loss, one repeat."""
    if key != "sim1" or scale == "reduced":
        return None
    return patch(doc, {("sweep", "axes", "cc"): {"path": "flows[0].scheme", "values": ["reno", "cubic"]},
                       ("sweep", "axes", "loss"): {"path": "central.loss.left", "values": [0, 0.02]},
                       "sweep.repeats": 1})


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
        rows.append({"cc": r["cc"], "x": r["loss"] if key == "sim1" else r["n"], "repeat": r["repeat"],
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


def analyse(ctx: Ctx) -> Output:
    out = Output()
    pub = published()
    s1 = main_flow(ctx, "sim1")
    k1 = main_flow(ctx, "sim1", True) if "sim1" in ctx.kernel_index else None
    losses = sorted(set(s1["x"].to_list()))
    rows = []
    for cc in dict.fromkeys(s1["cc"].to_list()):
        p = pub["sim1"][cc]
        row = [cc, f"{p['goodput_kBps']:.3f} ({p['best_kernel']})"]
        for x in losses:
            m, h = _ci(s1, "goodput_kBps", cc=cc, x=x)
            row.append(f"{m:.0f} ± {h:.0f}")
        if k1 is not None:
            row += [f"{_ci(k1, 'goodput_kBps', cc=cc, x=x)[0]:.0f}" if k1.filter(pl.col("cc") == cc).height
                    else "–" for x in (0, 0.02)]
        rows.append(row)
    out.tables.append(Table(
        "Simulation 1: goodput of the 5-MiB transfer, kB/s",
        ["CC", "published, CSMA (best kernel)"] + [f"ccbench p2p, loss {x * 100:g} % (90 % CI)" for x in losses]
        + (["kernel p2p 0 %", "kernel p2p 2 %"] if k1 is not None else []), rows,
        note="The published goodputs are capped by the half-duplex CSMA channel at about "
             "1460 B / (2 × 98.06 ms) = 7.44 kB/s; on the full-duplex link the same transfer "
             "runs at hundreds of kB/s to tens of MB/s. Compare rankings, not values."))
    s2 = main_flow(ctx, "sim2")
    ns = sorted(set(s2["x"].to_list()))
    rows2 = []
    for cc in dict.fromkeys(s2["cc"].to_list()):
        for n in ns:
            p = pub["sim2_delay"].get(n, {}).get(cc, {})
            best = min(p.items(), key=lambda kv: kv[1][0]) if p else None
            m, h = _ci(s2, "delay_s", cc=cc, x=n)
            g, gh = _ci(s2, "goodput_kBps", cc=cc, x=n)
            rows2.append([cc, n, f"{best[1][0]:g} ± {best[1][1]:g} ({best[0]})" if best else "–",
                          f"{m:.2f} ± {h:.2f}", f"{g:.0f} ± {gh:.0f}"])
    out.tables.append(Table(
        "Simulation 2: the 1-MiB main flow against N − 1 background flows",
        ["CC", "N", "published delay s, CSMA (best kernel)", "ccbench p2p delay s (90 % CI)",
         "ccbench p2p goodput kB/s"], rows2))
    # checks: trends that should survive the channel and the kernel version
    grow = [(cc, _ci(s2, "delay_s", cc=cc, x=ns[0])[0], _ci(s2, "delay_s", cc=cc, x=ns[-1])[0])
            for cc in dict.fromkeys(s2["cc"].to_list())]
    out.checks.append(Check(
        f"main flow: its delay grows as background flows are added (N {ns[0]} → {ns[-1]})",
        all(b > a for _, a, b in grow), "; ".join(f"{c} {a:.2f} → {b:.2f} s" for c, a, b in grow)))
    slow = {cc: _ci(s2, "delay_s", cc=cc, x=ns[-1])[0] for cc in dict.fromkeys(s2["cc"].to_list())}
    out.checks.append(Check(
        f"LP (the scavenger) is the slowest main flow (N = {ns[-1]})",
        max(slow, key=slow.get) == "lp", ", ".join(f"{c} {v:.2f} s" for c, v in slow.items()),
        known=known(ctx, "lp-slowest")))
    if len(losses) > 1:
        g0, g2 = _ci(s1, "goodput_kBps", cc="reno", x=losses[0])[0], _ci(s1, "goodput_kBps", cc="reno", x=losses[1])[0]
        out.checks.append(Check(
            "the thesis's 'random loss changes nothing visible' is the CSMA channel's doing: on "
            f"the full-duplex link {losses[1] * 100:g} % loss cuts Reno's goodput severalfold",
            g2 < g0 / 3, f"Reno {g0:.0f} → {g2:.0f} kB/s"))
    c0 = _ci(s1, "delay_s", cc="cubic", x=0)[0]
    out.checks.append(Check(
        "on the full-duplex link the 5-MiB transfer is about one BDP and completes within "
        "~10-15 RTTs, dominated by slow start", 1.5 <= c0 <= 4.0, f"CUBIC at 0 % loss: {c0:.2f} s"))
    _figure(ctx, s2, out)
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
