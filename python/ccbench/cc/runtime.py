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
#: Targets already loaded and checked, and parameter-name sets already bound (per process).
_LOADED: dict[str, Any] = {}
_PARAMS_OK: set[tuple] = set()


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
    # as for a script, the file's own directory is on the path while it loads (its imports of
    # neighbouring modules; cc/sources.py hashes those too)
    here = os.path.dirname(full)
    sys.path.insert(0, here)
    try:
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    finally:
        if here in sys.path:
            sys.path.remove(here)
    _FILE_MODULES[full] = mod
    return mod


def _split(target: str) -> tuple[str, str]:
    mod_name, sep, attr = target.rpartition(":")
    if not sep or not mod_name or not attr:
        raise TargetError(f"{target!r} is not \"module:Class\" or \"file.py:Class\"")
    return mod_name, attr


def module_spec(mod_name: str, search: list[str] | None = None):
    """The import spec of dotted module ``mod_name`` found on ``search`` (default sys.path)
    without importing anything (a package's ``__init__`` is not run to find its submodule);
    None when there is no such module."""
    import importlib.machinery
    parts, spec, where = mod_name.split("."), None, search
    for i in range(len(parts)):
        try:
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), where)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        where = spec.submodule_search_locations
    return spec


def _source_of(mod_name: str) -> str:
    """The source file of module ``mod_name``, found on sys.path without importing anything
    (a package's ``__init__`` is not run to find its submodule)."""
    if mod_name.endswith(".py"):
        full = os.path.abspath(mod_name)
        if not os.path.isfile(full):
            raise TargetError(f"no such file {mod_name!r}")
        return full
    spec = module_spec(mod_name)
    if spec is None:
        raise TargetError(f"cannot import {mod_name!r}: no such module on the Python path")
    origin = getattr(spec, "origin", None)
    if not origin or not origin.endswith(".py"):
        raise TargetError(f"{mod_name!r} is not a Python source module: a scheme is a class "
                          "in a .py file or a module of one")
    return origin


def source_file(target: str) -> str | None:
    """The source file a ``"module:Class"`` / ``"file.py:Class"`` target lives in, found
    without importing anything; None for an object registered through the Python API."""
    if target in OBJECTS or target.startswith("object:"):
        return None
    return _source_of(_split(target)[0])


def _parse_source(mod_name: str):
    """(source path, its ``ast`` module) of a module or file, read without running it."""
    import ast
    src = _source_of(mod_name)
    try:
        with open(src, "rb") as fh:
            tree = ast.parse(fh.read(), filename=src)
    except (OSError, SyntaxError, ValueError) as e:
        raise TargetError(f"cannot read {mod_name!r} as Python: {type(e).__name__}") from None
    return src, tree


def _import(mod_name: str) -> Any:
    """Import a module or ``.py`` file (its top-level code runs), naming what failed."""
    try:
        return _load_file(mod_name) if mod_name.endswith(".py") else importlib.import_module(mod_name)
    except TargetError:
        raise
    except Exception as e:  # import errors of user code: name them
        raise TargetError(f"cannot import {mod_name!r}: {type(e).__name__}: {e}") from e


def load_function(target: str) -> Any:
    """A function a parameter names (a gym policy, ``"module:function"`` or
    ``"file.py:function"``): its source must define it at top level (``def`` or a class),
    outside Python's standard library, before the module is imported; API objects as given."""
    import ast
    import sysconfig
    if target in OBJECTS:
        return OBJECTS[target]
    mod_name, attr = _split(target)
    src, tree = _parse_source(mod_name)
    std = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    if any(os.path.realpath(src).startswith(d + os.sep) for d in std):
        raise TargetError(f"{mod_name!r} is part of Python's standard library: a policy is a "
                          "function of your own module or file")
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if "." in attr or not any(isinstance(n, kinds) and n.name == attr for n in tree.body):
        raise TargetError(f"{mod_name!r} defines no function {attr!r} at its top level")
    mod = _import(mod_name)
    obj = getattr(mod, attr, None)
    if not callable(obj):
        raise TargetError(f"{target!r} is not callable")
    return obj


def _class_node(target: str):
    """The ``ast.ClassDef`` a target names, read from its source without running it."""
    import ast
    mod_name, attr = _split(target)
    _, tree = _parse_source(mod_name)
    body, node = tree.body, None
    for part in attr.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            raise TargetError(f"{mod_name!r} has no class {part!r}: a scheme is a subclass of "
                              "ccbench.cc.Scheme or ccbench.cc.Controller")
        body = node.body
    return node


def static_params_problem(target: str, params: dict) -> str | None:
    """Check a target without running any of its code: the module or file exists, defines the
    class, and the class's own ``__init__`` (when it has one) takes ``params``. Raises
    TargetError for a target that cannot be a scheme; returns a parameter problem or None.
    Targets registered through the Python API are the caller's objects: checked by signature."""
    import ast
    if target in OBJECTS or target.startswith("object:"):
        return check_params(target, params)
    node = _class_node(target)
    init = next((n for n in node.body if isinstance(n, ast.FunctionDef)
                 and n.name == "__init__"), None)
    if init is None:
        return None  # inherited: checked when the run builds it
    a = init.args
    if a.kwarg is not None:
        return None
    named = [x.arg for x in a.args[1:] + a.kwonlyargs]
    required = ([x.arg for x in a.args[1:len(a.args) - len(a.defaults)]]
                + [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None])
    unknown = [k for k in params if k not in named]
    missing = [k for k in required if k not in params]
    if unknown or missing:
        what = (f"unexpected keyword {', '.join(map(repr, unknown))}" if unknown
                else f"missing {', '.join(map(repr, missing))}")
        return f"{what}; {target} takes " + (", ".join(named) if named else "no parameters")
    return None


def load(target: str) -> Any:
    """The class a target names: checked from its source first (it must define the class), then
    imported and checked to be a subclass of ccbench.cc.Scheme or Controller before anything is
    called. Objects registered through the Python API are returned as given."""
    if target in OBJECTS:
        return OBJECTS[target]
    if target in _LOADED:
        return _LOADED[target]
    if target.startswith("object:"):
        raise TargetError(f"{target!r} was registered in another process: pass the class as "
                          f"\"module:Class\" to run it in campaign workers")
    mod_name, attr = _split(target)
    _class_node(target)
    mod = _import(mod_name)
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{mod_name!r} has no attribute {part!r}")
        obj = getattr(obj, part)
    from . import Controller, Scheme
    if not (isinstance(obj, type) and issubclass(obj, (Scheme, Controller))):
        raise TargetError(f"{target!r} is not a subclass of ccbench.cc.Scheme or "
                          "ccbench.cc.Controller")
    _LOADED[target] = obj
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
    """A fresh scheme object with the run's deterministic context attached (the parameters
    checked against the class's signature before it is called)."""
    names = (target, tuple(sorted(params)))
    if names not in _PARAMS_OK:
        problem = check_params(target, params)
        if problem:
            raise TargetError(f"parameters do not fit: {problem}")
        _PARAMS_OK.add(names)
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


__all__ = ["register", "load", "load_function", "check_params", "static_params_problem", "parse_interval", "instance", "externals",
           "OBJECTS", "TargetError"]
