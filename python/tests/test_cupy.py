"""CuPy matrices and vectors solved on the GPU without copies (doc/python.md, "CuPy (GPU, no
copies)"). Marked gpu (select them with `pytest -m gpu`); skipped unless CuPy imports and
this krill has CUDA and a usable GPU (python/run_tests.sh: PYTHON_VENV=off PY_CUDA=ON).

The zero-copy claims are checked with krill's allocation counter (krill_ctx_alloc_stats_get,
Matrix.build_alloc_stats / device_alloc_stats) and by comparing device pointers."""

import numpy as np
import pytest

import krill
from conftest import convdiff2d, poisson2d, relres, rhs


def _why_not():
    if not krill.have_cuda():
        return "this krill was built without CUDA (python/run_tests.sh with PY_CUDA=ON)"
    if krill.cuda_device_count() == 0:
        return "no usable CUDA device"
    try:
        import cupy  # noqa: F401
        import cupyx.scipy.sparse  # noqa: F401
    except Exception as e:
        return f"cupy does not import ({type(e).__name__}: {e})"
    return None


_WHY = _why_not()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(_WHY is not None, reason=f"CuPy: {_WHY}")]
if _WHY is None:
    import cupy as cp
    import cupyx.scipy.sparse as csp


def _delta(after, before):
    return {k: after[k] - before[k] for k in ("allocations", "bytes")}


def _relerr(x, ref):
    return np.linalg.norm(x - ref) / np.linalg.norm(ref)


@pytest.mark.parametrize("problem,solver", [(poisson2d, "cg"), (convdiff2d, "gmres"),
                                            (convdiff2d, "bicgstab"), (poisson2d, "minres")])
def test_solve_matches_cpu(problem, solver):
    a = problem(40)
    b = rhs(a)
    ref = krill.solve(a, b, solver=solver, rtol=1e-8)
    r = krill.solve(csp.csr_matrix(a), cp.asarray(b), solver=solver, rtol=1e-8)
    assert isinstance(r.x, cp.ndarray) and r.converged and "cuda" in r.device
    assert abs(r.iterations - ref.iterations) <= 0.15 * ref.iterations
    x = cp.asnumpy(r.x)
    assert relres(a, x, b) < 1e-7
    assert _relerr(x, ref.x) < 1e-5


def test_matrix_build_wraps_the_arrays_without_copies():
    a = poisson2d(40)
    A = csp.csr_matrix(a)
    m = krill.Matrix(A)   # device None: the GPU for a CuPy matrix
    assert m.build_alloc_stats == {"allocations": 0, "bytes": 0}
    assert m.format == "csr" and m.shape == a.shape and m.nnz == a.nnz
    # krill reads A's own memory: the Matrix holds A's arrays, not copies
    assert m.indptr.data.ptr == A.indptr.data.ptr
    assert m.indices.data.ptr == A.indices.data.ptr
    assert m._gpu_values.data.ptr == A.data.data.ptr


def test_cupy_vectors_save_the_two_vector_allocations():
    # A Matrix built from host arrays on the GPU takes both: NumPy b and x are copied into
    # vectors krill allocates, CuPy ones are wrapped (krill_vec_wrap).
    a = poisson2d(40)
    n = a.shape[0]
    b = rhs(a)
    m = krill.Matrix(a, format="csr", device="cuda")
    for precond in (None, "jacobi"):
        m.solve(b, solver="cg", precond=precond)   # warm-up: workspaces, the kept jacobi
        s0 = m.device_alloc_stats()
        r_np = m.solve(b, solver="cg", precond=precond)
        s1 = m.device_alloc_stats()
        r_cp = m.solve(cp.asarray(b), solver="cg", precond=precond)
        s2 = m.device_alloc_stats()
        with_np, with_cp = _delta(s1, s0), _delta(s2, s1)
        assert with_np["allocations"] - with_cp["allocations"] == 2
        assert with_np["bytes"] - with_cp["bytes"] == 2 * n * 8
        assert isinstance(r_np.x, np.ndarray) and isinstance(r_cp.x, cp.ndarray)
        assert r_np.iterations == r_cp.iterations
        assert _relerr(cp.asnumpy(r_cp.x), r_np.x) < 1e-12


def test_cupy_matrix_solves_allocate_no_vectors():
    # On a CuPy matrix a NumPy b is copied to the GPU by CuPy (cupy.asarray), not by krill:
    # the solve allocates in krill's memory what one with CuPy b does.
    a = poisson2d(40)
    b = rhs(a)
    m = krill.Matrix(csp.csr_matrix(a))
    m.solve(b, solver="cg")   # warm-up
    s0 = m.device_alloc_stats()
    r_np = m.solve(b, solver="cg")
    s1 = m.device_alloc_stats()
    r_cp = m.solve(cp.asarray(b), solver="cg")
    s2 = m.device_alloc_stats()
    assert _delta(s1, s0) == _delta(s2, s1)
    assert isinstance(r_np.x, cp.ndarray) and isinstance(r_cp.x, cp.ndarray)


def test_x0_is_copied_not_modified():
    a = poisson2d(20)
    b = cp.asarray(rhs(a))
    x0 = cp.full(a.shape[0], 0.5)
    r = krill.solve(csp.csr_matrix(a), b, x0=x0)
    assert r.converged and r.x.data.ptr != x0.data.ptr
    assert bool((x0 == 0.5).all())


