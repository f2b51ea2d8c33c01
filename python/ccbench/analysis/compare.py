"""Runs side by side: per-flow and total metrics of each, and their relative differences.

Two runs (:func:`compare`, a :class:`Comparison`: A and B in adjacent columns) or any number
(:func:`compare_many`, a :class:`MultiComparison`: one row per run × curve, Δ % against the
first run); one set-up difference rule for both (:func:`differences_among`).

Meant for a simulated and a kernel run of the same experiment (`--backend both`), but any two
results directories with the same flows compare (e.g. two seeds, two code versions). The
overlay figures are in ``ccbench.plots.compare``, the interactive page in
``ccbench.report.comparison``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..results import Results, load
from .metrics import LOSS_LABEL, analyze

METRICS = (("avg_tput_mbps", "tput Mbit/s"), ("mean_delay_ms", "mean OWD ms"),
           ("p95_delay_ms", "p95 OWD ms"), ("loss_pct", LOSS_LABEL))


@dataclass
class Comparison:
    a: Results
    b: Results
    name_a: str
    name_b: str
    table: pl.DataFrame          # curve, <metric>_a, <metric>_b, <metric>_diff_pct
    jain: tuple[float | None, float | None]
    a_intervals: pl.DataFrame
    b_intervals: pl.DataFrame
    #: what differs between the two runs' set-ups ("duration: 30 s (A) vs 5 s (B)", ...)
    differences: tuple[str, ...] = ()
    #: what makes a number doubtful: an emulated run its emulator flagged inaccurate
    warnings: tuple[str, ...] = ()


class CompareError(ValueError):
    """Two runs that should not be compared as they are (the message says why and how)."""


def _link_text(ln: dict) -> str:
    """A link's rate, delay and queue (its name apart: the same in every run compared)."""
    rate = ln.get("rate_bps")
    q = ln.get("queue") or {}
    return (f"{'unlimited' if not rate else f'{rate / 1e6:g} Mbit/s'}"
            f", {ln.get('delay_ns', 0) / 1e6:g} ms, queue {q.get('packets', q.get('bytes', '?'))}")


def tags(n: int) -> list[str]:
    """Run tags A, B, ..., Z, then R27, R28, ... (the text and the pages name runs by them)."""
    return [chr(ord("A") + i) if i < 26 else f"R{i + 1}" for i in range(n)]


def _vs(values: list, show=str) -> str | None:
    """"x (A) vs y (B) vs ..." when the runs' values are not all equal, else None."""
    if all(v == values[0] for v in values):
        return None
    return " vs ".join(f"{show(v)} ({t})" for v, t in zip(values, tags(len(values))))


def differences_among(runs: list[Results]) -> tuple[list[str], list[str]]:
    """(set-up differences that make the numbers incomparable — duration, the topology's
    links —, other differences — backend, seed, link rates, delays and queues, schemes, TCP
    settings, host noise), as text lines naming each run by its tag (A, B, ...)."""
    exps = [r.experiment for r in runs]
    hard, soft = [], []
    d = _vs([e.get("duration_ns", 0) for e in exps], lambda v: f"{v / 1e9:g} s")
    if d:
        hard.append(f"duration: {d}")
    names = [[x.get("name", x.get("id")) for x in e.get("links", [])] for e in exps]
    if any(n != names[0] for n in names):
        hard.append("topology: links " + _vs(names, lambda n: ", ".join(map(str, n))))
    else:  # the same graph: its links' rates, delays and queues are parameters
        for i in range(len(names[0])):
            d = _vs([_link_text(e["links"][i]) for e in exps])
            if d:
                soft.append(f"link {names[0][i]}: {d}")
    for what, vals in (("backend", [r.meta.get("backend") for r in runs]),
                       ("seed", [e.get("seed") for e in exps])):
        d = _vs(vals)
        if d:
            soft.append(f"{what}: {d}")
    for i in range(min(len(e.get("flows", [])) for e in exps)):
        for k in ("scheme", "params", "tcp", "start_ns", "stop_ns", "bytes"):
            d = _vs([e["flows"][i].get(k) for e in exps])
            if d:
                soft.append(f"flow {exps[0]['flows'][i]['id'] + 1} {k}: {d}")
    tcps = [e.get("tcp") or {} for e in exps]
    for k in sorted(set().union(*tcps)):
        d = _vs([t.get(k) for t in tcps])
        if d:
            soft.append(f"tcp {k}: {d}")
    if (all(r.meta.get("backend") == "sim" for r in runs)
            and _vs([e.get("host_noise") for e in exps])):
        soft.append("host timing noise differs")
    return hard, soft


