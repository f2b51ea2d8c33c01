"""Verdicts of campaign expectations (parsed by expect.py) over a campaign's index: the
statistics of :func:`ccbench.campaign.aggregate` at each selected point, checked against each
expectation's bound, monotonicity or crossing."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..config.errors import Collector, ConfigErrors
from ..expect import Verdict
from .aggregate import aggregate, swept_columns
from .axes import numeric_axis, ordered
from .expect import UNITS, match_value, parse
from .index import load_index
from .spec import is_campaign, load_campaign


@dataclass
class CampaignVerdict(Verdict):
    unit: str = ""

    def line(self) -> str:
        v = "N/A" if self.value is None else f"{self.value:.4g}"
        return (f"{'PASS' if self.passed else 'FAIL'}  {self.name}: measured {v}"
                f"{' ' if self.unit else ''}{self.unit}, expected {self.bound}"
                + (f" ({self.detail})" if self.detail else ""))


def _stats(index: pl.DataFrame, n: dict, by=()) -> pl.DataFrame:
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
        keep.append(all(match_value(r[a], vs) is not None for a, vs in n["at"].items()))
    return st.filter(pl.Series(keep, dtype=pl.Boolean)) if keep else st


def _series(st: pl.DataFrame, axis: str, columns: list[str], extra=()):
    """Rows grouped by every swept column but ``axis`` (and ``extra``), each ordered along
    ``axis``: [(description, [(axis value, row)])]. A column that the axis and the columns
    before it determine (a derived value such as a queue size in bytes from ``bdp`` and the
    rate) is not a group: columns are taken in the plan's order, derived ones after axes."""
    others: list[str] = []
    for c in columns:
        if c == axis or c not in st.columns:
            continue
        if st[c].n_unique() > 1 and \
                st.group_by([axis] + others).agg(pl.col(c).n_unique())[c].max() == 1:
            continue
        others.append(c)
    others += list(extra)
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
        if worst is None or gap > worst_gap:  # an infinite bound leaves gap at -inf
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
    return swept_columns(index, root)


def evaluate_dir(root: str | Path, *, index: pl.DataFrame | None = None,
                 expectations: list[dict] | None = None) -> list[CampaignVerdict]:
    """Verdicts of a campaign directory's expectations (those recorded in campaign.json by
    the last `ccbench sweep`, or ``expectations``)."""
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
    root = Path(root)
    index = load_index(root) if index is None else index
    entries = None
    if expect_file:
        import yaml
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


__all__ = ["CampaignVerdict", "check_dir", "evaluate", "evaluate_dir"]