def test_int64_indptr_is_wrapped():
    a = poisson2d(30)
    A = csp.csr_matrix(a)
    assert A.has_canonical_format   # computed now, with CuPy's own index type
    A.indptr = A.indptr.astype(cp.int64)
    m = krill.Matrix(A)
    assert m.indptr.dtype == np.int64 and m.indptr.data.ptr == A.indptr.data.ptr
    assert m.build_alloc_stats == {"allocations": 0, "bytes": 0}
    b = rhs(a)
    r = m.solve(cp.asarray(b), solver="cg")
    assert r.converged and relres(a, cp.asnumpy(r.x), b) < 1e-7


def test_update_values_with_cupy_arrays():
    a = poisson2d(30)
    A = csp.csr_matrix(a)
    b = cp.asarray(rhs(a))
    m = krill.Matrix(A)
    x1 = cp.asnumpy(m.solve(b, solver="cg", precond="jacobi").x)
    m.update_values(A.data * 2.0)      # a new CuPy array: copied into A.data by CuPy
    assert bool(cp.allclose(A.data, cp.asarray(a.data) * 2.0))
    assert m.preconditioners == ["jacobi"]
    x2 = cp.asnumpy(m.solve(b, solver="cg", precond="jacobi").x)
    assert _relerr(x2, x1 / 2.0) < 1e-6
    A.data *= 0.25                      # in place: update_values(A.data) copies nothing
    m.update_values(A.data)
    x3 = cp.asnumpy(m.solve(b, solver="cg", precond="jacobi").x)
    assert _relerr(x3, x1 * 2.0) < 1e-6
    m.update_values(a.data)             # NumPy: uploaded into A.data by krill
    assert bool(cp.allclose(A.data, cp.asarray(a.data)))
    x4 = cp.asnumpy(m.solve(b, solver="cg").x)
    assert _relerr(x4, x1) < 1e-6


def test_update_values_refuses_non_finite_and_keeps_the_old_values():
    a = poisson2d(12)
    A = csp.csr_matrix(a)
    m = krill.Matrix(A)
    bad = A.data * 2.0
    bad[5] = cp.nan
    with pytest.raises(krill.NumericError, match="value 5 is nan"):
        m.update_values(bad)               # checked before CuPy copies it into A.data
    assert bool(cp.all(A.data == cp.asarray(a.data)))
    A.data[3] = cp.inf                     # in place: krill's own check on the GPU
    with pytest.raises(krill.NumericError, match="value 3 is inf"):
        m.update_values(A.data)


@pytest.mark.parametrize("kind", ["unsorted", "coo", "float32", "dense"])
def test_other_cupy_matrices_are_converted(kind):
    a = poisson2d(20)
    if kind == "unsorted":   # each row's column indices reversed: not canonical
        indices = np.concatenate([a.indices[a.indptr[i]:a.indptr[i + 1]][::-1]
                                  for i in range(a.shape[0])])
        data = np.concatenate([a.data[a.indptr[i]:a.indptr[i + 1]][::-1]
                               for i in range(a.shape[0])])
        A = csp.csr_matrix((cp.asarray(data), cp.asarray(indices), cp.asarray(a.indptr)),
                           shape=a.shape)
        assert not A.has_canonical_format
    elif kind == "coo":
        A = csp.coo_matrix(a)
    elif kind == "float32":
        A = csp.csr_matrix(a.astype(np.float32))
    else:
        A = cp.asarray(a.toarray())
    before = A.indices.get() if kind == "unsorted" else None
    b = rhs(a)
    r = krill.solve(A, cp.asarray(b), solver="cg")
    assert r.converged and relres(a, cp.asnumpy(r.x), b) < 1e-6
    if kind == "unsorted":   # the caller's matrix is left as it was
        assert np.array_equal(A.indices.get(), before)


def test_cpu_device_with_a_cupy_matrix_raises():
    A = csp.csr_matrix(poisson2d(10))
    with pytest.raises(ValueError, match="CuPy"):
        krill.solve(A, cp.ones(100), device="cpu")
    with pytest.raises(ValueError, match="CuPy"):
        krill.Matrix(A, device="cpu")


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_sparse_linalg_takes_cupy(method):
    a = poisson2d(20)
    b = rhs(a)
    x, info = getattr(krill.sparse.linalg, method)(csp.csr_matrix(a), cp.asarray(b),
                                                  rtol=1e-8)
    assert info == 0 and isinstance(x, cp.ndarray)
    assert relres(a, cp.asnumpy(x), b) < 1e-7


def test_host_matrix_on_the_gpu_takes_cupy_vectors():
    a = poisson2d(20)
    b = rhs(a)
    r = krill.Matrix(a, device="cuda").solve(cp.asarray(b), solver="cg")
    assert isinstance(r.x, cp.ndarray) and relres(a, cp.asnumpy(r.x), b) < 1e-7


def test_python_preconditioner_on_the_gpu_is_refused():
    m = krill.Matrix(csp.csr_matrix(poisson2d(10)))
    with pytest.raises(krill.UnsupportedError, match="CPU only"):
        m.solve(cp.ones(100), precond=lambda r: r)
