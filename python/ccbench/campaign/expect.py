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
flows of one run combined first, ``within: mean|sum``). Verdicts print like a run's.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..expect import Verdict
from .layout import numeric_axis, ordered

#: names accepted for the index's metric columns (the column names themselves too)
ALIASES = {"throughput": "avg_tput_mbps", "delay-mean": "mean_delay_ms",
           "delay-median": "median_delay_ms", "delay-p95": "p95_delay_ms", "loss": "loss_pct",
           "retransmissions": "retrans_pkts", "jain": "jain", "utilisation": "utilization_pct",
           "fct-mean": "fct_mean_ms"}
UNITS = {"avg_tput_mbps": "Mbit/s", "mean_delay_ms": "ms", "median_delay_ms": "ms",
         "p95_delay_ms": "ms", "loss_pct": "%", "retrans_pkts": "packets", "jain": "",
         "utilization_pct": "%", "fct_mean_ms": "ms"}
STATS = ("mean", "ci_low", "ci_high", "median", "min", "max", "std", "n")
SELECTORS = ("scheme", "direction", "group", "flow", "flow_label")
MONOTONE = ("increasing", "decreasing")
KEYS = ("name", "metric", *SELECTORS, "within", "at", "stat", "level", "min", "max",
        "monotone", "in", "tolerance", "crossing", "by", "between")


@dataclass
class CampaignVerdict(Verdict):
    unit: str = ""

    def line(self) -> str:
        v = "N/A" if self.value is None else f"{self.value:.4g}"
        return (f"{'PASS' if self.passed else 'FAIL'}  {self.name}: measured {v}"
                f"{' ' if self.unit else ''}{self.unit}, expected {self.bound}"
                + (f" ({self.detail})" if self.detail else ""))


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
    metric_names = sorted(set(ALIASES) | set(UNITS))
    out = []
    for i, e in enumerate(doc):
        p = ("expect", i)
        if not isinstance(e, dict):
            errs.error(p, f"{e!r} is not a mapping", "an expectation has metric:, a selection, "
                       "and min:/max:, monotone: or crossing:", e)
            continue
        bad = False

        def err(key, msg, hint="", value=None):
            nonlocal bad
            bad = True
            errs.error(p + ((key,) if key else ()), msg, hint, value)

        for k in e:
            if k not in KEYS:
                err(k, f"unknown key {k!r}", "valid keys: " + ", ".join(KEYS), k)
        m = e.get("metric")
        col = ALIASES.get(m, m if m in UNITS else None)
        if col is None:
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
                if _match(x, columns[a]) is None:
                    err("at", f"{a} has no value {x!r}", "values: "
                        + ", ".join(str(c) for c in columns[a]), x)
            n["at"][a] = vs
        kinds = [k for k in ("monotone", "crossing") if k in e] + (
            ["bound"] if "min" in e or "max" in e else [])
        if len(kinds) != 1:
            err(None, "an expectation needs exactly one of min:/max:, monotone: or crossing:"
                + (f" (got {', '.join(kinds)})" if kinds else ""),
                "e.g. {metric: throughput, scheme: bbr, stat: ci_low, min: 5}")
            continue
        n["kind"] = kinds[0]
        for b in ("min", "max"):
            if b in e:
                if not _num(e[b]):
                    err(b, f"{e[b]!r} is not a number", "", e[b])
                n[b] = e[b]
        if n["kind"] in ("monotone", "crossing"):
            ax = e.get("in")
            if ax not in columns:
                err("in", f"{n['kind']} needs in: a swept column, got {ax!r}",
                    "swept: " + ", ".join(columns), ax)
                continue
            n["in"] = ax
        if n["kind"] == "monotone":
            if e["monotone"] not in MONOTONE:
                err("monotone", f"{e['monotone']!r}", "use increasing or decreasing",
                    e["monotone"])
            n["monotone"] = e["monotone"]
            tol = e.get("tolerance", 0)
            if not _num(tol) or tol < 0:
                err("tolerance", f"tolerance {tol!r} is not a number >= 0", "", tol)
            n["tolerance"] = tol
        elif "tolerance" in e:
            err("tolerance", "tolerance applies to monotone: only")
        if n["kind"] == "crossing":
            cr = e["crossing"]
            num = numeric_axis(columns[n["in"]])
            if num is None:
                err("in", f"crossing needs a numeric axis; {n['in']} is not",
                    "values: " + ", ".join(str(c) for c in columns[n["in"]]), n["in"])
                continue
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
                continue
            lohi = [_axis_number(b, num[1]) for b in btw]
            if None in lohi:
                err("between", f"{btw!r} are not values of {n['in']}"
                    + (f" in {num[1]}" if num[1] else ""), "e.g. between: [1bdp, 4bdp]", btw)
            n["between"] = btw
            n["between_num"] = lohi
        elif "between" in e or "by" in e:
            err(None, "between:/by: apply to crossing: only")
        if n["kind"] != "bound" and n["stat"] == "n":
            err("stat", "stat n makes sense only with min:/max:")
        if bad:
            continue
        if not n["name"]:
            n["name"] = describe(n)
        out.append(n)
    return out


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


