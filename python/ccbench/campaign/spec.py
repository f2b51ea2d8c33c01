"""Campaign files: an experiment with a ``sweep:`` block, or a file naming a ``base:``
experiment with ``overrides:`` and a ``sweep:`` (docs/campaigns.md).

``load_campaign(path)`` / ``parse_campaign(doc)`` check the campaign part (axes, ranges, zip
groups, variants, derived values, filters, repeats) and return a :class:`Campaign`; every
problem is collected and raised at once as :class:`ccbench.config.ConfigErrors` whose paths
point into the file (``sweep.axes.central.queue``). The experiment points themselves are
validated by the config layer when the plan is expanded (plan.py).
"""
from __future__ import annotations

import copy
import difflib
import math
import os
from dataclasses import dataclass, field
from typing import Any

from ..config.errors import Collector, ConfigErrors, show
from ..config.native import TOP_KEYS
from ..config.yamlsrc import Source, read_yaml
from .expr import Expr, ExprError, fmt_number
from .paths import PathError, parse_path

TOP_NAMES = {canon for k in TOP_KEYS for canon in (k.name, *k.aliases)}
SWEEP_KEYS = ("axes", "zip", "variants", "derive", "where", "exclude", "label", "repeats",
              "seeds")
CAMPAIGN_KEYS = ("base", "overrides", "sweep", "repeats", "name", "expect")
SEED_MODES = ("per-point", "shared")
RESERVED_NAMES = {"point", "label", "repeat", "seed", "run_key", "variant", "flow", "group",
                  "scheme", "direction", "flow_label", "ccbench_version"}
#: Columns of the aggregate table (ccbench aggregate, campaign expectations): an axis of
#: one of these names would collide with them.
AGGREGATE_NAMES = {"metric", "value", "n", "mean", "median", "std", "min", "max", "ci_low",
                   "ci_high", "ci_half", "level"}
MAX_RUNS = 1_000_000


@dataclass
class Axis:
    name: str  # the index column
    path: tuple | None  # experiment key it sets; None for a variable
    values: list
    where: tuple  # location in the campaign file
    numeric_scale: str | None = None  # "linear" / "log" for ranges

    @property
    def path_text(self) -> str | None:
        from .paths import format_parts
        return None if self.path is None else format_parts(self.path)


@dataclass
class Dim:
    """One dimension of the cross product: an axis, a zip group (paired axes) or the
    variants (named bundles of overrides)."""

    axes: list[Axis]
    n: int
    variants: list[tuple[str, list[tuple[tuple, Any]]]] | None = None  # (name, [(path, value)])


@dataclass
class Derived:
    name: str
    path: tuple | None
    expr: Expr
    where: tuple


@dataclass
class Campaign:
    doc: dict  # the base experiment document, without campaign keys
    source: str  # file the base experiment was read from (relative paths, errors)
    dims: list[Dim] = field(default_factory=list)
    derived: list[Derived] = field(default_factory=list)
    where: list[Expr] = field(default_factory=list)
    exclude: list[Any] = field(default_factory=list)  # Expr or {name: value}
    label: str | None = None
    repeats: int = 1
    seeds: str = "per-point"
    name: str = "campaign"
    campaign_file: str | None = None
    expect: list = field(default_factory=list)  # campaign expectations (campaign/expect.py)

    @property
    def axes(self) -> list[Axis]:
        return [a for d in self.dims for a in d.axes]

    @property
    def n_combos(self) -> int:
        """Raw combinations of the axes and variants (before derived values and filters)."""
        n = 1
        for d in self.dims:
            n *= d.n
        return n

    @property
    def has_variants(self) -> bool:
        return any(d.variants for d in self.dims)

    @property
    def columns(self) -> list[str]:
        """The swept parameter columns of the index, in file order."""
        cols = ["variant"] if self.has_variants else []
        return cols + [a.name for a in self.axes]


def _is_path_key(key: str) -> bool:
    head = key.split(".")[0].split("[")[0]
    return head in TOP_NAMES or head.replace("_", "-") in TOP_NAMES


