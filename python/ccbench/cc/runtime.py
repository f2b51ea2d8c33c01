"""From resolved flows with ``"python": target`` to the simulator's scheme factories.

A target is ``"package.module:Class"``, ``"path/to/file.py:Class"`` or, through the Python
API, a class or factory registered with :func:`register` (``"object:<name>#<n>"``). The
backend passes ``{flow id: make(conn) -> (obj, kind, value)}`` to ``ccbench._core``:
kind "ack" for a per-ACK :class:`~ccbench.cc.Scheme`, "fixed" (value = interval in ns) or
"rtt" (value = multiple of sRTT) for a :class:`~ccbench.cc.Controller`, "gym" for a flow the
Gymnasium environment drives.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import random
import re
import sys
from typing import Any, Callable

#: Objects handed to the Python API (classes, factories), by their target key.
OBJECTS: dict[str, Any] = {}
_FILE_MODULES: dict[str, Any] = {}


class TargetError(ValueError):
    """A ``python:`` target that cannot be loaded (message names the fix)."""


def register(obj: Any) -> str:
    """Key under which a class/factory given through the Python API is found again."""
    for k, v in OBJECTS.items():
        if v is obj:
            return k
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    key = f"object:{name}#{len(OBJECTS) + 1}"
    OBJECTS[key] = obj
    return key


def _load_file(path: str) -> Any:
    full = os.path.abspath(path)
    if full in _FILE_MODULES:
        return _FILE_MODULES[full]
    if not os.path.isfile(full):
        raise TargetError(f"no such file {path!r}")
    digest = hashlib.sha1(full.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"ccbench_userscheme_{digest}", full)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = mod  # type: ignore[union-attr]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    _FILE_MODULES[full] = mod
    return mod


def load(target: str) -> Any:
    """The class or factory a target names."""
    if target in OBJECTS:
        return OBJECTS[target]
    if target.startswith("object:"):
        raise TargetError(f"{target!r} was registered in another process: pass the class as "
                          f"\"module:Class\" to run it in campaign workers")
    mod_name, sep, attr = target.rpartition(":")
    if not sep or not mod_name or not attr:
        raise TargetError(f"{target!r} is not \"module:Class\" or \"file.py:Class\"")
    try:
        mod = _load_file(mod_name) if mod_name.endswith(".py") else importlib.import_module(mod_name)
    except TargetError:
        raise
    except Exception as e:  # import errors of user code: name them
        raise TargetError(f"cannot import {mod_name!r}: {type(e).__name__}: {e}") from e
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{mod_name!r} has no attribute {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetError(f"{target!r} is not a class or factory")
    return obj


def check_params(target: str, params: dict) -> str | None:
    """Problem with constructing ``target(**params)`` (unknown/missing keyword), else None."""
    obj = load(target)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(**params)
    except TypeError as e:
        accepted = [p.name for p in sig.parameters.values()
                    if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        return f"{e}; {target} takes " + (", ".join(accepted) if accepted else "no parameters")
    return None


_RTT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)?\s*\*?\s*(?:x\s*)?(s?rtts?)\s*$", re.I)


def parse_interval(value: Any) -> tuple[str, float]:
    """``"10ms"`` / seconds -> ("fixed", ns); ``"rtt"``, ``"2rtt"`` -> ("rtt", k)."""
    from ..config.units import parse_time
    if isinstance(value, str):
        m = _RTT.match(value)
        if m:
            k = float(m.group(1) or 1.0)
            if k <= 0:
                raise TargetError(f"interval {value!r}: the RTT multiple must be > 0")
            return "rtt", k
    try:
        ns = parse_time(value, ("interval",), bare_ns=10**9)
    except Exception as e:  # ConfigError
        raise TargetError(f"interval {value!r} is not a time (\"10ms\") or an RTT multiple "
                          f"(\"rtt\", \"2rtt\"): {e}") from e
    if ns is None or ns <= 0:
        raise TargetError(f"interval {value!r} must be > 0")
    return "fixed", float(ns)


def instance(target: str, params: dict, *, seed: int, flow: int, conn: int) -> Any:
    """A fresh scheme object with the run's deterministic context attached."""
    obj = load(target)(**params)
    ctx = {"flow": flow, "conn": conn, "seed": seed,
           "rng": random.Random(seed * 1_000_003 + conn)}
    for k, v in ctx.items():
        if getattr(obj, k, None) is None or k == "rng":
            try:
                setattr(obj, k, v)
            except AttributeError:
                pass
    return obj


def kind_of(obj: Any) -> tuple[str, float]:
    if callable(getattr(obj, "on_interval", None)):
        return parse_interval(getattr(obj, "interval", "rtt"))
    return "ack", 0.0


def externals(experiment: dict, *, gym_flows: dict[int, Any] | None = None
              ) -> dict[int, Callable[[int], tuple]]:
    """``{flow id: make(conn)}`` for the Python-scheme flows of a resolved experiment;
    ``gym_flows`` adds flows driven by the Gymnasium environment."""
    seed = int(experiment.get("seed", 0))
    out: dict[int, Callable[[int], tuple]] = {}
    for f in experiment.get("flows", []):
        fid = int(f["id"])
        if gym_flows and fid in gym_flows:
            out[fid] = lambda conn: (None, "gym", 0.0)
            continue
        target = f.get("python")
        if not target:
            continue
        params = dict(f.get("params") or {})

        def make(conn: int, target=target, params=params, fid=fid):
            obj = instance(target, params, seed=seed, flow=fid, conn=conn)
            kind, value = kind_of(obj)
            return obj, kind, value
        out[fid] = make
    return out


__all__ = ["register", "load", "check_params", "parse_interval", "instance", "externals",
           "OBJECTS", "TargetError"]
