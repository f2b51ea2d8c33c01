"""Campaign expectations: statements over aggregates across repeats (docs/expectations.md,
"Campaigns").

A campaign file's ``expect:`` list holds three kinds of entries, each over one metric of the
index, a selection of its flow rows and (optionally) some points:

* a **bound** on a statistic of the repeats at every selected point — ``stat: mean`` (default),
  ``ci_low``, ``ci_high``, ``median``, ``min``, ``max``, ``std``, ``n`` — with ``min:``/``max:``;
* **monotone** ``increasing`` / ``decreasing`` in an axis (``in:``): along the axis, every
  step of the statistic, for each combination of the other swept values, is >= ``-tolerance``
  (increasing) or <= ``tolerance`` (decreasing);
* a **crossing** in a numeric axis: ``crossing: [A, B]`` (two values of the ``by`` column,
  default scheme) or ``crossing: NUMBER``; the statistic of A minus that of B (or minus the
  number) changes sign, and every sign change lies ``between: [lo, hi]`` (axis values).

The statistics are those of :func:`ccbench.campaign.aggregate` over the selected rows (the
flows of one run combined first, ``within: mean|sum``). This module parses and checks the
entries; verdicts.py evaluates them over an index. Verdicts print like a run's.
"""
from __future__ import annotations

import math
from typing import Any

from .axes import numeric_axis

#: names accepted for the index's metric columns (the column names themselves too)
ALIASES = {"throughput": "avg_tput_mbps", "delay-mean": "mean_delay_ms",
           "delay-median": "median_delay_ms", "delay-p95": "p95_delay_ms", "loss": "loss_pct",
           "retransmissions": "retrans_pkts", "jain": "jain", "utilisation": "utilization_pct",
           "fct-mean": "fct_mean_ms", "rtt-under-load": "probe_median_rtt_ms",
           "rtt-under-load-p99": "probe_p99_rtt_ms"}
UNITS = {"avg_tput_mbps": "Mbit/s", "mean_delay_ms": "ms", "median_delay_ms": "ms",
         "p95_delay_ms": "ms", "loss_pct": "%", "retrans_pkts": "packets", "jain": "",
         "utilization_pct": "%", "fct_mean_ms": "ms", "probe_median_rtt_ms": "ms",
         "probe_p99_rtt_ms": "ms"}
STATS = ("mean", "ci_low", "ci_high", "median", "min", "max", "std", "n")
SELECTORS = ("scheme", "direction", "group", "flow", "flow_label")
MONOTONE = ("increasing", "decreasing")
KEYS = ("name", "metric", *SELECTORS, "within", "at", "stat", "level", "min", "max",
        "monotone", "in", "tolerance", "crossing", "by", "between")


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _axis_number(v, unit: str) -> float | None:
    got = numeric_axis([v])
    if got is None or (got[1] and got[1] != unit):
        return None
    return got[0][0]


