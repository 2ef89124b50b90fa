"""Matrix-free A and user preconditioners M (krill's shell matrix and shell preconditioner):
LinearOperator solves against SciPy's and against krill's own sparse solves, M as an
operator, a matrix or a callable, exceptions raised in matvec, shapes, and what a shell
matrix refuses."""

import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krill
import krill.sparse.linalg as kla
from conftest import convdiff2d, poisson2d, read_mtx, relres, rhs, saddle


def counted(module, method, a, b, **kw):
    """(x, info, iterations) with the iterations counted by the callback."""
    calls = []
    if method == "gmres":
        kw["callback_type"] = "pr_norm"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, info = getattr(module, method)(a, b, callback=calls.append, **kw)
    return x, info, len(calls)


class Counting:
    """Anything with shape and matvec (no LinearOperator): SciPy's aslinearoperator takes
    it, and so does krill. Counts its calls and checks what krill hands it."""

    def __init__(self, a):
        self.a = sp.csr_array(a)
        self.shape = a.shape
        self.dtype = np.dtype(np.float64)
        self.calls = 0

    def matvec(self, x):
        assert isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (self.shape[1],)
        assert not x.flags.writeable          # krill's own memory: read-only
        self.calls += 1
        return self.a @ x


CASES = [("cg", "poisson"), ("minres", "poisson"), ("gmres", "convdiff"),
         ("bicgstab", "convdiff"), ("minres", "saddle"), ("cg", "bcsstk01"),
         ("gmres", "cage5"), ("bicgstab", "cage5"), ("minres", "bcsstk01")]


def problem(name):
    if name == "poisson":
        return poisson2d(16)
    if name == "convdiff":
        return convdiff2d(14)
    if name == "saddle":
        return saddle(8)
    return sp.csr_array(read_mtx(name))


@pytest.mark.parametrize("method,name", CASES)
def test_linear_operator_agrees_with_scipy_and_sparse(method, name):
    a = problem(name)
    b = rhs(a, seed=5)
    rtol = 1e-8
    op = sla.aslinearoperator(a)
    xo, info_o, it_o = counted(kla, method, op, b, rtol=rtol)
    xk, info_k, it_k = counted(kla, method, a, b, rtol=rtol)
    xs, info_s, it_s = counted(sla, method, op, b, rtol=rtol)
    assert info_o == 0 and info_k == 0
    assert relres(a, xo, b) <= 1.01 * rtol
    # krill on the operator runs the sparse solve's arithmetic (CG: its p'Ap summed in
    # another order, so the iterations may differ by one)
    assert abs(it_o - it_k) <= (1 if method == "cg" else 0), (it_o, it_k)
    assert np.linalg.norm(xo - xk) <= 1e-6 * np.linalg.norm(xk) + np.linalg.norm(xk - xs)
    # SciPy on the same operator: the same convergence, iterations within 15% where the
    # algorithms are the same (SciPy's MINRES stops on its own test)
    assert (info_s == 0) == (info_o == 0)
    if method != "minres" and info_s == 0:
        assert abs(it_o - it_s) <= max(0.15 * it_s, 2), (it_o, it_s)
    cond = np.linalg.cond(a.toarray()) if a.shape[0] <= 400 else 1e3
    assert np.linalg.norm(xo - xs) <= max(1e-5, 10 * cond * rtol) * np.linalg.norm(xs)


@pytest.mark.parametrize("method", ["gmres", "cg", "bicgstab", "minres"])
def test_duck_typed_operator_and_krill_solve(method):
    a = poisson2d(10)
    b = rhs(a)
    op = Counting(a)
    x, info = getattr(kla, method)(op, b, rtol=1e-10)
    assert info == 0 and relres(a, x, b) <= 1.01e-10
    assert op.calls >= 2
    res = krill.solve(sla.aslinearoperator(a), b, solver=method, rtol=1e-10)
    assert res.converged and res.format == "shell" and res.solver == method
    assert res.history.shape == (res.iterations + 1,)


