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
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator

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
    experiment: dict | None
    key: str
    #: why a lazily planned run's point did not resolve (then ``experiment`` is None)
    error: str | None = None


@dataclass
class Plan:
    """The points and runs of a campaign. A small plan holds them all, resolved (``points``,
    ``runs``); a lazy one (more than :data:`EAGER_RUNS` runs) holds its counts and a checked
    sample, and :meth:`iter_runs` resolves the runs one point at a time."""

    campaign: Campaign
    backend: str
    points: list[Point] | None = None
    runs: list[Run] | None = None
    excluded: int = 0
    columns: list[str] = field(default_factory=list)
    packets: bool = False
    version: str = ""
    schemes: Any = None
    #: a lazy plan: its number of points after filters and the sample's resolved runs
    n_lazy_points: int = 0
    sample: list[Run] = field(default_factory=list)

    @property
    def lazy(self) -> bool:
        return self.runs is None

    @property
    def n_points(self) -> int:
        return self.n_lazy_points if self.lazy else len(self.points)

    @property
    def n_runs(self) -> int:
        return self.n_points * self.campaign.repeats

    def iter_points(self) -> Iterator[Point]:
        """The valid-looking points in order (a lazy plan's are not resolved yet)."""
        if not self.lazy:
            yield from self.points
            return
        c, problems, index = self.campaign, _Problems(), 0
        for assign, variant in _combos(c):
            got = _point(c, assign, variant, problems)
            if got:
                values, swept, doc = got
                label = _label(c.label, values, swept, index)
                yield Point(index=index, values=values, swept=swept, label=label, doc=doc)
            if got is not False:
                index += 1

    def iter_runs(self) -> Iterator[Run]:
        """Every run in order, resolved as it is reached. A lazy plan's point that does not
        resolve gives runs with ``experiment`` None and its problem in ``error``; every
        point's document is let go once its runs are resolved."""
        if not self.lazy:
            yield from self.runs
            return
        c = self.campaign
        for p in self.iter_points():
            problems = _Problems()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", _config.ConfigWarning)
                runs = _runs_of(c, p, self.backend, self.packets, self.version, self.schemes,
                                problems)
            if runs is None:
                err = str(problems.errors(1, 1).errors[0])
                runs = [Run(p, r, 0, None, _invalid_key(p, r), error=err)
                        for r in range(c.repeats)]
            p.doc = None
            yield from runs

    def check_lazily(self) -> None:
        """Count a lazy plan's points through its filters, and resolve a sample in which
        every value of every axis (and every variant) occurs: its problems are raised as
        :class:`PlanErrors` before anything runs."""
        c, problems = self.campaign, _Problems()
        n_points = n_bad = sampled = 0
        wanted = {(i, v) for i, d in enumerate(c.dims) for v in range(d.n)}
        # without derived values or filters every combination is a point: only the sample
        # needs its document built
        every = not (c.derived or c.where or c.exclude)
        for idx, (assign, variant) in zip(itertools.product(*[range(d.n) for d in c.dims]),
                                          _combos(c)):
            if every and sampled >= SAMPLE_POINTS or every and n_points and \
                    wanted.isdisjoint(enumerate(idx)):
                n_points += 1
                continue
            got = _point(c, assign, variant, problems)
            if got is False:
                self.excluded += 1
                continue
            n_points += 1
            if got is None:  # derived values and filters are checked at every point
                n_bad += 1
                sampled += 1
                continue
            new = {(i, v) for i, v in enumerate(idx)} & wanted
            if (new or n_points == 1) and sampled < SAMPLE_POINTS:
                wanted -= new
                sampled += 1
                values, swept, doc = got
                label = _label_of(c, values, swept, n_points - 1, problems)
                p = Point(index=n_points - 1, values=values, swept=swept, label=label or "",
                          doc=doc)
                # one repeat: the others differ only in their seed
                runs = _runs_of(c, p, self.backend, self.packets, self.version, self.schemes,
                                problems, repeats=1)
                if label is None or runs is None:
                    n_bad += 1
                else:
                    self.sample += runs
        if problems.order:
            raise problems.errors(n_bad, n_points, sampled)
        problems.emit()
        if c.expect:
            _check_expect(c, self.sample)
        self.n_lazy_points = n_points

    def table(self, limit: int | None = None) -> pl.DataFrame:
        """One row per point (the first ``limit``): point, label, the swept columns, runs."""
        rows = [{"point": p.index, "label": p.label, **p.values,
                 "runs": self.campaign.repeats}
                for p in itertools.islice(self.iter_points(), limit)]
        return _frame(["point", "label"] + self.columns + ["runs"], rows)

    def run_table(self) -> pl.DataFrame:
        rows = [{"run_key": r.key, "point": r.point.index, "repeat": r.repeat, "seed": r.seed,
                 "label": r.point.label, **r.point.values} for r in self.iter_runs()]
        return _frame(["run_key", "point", "repeat", "seed", "label"] + self.columns, rows)

    def seed_note(self) -> str | None:
        """A note when repeats cannot differ: simulated points with nothing random in them
        (exact host timing, no loss, jitter, random walk, arrivals or random queue/scheme)."""
        if self.backend != "sim" or self.campaign.repeats < 2:
            return None
        first: dict[int, dict] = {}  # each point's first run (its repeats differ only by seed)
        for r in self.sample if self.lazy else self.runs:
            first.setdefault(r.point.index, r.experiment)
        same = [i for i, exp in first.items() if not _config.has_randomness(exp)]
        if not same:
            return None
        which = "every point" if len(same) == len(first) == self.n_points else \
            f"{len(same)} of {len(first)} {'sampled ' if self.lazy else ''}points ({', '.join(map(str, same[:10]))}" \
            f"{', ...' if len(same) > 10 else ''})"
        return (f"repeats: {which} of this campaign has nothing random in it (host: {{noise: "
                f"exact}} and no loss, jitter, random walk, arrivals, RED/PIE/FQ queue or "
                f"randomised congestion control), so its {self.campaign.repeats} repeats give "
                f"identical results and a spread of zero; use the default host noise or "
                f"repeats: 1")

    def describe(self, max_points: int = 50) -> str:
        """The plan as text: counts, axes, a table of points."""
        c = self.campaign
        lines = [f"campaign {c.name}: {self.n_points} points × {c.repeats} repeat"
                 f"{'s' if c.repeats != 1 else ''} = {self.n_runs} runs on the "
                 f"{'simulator' if self.backend == 'sim' else 'emulator'}"
                 + (f" ({self.excluded} points excluded by filters)" if self.excluded else "")
                 + f"; seeds {c.seeds}"]
        if (note := self.seed_note()) is not None:
            lines.append(f"  note: {note}")
        if self.lazy:
            lines.append(f"  planned lazily (more than {EAGER_RUNS:,} runs): "
                         f"{len({r.point.index for r in self.sample})} points covering every "
                         "axis value were resolved and checked; the others are resolved as "
                         "they run, and one that does not resolve fails alone")
        elif len({r.key for r in self.runs}) != len(self.runs):
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
                shown = [_text(v) for v in a.values] if len(a.values) <= 24 else \
                    [_text(v) for v in a.values[:20]] + ["…"] + [_text(a.values[-1])]
                lines.append(f"  {a.name}{where}: {len(a.values)} values{scale}{zipped}: "
                             + ", ".join(shown))
        for dv in c.derived:
            lines.append(f"  {dv.name} = {dv.expr.text} (derived)")
        if not c.dims:
            lines.append("  none (repeats of one experiment)")
        tab = self.table(limit=max_points).drop("runs")
        cols = tab.columns
        body = [[_text(v) for v in row] for row in tab.head(max_points).iter_rows()]
        widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(cols)]
        lines.append("points:")
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(cols, widths)).rstrip())
        for r in body:
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        if self.n_points > max_points:
            lines.append(f"  … {self.n_points - max_points} more points")
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

    def __init__(self, errors, n_invalid: int, n_points: int, sampled: int | None = None):
        self.n_invalid, self.n_points, self.sampled = n_invalid, n_points, sampled
        super().__init__(errors)

    def __str__(self) -> str:
        head = (f"{self.n_invalid} of {self.n_points} points of the campaign are invalid"
                if self.n_points else "the campaign is invalid")
        if self.sampled is not None:
            head = (f"{self.n_invalid} of the {self.sampled} points checked of the "
                    f"campaign's {self.n_points:,} (a sample covering every axis value: the "
                    "campaign is planned lazily) are invalid")
        return "\n".join([head + f" ({len(self.errors)} distinct problems):"
                          if len(self.errors) > 1 else head + ":"]
                         + [f"  {e}" for e in self.errors])

    def __reduce__(self):
        return (PlanErrors, (self.errors, self.n_invalid, self.n_points, self.sampled))