def _name_and_path(key: Any, where: tuple, errs: Collector, explicit_path=None):
    """An axis key is an experiment path (its first key is a top-level experiment key) or a
    variable name (an identifier used by derive/where/label)."""
    if explicit_path is not None:
        try:
            return str(key), parse_path(explicit_path)
        except PathError as e:
            errs.error(where + ("path",), str(e), "", explicit_path)
            return None
    if not isinstance(key, str):
        errs.error(where, f"{show(key)} is not an axis name or key path",
                   "write a key path such as central.queue or flows[0].scheme", key)
        return None
    if _is_path_key(key):
        try:
            return key, parse_path(key)
        except PathError as e:
            errs.error(where, str(e), "", key)
            return None
    if "." in key or "[" in key:
        head = key.split(".")[0].split("[")[0]
        close = difflib.get_close_matches(head, sorted(TOP_NAMES), n=1, cutoff=0.6)
        errs.error(where, f"{show(head)} is not a key of an experiment",
                   (f'did you mean "{close[0]}"? ' if close else "")
                   + "an axis path starts with one of: " + ", ".join(k.name for k in TOP_KEYS),
                   key)
        return None
    if not key.isidentifier():
        errs.error(where, f"{show(key)} is not a valid variable name",
                   "use letters, digits and _ (or a key path such as central.queue)", key)
        return None
    return key, None


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _tidy(x: float) -> float | int:
    if math.isfinite(x):
        x = float(format(x, ".12g"))
        if x == int(x) and abs(x) < 2**53:
            return int(x)
    return x


def _range(spec: dict, where: tuple, errs: Collector) -> tuple[list, str] | None:
    """{from, to, num | step, scale: linear|log, unit} → values."""
    unknown = set(spec) - {"from", "to", "num", "step", "scale", "unit", "path"}
    for k in sorted(unknown, key=str):
        errs.error(where + (k,), f"unknown range key {show(k)}",
                   "a range has from, to, num or step, scale (linear|log) and unit", k)
    lo, hi = spec.get("from"), spec.get("to")
    num, step = spec.get("num"), spec.get("step")
    scale = spec.get("scale", "linear")
    unit = spec.get("unit")
    ok = not unknown
    for k, v in (("from", lo), ("to", hi)):
        if not _num(v):
            errs.error(where + (k,), f"range {k} {show(v)} is not a number",
                       "e.g. {from: 0.25, to: 8, num: 6, scale: log, unit: bdp}", v)
            ok = False
    if scale not in ("linear", "log"):
        errs.error(where + ("scale",), f"unknown scale {show(scale)}", "use linear or log", scale)
        ok = False
    if (num is None) == (step is None):
        errs.error(where, "a range needs exactly one of num (number of values) and step",
                   "e.g. {from: 10, to: 100, num: 4} or {from: 10, to: 100, step: 30}", spec)
        ok = False
    if num is not None and (not isinstance(num, int) or isinstance(num, bool) or num < 1):
        errs.error(where + ("num",), f"num {show(num)} is not a whole number >= 1", "", num)
        ok = False
    if step is not None and (not _num(step) or step <= 0 or scale == "log"):
        errs.error(where + ("step",), f"step {show(step)} must be a number > 0 on a linear "
                   "scale", "a log range is given by num", step)
        ok = False
    if unit is not None and not isinstance(unit, str):
        errs.error(where + ("unit",), f"unit {show(unit)} is not a string", "e.g. unit: bdp", unit)
        ok = False
    if not ok:
        return None
    if scale == "log" and (lo <= 0 or hi <= 0):
        errs.error(where, f"a log range needs from and to > 0, got {lo} and {hi}", "", spec)
        return None
    span = (hi - lo) / step if step is not None else 0.0
    count = (num if step is None else
             (math.floor(span + 1e-9) + 1 if math.isfinite(span) else math.inf))
    if count > MAX_RUNS:  # counted before a single value is built
        errs.error(where, f"the range has {count:,} values, more than a campaign's "
                   f"{MAX_RUNS:,} runs", "fewer values: a larger step or a smaller num", None)
        return None
    if step is not None:
        n = int(count)
        if n < 1:
            errs.error(where, f"from {lo} to {hi} in steps of {step} gives no value",
                       "from must be <= to", spec)
            return None
        vals = [lo + k * step for k in range(n)]
    elif num == 1:
        vals = [lo]
    elif scale == "log":
        a, b = math.log(lo), math.log(hi)
        vals = [math.exp(a + k * (b - a) / (num - 1)) for k in range(num)]
    else:
        vals = [lo + k * (hi - lo) / (num - 1) for k in range(num)]
    vals = [_tidy(v) for v in vals]
    if unit:
        vals = [fmt_number(v) + unit for v in vals]
    return vals, scale


