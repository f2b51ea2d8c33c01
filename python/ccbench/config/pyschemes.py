"""Python schemes in an experiment file (docs/python-schemes.md)::

    scheme: {python: "ccbench.schemes.reno:Reno"}
    scheme: {python: "my_cc.py:MyCC", name: mycc, params: {alpha: 2}}
    scheme: {python: "my_ctl.py:MyController", kernel: bbr}   # --backend emu: the kernel CC under it

Through the Python API the value of ``python:`` may also be the class (or a factory) itself.
The resolved flow carries ``"python": target`` next to ``"scheme"`` (the name: given, else
``py-<class>``) and ``"params"``; the simulator backend builds one object per connection
(ccbench.cc.runtime). The target is checked here from its source without running it (the
module or file exists and defines the class; its own ``__init__`` takes the parameters), so
that validating, resolving or planning an experiment runs no user code; the run imports it
and refuses anything but a subclass of ccbench.cc.Scheme or Controller before calling it.
"""
from __future__ import annotations

from typing import Any

from .conditions import BASE_DIR
from .errors import Collector, show

EXAMPLE = 'e.g. scheme: {python: "ccbench.schemes.reno:Reno", params: {}}'


def is_python_scheme(value: Any) -> bool:
    return isinstance(value, dict) and "python" in value


def _default_name(target: str) -> str:
    cls = target.rpartition(":")[2].split("#")[0].rsplit(".", 1)[-1]
    return "py-" + cls.lower()


def parse_python_scheme(value: dict, spath: tuple, errs: Collector,
                        group_params: tuple[Any, tuple] | None = None
                        ) -> tuple[str | None, dict, str | None, str | None]:
    """-> (scheme name, params, target, kernel congestion control under a controller)."""
    import os

    from ..cc import runtime

    target: str | None = None
    name: str | None = None
    kernel: str | None = None
    params: dict[str, Any] = {}
    for k, v in value.items():
        key = str(k)
        if key == "python":
            if isinstance(v, str) and v.strip():
                target = v.strip()
                mod, sep, attr = target.rpartition(":")
                if sep and mod.endswith(".py") and not os.path.isabs(mod):
                    base = BASE_DIR.get()
                    if not os.path.isfile(mod) and base and os.path.isfile(os.path.join(base, mod)):
                        mod = os.path.join(base, mod)
                    target = os.path.abspath(mod) + ":" + attr
            elif callable(v):
                target = runtime.register(v)
            else:
                errs.error(spath + (k,), f"{show(v)} is not a Python class reference", EXAMPLE, v)
        elif key == "name":
            if isinstance(v, str) and v.strip():
                name = v.strip()
            else:
                errs.error(spath + (k,), f"{show(v)} is not a scheme name", "write a short text", v)
        elif key == "kernel":
            if isinstance(v, str) and v.strip() and v.strip().isidentifier():
                kernel = v.strip()
            else:
                errs.error(spath + (k,), f"{show(v)} is not a kernel congestion control name",
                           "e.g. kernel: cubic (the algorithm a Controller runs over on "
                           "--backend emu)", v)
        elif key == "params":
            if isinstance(v, dict):
                params.update({str(a): b for a, b in v.items()})
            else:
                errs.error(spath + (k,), f"{show(v)} is not a mapping", "e.g. params: {alpha: 2}", v)
        else:
            errs.error(spath + (k,), f"unknown key {show(k)} in a Python scheme",
                       "a Python scheme has `python:`, and optionally `name:`, `params:` and `kernel:`", v)
    if group_params is not None:
        pv, ppath = group_params
        if isinstance(pv, dict):
            for a, b in pv.items():
                if str(a) in params:
                    errs.error(ppath + (a,), f"parameter {show(a)} is also set in scheme",
                               "set it in one place", b)
                params[str(a)] = b
        else:
            errs.error(ppath, f"{show(pv)} is not a mapping", "e.g. params: {alpha: 2}", pv)
    if target is None:
        return name, params, None, kernel
    try:
        problem = runtime.static_params_problem(target, params)
    except runtime.TargetError as e:
        errs.error(spath + ("python",), str(e), EXAMPLE, value.get("python"))
        return name, params, None, kernel
    if problem:
        errs.error(spath + ("params",), f"parameters do not fit: {problem}",
                   "give the keywords the class's __init__ takes", params)
    return name or _default_name(target), params, target, kernel


__all__ = ["is_python_scheme", "parse_python_scheme"]
