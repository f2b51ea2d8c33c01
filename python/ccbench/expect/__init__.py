"""Expectations: statements about a run's metrics that pass or fail (docs/expectations.md).

An experiment file's ``expect:`` list is parsed by :func:`parse` (errors name the YAML path and
list the valid names), carried in the results' ``metadata.json`` (``expect``; not part of the
simulator's input) and evaluated on results by :func:`evaluate`. Every value is computed from
the results tables with the estimators of :mod:`ccbench.analysis`.
"""
from __future__ import annotations

import math

import re
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from ..analysis.estimators import jain_index, percentile_nearest

#: metric → (unit, description)
METRICS = {
    "throughput": ("Mbit/s", "average throughput of the selection (delivered IP bytes) in the window"),
    "share": ("fraction", "the selection's throughput / all flows' throughput in the window"),
    "jain": ("", "Jain's index over the average throughputs of the `over` curves in the window"),
    "delay-mean": ("ms", "mean one-way delay of the selection's packets sent in the window"),
    "delay-median": ("ms", "median one-way delay (packets sent in the window)"),
    "delay-p95": ("ms", "95th-percentile one-way delay (packets sent in the window)"),
    "delay-p99": ("ms", "99th-percentile one-way delay (packets sent in the window)"),
    "loss": ("%", "packets of the selection sent in the window that were dropped"),
    "utilisation": ("fraction", "bytes carried by `link` in the window / its capacity"),
    "convergence": ("s", "time from the window start until Jain's index over `over` stays >= threshold"),
    "rto": ("count", "entries into the loss (RTO) state seen in the selection's sender samples"),
}
SELECTORS = ("flow", "group", "scheme", "direction", "link", "total")
OVER = {"flows": "id", "schemes": "scheme", "groups": "group", "directions": "direction"}
KEYS = ("name", "metric", *SELECTORS, "over", "after", "before", "min", "max", "threshold")
_DELAY = ("delay-mean", "delay-median", "delay-p95", "delay-p99")
_BASE = re.compile(r"^\s*([0-9.]+)\s*[x×*]\s*base[- _]?rtt\s*$")


class ExpectError(ValueError):
    """An invalid expectation; the message names its YAML path and the valid choices."""


@dataclass
class Verdict:
    name: str
    metric: str
    value: float | None
    bound: str
    passed: bool
    detail: str = ""

    def line(self) -> str:
        v = "N/A" if self.value is None else f"{self.value:.4g}"
        unit = METRICS[self.metric][0]
        return (f"{'PASS' if self.passed else 'FAIL'}  {self.name}: measured {v}{' ' if unit else ''}{unit}, "
                f"expected {self.bound}" + (f" ({self.detail})" if self.detail else ""))


def _time(v, path):
    from ..config.units import parse_time
    try:
        return int(parse_time(v, (path,), bare_ns=1_000_000_000))
    except Exception as e:
        raise ExpectError(f"{path}: {v!r} is not a time ({e}); e.g. 10s or 500ms") from None


