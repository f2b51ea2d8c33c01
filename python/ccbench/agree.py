"""`ccbench agree`: the simulator-vs-kernel agreement matrix (docs/fidelity.md).

Factors and their levels (``FACTORS``): scheme, central rate, queue in BDP, base RTT, number of
flows and queue discipline. The full product (3^6 = 729 points) is hours of real time per repeat
on the kernel, so by default the matrix is a **covering array of strength 2**: a set of points
in which every pair of levels of every two factors occurs at least once (``covering_array``,
greedy, verified by ``uncovered_pairs``). ``--design full`` runs the whole product.

The points become one campaign (``sweep.zip`` over the factor columns, ``repeats`` R) that the
campaign layer runs on the simulator (``DIR/sim``) and on the emulation backend (``DIR/kernel``);
both are resumable like any ``ccbench sweep``. The comparison is per point over the repeats:
per-flow throughput (mean over a run's flows), median and p95 one-way delay, loss and Jain's
index, each as mean and standard deviation across repeats. A cell is *marked* when the
simulator's mean differs from the kernel's by more than the tolerance (throughput 5 %, delays
10 %, Jain 0.05; loss: 10 % relative and 0.1 percentage points) **and** lies outside the
kernel's own range over its repeats (min..max): a difference the kernel shows between two of
its own repeats is not held against the simulator.
"""
from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

#: Factor name -> (campaign key path, levels as written in an experiment file).
FACTORS: dict[str, tuple[str, list[Any]]] = {
    "scheme": ("flows[0].scheme", ["reno", "cubic", "bbr"]),
    "rate": ("central.rate", ["10Mbit", "100Mbit", "1Gbit"]),
    "bdp": ("queue_bdp", [0.5, 1, 4]),
    "rtt": ("rtt_ms", [10, 40, 100]),
    "flows": ("flows[0].flows", [1, 2, 4]),
    "aqm": ("aqm", ["droptail", "codel", "fq_codel"]),
}
METRICS = [("tput", "avg_tput_mbps"), ("median", "median_delay_ms"),
           ("p95", "p95_delay_ms"), ("loss", "loss_pct"), ("jain", "jain")]
TOL = {"tput": 0.05, "median": 0.10, "p95": 0.10, "loss": 0.10, "jain": 0.05}
LOSS_ABS = 0.1  # percentage points: loss differences below this are never marked
#: Simulator-side values of scheme levels whose kernel program is another variant than the
#: simulator's default: the shipped BPF cdg is Linux's tcp_cdg, whose rules the simulator's CDG
#: (FreeBSD's cc_cdg by default) takes with these parameters (docs/bpf-schemes.md).
SIM_LEVELS: dict[str, dict] = {
    "cdg": {"name": "cdg", "beta_delay": 70.71, "loss_tolerance": 0, "prob_exact": 1},
}


def sim_level(scheme: Any) -> Any:
    """The simulator side's value of a scheme level."""
    return SIM_LEVELS.get(scheme, scheme) if isinstance(scheme, str) else scheme


def kernel_level(scheme: Any) -> Any:
    """The kernel side's value of a scheme level: the kernel's own algorithm, else its BPF port."""
    from .config.bpfschemes import KERNEL_CCS
    return scheme if not isinstance(scheme, str) or scheme in KERNEL_CCS else {"bpf": scheme}


def covering_array(levels: list[int]) -> list[tuple[int, ...]]:
    """Rows of level indices covering every pair of levels of every two factors (strength 2).

    Greedy (AETG-like, deterministic): repeatedly add the row of the full product that covers
    the most pairs not yet covered, the first such row in product order on ties."""
    pairs = [(i, j) for i in range(len(levels)) for j in range(i + 1, len(levels))]
    todo = {(i, a, j, b) for i, j in pairs for a in range(levels[i]) for b in range(levels[j])}
    cands = list(itertools.product(*[range(n) for n in levels]))
    rows: list[tuple[int, ...]] = []
    while todo:
        best, gain = None, -1
        for r in cands:
            g = sum((i, r[i], j, r[j]) in todo for i, j in pairs)
            if g > gain:
                best, gain = r, g
        rows.append(best)
        todo -= {(i, best[i], j, best[j]) for i, j in pairs}
    return rows