def test_solve_auto_with_an_operator_is_gmres():
    a = poisson2d(8)
    res = krill.solve(sla.aslinearoperator(a), rhs(a))
    assert res.solver == "gmres" and "operator" in res.solver_why and res.converged


def test_float32_operator_and_column_result():
    a = convdiff2d(8)
    a32 = a.astype(np.float32)
    op = sla.LinearOperator(a.shape, matvec=lambda v: (a32 @ v.astype(np.float32)).reshape(-1, 1),
                            dtype=np.float32)
    x, info = kla.gmres(op, rhs(a), rtol=1e-5)
    assert info == 0 and relres(a, x, rhs(a)) <= 1e-4


# ---- M: operators, matrices, callables --------------------------------------------------

@pytest.mark.parametrize("kind", ["operator", "sparse", "dense", "callable", "duck"])
@pytest.mark.parametrize("method", ["gmres", "cg", "bicgstab", "minres"])
def test_m_operator_is_jacobi(kind, method):
    """M = diag(A)^-1 given as an operator applies krill's jacobi: the same iterations."""
    d = sp.diags_array(np.linspace(1.0, 4.0, 144))
    a = sp.csr_array(d @ poisson2d(12) @ d)           # SPD with a varied diagonal
    b = rhs(a)
    dinv = 1.0 / a.diagonal()
    m = {"operator": sla.LinearOperator(a.shape, matvec=lambda r: dinv * r),
         "sparse": sp.diags_array(dinv), "dense": np.diag(dinv),
         "callable": lambda r: dinv * r, "duck": Counting(sp.diags_array(dinv))}[kind]
    xm, info_m, it_m = counted(kla, method, a, b, rtol=1e-8, M=m)
    xj, info_j, it_j = counted(kla, method, a, b, rtol=1e-8, M="jacobi")
    assert info_m == 0 and info_j == 0
    assert it_m == it_j
    assert np.linalg.norm(xm - xj) <= 1e-8 * np.linalg.norm(xj)
    if kind == "duck":
        assert m.calls >= it_m


def test_m_operator_against_scipy_cg():
    """An SPD M of the caller's (line solves: the tridiagonal blocks of a 2-D Laplacian,
    factored by SciPy) in CG: krill's iterations within 15% of SciPy's."""
    m = 16
    a = poisson2d(m)
    b = rhs(a)
    t = sp.diags_array([-np.ones(m - 1), 4 * np.ones(m), -np.ones(m - 1)], offsets=[-1, 0, 1])
    lu = sla.splu(sp.csc_matrix(sp.kron(sp.eye_array(m), t)))
    op = sla.LinearOperator(a.shape, matvec=lu.solve)
    xk, info_k, it_k = counted(kla, "cg", a, b, rtol=1e-8, M=op)
    xs, info_s, it_s = counted(sla, "cg", a, b, rtol=1e-8, M=op)
    xn, info_n, it_n = counted(kla, "cg", a, b, rtol=1e-8)
    assert info_k == 0 and info_s == 0
    assert relres(a, xk, b) <= 1.01e-8
    assert abs(it_k - it_s) <= max(0.15 * it_s, 2), (it_k, it_s)
    assert it_k < it_n                          # it preconditions


def test_operator_a_and_m_together():
    a = convdiff2d(12)
    b = rhs(a)
    dinv = 1.0 / a.diagonal()
    op = sla.aslinearoperator(a)
    res = krill.solve(op, b, solver="fgmres", precond=lambda r: dinv * r, rtol=1e-9)
    ref = krill.solve(a, b, solver="fgmres", precond="jacobi", rtol=1e-9)
    assert res.converged and res.precond_name == "shell" and res.format == "shell"
    assert res.iterations == ref.iterations
    assert np.linalg.norm(res.x - ref.x) <= 1e-8 * np.linalg.norm(ref.x)


# ---- exceptions and shapes ----------------------------------------------------------------

class Boom(Exception):
    pass


