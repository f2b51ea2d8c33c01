"""Experiment files -> a fully resolved experiment dict (docs/architecture.md, "Resolved
experiment"; user reference: docs/experiment-file.md).

Public API::

    resolve(doc, *, seed=None, source="<string>", schemes=None) -> dict
    load(path, *, seed=None, schemes=None) -> dict
    load_coco(layout_path, *, base="0ms", delta=None, step="0ms", jitter=None, runtime=30,
              rate=100.0, max_delay_us=100_000_000, seed=None, queue=None,
              first_queue=1000, second_queue=1000, lenient=False, schemes=None) -> dict
    resolve_coco(layout, **same keywords as load_coco) -> dict
    validate(path, *, schemes=None, **coco keywords) -> list[ConfigError]
    is_coco_layout(doc) -> bool

All failures raise :class:`ConfigErrors` (a :class:`ConfigError`, itself a ``ValueError``)
carrying every problem found, before anything runs.

``schemes`` is the scheme registry to validate names and parameters against (the shape of
``ccbench._core.schemes()``: a list of ``{"name", "params": [{"name", "default", ...}]}``;
plain names or a ``{name: [param names]}`` mapping also work). ``None`` skips the check (the
backend still refuses unknown schemes). The config layer imports nothing outside itself:
``ccbench.api.load_experiment`` passes the simulator's registry in.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from .coco import is_coco_layout, parse_coco
from .conditions import BASE_DIR
from .errors import Collector, ConfigError, ConfigErrors, NotSupportedError
from .build import build
from .model import HEADER_BYTES, SCHEMA_VERSION, bdp_packets
from .native import parse_native
from .schemes import Registry
from .units import parse_queue, parse_rate, parse_time
from .semantic import ConfigWarning
from .semantic import check as semantic_check
from .semantic import has_randomness
from .yamlsrc import Source, parse_yaml, read_yaml

__all__ = ["resolve", "load", "load_coco", "resolve_coco", "validate", "is_coco_layout",
           "ConfigError", "ConfigErrors", "NotSupportedError",
           "SCHEMA_VERSION", "HEADER_BYTES", "read_yaml", "parse_rate", "parse_time", "parse_queue",
           "bdp_packets", "has_randomness"]


_REGISTRIES: dict[int, tuple[Any, Registry]] = {}


def _registry(schemes: Any) -> Registry | None:
    """The Registry of ``schemes``, built once per schemes object (a campaign resolves every
    run against the same list: rebuilding it was a quarter of planning's time)."""
    if schemes is None:
        return None
    if isinstance(schemes, Registry):
        return schemes
    hit = _REGISTRIES.get(id(schemes))
    if hit is not None and hit[0] is schemes:
        return hit[1]
    reg = Registry(schemes)
    _REGISTRIES.clear()   # one at a time: the id of a freed list may be reused
    _REGISTRIES[id(schemes)] = (schemes, reg)
    return reg


def _finish(src: Source, errs: Collector, fn):
    """Run ``fn`` (which may raise ConfigErrors), merge with collected errors, add lines."""
    result = None
    if not errs:
        try:
            result = fn()
        except ConfigError as e:
            errs.add(e)
    if errs:
        raise src.locate(ConfigErrors(errs.errors))
    return result


def _meaningful(src: Source, exp: dict) -> dict:
    """Refuse settings that would make the run meaningless; warn about doubtful ones
    (semantic.py). Warnings go through ``warnings`` as :class:`ConfigWarning`."""
    errors, doubts = semantic_check(exp)
    if errors:
        raise ConfigErrors(errors)
    for w in doubts:
        src.locate(w)
        warnings.warn(w.located(), ConfigWarning, stacklevel=2)
    return exp


def _resolve_source(src: Source, *, seed: int | None, schemes: Any) -> dict:
    errs = Collector()
    if is_coco_layout(src.data):
        errs.error((), "this is a CoCo-Beholder layout (a top-level list of flow groups)",
                   "import it with load_coco()/resolve_coco() (CoCo-Beholder run.py "
                   "arguments: base, delta, step, --rate, --runtime, ...), or write a native "
                   "experiment with duration: and flows:")
        raise src.locate(ConfigErrors(errs.errors))
    token = BASE_DIR.set(_source_dir(src))
    try:
        parsed = parse_native(src.data, seed=seed, registry=_registry(schemes), errs=errs)
    finally:
        BASE_DIR.reset(token)
    return _finish(src, errs, lambda: _meaningful(src, build(*parsed)))


def _source_dir(src: Source) -> str | None:
    """Directory of the file ``src`` was read from (relative trace paths), if any."""
    return os.path.dirname(os.path.abspath(src.name)) if os.path.isfile(src.name) else None


def resolve(doc: Any, *, seed: int | None = None, source: str = "<string>",
            schemes: Any = None) -> dict:
    """Resolve a native experiment document (the dict ``yaml.safe_load`` gives, or YAML
    text) into the resolved-experiment dict. ``seed`` overrides the document's seed;
    ``source`` names the document in error messages."""
    src = parse_yaml(doc, source) if isinstance(doc, str) else Source(doc, source)
    return _resolve_source(src, seed=seed, schemes=schemes)


def load(path: str | os.PathLike, *, seed: int | None = None, schemes: Any = None) -> dict:
    """Read and resolve a native experiment file. Errors carry the file name and line."""
    return _resolve_source(read_yaml(path), seed=seed, schemes=schemes)


def _coco_from_source(src: Source, *, schemes: Any = None, **kwargs) -> dict:
    errs = Collector()
    parsed = parse_coco(src.data, registry=_registry(schemes), errs=errs, **kwargs)
    return _finish(src, errs, lambda: _meaningful(src, build(*parsed)))


def resolve_coco(layout: Any, *, base: Any = "0ms", delta: Any = None, step: Any = "0ms",
                 jitter: Any = None, runtime: float = 30, rate: float = 100.0,
                 max_delay_us: int = 100_000_000, seed: int | None = None,
                 queue: int | None = None, first_queue: int = 1000, second_queue: int = 1000,
                 lenient: bool = False, schemes: Any = None, source: str = "<layout>") -> dict:
    """Resolve an already-parsed CoCo-Beholder layout (a list of flow groups) with the
    central link given as CoCo-Beholder's ``run.py`` arguments."""
    src = parse_yaml(layout, source) if isinstance(layout, str) else Source(layout, source)
    return _coco_from_source(src, schemes=schemes, base=base, delta=delta, step=step,
                             jitter=jitter, runtime=runtime, rate=rate,
                             max_delay_us=max_delay_us, seed=seed, queue=queue,
                             first_queue=first_queue, second_queue=second_queue,
                             lenient=lenient)


def load_coco(layout_path: str | os.PathLike, *, base: Any = "0ms", delta: Any = None,
              step: Any = "0ms", jitter: Any = None, runtime: float = 30, rate: float = 100.0,
              max_delay_us: int = 100_000_000, seed: int | None = None,
              queue: int | None = None, first_queue: int = 1000, second_queue: int = 1000,
              lenient: bool = False, schemes: Any = None) -> dict:
    """Read a CoCo-Beholder ``layout.yml`` unchanged and resolve it.

    Keywords mirror ``run.py``: ``base``/``delta``/``step``/``jitter`` are CoCo time strings
    (``N``=ms, ``Nus``, ``Nms``, ``Ns``); ``runtime`` seconds (-t); ``rate`` Mbit/s, 0 =
    unlimited (-r); ``max_delay_us`` (-m); ``seed`` (-s); ``queue`` (-q, sets both central
    queues, exclusive with ``first_queue``/``second_queue`` = -q1/-q2). ``delta`` absent or
    >= runtime means a constant delay."""
    return _coco_from_source(read_yaml(layout_path), schemes=schemes, base=base, delta=delta,
                             step=step, jitter=jitter, runtime=runtime, rate=rate,
                             max_delay_us=max_delay_us, seed=seed, queue=queue,
                             first_queue=first_queue, second_queue=second_queue,
                             lenient=lenient)


def validate(path: str | os.PathLike, *, schemes: Any = None, coco: bool | None = None,
             **coco_kwargs) -> list[ConfigError]:
    """All problems of an experiment file, as a list (empty = valid). A file whose top level
    is a list is checked as a CoCo-Beholder layout (``coco=None`` auto-detects) with the
    ``load_coco`` keywords given."""
    try:
        src = read_yaml(path)
        if coco or (coco is None and is_coco_layout(src.data)):
            _coco_from_source(src, schemes=schemes, **coco_kwargs)
        else:
            if coco_kwargs:
                raise TypeError(f"CoCo-Beholder arguments given for a native file: "
                                f"{sorted(coco_kwargs)}")
            _resolve_source(src, seed=None, schemes=schemes)
    except ConfigErrors as e:
        return list(e.errors)
    except ConfigError as e:  # pragma: no cover - everything is wrapped in ConfigErrors
        return [e]
    return []
