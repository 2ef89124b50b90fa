#!/usr/bin/env python3
"""bench/cupy_solve.py - the Python peers of bench_solve: CuPy (GPU) or SciPy (CPU).

    cupy_solve.py --A NAME.A.bin --b NAME.b.bin --solver cg|gmres [--backend cupy|scipy]
                  [--precond none|jacobi|bjacobi:B|ilu0|ic0] [--rtol 1e-8] [--restart 30]
                  [--maxit 10000] [--runs 3] [--spmv-reps 100] [--problem LABEL]
                  [--json FILE]

Reads the binary dump of `bench_solve --write-bin` (format in bench_common.h), so the
peer solves exactly krill's system (b = A*1, x0 = 0), and runs
cupyx.scipy.sparse.linalg.cg / gmres(restart) or scipy.sparse.linalg.cg / gmres with the
tolerance relative to ||b|| (the keyword is `rtol` in new versions, `tol` in old ones; the
script asks the function's signature) and atol = 0.

Preconditioners (M ~ A^{-1}, passed as the solvers' M; cg is PCG, gmres applies M on the
right, as krill does):
  - jacobi: z = D^{-1} r, an element-wise product (LinearOperator);
  - bjacobi:B: the inverses of the B x B diagonal blocks (gathered from A's COO form and
    inverted as one batch by xp.linalg.inv on the device) stored as a block-diagonal CSR
    matrix (B entries a row): one SpMV per apply. Neither library has a block Jacobi; this
    is the plain way to write one;
  - ilu0 (CuPy only): cupyx.scipy.sparse.linalg.spilu(A, fill_factor=1), which computes
    ILU(0) on the GPU (cuSPARSE csrilu02, no fill, no pivoting) and applies it with two
    cuSPARSE triangular solves;
  - ic0 (CuPy only): CuPy has no incomplete Cholesky; on a symmetric A, ILU(0) gives
    L U = L D L^T, the same M as IC(0), so it stands in (the same spilu call), at the cost
    of IC(0)'s two triangular solves.
  SciPy has no zero-fill ILU (its spilu is SuperLU's threshold ILU, another method), so
  ilu0 and ic0 are refused with --backend scipy. A preconditioner that cannot be built (a
  zero diagonal entry, a singular block, a zero pivot) prints a JSON object with ok: false
  and the reason, and exits 1.

Timing: one warm-up (preconditioner build and a solve capped at one restart cycle), then
--runs times: the preconditioner's build and the solve, each timed as a whole (CuPy:
cupy.cuda.Event pair on the current stream, which includes host work between them; SciPy:
time.perf_counter); the medians are reported (pc_setup_s, t_median_s), time per
iteration = median solve / iterations, time to solution t_total_s = the sum. Iterations are counted
with the callback:
  - cg (both): called once per iteration;
  - CuPy gmres: called once per restart cycle, and a cycle always runs all `restart`
    Arnoldi steps (CuPy checks convergence only at restarts), so iterations = cycles *
    restart. Its Gram-Schmidt is one classical pass (two GEMVs), not CGS2;
  - SciPy gmres: callback_type='pr_norm' is called once per inner iteration; its maxiter
    counts restart cycles, so maxiter = ceil(maxit / restart).
The true relative residual ||b - A x|| / ||b|| is recomputed after the last run.
SpMV cross-check (CuPy only, --spmv-reps > 0): y = A @ x timed with events in batches
(median of batch means), GB/s counting CuPy's int32 row offsets.
Prints one JSON object (and writes it to --json FILE).
"""
import argparse
import inspect
import json
import math
import sys
import time

import numpy as np


def read_csr(path):
    """(n_rows, n_cols, row_ptr int64, col int32, val float64) from a KRILLCSR dump."""
    with open(path, "rb") as f:
        if f.read(8) != b"KRILLCSR":
            raise ValueError(f"{path}: not a KRILLCSR dump")
        n_rows, n_cols, nnz = (int(v) for v in np.fromfile(f, dtype="<i8", count=3))
        row_ptr = np.fromfile(f, dtype="<i8", count=n_rows + 1)
        col = np.fromfile(f, dtype="<i4", count=nnz)
        val = np.fromfile(f, dtype="<f8", count=nnz)
    if len(row_ptr) != n_rows + 1 or len(col) != nnz or len(val) != nnz:
        raise ValueError(f"{path}: truncated")
    if row_ptr[0] != 0 or row_ptr[-1] != nnz:
        raise ValueError(f"{path}: row offsets do not span 0..nnz")
    return n_rows, n_cols, row_ptr, col, val


def read_vec(path, n):
    with open(path, "rb") as f:
        if f.read(8) != b"KRILLVEC":
            raise ValueError(f"{path}: not a KRILLVEC dump")
        length = int(np.fromfile(f, dtype="<i8", count=1)[0])
        x = np.fromfile(f, dtype="<f8", count=length)
    if length != n or len(x) != n:
        raise ValueError(f"{path}: length {len(x)} (header {length}), expected {n}")
    return x