def parse(doc: Any, columns: dict[str, list], errs) -> list[dict]:
    """Check a campaign's ``expect:`` list; ``columns``: swept column → its values (for
    ``in``/``at``/``between``). Problems go to ``errs`` (config.errors.Collector) with
    their YAML path; returns the normalised entries (JSON-able)."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        errs.error(("expect",), "expect: must be a list of expectations",
                   "e.g. expect: [{metric: throughput, scheme: bbr, stat: ci_low, min: 5}]", doc)
        return []
    out = []
    for i, e in enumerate(doc):
        p = ("expect", i)
        if not isinstance(e, dict):
            errs.error(p, f"{e!r} is not a mapping", "an expectation has metric:, a selection, "
                       "and min:/max:, monotone: or crossing:", e)
            continue
        n = _entry(e, columns, _Problems(errs, p))
        if n is not None:
            out.append(n)
    return out


class _Problems:
    """The problems of one entry: reported to ``errs`` under the entry's path, and
    remembered (``bad``: the entry is left out)."""

    def __init__(self, errs, path: tuple):
        self.errs, self.path, self.bad = errs, path, False

    def __call__(self, key, msg, hint="", value=None) -> None:
        self.bad = True
        self.errs.error(self.path + ((key,) if key else ()), msg, hint, value)


def _entry(e: dict, columns: dict[str, list], err: _Problems) -> dict | None:
    """One entry normalised, or None when it has a problem (reported through ``err``; the
    checks stop at the first problem that leaves the rest meaningless)."""
    n = _common(e, columns, err)
    kinds = [k for k in ("monotone", "crossing") if k in e] + (
        ["bound"] if "min" in e or "max" in e else [])
    if len(kinds) != 1:
        err(None, "an expectation needs exactly one of min:/max:, monotone: or crossing:"
            + (f" (got {', '.join(kinds)})" if kinds else ""),
            "e.g. {metric: throughput, scheme: bbr, stat: ci_low, min: 5}")
        return None
    n["kind"] = kinds[0]
    _bounds(e, n, err)
    if n["kind"] in ("monotone", "crossing"):
        ax = e.get("in")
        if ax not in columns:
            err("in", f"{n['kind']} needs in: a swept column, got {ax!r}",
                "swept: " + ", ".join(columns), ax)
            return None
        n["in"] = ax
    if n["kind"] == "monotone":
        _monotone(e, n, err)
    elif "tolerance" in e:
        err("tolerance", "tolerance applies to monotone: only")
    if n["kind"] == "crossing":
        if not _crossing(e, n, columns, err):
            return None
    elif "between" in e or "by" in e:
        err(None, "between:/by: apply to crossing: only")
    if n["kind"] != "bound" and n["stat"] == "n":
        err("stat", "stat n makes sense only with min:/max:")
    if err.bad:
        return None
    if not n["name"]:
        n["name"] = describe(n)
    return n


def _common(e: dict, columns: dict[str, list], err: _Problems) -> dict:
    """The keys every kind has: metric, selection, within, stat, level and at."""
    for k in e:
        if k not in KEYS:
            err(k, f"unknown key {k!r}", "valid keys: " + ", ".join(KEYS), k)
    m = e.get("metric")
    col = ALIASES.get(m, m if m in UNITS else None)
    if col is None:
        metric_names = sorted(set(ALIASES) | set(UNITS))
        err("metric", f"unknown metric {m!r}", "valid: " + ", ".join(metric_names), m)
    n: dict = {"name": str(e.get("name") or ""), "metric": col, "as": m}
    n["select"] = {k: e[k] for k in SELECTORS if k in e}
    n["within"] = e.get("within", "mean")
    if n["within"] not in ("mean", "sum"):
        err("within", f"within {n['within']!r}", "use mean or sum", n["within"])
    n["stat"] = e.get("stat", "mean")
    if n["stat"] not in STATS:
        err("stat", f"unknown statistic {n['stat']!r}", "valid: " + ", ".join(STATS),
            n["stat"])
    lvl = e.get("level", 0.95)
    if not _num(lvl) or not 0 < lvl < 1:
        err("level", f"confidence level {lvl!r} is not between 0 and 1", "e.g. 0.9", lvl)
    n["level"] = lvl
    at = e.get("at") or {}
    if not isinstance(at, dict):
        err("at", f"{at!r} is not a mapping", "at: {axis: value or [values]}", at)
        at = {}
    n["at"] = {}
    for a, v in at.items():
        if a not in columns:
            err("at", f"{a!r} is not a swept column", "swept: " + ", ".join(columns), a)
            continue
        vs = v if isinstance(v, list) else [v]
        for x in vs:
            if match_value(x, columns[a]) is None:
                err("at", f"{a} has no value {x!r}", "values: "
                    + ", ".join(str(c) for c in columns[a]), x)
        n["at"][a] = vs
    return n


def _bounds(e: dict, n: dict, err: _Problems) -> None:
    for b in ("min", "max"):
        if b in e:
            if not _num(e[b]):
                err(b, f"{e[b]!r} is not a number", "", e[b])
            elif math.isnan(e[b]):
                err(b, "NaN is no bound (it fails every comparison)",
                    "write a number, or leave the bound out", None)
            elif math.isinf(e[b]) and (e[b] > 0) == (b == "max"):
                continue  # max: .inf / min: -.inf bound nothing
            n[b] = e[b]


def _monotone(e: dict, n: dict, err: _Problems) -> None:
    if e["monotone"] not in MONOTONE:
        err("monotone", f"{e['monotone']!r}", "use increasing or decreasing", e["monotone"])
    n["monotone"] = e["monotone"]
    tol = e.get("tolerance", 0)
    if not _num(tol) or tol < 0:
        err("tolerance", f"tolerance {tol!r} is not a number >= 0", "", tol)
    n["tolerance"] = tol


def _crossing(e: dict, n: dict, columns: dict[str, list], err: _Problems) -> bool:
    """The crossing's value, by: and between:; False when the checks cannot go on."""
    cr = e["crossing"]
    num = numeric_axis(columns[n["in"]])
    if num is None:
        err("in", f"crossing needs a numeric axis; {n['in']} is not",
            "values: " + ", ".join(str(c) for c in columns[n["in"]]), n["in"])
        return False
    if _num(cr):
        n["crossing"] = float(cr)
    elif isinstance(cr, list) and len(cr) == 2:
        n["crossing"] = [str(x) for x in cr]
        n["by"] = e.get("by", "scheme")
        if n["by"] not in SELECTORS:
            err("by", f"{n['by']!r} is not a flow column", "valid: "
                + ", ".join(SELECTORS), n["by"])
        if n["by"] in n["select"]:
            err("by", f"crossing compares {n['by']} values, so it cannot also select "
                f"{n['by']}: {n['select'][n['by']]}")
    else:
        err("crossing", f"{cr!r}", "crossing: [A, B] (two schemes, or values of by:) "
            "or crossing: NUMBER", cr)
    btw = e.get("between")
    if not (isinstance(btw, list) and len(btw) == 2):
        err("between", "crossing needs between: [lo, hi] (values of the axis)", "", btw)
        return False
    lohi = [_axis_number(b, num[1]) for b in btw]
    if None in lohi:
        err("between", f"{btw!r} are not values of {n['in']}"
            + (f" in {num[1]}" if num[1] else ""), "e.g. between: [1bdp, 4bdp]", btw)
    n["between"] = btw
    n["between_num"] = lohi
    return True


