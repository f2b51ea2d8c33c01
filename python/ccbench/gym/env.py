"""The Gymnasium environment: controlled flows among ordinary ones on any experiment.

One step = one monitor interval of simulated time. The simulator is a resumable run
(``ccbench._core.Stepper``): each step commands the controlled flows (cwnd and/or pacing
rate, applied from their next ACK), runs the event loop to the end of the interval and reads
each controlled flow's interval statistics. Everything else — competing flows, queues, links,
network conditions — is the experiment file's, unchanged. docs/gym.md.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import gymnasium
import numpy as np

from .. import _core
from ..cc.runtime import externals, parse_interval
from .presets import Custom, Preset, make_preset

#: The experiment of the registered ids when none is given: one controlled flow and one CUBIC
#: flow starting at 2 s on a 50 Mbit/s, 20 ms bottleneck with a 1-BDP queue.
DEFAULT_EXPERIMENT = {
    "duration": 10, "seed": 1,
    "central": {"rate": "50Mbit", "delay": "20ms", "queue": "1bdp"},
    "flows": [{"scheme": "reno", "flows": 1, "name": "agent"},
              {"scheme": "cubic", "flows": 1, "start": 2}],
}


def _points_of(plan) -> list[tuple[dict, dict]]:
    """A campaign's experiments to draw episodes from — its first repeat at every point — each
    with the point's axis values."""
    if plan.lazy:
        raise ValueError(f"the campaign has {plan.n_points:,} points: episodes are drawn "
                         "from every point, each resolved up front, which is only done for "
                         "campaigns planned eagerly (docs/campaigns.md, \"Large campaigns\"); "
                         "draw from fewer points (fewer axis values, where:, or repeats: 1)")
    return [(r.experiment, dict(r.point.values)) for r in plan.runs if r.repeat == 0]


def _resolve(experiment: Any) -> list[tuple[dict, dict]]:
    """A path (experiment or campaign file), a document, or a resolved experiment -> the
    resolved experiments episodes are drawn from (a campaign: one per point), each with its
    point's axis values ({} for a single experiment)."""
    from .. import config
    from ..campaign import is_campaign, load_campaign, parse_campaign
    from ..campaign import plan as make_plan

    if isinstance(experiment, (str, Path)):
        import yaml
        with open(experiment) as fh:
            doc = yaml.safe_load(fh)
        if is_campaign(doc):
            return _points_of(make_plan(load_campaign(experiment)))
        return [(config.load(experiment), {})]
    if isinstance(experiment, dict) and "schema" in experiment and "links" in experiment:
        return [(experiment, {})]
    if isinstance(experiment, dict):
        if is_campaign(experiment):
            return _points_of(make_plan(parse_campaign(experiment)))
        return [(config.resolve(experiment), {})]
    if isinstance(experiment, (list, tuple)):
        return [e for x in experiment for e in _resolve(x)]
    raise TypeError("experiment: a file path, an experiment/campaign document, a resolved "
                    "experiment or a list of these")


