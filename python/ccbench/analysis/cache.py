"""Each analysis of one loaded run computed once per process: ``ccbench run`` prints a summary
and writes a report whose tables and figures need the same per-grouping analyses and Pantheon
summary, and every one of them is a pass over the packet table."""
from __future__ import annotations


class Computed:
    """``analyze(grouping)`` and ``pantheon()`` of one run at one interval, memoised."""

    def __init__(self, results, interval: float):
        self.results, self.interval, self._memo = results, interval, {}

    @classmethod
    def of(cls, results, interval: float) -> "Computed":
        """The instance kept on ``results`` for ``interval`` (a new one the first time)."""
        per = results.__dict__.setdefault("_computed", {})
        if interval not in per:
            per[interval] = cls(results, interval)
        return per[interval]

    def analyze(self, grouping: str):
        from .metrics import analyze
        if grouping not in self._memo:
            self._memo[grouping] = analyze(self.results, grouping=grouping, interval=self.interval)
        return self._memo[grouping]

    def pantheon(self):
        from .pantheon import pantheon_summary
        if "pantheon" not in self._memo:
            self._memo["pantheon"] = pantheon_summary(self.results)
        return self._memo["pantheon"]


__all__ = ["Computed"]