def differences(a: Results, b: Results) -> tuple[list[str], list[str]]:
    """:func:`differences_among` of two runs ("x (A) vs y (B)")."""
    return differences_among([a, b])


def accuracy_warnings(res: Results, which: str) -> list[str]:
    """A line for an emulated run its emulator flagged inaccurate (docs/emulation.md)."""
    emu = res.meta.get("emu") or {}
    if emu.get("accurate", True):
        return []
    why = "; ".join(emu.get("inaccurate_reasons") or []) or "see its metadata"
    return [f"{which} ({res.path.name}) is an emulated run the emulator flagged INACCURATE "
            f"({why}): a difference may be the machine's, not the stack's; run it again on a "
            "quiet machine"]


def _name(res: Results) -> str:
    return f"{res.meta.get('backend', '?')}:{res.path.name}"


def _match_flows(a: Results, b: Results) -> dict[str, str]:
    """Pair the two runs' flows: by label, or — when labels differ, as a simulator scheme's
    and its BPF program's do (``vegas`` / ``bpf_vegas``) — by position where every flow has the
    same route and direction. Returns B's label -> A's label for the renamed ones ({} when the
    labels agree); ValueError when the flows cannot be paired."""
    fa, fb = a.experiment["flows"], b.experiment["flows"]
    la, lb = [f["label"] for f in fa], [f["label"] for f in fb]
    if la == lb:
        return {}
    route = [(f["src"], f["dst"], f["direction"]) for f in fa]
    if len(fa) != len(fb) or route != [(f["src"], f["dst"], f["direction"]) for f in fb]:
        raise ValueError(f"{a.path} and {b.path} have different flows ({len(la)} vs {len(lb)}: "
                         f"{la[:3]}… vs {lb[:3]}…); compare runs of the same experiment")
    return dict(zip(lb, la))


def compare(a: Results | str | Path, b: Results | str | Path, interval: float = 0.5, *,
            allow_different: bool = False) -> Comparison:
    """Per-flow and total metrics of two runs with the same flows (A and B, results or
    directories) at aggregation interval ``interval`` s; Δ % = (B − A) / |A|. Runs of
    different durations or topologies are refused (CompareError) unless ``allow_different``; the
    comparison lists every set-up difference and flags an inaccurate emulated run."""
    a = a if isinstance(a, Results) else load(a)
    b = b if isinstance(b, Results) else load(b)
    ((sa, ia, ja), (sb, ib, jb)), notes = _analysed_runs([a, b], ["A", "B"], interval,
                                                          allow_different)
    cols = [m for m, _ in METRICS]
    t = sa.select("curve", *cols).join(sb.select("curve", *cols), on="curve", suffix="_b",
                                       maintain_order="left")
    t = t.rename({c: f"{c}_a" for c in cols})
    for c in cols:
        t = t.with_columns(_diff_pct(f"{c}_b", f"{c}_a").alias(f"{c}_diff_pct"))
    return Comparison(a, b, _name(a), _name(b), t, (ja, jb), ia, ib, *notes)


