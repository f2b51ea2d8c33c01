"""ccbench.gym: the Gymnasium environment (docs/gym.md)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import ccbench.gym  # noqa: E402,F401
from ccbench.gym import CcEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"duration": 2, "seed": 1, "central": {"rate": "20Mbit", "delay": "10ms", "queue": 100},
         "flows": [{"scheme": "reno", "flows": 2}, {"scheme": "cubic", "flows": 1, "start": 0.5}]}


@pytest.mark.parametrize("env_id", ["ccbench/Aurora-v0", "ccbench/TcpRl-v0"])
def test_registered_ids_pass_the_gymnasium_checker(env_id):
    env = gymnasium.make(env_id, experiment=SHORT, controlled=[0, 1])
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.action_space.shape == (2,)


def _rollout(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rewards = []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out.append(obs)
        rewards.append(r)
        if term:
            break
    return np.array(out), np.array(rewards)


def test_reset_seed_is_bit_reproducible_and_episodes_end_with_the_experiment():
    env = CcEnv(SHORT, controlled=[0], monitor_interval="10ms")
    rng = np.random.default_rng(5)
    actions = rng.uniform(-1, 1, (400, 1)).astype(np.float32)
    o1, r1 = _rollout(env, 7, actions)
    o2, r2 = _rollout(env, 7, actions)
    o3, r3 = _rollout(CcEnv(SHORT, controlled=[0]), 7, actions)   # a fresh env too
    assert o1.tobytes() == o2.tobytes() == o3.tobytes()
    assert r1.tobytes() == r2.tobytes() == r3.tobytes()
    # 2 s at 10 ms: the reset interval + 199 steps, the last one terminating.
    assert len(r1) == 199


def test_rate_action_drives_the_flow_among_competitors():
    exp = {"duration": 3, "seed": 1, "central": {"rate": "50Mbit", "delay": "10ms",
                                                 "queue": 500},
           "flows": [{"scheme": "reno", "flows": 1}, {"scheme": "cubic", "flows": 1}]}
    env = CcEnv(exp, controlled=[0], preset="aurora",
                preset_args={"initial_rate": 5e6, "alpha": 1.0}, record=True)
    env.reset(seed=0)
    tput = []
    for k in range(299):
        # hold 5 Mbit/s for 1 s, then double once and hold 10 Mbit/s
        a = np.array([1.0 if k == 100 else 0.0], np.float32)
        _, _, term, _, info = env.step(a)
        st = info["stats"][0]  # None until the connection's first ACK
        tput.append(0.0 if st is None else st.throughput_bps)
    first, second = np.mean(tput[40:95]), np.mean(tput[150:290])
    assert 4.3e6 < first < 5.2e6, first
    assert 8.6e6 < second < 10.4e6, second
    tables = env.finish()
    fl = tables["flows"]
    # the competing CUBIC flow took the rest of the link
    cubic = tables["flowstats"].filter(tables["flowstats"]["flow"] == 1)["delivered_bytes"][0]
    assert cubic * 8 / 3 > 30e6
    assert fl.filter((fl["flow"] == 0) & (fl["time_ns"] > 2e9))["pacing_rate_bps"].max() == 1e7


def test_cwnd_action_ns3_preset():
    env = gymnasium.make("ccbench/TcpRl-v0", experiment=SHORT, controlled=0)
    obs, _ = env.reset(seed=1)
    for _ in range(50):
        obs, *_ = env.step(np.array([7.0], np.float32))
    fields = dict(zip(ccbench.gym.Ns3Tcp.FIELDS, obs))
    assert fields["cwnd"] == 7 and 0 < fields["inflight"] <= 7


def test_user_functions_replace_parts_of_a_preset():
    space = gymnasium.spaces.Box(0, np.inf, (1,), np.float32)

    def obs_fn(env, stats):
        st = stats[0]
        return np.array([0.0 if st is None else st.delivered], np.float32)

    def reward_fn(env, stats):
        return -1.0

    env = CcEnv(SHORT, controlled=[1], observation_fn=obs_fn, observation_space=space,
                reward_fn=reward_fn)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    for _ in range(10):
        obs, r, *_ = env.step(env.action_space.sample())
    assert r == -1.0 and obs.shape == (1,) and obs[0] > 0


def test_vectorised_envs():
    envs = gymnasium.make_vec("ccbench/Aurora-v0", num_envs=3, vectorization_mode="sync",
                              experiment=SHORT)
    obs, _ = envs.reset(seed=11)
    assert obs.shape == (3, 30)
    for _ in range(20):
        obs, r, term, trunc, _ = envs.step(np.zeros((3, 1), np.float32))
    assert r.shape == (3,) and np.isfinite(r).all()
    envs.close()
    # one process per environment: observations and the info's interval statistics cross
    # process boundaries (IntervalStats pickles as a SimpleNamespace)
    envs = gymnasium.make_vec("ccbench/Aurora-v0", num_envs=2, vectorization_mode="async",
                              experiment=SHORT)
    obs, _ = envs.reset(seed=11)
    for _ in range(20):
        obs2, r2, term, trunc, info = envs.step(np.zeros((2, 1), np.float32))
    envs.close()
    assert obs2.shape == (2, 30) and r2[0] == r[0]  # same seed and actions as sync env 0
    assert info["stats"][0][0].throughput_bps > 0


def test_episodes_are_drawn_from_a_campaigns_axes():
    campaign = {**SHORT, "flows": [{"scheme": "reno", "flows": 1}],
                "sweep": {"axes": {"central.rate": ["10Mbit", "40Mbit"],
                                   "central.delay": ["5ms", "30ms"]}}}
    env = CcEnv(campaign)
    assert len(env.experiments) == 4
    seen = set()
    for s in range(12):
        _, info = env.reset(seed=s)
        seen.add((env.path_rates[0], env.experiment["flows"][0]["base_rtt_ns"]))
        # the drawn point by its axis values, beside its index
        assert info["point"] == env.points[info["experiment"]]
        rate = {"10Mbit": 10e6, "40Mbit": 40e6}[info["point"]["central.rate"]]
        assert env.path_rates[0] == rate
    assert len(seen) == 4
    _, _, _, _, info = env.step(env.action_space.sample())
    assert set(info["point"]) == {"central.rate", "central.delay"}
    # the same seed draws the same network
    env.reset(seed=3)
    a = (env.path_rates[0], env.experiment["seed"])
    env.reset(seed=3)
    assert (env.path_rates[0], env.experiment["seed"]) == a


def test_bad_controlled_flow():
    with pytest.raises(ValueError, match="flow id 5 is not in the experiment"):
        CcEnv(SHORT, controlled=[5])


def test_heuristic_example_runs():
    sys.path.insert(0, str(ROOT / "examples" / "gym"))
    import heuristic
    env = gymnasium.make("ccbench/Aurora-v0",
                         experiment={**SHORT, "flows": [{"scheme": "reno", "flows": 1}]})
    rows = heuristic.evaluate(env, 1)
    # alone on 20 Mbit/s the heuristic reaches most of the link without a standing queue
    assert rows[0]["mean_tput_mbps"] > 12 and rows[0]["mean_rtt_ms"] < 40, rows


def test_example_campaign_spans_36_networks():
    env = CcEnv(ROOT / "examples" / "gym" / "campaign.yaml")
    assert len(env.experiments) == 36
    rates = {min(l["rate_bps"] for l in e["links"] if l["role"] == "central")
             for e in env.experiments}
    assert rates == {10e6, 50e6, 200e6}
    env.reset(seed=0)
    obs, r, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)


def test_aurora_offers_a_normalized_action_space():
    from ccbench.gym import CcEnv
    env = CcEnv(preset="aurora", preset_args={"normalized": True}, episode=1.0)
    assert float(env.action_space.low[0]) == -1.0 and float(env.action_space.high[0]) == 1.0
    env.reset(seed=1)
    r0 = env.preset.rates[0]
    env.step(np.array([0.04], dtype=np.float32))  # a = 40: rate x (1 + 0.025 * 40) = x 2
    assert env.preset.rates[0] == pytest.approx(min(2 * r0, env.preset.max_rates[0]))


def test_an_episode_finishes_into_a_results_folder_the_cli_reads(tmp_path):
    from ccbench import api
    env = CcEnv({**SHORT, "flows": [{"scheme": "reno", "flows": 1}]}, episode=1.0, record=True)
    env.reset(seed=2)
    done = False
    while not done:
        _, _, done, _, _ = env.step(np.zeros(env.action_space.shape, np.float32))
    res = env.finish(tmp_path / "episode")
    assert (tmp_path / "episode" / "metadata.json").is_file()
    assert res.meta["gym"]["preset"] == "aurora" and res.meta["gym"]["controlled"] == [0]
    assert res.flowstats.height == 1 and res.flowstats["delivered_bytes"][0] > 0
    assert "Flow 1" in api.summary_text(res)
    assert api.report(res).is_file()
