"""The results tables are declared twice — in Rust (netmodel::records::schema, which every
writer of both backends goes through) and in Python (ccbench/results/schema.py, which
every written table is checked against). These tests fail when the two drift apart, and
show that a drifted table is refused before anything is written."""
from __future__ import annotations

import struct

import polars as pl
import pytest

from ccbench import _core
from ccbench.results import TABLES
from ccbench.results.schema import (CATEGORIES, DTYPE_OF, SCHEMAS, Encoded, SchemaError, check,
                                    decode, empty)
from ccbench.results.writer import write_results


def test_python_schemas_equal_the_rust_declaration():
    rust = dict(_core.table_schemas())
    assert list(rust) == list(SCHEMAS) == list(TABLES)
    for table, cols in rust.items():
        assert [c for c, _, _ in cols] == list(SCHEMAS[table]), table
        for name, dtype, cats in cols:
            assert DTYPE_OF[SCHEMAS[table][name]] == dtype, (table, name)
            assert (tuple(cats) if cats else None) == CATEGORIES.get((table, name)), (table, name)


def test_a_simulator_run_has_exactly_the_declared_tables(tmp_path):
    import ccbench
    res = ccbench.run("examples/quickstart.yaml", tmp_path / "r", reload=False)
    for t in TABLES:
        df = getattr(res, t)
        if df is not None:
            check(t, df)
    assert any(c.startswith("cc_") for c in res.flows.columns) or res.flows.height


@pytest.mark.parametrize("drift", ["missing", "retyped", "extra", "reordered"])
def test_a_drifted_table_is_refused_before_anything_is_written(tmp_path, drift):
    df = empty("queues")
    if drift == "missing":
        df = df.drop("marks")
    elif drift == "retyped":
        df = df.with_columns(pl.col("marks").cast(pl.Int64))
    elif drift == "extra":
        df = df.with_columns(pl.lit(0.0).alias("cc_x"))
    else:
        df = df.select(["link", "time_ns", *df.columns[2:]])
    with pytest.raises(SchemaError, match="queues"):
        check("queues", df)
    with pytest.raises(SchemaError):
        write_results(tmp_path / "out", {"queues": df}, {})
    assert not (tmp_path / "out").exists()


def test_flows_may_end_with_float_cc_columns_only():
    df = empty("flows").with_columns(pl.lit(None, dtype=pl.Float64).alias("cc_btl_bw"))
    check("flows", df)
    with pytest.raises(SchemaError, match="cc_btl_bw"):
        check("flows", df.with_columns(pl.col("cc_btl_bw").cast(pl.Int64)))


def test_the_decoder_turns_sentinels_into_nulls():
    i64 = struct.pack("<2q", 5, -(2 ** 63))
    i32 = struct.pack("<2i", 3, -1)
    f64 = struct.pack("<2d", 1.5, float("nan"))
    df = decode([("arrival_ns", "i64", i64, None), ("drop_link", "i32", i32, None),
                 ("sojourn_us", "f64", f64, None), ("retrans", "bool", b"\x01\x00", None),
                 ("drop_reason", "cat", b"\x02\x00", ["none", "queue", "loss"])])
    assert df.to_dicts() == [
        {"arrival_ns": 5, "drop_link": 3, "sojourn_us": 1.5, "retrans": True, "drop_reason": "loss"},
        {"arrival_ns": None, "drop_link": None, "sojourn_us": None, "retrans": False,
         "drop_reason": "none"}]


def test_encoded_columns_read_one_by_one_equal_the_decoded_table():
    """Encoded.values / .array (a campaign's index rows read a few columns without building
    the DataFrame) give what the decoded table's to_list / to_numpy give, nulls included."""
    import numpy as np
    cols = [("arrival_ns", "i64", struct.pack("<3q", 5, -(2 ** 63), 7), None),
            ("sent_ns", "i64", struct.pack("<3q", 1, 2, 3), None),
            ("drop_link", "i32", struct.pack("<3i", 3, -1, 0), None),
            ("sojourn_us", "f64", struct.pack("<3d", 1.5, float("nan"), -0.0), None),
            ("retrans", "bool", b"\x01\x00\x01", None),
            ("drop_reason", "cat", b"\x02\x00\x01", ["none", "queue", "loss"]),
            ("size", "u32", struct.pack("<3I", 1, 2 ** 32 - 1, 0), None),
            ("seq", "u64", struct.pack("<3Q", 2 ** 64 - 1, 0, 9), None)]
    df = decode(list(cols))
    enc = Encoded(cols)
    for name, *_ in cols:
        assert enc.values(name) == df[name].to_list(), name
        got, want = enc.array(name), df[name].to_numpy()
        assert got.dtype == want.dtype, name
        assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), name
    with pytest.raises(KeyError, match="nope"):
        enc.values("nope")
