"""Each analysis of one loaded run computed once per process: ``ccbench run`` prints a summary
and writes a report whose tables and figures need the same per-grouping analyses and Pantheon
summary. With per-packet records they all start from one pass over the packet table
(:class:`~ccbench.analysis.gather.PacketSums`: per-flow sums, and each curve's exact median and
p95 computed once, the curves of every grouping announced with `plan` in one run)."""
from __future__ import annotations


class Computed:
    """``analyze(grouping)`` and ``pantheon()`` of one run at one interval, memoised."""

    def __init__(self, results, interval: float):
        self.results, self.interval, self._memo = results, interval, {}
        self._sums = None
        self._planned: list[str] = []

    @classmethod
    def of(cls, results, interval: float) -> "Computed":
        """The instance kept on ``results`` for ``interval`` (a new one the first time)."""
        per = results.__dict__.setdefault("_computed", {})
        if interval not in per:
            per[interval] = cls(results, interval)
        return per[interval]

    def plan(self, *groupings: str) -> "Computed":
        """Groupings to be analysed later: their curves' percentiles are computed together
        with the first ones asked for (fewer passes over the packets)."""
        self._planned += [g for g in groupings if g not in self._planned]
        return self

    def sums(self):
        """The run's PacketSums at this interval; None without per-packet records (aggregate
        mode reads the small per-interval tables) or at an invalid interval (analyze says why)."""
        if self._sums is None and self.results.has("packets"):
            from .gather import PacketSums
            from .groupings import make_grouping
            from .metrics import interval_ns
            try:
                ns = interval_ns(self.interval)
            except ValueError:
                return None
            self._sums = PacketSums(self.results, ns)
            flows = self.results.experiment["flows"]
            for g in self._planned:
                try:
                    self._sums.want(make_grouping(flows, g))
                except ValueError:  # analyze says why when it is asked for
                    pass
        return self._sums

    def analyze(self, grouping: str):
        from .metrics import analyze
        if grouping not in self._memo:
            self._memo[grouping] = analyze(self.results, grouping=grouping, interval=self.interval,
                                           sums=self.sums())
        return self._memo[grouping]

    def pantheon(self):
        from .pantheon import pantheon_summary
        if "pantheon" not in self._memo:
            self._memo["pantheon"] = pantheon_summary(self.results, sums=self.sums())
        return self._memo["pantheon"]


__all__ = ["Computed"]