def uncovered_pairs(rows: list[tuple[int, ...]], levels: list[int]) -> int:
    """How many level pairs ``rows`` misses (0 for a covering array)."""
    seen = {(i, r[i], j, r[j]) for r in rows for i in range(len(levels))
            for j in range(i + 1, len(levels))}
    total = sum(levels[i] * levels[j] for i in range(len(levels))
                for j in range(i + 1, len(levels)))
    return total - len(seen)


@dataclass
class Matrix:
    """The chosen factor levels and design."""
    factors: dict[str, list[Any]]
    design: str = "pairs"          # "pairs" (covering array) or "full"
    repeats: int = 3
    duration: float = 20.0
    #: `tcp:` settings for the simulator side only (a model switch to try against the same
    #: kernel runs, e.g. {"tso-defer": True}); the kernel side is the kernel's own
    sim_tcp: dict = field(default_factory=dict)
    #: the simulator side runs the kernel side's BPF programs (the same C files) for the scheme
    #: levels the kernel lacks, instead of the simulator's own algorithms of those names
    sim_bpf: bool = False

    def points(self) -> list[dict[str, Any]]:
        names = list(self.factors)
        levels = [len(self.factors[n]) for n in names]
        if self.design == "full":
            rows = list(itertools.product(*[range(n) for n in levels]))
        elif self.design == "pairs":
            rows = covering_array(levels)
        else:
            raise ValueError(f"design {self.design!r}: use 'pairs' or 'full'")
        return [{n: self.factors[n][r[k]] for k, n in enumerate(names)} for r in rows]

    def campaign(self, kernel: bool = False) -> dict:
        """The campaign document (a plain dict; ``ccbench sweep`` runs it as YAML too);
        ``kernel``: the emulation side's, whose scheme levels the kernel lacks are BPF."""
        pts = self.points()
        zip_: dict[str, list] = {}
        for n in self.factors:
            key = FACTORS[n][0] if n in FACTORS else n
            zip_[key] = [(kernel_level(p[n]) if kernel or self.sim_bpf else sim_level(p[n]))
                         if n == "scheme"
                         else p[n] for p in pts]
        derive = {"central.delay": "unit(rtt_ms / 2, 'ms')",
                  "central.queue.type": "aqm",
                  "central.queue.limit": "unit(queue_bdp, 'bdp')"}
        tcp = {} if kernel or not self.sim_tcp else {"tcp": dict(self.sim_tcp)}
        return {
            "duration": self.duration, "seed": 1, **tcp,
            "central": {"rate": "100Mbit", "delay": "5ms",
                        "queue": {"type": "droptail", "limit": "1bdp"}},
            "flows": [{"scheme": "cubic", "flows": 1, "left-delay": "0ms",
                       "right-delay": "0ms"}],
            "sweep": {"zip": [zip_], "derive": derive, "repeats": self.repeats,
                      "label": " ".join("{%s}" % (FACTORS[n][0] if n in FACTORS else n)
                                        for n in self.factors)},
        }


def _number(text: str) -> int | float:
    x = float(text)
    return int(x) if x.is_integer() else x


def parse_levels(spec: str | None) -> dict[str, list[Any]]:
    """``scheme=reno,cubic;rate=10Mbit`` -> levels replacing the defaults of those factors."""
    out = {n: list(v[1]) for n, v in FACTORS.items()}
    if not spec:
        return out
    for part in spec.split(";"):
        if not part.strip():
            continue
        name, _, vals = part.partition("=")
        name = name.strip()
        if name not in FACTORS or not vals:
            raise ValueError(f"--levels {part!r}: write FACTOR=v1,v2 with FACTOR one of "
                             + ", ".join(FACTORS))
        # a whole BDP multiple stays an int, as in the defaults: a point's seeds are derived
        # from its values as written (1 and 1.0 give other seeds), so the documented --levels
        # reproduce the default design's runs
        conv = _number if name == "bdp" else int if name in ("rtt", "flows") else str
        try:
            out[name] = [conv(v.strip()) for v in vals.split(",")]
        except ValueError:
            raise ValueError(f"--levels {name}: {vals!r} are not numbers") from None
    return out