def _analysed_runs(rs: list[Results], tg: list[str], interval: float, allow_different: bool):
    """The one refusal rule and flow pairing of :func:`compare` and :func:`compare_many`:
    (per run :func:`_analysed` under run A's flow labels, *(differences, accuracy warnings)*);
    CompareError when the runs are not of one set-up and ``allow_different`` is not given."""
    hard, soft = differences_among(rs)
    if hard and not allow_different:
        raise CompareError(", ".join(f"{t} = {r.path}" for t, r in zip(tg, rs))
                           + " are not runs of the same set-up: " + "; ".join(hard)
                           + " — compare runs of one experiment (e.g. `ccbench run FILE "
                           "--backend both`), or pass --allow-different to compare them anyway "
                           "with the differences printed")
    analysed, warn = [], []
    for t, r in zip(tg, rs):
        rename = _match_flows(rs[0], r)
        soft += [f"flow {i + 1}: {x!r} (A) and {y!r} ({t}) matched by position and route"
                 for i, (y, x) in enumerate(rename.items()) if x != y]
        analysed.append(_analysed(r, interval, rename))
        warn += accuracy_warnings(r, t)
    return analysed, (tuple(hard + soft), tuple(warn))


def _diff_pct(new: str, ref: str) -> pl.Expr:
    return (pl.when(pl.col(ref).abs() > 0)
            .then((pl.col(new) - pl.col(ref)) / pl.col(ref).abs() * 100).otherwise(None))


def _analysed(res: Results, interval: float, rename: dict[str, str]):
    """(per-flow and total summary rows, per-interval rows, Jain's index) of one run, its
    curves under the reference run's labels (``rename``) so tables and overlays pair them."""
    an = analyze(res, "per-flow", interval)
    summary = an.summary.with_columns(pl.col("curve").replace(rename))
    intervals = an.per_interval.with_columns(pl.col("curve").replace(rename))
    total = analyze(res, "total", interval).summary
    return pl.concat([summary, total], how="diagonal_relaxed"), intervals, an.overall_jain


@dataclass
class MultiComparison:
    """Any number of runs of one experiment (``ccbench compare A B C ...``)."""
    runs: list[Results]
    tags: list[str]               # A, B, C, ...
    names: list[str]              # backend:directory per run
    #: one row per run × curve (flows, then the run's total): run, name, curve, <metric>,
    #: <metric>_vs_a_pct (Δ % against run A's same curve)
    table: pl.DataFrame
    jain: list[float | None]
    intervals: list[pl.DataFrame]  # per run, curves under run A's labels
    differences: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def compare_many(runs: list[Results | str | Path], interval: float = 0.5, *,
                 allow_different: bool = False) -> MultiComparison:
    """Per-flow and total metrics of two or more runs with the same flows, one table row per
    run × curve, Δ % against the first run (A); the same refusal rule as :func:`compare` (runs
    of different durations or topologies need ``allow_different``)."""
    rs = [r if isinstance(r, Results) else load(r) for r in runs]
    if len(rs) < 2:
        raise CompareError(f"compare needs at least two runs, got {len(rs)}")
    tg = tags(len(rs))
    analysed, (diffs, warn) = _analysed_runs(rs, tg, interval, allow_different)
    cols = [m for m, _ in METRICS]
    rows = [s.select(pl.lit(t).alias("run"), pl.lit(_name(r)).alias("name"), "curve", *cols)
            for t, r, (s, _, _) in zip(tg, rs, analysed)]
    intervals, jain = [iv for _, iv, _ in analysed], [j for _, _, j in analysed]
    table = pl.concat(rows, how="diagonal_relaxed")
    ref = rows[0].select("curve", *[pl.col(c).alias(f"{c}_ref") for c in cols])
    table = table.join(ref, on="curve", how="left", maintain_order="left").with_columns(
        [_diff_pct(c, f"{c}_ref").alias(f"{c}_vs_a_pct") for c in cols]).drop(
        [f"{c}_ref" for c in cols])
    return MultiComparison(rs, tg, [_name(r) for r in rs], table, jain, intervals, diffs,
                           warn)


