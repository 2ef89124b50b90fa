"""krill.sparse.linalg against scipy.sparse.linalg: same convergence, solutions within the
tolerance, iteration counts within 15% (where the two methods are the same algorithm)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krill
import krill.sparse.linalg as kla
from conftest import convdiff2d, poisson2d, read_mtx, relres, rhs, saddle


def counted(module, method, a, b, **kw):
    """(x, info, iterations): iterations counted by the per-iteration callback."""
    calls = []
    if method == "gmres":
        kw["callback_type"] = "pr_norm"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, info = getattr(module, method)(a, b, callback=calls.append, **kw)
    return x, info, len(calls)


def close_counts(k, s):
    """Iteration counts within 15% of SciPy's (and at least 2 apart allowed: tiny counts)."""
    return abs(k - s) <= max(0.15 * s, 2)


def check_same(a, b, method, rtol, compare_counts=True, **kw):
    xs, infos, its = counted(sla, method, a, b, rtol=rtol, **kw)
    xk, infok, itk = counted(kla, method, a, b, rtol=rtol, **kw)
    assert (infok == 0) == (infos == 0), (infok, infos)
    if infos == 0:
        # krill's test: ||b - A x|| <= rtol ||b|| (its true residual, a hair of slack)
        assert relres(a, xk, b) <= 1.01 * rtol
    if compare_counts:
        assert close_counts(itk, its), f"{method}: krill {itk} iterations, SciPy {its}"
    return xk, xs, infok, infos


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_poisson(method):
    a = poisson2d(24)
    b = rhs(a)
    # SciPy's MINRES stops on its own test (against ||A|| ||x||), not on ||r|| <= rtol ||b||
    xk, xs, _, _ = check_same(a, b, method, 1e-8, compare_counts=method != "minres")
    assert np.linalg.norm(xk - xs) <= 1e-5 * np.linalg.norm(xs)


@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
def test_convection_diffusion(method):
    a = convdiff2d(20)
    b = rhs(a, seed=3)
    xk, xs, _, _ = check_same(a, b, method, 1e-8, restart=30) if method == "gmres" else \
        check_same(a, b, method, 1e-8)
    assert np.linalg.norm(xk - xs) <= 1e-5 * np.linalg.norm(xs)


def test_minres_saddle_point():
    a = saddle(12)
    b = rhs(a)
    xk, info = kla.minres(a, b, rtol=1e-10)
    xs, infos = sla.minres(a, b, rtol=1e-12)
    assert info == 0 and infos == 0
    assert relres(a, xk, b) <= 1.01e-10
    assert np.linalg.norm(xk - xs) <= 1e-6 * np.linalg.norm(xs)


def test_atol_is_scipys():
    """Stop on ||r|| <= max(rtol ||b||, atol): with atol the looser, atol decides."""
    a = poisson2d(16)
    b = 1e3 * rhs(a)
    atol = 1e-2
    xk, infok, itk = counted(kla, "cg", a, b, rtol=1e-14, atol=atol)
    xs, infos, its = counted(sla, "cg", a, b, rtol=1e-14, atol=atol)
    assert infok == 0 and infos == 0
    assert np.linalg.norm(b - a @ xk) <= 1.01 * atol
    assert close_counts(itk, its)


def test_jacobi_preconditioner_matches_scipy():
    """M="jacobi" is SciPy's M = diag(A)^-1: the same PCG iterations."""
    a = poisson2d(20) + sp.diags_array(np.linspace(0.0, 50.0, 400))
    a = a.tocsr()
    b = rhs(a)
    dinv = 1.0 / a.diagonal()
    m = sla.LinearOperator(a.shape, matvec=lambda r: dinv * r)
    xs, infos, its = counted(sla, "cg", a, b, rtol=1e-8, M=m)
    xk, infok, itk = counted(kla, "cg", a, b, rtol=1e-8, M="jacobi")
    assert infos == 0 and infok == 0
    assert close_counts(itk, its), (itk, its)
    assert relres(a, xk, b) <= 1.01e-8


@pytest.mark.parametrize("method,precond", [("cg", "ic0"), ("gmres", "ilu0"),
                                            ("bicgstab", "ilu0"), ("minres", "jacobi")])
def test_krill_preconditioners_cut_iterations(method, precond):
    a = poisson2d(20)
    b = rhs(a)
    _, info0, it0 = counted(kla, method, a, b, rtol=1e-8)
    x, info, it = counted(kla, method, a, b, rtol=1e-8, M=precond)
    assert info0 == 0 and info == 0
    assert relres(a, x, b) <= 1.01e-8
    if precond != "jacobi":          # Poisson's diagonal is constant: Jacobi changes nothing
        assert it < it0


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "dia", "bsr", "dense",
                                 "matrix_csr", "int"])
def test_any_input_format(fmt):
    a = poisson2d(10)
    b = rhs(a)
    ref, info = kla.cg(a, b, rtol=1e-10)
    assert info == 0
    if fmt == "dense":
        m = a.toarray()
    elif fmt == "matrix_csr":
        m = sp.csr_matrix(a)
    elif fmt == "int":
        m = sp.csr_array(a.astype(np.int64))
    else:
        m = a.asformat(fmt)
    x, info = kla.cg(m, b, rtol=1e-10)
    assert info == 0
    np.testing.assert_array_equal(x, ref)   # converted to the same CSR: same bits