def _invalid_key(p: Point, repeat: int) -> str:
    """A failure record's key for a run whose point does not resolve."""
    text = json.dumps({"point": p.swept, "repeat": repeat}, sort_keys=True, default=str)
    return "invalid-" + hashlib.sha256(text.encode()).hexdigest()[:12]


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


#: A campaign of at most this many runs (before filters) is planned eagerly: every run
#: resolved up front, every problem reported before anything runs. A larger one is planned
#: lazily: its points are counted, a sample covering every axis value is resolved, and the
#: other runs are resolved as they are executed (docs/campaigns.md, "Large campaigns").
EAGER_RUNS = 50_000
#: Points resolved when a lazy plan is checked (every value of every axis at least once).
SAMPLE_POINTS = 2_000


_NUMBER = re.compile(r"\d+(\.\d+)?")


class _Problems:
    """Distinct configuration problems, each with the points it affects; and the config
    layer's warnings, each distinct warning once with a count of the points it was given at."""

    def __init__(self):
        self.where: dict[tuple, list[str]] = {}
        self.order: list[tuple] = []
        self.warned: dict[str, list] = {}

    def add(self, err: ConfigError, where: str) -> None:
        # problems that differ only in their numbers are one problem, at several points
        k = (err.path, _NUMBER.sub("#", err.message), err.hint)
        if k not in self.where:
            self.where[k] = []
            self.order.append((k, err))
        self.where[k].append(where)

    def catch(self, records: list) -> None:
        for w in records:
            if issubclass(w.category, _config.ConfigWarning):
                text = str(w.message)
                # warnings that differ only in their numbers are one warning
                self.warned.setdefault(_NUMBER.sub("#", text), [text, 0])[1] += 1
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    def emit(self) -> None:
        for text, n in self.warned.values():
            more = f" (and at {n - 1} more point{'s' if n > 2 else ''} with other numbers)" \
                if n > 1 else ""
            warnings.warn(text + more, _config.ConfigWarning, stacklevel=3)
        self.warned.clear()

    def errors(self, n_bad: int, n_points: int, sampled: int | None = None) -> PlanErrors:
        errs = []
        for k, e in self.order:
            pts = self.where[k]
            shown = "; ".join(pts[:3]) + (f"; … {len(pts) - 3} more" if len(pts) > 3 else "")
            msg = e.message + (f" (at {len(pts)} point{'s' if len(pts) > 1 else ''}: {shown}"
                               + ("; the numbers differ between them" if len(pts) > 1 and
                                  _NUMBER.search(e.message) else "") + ")")
            errs.append(ConfigError(e.path_parts, msg, e.hint, e.value, source=e.source,
                                    line=e.line))
        return PlanErrors(errs, n_bad, n_points, sampled)


