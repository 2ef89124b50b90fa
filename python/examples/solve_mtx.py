#!/usr/bin/env python3
"""Solve A x = b for a Matrix Market matrix with krill and with SciPy, side by side.

    python solve_mtx.py [MATRIX.mtx] [--rtol 1e-8] [--precond ilu0] [--plot history.png]

Without a matrix it solves a 2-D Poisson problem made with scipy.sparse. b = A * ones, so
the exact solution is known. It prints both solvers' iterations, residuals and times, then
krill's time per storage format, and with --plot draws the residual histories (when
matplotlib is installed). doc/python.md walks through it.
"""

import argparse
import time

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krill


def poisson2d(m):
    t = sp.diags_array([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], offsets=[-1, 0, 1])
    return (sp.kron(sp.eye_array(m), t) + sp.kron(t, sp.eye_array(m))).tocsr()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("matrix", nargs="?", help="a Matrix Market file (default: 2-D Poisson)")
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--precond", default=None, help="a krill preconditioner, e.g. ilu0")
    ap.add_argument("--plot", metavar="PNG", help="draw the residual histories here")
    args = ap.parse_args()

    if args.matrix:
        A = sp.csr_array(scipy.io.mmread(args.matrix)).astype(np.float64)
        name = args.matrix
    else:
        A = poisson2d(64)
        name = "2-D Poisson, 64 x 64 grid"
    n = A.shape[0]
    b = A @ np.ones(n)
    print(f"{name}: n = {n}, nnz = {A.nnz}")

    # krill: the solver is chosen from A (CG for SPD-looking, MINRES for symmetric
    # indefinite, GMRES otherwise) and the result carries its history and times.
    res = krill.solve(A, b, rtol=args.rtol, precond=args.precond, maxiter=20 * n)
    print(f"krill  {res.solver:8s} ({res.solver_why})")
    print(f"       {res.reason}, {res.iterations} iterations, "
          f"||b - Ax||/||b|| = {res.relres:.2e}, {res.times['total'] * 1e3:.2f} ms "
          f"(SpMV {res.times['spmv'] * 1e3:.2f} ms)")

    # SciPy, the same method and stopping test
    scipy_history = []
    method = {"fgmres": "gmres"}.get(res.solver, res.solver)
    kw = {"callback_type": "pr_norm", "restart": 30} if method == "gmres" else {}
    bnorm = np.linalg.norm(b)

    def record(value):   # gmres: ||r|| / ||b||; the others pass x
        if np.ndim(value) == 0:
            scipy_history.append(float(value) * bnorm)
        else:
            scipy_history.append(float(np.linalg.norm(b - A @ value)))

    t0 = time.perf_counter()
    if args.precond:
        print("       (SciPy runs without a preconditioner)")
    maxiter = (20 * n) // 30 + 1 if method == "gmres" else 20 * n
    xs, info = getattr(sla, method)(A, b, rtol=args.rtol, maxiter=maxiter, callback=record,
                                    **kw)
    ts = time.perf_counter() - t0
    print(f"scipy  {method:8s} info = {info}, {len(scipy_history)} iterations, "
          f"||b - Ax||/||b|| = {np.linalg.norm(b - A @ xs) / bnorm:.2e}, {ts * 1e3:.2f} ms")
    err = np.linalg.norm(res.x - xs) / max(np.linalg.norm(xs), 1e-300)
    print(f"       ||x_krill - x_scipy|| / ||x_scipy|| = {err:.2e}")

    # The same solve in each storage format krill has on the CPU
    print("krill by format (time per solve, ms):")
    for fmt in krill.formats_available() + ["auto"]:
        if fmt == "cusparse":
            continue
        r = krill.solve(A, b, solver=res.solver, rtol=args.rtol, precond=args.precond,
                        format=fmt, maxiter=20 * n)
        chosen = f" -> {r.format}" if fmt == "auto" else ""
        print(f"  {fmt:9s}{chosen:12s} {r.times['total'] * 1e3:9.3f}  "
              f"SpMV {r.times['spmv'] * 1e3:8.3f}  {r.iterations} iterations")

    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot")
            return 0
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.semilogy(res.history / bnorm, label=f"krill {res.solver}")
        ax.semilogy(np.arange(1, len(scipy_history) + 1), np.array(scipy_history) / bnorm,
                    "--", label=f"scipy {method}")
        ax.set_xlabel("iteration")
        ax.set_ylabel("||r|| / ||b||")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"residual histories: {args.plot}")
    return 0 if res.converged else 1


if __name__ == "__main__":
    raise SystemExit(main())
