"""Policies for tests/test_gym_deploy.py."""
import numpy as np


def hold(obs):
    """Action 0: the Aurora preset keeps its initial rate (0.3 × the path rate)."""
    return np.zeros(1, np.float32)