def _values(spec: Any, where: tuple, errs: Collector):
    """Axis values: a list, or {values: [...]} / a range mapping. → (values, scale, path)."""
    path = None
    if isinstance(spec, dict):
        path = spec.get("path")
        if "values" in spec:
            extra = set(spec) - {"values", "path"}
            for k in sorted(extra, key=str):
                errs.error(where + (k,), f"unknown key {show(k)} beside values",
                           "an axis is {values: [...], path: ...} or a range {from, to, num}", k)
            spec = spec["values"]
        else:
            r = _range(spec, where, errs)
            return (None if r is None else (r[0], r[1], path))
    if not isinstance(spec, list):
        errs.error(where, f"{show(spec)} is not a list of values or a range",
                   "write [v1, v2, ...] or {from: 1, to: 8, num: 4, scale: log}", spec)
        return None
    if not spec:
        errs.error(where, "the list of values is empty", "give at least one value", spec)
        return None
    return list(spec), None, path


def _axis(key: Any, spec: Any, where: tuple, errs: Collector) -> Axis | None:
    got = _values(spec, where, errs)
    if got is None:
        return None
    values, scale, path = got
    np_ = _name_and_path(key, where, errs, path)
    if np_ is None:
        return None
    name, parts = np_
    return Axis(name=name, path=parts, values=values, where=where, numeric_scale=scale)


def _mapping(v: Any, where: tuple, errs: Collector, what: str) -> dict | None:
    if not isinstance(v, dict):
        errs.error(where, f"{show(v)} is not a mapping", what, v)
        return None
    return v


def _parse_sweep(sw: Any, c: Campaign, errs: Collector) -> None:
    base = ("sweep",)
    if sw is None:
        return
    if not _mapping(sw, base, errs, "sweep: holds axes, zip, variants, derive, where, exclude, "
                    "label, repeats, seeds"):
        return
    for k in sw:
        if k not in SWEEP_KEYS:
            close = difflib.get_close_matches(str(k), SWEEP_KEYS, n=1, cutoff=0.6)
            errs.error(base + (k,), f"unknown sweep key {show(k)}",
                       (f'did you mean "{close[0]}"? ' if close else "")
                       + "valid keys: " + ", ".join(SWEEP_KEYS), k)
    _sweep_axes(sw, c, errs, base)
    _sweep_zips(sw, c, errs, base)
    _sweep_variants(sw, c, errs, base)
    _sweep_derive(sw, c, errs, base)
    _sweep_filters(sw, c, errs, base)
    _sweep_options(sw, c, errs, base)
    _check_names(c, errs)


def _sweep_axes(sw: dict, c: Campaign, errs: Collector, base: tuple) -> None:
    """``axes:``: one dimension per axis."""
    axes = sw.get("axes")
    if axes is not None and _mapping(axes, base + ("axes",), errs,
                                     "axes: {central.queue: [100, 200], ...}"):
        for k, v in axes.items():
            a = _axis(k, v, base + ("axes", k), errs)
            if a is not None:
                c.dims.append(Dim([a], len(a.values)))


def _sweep_zips(sw: dict, c: Campaign, errs: Collector, base: tuple) -> None:
    """``zip:``: one dimension per group of axes that move together."""
    zips = sw.get("zip")
    if zips is not None:
        groups = zips if isinstance(zips, list) else [zips]
        for gi, g in enumerate(groups):
            w = base + ("zip",) + ((gi,) if isinstance(zips, list) else ())
            if not _mapping(g, w, errs, "a zip group pairs axes: {central.rate: [10Mbit, "
                            "100Mbit], central.delay: [50ms, 5ms]}"):
                continue
            members = [a for k, v in g.items() if (a := _axis(k, v, w + (k,), errs))]
            if len(members) != len(g):
                continue
            lens = {len(a.values) for a in members}
            if len(lens) > 1:
                errs.error(w, "the axes of a zip group must have the same number of values",
                           "got " + ", ".join(f"{a.name}: {len(a.values)}" for a in members), g)
                continue
            if members:
                c.dims.append(Dim(members, len(members[0].values)))


