"""Command schemes: a flow group whose endpoints are programs instead of a congestion control.

    scheme: {command: {sender: "iperf3 -c {dst} -p {port} -t {duration}",
                       receiver: "iperf3 -s -p {port}"}, name: iperf-cubic}
    scheme: {pantheon: {wrapper: path/to/wrapper.py, name: cubic}}

Only the emulation backend runs them (real programs in the hosts' network namespaces); the
simulator rejects them. The resolved flow carries ``"command": {...}`` (below) and
``"scheme"`` = the name (given, or the first word of the sender command / the wrapper's stem).
Placeholders are expanded by the emulation backend (backends/emu/commands.py, `_placeholders`).
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Any

from .conditions import BASE_DIR
from .errors import Collector, show

COMMAND_KINDS = ("command", "pantheon")
#: Placeholders a command may use (expanded per flow by the emulation backend).
PLACEHOLDERS = ("dst", "src", "port", "duration", "duration_ms", "start", "stop", "flow",
                "t0_ns", "start_ns", "end_ns", "stop_ns", "cc", "agent")
#: Fixed when the senders are launched, after the receivers listen.
RECEIVER_UNKNOWN = ("t0_ns", "start_ns", "end_ns", "stop_ns")
_FIELD = re.compile(r"{([^{}]*)}")
EXAMPLE = ('e.g. scheme: {command: {sender: "ccbench-agent client --dst {dst} --port {port} '
           '--cc cubic", receiver: "ccbench-agent server --port {port}"}}')


def _find_wrapper(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    p = os.path.expanduser(value.strip())
    base = BASE_DIR.get()
    for c in (p, os.path.join(base, p) if base and not os.path.isabs(p) else None):
        if c and os.path.isfile(c):
            return os.path.abspath(c)
    return None


def is_command_scheme(value: Any) -> bool:
    return isinstance(value, dict) and any(str(k) in COMMAND_KINDS for k in value)


def _check_template(value: Any, path: tuple, errs: Collector) -> str | None:
    if not isinstance(value, str) or not value.strip():
        errs.error(path, f"{show(value)} is not a command line", EXAMPLE, value)
        return None
    for name in _FIELD.findall(value):
        if name not in PLACEHOLDERS:
            errs.error(path, f"unknown placeholder {{{name}}} in {show(value)}",
                       "known: " + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                       + " (write {{ and }} for literal braces)", value)
    try:
        shlex.split(value)
    except ValueError as e:
        errs.error(path, f"{show(value)} is not a valid command line ({e})", EXAMPLE, value)
    return value.strip()


def parse_command_scheme(value: dict, spath: tuple, errs: Collector
                         ) -> tuple[str | None, dict | None]:
    """``scheme: {command: {...}}`` or ``{pantheon: {...}}`` -> (scheme name, command spec)."""
    kinds = [k for k in value if str(k) in COMMAND_KINDS]
    name = None
    for k, v in value.items():
        if str(k) == "name":
            if isinstance(v, str) and v.strip():
                name = v.strip()
            else:
                errs.error(spath + (k,), f"{show(v)} is not a scheme name", "write a short text", v)
        elif str(k) not in COMMAND_KINDS:
            errs.error(spath + (k,), f"unknown key {show(k)} in a command scheme",
                       "a command scheme has `command:` or `pantheon:` and optionally `name:`", v)
    if len(kinds) != 1:
        errs.error(spath, "give exactly one of `command:` and `pantheon:`", EXAMPLE, value)
        return None, None
    kind = str(kinds[0])
    body, bpath = value[kinds[0]], spath + (kinds[0],)
    if not isinstance(body, dict):
        errs.error(bpath, f"{show(body)} is not a mapping", EXAMPLE if kind == "command" else
                   "e.g. scheme: {pantheon: {wrapper: examples/wrappers/agent_wrapper.py, "
                   "name: cubic}}", body)
        return None, None
    if kind == "command":
        allowed = ("sender", "receiver", "name")
        spec: dict[str, Any] = {"kind": "command", "sender": None, "receiver": None}
        for k, v in body.items():
            if str(k) not in allowed:
                errs.error(bpath + (k,), f"unknown key {show(k)}",
                           "a command has `sender:` and optionally `receiver:`", v)
            elif str(k) == "name":
                name = name or (v.strip() if isinstance(v, str) and v.strip() else None)
            else:
                spec[str(k)] = _check_template(v, bpath + (k,), errs)
                late = [n for n in _FIELD.findall(v if isinstance(v, str) else "")
                        if n in RECEIVER_UNKNOWN]
                if str(k) == "receiver" and late:
                    errs.error(bpath + (k,), f"the receiver command uses {{{late[0]}}}, which is "
                               "fixed only after the receiver has started (it starts first)",
                               "use {duration}, {start}, {stop}, {port}, {dst}, {src}", v)
        if "sender" not in body:
            errs.error(bpath + ("sender",), "missing required key \"sender\"", EXAMPLE, None)
        if name is None and spec["sender"]:
            words = spec["sender"].split()
            name = os.path.basename(words[0]) if words else "command"
        spec["name"] = name or "command"
        return spec["name"], spec
    allowed = ("wrapper", "name", "args")
    spec = {"kind": "pantheon", "wrapper": None, "name": None}
    for k, v in body.items():
        if str(k) not in allowed:
            errs.error(bpath + (k,), f"unknown key {show(k)}",
                       "a Pantheon scheme has `wrapper:` (the wrapper script) and `name:`", v)
        elif str(k) == "wrapper":
            found = _find_wrapper(v)
            if found:
                spec["wrapper"] = found
            else:
                errs.error(bpath + (k,), f"wrapper {show(v)} not found",
                           "paths are relative to the current directory or the experiment "
                           "file's directory; examples/wrappers/agent_wrapper.py is one", v)
        elif str(k) == "name":
            if isinstance(v, str) and v.strip():
                spec["name"] = v.strip()
            else:
                errs.error(bpath + (k,), f"{show(v)} is not a name", "e.g. name: cubic", v)
    if "wrapper" not in body:
        errs.error(bpath + ("wrapper",), "missing required key \"wrapper\"",
                   "the path of a Pantheon wrapper script (src/wrappers/<scheme>.py)", None)
    if spec["wrapper"] and not os.access(spec["wrapper"], os.X_OK):
        errs.error(bpath + ("wrapper",), f"wrapper {spec['wrapper']} is not executable",
                   f"chmod +x {spec['wrapper']}", body.get("wrapper"))
    if spec["name"] is None and spec["wrapper"]:
        spec["name"] = os.path.splitext(os.path.basename(spec["wrapper"]))[0]
    return name or spec["name"], spec


__all__ = ["is_command_scheme", "parse_command_scheme", "PLACEHOLDERS", "COMMAND_KINDS"]
