"""Tables out: `ccbench export csv|parquet` of a run and of a campaign, Results.to_pandas, and a
campaign as an xarray Dataset indexed by its axes."""
from __future__ import annotations

import polars as pl
import pytest
import yaml

import ccbench
from ccbench import cli

DOC = {"duration": 2, "seed": 1, "central": {"rate": "10Mbit", "delay": "10ms", "queue": "1bdp"},
       "flows": [{"scheme": "cubic"}, {"scheme": "bbr"}]}


def test_a_runs_tables_as_csv_read_back_equal(tmp_path, capsys):
    res = ccbench.run(DOC, tmp_path / "run")
    assert cli.main(["export", "csv", str(tmp_path / "run"), "-o", str(tmp_path / "csv")]) == 0
    out = capsys.readouterr().out
    assert "flowstats.csv" in out and "packets.csv" in out
    back = pl.read_csv(tmp_path / "csv" / "flowstats.csv")
    assert back.height == 2
    assert back["delivered_bytes"].to_list() == res.flowstats["delivered_bytes"].to_list()
    pk = pl.read_csv(tmp_path / "csv" / "packets.csv")
    assert pk.height == res.packets.height
    # one table, Parquet
    assert cli.main(["export", "parquet", str(tmp_path / "run"), "--table", "flows"]) == 0
    got = pl.read_parquet(tmp_path / "run" / "export-parquet" / "flows.parquet")
    assert got.equals(res.flows)
    assert cli.main(["export", "csv", str(tmp_path / "run"), "--table", "nope"]) == 2
    assert "has no table 'nope'" in capsys.readouterr().err
    assert cli.main(["export", "csv", str(tmp_path)]) == 2


def test_to_pandas_gives_every_table():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    res = ccbench.run(DOC)
    df = res.to_pandas("flowstats")
    assert isinstance(df, pd.DataFrame) and len(df) == 2
    assert list(df["flow"]) == [0, 1]
    with pytest.raises(ValueError, match="unknown table"):
        res.to_pandas("nope")


def test_a_campaign_as_an_xarray_dataset_indexed_by_its_axes(tmp_path):
    pytest.importorskip("xarray")
    doc = {**DOC, "sweep": {"axes": {"central.queue": ["0.5bdp", "2bdp"],
                                      "central.delay": ["5ms", "20ms", "40ms"]},
                            "repeats": 2}}
    f = tmp_path / "camp.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "out"
    index = ccbench.sweep(str(f), out, jobs=1)
    ds = ccbench.campaign_dataset(out, metrics=["avg_tput_mbps", "jain"])
    assert dict(ds.sizes) == {"central.queue": 2, "central.delay": 3, "repeat": 2, "flow": 2}
    one = ds["avg_tput_mbps"].sel({"central.queue": "2bdp", "central.delay": "20ms", "repeat": 1,
                                   "flow": 1})
    want = index.filter((pl.col("central.queue") == "2bdp") & (pl.col("central.delay") == "20ms")
                        & (pl.col("repeat") == 1) & (pl.col("flow") == 1))["avg_tput_mbps"][0]
    assert float(one) == pytest.approx(want)
    runs = ccbench.campaign_dataset(out, per_flow=False)
    assert "flow" not in runs.sizes and "loss_pct" in runs
    with pytest.raises(ValueError, match="unknown metric"):
        ccbench.campaign_dataset(out, metrics=["goodput"])
    assert cli.main(["export", "csv", str(out)]) == 0
    assert pl.read_csv(out / "export-csv" / "index.csv").height == index.height