def _sweep_variants(sw: dict, c: Campaign, errs: Collector, base: tuple) -> None:
    """``variants:``: named sets of key paths, the first dimension."""
    variants = sw.get("variants")
    if variants is not None and _mapping(variants, base + ("variants",), errs,
                                         "variants: {name: {key.path: value, ...}, ...}"):
        vs = []
        for name, over in variants.items():
            w = base + ("variants", name)
            if not _mapping(over, w, errs, "a variant is a mapping of key paths to values"):
                continue
            sets = []
            for p, v in over.items():
                try:
                    parts = parse_path(p)
                except PathError as e:
                    errs.error(w + (p,), str(e), "", p)
                    continue
                if not _is_path_key(p):
                    errs.error(w + (p,), f"{show(p)} is not a key path of an experiment",
                               "a variant sets experiment keys, e.g. flows[0].scheme: bbr", p)
                    continue
                sets.append((parts, v))
            vs.append((str(name), sets))
        if vs:
            c.dims.insert(0, Dim([], len(vs), variants=vs))


def _sweep_derive(sw: dict, c: Campaign, errs: Collector, base: tuple) -> None:
    """``derive:``: values computed from the point's other values."""
    der = sw.get("derive")
    if der is not None and _mapping(der, base + ("derive",), errs,
                                    "derive: {central.queue: \"unit(2 * bdp(central.rate, "
                                    "rtt), 'B')\"}"):
        for k, text in der.items():
            w = base + ("derive", k)
            np_ = _name_and_path(k, w, errs)
            if np_ is None:
                continue
            if not isinstance(text, str):
                text = repr(text) if not isinstance(text, bool) else str(text).lower()
            try:
                c.derived.append(Derived(np_[0], np_[1], Expr(text), w))
            except ExprError as e:
                errs.error(w, str(e), "see docs/campaigns.md, \"Derived values\"", text)


def _sweep_filters(sw: dict, c: Campaign, errs: Collector, base: tuple) -> None:
    """``where:`` and ``exclude:``: the points kept and dropped."""
    for key in ("where", "exclude"):
        v = sw.get(key)
        if v is None:
            continue
        items = v if isinstance(v, list) else [v]
        for i, item in enumerate(items):
            w = base + (key,) + ((i,) if isinstance(v, list) else ())
            if isinstance(item, str):
                try:
                    (c.where if key == "where" else c.exclude).append(Expr(item))
                except ExprError as e:
                    errs.error(w, str(e), "a filter is an expression such as "
                               "\"scheme != 'bbr' or loss < 0.01\"", item)
            elif key == "exclude" and isinstance(item, dict) and item:
                c.exclude.append(dict(item))
            else:
                errs.error(w, f"{show(item)} is not a filter",
                           "write an expression string" + (", or a mapping {axis: value} of "
                                                           "the points to drop"
                                                           if key == "exclude" else ""), item)


def _sweep_options(sw: dict, c: Campaign, errs: Collector, base: tuple) -> None:
    """``label:``, ``repeats:`` and ``seeds:``."""
    if "label" in sw:
        if not isinstance(sw["label"], str):
            errs.error(base + ("label",), f"{show(sw['label'])} is not a label template",
                       "e.g. label: \"{flows[0].scheme} q={central.queue}\"", sw["label"])
        else:
            c.label = sw["label"]
    if "repeats" in sw:
        c.repeats = _repeats(sw["repeats"], base + ("repeats",), errs)
    if "seeds" in sw:
        if sw["seeds"] not in SEED_MODES:
            errs.error(base + ("seeds",), f"unknown seeds mode {show(sw['seeds'])}",
                       "per-point (each point and repeat its own seed) or shared (the same "
                       "seeds at every point, one per repeat)", sw["seeds"])
        else:
            c.seeds = sw["seeds"]


