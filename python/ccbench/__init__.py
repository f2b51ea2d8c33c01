"""ccbench: describe a congestion-control experiment once, run it, get metrics and plots.

The names below are imported on first use (PEP 562), so ``python -m ccbench`` and
``import ccbench.cli`` do not import the campaign package, polars or numpy before a command
needs them; ``from ccbench import run`` and ``ccbench.run`` work as before."""
from __future__ import annotations

import importlib

#: public name -> the module that defines it
_FROM = {
    **dict.fromkeys(["__version__", "analyze", "compare", "export_pcap", "import_pcap",
                     "load_experiment", "plot", "run", "run_both", "schemes"], ".api"),
    **dict.fromkeys(["aggregate", "campaign_dataset", "sweep"], ".campaign"),
    "export_tables": ".results.export",
    **dict.fromkeys(["Results", "load"], ".results"),
}

__all__ = ["__version__", "aggregate", "analyze", "campaign_dataset", "export_tables", "compare",
           "export_pcap", "import_pcap", "load", "load_experiment", "plot", "run", "run_both",
           "schemes", "sweep", "Results"]


def __getattr__(name: str):
    if name not in _FROM:
        raise AttributeError(f"module 'ccbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(_FROM[name], __name__), name)
    globals()[name] = value   # once: later lookups are plain attribute reads
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
