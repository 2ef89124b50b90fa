#!/usr/bin/env python3
"""krill's MINRES against SciPy's scipy.sparse.linalg.minres: iteration counts within 15%.

usage: minres_scipy.py KRILL WORKDIR MATRIX...

MATRIX is a generator spec (gen:stokes2d:16), a testdata file (testdata:mtx/NAME.mtx) or a
Matrix Market path; an absent file is skipped with a message. Both solvers start from
x = 0 with b = A 1 and no preconditioner. SciPy's own stopping test (rtol on ||r|| /
(||A|| ||x|| + ||b||)) is not krill's (||b - A x|| <= rtol ||b||), so SciPy runs with a
tolerance it cannot reach first and a callback that computes the true residual after every
iteration: its count is the first iteration where ||b - A x_k|| <= 1e-8 ||b||, the test
krill stops by. A matrix on which neither converges within MAXIT is reported, not failed. Exit 0 when every count pair is within 15% (or 2 iterations), 1
otherwise, 77 (skipped) without numpy/scipy.
"""
import json
import os
import subprocess
import sys

RTOL = 1e-8
MAXIT = 20000
SLACK = 0.15

try:
    import numpy as np
    import scipy.io
    import scipy.sparse.linalg as sla
except ImportError as err:
    print(f"SKIPPED: numpy and scipy are needed ({err})")
    sys.exit(77)


def matrix_file(krill, workdir, spec):
    """The .mtx path of spec (generated into workdir; testdata:REL looked up in the shared
    then the local testdata folder, as tests/testutil.c does), or None when absent."""
    if spec.startswith("gen:"):
        path = os.path.join(workdir, spec[4:].replace(":", "_").replace(",", "_") + ".mtx")
        subprocess.run([krill, "gen", spec[4:], "-o", path, "--quiet"], check=True)
        return path
    if spec.startswith("testdata:"):
        for var in ("KRILL_TESTDATA", "KRILL_TESTDATA_LOCAL"):
            folder = os.environ.get(var)
            if folder and os.path.exists(os.path.join(folder, spec[9:])):
                return os.path.join(folder, spec[9:])
        return None
    return spec if os.path.exists(spec) else None


def krill_iterations(krill, path):
    out = subprocess.run([krill, "solve", path, "--solver", "minres", "--rhs", "ones",
                          "--rtol", str(RTOL), "--maxit", str(MAXIT), "--device", "cpu",
                          "--json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"krill solve {path} failed: {out.stderr.strip()}")
    result = json.loads(out.stdout)
    return result["iterations"] if result["converged"] else None


def scipy_iterations(path):
    a = scipy.io.mmread(path).tocsr().astype(float)
    b = a @ np.ones(a.shape[0])
    bnorm = np.linalg.norm(b)
    count = {"it": 0, "hit": None}

    def callback(xk):
        count["it"] += 1
        if count["hit"] is None and np.linalg.norm(b - a @ xk) <= RTOL * bnorm:
            count["hit"] = count["it"]
            raise StopIteration

    def run(**tolerance):
        try:
            sla.minres(a, b, maxiter=MAXIT, callback=callback, **tolerance)
        except StopIteration:
            pass

    try:    # SciPy >= 1.12 names the tolerance rtol, older ones tol
        run(rtol=1e-30)
    except TypeError:
        run(tol=1e-30)
    return count["hit"]


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    krill, workdir, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(workdir, exist_ok=True)
    failed = compared = 0
    print(f"{'matrix':32s} {'krill':>7s} {'scipy':>7s} {'ratio':>6s}")
    for spec in specs:
        path = matrix_file(krill, workdir, spec)
        name = os.path.basename(spec)
        if path is None:
            print(f"{name:32s} absent: skipped")
            continue
        k = krill_iterations(krill, path)
        s = scipy_iterations(path)
        if k is None and s is None:
            print(f"{name:32s} neither converged within {MAXIT} iterations: not compared")
            continue
        ok = k is not None and s is not None and abs(k - s) <= max(SLACK * s, 2)
        ratio = f"{k / s:6.3f}" if k and s else "     -"
        print(f"{name:32s} {k if k else '-':>7} {s if s else '-':>7} {ratio} "
              f"{'ok' if ok else 'OFF BY MORE THAN 15%'}")
        compared += 1
        failed += not ok
    print(f"{compared} compared, {failed} outside 15%, scipy {scipy.__version__}")
    return 1 if failed or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