def parse(doc, flows: list[dict] | None = None, links: list[dict] | None = None,
          duration_ns: int | None = None) -> list[dict]:
    """Validate an ``expect:`` list; returns normalised entries (JSON-able, times in ns).
    With ``duration_ns``, a window must start before the run ends and end by then."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise ExpectError("expect: must be a list of expectations, e.g. "
                          "expect: [{metric: jain, over: flows, after: 10s, min: 0.9}]")
    out = []
    for i, e in enumerate(doc):
        p = f"expect[{i}]"
        if not isinstance(e, dict):
            raise ExpectError(f"{p}: {e!r} is not a mapping (metric:, a selection, min:/max:)")
        for k in e:
            if k not in KEYS:
                raise ExpectError(f"{p}.{k}: unknown key; valid: {', '.join(KEYS)}")
        m = e.get("metric")
        if m not in METRICS:
            raise ExpectError(f"{p}.metric: unknown metric {m!r}; valid: {', '.join(METRICS)}")
        if "min" not in e and "max" not in e:
            raise ExpectError(f"{p}: needs a bound, min: and/or max:")
        n = {"name": str(e.get("name") or ""), "metric": m}
        for b in ("min", "max"):
            if b in e:
                v = e[b]
                if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                    raise ExpectError(f"{p}.{b}: {v!r} is not a number")
                if isinstance(v, float) and math.isnan(v):
                    raise ExpectError(f"{p}.{b}: NaN is no bound (it fails every comparison); "
                                      "write a number, or leave the bound out")
                if isinstance(v, float) and math.isinf(v) and (v > 0) == (b == "max"):
                    continue  # max: .inf / min: -.inf bound nothing: the same as leaving it out
                if isinstance(v, str):
                    if not _BASE.match(v) or m not in _DELAY:
                        raise ExpectError(f"{p}.{b}: {v!r} is not a number"
                                          + ("; delay bounds may be written '2x base-rtt'"
                                             if m in _DELAY else ""))
                n[b] = v
        sel = [k for k in SELECTORS if k in e]
        if len(sel) > 1:
            raise ExpectError(f"{p}: one selection at a time, got {', '.join(sel)}")
        if m == "utilisation" and sel != ["link"]:
            raise ExpectError(f"{p}: utilisation needs link: <a link name>")
        if sel == ["link"] and m != "utilisation":
            raise ExpectError(f"{p}.link: only utilisation selects a link; flows are selected "
                              f"with {', '.join(s for s in SELECTORS if s != 'link')}")
        if sel:
            n["select"] = sel[0]
            n["value"] = e[sel[0]]
            _check_selection(n, flows, links, p)
        if m in ("jain", "convergence"):
            ov = e.get("over", "flows")
            if ov not in OVER:
                raise ExpectError(f"{p}.over: unknown {ov!r}; valid: {', '.join(OVER)}")
            n["over"] = ov
            if m == "convergence":
                th = e.get("threshold", 0.9)
                if isinstance(th, bool) or not isinstance(th, (int, float)) \
                        or not 0 < float(th) <= 1:
                    raise ExpectError(f"{p}.threshold: {th!r} is not a Jain's index in (0, 1]; "
                                      "e.g. threshold: 0.9")
                n["threshold"] = float(th)
        elif "over" in e or "threshold" in e:
            raise ExpectError(f"{p}: over:/threshold: apply to jain and convergence only")
        for t in ("after", "before"):
            if t in e:
                n[t + "_ns"] = _time(e[t], f"{p}.{t}")
                if duration_ns is not None and (n[t + "_ns"] > duration_ns or (
                        t == "after" and n[t + "_ns"] >= duration_ns)):
                    raise ExpectError(f"{p}.{t}: {e[t]} is past the run's end "
                                      f"({duration_ns / 1e9:g} s): the window would hold "
                                      "nothing")
        if not n["name"]:
            n["name"] = _describe(n)
        out.append(n)
    return out


def _check_selection(n, flows, links, p):
    s, v = n["select"], n["value"]
    if s == "link":
        names = [l["name"] for l in links or []]
        if links is not None and v not in names:
            raise ExpectError(f"{p}.link: no link {v!r}; links: {', '.join(names)}")
    elif flows is not None and s != "total":
        if not _selected(flows, s, v):
            vals = sorted({str(f[{'flow': 'id'}.get(s, s)]) for f in flows}
                          | ({f['label'] for f in flows} if s == "flow" else set()))
            raise ExpectError(f"{p}.{s}: no flow matches {v!r}; valid: {', '.join(vals)}")


def _selected(flows, s, v) -> list[dict]:
    if s == "total":
        return list(flows)
    if s == "flow":
        return [f for f in flows if str(f["id"]) == str(v) or f["label"] == v]
    return [f for f in flows if str(f.get(s)) == str(v)]


def _describe(n) -> str:
    # a flow selected by its id says "flow id N" (0-based, as the `flow` column), never
    # "flow N", which a reader takes for the label's 1-based "Flow N"
    what = ("flow id" if n.get("select") == "flow" and str(n.get("value")).isdigit()
            else n.get("select"))
    sel = "total" if "select" not in n else f"{what} {n['value']}"
    if n["metric"] in ("jain", "convergence"):
        sel = f"over {n['over']}" + ("" if "select" not in n else f" of {what} {n['value']}")
    w = ""
    if "after_ns" in n:
        w += f" after {n['after_ns'] / 1e9:g} s"
    if "before_ns" in n:
        w += f" before {n['before_ns'] / 1e9:g} s"
    return f"{n['metric']} ({sel}{w})"


def _window(n, exp):
    return n.get("after_ns", 0), n.get("before_ns", exp["duration_ns"])


def _flow_bytes(results, ids, a, b) -> np.ndarray:
    """Delivered bytes per flow id in [a, b): packets when recorded, else the interval table."""
    if results.packets is not None and results.packets.height:
        p = results.packets.filter(pl.col("arrival_ns").is_not_null()
                                   & (pl.col("arrival_ns") >= a) & (pl.col("arrival_ns") < b))
        g = dict(p.group_by("flow").agg(pl.col("size").sum()).iter_rows())
    else:
        # per sample_interval bin: bins starting in [a, b)
        si = results.experiment["sample_interval_ns"]
        it = results.intervals.with_columns((pl.col("bin") * si).alias("t"))
        p = it.filter((pl.col("t") >= a) & (pl.col("t") < b))
        g = dict(p.group_by("flow").agg(pl.col("delivered_bytes").sum()).iter_rows())
    return np.array([float(g.get(i, 0)) for i in ids])


def _delays(results, ids, a, b):
    if results.packets is None or not results.packets.height:
        raise ExpectError("delay expectations need per-packet records (packets: true)")
    p = results.packets.filter(pl.col("flow").is_in(list(ids)) & (pl.col("sent_ns") >= a)
                               & (pl.col("sent_ns") < b))
    return p


def _measure(n, results):
    exp = results.experiment
    flows = exp["flows"]
    a, b = _window(n, exp)
    m = n["metric"]
    sel = _selected(flows, n.get("select", "total"), n.get("value"))
    ids = [int(f["id"]) for f in sel]
    secs = max(b - a, 1) / 1e9
    if m == "throughput":
        return _flow_bytes(results, ids, a, b).sum() * 8 / secs / 1e6, ""
    if m == "share":
        tot = _flow_bytes(results, [int(f["id"]) for f in flows], a, b).sum()
        return (_flow_bytes(results, ids, a, b).sum() / tot if tot else None), ""
    if m == "jain":
        key = OVER[n["over"]]
        by = _flow_bytes(results, ids, a, b)
        groups: dict = {}
        for f, x in zip(sel, by):
            groups[f[key]] = groups.get(f[key], 0.0) + x
        return jain_index(list(groups.values())), f"{len(groups)} {n['over']}"
    if m in _DELAY:
        p = _delays(results, ids, a, b)
        d = p.filter(pl.col("arrival_ns").is_not_null())
        d = ((d["arrival_ns"] - d["sent_ns"]).cast(pl.Float64) / 1e6).to_numpy()
        if not len(d):
            return None, "no packets delivered in the window"
        if m == "delay-mean":
            return float(d.mean()), f"{len(d)} packets"
        q = {"delay-median": 50, "delay-p95": 95, "delay-p99": 99}[m]
        return float(percentile_nearest(d, q)), f"{len(d)} packets"
    if m == "loss":
        p = _delays(results, ids, a, b)
        return (100.0 * p["drop_ns"].is_not_null().sum() / p.height if p.height else None), ""
    if m == "utilisation":
        link = next(l for l in exp["links"] if l["name"] == n["value"])
        if not link.get("rate_bps"):
            return None, "unlimited link"
        q = results.queues
        lid = link["id"] if "id" in link else exp["links"].index(link)
        if results.packets is not None and results.packets.height:
            # data packets delivered (by arrival time) of the flows whose data path has the link
            through = [int(f["id"]) for f in flows if lid in f["path"]]
            carried = _flow_bytes(results, through, a, b).sum()
        else:
            raise ExpectError("utilisation needs per-packet records (packets: true)")
        del q
        return carried * 8 / secs / link["rate_bps"], ""
    if m == "convergence":
        from ..analysis import analyze
        key = OVER[n["over"]]
        grouping = {"flows": "per-flow", "schemes": "per-scheme", "groups": "per-flow",
                    "directions": "per-direction"}[n["over"]]
        an = analyze(results, grouping=grouping, interval=0.5)
        j = an.jain.filter((pl.col("t_s") * 1e9 >= a) & (pl.col("t_s") * 1e9 < b)).sort("t_s")
        bad = j.filter(pl.col("jain") < n["threshold"])
        if not j.height:
            return None, "no interval with two or more curves"
        if not bad.height:
            return 0.0, f"0.5 s intervals, {key}"
        last = bad["t_s"].max() + 0.5
        if last >= b / 1e9 - 1e-9:
            return None, f"Jain's index still below {n['threshold']:g} at the window's end"
        return last - a / 1e9, "0.5 s intervals"
    if m == "rto":
        fl = results.flows
        if fl is None or "ca_state" not in fl.columns:
            return None, "no sender samples"
        s = fl.filter(pl.col("flow").is_in(ids) & (pl.col("time_ns") >= a) & (pl.col("time_ns") < b))
        s = s.sort("flow", "time_ns").with_columns(
            (pl.col("ca_state") == "loss").alias("l"),
            (pl.col("ca_state") == "loss").shift(1).over("flow").fill_null(False).alias("pl"))
        return float(s.filter(pl.col("l") & ~pl.col("pl")).height), "sampled"
    raise AssertionError(m)


def _bound(n, results) -> tuple[float | None, float | None, str]:
    def val(v):
        if isinstance(v, str):
            k = float(_BASE.match(v).group(1))
            sel = _selected(results.experiment["flows"], n.get("select", "total"), n.get("value"))
            return k * max(f["base_rtt_ns"] for f in sel) / 1e6
        return float(v)
    lo = val(n["min"]) if "min" in n else None
    hi = val(n["max"]) if "max" in n else None
    parts = []
    if lo is not None:
        parts.append(f">= {lo:.4g}" + (f" ({n['min']})" if isinstance(n["min"], str) else ""))
    if hi is not None:
        parts.append(f"<= {hi:.4g}" + (f" ({n['max']})" if isinstance(n["max"], str) else ""))
    return lo, hi, " and ".join(parts)


def evaluate(results, expectations: list[dict] | None = None) -> list[Verdict]:
    """Verdicts of ``expectations`` (default: those stored with the results)."""
    exp = results.experiment
    if expectations is None:
        expectations = results.meta.get("expect") or []
    # re-check names against this run (results may come from elsewhere)
    ex = parse_normalised(expectations, exp)
    out = []
    for n in ex:
        value, detail = _measure(n, results)
        lo, hi, btext = _bound(n, results)
        ok = value is not None and (lo is None or value >= lo) and (hi is None or value <= hi)
        out.append(Verdict(n["name"], n["metric"], None if value is None else float(value),
                           btext, bool(ok), detail))
    return out


def parse_normalised(entries, exp):
    """Entries already normalised by :func:`parse` (times in ns), checked against ``exp``."""
    for i, n in enumerate(entries):
        if "select" in n:
            _check_selection(n, exp["flows"], exp["links"], f"expect[{i}]")
    return entries


def junit(verdicts: list[Verdict], suite: str) -> str:
    """JUnit XML: one test case per expectation."""
    from xml.sax.saxutils import escape  # here: it imports urllib and ssl (~20 ms)
    fails = sum(not v.passed for v in verdicts)
    out = [f'<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuite name="{escape(suite)}" tests="{len(verdicts)}" failures="{fails}">']
    for v in verdicts:
        out.append(f'  <testcase classname="{escape(suite)}" name="{escape(v.name)}">')
        if not v.passed:
            out.append(f'    <failure message="{escape(v.line(), {chr(34): "&quot;"})}"/>')
        out.append(f"    <system-out>{escape(v.line())}</system-out></testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"


def as_dicts(verdicts):
    return [asdict(v) for v in verdicts]


__all__ = ["METRICS", "SELECTORS", "ExpectError", "Verdict", "evaluate", "junit", "parse"]
