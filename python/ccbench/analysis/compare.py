"""Two runs side by side: per-flow and total metrics of each, and their relative differences.

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
from .metrics import analyze

METRICS = (("avg_tput_mbps", "tput Mbit/s"), ("mean_delay_ms", "mean OWD ms"),
           ("p95_delay_ms", "p95 OWD ms"), ("loss_pct", "loss %"))


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
    rate = ln.get("rate_bps")
    q = ln.get("queue") or {}
    return (f"{ln.get('name', ln.get('id'))}: {'unlimited' if not rate else f'{rate / 1e6:g} Mbit/s'}"
            f", {ln.get('delay_ns', 0) / 1e6:g} ms, queue {q.get('packets', q.get('bytes', '?'))}")


def differences(a: Results, b: Results) -> tuple[list[str], list[str]]:
    """(set-up differences that make the numbers incomparable — duration, the topology's
    links —, other differences — backend, seed, link rates, delays and queues, schemes, TCP
    settings, host noise), as text lines."""
    ea, eb = a.experiment, b.experiment
    hard, soft = [], []
    if ea.get("duration_ns") != eb.get("duration_ns"):
        hard.append(f"duration: {ea.get('duration_ns', 0) / 1e9:g} s (A) vs "
                    f"{eb.get('duration_ns', 0) / 1e9:g} s (B)")
    na = [x.get("name", x.get("id")) for x in ea.get("links", [])]
    nb = [x.get("name", x.get("id")) for x in eb.get("links", [])]
    if na != nb:
        hard.append(f"topology: links {', '.join(map(str, na))} (A) vs "
                    f"{', '.join(map(str, nb))} (B)")
    else:  # the same graph: its links' rates, delays and queues are parameters
        la = [_link_text(x) for x in ea.get("links", [])]
        lb = [_link_text(x) for x in eb.get("links", [])]
        soft += [f"link {x} (A) vs {y} (B)" for x, y in zip(la, lb) if x != y]
    if a.meta.get("backend") != b.meta.get("backend"):
        soft.append(f"backend: {a.meta.get('backend')} (A) vs {b.meta.get('backend')} (B)")
    if ea.get("seed") != eb.get("seed"):
        soft.append(f"seed: {ea.get('seed')} (A) vs {eb.get('seed')} (B)")
    for fa, fb in zip(ea.get("flows", []), eb.get("flows", [])):
        for k in ("scheme", "params", "tcp", "start_ns", "stop_ns", "bytes"):
            if fa.get(k) != fb.get(k):
                soft.append(f"flow {fa['id'] + 1} {k}: {fa.get(k)} (A) vs {fb.get(k)} (B)")
    if ea.get("tcp") != eb.get("tcp"):
        keys = sorted(set(ea.get("tcp") or {}) | set(eb.get("tcp") or {}))
        soft += [f"tcp {k}: {(ea.get('tcp') or {}).get(k)} (A) vs {(eb.get('tcp') or {}).get(k)} (B)"
                 for k in keys if (ea.get("tcp") or {}).get(k) != (eb.get("tcp") or {}).get(k)]
    if (a.meta.get("backend") == b.meta.get("backend") == "sim"
            and ea.get("host_noise") != eb.get("host_noise")):
        soft.append("host timing noise differs")
    return hard, soft


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
    hard, soft = differences(a, b)
    if hard and not allow_different:
        raise CompareError(f"{a.path} and {b.path} are not runs of the same set-up: "
                           + "; ".join(hard) + " — compare runs of one experiment (e.g. "
                           "`ccbench run FILE --backend both`), or pass --allow-different to "
                           "compare them anyway with the differences printed")
    rename = _match_flows(a, b)
    if rename:
        soft += [f"flow {i + 1}: {x!r} (A) and {y!r} (B) matched by position and route"
                 for i, (y, x) in enumerate(rename.items()) if x != y]
    an_a = analyze(a, "per-flow", interval)
    an_b = analyze(b, "per-flow", interval)
    # B's curves under A's labels (when they differ), so tables and overlays pair them
    b_summary = an_b.summary.with_columns(pl.col("curve").replace(rename))
    b_intervals = an_b.per_interval.with_columns(pl.col("curve").replace(rename))
    tot_a = analyze(a, "total", interval).summary
    tot_b = analyze(b, "total", interval).summary
    sa = pl.concat([an_a.summary, tot_a], how="diagonal_relaxed")
    sb = pl.concat([b_summary, tot_b], how="diagonal_relaxed")
    cols = [m for m, _ in METRICS]
    t = sa.select("curve", *cols).join(sb.select("curve", *cols), on="curve", suffix="_b",
                                       maintain_order="left")
    t = t.rename({c: f"{c}_a" for c in cols})
    for c in cols:
        t = t.with_columns(
            pl.when(pl.col(f"{c}_a").abs() > 0)
            .then((pl.col(f"{c}_b") - pl.col(f"{c}_a")) / pl.col(f"{c}_a").abs() * 100)
            .otherwise(None).alias(f"{c}_diff_pct"))
    warn = accuracy_warnings(a, "A") + accuracy_warnings(b, "B")
    return Comparison(a, b, _name(a), _name(b), t, (an_a.overall_jain, an_b.overall_jain),
                      an_a.per_interval, b_intervals, tuple(hard + soft), tuple(warn))


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
    return "\n".join(lines)


def write_table(c: Comparison, out_dir: str | Path) -> list[Path]:
    """Write ``compare.txt`` (:func:`text`) and ``compare.csv`` (the table) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.txt").write_text(text(c) + "\n")
    c.table.write_csv(out / "compare.csv")
    return [out / "compare.txt", out / "compare.csv"]


__all__ = ["METRICS", "CompareError", "Comparison", "accuracy_warnings", "compare", "differences",
           "text", "write_table"]
