"""Expansion of a campaign into points and runs, each resolved by the config layer.

A point is one combination of axis values (cross product of the dimensions, zip groups
paired, variants crossed like an axis), after derived values and filters. Its experiment
document is the base document with the axis values set at their paths; the config layer then
validates and resolves it exactly as it does a single experiment file. Each point has
``repeats`` runs whose seeds are derived from the point's base seed, the point's axis values
and the repeat index (:func:`derive_seed`). A run's key is the hash of what determines its
results (:func:`run_key`).
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .. import config as _config
from ..config.errors import ConfigError, ConfigErrors, format_path, show
from .expr import Expr, ExprError, fmt_number
from .paths import PathError, format_parts, get_path, parse_path, set_path
from .spec import Campaign

SEED_BITS = 63  # seeds stay positive in signed 64-bit columns


def derive_seed(base_seed: int, point: dict | None, repeat: int) -> int:
    """Seed of ``repeat`` at a point: the first 63 bits of SHA-256 over the base seed, the
    point's swept values (None for seeds shared by every point) and the repeat index."""
    text = json.dumps({"base": base_seed, "point": point, "repeat": repeat}, sort_keys=True,
                      separators=(",", ":"), default=str)
    h = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(h[:8], "big") >> (64 - SEED_BITS)


def run_key(experiment: dict, backend: str, seed: int, version: str) -> str:
    """Content address of a run: SHA-256 of the resolved experiment, backend, seed and ccbench
    version (first 20 hex digits). The emulation backend ignores the simulator's host noise
    model (its hosts are real), so ``host_noise`` is not part of an emulated run's key."""
    if backend == "emu":
        experiment = {k: v for k, v in experiment.items() if k != "host_noise"}
    text = json.dumps({"experiment": experiment, "backend": backend, "seed": seed,
                       "ccbench_version": version}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass
class Point:
    index: int
    values: dict  # column -> value: variant, axes, derived values
    swept: dict  # the axis values only (seed derivation)
    label: str
    doc: dict  # the point's experiment document


@dataclass
class Run:
    point: Point
    repeat: int
    seed: int
    experiment: dict
    key: str


@dataclass
class Plan:
    campaign: Campaign
    backend: str
    points: list[Point]
    runs: list[Run]
    excluded: int = 0
    columns: list[str] = field(default_factory=list)

    def table(self) -> pl.DataFrame:
        """One row per point: point, label, the swept columns, runs."""
        rows = [{"point": p.index, "label": p.label, **p.values,
                 "runs": self.campaign.repeats} for p in self.points]
        return _frame(["point", "label"] + self.columns + ["runs"], rows)

    def run_table(self) -> pl.DataFrame:
        rows = [{"run_key": r.key, "point": r.point.index, "repeat": r.repeat, "seed": r.seed,
                 "label": r.point.label, **r.point.values} for r in self.runs]
        return _frame(["run_key", "point", "repeat", "seed", "label"] + self.columns, rows)

    def seed_note(self) -> str | None:
        """A note when repeats cannot differ: simulated points with nothing random in them
        (exact host timing, no loss, jitter, random walk, arrivals or random queue/scheme)."""
        if self.backend != "sim" or self.campaign.repeats < 2:
            return None
        first: dict[int, dict] = {}  # each point's first run (its repeats differ only by seed)
        for r in self.runs:
            first.setdefault(r.point.index, r.experiment)
        same = [i for i, exp in first.items() if not _config.has_randomness(exp)]
        if not same:
            return None
        which = "every point" if len(same) == len(self.points) else \
            f"{len(same)} of {len(self.points)} points ({', '.join(map(str, same[:10]))}" \
            f"{', ...' if len(same) > 10 else ''})"
        return (f"repeats: {which} of this campaign has nothing random in it (host: {{noise: "
                f"exact}} and no loss, jitter, random walk, arrivals, RED/PIE/FQ queue or "
                f"randomised congestion control), so its {self.campaign.repeats} repeats give "
                f"identical results and a spread of zero; use the default host noise or "
                f"repeats: 1")

    def describe(self, max_points: int = 50) -> str:
        """The plan as text: counts, axes, a table of points."""
        c = self.campaign
        lines = [f"campaign {c.name}: {len(self.points)} points × {c.repeats} repeat"
                 f"{'s' if c.repeats != 1 else ''} = {len(self.runs)} runs on the "
                 f"{'simulator' if self.backend == 'sim' else 'emulator'}"
                 + (f" ({self.excluded} points excluded by filters)" if self.excluded else "")
                 + f"; seeds {c.seeds}"]
        if (note := self.seed_note()) is not None:
            lines.append(f"  note: {note}")
        if len({r.key for r in self.runs}) != len(self.runs):
            lines.append(f"  {len(self.runs) - len({r.key for r in self.runs})} runs repeat "
                         "another run exactly (same experiment and seed) and run once")
        lines.append("axes:")
        for d in c.dims:
            if d.variants:
                lines.append(f"  variant: {d.n} variants: "
                             + ", ".join(name for name, _ in d.variants))
            for a in d.axes:
                where = f" -> {a.path_text}" if a.path is not None and a.path_text != a.name \
                    else ("" if a.path is not None else " (variable)")
                zipped = " (zipped with " + ", ".join(x.name for x in d.axes if x is not a) \
                    + ")" if len(d.axes) > 1 else ""
                scale = f", {a.numeric_scale} range" if a.numeric_scale else ""
                lines.append(f"  {a.name}{where}: {len(a.values)} values{scale}{zipped}: "
                             + ", ".join(_text(v) for v in a.values))
        for dv in c.derived:
            lines.append(f"  {dv.name} = {dv.expr.text} (derived)")
        if not c.dims:
            lines.append("  none (repeats of one experiment)")
        tab = self.table().drop("runs")
        cols = tab.columns
        body = [[_text(v) for v in row] for row in tab.head(max_points).iter_rows()]
        widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(cols)]
        lines.append("points:")
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(cols, widths)).rstrip())
        for r in body:
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        if tab.height > max_points:
            lines.append(f"  … {tab.height - max_points} more points")
        return "\n".join(lines)


