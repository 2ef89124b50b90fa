"""Drop-in replacements for scipy.sparse.linalg's gmres, cg, bicgstab and minres.

Same signatures, same return value (x, info) and the same stopping test,
||b - A x|| <= max(rtol ||b||, atol); the solve runs in krill on the CPU, or on the GPU for
a CuPy A (as cupyx.scipy.sparse.linalg's: b and x0 NumPy or CuPy, x returned as a CuPy
array; doc/python.md, "CuPy"). Differences from SciPy (doc/python.md, "Differences from
SciPy"):

- A: scipy.sparse matrices/arrays of any format (converted to CSR once), dense arrays, and
  LinearOperators (or anything with shape and matvec, as aslinearoperator takes), which run
  matrix-free through krill's shell matrix: matvec gets a read-only float64 view of krill's
  vector, valid only during the call. An exception in matvec stops the solve and propagates.
- M: as SciPy's (a LinearOperator, sparse or dense matrix approximating A^-1, applied as
  M @ r; krill's shell preconditioner), a callable z = M(r), or the name of a krill
  preconditioner ("jacobi", "ilu0", "ic0", ...; not with an operator A, whose entries krill
  does not know).
- info: 0 converged; > 0 the iterations done without converging (for GMRES too, where SciPy
  returns maxiter); < 0 krill's reason: -2 breakdown, -3 indefinite A or M (CG, MINRES),
  -4 NaN/Inf in the iteration. Bad arguments raise (ValueError / krill.KrillError).
- callback: called after every iteration with the residual norm (a float), never with x:
  krill's solvers do not form x mid-iteration. gmres: callback_type "legacy" and "pr_norm"
  pass ||r|| / ||b|| as SciPy does; "x" raises TypeError.
- gmres: maxiter counts restart cycles as in SciPy (krill runs at most maxiter * restart
  iterations); krill's GMRES is right-preconditioned, SciPy's left-preconditioned.
- minres: stops on ||r|| <= max(rtol ||b||, atol) (SciPy's MINRES uses its own test
  against ||A|| ||x||); shift, show and check are accepted with their defaults only.
"""

import numpy as np

from .. import _cupy
from .._solve import _run

__all__ = ["gmres", "cg", "bicgstab", "minres"]


def _info(d):
    code = d["reason_code"]
    if code > 0:
        return 0
    if code == -1:   # KRILL_DIVERGED_MAXIT (or stopped): iterations done, >= 1
        return max(1, int(d["iterations"]))
    return int(code)


def _count_default(maxiter, n, per_n):
    if maxiter is None:
        return per_n * n
    if int(maxiter) < 0:
        raise ValueError(f"krill: maxiter = {maxiter}; it must be >= 0")
    return int(maxiter)


def _call(method, A, b, x0, rtol, atol, maxit, restart, M, callback):
    x, d = _run(A, b, x0, solver=method, rtol=rtol, atol=atol, maxiter=maxit,
                restart=restart, precond=M, format=None, device=None, threads=0,
                repro=False, callback=callback)
    return x, _info(d)


def _wrap(callback, scale=None):
    """The C monitor calls (iteration, residual_norm); SciPy's callbacks take one value."""
    if callback is None:
        return None
    if not callable(callback):
        raise TypeError("krill: callback must be callable or None")
    if scale is None:
        return lambda it, rnorm: callback(rnorm)
    return lambda it, rnorm: callback(rnorm * scale)


def _norm(b):
    """||b||, for a NumPy or a GPU (CuPy) b."""
    if _cupy.is_gpu_array(b):
        cupy = _cupy._cupy("b")
        return float(cupy.linalg.norm(cupy.asarray(b, dtype=cupy.float64).ravel()))
    return float(np.linalg.norm(np.asarray(b, dtype=np.float64).ravel()))


def _n(A):
    """A's row count for SciPy's default maxiter (0 where A has no 2-D shape: the
    conversion then refuses it)."""
    shape = getattr(A, "shape", None)
    if shape is None:
        try:
            shape = np.shape(A)
        except Exception:
            return 0
    return int(shape[0]) if len(shape) == 2 else 0


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0., restart=None, maxiter=None, M=None,
          callback=None, callback_type=None):
    """Restarted GMRES (right-preconditioned). See scipy.sparse.linalg.gmres and this
    module's notes. Returns (x, info)."""
    if callback_type not in (None, "legacy", "pr_norm", "x"):
        raise ValueError(f"Unknown callback_type: {callback_type!r}")
    if callback is not None and callback_type == "x":
        raise TypeError("krill: callback_type='x' is not supported (krill's GMRES does not "
                        "form x inside a cycle); use 'pr_norm'")
    n = _n(A)
    restart = 20 if restart is None else int(restart)
    if restart < 1:
        raise ValueError(f"krill: restart = {restart}; it must be >= 1")
    restart = max(1, min(restart, n)) if n > 0 else restart
    cycles = _count_default(maxiter, n, 10)
    cb = None
    if callback is not None:
        bnorm = _norm(b)
        cb = _wrap(callback, 1.0 / bnorm if bnorm > 0 else 1.0)
    return _call("gmres", A, b, x0, rtol, atol, cycles * restart, restart, M, cb)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0., maxiter=None, M=None, callback=None):
    """Conjugate gradients (A and M symmetric definite). See scipy.sparse.linalg.cg and
    this module's notes. Returns (x, info)."""
    maxit = _count_default(maxiter, _n(A), 10)
    return _call("cg", A, b, x0, rtol, atol, maxit, None, M, _wrap(callback))


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0., maxiter=None, M=None, callback=None):
    """BiCGStab (right-preconditioned). See scipy.sparse.linalg.bicgstab and this module's
    notes. Returns (x, info)."""
    maxit = _count_default(maxiter, _n(A), 10)
    return _call("bicgstab", A, b, x0, rtol, atol, maxit, None, M, _wrap(callback))


def minres(A, b, x0=None, *, rtol=1e-5, atol=0., shift=0.0, maxiter=None, M=None,
           callback=None, show=False, check=False):
    """MINRES (A symmetric, possibly indefinite; M symmetric positive definite). See
    scipy.sparse.linalg.minres and this module's notes (atol is krill's addition).
    Returns (x, info)."""
    if shift != 0.0:
        raise TypeError("krill: minres(shift=...) is not supported yet; pass A - shift * I")
    if show or check:
        raise TypeError("krill: minres(show=True / check=True) is not supported")
    maxit = _count_default(maxiter, _n(A), 5)
    return _call("minres", A, b, x0, rtol, atol, maxit, None, M, _wrap(callback))