def _point(c: Campaign, assign: list, variant, problems: _Problems):
    """The point of one raw combination: (values, swept, doc), None when it is invalid (the
    problem recorded) or False when a filter excludes it."""
    doc = copy.deepcopy(c.doc)
    values: dict = {} if variant is None else {"variant": variant}
    swept: dict = dict(values)
    for name, path, value in assign:
        if name is not None:
            values[name] = value
            swept[name] = value
    where_txt = _point_text(swept)
    bad = False
    for name, path, value in assign:
        if path is None:
            continue
        try:
            set_path(doc, path, value)
        except PathError as e:
            where = ("sweep", "axes", name) if name else ("sweep", "variants", variant)
            problems.add(ConfigError(where, str(e), "the axis path must fit the experiment"),
                         where_txt)
            bad = True
    if bad:
        return None

    def lookup(p):
        if p in values:
            return values[p]
        try:
            return get_path(doc, parse_path(p))
        except KeyError:
            raise ExprError(f"{p} is not set in the experiment") from None
        except PathError as e:
            raise ExprError(str(e)) from None

    for dv in c.derived:
        try:
            v = dv.expr.eval(lookup)
            values[dv.name] = v
            if dv.path is not None:
                set_path(doc, dv.path, v)
        except (ExprError, PathError) as e:
            problems.add(ConfigError(("sweep", "derive", dv.name), str(e),
                                     "see docs/campaigns.md, \"Derived values\""), where_txt)
            return None
    try:
        keep = all(bool(e.eval(lookup)) for e in c.where)
        for e in c.exclude:
            if isinstance(e, Expr):
                keep = keep and not e.eval(lookup)
            elif _matches(e, values):
                keep = False
    except ExprError as e:
        problems.add(ConfigError(("sweep",), f"filter: {e}", ""), where_txt)
        return None
    return (values, swept, doc) if keep else False