def text_many(c: MultiComparison) -> str:
    """A many-run comparison as aligned text: the runs, differences, one row per run × curve."""
    def f(v, spec=".2f"):
        return "N/A" if v is None else format(v, spec)

    w = max(len("curve"), *(len(x) for x in c.table["curve"].to_list()))
    lines = [f"{t} = {n} ({r.path})" for t, n, r in zip(c.tags, c.names, c.runs)]
    lines += [f"WARNING: {x}" for x in c.warnings]
    lines += ["differences: " + ("none in duration, links, flows, TCP settings and seed"
                                 if not c.differences else "")]
    lines += [f"  {d}" for d in c.differences]
    head = f"{'run':<4} {'curve':<{w}}" + "".join(f"  {h:>12} {'Δ% vs A':>8}" for _, h in METRICS)
    lines += [head, "-" * len(head)]
    for r in c.table.iter_rows(named=True):
        lines.append(f"{r['run']:<4} {r['curve']:<{w}}" + "".join(
            f"  {f(r[m]):>12} {f(r[m + '_vs_a_pct'], '+.1f'):>8}" for m, _ in METRICS))
    lines.append("Jain's index over flows: " + "  ".join(
        f"{t} {f(j, '.4f')}" for t, j in zip(c.tags, c.jain)))
    lines += probe_lines(list(zip(c.tags, c.runs)))
    return "\n".join(lines)


def text(c: Comparison) -> str:
    """The comparison table as aligned text (``compare.txt``)."""
    def f(v, spec=".2f"):
        return "N/A" if v is None else format(v, spec)

    w = max(len("curve"), *(len(x) for x in c.table["curve"].to_list()))
    head = f"{'curve':<{w}}"
    for _, h in METRICS:
        head += f"  {h + ' A':>14} {h + ' B':>14} {'Δ%':>7}"
    lines = [f"A = {c.name_a} ({c.a.path})", f"B = {c.name_b} ({c.b.path})"]
    lines += [f"WARNING: {w}" for w in c.warnings]
    lines += ["differences: " + ("none in duration, links, flows, TCP settings and seed"
                                 if not c.differences else "")]
    lines += [f"  {d}" for d in c.differences]
    lines += [head, "-" * len(head)]
    for r in c.table.iter_rows(named=True):
        line = f"{r['curve']:<{w}}"
        for m, _ in METRICS:
            line += f"  {f(r[m + '_a']):>14} {f(r[m + '_b']):>14} {f(r[m + '_diff_pct'], '+.1f'):>7}"
        lines.append(line)
    ja, jb = c.jain
    lines.append(f"Jain's index over flows: A {f(ja, '.4f')}  B {f(jb, '.4f')}")
    lines += probe_lines([("A", c.a), ("B", c.b)])
    return "\n".join(lines)


def probe_lines(runs) -> list[str]:
    """Each run's latency probes (``[(tag, Results)]``): median and p99 RTT per probe flow."""
    from .probes import probe_summary
    out = []
    for tag, res in runs:
        for r in probe_summary(res).iter_rows(named=True):
            if r["answered"]:
                out.append(f"{tag} {r['label']}: RTT median {r['median_rtt_ms']:.2f} ms, p99 "
                           f"{r['p99_rtt_ms']:.2f} ms ({r['answered']}/{r['sent']} answered)")
    return out


def write_table(c: Comparison | MultiComparison, out_dir: str | Path) -> list[Path]:
    """Write ``compare.txt`` (:func:`text` or :func:`text_many`) and ``compare.csv`` (the
    table) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    body = text_many(c) if isinstance(c, MultiComparison) else text(c)
    (out / "compare.txt").write_text(body + "\n")
    c.table.write_csv(out / "compare.csv")
    return [out / "compare.txt", out / "compare.csv"]


__all__ = ["METRICS", "CompareError", "Comparison", "MultiComparison", "accuracy_warnings",
           "compare", "compare_many", "differences", "differences_among", "tags", "text",
           "text_many", "write_table"]