def describe(n: dict) -> str:
    sel = ", ".join(f"{k} {v}" for k, v in n["select"].items())
    at = ", ".join(f"{k}={'|'.join(map(str, v))}" for k, v in n["at"].items())
    where = " (" + "; ".join(x for x in (sel, at and "at " + at) if x) + ")" if sel or at else ""
    what = f"{n['as']} {n['stat']}{where}"
    if n["kind"] == "monotone":
        return f"{what} {n['monotone']} in {n['in']}"
    if n["kind"] == "crossing":
        c = n["crossing"]
        other = f"{c[1]}" if isinstance(c, list) else f"{c:g}"
        who = f"{c[0]} " if isinstance(c, list) else ""
        return f"{n['as']} {n['stat']}{where}: {who}crosses {other} in {n['in']}"
    return what


def match_value(v, values):
    """The value of ``values`` equal to ``v`` (numbers compared as numbers), or None."""
    for x in values:
        if x == v or str(x) == str(v):
            return x
        a, b = numeric_axis([x]), numeric_axis([v])
        if a and b and a[1] == b[1] and math.isclose(a[0][0], b[0][0], rel_tol=1e-9):
            return x
    return None


def check_selection(entries: list[dict], flows_seen: dict[str, set]) -> list[tuple]:
    """(path, message, hint, value) for selections that match no flow of any point."""
    out = []
    for i, n in enumerate(entries):
        sel = dict(n["select"])
        if isinstance(n.get("crossing"), list):
            for x in n["crossing"]:
                if x not in flows_seen.get(n["by"], set()):
                    out.append((("expect", i, "crossing"), f"no flow has {n['by']} {x!r}",
                                "valid: " + ", ".join(sorted(flows_seen.get(n["by"], ()))), x))
        for k, v in sel.items():
            if str(v) not in flows_seen.get(k, set()):
                out.append((("expect", i, k), f"no flow has {k} {v!r}",
                            "valid: " + ", ".join(sorted(flows_seen.get(k, ()))), v))
    return out


__all__ = ["ALIASES", "STATS", "UNITS", "check_selection", "describe", "match_value", "parse"]