def _text(v: Any) -> str:
    """A value as it would be written in the campaign file (YAML flow style)."""
    if v is None:
        return "null"
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    return fmt_number(v)


def column_dtype(values: list) -> pl.DataType:
    """Numbers → Int64/Float64, booleans → Boolean, anything else → String."""
    vals = [v for v in values if v is not None]
    if vals and all(isinstance(v, bool) for v in vals):
        return pl.Boolean
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return pl.Int64
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return pl.Float64
    return pl.String


def column_value(v: Any, dtype) -> Any:
    if v is None:
        return None
    if dtype == pl.String:
        return v if isinstance(v, str) else json.dumps(v) if isinstance(v, (dict, list)) \
            else _text(v)
    if dtype == pl.Float64:
        return float(v)
    return v


def _schema(cols: list[str], rows: list[dict]) -> dict:
    fixed = {"point": pl.Int64, "label": pl.String, "runs": pl.Int64, "run_key": pl.String,
             "repeat": pl.Int64, "seed": pl.UInt64}
    return {c: fixed.get(c) or column_dtype([r.get(c) for r in rows]) for c in cols}


def _frame(cols: list[str], rows: list[dict]) -> pl.DataFrame:
    """Rows as a frame with one dtype per column; an axis mixing numbers and mappings
    (``[1000, {type: pie}]``) becomes a String column of its values as text."""
    schema = _schema(cols, rows)
    return pl.DataFrame([{c: column_value(r.get(c), schema[c]) for c in cols} for r in rows],
                        schema=schema)