def _runs_of(c: Campaign, p: Point, backend: str, packets: bool, version: str, schemes,
             problems: _Problems, repeats: int | None = None) -> list[Run] | None:
    """The resolved runs of a point (its first ``repeats``; default all), or None when it
    does not resolve (problems recorded)."""
    where_txt = _point_text(p.swept)
    base_seed = p.doc.get("seed", 1)
    if isinstance(base_seed, bool) or not isinstance(base_seed, int):
        base_seed = 1  # the config layer reports a bad seed
    runs = []
    for r in range(c.repeats if repeats is None else min(repeats, c.repeats)):
        seed = derive_seed(base_seed, p.swept if c.seeds == "per-point" else None, r)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                exp = _config.resolve(p.doc, seed=seed, source=c.source, schemes=schemes)
            problems.catch(caught)
        except ConfigErrors as errs:
            for e in errs.errors:
                problems.add(e, where_txt)
            return None
        exp["record_packets"] = bool(packets)
        if backend == "sim" and (msg := _config.semantic.sim_refusal(exp)) is not None:
            problems.add(msg, where_txt)
            return None
        runs.append(Run(p, r, seed, exp, run_key(exp, backend, seed, version)))
    return runs


def _label_of(c: Campaign, values: dict, swept: dict, index: int, problems: _Problems):
    try:
        return _label(c.label, values, swept, index)
    except KeyError as e:
        problems.add(ConfigError(("sweep", "label"), f"the label names {show(e.args[0])}, "
                                 "which is not an axis or derived value",
                                 "known: " + ", ".join(values)), _point_text(swept))
        return None


def expand(campaign: Campaign, *, backend: str = "sim", packets: bool = False,
           version: str | None = None, schemes: Any = None) -> Plan:
    """Every point and run of ``campaign``, each point validated and every run resolved
    (eagerly up to :data:`EAGER_RUNS` runs, lazily beyond). All invalid points are reported
    together in one :class:`PlanErrors`."""
    from .. import api
    version = version or api.__version__
    c = campaign
    if schemes is None:
        schemes = api.registry()
    cols = list(c.columns) + [d.name for d in c.derived if d.name not in c.columns]
    plan = Plan(campaign=c, backend=backend, columns=cols, packets=packets, version=version,
                schemes=schemes)
    if c.n_combos * c.repeats > EAGER_RUNS:
        plan.check_lazily()
        return plan
    problems = _Problems()
    points, runs = [], []
    n_points = n_bad = 0
    for assign, variant in _combos(c):
        got = _point(c, assign, variant, problems)
        if got is False:
            plan.excluded += 1
            continue
        n_points += 1
        if got is None:
            n_bad += 1
            continue
        values, swept, doc = got
        label = _label_of(c, values, swept, len(points), problems)
        if label is None:
            n_bad += 1
            continue
        p = Point(index=len(points), values=values, swept=swept, label=label, doc=doc)
        point_runs = _runs_of(c, p, backend, packets, version, schemes, problems)
        if point_runs is None:
            n_bad += 1
            continue
        points.append(p)
        runs += point_runs
    if problems.order:
        raise problems.errors(n_bad, n_points)
    problems.emit()
    if c.expect:
        _check_expect(c, runs)
    plan.points, plan.runs = points, runs
    return plan


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
