"""krill.formats: the `krill formats --json` fields for every CPU format."""

import math

import numpy as np
import pytest

import krill
from conftest import poisson2d, read_mtx

ROW_FIELDS = {"format", "measured", "chosen", "choice", "variant", "bytes", "build_seconds",
              "bytes_vs_csr", "spmv_seconds", "bytes_moved", "gbytes_per_second", "gflops",
              "max_rel_diff", "within_rounding", "fastest", "stats"}
STATS_FIELDS = {"N", "n_cols", "Nz", "K", "Kv", "Kc", "N_val", "N_col", "N_non",
                "mean_row_nnz", "empty_rows"}


@pytest.mark.parametrize("make", [lambda: poisson2d(20), lambda: read_mtx("e05r0000")])
def test_every_cpu_format_measured(make):
    a = make()
    rows = krill.formats(a, reps=3, warmup=1)
    names = [r["format"] for r in rows]
    cpu = [f for f in krill.formats_available() if f != "cusparse"]
    assert names == cpu + ["auto"]                       # the CLI's default list and order
    assert "cusparse" not in names                       # GPU only: left out on the CPU
    fastest = [r for r in rows if r["fastest"]]
    assert len(fastest) == 1 and fastest[0]["chosen"] is None
    for r in rows:
        assert r["measured"], r
        assert set(r) == ROW_FIELDS
        assert set(r["stats"]) == STATS_FIELDS
        assert r["bytes"] > 0 and r["spmv_seconds"] > 0 and r["build_seconds"] >= 0
        assert r["stats"]["Nz"] == a.nnz and r["stats"]["N"] == a.shape[0]
        assert r["bytes_moved"] == r["bytes"] + 8.0 * a.shape[1] + 8.0 * a.shape[0]
        assert math.isclose(r["gbytes_per_second"], r["bytes_moved"] / r["spmv_seconds"] / 1e9)
        assert math.isclose(r["gflops"], 2.0 * a.nnz / r["spmv_seconds"] / 1e9)
        assert r["within_rounding"] and r["max_rel_diff"] < 1e-12
        assert r["bytes_vs_csr"] > 0
    csr = next(r for r in rows if r["format"] == "csr")
    assert csr["bytes_vs_csr"] == 1.0 and csr["chosen"] is None and csr["choice"] is None
    auto = next(r for r in rows if r["format"] == "auto")
    assert auto["chosen"] in cpu and auto["choice"]


def test_bytes_match_matrix():
    a = poisson2d(10)
    rows = krill.formats(a, formats=["csr", "ell"], reps=1, warmup=0)
    assert [r["format"] for r in rows] == ["csr", "ell"]
    assert rows[0]["bytes"] == krill.Matrix(a, format="csr").nbytes
    assert rows[1]["bytes"] == krill.Matrix(a, format="ell").nbytes


def test_unbuildable_format_is_a_row():
    rows = krill.formats(poisson2d(4), formats=["csr", "cusparse"], reps=1)
    bad = rows[1]
    assert bad["format"] == "cusparse" and bad["measured"] is False and bad["error"]


def test_arguments():
    a = poisson2d(4)
    with pytest.raises(ValueError, match="reps"):
        krill.formats(a, reps=0)
    with pytest.raises(ValueError, match="distinct"):
        krill.formats(a, formats=["csr", "csr"])
    with pytest.raises(ValueError):
        krill.formats(np.ones((2, 2, 2)))
    with pytest.raises(TypeError):
        krill.formats(a, device=0)
