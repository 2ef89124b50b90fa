"""krill.sparse.linalg: argument validation, info semantics, callbacks, what is not
supported yet."""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krill
import krill.sparse.linalg as kla
from conftest import poisson2d, rhs

METHODS = ["gmres", "cg", "bicgstab", "minres"]


@pytest.mark.parametrize("method", METHODS)
def test_signature_is_scipys(method):
    ours = inspect.signature(getattr(kla, method)).parameters
    theirs = inspect.signature(getattr(sla, method)).parameters
    for name, p in theirs.items():
        assert name in ours, name
        assert ours[name].kind == p.kind, name
        assert ours[name].default == p.default, name


# ---- info --------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["cg", "bicgstab", "minres"])
def test_info_positive_is_iterations(method):
    a = poisson2d(16)
    x, info = getattr(kla, method)(a, rhs(a), rtol=1e-12, maxiter=7)
    assert info == 7


def test_info_gmres_counts_inner_iterations():
    a = poisson2d(16)
    calls = []
    x, info = kla.gmres(a, rhs(a), rtol=1e-12, restart=5, maxiter=3, callback=calls.append,
                        callback_type="pr_norm")
    assert info == 15 == len(calls)        # 3 cycles of 5


def test_info_negative_indefinite_cg():
    a = sp.diags_array([1.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0]).tocsr()
    x, info = kla.cg(a, np.ones(8))
    assert info == -3                      # KRILL_DIVERGED_INDEFINITE


@pytest.mark.parametrize("method", ["gmres", "bicgstab", "minres"])
def test_info_negative_breakdown(method):
    a = sp.csr_array(np.array([[1.0, 0.0], [0.0, 0.0]]))
    x, info = getattr(kla, method)(a, np.array([0.0, 1.0]))
    assert info == -2                      # KRILL_DIVERGED_BREAKDOWN (singular A)


# ---- callbacks ---------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_callback_residual_norms(method):
    a = poisson2d(12)
    b = rhs(a)
    seen = []
    kw = {"callback_type": "pr_norm"} if method == "gmres" else {}
    x, info = getattr(kla, method)(a, b, rtol=1e-8, callback=seen.append, **kw)
    assert info == 0 and len(seen) > 3
    assert all(isinstance(v, float) for v in seen)
    final = seen[-1] if method == "gmres" else seen[-1] / np.linalg.norm(b)
    assert final <= 1.01e-8                 # gmres: relative (SciPy's pr_norm); others: ||r||


def test_callback_exception_propagates():
    a = poisson2d(12)

    def boom(r):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        kla.cg(a, rhs(a), callback=boom)


def test_gmres_callback_type_x_not_supported():
    a = poisson2d(6)
    with pytest.raises(TypeError, match="callback_type='x'"):
        kla.gmres(a, rhs(a), callback=lambda x: None, callback_type="x")
    with pytest.raises(ValueError, match="callback_type"):
        kla.gmres(a, rhs(a), callback_type="nope")


# ---- operators (LinearOperator A and M): test_operators.py ------------------------------

def test_minres_shift_not_supported():
    a = poisson2d(6)
    with pytest.raises(TypeError, match="shift"):
        kla.minres(a, rhs(a), shift=1.0)


# ---- bad input -----------------------------------------------------------------------------

def test_bad_arguments_raise_value_errors_with_the_c_message():
    a = poisson2d(6)
    b = rhs(a)
    with pytest.raises(krill.KrillValueError, match="b has length 5 but the matrix has 36"):
        kla.cg(a, b[:5])
    with pytest.raises(ValueError, match="x has length"):
        kla.cg(a, b, x0=np.zeros(3))
    with pytest.raises(ValueError, match="rtol"):
        kla.cg(a, b, rtol=-1.0)
    with pytest.raises(ValueError, match="atol"):
        kla.gmres(a, b, atol=float("nan"))
    with pytest.raises(ValueError, match="unknown preconditioner \"nope\""):
        kla.cg(a, b, M="nope")
    with pytest.raises(ValueError, match="maxiter"):
        kla.cg(a, b, maxiter=-1)
    with pytest.raises(ValueError, match="restart"):
        kla.gmres(a, b, restart=0)
    with pytest.raises(ValueError):
        kla.cg(a, np.ones((36, 2)))
    with pytest.raises(ValueError, match="complex"):
        kla.cg(a, b + 1j)
    with pytest.raises(krill.UnsupportedError, match="square"):
        kla.gmres(sp.random_array((5, 4), density=0.5, rng=1), np.ones(5))


def test_nonfinite_matrix_is_numeric_error():
    a = poisson2d(4).tolil()
    a[1, 2] = np.inf
    with pytest.raises(krill.NumericError, match="finite") as e:
        kla.gmres(a, np.ones(16))
    assert isinstance(e.value, ValueError) and e.value.status_name


def test_nonfinite_rhs_and_guess():
    a = poisson2d(4)
    b = np.ones(16)
    b[3] = np.nan
    with pytest.raises(krill.NumericError):
        kla.cg(a, b)
    x0 = np.zeros(16)
    x0[0] = np.inf
    with pytest.raises(krill.NumericError, match="initial"):
        kla.cg(a, np.ones(16), x0=x0)


def test_ic0_of_nonsymmetric_matrix_refused():
    a = sp.csr_array(np.array([[4.0, 1.0], [0.0, 3.0]]))
    with pytest.raises(krill.KrillValueError, match="not symmetric"):
        kla.cg(a, np.ones(2), M="ic0")
