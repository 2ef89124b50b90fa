#!/usr/bin/env python3
"""bench/compare_petsc_mpi.py - block Jacobi over MPI ranks, krill beside PETSc (issue 19).

    compare_petsc_mpi.py --krill BIN --bench-solve BIN --petsc BIN --mpiexec CMD
                         [--ranks "1 2 3 4"] [--testdata DIR] [--bin-dir DIR]
                         [--rtol 1e-8] [--maxit 10000] [--restart 30] [--timeout 120]

The same system, the same number of processes, the same rows on each (bench_petsc keeps
krill_dist_mat_scatter's default partition, balanced by nonzeros), one thread each:
  gmres(restart) + ilu0        <-> KSPGMRES + PCBJACOBI, sub-PC ILU(0)
  cg + ic0:noshift (symmetric) <-> KSPCG + PCBJACOBI, sub-PC ICC(0), no shift
  pipecg + ic0:noshift         <-> KSPPIPECG, the same (--methods gmres,cg,pipecg)
(krill's ilu0 / ic0 on a distributed matrix factor each rank's diagonal block: block Jacobi
across ranks.) b = A*1, x0 = 0, ||b - A x|| <= rtol ||b|| on both sides. The issue's target:
iteration counts within 15% where PETSc converges. Time per iteration beside it, both the
median of 3 solves after a warm-up solve (krill: `krill solve --runs 3`, times.median_total
over the iterations; the first solve allocates the workspace, the later ones take the kept
one back; PETSc: bench_petsc's KSPSolve, KSPSetUp
outside); on small matrices both are mostly latency. Prints a Markdown table and a summary; every command is in --json FILE.
Reuses compare_petsc.py's helpers (the system list, the dump, the symmetry test).
"""
import argparse
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_petsc as cp  # noqa: E402

METHODS = [("gmres", "ilu0", "gmres", "bjacobi-ilu", False),
           ("cg", "ic0:noshift", "cg", "bjacobi-icc", True),   # (..., symmetric only)
           ("pipecg", "ic0:noshift", "pipecg", "bjacobi-icc", True)]


def parse_json(text):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line")