def tolerance_kwargs(fn, rtol):
    """rtol (new API) or tol (old), and atol = 0 so only the relative test applies."""
    params = inspect.signature(fn).parameters
    kw = {"tol": rtol} if "tol" in params and "rtol" not in params else {"rtol": rtol}
    if "atol" in params or "rtol" in kw:
        kw["atol"] = 0.0
    return kw


class Backend:
    """The array module, the sparse constructor, the solvers and a clock."""

    def __init__(self, name):
        self.name = name
        if name == "cupy":
            import cupy
            import cupyx.scipy.sparse as sp
            import cupyx.scipy.sparse.linalg as la
            self.xp, self.sp, self.la = cupy, sp, la
            self.version = cupy.__version__
            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            self.device = props["name"].decode() if isinstance(props["name"], bytes) \
                else str(props["name"])
        else:
            import scipy
            import scipy.sparse as sp
            import scipy.sparse.linalg as la
            self.xp, self.sp, self.la = np, sp, la
            self.version = scipy.__version__
            self.device = "cpu (1 process)"

    def matrix(self, n_rows, n_cols, row_ptr, col, val):
        xp = self.xp
        if self.name == "cupy":
            if row_ptr[-1] > np.iinfo(np.int32).max:
                raise ValueError("nnz exceeds int32: cupyx CSR uses 32-bit offsets")
            row_ptr = row_ptr.astype(np.int32)
        return self.sp.csr_matrix((xp.asarray(val), xp.asarray(col), xp.asarray(row_ptr)),
                                  shape=(n_rows, n_cols))

    def timed(self, fn):
        """(result, seconds) of fn(), device time on the GPU."""
        if self.name == "cupy":
            start, stop = self.xp.cuda.Event(), self.xp.cuda.Event()
            start.record()
            out = fn()
            stop.record()
            stop.synchronize()
            return out, self.xp.cuda.get_elapsed_time(start, stop) * 1e-3
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0