def _match(v, values):
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


def _stats(index: pl.DataFrame, n: dict, by=()) -> pl.DataFrame:
    from .aggregate import aggregate
    sel = index
    for k, v in n["select"].items():
        sel = sel.filter(pl.col(k).cast(pl.String) == str(v))
    if not sel.height:
        return pl.DataFrame()
    st = aggregate(sel, by=list(by), metrics=[n["metric"]], level=n["level"], within=n["within"])
    if n["stat"] == "n":
        st = st.with_columns(pl.col("n").cast(pl.Float64))
    keep = []
    for r in st.iter_rows(named=True):
        keep.append(all(_match(r[a], vs) is not None for a, vs in n["at"].items()))
    return st.filter(pl.Series(keep, dtype=pl.Boolean)) if keep else st


def _series(st: pl.DataFrame, axis: str, columns: list[str], extra=()):
    """Rows grouped by every swept column but ``axis`` (and ``extra``), each ordered along
    ``axis``: [(description, [(axis value, row)])]."""
    others = [c for c in columns if c != axis and c in st.columns
              and not (st[c].n_unique() > 1  # a value derived from the axis itself
                       and st.group_by(axis).agg(pl.col(c).n_unique())[c].max() == 1
                       and st[c].n_unique() == st[axis].n_unique())] + list(extra)
    out = []
    groups = st.group_by(others, maintain_order=True) if others else [((), st)]
    for key, g in groups:
        order = ordered(g[axis].to_list())
        rows = {str(r[axis]): r for r in g.iter_rows(named=True)}
        desc = ", ".join(f"{c}={k}" for c, k in zip(others, key if isinstance(key, tuple) else (key,)))
        out.append((desc, [(v, rows[str(v)]) for v in order]))
    return out


def _value(r, stat):
    v = r.get(stat)
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _bound(n, st) -> CampaignVerdict:
    unit = "" if n["stat"] == "n" else UNITS[n["metric"]]
    lo, hi = n.get("min"), n.get("max")
    btext = " and ".join(x for x in ((f">= {lo:g}" if lo is not None else ""),
                                     (f"<= {hi:g}" if hi is not None else "")) if x)
    btext += f" at every point" if st.height != 1 else ""
    if not st.height:
        return CampaignVerdict(n["name"], n["metric"], None, btext, False,
                               "no finished run has the selection", unit)
    worst, worst_r, worst_gap, missing = None, None, -math.inf, []
    for r in st.iter_rows(named=True):
        v = _value(r, n["stat"])
        if v is None:
            missing.append(r["label"])
            continue
        gap = max((lo - v) if lo is not None else -math.inf, (v - hi) if hi is not None else -math.inf)
        if gap > worst_gap:
            worst, worst_r, worst_gap = v, r, gap
    ok = not missing and worst is not None and worst_gap <= 0
    det = f"{st.height} point{'s' if st.height > 1 else ''}"
    if worst_r is not None:
        det += f"; worst at {worst_r['label']} (n={worst_r['n']})"
    if missing:
        det += (f"; N/A at {len(missing)} ({missing[0]}"
                + (": a confidence interval needs 2 repeats" if n["stat"].startswith("ci") else "")
                + ")")
    return CampaignVerdict(n["name"], n["metric"], worst, btext, ok, det, unit)


def _monotone(n, st, columns) -> CampaignVerdict:
    unit = UNITS[n["metric"]]
    up = n["monotone"] == "increasing"
    tol = float(n["tolerance"])
    btext = (f"every step >= {-tol if tol else 0:g}" if up else f"every step <= {tol:g}") \
        + f" along {n['in']}"
    worst, where, steps = None, "", 0
    for desc, rows in _series(st, n["in"], columns):
        vals = [(x, _value(r, n["stat"])) for x, r in rows]
        vals = [(x, v) for x, v in vals if v is not None]
        for (x0, v0), (x1, v1) in zip(vals, vals[1:]):
            d = v1 - v0
            steps += 1
            if worst is None or (d < worst if up else d > worst):
                worst, where = d, f"{x0} → {x1}" + (f" ({desc})" if desc else "")
    if worst is None:
        return CampaignVerdict(n["name"], n["metric"], None, btext, False,
                               f"fewer than two values of {n['in']} with a {n['stat']}", unit)
    ok = worst >= -tol if up else worst <= tol
    return CampaignVerdict(n["name"], n["metric"], worst, btext, ok,
                           f"{'smallest' if up else 'largest'} step of {steps}: {where}", unit)