def krill_run(a, system, solver, precond, ranks):
    source = ["--gen", system["spec"]] if system["gen"] else [system["path"]]
    cmd = a.mpiexec + ["-n", str(ranks), a.krill, "solve"] + source + [
        "--solver", solver, "--precond", precond, "--json", "--threads", "1", "--rtol",
        str(a.rtol), "--maxit", str(a.maxit), "--restart", str(a.restart), "--runs", "3"]
    rc, out, err, _ = cp.run(cmd, a.timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    res = {"cmd": " ".join(cmd), "iterations": None, "converged": False, "per_iter": None}
    try:
        doc = json.loads(out)
        its = doc["iterations"]
        res.update(iterations=its, converged=bool(doc["converged"]), reason=doc["reason"],
                   per_iter=doc["times"]["median_total"] / its if its else None,
                   comm=doc["times"].get("comm"), total=doc["times"].get("total"))
    except (ValueError, KeyError, TypeError):
        res["reason"] = refusal(rc, err, "krill")
    return res


def refusal(rc, err, key):
    """The line of stderr that says why (krill's message, PETSc's error), not mpirun's."""
    for line in err.splitlines():
        if key in line and ("rror" in line or ":" in line) and "MCA" not in line:
            return f"exit {rc}: " + line.strip()[:90]
    return f"exit {rc}"


def petsc_run(a, system, solver, pc, ranks):
    cmd = a.mpiexec + ["-n", str(ranks), a.petsc, "-A", system["A"], "-b", system["b"],
                       "-solver", solver, "-pc", pc, "-rtol", str(a.rtol), "-maxit",
                       str(a.maxit), "-restart", str(a.restart), "-runs", "3"]
    rc, out, err, _ = cp.run(cmd, a.timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    res = {"cmd": " ".join(cmd), "iterations": None, "converged": False, "per_iter": None}
    try:
        doc = parse_json(out)
        if doc["reason"] != "SETUP_FAILED":
            res.update(iterations=doc["iterations"], converged=bool(doc["converged"]),
                       per_iter=doc["t_per_iter_s"])
        res["reason"] = doc["reason"]
    except (ValueError, KeyError):
        res["reason"] = refusal(rc, err, "PETSC ERROR: ")
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--krill", required=True)
    p.add_argument("--bench-solve", required=True)
    p.add_argument("--petsc", required=True)
    p.add_argument("--mpiexec", default="mpirun --oversubscribe --allow-run-as-root")
    p.add_argument("--ranks", default="1 2 3 4")
    p.add_argument("--testdata", default=os.path.join(os.path.dirname(__file__), "..",
                                                      "testdata"))
    p.add_argument("--bin-dir", default="/tmp/krill-compare-mpi-bin")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--maxit", type=int, default=10000)
    p.add_argument("--restart", type=int, default=30)
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--max-nnz", type=int, default=5000000)
    p.add_argument("--gen", default="", help="generated systems too: \"SPEC ...\"")
    p.add_argument("--no-testdata", action="store_true")
    p.add_argument("--methods", default="gmres,cg", help="of gmres, cg, pipecg")
    p.add_argument("--json")
    a = p.parse_args()
    a.mpiexec = shlex.split(a.mpiexec)
    a.only = []
    if a.no_testdata:
        a.testdata = "/nonexistent"
    os.makedirs(a.bin_dir, exist_ok=True)
    skipped, rows = [], []
    for system in cp.collect_systems(a, skipped):
        why = cp.prepare(a, system)
        if why:
            skipped.append((system["name"], why))
            continue
        for ks, kp, ps, pp, sym_only in METHODS:
            if ks not in a.methods.split(",") or (sym_only and not system["symmetric"]):
                continue
            for ranks in map(int, a.ranks.split()):
                k = krill_run(a, system, ks, kp, ranks)
                q = petsc_run(a, system, ps, pp, ranks)
                ki, pi = k["iterations"], q["iterations"]
                agree = (ki is not None and pi is not None and k["converged"] and
                         q["converged"] and abs(ki - pi) <= cp.AGREE * pi)
                rows.append({"matrix": system["name"], "n": system["n"], "method": f"{ks}+{kp}",
                             "ranks": ranks, "krill": k, "petsc": q, "agree": agree})
    print("| matrix | n | krill method | ranks | krill its | PETSc its | ratio | krill ms/it "
          "| PETSc ms/it |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        k, q = r["krill"], r["petsc"]
        ratio = (f"{k['iterations'] / q['iterations']:.2f}"
                 if k["iterations"] and q["iterations"] else "-")
        def ms(v):
            return f"{1e3 * v:.3f}" if v else "-"
        print(f"| {r['matrix']} | {r['n']} | {r['method']} | {r['ranks']} | "
              f"{k['iterations'] if k['converged'] else k.get('reason')} | "
              f"{q['iterations'] if q['converged'] else q.get('reason')} | {ratio} | "
              f"{ms(k['per_iter'])} | {ms(q['per_iter'])} |")
    both = [r for r in rows if r["krill"]["converged"] and r["petsc"]["converged"]]
    only_petsc = [r for r in rows if r["petsc"]["converged"] and not r["krill"]["converged"]]
    print(f"\n{len(rows)} pairs; both converged: {len(both)}, within 15%: "
          f"{sum(r['agree'] for r in both)}, equal counts: "
          f"{sum(r['krill']['iterations'] == r['petsc']['iterations'] for r in both)}; "
          f"PETSc alone converged: {len(only_petsc)}; skipped systems: {len(skipped)}")
    for name, why in skipped:
        print(f"  skipped {name}: {why}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "skipped": skipped}, f, indent=1)


if __name__ == "__main__":
    main()