class PlanErrors(ConfigErrors):
    """Invalid points: one entry per distinct problem, naming the points it affects."""

    def __init__(self, errors, n_invalid: int, n_points: int):
        self.n_invalid, self.n_points = n_invalid, n_points
        super().__init__(errors)

    def __str__(self) -> str:
        head = (f"{self.n_invalid} of {self.n_points} points of the campaign are invalid"
                if self.n_points else "the campaign is invalid")
        return "\n".join([head + f" ({len(self.errors)} distinct problems):"
                          if len(self.errors) > 1 else head + ":"]
                         + [f"  {e}" for e in self.errors])

    def __reduce__(self):
        return (PlanErrors, (self.errors, self.n_invalid, self.n_points))


def _point_text(values: dict) -> str:
    return ", ".join(f"{k}={_text(v)}" for k, v in values.items()) or "the base experiment"


def _label(template: str | None, values: dict, swept: dict, index: int) -> str:
    if not template:
        return _point_text(swept) if swept else f"point {index}"

    def sub(m):
        name = m.group(1)
        if name not in values:
            raise KeyError(name)
        return _text(values[name])
    return re.sub(r"\{([^{}]+)\}", sub, template)


def _combos(c: Campaign):
    """(assignments [(name, path, value)], variant name or None) per raw combination."""
    ranges = [range(d.n) for d in c.dims]
    for idx in itertools.product(*ranges):
        assign, variant = [], None
        for d, i in zip(c.dims, idx):
            if d.variants:
                variant, sets = d.variants[i]
                assign += [(None, p, v) for p, v in sets]
            for a in d.axes:
                assign.append((a.name, a.path, a.values[i]))
        yield assign, variant


def _matches(excl: dict, values: dict) -> bool:
    for k, v in excl.items():
        have = values.get(k)
        if isinstance(v, list):
            if have not in v:
                return False
        elif have != v:
            return False
    return True


