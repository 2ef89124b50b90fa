"""Shared problems for krill's Python tests: generated with scipy.sparse, plus the real
matrices of the repository's testdata/mtx (tests that need them skip when absent)."""

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]          # the krill checkout
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def testdata_dir():
    """testdata/mtx of the checkout, or $KRILL_TESTDATA_MTX."""
    return Path(os.environ.get("KRILL_TESTDATA_MTX", ROOT / "testdata" / "mtx"))


def mtx_path(name):
    path = testdata_dir() / f"{name}.mtx"
    if not path.is_file():
        pytest.skip(f"{path} is absent (testdata/mtx of the krill checkout; set "
                    "KRILL_TESTDATA_MTX to another folder)")
    return path


def read_mtx(name):
    import scipy.io
    return scipy.io.mmread(str(mtx_path(name)))


def poisson2d(m):
    """The 5-point Laplacian on an m x m grid (SPD, n = m^2), CSR float64."""
    t = sp.diags_array([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(m)
    return (sp.kron(eye, t) + sp.kron(t, eye)).tocsr()


def convdiff2d(m, peclet=0.5):
    """Upwind convection-diffusion on an m x m grid: nonsymmetric, diagonally dominant."""
    t = sp.diags_array([-(1 + peclet) * np.ones(m - 1), (2 + peclet) * np.ones(m),
                        -np.ones(m - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(m)
    return (sp.kron(eye, t) + sp.kron(t, eye)).tocsr()


def saddle(m):
    """A symmetric indefinite saddle-point matrix [[L, B^T], [B, 0]] (L = Poisson)."""
    lap = poisson2d(m)
    n = lap.shape[0]
    rng = np.random.default_rng(7)
    b = sp.random_array((n // 4, n), density=0.05, rng=rng) + sp.eye_array(n // 4, n)
    return sp.block_array([[lap, b.T], [b, None]]).tocsr()


def rhs(a, seed=1):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, a.shape[0])


def relres(a, x, b):
    return np.linalg.norm(b - a @ x) / np.linalg.norm(b)
