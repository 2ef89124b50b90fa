"""The tutorial's example script runs (doc/python.md, python/examples/solve_mtx.py)."""

import subprocess
import sys

import pytest

from conftest import EXAMPLES, mtx_path

SCRIPT = EXAMPLES / "solve_mtx.py"


def run(*args):
    out = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_example_generated_problem():
    text = run()
    assert "krill  cg" in text and "scipy  cg" in text and "krill by format" in text


@pytest.mark.parametrize("name", ["bcsstk01", "cage5"])
def test_example_testdata(name, tmp_path):
    args = [str(mtx_path(name))]
    try:
        import matplotlib  # noqa: F401
        args += ["--plot", str(tmp_path / "history.png")]
    except ImportError:
        pass
    text = run(*args)
    assert "converged" in text and "||x_krill - x_scipy||" in text
    if "--plot" in args:
        assert (tmp_path / "history.png").is_file()
