"""krill.solve and the argument conversion shared with krill.sparse.linalg."""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from . import _core

_SHELL_MATRIX = ("a LinearOperator needs the C API's shell matrix (krill_mat_create_shell, "
                 "issue 20), which krill does not have yet: pass a scipy.sparse matrix or a "
                 "dense numpy array")
_SHELL_PC = ("a LinearOperator, matrix or callable preconditioner M needs the C API's shell "
             "preconditioner (krill_pc_create_shell, issue 20), which krill does not have "
             "yet: pass None or the name of a krill preconditioner (krill.preconditioners())")


def _as_csr(A):
    """A as (indptr int64, indices int32, data float64, n_rows, n_cols): canonical CSR.

    scipy.sparse matrices and arrays of any format are converted to CSR once (the caller's
    matrix is never modified); dense 2-D arrays keep their nonzeros."""
    if isinstance(A, LinearOperator) and not sp.issparse(A):
        raise TypeError("krill: A is a LinearOperator; " + _SHELL_MATRIX)
    if sp.issparse(A):
        if A.ndim != 2:
            raise ValueError(f"krill: A must be 2-D, got {A.ndim}-D")
        if np.iscomplexobj(A.dtype.type(0)):
            raise ValueError("krill: complex matrices are not supported (float64 only)")
        csr = A.tocsr()
        if csr is A:
            csr = A.copy()   # sort / sum duplicates without touching the caller's matrix
        csr.sum_duplicates()  # also sorts the column indices of every row
    else:
        if callable(getattr(A, "matvec", None)) or callable(A):
            raise TypeError("krill: A is an operator; " + _SHELL_MATRIX)
        try:
            dense = np.asarray(A)
        except Exception as e:   # e.g. a GPU array (not supported in this phase)
            raise TypeError(f"krill: cannot use A of type {type(A).__name__}: {e}") from None
        if dense.dtype == object:
            raise TypeError(f"krill: cannot use A of type {type(A).__name__}")
        if dense.ndim != 2:
            raise ValueError(f"krill: A must be 2-D, got shape {dense.shape}")
        if np.iscomplexobj(dense):
            raise ValueError("krill: complex matrices are not supported (float64 only)")
        csr = sp.csr_array(dense.astype(np.float64, copy=False))
    n_rows, n_cols = csr.shape
    indptr = np.ascontiguousarray(csr.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(csr.indices, dtype=np.int32)
    data = np.ascontiguousarray(csr.data, dtype=np.float64)
    return indptr, indices, data, n_rows, n_cols


def _as_vector(v, name):
    """v as a contiguous float64 1-D array (a column (n, 1) is flattened, as SciPy does)."""
    if hasattr(v, "__cuda_array_interface__"):
        raise TypeError(f"krill: {name} is a GPU array; GPU arrays are not supported yet "
                        "(pass a numpy array)")
    arr = np.asarray(v)
    if np.iscomplexobj(arr):
        raise ValueError(f"krill: {name} is complex; only real (float64) systems are supported")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"krill: {name} must be a vector of shape (n,) or (n, 1), got "
                         f"shape {arr.shape}")
    return np.array(arr, dtype=np.float64, order="C", copy=True)


def _repro(repro):
    """repro argument -> (krill_repro_mode, slices)."""
    if repro is False or repro is None or repro == "off":
        return 0, 0
    if repro is True or repro == "ozaki":
        return 1, 0
    if isinstance(repro, str):
        mode, _, slices = repro.partition(":")
        if mode in ("ozaki", "ozaki-fast") and slices.isdigit():
            return (1 if mode == "ozaki" else 2), int(slices)
    raise ValueError(f"krill: repro={repro!r}: use False, True (= \"ozaki\"), \"ozaki:S\" or "
                     "\"ozaki-fast:S\" (S slices)")