@pytest.mark.parametrize("method", ["gmres", "cg", "bicgstab", "minres"])
def test_exception_in_matvec_propagates(method):
    a = poisson2d(8)
    calls = []

    def matvec(v):
        calls.append(1)
        if len(calls) == 3:
            raise Boom("third call")
        return a @ v

    op = sla.LinearOperator(a.shape, matvec=matvec)
    with pytest.raises(Boom, match="third call") as e:
        getattr(kla, method)(op, rhs(a))
    assert len(calls) == 3                     # the solve stopped at once
    if sys.version_info >= (3, 11):
        assert any("A.matvec" in n and "shell matrix" in n for n in e.value.__notes__)
    # the traceback reaches into the caller's matvec
    tb = e.value.__traceback__
    names = []
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "matvec" in names


def test_exception_in_m_propagates():
    a = poisson2d(8)

    def m(r):
        raise KeyError("from M")

    with pytest.raises(KeyError, match="from M") as e:
        kla.gmres(a, rhs(a), M=m)
    if sys.version_info >= (3, 11):
        assert any("shell preconditioner" in n for n in e.value.__notes__)


def test_callback_still_works_and_a_solve_after_an_exception():
    a = poisson2d(8)
    op = sla.aslinearoperator(a)
    seen = []
    res = krill.solve(op, rhs(a), solver="cg", callback=lambda it, r: seen.append(it))
    assert res.converged and seen == list(range(1, res.iterations + 1))
    bad = sla.LinearOperator(a.shape, matvec=lambda v: 1 / 0, dtype=np.float64)
    with pytest.raises(ZeroDivisionError):
        kla.cg(bad, rhs(a))
    x, info = kla.cg(op, rhs(a))               # nothing left behind
    assert info == 0


def test_wrong_shapes_raise_value_error():
    a = poisson2d(6)
    b = rhs(a)
    with pytest.raises(ValueError, match="square"):
        kla.gmres(sla.LinearOperator((36, 30), matvec=lambda v: np.zeros(36), dtype=float), b)
    with pytest.raises(ValueError):             # b of the wrong length (the C check)
        kla.gmres(sla.aslinearoperator(a), np.ones(35))
    with pytest.raises(ValueError):
        kla.gmres(sla.aslinearoperator(a), b, x0=np.ones(37))
    # matvec returning the wrong length: raised from inside the solve
    wrong = sla.LinearOperator(a.shape, matvec=lambda v: np.zeros(35), dtype=np.float64)
    with pytest.raises(ValueError):
        kla.gmres(wrong, b)

    class Duck:
        shape = (36, 36)

        def matvec(self, v):
            return np.zeros(40)

    with pytest.raises(ValueError, match="shape"):
        kla.cg(Duck(), b)
    with pytest.raises(ValueError, match="M has shape"):
        kla.cg(a, b, M=sp.eye_array(30))
    with pytest.raises(ValueError, match="complex"):
        kla.cg(sla.LinearOperator((36, 36), matvec=lambda v: v, dtype=np.complex128), b)
    with pytest.raises(TypeError, match="LinearOperator"):
        krill.solve(lambda v: v, b)             # a callable A has no shape
    with pytest.raises(TypeError, match="neither"):
        kla.cg(a, b, M=3.5)


def test_shell_refusals():
    a = poisson2d(6)
    op = sla.aslinearoperator(a)
    b = rhs(a)
    for name in ["jacobi", "bjacobi", "ilu0", "ic0"]:
        with pytest.raises(krill.UnsupportedError, match="shell matrix"):
            krill.solve(op, b, precond=name)
    with pytest.raises(krill.UnsupportedError, match="format"):
        krill.solve(op, b, format="auto")
    with pytest.raises(krill.UnsupportedError, match="reproducible"):
        krill.solve(op, b, repro=True)
    with pytest.raises(krill.UnsupportedError, match="shell preconditioner"):
        krill.solve(a, b, precond=lambda r: r, repro=True)
    with pytest.raises(krill.UnsupportedError, match="CPU only"):
        krill.solve(op, b, device="cuda")
    assert krill.solve(op, b, device="auto").device.startswith("cpu")
