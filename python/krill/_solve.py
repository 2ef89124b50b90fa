"""krill.solve and the argument conversion shared with krill.Matrix, krill.formats,
krill.apsp and krill.sparse.linalg."""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, aslinearoperator

from . import _core, _cupy


def _is_operator(A):
    """True for what krill takes as a matrix-free operator: a LinearOperator, or, as SciPy's
    aslinearoperator does, anything with a shape and a matvec that is neither a sparse
    matrix nor an ndarray."""
    if sp.issparse(A) or isinstance(A, np.ndarray) or _cupy.is_gpu_matrix(A):
        return False
    return isinstance(A, LinearOperator) or (
        hasattr(A, "shape") and callable(getattr(A, "matvec", None)))


def _operator_fn(matvec, n, name):
    """The function the C shell callback calls: matvec(x) for a read-only float64 view x of
    krill's vector (valid only during the call), checked and returned as a contiguous
    float64 array of shape (n,) (an (n, 1) column is flattened, as SciPy does)."""
    def apply(x):
        y = np.asarray(matvec(x))
        if y.shape != (n,) and y.shape != (n, 1):
            raise ValueError(f"krill: {name} returned an array of shape {y.shape} for a vector "
                             f"of shape ({n},)")
        if np.iscomplexobj(y):
            raise ValueError(f"krill: {name} returned a complex vector; only real (float64) "
                             "systems are supported")
        return np.ascontiguousarray(y.reshape(n), dtype=np.float64)
    return apply


def _as_operator(A):
    """A (see _is_operator) as (apply function, n): square, real."""
    try:
        shape = tuple(int(d) for d in A.shape)
    except Exception:
        raise ValueError(f"krill: A of type {type(A).__name__} has no 2-D shape") from None
    if len(shape) != 2:
        raise ValueError(f"krill: A must be 2-D, got shape {shape}")
    if shape[0] != shape[1]:
        raise ValueError(f"krill: A is an operator of shape {shape}; krill solves square "
                         "systems")
    dtype = getattr(A, "dtype", None)
    if dtype is not None and np.issubdtype(np.dtype(dtype), np.complexfloating):
        raise ValueError("krill: complex operators are not supported (float64 only)")
    return _operator_fn(A.matvec, shape[0], "A.matvec"), shape[0]


def _as_preconditioner(M, n):
    """M as (name or None, apply function or None): None and krill's names pass as names;
    a LinearOperator, a sparse matrix, a dense array or anything with a matvec is applied
    as z = M @ r (SciPy's M, an approximation of A^-1); any other callable as z = M(r)."""
    if M is None or isinstance(M, str):
        return M, None
    if sp.issparse(M) or isinstance(M, np.ndarray) or callable(getattr(M, "matvec", None)):
        try:
            op = aslinearoperator(M)
        except Exception as e:
            raise TypeError(f"krill: cannot use M of type {type(M).__name__}: {e}") from None
        if tuple(op.shape) != (n, n):
            raise ValueError(f"krill: M has shape {tuple(op.shape)}; A is {n} x {n}")
        if op.dtype is not None and np.issubdtype(op.dtype, np.complexfloating):
            raise ValueError("krill: M is complex; only real (float64) systems are supported")
        return None, _operator_fn(op.matvec, n, "M.matvec")
    if callable(M):
        return None, _operator_fn(M, n, "M")
    raise TypeError(f"krill: M (precond) of type {type(M).__name__} is neither a "
                    "preconditioner name (krill.preconditioners()), an operator nor a callable")


def _as_csr(A):
    """A as (indptr int64, indices int32, data float64, n_rows, n_cols): canonical CSR.

    scipy.sparse matrices and arrays of any format are converted to CSR once (the caller's
    matrix is never modified); dense 2-D arrays keep their nonzeros. CuPy matrices are
    refused here (krill.Matrix and the solves take them: krill/_cupy.py)."""
    if _cupy.is_gpu_matrix(A):
        raise TypeError("krill: A is a CuPy matrix (GPU memory); krill.Matrix, krill.solve and "
                        "krill.sparse.linalg take it, this call takes host matrices (A.get())")
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
        if callable(A):
            raise TypeError("krill: A is a callable without a shape; wrap it in a "
                            "scipy.sparse.linalg.LinearOperator((n, n), matvec=...)")
        try:
            dense = np.asarray(A)
        except Exception as e:   # e.g. a GPU array of another library
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
    if _cupy.is_gpu_array(v):
        raise TypeError(f"krill: {name} is a GPU array; this call takes host (NumPy) arrays "
                        "(solves on a GPU Matrix take CuPy vectors)")
    arr = _cupy.vector_shape(np.asarray(v), name)
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
    x : ndarray                 the solution (float64; a cupy.ndarray for a GPU solve with
                                a CuPy A, b or x0)
    converged : bool
    reason : str                krill_reason_string(), e.g. "converged (rtol)"
    reason_code : int           the krill_reason value (> 0 converged, < 0 not)
    iterations : int
    history : ndarray           estimated residual norm per iteration, [0] = initial
    relres, resnorm, bnorm : float   true ||b - A x|| / ||b||, ||b - A x||, ||b||
    times : dict                seconds: setup, spmv, precond, ortho, other, total
    solver, solver_why : str    the method run and why it was chosen
    ortho : str or None         GMRES's / FGMRES's orthogonalization ("dcgs2", "cgs2",
                                "mgs"); None for the other solvers
    sstep : int or None         s-step GMRES's block S; None for any other solve
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
        self.ortho = d["ortho"]
        self.sstep = d["sstep"]
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
         threads, repro, callback, ortho=None, sstep=None):
    """One solve on a Matrix made for it (krill.solve and krill.sparse.linalg); returns
    (x, result dict)."""
    from ._matrix import Matrix
    if format is None and not _is_operator(A):
        format = "csr"
    m = Matrix(A, format=format, device=device, threads=threads, _operator_format=True)
    return m._solve(b, x0, solver=solver, rtol=rtol, atol=atol, maxiter=maxiter,
                    restart=restart, precond=precond, repro=repro, callback=callback,
                    keep=False, ortho=ortho, sstep=sstep)


