#!/usr/bin/env python3
"""bench/ab_solve.py - one krill binary against another, on the same machine in one call: the
before-and-after of a change.

    ab_solve.py --old BIN --new BIN [--device gpu|cpu] [--rounds 2] [--runs 5] [--maxit 100]
                [--case "SPEC SOLVER PRECOND FORMAT [OPTION ...]"] ... [--timeout 120]
                [--json FILE]

Each round runs every case with the old binary and then with the new one (rounds alternate,
so a drift of the machine lands on both). A run is `BIN solve --device D --gen SPEC --solver
S --precond P --format F [OPTION ...] --maxit N --rtol 1e-30 --runs R --json`: N iterations,
none converged, so every run does the same work; its time per iteration is the median of
its R solves (times.median_total) / N, and its phases (times.spmv, ...) are the first
solve's. The table gives each round's time per iteration of each binary, the ratio new / old
of their medians over the rounds, and whether the solutions' bits (x_hash) agree: a plain
solve's bits may change with a kernel's launch geometry (the order of its grid sums), a
reproducible one's (`--repro` among the options) must not. Prints a Markdown table.

Without --case: CG + Jacobi on poisson3d:128 and :200, the same reproducible, GMRES(30) on
poisson3d:128 and convdiff3d:128, CG and GMRES on elasticity3d:160,64,64 (csr, and CG with
rbp-ell), BiCGStab + Jacobi on convdiff3d:128: about 2 and 8 M rows, sized for a GPU; give
smaller cases for a CPU.
"""
import argparse
import json
import shlex
import subprocess
import sys

DEFAULT_CASES = [
    "poisson3d:200 cg jacobi csr",
    "poisson3d:128 cg jacobi csr",
    "poisson3d:128 cg jacobi csr --repro",
    "poisson3d:128 gmres none csr",
    "elasticity3d:160,64,64 cg jacobi csr",
    "elasticity3d:160,64,64 gmres none csr",
    "elasticity3d:160,64,64 cg jacobi rbp-ell",
    "convdiff3d:128 gmres none csr",
    "convdiff3d:128 bicgstab jacobi csr",
]


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def solve(a, binary, case):
    """One run: (ms per iteration, x_hash, the JSON document), or an error string."""
    spec, solver, precond, fmt, *extra = shlex.split(case)
    cmd = [binary, "solve", "--device", a.device, "--gen", spec, "--solver", solver,
           "--precond", precond, "--format", fmt, *extra, "--maxit", str(a.maxit),
           "--rtol", "1e-30", "--runs", str(a.runs), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {a.timeout} s: {shlex.join(cmd)}"
    except OSError as e:
        return f"cannot run {binary}: {e}"
    out = p.stdout
    if "{" not in out:   # exit 1 means "not converged", which every run is: judge the JSON
        return f"no JSON (exit {p.returncode}): {shlex.join(cmd)}: {p.stderr.strip()[-300:]}"
    doc = json.JSONDecoder().raw_decode(out[out.index("{"):])[0]
    its = doc.get("iterations") or 0
    t = doc.get("times", {})
    if its <= 0 or "median_total" not in t:
        return f"no iterations or no median in the JSON: {shlex.join(cmd)}"
    return 1e3 * t["median_total"] / its, doc.get("x_hash"), doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True, help="the krill binary before the change")
    ap.add_argument("--new", required=True, help="the krill binary after the change")
    ap.add_argument("--device", default="gpu", choices=["gpu", "cpu"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--maxit", type=int, default=100)
    ap.add_argument("--case", action="append", help="SPEC SOLVER PRECOND FORMAT [OPTION ...]")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--json", help="write every run's figures here")
    a = ap.parse_args()
    if a.rounds < 1 or a.runs < 1 or a.maxit < 1:
        ap.error("--rounds, --runs and --maxit must be at least 1")
    cases = a.case or DEFAULT_CASES
    times = {c: {"old": [], "new": []} for c in cases}
    hashes = {c: {"old": set(), "new": set()} for c in cases}
    failed = []
    for r in range(a.rounds):
        for c in cases:
            for side in ("old", "new"):
                got = solve(a, getattr(a, side), c)
                if isinstance(got, str):
                    failed.append(f"round {r + 1}, {side}: {got}")
                    continue
                ms, xh, _ = got
                times[c][side].append(ms)
                hashes[c][side].add(xh)
                print(f"round {r + 1} {side:3} {c}: {ms:.4f} ms/it", file=sys.stderr, flush=True)
    print(f"| case ({a.device}, {a.maxit} iterations, median of {a.runs} solves a run) "
          "| old ms/it by round | new ms/it by round | new / old | same bits |")
    print("|---|---|---|---:|---|")
    for c in cases:
        o, n = times[c]["old"], times[c]["new"]
        ratio = f"{median(n) / median(o):.3f}" if o and n else "-"
        same = ("yes" if hashes[c]["old"] == hashes[c]["new"] and len(hashes[c]["old"]) == 1
                else "no") if o and n else "-"
        print(f"| {c} | {' / '.join(f'{x:.4f}' for x in o)} | "
              f"{' / '.join(f'{x:.4f}' for x in n)} | {ratio} | {same} |")
    for f in failed:
        print(f"FAILED: {f}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": a.device, "rounds": a.rounds, "runs": a.runs, "maxit": a.maxit,
                       "times_ms_per_iteration": times,
                       "x_hash": {c: {s: sorted(v) for s, v in h.items()}
                                  for c, h in hashes.items()},
                       "failed": failed}, fh, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