def _repeats(v, where, errs) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        errs.error(where, f"repeats {show(v)} is not a whole number >= 1", "e.g. repeats: 3", v)
        return 1
    if v > MAX_RUNS:
        errs.error(where, f"repeats {v:,} is more runs than a campaign may have",
                   f"at most {MAX_RUNS:,} runs in all", None)
        return 1
    return v


def _check_names(c: Campaign, errs: Collector) -> None:
    seen: dict[str, tuple] = {}
    for a in c.axes:
        if a.name in RESERVED_NAMES:
            path = a.path_text or a.name
            errs.error(a.where, f"{show(a.name)} is a column of the index already",
                       f"name the axis, e.g. my_{a.name.replace('-', '_')}: "
                       f"{{path: \"{path}\", values: [...]}}", a.name)
        elif a.name in AGGREGATE_NAMES:
            path = a.path_text or a.name
            errs.error(a.where, f"{show(a.name)} is a column of the aggregate table "
                       "(n, mean, ci_low, ...)",
                       f"name the axis, e.g. my_{a.name}: {{path: \"{path}\", values: [...]}}",
                       a.name)
        if a.name in seen:
            errs.error(a.where, f"axis {show(a.name)} is swept twice",
                       f"it is also swept at {'.'.join(map(str, seen[a.name]))}", a.name)
        seen[a.name] = a.where
    known = set(seen)
    for d in c.derived:
        missing = [n for n in d.expr.names if n not in known and not _is_path_key(n)]
        if missing:
            errs.error(d.where, f"{show(missing[0])} is neither an axis, an earlier derived "
                       "value nor an experiment key path", "known names: "
                       + (", ".join(sorted(known)) or "none"), d.expr.text)
        known.add(d.name)
    for e in c.where + [x for x in c.exclude if isinstance(x, Expr)]:
        missing = [n for n in e.names if n not in known and not _is_path_key(n)]
        if missing:
            errs.error(("sweep",), f"filter {show(e.text)} reads {show(missing[0])}, which is "
                       "neither an axis, a derived value nor an experiment key path",
                       "known names: " + (", ".join(sorted(known)) or "none"), e.text)
    for x in c.exclude:
        if isinstance(x, dict):
            for k in x:
                if k not in known and k != "variant":
                    errs.error(("sweep", "exclude"), f"exclude names {show(k)}, which is not "
                               "an axis", "known axes: " + (", ".join(sorted(known)) or "none"), k)
    used = {n for d in c.derived for n in d.expr.names} \
        | {n for e in c.where for n in e.names} \
        | {n for e in c.exclude for n in (e.names if isinstance(e, Expr) else e)}
    if c.label:
        import re
        used |= set(re.findall(r"\{([^{}]+)\}", c.label))
    for a in c.axes if not errs else ():
        if a.path is None and a.name not in used:
            errs.error(a.where, f"axis {show(a.name)} sets no experiment key and nothing "
                       "uses it", "give a key path (central.queue, flows[0].scheme, ...) or use "
                       "the variable in derive:", a.name)
    n = c.repeats
    for d in c.dims:
        n *= d.n
    if n > MAX_RUNS:
        errs.error(("sweep",), f"the sweep expands to {n:,} runs", f"at most {MAX_RUNS:,}", None)