class CcEnv(gymnasium.Env):
    """Congestion control as a Gymnasium environment.

    experiment: experiment or campaign file / document / resolved experiment (or a list):
        each reset draws one (a campaign: one of its points) with the episode's RNG.
    controlled: flow ids (0-based, in file order) the agent drives; default the first flow.
    preset: "aurora" (rate actions), "ns3" (cwnd actions) or a :class:`Preset`;
        preset_args: its keyword arguments.
    observation_fn / observation_space, action_fn / action_space, reward_fn: replace parts.
    monitor_interval: the step length ("10ms", seconds, or "rtt": the first controlled flow's
        base RTT); episode: simulated seconds per episode (default: the experiment's duration).
    record: keep the flows/queues samples (off: only what the agent needs is computed).
    """

    metadata = {"render_modes": []}

    def __init__(self, experiment: Any = None, *, controlled: Sequence[int] | int = (0,),
                 preset: str | Preset = "aurora", preset_args: dict | None = None,
                 observation_fn=None, observation_space=None, action_fn=None,
                 action_space=None, reward_fn=None, monitor_interval: Any = "10ms",
                 episode: float | None = None, record: bool = False) -> None:
        super().__init__()
        drawn = _resolve(DEFAULT_EXPERIMENT if experiment is None else experiment)
        self.experiments = [e for e, _ in drawn]
        #: each experiment's campaign point (its axis values; {} for a single experiment)
        self.points = [v for _, v in drawn]
        self.point: dict = {}
        ids = [controlled] if isinstance(controlled, int) else list(controlled)
        if not ids:
            raise ValueError("controlled: name at least one flow id")
        for e in self.experiments:
            n = len(e["flows"])
            for i in ids:
                if not 0 <= i < n:
                    raise ValueError(f"controlled: flow id {i} is not in the experiment "
                                     f"(flows 0..{n - 1})")
                f = e["flows"][i]
                if f.get("arrivals") or f["scheme"] in ("udp", "probe") or f.get("command"):
                    raise ValueError(f"controlled: flow id {i} ({f['label']}) is not a bulk TCP "
                                     f"flow (arrivals, udp, probe and command flows cannot be driven)")
        self.controlled = ids
        self.n_controlled = len(ids)
        self.record = record
        self.episode_s = episode
        kind, value = parse_interval(monitor_interval)
        self._interval_spec = (kind, value)
        base = make_preset(preset, **(preset_args or {}))
        if any(x is not None for x in (observation_fn, action_fn, reward_fn)):
            base = Custom(base, observation_fn, observation_space, action_fn, action_space,
                          reward_fn)
        self.preset = base
        self._pick(0)
        self.preset.setup(self)
        self.observation_space = self.preset.observation_space
        self.action_space = self.preset.action_space
        self._sim = None

    # -- the experiment of an episode ---------------------------------------------------------
    def _pick(self, idx: int, seed: int | None = None) -> None:
        exp = dict(self.experiments[idx])
        if seed is not None:
            exp["seed"] = seed
        if self.episode_s is not None:
            exp["duration_ns"] = min(exp["duration_ns"], int(self.episode_s * 1e9))
        if not self.record:
            exp["record_packets"] = False
            exp["sample_interval_ns"] = exp["duration_ns"]
        self.experiment = exp
        links = exp["links"]
        self.path_rates = []
        for i in self.controlled:
            rates = [links[l]["rate_bps"] for l in exp["flows"][i]["path"] if links[l]["rate_bps"]]
            self.path_rates.append(float(min(rates)) if rates else 1e9)
        kind, value = self._interval_spec
        if kind == "fixed":
            self.interval_ns = int(value)
        else:
            self.interval_ns = int(value * exp["flows"][self.controlled[0]]["base_rtt_ns"])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        idx = int(self.np_random.integers(len(self.experiments)))
        self._pick(idx, int(self.np_random.integers(1 << 31)))
        gym_flows = {i: True for i in self.controlled}
        ext = externals(self.experiment, gym_flows=gym_flows)
        self._sim = _core.Stepper(json.dumps(self.experiment, sort_keys=True), ext)
        self._command(self.preset.reset(self))
        self._sim.run_until(self.interval_ns)
        stats = self._take()
        obs = self.preset.observe(self, stats)
        self.point = self.points[idx]
        return obs, {"t_s": self._sim.now * 1e-9, "experiment": idx, "point": dict(self.point)}

    def _take(self) -> list:
        take = self._sim.take
        return [take(i) for i in self.controlled]

    def _command(self, cmds) -> None:
        for i, (cwnd, rate) in zip(self.controlled, cmds):
            self._sim.command(i, cwnd, rate)

    def step(self, action):
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        self._command(self.preset.act(self, self._checked(action)))
        done = self._sim.run_until(self._sim.now + self.interval_ns)
        stats = self._take()
        obs = self.preset.observe(self, stats)
        reward = float(self.preset.reward(self, stats))
        return obs, reward, bool(done), False, {"t_s": self._sim.now * 1e-9, "stats": stats,
                                                "point": dict(self.point)}

    def _checked(self, action):
        """A Box action as numbers of the space's size, all finite (ValueError otherwise, naming
        what the space wants); other spaces are the preset's to read."""
        space = self.action_space
        if not isinstance(space, gymnasium.spaces.Box):
            return action
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"the action is not numbers: the action space is {space}") from None
        if a.size != int(np.prod(space.shape)):
            raise ValueError(f"the action has {a.size} value(s): the action space {space} "
                             f"takes {int(np.prod(space.shape))}")
        if not np.all(np.isfinite(a)):
            raise ValueError("the action has NaN or infinite values")
        return a.reshape(space.shape)

    def finish(self, out_dir: str | Path | None = None):
        """Run the episode's remaining time with the last commands. Without ``out_dir``: the
        results tables as polars DataFrames (with ``record=True``: the full flows/queues
        samples); with it: a results folder there (metadata.json with the episode's experiment,
        point and preset, the Parquet tables), returned as :class:`ccbench.Results`, so that
        ``ccbench report``, ``stats``, ``compare`` and ``check`` work on an episode (build the
        environment with ``record=True`` for them: without it the episode keeps one sample and
        no packet records, and analyses need an interval of the whole episode)."""
        import datetime as dt

        from .. import _core
        from ..api import __version__
        from ..results import load
        from ..results.schema import decode
        from ..results.writer import write_results
        out = self._sim.finish()
        self._sim = None
        tables = {name: decode(cols) for name, cols in out["tables"].items()}
        if out_dir is None:
            return tables
        meta = {"ccbench_version": __version__, "core_version": _core.__version__,
                "backend": "sim", "source": "gym",
                "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "experiment": self.experiment, "seed": self.experiment.get("seed"),
                "wall_time_s": None, "sim": {k: v for k, v in out.items() if k != "tables"},
                "gym": {"preset": getattr(self.preset, "name", type(self.preset).__name__),
                        "controlled": self.controlled, "point": dict(self.point),
                        "interval_ns": self.interval_ns}}
        return load(write_results(out_dir, tables, meta))