def solve(A, b, solver="auto", precond=None, format=None, device=None, rtol=1e-8, atol=0.0,
          maxiter=None, restart=None, repro=False, *, x0=None, threads=0, callback=None,
          ortho=None, sstep=None):
    """Solve A x = b with a krill Krylov solver; returns a SolveResult.

    Parameters
    ----------
    A : scipy.sparse matrix or array (any format), a dense 2-D array, or a matrix-free
        operator: a scipy.sparse.linalg.LinearOperator or anything with shape and matvec
        (krill's shell matrix: y = A.matvec(x) is called from the solve); float64, square.
        Or a CuPy matrix (cupyx.scipy.sparse, a 2-D cupy array): solved on its GPU, a
        canonical float64 CSR used in place without a copy (krill.Matrix says which are).
    b : vector of length n: NumPy, or CuPy (with a CuPy A, or a GPU device: wrapped without
        a copy; x is then returned as a CuPy array). A NumPy b with a CuPy A is copied to
        the GPU (cupy.asarray).
    solver : "auto" (CG for a symmetric A with a diagonal of one sign, MINRES for a symmetric
        A whose diagonal has both signs or zeros, GMRES otherwise; GMRES for an operator),
        "gmres", "fgmres", "cg", "bicgstab", "minres" or "pipecg".
    precond : None, a krill preconditioner name ("jacobi", "bjacobi", "bjacobi:3", "ilu0",
        "ic0", "ilu0:shift", ...; krill.preconditioners()), or a preconditioner of the
        caller's: a LinearOperator, sparse or dense matrix applied as z = M @ r (SciPy's M,
        approximating A^-1), or a callable z = M(r) (krill's shell preconditioner). An
        operator A takes only None or a preconditioner of the caller's.
    format : None (= "csr") or a storage format name, "auto" included
        (krill.formats_available()); None for an operator A.
    device : None ("cpu"; "cuda" for a CuPy A), "cpu", "cuda" (the GPU; KrillError where
        there is none) or "auto" (the GPU when there is one; always for a CuPy A, which
        "cpu" refuses).
    rtol, atol : stop when ||b - A x|| <= max(rtol ||b||, atol).
    maxiter : total iterations (default 10000). restart : GMRES's m (default 30).
    ortho : GMRES's / FGMRES's orthogonalization: None (krill's default, "dcgs2": one
        reduction and two passes over the basis per iteration), "dcgs2", "cgs2" or "mgs"
        (doc/decisions.md compares them).
    sstep : None (GMRES) or S in 2..32: s-step GMRES, the basis built S vectors at a time (a
        Newton basis, block CGS2 + Cholesky-QR; ortho is then not used; restart must be a
        multiple of S; "auto" then means GMRES). Today slower than DCGS2 per iteration
        (doc/decisions.md, "s-step GMRES").
    repro : False, True (Ozaki scheme: identical bits on any thread count, device or
        format), "ozaki:S" or "ozaki-fast:S" (S slices; doc/reproducible.md).
    x0 : initial guess (default 0; NumPy or CuPy as b, never modified). threads : OpenMP
        threads (0 = OpenMP's default).
    callback : called as callback(iteration, residual_norm) after every iteration.

    Errors of the C library raise krill.KrillError subclasses with its message. A method
    that does not converge is not an error: see result.converged and result.reason. An
    exception raised by an operator's matvec or by M stops the solve and propagates
    unchanged (Python >= 3.11: with a note saying which operator and solve). Operators run
    on the CPU only (device "cuda" is refused, "auto" means "cpu"), and so does a Python M
    (refused on a GPU).
    """
    x, d = _run(A, b, x0, solver=solver, rtol=rtol, atol=atol, maxiter=maxiter,
                restart=restart, precond=precond, format=format, device=device,
                threads=threads, repro=repro, callback=callback, ortho=ortho, sstep=sstep)
    return SolveResult(x, d)