def _crossing(n, index, columns) -> CampaignVerdict:
    ax = n["in"]
    lo, hi = n["between_num"]
    unit = numeric_axis(ordered(index[ax].to_list()))[1]
    btext = f"between {n['between'][0]} and {n['between'][1]}"
    cr = n["crossing"]
    if isinstance(cr, list):
        st = _stats(index, n, by=[n["by"]])
        if not st.height:
            return CampaignVerdict(n["name"], n["metric"], None, btext, False, "no data", unit)
        series = []
        for desc, rows in _series(st.filter(pl.col(n["by"]).cast(pl.String) == cr[0]), ax,
                                  columns):
            other = {(desc, str(x)): r for d2, rr in _series(
                st.filter(pl.col(n["by"]).cast(pl.String) == cr[1]), ax, columns)
                for x, r in rr if d2 == desc}
            pts = []
            for x, r in rows:
                o = other.get((desc, str(x)))
                a, b = _value(r, n["stat"]), None if o is None else _value(o, n["stat"])
                if a is not None and b is not None:
                    pts.append((x, a - b))
            series.append((desc, pts))
        what = f"{cr[0]} − {cr[1]}"
    else:
        st = _stats(index, n)
        series = [(d, [(x, v - cr) for x, r in rows if (v := _value(r, n["stat"])) is not None])
                  for d, rows in _series(st, ax, columns)]
        what = f"{n['as']} − {cr:g}"
    nums = dict(zip(*(lambda v: (v, numeric_axis(v)[0]))(ordered(index[ax].to_list()))))
    log = all(v > 0 for v in nums.values()) and max(nums.values()) / min(nums.values()) > 20
    found, worst, worst_gap, none = [], None, -math.inf, []
    for desc, pts in series:
        xs = []
        for (x0, d0), (x1, d1) in zip(pts, pts[1:]):
            if d0 == 0:
                xs.append(nums[x0])
            elif d0 * d1 < 0:
                a, b = nums[x0], nums[x1]
                f = d0 / (d0 - d1)
                xs.append(math.exp(math.log(a) + f * (math.log(b) - math.log(a))) if log
                          else a + f * (b - a))
        if pts and pts[-1][1] == 0 and len(pts) > 1:
            xs.append(nums[pts[-1][0]])
        if not xs:
            none.append(desc or "the sweep")
            continue
        for x in xs:
            found.append((x, desc))
            gap = max(lo - x, x - hi)
            if gap > worst_gap:
                worst, worst_gap = (x, desc), gap
    if none or worst is None:
        return CampaignVerdict(n["name"], n["metric"], None, btext, False,
                               f"{what} never changes sign in {ax}"
                               + (f" ({'; '.join(none[:3])})" if none and none != ["the sweep"]
                                  else ""), unit)
    det = f"{what} changes sign at " + ", ".join(
        f"{x:.3g}{unit}" + (f" ({d})" if d else "") for x, d in found[:4])
    return CampaignVerdict(n["name"], n["metric"], worst[0], btext, worst_gap <= 0, det, unit)


def evaluate(index: pl.DataFrame, expectations: list[dict], columns: list[str]) -> list[CampaignVerdict]:
    """Verdicts of normalised campaign expectations on a campaign index."""
    out = []
    for n in expectations:
        if n["kind"] == "bound":
            out.append(_bound(n, _stats(index, n)))
        elif n["kind"] == "monotone":
            out.append(_monotone(n, _stats(index, n), columns))
        else:
            out.append(_crossing(n, index, columns))
    return out


def columns_of(root: Path, index: pl.DataFrame) -> list[str]:
    from .aggregate import swept_columns
    return swept_columns(index, root)


def evaluate_dir(root: str | Path, *, index: pl.DataFrame | None = None,
                 expectations: list[dict] | None = None) -> list[CampaignVerdict]:
    """Verdicts of a campaign directory's expectations (those recorded in campaign.json by
    the last `ccbench sweep`, or ``expectations``)."""
    from .index import load_index
    root = Path(root)
    if expectations is None:
        m = root / "campaign.json"
        expectations = json.loads(m.read_text()).get("expect") if m.is_file() else None
    if not expectations:
        return []
    if index is None:
        index = load_index(root)
    return evaluate(index, expectations, columns_of(root, index))


def check_dir(root: str | Path, expect_file: str | Path | None = None, *,
              index: pl.DataFrame | None = None) -> list[CampaignVerdict]:
    """Verdicts of a campaign directory: its recorded expectations, or those of
    ``expect_file`` (a campaign file, or YAML with an ``expect:`` list or a bare list)."""
    from ..config.errors import Collector, ConfigErrors
    from .aggregate import swept_columns
    from .index import load_index
    root = Path(root)
    index = load_index(root) if index is None else index
    entries = None
    if expect_file:
        import yaml
        from .spec import is_campaign, load_campaign
        try:
            doc = yaml.safe_load(Path(expect_file).read_text())
        except yaml.YAMLError as e:
            raise ValueError(f"{expect_file}: not YAML ({e})") from None
        if is_campaign(doc):
            entries = load_campaign(expect_file).expect
        else:
            doc = doc.get("expect") if isinstance(doc, dict) else doc
            cols = {c: index[c].unique(maintain_order=True).to_list()
                    for c in swept_columns(index, root)}
            errs = Collector()
            entries = parse(doc, cols, errs)
            if errs:
                raise ConfigErrors(errs.errors)
    return evaluate_dir(root, index=index, expectations=entries)


__all__ = ["ALIASES", "CampaignVerdict", "STATS", "evaluate", "evaluate_dir", "parse"]