def block_diagonal_inverse(be, A, bs):
    """The inverses of the bs x bs diagonal blocks of A as a block-diagonal CSR matrix on A's
    device (bs entries a row); ValueError naming the first singular block."""
    xp, n = be.xp, A.shape[0]
    if bs < 1 or n % bs:
        raise ValueError(f"bjacobi:{bs}: {n} rows are not a multiple of the block size")
    coo = A.tocoo()
    inside = coo.row // bs == coo.col // bs
    r, c = coo.row[inside], coo.col[inside]
    blocks = xp.zeros((n // bs, bs, bs))
    blocks[r // bs, r % bs, c % bs] = coo.data[inside]
    try:
        inv = xp.linalg.inv(blocks)          # numpy raises on a singular block, CuPy gives inf
        bad = xp.flatnonzero(~xp.isfinite(inv).all(axis=(1, 2)))
    except np.linalg.LinAlgError:
        bad = xp.flatnonzero(xp.linalg.det(blocks) == 0)
    if len(bad):
        k = int(bad[0])
        raise ValueError(f"bjacobi:{bs}: diagonal block {k} (rows {k * bs}..{k * bs + bs - 1}) "
                         "is singular")
    indptr = np.arange(0, n * bs + 1, bs, dtype=np.int64)
    indices = ((np.arange(n) // bs * bs)[:, None] + np.arange(bs)).ravel().astype(np.int32)
    return be.matrix(n, n, indptr, indices, inv.reshape(n * bs))


def build_precond(be, name, A):
    """(M for the solvers or None, a line saying what it is)."""
    xp, n = be.xp, A.shape[0]
    if name == "none":
        return None, "none"
    if name == "jacobi":
        d = A.diagonal()
        zero = xp.flatnonzero((d == 0) | ~xp.isfinite(d))
        if len(zero):
            raise ValueError(f"jacobi: the diagonal entry of row {int(zero[0])} is zero")
        dinv = 1.0 / d
        return (be.la.LinearOperator((n, n), matvec=lambda r: dinv * r, dtype=np.float64),
                "z = D^-1 r, element-wise")
    if name.startswith("bjacobi:"):
        return (block_diagonal_inverse(be, A, int(name.split(":", 1)[1])),
                "inverted diagonal blocks as a block-diagonal CSR matrix, one SpMV per apply")
    if name in ("ilu0", "ic0"):
        if be.name != "cupy":
            raise ValueError(f"{name}: SciPy has no zero-fill incomplete factorization")
        lu = be.la.spilu(A, fill_factor=1)
        what = "cupyx spilu(fill_factor=1): cuSPARSE csrilu02, two triangular solves"
        if name == "ic0":
            what += " (ILU(0) of the symmetric A = the IC(0) M; CuPy has no IC)"
        return be.la.LinearOperator((n, n), matvec=lu.solve, dtype=np.float64), what
    raise ValueError(f"unknown preconditioner {name}")


def solve_once(be, A, b, solver, rtol, restart, maxit, M=None):
    """(x, info, iterations) of one solve from x0 = 0."""
    count = [0]

    def callback(_arg):
        count[0] += 1

    if solver == "cg":
        fn = be.la.cg
        x, info = fn(A, b, x0=be.xp.zeros_like(b), maxiter=maxit, M=M, callback=callback,
                     **tolerance_kwargs(fn, rtol))
        return x, int(info), count[0]
    fn = be.la.gmres
    kw = tolerance_kwargs(fn, rtol)
    if be.name == "cupy":
        x, info = fn(A, b, x0=be.xp.zeros_like(b), restart=restart, maxiter=maxit, M=M,
                     callback=callback, callback_type="pr_norm", **kw)
        return x, int(info), count[0] * restart
    x, info = fn(A, b, x0=be.xp.zeros_like(b), restart=restart,
                 maxiter=max(1, math.ceil(maxit / restart)), M=M, callback=callback,
                 callback_type="pr_norm", **kw)
    return x, int(info), count[0]


def spmv_time(be, A, n_cols, reps, batches=10):
    """Median over batches of the per-SpMV time of y = A @ x (CuPy, CUDA events)."""
    xp = be.xp
    x = xp.asarray(1.0 + (np.arange(n_cols) % 17) / 16.0)
    for _ in range(10):
        A @ x
    per = []
    size = max(1, reps // batches)
    for _ in range(batches):
        def run():
            for _ in range(size):
                A @ x
        _, t = be.timed(run)
        per.append(t / size)
    return float(np.median(per))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--A", required=True, help="NAME.A.bin (KRILLCSR dump)")
    ap.add_argument("--b", required=True, help="NAME.b.bin (KRILLVEC dump)")
    ap.add_argument("--solver", choices=("cg", "gmres"), required=True)
    ap.add_argument("--backend", choices=("cupy", "scipy"), default="cupy")
    ap.add_argument("--precond", default="none",
                    help="none, jacobi, bjacobi:B, ilu0 or ic0 (the last two: CuPy only)")
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--restart", type=int, default=30)
    ap.add_argument("--maxit", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--spmv-reps", type=int, default=100)
    ap.add_argument("--problem", default="", help="label copied into the JSON")
    ap.add_argument("--json", help="also write the JSON object here")
    a = ap.parse_args()
    if a.runs < 1 or a.maxit < 1 or a.restart < 1:
        ap.error("--runs, --maxit and --restart must be >= 1")
    if not (a.precond in ("none", "jacobi", "ilu0", "ic0") or
            (a.precond.startswith("bjacobi:") and a.precond[8:].isdigit())):
        ap.error(f"--precond: {a.precond} is not none, jacobi, bjacobi:B, ilu0 or ic0")

    be = Backend(a.backend)
    n_rows, n_cols, row_ptr, col, val = read_csr(a.A)
    if n_rows != n_cols:
        raise ValueError(f"{a.A}: {n_rows} x {n_cols} is not square")
    b_host = read_vec(a.b, n_rows)
    nnz = len(val)
    A = be.matrix(n_rows, n_cols, row_ptr, col, val)
    b = be.xp.asarray(b_host)
    del row_ptr, col, val
    out = {
        "library": a.backend, "version": be.version, "device": be.device,
        "problem": a.problem, "solver": a.solver, "precond": a.precond,
        "restart": a.restart if a.solver == "gmres" else None,
        "n": n_rows, "nnz": nnz, "rtol": a.rtol, "maxit": a.maxit, "runs": a.runs,
    }

    try:                                                             # warm-up
        M, out["precond_impl"] = build_precond(be, a.precond, A)
    except Exception as e:      # noqa: BLE001  (any failure of the peer is a reported result)
        out.update(ok=False, converged=False, message=f"{type(e).__name__}: {e}")
        emit(out, a.json)
        return 1
    solve_once(be, A, b, a.solver, a.rtol, a.restart, min(a.restart, a.maxit), M)
    times, setups, iters, info, x = [], [], 0, 0, None
    for _ in range(a.runs):
        M, t = be.timed(lambda: build_precond(be, a.precond, A)[0])
        setups.append(t)
        (x, info, iters), t = be.timed(
            lambda: solve_once(be, A, b, a.solver, a.rtol, a.restart, a.maxit, M))
        times.append(t)
    r = b - A @ x
    relres = float(be.xp.linalg.norm(r) / be.xp.linalg.norm(b))
    med, setup = float(np.median(times)), float(np.median(setups))
    out.update({
        "iterations": iters, "info": info, "converged": info == 0, "relres": relres,
        "pc_setup_s": setup, "t_median_s": med, "t_min_s": min(times), "t_max_s": max(times),
        "t_per_iter_s": med / iters if iters else None, "t_total_s": setup + med, "ok": True,
    })
    if a.backend == "cupy" and a.spmv_reps > 0:
        t = spmv_time(be, A, n_cols, a.spmv_reps)
        moved = 12.0 * nnz + 4.0 * (n_rows + 1) + 8.0 * (n_rows + n_cols)
        out.update({"spmv_s": t, "spmv_gb_per_s": moved / t * 1e-9})
    emit(out, a.json)
    return 0


def emit(out, path):
    """Print the JSON object, and write it to path when given."""
    text = json.dumps(out)
    print(text)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
