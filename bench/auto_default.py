#!/usr/bin/env python3
"""bench/auto_default.py - may `auto` become the default format? (issue 18)

    auto_default.py --bench BUILD/bench/bench_gmres_formats [--device cpu|gpu] [--threads N]
                    [--runs K] [--maxit N] [--auto NAME] [--testdata DIR] [--json OUT]
                    [MATRIX ...]

The issue's rule: `auto` becomes the default of `krill solve`, bench_solve and the C API once
a benchmark over the whole benchmark set shows it never more than 5% slower than `csr` in a
whole solve, build time included. This runs bench_gmres_formats --formats csr,auto --runs K
(K rounds, each building and solving with both formats; the median of the K whole times per
format: build + transfer + solve, GMRES(30) from x0 = 0 with b = A*1, rtol 1e-8, at most N
iterations) over the benchmark set of bench/run_formats.sh (band1 band3 band101 rand1
rand100 band1x poisson3d:160 elasticity3d:160,64,64 and the larger testdata matrices, found
under --testdata; MATRIX arguments replace the set), and prints per matrix what `auto`
built, both medians, their ratio, and the paired ratio that is judged: the median over the
K rounds of auto's total / csr's total in the same round. Each round runs both formats back
to back (in alternating order), so a load that lands on a whole round cancels in its ratio,
where a ratio of two medians can still pair a quiet csr round with a noisy auto round. Then
the worst paired ratio against the 1.05 bound (a matrix that both formats fail on alike, as
a complex one, is listed as skipped). Exit 0 when the
bound holds, 1 when it does not, 2 when the benchmark failed. Standard library only.

`auto` is measured as `krill solve --format auto` builds it: bench_gmres_formats turns it
into auto:spmvs=N, N the SpMVs auto expects of one solve with these options (one GMRES(30)
cycle, at most --maxit: krill_auto_solve_spmvs, doc/auto.md). --auto NAME compares another
spelling against csr instead, e.g. --auto auto:spmvs=1034 (the SpMVs of a whole
1000-iteration solve) or auto:spmvs=1000000000000000 (the SpMV-only choice).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

BOUND = 1.05
SET = ["band1", "band3", "band101", "rand1", "rand100", "band1x", "poisson3d:160",
       "elasticity3d:160,64,64"]
TESTDATA = ["pyamg_helmholtz_2D", "bcsstk15", "delaunay_n15", "bcsstk13", "speaker107k"]


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def paired_ratio(c, t):
    """The median over rounds of t's total / c's total in the same round."""
    pairs = [y / x for x, y in zip(c.get("round_totals", []), t.get("round_totals", [])) if x > 0]
    return median(pairs) if pairs else t["total_s"] / c["total_s"]


def matrices(a):
    if a.matrices:
        return a.matrices
    found = [os.path.join(a.testdata, "mtx", f + ".mtx") for f in TESTDATA] if a.testdata else []
    return SET + [f for f in found if os.path.isfile(f)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", required=True)
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--maxit", type=int, default=1000)
    p.add_argument("--auto", default="auto", help="auto, or auto:spmvs=N (default auto)")
    p.add_argument("--testdata", default=os.environ.get("KRILL_TESTDATA", ""))
    p.add_argument("--json")
    p.add_argument("matrices", nargs="*")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gmres.json")
        cmd = [a.bench, "--device", a.device, "--threads", str(a.threads), "--formats",
               "csr," + a.auto, "--runs", str(a.runs), "--maxit", str(a.maxit), "--json", out]
        cmd += matrices(a)
        print("# " + " ".join(cmd), flush=True)
        rc = subprocess.call(cmd)   # 1 when a matrix failed: judged per matrix below
        if rc not in (0, 1) or not os.path.isfile(out):
            print(f"auto_default: the benchmark failed (exit {rc})", file=sys.stderr)
            return 2
        with open(out) as f:
            doc = json.load(f)
    rows, worst = [], 0.0
    by = {}
    for r in doc["results"]:
        by.setdefault(r["matrix"], {})[r["format"]] = r
    print(f"\n`{a.auto}` against `csr`, whole solve (build + transfer + solve), median of "
          f"{doc['runs']}, {doc['device']}:\n")
    print("| matrix | rows | auto built | csr s | auto s | ratio of medians | "
          "paired auto / csr |")
    print("|---|---:|---|---:|---:|---:|---:|")
    failed = False
    for m, f in by.items():
        c, t = f.get("csr"), f.get(a.auto)
        if c and t and not c["ok"] and not t["ok"] and c["message"] == t["message"]:
            print(f"| {os.path.basename(m)} | - | - | - | - | - | skipped: {c['message']} |")
            continue            # krill cannot solve it at all (a complex matrix): not auto's
        if not c or not t or not c["ok"] or not t["ok"]:
            print(f"| {os.path.basename(m)} | - | - | - | - | - | failed |")
            failed = True
            continue
        of_medians = t["total_s"] / c["total_s"]
        ratio = paired_ratio(c, t)
        worst = max(worst, ratio)
        rows.append({"matrix": m, "rows": c["n"], "chosen": t["chosen"], "csr_s": c["total_s"],
                     "auto_s": t["total_s"], "ratio_of_medians": of_medians, "ratio": ratio,
                     "csr_rounds": c.get("round_totals", []),
                     "auto_rounds": t.get("round_totals", [])})
        print(f"| {os.path.basename(m)} | {c['n']} | {t['chosen']} | {c['total_s']:.4f} | "
              f"{t['total_s']:.4f} | {of_medians:.3f} | {ratio:.3f} |")
    met = not failed and worst <= BOUND
    print(f"\nworst paired auto / csr: {worst:.3f} (bound {BOUND}): {'met' if met else 'NOT met'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": doc["device"], "runs": doc["runs"], "maxit": doc["maxit"],
                       "auto": a.auto, "bound": BOUND, "worst": worst, "met": met,
                       "rows": rows}, f, indent=1)
    return 2 if failed else (0 if met else 1)


if __name__ == "__main__":
    sys.exit(main())