def summarise(index: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per point: each metric's mean, std, min and max across repeats (flows of a run are
    averaged first; Jain is per run)."""
    cols = [c for _, c in METRICS]
    per_run = index.group_by(["point", "repeat"] + keys).agg([pl.col(c).mean() for c in cols])
    aggs = []
    for name, c in METRICS:
        aggs += [pl.col(c).mean().alias(f"{name}_mean"), pl.col(c).std().alias(f"{name}_sd"),
                 pl.col(c).min().alias(f"{name}_min"), pl.col(c).max().alias(f"{name}_max"),
                 pl.len().alias("n") if name == "tput" else pl.lit(None).alias(f"_{name}")]
    out = per_run.group_by(["point"] + keys).agg(aggs).sort("point")
    return out.select([c for c in out.columns if not c.startswith("_")])


def marked(metric: str, sim: float | None, k_mean: float | None, k_min: float | None,
           k_max: float | None) -> bool:
    """Is the simulator's value out of tolerance *and* outside the kernel's own range?"""
    if sim is None or k_mean is None or any(map(_nan, (sim, k_mean))):
        return False
    if k_min is not None and k_max is not None and k_min <= sim <= k_max:
        return False
    if metric == "jain":
        return abs(sim - k_mean) > TOL["jain"]
    if metric == "loss" and abs(sim - k_mean) <= LOSS_ABS:
        return False
    if k_mean == 0:
        return sim != 0
    return abs(sim - k_mean) / abs(k_mean) > TOL[metric]


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def compare(sim: pl.DataFrame, kernel: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """One row per point present on both backends: sim and kernel stats and marks."""
    from .studies.common import cc_of
    sk = FACTORS["scheme"][0]
    if sk in keys:  # the kernel side's BPF schemes are the simulator's levels
        sim, kernel = (d.with_columns(pl.col(sk).map_elements(cc_of, return_dtype=pl.Utf8))
                       for d in (sim, kernel))
    s, k = summarise(sim, keys), summarise(kernel, keys)
    j = s.join(k, on=["point"] + keys, suffix="_k", how="inner")
    marks = {name: [marked(name, r[f"{name}_mean"], r[f"{name}_mean_k"], r[f"{name}_min_k"],
                           r[f"{name}_max_k"]) for r in j.iter_rows(named=True)]
             for name, _ in METRICS}
    return j.with_columns([pl.Series(f"{n}_marked", v) for n, v in marks.items()])


def _fmt(mean, sd, digits) -> str:
    if mean is None or _nan(mean):
        return "–"
    sd = 0.0 if sd is None or _nan(sd) else sd
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def table_md(cmp: pl.DataFrame, keys: list[str]) -> str:
    """The comparison as a Markdown table: sim | kernel per metric, marked cells with ``**``."""
    heads = [("tput", "tput/flow Mbit/s", 2), ("median", "median OWD ms", 2),
             ("p95", "p95 OWD ms", 2), ("loss", "loss %", 3), ("jain", "Jain", 3)]
    lines = ["| point | " + " | ".join(keys) + " | n sim/kernel | "
             + " | ".join(f"{h} sim | {h} kernel" for _, h, _ in heads) + " |",
             "|" + "---|" * (2 + len(keys) + 2 * len(heads))]
    for r in cmp.iter_rows(named=True):
        cells = [str(r["point"])] + [str(r[c]) for c in keys] + [f"{r['n']}/{r['n_k']}"]
        for name, _, d in heads:
            sv = _fmt(r[f"{name}_mean"], r[f"{name}_sd"], d)
            kv = _fmt(r[f"{name}_mean_k"], r[f"{name}_sd_k"], d)
            if r[f"{name}_marked"]:
                sv = f"**{sv}**"
            cells += [sv, kv]
        lines.append("| " + " | ".join(cells) + " |")
    n_marked = sum(int(cmp[f"{n}_marked"].sum()) for n, _ in METRICS)
    lines.append("")
    lines.append(f"{len(cmp)} points, {len(cmp) * len(METRICS)} compared cells, "
                 f"{n_marked} marked (**bold**: out of tolerance and outside the kernel's "
                 "range over its repeats).")
    return "\n".join(lines) + "\n"


def flagged_runs(camp_dir: Path) -> list[str]:
    """Keys of the finished runs in a campaign directory that the emulator flagged inaccurate."""
    out = []
    for m in sorted((Path(camp_dir) / "runs").glob("*/metadata.json")):
        try:
            emu = json.loads(m.read_text()).get("emu") or {}
        except (OSError, ValueError):
            continue
        if emu.get("accurate") is False:
            out.append(m.parent.name)
    return out


def _stats(r: dict, name: str, suffix: str) -> dict:
    # 12 significant digits: the last bits of a float sum depend on the aggregation's order
    g = lambda c: None if r.get(c) is None or _nan(r[c]) else float(f"{r[c]:.12g}")  # noqa: E731
    return {"mean": g(f"{name}_mean{suffix}"), "sd": g(f"{name}_sd{suffix}"),
            "min": g(f"{name}_min{suffix}"), "max": g(f"{name}_max{suffix}"),
            "n": int(r[f"n{suffix}"])}


def cell_records(cmp: pl.DataFrame, keys: list[str], names: list[str]) -> list[dict]:
    """agreement.json's cells: one record per point and metric, with both sides' mean, sd,
    min, max and n over the repeats and the mark; ``explanation`` is filled on publishing."""
    cells = []
    for r in cmp.iter_rows(named=True):
        factors = {n: r[k] for n, k in zip(names, keys)}
        for name, _ in METRICS:
            cells.append({"point": int(r["point"]), "factors": factors, "metric": name,
                          "sim": _stats(r, name, ""), "kernel": _stats(r, name, "_k"),
                          "marked": bool(r[f"{name}_marked"]), "explanation": None})
    return cells


def _run_kernel(doc: dict, out: Path, *, progress, allow_mixed_versions: bool,
                rerun_flagged: int) -> pl.DataFrame:
    """The kernel side through the campaign layer; runs the emulator flags inaccurate are set
    aside (DIR/kernel-flagged/KEY.N) and run again, up to ``rerun_flagged`` times, never
    averaged in. The session (time, load average before and after, kernel, flagged keys) is
    appended to DIR/kernel/agree-sessions.json."""
    import datetime
    import os
    import platform
    import shutil

    from . import campaign as _campaign
    camp = _campaign.parse_campaign(doc, source=str(out / "agree-campaign-kernel.yaml"))
    now = lambda: datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")  # noqa: E731
    sess = {"started": now(), "load_before": [round(x, 2) for x in os.getloadavg()],
            "kernel": platform.release(), "set_aside": []}
    kdir = out / "kernel"
    idx = _campaign.sweep(camp, kdir, backend="emu", jobs=1, progress=progress,
                          allow_mixed_versions=allow_mixed_versions)
    for attempt in range(1, rerun_flagged + 1):
        bad = flagged_runs(kdir)
        if not bad:
            break
        aside = out / "kernel-flagged"
        aside.mkdir(exist_ok=True)
        for key in bad:
            shutil.move(str(kdir / "runs" / key), str(aside / f"{key}.{attempt}"))
        sess["set_aside"] += bad
        idx = _campaign.sweep(camp, kdir, backend="emu", jobs=1, progress=progress,
                              allow_mixed_versions=allow_mixed_versions)
    sess.update(ended=now(), load_after=[round(x, 2) for x in os.getloadavg()],
                still_flagged=flagged_runs(kdir))
    log = kdir / "agree-sessions.json"
    prev = json.loads(log.read_text()) if log.is_file() else []
    log.write_text(json.dumps(prev + [sess], indent=1) + "\n")
    return idx


def run_agree(out_dir: str | Path, matrix: Matrix, *, backends=("sim", "kernel"), jobs=None,
              progress=False, allow_mixed_versions: bool = False,
              rerun_flagged: int = 2) -> dict:
    """Run (or resume) the matrix on the given backends and write DIR/agree.md, agree.csv and
    agreement.json. Returns {"table": DataFrame or None, "markdown": path or None, ...}."""
    from . import __version__
    from . import campaign as _campaign
    from .campaign.store import provenance
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    import yaml
    docs = {"sim": matrix.campaign(), "kernel": matrix.campaign(kernel=True)}
    for b, name in (("sim", "agree-campaign.yaml"), ("kernel", "agree-campaign-kernel.yaml")):
        (out / name).write_text(
            f"# generated by ccbench agree ({b} side); run it with: ccbench sweep THIS -o DIR\n"
            + yaml.safe_dump(docs[b], sort_keys=False))
    keys = [FACTORS[n][0] if n in FACTORS else n for n in matrix.factors]
    idx = {}
    for b in backends:
        if b == "kernel":
            idx[b] = _run_kernel(docs[b], out, progress=progress, rerun_flagged=rerun_flagged,
                                 allow_mixed_versions=allow_mixed_versions)
        else:
            camp = _campaign.parse_campaign(docs[b], source=str(out / "agree-campaign.yaml"))
            idx[b] = _campaign.sweep(camp, out / b, backend="sim", jobs=jobs, progress=progress,
                                     allow_mixed_versions=allow_mixed_versions)
    for b in ("sim", "kernel"):
        # A side not run now: the index it left in DIR (e.g. re-run the simulator after a
        # model change against the kernel runs already made).
        if b not in idx and (out / b / "index.parquet").exists():
            idx[b] = pl.read_parquet(out / b / "index.parquet")
    res = {"points": len(matrix.points()), "design": matrix.design, "repeats": matrix.repeats,
           "table": None, "markdown": None}
    if not {"sim", "kernel"} <= set(idx) or any(len(v) == 0 for v in idx.values()):
        return res
    cmp = compare(idx["sim"], idx["kernel"], keys)
    md = table_md(cmp, keys)
    (out / "agree.md").write_text(md)
    cmp.write_csv(out / "agree.csv")
    cells = cell_records(cmp, keys, list(matrix.factors))
    sess = out / "kernel" / "agree-sessions.json"
    prov = provenance()
    doc = {"format": 1, "ccbench": __version__, "commit": prov.get("git_commit"),
           "design": matrix.design, "repeats": matrix.repeats, "duration_s": matrix.duration,
           "factors": matrix.factors, "points": len(matrix.points()),
           "sim_tcp": matrix.sim_tcp, "sim_bpf": matrix.sim_bpf,
           "tolerance": TOL, "loss_abs_pp": LOSS_ABS,
           "kernel_sessions": json.loads(sess.read_text()) if sess.is_file() else [],
           "kernel_runs_flagged": flagged_runs(out / "kernel"),
           "summary": {"cells": len(cells), "marked": sum(c["marked"] for c in cells),
                       "by_metric": {n: int(cmp[f"{n}_marked"].sum()) for n, _ in METRICS}},
           "cells": cells}
    (out / "agreement.json").write_text(json.dumps(doc, indent=1) + "\n")
    res.update(table=cmp, markdown=out / "agree.md", text=md, agreement=out / "agreement.json")
    return res


def add_parser(sub) -> None:
    ag = sub.add_parser(
        "agree", help="simulator vs kernel agreement matrix: both backends through the "
        "campaign layer, a table with marked cells",
        description="Run the agreement matrix (scheme x rate x queue BDP x RTT x flows x AQM, "
        "with repeats) on the simulator and on the emulation backend (real kernel TCP; root) "
        "through the campaign layer, then write DIR/agree.md (per-flow throughput, median/p95 "
        "one-way delay, loss, Jain: mean ± sd on both backends; cells out of tolerance and "
        "outside the kernel's own range marked), agree.csv and agreement.json (one record per cell). The default design "
        "is a covering array of strength 2 (every pair of levels of every two factors at "
        "least once); --design full runs the whole product. Resumable: finished runs in DIR "
        "are kept.")
    ag.add_argument("-o", "--output", default="results/agree", help="output directory")
    ag.add_argument("--design", choices=("pairs", "full"), default="pairs")
    ag.add_argument("--repeats", type=int, default=3)
    ag.add_argument("--duration", type=float, default=20.0, help="seconds per run")
    ag.add_argument("--levels", help="replace factor levels, e.g. "
                    "'scheme=reno,cubic,vegas;rate=10Mbit,100Mbit' (factors: "
                    + ", ".join(FACTORS) + "; a scheme other than reno, cubic and bbr runs on "
                    "the kernel side as the shipped BPF program of that name)")
    ag.add_argument("--backend", choices=("both", "sim", "kernel"), default="both",
                    help="run only one side; the table then uses the other side's runs "
                         "already in DIR")
    ag.add_argument("--dry-run", action="store_true", help="print the points and stop")
    ag.add_argument("--publish", metavar="DOCS_DIR",
                    help="run nothing: copy DIR/agreement.json to DOCS_DIR/agreement.json with "
                         "each marked cell's explanation id from DOCS_DIR/explanations.yaml, and "
                         "regenerate the matrix section of DOCS_DIR.md (the project's: "
                         "docs/fidelity)")
    ag.add_argument("-j", "--jobs", type=int, help="worker processes for the simulator runs")
    ag.add_argument("--rerun-flagged", type=int, default=2, metavar="N",
                    help="kernel runs the emulator flags inaccurate are set aside "
                         "(DIR/kernel-flagged) and run again, up to N times (default 2; 0: "
                         "keep them)")
    ag.add_argument("--sim-tcp", metavar="KEY=VALUE[,...]",
                    help="tcp: settings for the simulator side only, e.g. 'tso-defer=true' "
                         "(try a model switch against the kernel runs already in DIR with "
                         "--backend sim; its runs are new, the kernel's are kept)")
    ag.add_argument("--sim-bpf", action="store_true",
                    help="the simulator side runs the kernel side's BPF programs (the same C "
                         "files, compiled natively) for the schemes the kernel lacks, instead of "
                         "its own algorithms of those names")
    ag.add_argument("--allow-mixed-versions", action="store_true")
    ag.set_defaults(fn=cmd_agree)


def parse_sim_tcp(spec: str | None) -> dict:
    """``KEY=VALUE,...`` (YAML scalars) -> a ``tcp:`` mapping; checked by the config layer."""
    import yaml
    out: dict = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        k, eq, v = part.partition("=")
        if not eq or not k.strip():
            raise ValueError(f"--sim-tcp: {part!r} is not KEY=VALUE (e.g. tso-defer=true)")
        out[k.strip()] = yaml.safe_load(v)
    return out


def cmd_agree(a) -> int:
    if a.repeats < 1 or a.duration <= 0 or a.rerun_flagged < 0:
        raise ValueError("--repeats must be >= 1, --duration > 0 and --rerun-flagged >= 0")
    if a.publish:
        from .agree_page import publish
        print(f"wrote {publish(Path(a.output), Path(a.publish))} and "
              f"{Path(a.publish) / 'agreement.json'}")
        return 0
    m = Matrix(parse_levels(a.levels), design=a.design, repeats=a.repeats, duration=a.duration,
               sim_tcp=parse_sim_tcp(a.sim_tcp), sim_bpf=a.sim_bpf)
    pts = m.points()
    names = list(m.factors)
    backends = ("sim", "kernel") if a.backend == "both" else (a.backend,)
    kernel_s = len(pts) * a.repeats * (a.duration + 2.0) if "kernel" in backends else 0.0
    print(f"agreement matrix: {len(pts)} points x {a.repeats} repeats x {a.duration:g} s"
          + (f"; the kernel side runs in real time, one run at a time: ~{kernel_s / 60:.0f} min "
             "(flagged runs again on top)" if kernel_s else "; simulator side only"),
          file=sys.stdout if a.dry_run else sys.stderr)
    if a.dry_run:
        print(f"{len(pts)} points ({a.design}; full product "
              f"{math.prod(len(v) for v in m.factors.values())}), {a.repeats} repeats each")
        for i, p in enumerate(pts):
            print(f"  {i:3d}  " + "  ".join(f"{n}={p[n]}" for n in names))
        return 0
    res = run_agree(a.output, m, backends=backends, jobs=a.jobs, progress="auto",
                    allow_mixed_versions=a.allow_mixed_versions, rerun_flagged=a.rerun_flagged)
    if res["markdown"] is None:
        print(f"ran {', '.join(backends)}; the table needs both backends' runs in {a.output}")
        return 0
    print(res["text"])
    print(f"wrote {res['markdown']}")
    return 0