def parse_campaign(doc: Any, *, source: str = "<string>", base_dir: str | None = None,
                   errs: Collector | None = None) -> Campaign:
    """A campaign from a parsed document. ``source``: its file name (relative ``base:``
    and trace paths resolve from its directory, ``base_dir`` overrides that)."""
    errs = errs if errs is not None else Collector()
    if not isinstance(doc, dict):
        errs.error((), f"{show(doc)} is not a campaign",
                   "write an experiment with a sweep: block, or base: FILE with a sweep:", doc)
        raise ConfigErrors(errs.errors)
    doc = copy.deepcopy(doc)
    if base_dir is None:
        base_dir = os.path.dirname(os.path.abspath(source)) if os.path.isfile(source) else "."
    c = Campaign(doc={}, source=source, campaign_file=source,
                 name=os.path.splitext(os.path.basename(source))[0] or "campaign")
    if "base" in doc:
        sweep_doc, reps, expect_doc = _campaign_on_base(doc, c, base_dir, errs)
    else:
        sweep_doc = doc.pop("sweep", None)
        expect_doc = doc.pop("expect", None)  # over aggregates, not a run's own expect:
        reps = None
        for k in ("repeats", "repeat"):
            if k in doc:
                reps = doc.pop(k)
        c.doc = doc
    _parse_sweep(sweep_doc, c, errs)
    if expect_doc is not None:
        from .expect import parse as parse_expect
        cols: dict = {}
        for d in c.dims:
            if d.variants:
                cols["variant"] = [v[0] for v in d.variants]
            for a in d.axes:
                cols[a.name] = list(a.values)
        c.expect = parse_expect(expect_doc, cols, errs)
    if reps is not None:
        if isinstance(sweep_doc, dict) and "repeats" in sweep_doc:
            errs.error(("repeats",), "repeats is given twice (top level and in sweep:)",
                       "keep one", reps)
        else:
            c.repeats = _repeats(reps, ("repeats",), errs)
            n = c.repeats
            for d in c.dims:
                n *= d.n
            if n > MAX_RUNS and not errs:
                errs.error(("repeats",), f"the sweep expands to {n:,} runs",
                           f"at most {MAX_RUNS:,}", None)
    if errs:
        raise ConfigErrors(errs.errors)
    return c


def _campaign_on_base(doc: dict, c: Campaign, base_dir: str, errs: Collector):
    """A campaign file with ``base:``: the base experiment read into ``c.doc`` with the
    file's ``overrides:``; returns the file's (sweep, repeats, expect)."""
    for k in doc:
        if k not in CAMPAIGN_KEYS:
            errs.error((k,), f"unknown key {show(k)} in a campaign file with base:",
                       "valid keys: " + ", ".join(CAMPAIGN_KEYS)
                       + "; change experiment keys with overrides: {key.path: value}", k)
    b = doc["base"]
    if not isinstance(b, str):
        errs.error(("base",), f"{show(b)} is not a file name", "base: experiment.yaml", b)
        raise ConfigErrors(errs.errors)
    bpath = b if os.path.isabs(b) else os.path.join(base_dir, b)
    try:
        src: Source = read_yaml(bpath)
    except ConfigErrors as e:
        errs.error(("base",), f"cannot read the base experiment {show(b)}: "
                   f"{e.errors[0].message}", "the path is relative to the campaign file", b)
        raise ConfigErrors(errs.errors) from None
    base = src.data
    if not isinstance(base, dict):
        errs.error(("base",), f"{show(b)} is not a native experiment (a mapping)",
                   "CoCo-Beholder layouts cannot be swept directly; write a native file", b)
        raise ConfigErrors(errs.errors)
    if "sweep" in base:
        errs.error(("base",), f"the base experiment {show(b)} has its own sweep:",
                   "a base is one experiment; move its sweep into this file", b)
    c.doc = copy.deepcopy(base)
    c.source = bpath
    if "name" in doc:
        c.name = str(doc["name"])
    ov = doc.get("overrides")
    if ov is not None and _mapping(ov, ("overrides",), errs,
                                   "overrides: {central.rate: 50Mbit, duration: 10}"):
        from .paths import set_path
        for p, v in ov.items():
            try:
                if not _is_path_key(str(p)):
                    raise PathError(f"{show(p)} is not a key path of an experiment")
                set_path(c.doc, parse_path(p), v)
            except PathError as e:
                errs.error(("overrides", p), str(e), "", p)
    sweep_doc = doc.get("sweep")
    reps = doc.get("repeats")
    expect_doc = doc.get("expect")
    return sweep_doc, reps, expect_doc


def load_campaign(path: str | os.PathLike) -> Campaign:
    """Read a campaign file. Errors name the file, line and key path."""
    src = read_yaml(path)
    try:
        return parse_campaign(src.data, source=str(path))
    except ConfigErrors as e:
        raise src.locate(e) from None


def is_campaign(doc: Any) -> bool:
    """Does a parsed document describe a campaign (``sweep``, ``repeats`` or ``base``)?"""
    return isinstance(doc, dict) and any(k in doc for k in ("sweep", "repeats", "repeat", "base"))