def expand(campaign: Campaign, *, backend: str = "sim", packets: bool = False,
           version: str | None = None, schemes: Any = None) -> Plan:
    """Every point and run of ``campaign``, each point validated and every run resolved.
    All invalid points are reported together in one :class:`PlanErrors`."""
    from .. import api
    version = version or api.__version__
    c = campaign
    if schemes is None:
        schemes = api.registry()
    problems: dict[tuple, list[str]] = {}
    order: list[tuple] = []
    points: list[Point] = []
    runs: list[Run] = []
    n_points = n_bad = excluded = 0

    def problem(err: ConfigError, where: str):
        k = (err.path, err.message, err.hint)
        if k not in problems:
            problems[k] = []
            order.append((k, err))
        problems[k].append(where)

    for assign, variant in _combos(c):
        doc = copy.deepcopy(c.doc)
        values: dict = {} if variant is None else {"variant": variant}
        swept: dict = dict(values)
        bad = False
        for name, path, value in assign:
            if name is not None:
                values[name] = value
                swept[name] = value
        where_txt = _point_text(swept)
        for name, path, value in assign:
            if path is None:
                continue
            try:
                set_path(doc, path, value)
            except PathError as e:
                where = ("sweep", "axes", name) if name else ("sweep", "variants", variant)
                problem(ConfigError(where, str(e), "the axis path must fit the experiment"),
                        where_txt)
                bad = True

        def lookup(p, _values=values, _doc=doc):
            if p in _values:
                return _values[p]
            try:
                return get_path(_doc, parse_path(p))
            except KeyError:
                raise ExprError(f"{p} is not set in the experiment") from None
            except PathError as e:
                raise ExprError(str(e)) from None

        for dv in c.derived:
            if bad:
                break
            try:
                v = dv.expr.eval(lookup)
                values[dv.name] = v
                if dv.path is not None:
                    set_path(doc, dv.path, v)
            except (ExprError, PathError) as e:
                problem(ConfigError(("sweep", "derive", dv.name), str(e),
                                    "see docs/campaigns.md, \"Derived values\""), where_txt)
                bad = True
        if bad:
            n_points += 1
            n_bad += 1
            continue
        keep = True
        try:
            for e in c.where:
                keep = keep and bool(e.eval(lookup))
            for e in c.exclude:
                if isinstance(e, Expr):
                    keep = keep and not e.eval(lookup)
                elif _matches(e, values):
                    keep = False
        except ExprError as e:
            problem(ConfigError(("sweep",), f"filter: {e}", ""), where_txt)
            n_points += 1
            n_bad += 1
            continue
        if not keep:
            excluded += 1
            continue
        n_points += 1
        index = len(points)
        try:
            label = _label(c.label, values, swept, index)
        except KeyError as e:
            problem(ConfigError(("sweep", "label"), f"the label names {show(e.args[0])}, which "
                                "is not an axis or derived value",
                                "known: " + ", ".join(values)), where_txt)
            n_bad += 1
            continue
        base_seed = doc.get("seed", 1)
        if isinstance(base_seed, bool) or not isinstance(base_seed, int):
            base_seed = 1  # the config layer reports a bad seed
        point_runs = []
        for r in range(c.repeats):
            seed = derive_seed(base_seed, swept if c.seeds == "per-point" else None, r)
            try:
                exp = _config.resolve(doc, seed=seed, source=c.source, schemes=schemes)
            except ConfigErrors as errs:
                for e in errs.errors:
                    problem(e, where_txt)
                break
            exp["record_packets"] = bool(packets)
            if backend == "sim":
                cmd = [f for f in exp.get("flows", []) if f.get("command")]
                if cmd:
                    problem(ConfigError(("flows", cmd[0]["group"], "scheme"),
                                        f"{cmd[0]['scheme']!r} is a command scheme",
                                        "command schemes run only with --backend emu"),
                            where_txt)
                    break
                bpf = [f for f in exp.get("flows", []) if f.get("bpf")]
                if bpf:
                    problem(ConfigError(("flows", bpf[0]["group"], "scheme"),
                                        f"{bpf[0]['scheme']!r} is a BPF scheme",
                                        "BPF schemes run only with --backend emu"),
                            where_txt)
                    break
            point_runs.append((r, seed, exp))
        if len(point_runs) != c.repeats:
            n_bad += 1
            continue
        p = Point(index=len(points), values=values, swept=swept, label=label, doc=doc)
        points.append(p)
        for r, seed, exp in point_runs:
            runs.append(Run(p, r, seed, exp, run_key(exp, backend, seed, version)))
    if problems:
        errs = []
        for k, e in order:
            pts = problems[k]
            shown = "; ".join(pts[:3]) + (f"; … {len(pts) - 3} more" if len(pts) > 3 else "")
            msg = e.message + (f" (at {len(pts)} point{'s' if len(pts) > 1 else ''}: {shown})")
            errs.append(ConfigError(e.path_parts, msg, e.hint, e.value, source=e.source,
                                    line=e.line))
        raise PlanErrors(errs, n_bad, n_points)
    if c.expect:
        _check_expect(c, runs)
    cols = list(c.columns) + [d.name for d in c.derived if d.name not in c.columns]
    return Plan(campaign=c, backend=backend, points=points, runs=runs, excluded=excluded,
                columns=cols)


def _check_expect(c: Campaign, runs: list) -> None:
    """The campaign expectations' selections must match flows of the plan's runs."""
    from .expect import check_selection
    seen: dict[str, set] = {"scheme": set(), "direction": set(), "group": set(), "flow": set(),
                            "flow_label": set()}
    for r in runs:
        for f in r.experiment.get("flows", []):
            for k, fk in (("scheme", "scheme"), ("direction", "direction"), ("group", "group"),
                          ("flow", "id"), ("flow_label", "label")):
                seen[k].add(str(f.get(fk)))
    bad = check_selection(c.expect, seen)
    if bad:
        raise ConfigErrors([ConfigError(p, m, h, v, source=c.campaign_file) for p, m, h, v in bad])


__all__ = ["Plan", "Point", "Run", "PlanErrors", "expand", "derive_seed", "run_key",
           "column_dtype", "column_value", "format_path", "format_parts"]
