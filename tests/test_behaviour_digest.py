"""The simulator's results over a fixed scenario matrix are byte-for-byte what the baseline
records (tests/behaviour_digest.py). Refactors must keep this green; a deliberate behaviour
change re-records the baseline (`python tests/behaviour_digest.py --write`) in the same commit."""
import json

import behaviour_digest as bd


def test_matrix_covers_every_scheme():
    import ccbench._core as core
    assert sorted(bd.SCHEMES) == sorted(s["name"] for s in core.schemes())


def test_every_table_matches_the_baseline():
    want = json.loads(bd.BASELINE.read_text())
    got = bd.compute()
    assert set(got) == set(want)
    diff = {(n, t) for n in got for t in set(got[n]) | set(want[n]) if got[n].get(t) != want[n].get(t)}
    assert not diff, f"results changed: {sorted(diff)}"
