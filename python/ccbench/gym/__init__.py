"""ccbench as a Gymnasium environment for learned congestion control (docs/gym.md).

    import gymnasium, ccbench.gym
    env = gymnasium.make("ccbench/Aurora-v0")                     # the default experiment
    env = gymnasium.make("ccbench/Aurora-v0", experiment="my.yaml", controlled=[0, 1])
    envs = gymnasium.make_vec("ccbench/TcpRl-v0", num_envs=4, vectorization_mode="sync")

Registered ids: ``ccbench/Aurora-v0`` (rate actions, Aurora-like observations and reward),
``ccbench/TcpRl-v0`` (cwnd actions, ns3-gym-like), ``ccbench/Cc-v0`` (give ``preset`` or the
functions yourself). Needs the ``gymnasium`` package (requirements.txt).
"""
from __future__ import annotations

import gymnasium

from .env import DEFAULT_EXPERIMENT, CcEnv
from .presets import Aurora, Custom, Ns3Tcp, Preset
from .deploy import PolicyController

IDS = {"ccbench/Aurora-v0": {"preset": "aurora"},
       "ccbench/TcpRl-v0": {"preset": "ns3"},
       "ccbench/Cc-v0": {}}

for _id, _kw in IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point="ccbench.gym.env:CcEnv", kwargs=dict(_kw),
                           disable_env_checker=True)

__all__ = ["CcEnv", "Preset", "Aurora", "Ns3Tcp", "Custom", "PolicyController",
           "DEFAULT_EXPERIMENT", "IDS"]
