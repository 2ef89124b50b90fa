"""krill.Matrix: built once, solved many times; update_values; its properties."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krill
from conftest import convdiff2d, poisson2d, read_mtx, rhs


def test_repeated_solves_equal_krill_solve():
    a = convdiff2d(12)
    m = krill.Matrix(a, format="csr")
    for seed in (1, 2, 3):
        b = rhs(a, seed)
        for kw in ({}, {"precond": "ilu0"}, {"solver": "bicgstab", "precond": "jacobi"}):
            r1 = m.solve(b, rtol=1e-10, **kw)
            r2 = krill.solve(a, b, rtol=1e-10, format="csr", **kw)
            assert r1.converged and r2.converged
            assert r1.iterations == r2.iterations and r1.solver == r2.solver
            np.testing.assert_array_equal(r1.x, r2.x)
            np.testing.assert_array_equal(r1.history, r2.history)
    assert sorted(m.preconditioners) == ["ilu0", "jacobi"]   # built once, kept


def test_kept_workspace_and_release_cache():
    # a repeated solve takes the kept workspace back (allocates only its x and b vectors);
    # after release_cache it allocates the workspace again; the answers do not change
    a = poisson2d(20)
    b = rhs(a)
    m = krill.Matrix(a, format="csr")
    first = m.solve(b, solver="gmres", rtol=1e-10)
    s0 = m.device_alloc_stats()
    again = m.solve(b, solver="gmres", rtol=1e-10)
    s1 = m.device_alloc_stats()
    m.release_cache()
    fresh = m.solve(b, solver="gmres", rtol=1e-10)
    s2 = m.device_alloc_stats()
    repeat_allocs = s1["allocations"] - s0["allocations"]
    assert s2["allocations"] - s1["allocations"] > repeat_allocs
    for r in (again, fresh):
        assert r.iterations == first.iterations
        np.testing.assert_array_equal(r.x, first.x)


def test_properties():
    a = poisson2d(10)
    m = krill.Matrix(a)
    assert m.shape == a.shape and m.nnz == a.nnz
    assert m.format in krill.formats_available()
    assert m.format_choice                       # "auto" (the default) says why
    assert m.nbytes > 0 and m.nbytes == m.stats["bytes"]
    assert m.stats["Nz"] == a.nnz and m.stats["N"] == a.shape[0]
    assert "cpu" in m.device
    np.testing.assert_allclose(m.matvec(np.arange(100.0)), a @ np.arange(100.0), rtol=1e-14)
    assert "krill.Matrix" in repr(m)
    c = krill.Matrix(a, format="csr")
    assert c.format == "csr" and c.format_choice is None
    assert krill.Matrix(a, format=None).format == "csr"


@pytest.mark.parametrize("precond", [None, "jacobi", "ilu0", "ic0"])
def test_update_values_as_scipy(precond):
    a = poisson2d(12)
    b = rhs(a)
    m = krill.Matrix(a, format="csr")
    r0 = m.solve(b, precond=precond, rtol=1e-12)
    # new values, same pattern: a shifted, rescaled matrix (still SPD)
    a2 = (3.0 * a + sp.diags_array(np.linspace(1.0, 2.0, a.shape[0]))).tocsr()
    a2.sort_indices()
    assert np.array_equal(a2.indptr, m.indptr) and np.array_equal(a2.indices, m.indices)
    m.update_values(a2.data)
    r1 = m.solve(b, precond=precond, rtol=1e-12)
    x_scipy = sla.spsolve(a2.tocsc(), b)
    assert r1.converged
    np.testing.assert_allclose(r1.x, x_scipy, rtol=1e-8, atol=1e-10)
    assert np.linalg.norm(r1.x - r0.x) > 1e-3 * np.linalg.norm(r0.x)   # the answer changed
    # the kept preconditioner was refreshed: the same as one built for the new values
    fresh = krill.solve(a2, b, precond=precond, rtol=1e-12, format="csr")
    assert r1.iterations == fresh.iterations
    np.testing.assert_array_equal(r1.x, fresh.x)


def test_update_values_from_sparse_matrix_and_coo_order():
    a = read_mtx("cage5")                         # COO from mmread: CSR order differs
    b = rhs(a)
    m = krill.Matrix(a, format="csr")
    a2 = a.copy()
    a2.data = a2.data * 2.0
    m.update_values(a2)                           # a sparse matrix: its pattern is checked
    np.testing.assert_allclose(m.solve(b, rtol=1e-12).x, sla.spsolve(a2.tocsc(), b),
                               rtol=1e-7, atol=1e-12)
    canonical = a2.tocsr()
    canonical.sum_duplicates()
    m.update_values(canonical.data * 0.5)         # the canonical CSR's order
    np.testing.assert_allclose(m.solve(b, rtol=1e-12).x, sla.spsolve(a.tocsc(), b),
                               rtol=1e-7, atol=1e-12)


def test_update_values_auto_solver_follows_values():
    a = poisson2d(6)
    m = krill.Matrix(a, format="csr")
    assert m.solve(rhs(a)).solver == "cg"
    nonsym = a.tocsr().copy()
    nonsym.data = nonsym.data + np.arange(nonsym.nnz) * 1e-3   # same pattern, not symmetric
    m.update_values(nonsym.data)
    assert m.solve(rhs(a)).solver == "gmres"


def test_update_values_validation():
    a = poisson2d(5)
    m = krill.Matrix(a)
    with pytest.raises(ValueError, match="values for a matrix of"):
        m.update_values(np.ones(a.nnz + 1))
    with pytest.raises(ValueError, match="1-D"):
        m.update_values(np.ones((a.nnz, 1)))
    with pytest.raises(ValueError, match="pattern differs"):
        m.update_values(sp.eye_array(25).tocsr())
    bad = np.ones(a.nnz)
    bad[3] = np.nan
    with pytest.raises(krill.KrillError) as e:   # refused by the C library, with its message
        m.update_values(bad)
    assert isinstance(e.value, ValueError)
    op = sla.aslinearoperator(a)
    with pytest.raises(TypeError, match="operator"):
        krill.Matrix(op).update_values(np.ones(a.nnz))


def test_operator_matrix():
    a = poisson2d(8)
    b = rhs(a)
    m = krill.Matrix(sla.aslinearoperator(a))
    assert m.format == "shell" and m.nnz == 0
    r = m.solve(b, solver="cg", rtol=1e-10)
    assert r.converged
    np.testing.assert_allclose(a @ r.x, b, atol=1e-8)


def test_bad_arguments():
    a = poisson2d(4)
    with pytest.raises(krill.KrillValueError, match="unknown format"):
        krill.Matrix(a, format="nope")
    with pytest.raises(TypeError):
        krill.Matrix(a, format=3)
    m = krill.Matrix(a)
    with pytest.raises(krill.KrillValueError, match="solver"):
        m.solve(rhs(a), solver="lu")
    with pytest.raises(krill.KrillError):
        m.solve(np.ones(3))
