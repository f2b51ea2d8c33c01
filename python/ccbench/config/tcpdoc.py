"""The table of ``tcp:`` keys in docs/experiment-file.md, rendered from ccbench.config.tcpkeys.

The section between the markers :data:`BEGIN` and :data:`END` is generated; tests/test_tcpkeys.py
checks that the committed page is what :func:`render` gives. After changing the table::

    python -m ccbench.config.tcpdoc          # rewrite the section of docs/experiment-file.md
"""
from __future__ import annotations

import sys
from pathlib import Path

from .tcpkeys import BOTH, RECEIVER, SENDER, TABLE, Fixed, Route, Socket, Sysctl, TcpKey, Via, \
    is_bool

PAGE = Path(__file__).resolve().parents[3] / "docs" / "experiment-file.md"
BEGIN = ("<!-- tcp keys: generated from python/ccbench/config/tcpkeys.py by "
         "`python -m ccbench.config.tcpdoc`; do not edit by hand -->")
END = "<!-- end of the generated tcp keys -->"

_HOST = {SENDER: "the sender's namespace", RECEIVER: "the receiver's namespace",
         BOTH: "both hosts' namespaces"}
_ROUTE = {SENDER: "the sender's route to the receiver", RECEIVER: "the receiver's route to the sender",
          BOTH: "both hosts' routes"}


def kernel_text(k: TcpKey) -> str:
    """The "kernel backend" cell of a key: how that backend applies it."""
    out = []
    for a in k.kernel:
        if isinstance(a, Sysctl):
            values = (f" (`true`: {a.text(True, {})}, `false`: {a.text(False, {})})"
                      if is_bool(k) else "")
            out.append(f"sysctl `{a.name}`{values} in {_HOST[a.side]}")
        elif isinstance(a, Route):
            out.append(f"route option `{a.option}` on {_ROUTE[a.side]}")
        elif isinstance(a, Socket):
            out.append(f"`{a.option}` on the sender's socket")
        elif isinstance(a, Fixed):
            out.append(f"{a.lead}{a.shown} (the run records "
                       f"`emu.{k.field}`: requested, kernel, applied)")
        elif isinstance(a, Via):
            out.append(a.why)
    return "; ".join(out)


def _key_text(k: TcpKey) -> str:
    return f"`{k.name}`" + (f" (alias {', '.join(f'`{a}`' for a in k.aliases)})" if k.aliases else "")


def render() -> str:
    """The generated section, markers included."""
    lines = [BEGIN, "| key | type | default | kernel backend |", "|---|---|---|---|"]
    lines += [f"| {_key_text(k)} | {k.kind} | {k.meaning} | {kernel_text(k)} |" for k in TABLE]
    return "\n".join(lines + [END]) + "\n"


def splice(page: str, section: str) -> str:
    """``page`` with its generated section replaced by ``section``."""
    if BEGIN not in page or END not in page:
        raise ValueError(f"the page has no generated tcp section: put the marker lines {BEGIN!r} "
                         f"and {END!r} where the table belongs")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + section.rstrip("\n") + tail


def check(page: Path = PAGE) -> list[str]:
    """Problems of the committed page: none when its section is what :func:`render` gives."""
    text = page.read_text()
    try:
        fresh = splice(text, render())
    except ValueError as e:
        return [f"{page}: {e}"]
    if fresh != text:
        return [f"{page}: the tcp keys table is not what tcpkeys.py renders; run "
                "`python -m ccbench.config.tcpdoc`"]
    return []


def write(page: Path = PAGE) -> None:
    page.write_text(splice(page.read_text(), render()))


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else PAGE)