class SolveResult:
    """What krill.solve returns.

    Attributes
    ----------
    x : ndarray                 the solution (float64)
    converged : bool
    reason : str                krill_reason_string(), e.g. "converged (rtol)"
    reason_code : int           the krill_reason value (> 0 converged, < 0 not)
    iterations : int
    history : ndarray           estimated residual norm per iteration, [0] = initial
    relres, resnorm, bnorm : float   true ||b - A x|| / ||b||, ||b - A x||, ||b||
    times : dict                seconds: setup, spmv, precond, ortho, other, total
    solver, solver_why : str    the method run and why it was chosen
    format, format_choice       the storage format (and, for "auto", why it was chosen)
    precond_name : str          the preconditioner asked for ("none" without one)
    precond : str               what it built (krill_pc_describe), e.g. its block size
    device : str                the context (krill_ctx_describe)
    """

    def __init__(self, x, d):
        self.x = x
        self.reason_code = d["reason_code"]
        self.converged = self.reason_code > 0
        self.reason = d["reason"]
        self.iterations = d["iterations"]
        self.history = np.frombuffer(d["history"], dtype=np.float64).copy()
        self.relres = d["relres"]
        self.resnorm = d["resnorm"]
        self.bnorm = d["bnorm"]
        self.times = dict(d["times"])
        self.solver = d["solver"]
        self.solver_why = d["solver_why"]
        self.format = d["format"]
        self.format_choice = d["format_choice"]
        self.precond = d["precond"]
        self.precond_name = d["precond_name"]
        self.device = d["device"]

    def __repr__(self):
        return (f"SolveResult(solver={self.solver!r}, converged={self.converged}, "
                f"reason={self.reason!r}, iterations={self.iterations}, "
                f"relres={self.relres:.3e}, time={self.times['total']:.3g} s)")


def _run(A, b, x0, *, solver, rtol, atol, maxiter, restart, precond, format, device,
         threads, repro, callback):
    """Convert the arguments and call the C solve; returns (x, result dict)."""
    indptr, indices, data, n_rows, n_cols = _as_csr(A)
    b = _as_vector(b, "b")
    x = np.zeros(n_cols, dtype=np.float64) if x0 is None else _as_vector(x0, "x0")
    if not isinstance(solver, str):
        raise TypeError(f"krill: solver must be a string, got {type(solver).__name__}")
    if precond is not None and not isinstance(precond, str):
        raise TypeError("krill: precond is not a preconditioner name; " + _SHELL_PC)
    if format is not None and not isinstance(format, str):
        raise TypeError(f"krill: format must be a format name (krill.formats_available()) "
                        f"or None, got {type(format).__name__}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not np.isscalar(value) or not np.isreal(value):
            raise TypeError(f"krill: {name} must be a real number, got {value!r}")
    mode, slices = _repro(repro)
    if callback is not None and not callable(callback):
        raise TypeError("krill: callback must be callable or None")
    d = _core.solve(indptr, indices, data, n_rows, n_cols, b, x, solver, float(rtol),
                    float(atol), 10000 if maxiter is None else int(maxiter),
                    30 if restart is None else int(restart), precond, format, device,
                    int(threads), mode, slices, callback)
    return x, d


def solve(A, b, solver="auto", precond=None, format=None, device="cpu", rtol=1e-8, atol=0.0,
          maxiter=None, restart=None, repro=False, *, x0=None, threads=0, callback=None):
    """Solve A x = b with a krill Krylov solver; returns a SolveResult.

    Parameters
    ----------
    A : scipy.sparse matrix or array (any format), or a dense 2-D array; float64, square.
    b : vector of length n.
    solver : "auto" (CG for a symmetric A with a diagonal of one sign, MINRES for a symmetric
        A whose diagonal has both signs or zeros, GMRES otherwise), "gmres", "fgmres", "cg",
        "bicgstab" or "minres".
    precond : None or a krill preconditioner name ("jacobi", "bjacobi", "bjacobi:3", "ilu0",
        "ic0", "ilu0:shift", ...; krill.preconditioners()).
    format : None (= "csr") or a storage format name, "auto" included
        (krill.formats_available()).
    device : "cpu", "cuda" (the GPU; KrillError where there is none) or "auto".
    rtol, atol : stop when ||b - A x|| <= max(rtol ||b||, atol).
    maxiter : total iterations (default 10000). restart : GMRES's m (default 30).
    repro : False, True (Ozaki scheme: identical bits on any thread count, device or
        format), "ozaki:S" or "ozaki-fast:S" (S slices; doc/reproducible.md).
    x0 : initial guess (default 0). threads : OpenMP threads (0 = OpenMP's default).
    callback : called as callback(iteration, residual_norm) after every iteration.

    Errors of the C library raise krill.KrillError subclasses with its message. A method
    that does not converge is not an error: see result.converged and result.reason.
    """
    x, d = _run(A, b, x0, solver=solver, rtol=rtol, atol=atol, maxiter=maxiter,
                restart=restart, precond=precond, format=format, device=device,
                threads=threads, repro=repro, callback=callback)
    return SolveResult(x, d)
