"""The congestion-control scheme registry as seen by the config layer.

The authority is the compiled core: ``ccbench._core.schemes()`` returns the TCP schemes
``[{"name", "description", "source", "params": [{"name", "default", "doc"}]}]`` and
``ccbench._core.dgram_schemes()`` the datagram transport's, with ``"transport": "dgram"``
(docs/datagram.md); ``ccbench.api.registry()`` passes both.
The config layer does not import the compiled module: the caller passes the registry in
(``schemes=``; ``ccbench.api.load_experiment`` passes the simulator's). Without one, scheme
names and parameters are not checked here (the backend still refuses unknown ones).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .errors import ConfigError, show
from .units import is_number

#: The scheme files shipped in the package (python/ccbench/schemes/): BPF programs, Python
#: schemes, and data a scheme reads (Indigo's checkpoint), each with its origin.
SCHEMES_DIR = Path(__file__).resolve().parents[1] / "schemes"


class Registry:
    """Normalised view of a registry: name -> {param name -> default}."""

    def __init__(self, schemes: Iterable[Any] | Mapping[str, Any]):
        self.params: dict[str, dict[str, Any]] = {}
        #: name -> "tcp" or "dgram" (the transport its flows run on)
        self.transport: dict[str, str] = {}
        if isinstance(schemes, Mapping):
            items: Iterable[Any] = ({"name": k, "params": v or []} for k, v in schemes.items())
        else:
            items = schemes
        for s in items:
            if isinstance(s, str):
                self.params[s] = {}
                continue
            plist = s.get("params") or []
            self.transport[s["name"]] = s.get("transport") or "tcp"
            if isinstance(plist, Mapping):
                self.params[s["name"]] = dict(plist)
            else:
                self.params[s["name"]] = {
                    (p if isinstance(p, str) else p["name"]):
                    (None if isinstance(p, str) else p.get("default")) for p in plist}

    @property
    def names(self) -> list[str]:
        return sorted(self.params)

    def check(self, name: str, params: dict[str, Any], path: Sequence[Any],
              params_path: Sequence[Any]) -> tuple[str, list[ConfigError]]:
        """Return the canonical scheme name and the errors about it and its parameters."""
        errors: list[ConfigError] = []
        if name not in self.params:
            folded = {n.lower(): n for n in self.params}
            if name.lower() in folded:
                name = folded[name.lower()]
            else:
                close = difflib.get_close_matches(name, self.names, n=1, cutoff=0.6)
                hint = (f'did you mean "{close[0]}"? ' if close else "") + \
                    "known schemes: " + ", ".join(self.names)
                errors.append(ConfigError(path, f"unknown scheme {show(name)}", hint, name))
                return name, errors
        valid = self.params[name]
        for key, value in params.items():
            ppath = tuple(params_path) + (key,)
            if key not in valid:
                close = difflib.get_close_matches(key, sorted(valid), n=1, cutoff=0.6)
                hint = (f'did you mean "{close[0]}"? ' if close else "") + (
                    f"valid parameters of {name}: " + ", ".join(sorted(valid)) if valid
                    else f"{name} has no parameters")
                errors.append(ConfigError(ppath, f"unknown parameter {show(key)} of scheme "
                                          f"{name}", hint, key))
                continue
            default = valid[key]
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    errors.append(ConfigError(ppath, f"{show(value)} is not a boolean",
                                              f"write true or false (default {show(default)})",
                                              value))
            elif is_number(default) and not is_number(value):
                errors.append(ConfigError(ppath, f"{show(value)} is not a number",
                                          f"default is {default}", value))
        return name, errors
