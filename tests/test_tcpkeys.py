"""The table of endpoint settings (ccbench.config.tcpkeys): its defaults are the simulator's
(`TcpConfig::default()`, the authority, exported by `_core.tcp_defaults()`), its fields are
TcpConfig's, the profiles set only keys the table lets them set, and a key of the table
parses to its field."""
from __future__ import annotations

import pytest

from ccbench import _core
from ccbench.config import ConfigError, resolve
from ccbench.config import tcpdoc, tcpkeys
from ccbench.config.model import DEFAULT_TCP
from ccbench.config.profiles import PROFILES


def test_the_table_defaults_are_the_rust_defaults():
    rust = _core.tcp_defaults()
    for k in tcpkeys.TABLE:
        if k.field in tcpkeys.NOT_RUST_FIELDS:
            assert k.field not in rust
            continue
        assert k.field in rust, f"{k.name}: {k.field} is not a TcpConfig field"
        assert rust[k.field] == k.default, (k.name, rust[k.field], k.default)
    # every TcpConfig field is a key of the table or is said to come from elsewhere
    assert set(rust) == (set(tcpkeys.BY_FIELD) - set(tcpkeys.NOT_RUST_FIELDS)) \
        | set(tcpkeys.NOT_TCP_KEYS)


def test_the_defaults_written_always_are_the_rust_defaults():
    rust = _core.tcp_defaults()
    assert DEFAULT_TCP == {f: rust[f] for f in DEFAULT_TCP}
    assert set(DEFAULT_TCP) == {"init_cwnd", "delayed_ack", "sack", "min_rto_ns",
                                "initial_rto_ns", "rtt_granularity_ns", "delayed_ack_timeout_ns"}


def test_rows_are_unique_and_every_row_says_how_the_kernel_applies_it():
    names = [n for k in tcpkeys.TABLE for n in (k.name, *k.aliases)]
    assert len(names) == len(set(names))
    assert len(tcpkeys.BY_FIELD) == len(tcpkeys.TABLE)
    assert all(k.kernel for k in tcpkeys.TABLE)
    # the profile is applied first, so that the keys written beside it win
    assert tcpkeys.TABLE[0].name == "profile"


def test_profiles_set_only_keys_the_table_lets_them_set():
    assert tcpkeys.check_profiles() == []
    assert tcpkeys.check_profiles({"x": {"wmem": [1, 2, 3], "nope": 1}}) == [
        "profile x sets 'wmem' (wmem), which profiles may not set",
        "profile x sets 'nope', which is no tcp key's field"]
    # and every value a profile sets is one its key's parser can produce (same type)
    for name, values in PROFILES.items():
        for f, v in values.items():
            d = tcpkeys.BY_FIELD[f].default
            if d is not None:
                assert type(v) is type(d), (name, f, v)


def _tcp(top: dict, **group) -> tuple[dict, dict | None]:
    exp = resolve({"duration": 1, "tcp": top, "flows": [{"scheme": "cubic", **group}]})
    return exp["tcp"], exp["flows"][0]["tcp"]


def test_each_key_resolves_to_its_field_and_none_words_remove_it():
    top, _ = _tcp({"init-cwnd": 4, "init-rwnd": 20, "pacing": "fq", "tsq": "3.6",
                   "cc-generation": "3.10", "drs": "legacy", "frto": "off"})
    assert top["init_cwnd"] == 4 and top["init_rwnd"] == 20 and top["pacing_default"] is True
    assert top["tsq"] == "3.6" and top["limit_output_bytes"] == 131072
    assert top["cc_generation"] == 3_10_00 and top["legacy_drs"] is True and top["frto"] == "off"
    top, group = _tcp({"profile": "linux-3.12"}, tcp={"init-rwnd": "none", "cc-generation": "current",
                                                    "adv-win-scale": "none"})
    assert top["init_rwnd"] == 20 and top["cc_generation"] == 3_12_00
    assert not {"init_rwnd", "cc_generation", "adv_win_scale"} & set(group)
    # a key beside tsq wins over the limit tsq implies
    top, _ = _tcp({"tsq": "current", "limit-output-bytes": "64KiB"})
    assert top["limit_output_bytes"] == 64 << 10


@pytest.mark.parametrize("tcp,message", [
    ({"initial-rto": 0}, "initial RTO must be > 0"),
    ({"delayed-ack-timeout": "11s"}, "delayed-ack-timeout above 10 s"),
    ({"rmem": [1000, 2000, 8192]}, "holds less than one segment's window"),
    ({"wmem": "4096 4096"}, "is not three sizes"),
    ({"tsq": "maybe"}, "is not one of off, 3.6, 3.12, current"),
    ({"cc-generation": 3.1}, "is a number, not a release"),
    ({"profile": "linux-9"}, "unknown TCP profile"),
])
def test_refused_values_name_the_key(tcp, message):
    with pytest.raises(ConfigError, match=message) as e:
        _tcp(tcp)
    assert str(e.value).startswith(f"tcp.{next(iter(tcp))}")


def test_the_committed_page_has_the_table_the_module_renders(tmp_path):
    """docs/experiment-file.md's tcp table is tcpdoc.render() of the table (regenerate it with
    `python -m ccbench.config.tcpdoc`)."""
    assert tcpdoc.check() == []
    section = tcpdoc.render()
    assert all(f"| `{k.name}` |" in section for k in tcpkeys.TABLE)
    page = tmp_path / "page.md"
    page.write_text(f"# x\n\n{tcpdoc.BEGIN}\n| stale |\n{tcpdoc.END}\n\nafter\n")
    assert "is not what tcpkeys.py renders" in tcpdoc.check(page)[0]
    tcpdoc.write(page)
    assert tcpdoc.check(page) == [] and page.read_text().endswith(f"{tcpdoc.END}\n\nafter\n")
    page.write_text("no markers")
    assert "marker" in tcpdoc.check(page)[0]