def test_nested_lists():
    a = [[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]
    b = [1.0, 2.0, 3.0]
    for method in ("cg", "gmres", "bicgstab", "minres"):
        x, info = getattr(kla, method)(a, b, rtol=1e-12)
        assert info == 0
        np.testing.assert_allclose(np.array(a) @ x, b, rtol=1e-10)


def test_unsorted_duplicates_and_caller_matrix_untouched():
    a = poisson2d(8).tocoo()
    # every entry split in two halves, stored in reverse order: duplicates, unsorted
    rows = np.concatenate([a.row, a.row])[::-1]
    cols = np.concatenate([a.col, a.col])[::-1]
    vals = np.concatenate([a.data / 2, a.data / 2])[::-1]
    dup = sp.csr_array((vals, (rows, cols)), shape=a.shape)
    # scipy's constructor sums duplicates of COO input; build CSR arrays directly instead
    indptr = np.zeros(a.shape[0] + 1, dtype=np.int32)
    order = np.lexsort((-cols, rows))
    np.add.at(indptr, rows + 1, 1)
    raw = sp.csr_array((vals[order], cols[order], np.cumsum(indptr)), shape=a.shape)
    assert not raw.has_canonical_format
    before = (raw.indices.copy(), raw.data.copy())
    b = rhs(a)
    x1, i1 = kla.cg(dup, b, rtol=1e-10)
    x2, i2 = kla.cg(raw, b, rtol=1e-10)
    assert i1 == 0 and i2 == 0
    np.testing.assert_allclose(x1, x2, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(raw.indices, before[0])
    np.testing.assert_array_equal(raw.data, before[1])


def test_x0_and_exact_guess():
    a = poisson2d(12)
    b = rhs(a)
    x, info = kla.cg(a, b, rtol=1e-10)
    assert info == 0
    calls = []
    x2, info2 = kla.cg(a, b, x0=x, rtol=1e-8, callback=calls.append)
    assert info2 == 0 and calls == []       # the guess already meets the test
    x3, info3 = kla.gmres(a, b, x0=np.ones(a.shape[0]), rtol=1e-10)
    assert info3 == 0 and relres(a, x3, b) <= 1.01e-10


def test_column_rhs_and_zero_rhs():
    a = poisson2d(6)
    b = rhs(a)
    x, info = kla.cg(a, b.reshape(-1, 1), rtol=1e-10)
    assert info == 0 and x.shape == (a.shape[0],)
    for method in ("cg", "gmres", "bicgstab", "minres"):
        x, info = getattr(kla, method)(a, np.zeros(a.shape[0]))
        assert info == 0 and not x.any()


# ---- testdata/mtx: real matrices, b = A * ones ------------------------------------------

REAL = [
    ("bcsstk01", "cg"), ("bcsstk01", "gmres"), ("494_bus", "cg"), ("494_bus", "bicgstab"),
    ("LF10", "cg"), ("LF10", "gmres"), ("Trefethen_20b", "cg"), ("Trefethen_20b", "minres"),
    ("Trefethen_20b", "bicgstab"), ("cage5", "gmres"), ("cage5", "bicgstab"),
    ("e05r0000", "gmres"), ("fs_183_6", "gmres"), ("fs_183_6", "bicgstab"),
    ("pores_1", "gmres"), ("rdb200", "gmres"), ("rdb200", "bicgstab"),
]


@pytest.mark.parametrize("name,method", REAL)
def test_testdata(name, method):
    a = read_mtx(name)                 # COO from mmread: converted to CSR by krill
    a = a.astype(np.float64)
    b = a @ np.ones(a.shape[0])
    xk, xs, infok, infos = check_same(a, b, method, 1e-6)
    assert infok == 0 and infos == 0
    # both meet ||r|| <= 1e-6 ||b||: the solutions agree to within what that allows
    assert np.linalg.norm(a @ (xk - xs)) <= 2.1e-6 * np.linalg.norm(b)


@pytest.mark.parametrize("name,method", [("saylr1", "bicgstab"), ("west0067", "gmres")])
def test_testdata_not_converging_alike(name, method):
    """Where SciPy gives up, krill gives up too: info > 0 (the iterations done)."""
    a = read_mtx(name).astype(np.float64)
    b = a @ np.ones(a.shape[0])
    kw = {"maxiter": 20} if method == "gmres" else {"maxiter": 300}
    xs, infos, its = counted(sla, method, a, b, rtol=1e-6, **kw)
    xk, infok, itk = counted(kla, method, a, b, rtol=1e-6, **kw)
    assert infos > 0 and infok > 0
    assert infok == itk                              # krill: the iterations done
    assert itk == its


def test_testdata_rectangular_and_complex():
    with pytest.raises(krill.UnsupportedError, match="square"):
        kla.gmres(read_mtx("lp_afiro"), np.ones(27))
    young = read_mtx("young1c")
    with pytest.raises(ValueError, match="complex"):
        kla.gmres(young, np.ones(young.shape[0]))
