#!/usr/bin/env python3
"""bench/cupy_solve.py - the Python peers of bench_solve: CuPy (GPU) or SciPy (CPU).

    cupy_solve.py --A NAME.A.bin --b NAME.b.bin --solver cg|gmres [--backend cupy|scipy]
                  [--rtol 1e-8] [--restart 30] [--maxit 10000] [--runs 3]
                  [--spmv-reps 100] [--problem LABEL] [--json FILE]

Reads the binary dump of `bench_solve --write-bin` (format in bench_common.h), so the
peer solves exactly krill's system (b = A*1, x0 = 0, no preconditioner), and runs
cupyx.scipy.sparse.linalg.cg / gmres(restart) or scipy.sparse.linalg.cg / gmres with the
tolerance relative to ||b|| (the keyword is `rtol` in new versions, `tol` in old ones; the
script asks the function's signature) and atol = 0.

Timing: one warm-up solve capped at one restart cycle, then --runs solves, each timed as a
whole (CuPy: cupy.cuda.Event pair on the current stream; SciPy: time.perf_counter); the
median is reported, and time per iteration = median / iterations. Iterations are counted
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


def solve_once(be, A, b, solver, rtol, restart, maxit):
    """(x, info, iterations) of one solve from x0 = 0."""
    count = [0]

    def callback(_arg):
        count[0] += 1

    if solver == "cg":
        fn = be.la.cg
        x, info = fn(A, b, x0=be.xp.zeros_like(b), maxiter=maxit, callback=callback,
                     **tolerance_kwargs(fn, rtol))
        return x, int(info), count[0]
    fn = be.la.gmres
    kw = tolerance_kwargs(fn, rtol)
    if be.name == "cupy":
        x, info = fn(A, b, x0=be.xp.zeros_like(b), restart=restart, maxiter=maxit,
                     callback=callback, callback_type="pr_norm", **kw)
        return x, int(info), count[0] * restart
    x, info = fn(A, b, x0=be.xp.zeros_like(b), restart=restart,
                 maxiter=max(1, math.ceil(maxit / restart)), callback=callback,
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

    be = Backend(a.backend)
    n_rows, n_cols, row_ptr, col, val = read_csr(a.A)
    if n_rows != n_cols:
        raise ValueError(f"{a.A}: {n_rows} x {n_cols} is not square")
    b_host = read_vec(a.b, n_rows)
    nnz = len(val)
    A = be.matrix(n_rows, n_cols, row_ptr, col, val)
    b = be.xp.asarray(b_host)
    del row_ptr, col, val

    solve_once(be, A, b, a.solver, a.rtol, a.restart, min(a.restart, a.maxit))  # warm-up
    times, iters, info, x = [], 0, 0, None
    for _ in range(a.runs):
        (x, info, iters), t = be.timed(
            lambda: solve_once(be, A, b, a.solver, a.rtol, a.restart, a.maxit))
        times.append(t)
    r = b - A @ x
    relres = float(be.xp.linalg.norm(r) / be.xp.linalg.norm(b))
    med = float(np.median(times))
    out = {
        "library": a.backend, "version": be.version, "device": be.device,
        "problem": a.problem, "solver": a.solver,
        "restart": a.restart if a.solver == "gmres" else None,
        "n": n_rows, "nnz": nnz, "rtol": a.rtol, "maxit": a.maxit, "runs": a.runs,
        "iterations": iters, "info": info, "converged": info == 0, "relres": relres,
        "t_median_s": med, "t_min_s": min(times), "t_max_s": max(times),
        "t_per_iter_s": med / iters if iters else None,
    }
    if a.backend == "cupy" and a.spmv_reps > 0:
        t = spmv_time(be, A, n_cols, a.spmv_reps)
        moved = 12.0 * nnz + 4.0 * (n_rows + 1) + 8.0 * (n_rows + n_cols)
        out.update({"spmv_s": t, "spmv_gb_per_s": moved / t * 1e-9})
    text = json.dumps(out)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
