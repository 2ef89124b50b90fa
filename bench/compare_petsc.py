#!/usr/bin/env python3
"""bench/compare_petsc.py - krill's preconditioned solvers beside PETSc's, iteration counts.

    compare_petsc.py --krill BIN --bench-solve BIN --petsc BIN --out OUTDIR
                     [--testdata DIR] [--gen "SPEC ..."] [--bin-dir DIR] [--timeout 120]
                     [--max-nnz 5000000] [--jobs N] [--rtol 1e-8] [--maxit 10000]
                     [--restart 30] [--only NAME ...]

The issue's external check: the same system through krill (`krill solve --json`, CPU, one
thread) and PETSc (bench_petsc, one process) with the same method, restart, tolerance and
preconditioner; the iteration counts should agree within 15% where PETSc converges, and
krill should converge wherever PETSc does.

Systems: every square matrix of TESTDATA/mtx whose Matrix Market field is real or integer
(pattern-only and complex files are skipped with the reason, rectangular ones too), plus
the generated SPECs of --gen. b = A*1 (krill's default right-hand side, and what
`bench_solve --write-bin` dumps for PETSc: both sides read the file through krill's reader,
so they solve the same bits), x0 = 0, stop when ||b - A x|| <= rtol ||b||.

Methods (krill <-> PETSc; bench_petsc's header says how each is set up):
  gmres(restart) + none | jacobi | ilu0 <-> ilu        (right preconditioning)
  cg + none | jacobi | ic0:noshift <-> icc             only on symmetric matrices
  bicgstab + jacobi | ilu0 <-> ilu                     (right preconditioning)
  shifted factorizations (issue 18), with -pc_factor_shift_type positive_definite on
  PETSc's side (bench_petsc applies command-line options last):
  cg + ic0 (its default shift) <-> icc, on symmetric matrices; gmres + ilu0:shift <-> ilu.
  krill shifts A + alpha diag(A), PETSc A + alpha I, with the same search (precond/
  ilu_shift.c): the same alphas where the diagonal is constant. Agreement for these pairs:
  within 25% (AGREE_SHIFT), the issue's target.
  bjacobi:B <-> pbjacobi -bs B, with cg on a symmetric matrix, else gmres, where the
      matrix has a node structure: B is the largest of 2..8 for which the B rows of every
      block row couple to the same block columns, their diagonal block included
      (elasticity3d: B = 3; bcsstk01: 6; rdb200, two species per grid point: 2).
Symmetric means exactly (a_ij == a_ji for every stored entry), as krill_csr_is_symmetric.
A run krill refuses (a nonzero exit without a JSON result, e.g. a preconditioner it does
not have or a zero pivot it reports) is a table entry with krill's message.

Agreement: |its_krill - its_petsc| <= 0.15 its_petsc. The summary counts apart the pairs
where PETSc converged only by leaving the method, as bench_petsc's note says: its Jacobi
accepts zero diagonal entries and its ICC goes on past non-positive pivots (an incomplete
LDL^T), both of which krill refuses with a message. Writes OUTDIR/compare_petsc.md
(summary and table), OUTDIR/compare_petsc.csv and OUTDIR/compare_petsc.json (every run with
its command line and time). Standard library and numpy only.
"""
import argparse
import concurrent.futures
import csv
import gzip
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cupy_solve import read_csr  # noqa: E402  (the dump reader, shared)

AGREE = 0.15
AGREE_SHIFT = 0.25   # pairs with a shifted factorization on both sides
SHIFT_PD = ["-pc_factor_shift_type", "positive_definite"]
# What bench_petsc's note says when PETSc left the method to converge (see departs()).
DEPARTURES = ("zero diagonal entries", "non-positive ICC pivots")
BLOCK_SIZES = range(8, 1, -1)   # largest first: the node size, not a divisor of it


def safe_name(name):
    """bench_safe_name (bench_common.c): the file-name form of a SPEC or path."""
    base = name.rsplit("/", 1)[-1]
    return "".join(c if c.isalnum() and c.isascii() or c in "-." else "_" for c in base)


def mm_header(path):
    """(field, rows, cols) from a Matrix Market file's banner and size line."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        banner = f.readline().split()
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
    field = banner[3].lower() if len(banner) > 3 else "?"
    dims = line.split()
    return field, int(dims[0]), int(dims[1])


def is_symmetric(n, row_ptr, col, val):
    """a_ij == a_ji exactly for every stored entry, and the same pattern both ways."""
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_ptr))
    cols = col.astype(np.int64)
    fwd = np.lexsort((cols, rows))
    bwd = np.lexsort((rows, cols))
    return bool(np.array_equal(rows[fwd], cols[bwd]) and np.array_equal(cols[fwd], rows[bwd])
                and np.array_equal(val[fwd], val[bwd]))


def block_size(n, row_ptr, col):
    """Largest B in 2..8 with n % B == 0 for which A has a node structure: the B rows of each
    block row couple to the same set of block columns (col // B), their own included. Such
    B x B blocks may be sparse (a stiffness matrix stores no zeros); 0 when no B fits."""
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_ptr))
    for b in BLOCK_SIZES:
        if n % b or n < b:
            continue
        nb = n // b + 1
        pairs = np.unique(rows * nb + col // b)          # (row, block column), sorted
        prow, pblock = pairs // nb, pairs % nb
        starts = np.searchsorted(prow, np.arange(n + 1))
        count = np.diff(starts)
        leader = (np.arange(n) // b) * b                 # first row of each block row
        if not np.array_equal(count, count[leader]):
            continue
        offset = np.arange(len(pairs)) - starts[prow]
        if not np.array_equal(pblock, pblock[starts[leader[prow]] + offset]):
            continue                                     # rows of a block row differ
        own = np.arange(n, dtype=np.int64) * nb + np.arange(n) // b
        if np.all(np.isin(own, pairs)):
            return b
    return 0


def methods(symmetric, bs):
    """(krill solver, krill precond, petsc solver, petsc pc, petsc -bs, petsc options)."""
    out = [("gmres", p, "gmres", q, 1, []) for p, q in
           (("none", "none"), ("jacobi", "jacobi"), ("ilu0", "ilu"))]
    out.append(("gmres", "ilu0:shift", "gmres", "ilu", 1, SHIFT_PD))
    if symmetric:
        out += [("cg", p, "cg", q, 1, []) for p, q in
                (("none", "none"), ("jacobi", "jacobi"), ("ic0:noshift", "icc"))]
        out.append(("cg", "ic0", "cg", "icc", 1, SHIFT_PD))
    out += [("bicgstab", p, "bicgstab", q, 1, []) for p, q in
            (("jacobi", "jacobi"), ("ilu0", "ilu"))]
    if bs:
        s = "cg" if symmetric else "gmres"
        out.append((s, f"bjacobi:{bs}", s, "pbjacobi", bs, []))
    return out


def run(cmd, timeout, env=None):
    """(returncode or 'timeout', stdout, stderr, seconds)."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return "timeout", text(e.stdout), text(e.stderr), time.time() - t0


def last_line(text):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def krill_run(a, system, solver, precond):
    cmd = [a.krill, "solve"] + (["--gen", system["spec"]] if system["gen"] else [system["path"]])
    cmd += ["--solver", solver, "--precond", precond, "--json", "--device", "cpu",
            "--threads", "1", "--rtol", str(a.rtol), "--maxit", str(a.maxit),
            "--restart", str(a.restart)]
    rc, out, err, dt = run(cmd, a.timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    res = {"cmd": " ".join(cmd), "rc": rc, "seconds": dt}
    if rc in (0, 1):
        try:
            doc = json.loads(out)
            res.update(iterations=doc["iterations"], reason=doc["reason"],
                       converged=bool(doc["converged"]), relres=doc.get("relres"))
            return res
        except (ValueError, KeyError) as e:
            res.update(reason=f"unreadable JSON: {e}")
    elif rc == "timeout":
        res.update(reason=f"timed out after {a.timeout} s")
    else:
        msg = last_line(err) or f"exit {rc}"
        res.update(reason="refused: " + msg,
                   unavailable=rc == 2 and ("expects one of" in msg or "unknown" in msg))
    res.update(iterations=None, converged=False)
    return res


def petsc_run(a, system, solver, pc, bs, options):
    cmd = [a.petsc, "-A", system["A"], "-b", system["b"], "-solver", solver, "-pc", pc,
           "-bs", str(bs), "-rtol", str(a.rtol), "-maxit", str(a.maxit), "-restart",
           str(a.restart), "-runs", "1", "-problem", system["name"]] + options
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    rc, out, err, dt = run(cmd, a.timeout, env=env)
    res = {"cmd": " ".join(cmd), "rc": rc, "seconds": dt}
    if rc == 0:
        try:
            doc = json.loads(last_line(out))
            res.update(iterations=doc["iterations"], reason=doc["reason"],
                       converged=bool(doc["converged"]), relres=doc.get("relres"),
                       note=doc.get("note", ""))
            if doc["reason"] == "SETUP_FAILED":
                res["iterations"] = None
            return res
        except (ValueError, KeyError) as e:
            res.update(reason=f"unreadable JSON: {e}")
    elif rc == "timeout":
        res.update(reason=f"timed out after {a.timeout} s")
    else:
        msg = [ln for ln in err.splitlines() if "Error" in ln or "error" in ln]
        res.update(reason="failed: " + (msg[0].strip() if msg else last_line(err)))
    res.update(iterations=None, converged=False)
    return res


def collect_systems(a, skipped):
    """The systems to run: dicts with name, path or spec, gen flag."""
    systems = []
    mtx_dir = os.path.join(a.testdata, "mtx")
    if os.path.isdir(mtx_dir):
        for fname in sorted(os.listdir(mtx_dir)):
            if ".mtx" not in fname:
                continue
            path = os.path.join(mtx_dir, fname)
            try:
                field, rows, cols = mm_header(path)
            except (OSError, ValueError, IndexError) as e:
                skipped.append((fname, f"unreadable header: {e}"))
                continue
            if field not in ("real", "integer"):
                skipped.append((fname, f"{field} field: not a real system"))
            elif rows != cols:
                skipped.append((fname, f"rectangular ({rows} x {cols})"))
            elif a.only and fname not in a.only and fname.split(".")[0] not in a.only:
                continue
            else:
                systems.append({"name": fname, "path": path, "spec": path, "gen": False})
    else:
        skipped.append((mtx_dir, "testdata folder absent"))
    for spec in a.gen.split():
        if not a.only or spec in a.only:
            systems.append({"name": spec, "path": None, "spec": spec, "gen": True})
    return systems


def prepare(a, system):
    """Dump the system (bench_solve --no-solve --write-bin) and read its properties."""
    safe = safe_name(system["spec"])
    system["A"] = os.path.join(a.bin_dir, safe + ".A.bin")
    system["b"] = os.path.join(a.bin_dir, safe + ".b.bin")
    rc, _, err, _ = run([a.bench_solve, "--device", "cpu", "--threads", "1", "--no-solve",
                         "--write-bin", a.bin_dir, "cg:" + system["spec"]], a.timeout)
    if rc != 0 or not os.path.exists(system["A"]):
        return f"dump failed: {last_line(err) or rc}"
    n, _, row_ptr, col, val = read_csr(system["A"])
    system.update(n=n, nnz=len(val))
    if len(val) > a.max_nnz:
        return f"nnz {len(val)} above --max-nnz {a.max_nnz}"
    system["symmetric"] = is_symmetric(n, row_ptr, col, val)
    system["bs"] = block_size(n, row_ptr, col)
    return None


def compare_pair(a, system, m):
    ks, kp, ps, pp, bs, options = m
    k = krill_run(a, system, ks, kp)
    p = petsc_run(a, system, ps, pp, bs, options)
    agree = AGREE_SHIFT if options else AGREE
    row = {"matrix": system["name"], "n": system["n"], "nnz": system["nnz"],
           "symmetric": system["symmetric"], "method": f"{ks}+{kp}",
           "petsc_method": f"{ps}+{pp}" + (f" -bs {bs}" if bs > 1 else "") +
                           "".join(" " + o for o in options),
           "shifted": bool(options),
           "krill_iterations": k["iterations"], "krill_reason": k["reason"],
           "krill_converged": k["converged"], "krill_relres": k.get("relres"),
           "krill_unavailable": bool(k.get("unavailable")),
           "petsc_iterations": p["iterations"], "petsc_reason": p["reason"],
           "petsc_converged": p["converged"], "petsc_relres": p.get("relres"),
           "petsc_note": p.get("note", ""), "krill_seconds": k["seconds"],
           "petsc_seconds": p["seconds"], "krill_cmd": k["cmd"], "petsc_cmd": p["cmd"]}
    ki, pi = k["iterations"], p["iterations"]
    row["ratio"] = ki / pi if ki is not None and pi else None
    row["agree"] = (ki is not None and pi is not None and k["converged"] and p["converged"]
                    and abs(ki - pi) <= agree * pi)
    return row


def fmt(v, spec=""):
    return "-" if v is None else format(v, spec)


def yes_no(v):
    return "yes" if v else "no"


def departs(r):
    """PETSc converged only by leaving the method: its Jacobi accepted zero diagonal entries
    or its ICC went on past non-positive pivots (krill refuses both by design)."""
    return r["petsc_converged"] and any(k in r["petsc_note"] for k in DEPARTURES)


def report(a, rows, skipped, elapsed):
    ran = [r for r in rows if r.get("method")]
    petsc_ok = [r for r in ran if r["petsc_converged"]]
    same = [r for r in petsc_ok if not departs(r)]
    refused = [r for r in ran if r["krill_reason"].startswith("refused")]
    unavailable = [r for r in ran if r["krill_unavailable"]]
    have = [r for r in same if not r["krill_unavailable"]]
    missed = [r for r in same if not r["krill_converged"]]
    lines = ["# krill vs PETSc: iteration counts with preconditioners", "",
             f"b = A*1, x0 = 0, rtol {a.rtol:g} (||b - A x|| <= rtol ||b|| on both sides), "
             f"maxit {a.maxit}, GMRES restart {a.restart} (CGS2 on both sides); krill "
             "`krill solve --device cpu --threads 1`, PETSc 1 process (bench_petsc: right "
             "preconditioning for GMRES and BiCGStab, PCG with the unpreconditioned norm, "
             "ilu/icc with zero fill, natural ordering, no shift but in the shifted pairs: "
             "-pc_factor_shift_type positive_definite). Agreement: |krill - PETSc| "
             f"<= {AGREE:.0%} of PETSc's count ({AGREE_SHIFT:.0%} in the shifted pairs), both "
             "converged.", "",
             "## Summary", "",
             f"- pairs run: {len(ran)} on {len({r['matrix'] for r in ran})} systems; PETSc "
             f"converged in {len(petsc_ok)}, {len(petsc_ok) - len(same)} of them only by "
             "leaving the method (listed below)",
             f"- **same method, PETSc converged: iterations within {AGREE:.0%} in "
             f"{sum(r['agree'] for r in same)} of {len(same)} pairs**",
             f"- **krill converges wherever PETSc does (same method): "
             f"{'yes' if not missed else 'no'}** ({len(same) - len(missed)} of {len(same)})",
             f"- counting every pair where PETSc converged: {sum(r['agree'] for r in petsc_ok)} "
             f"of {len(petsc_ok)} within {AGREE:.0%}, krill converged in "
             f"{sum(r['krill_converged'] for r in petsc_ok)} of {len(petsc_ok)}",
             f"- krill refused {len(refused)} runs, {len(unavailable)} of them because this "
             "krill does not have the solver or preconditioner (a usage error), the others "
             "with a reported reason (e.g. a zero diagonal entry or pivot)"]
    if unavailable:
        lines.append(
            f"- leaving out the pairs whose method this krill does not have: "
            f"{sum(r['agree'] for r in have)} of {len(have)} within {AGREE:.0%}, krill "
            f"converged in {sum(r['krill_converged'] for r in have)} of {len(have)}")
    shifted = [r for r in same if r["shifted"]]
    lines.append(f"- of those, the shifted factorizations (cg + ic0, gmres + ilu0:shift <-> "
                 f"-pc_factor_shift_type positive_definite): within {AGREE_SHIFT:.0%} in "
                 f"{sum(r['agree'] for r in shifted)} of {len(shifted)} pairs, krill converged "
                 f"in {sum(r['krill_converged'] for r in shifted)}")
    lines += [f"- wall time {elapsed:.0f} s", ""]
    left = [r for r in petsc_ok if departs(r)]
    if left:
        lines += ["PETSc converged only by leaving the method (krill refuses these by "
                  "design):", ""]
        lines += [f"- {r['matrix']} {r['method']}: PETSc {r['petsc_iterations']} iterations "
                  f"({r['petsc_note']}); krill {r['krill_reason']}" for r in left]
        lines.append("")
    missed_have = [r for r in missed if not r["krill_unavailable"]]
    if missed_have:
        lines += ["PETSc converged with the same method, krill (which has it) did not:", ""]
        lines += [f"- {r['matrix']} {r['method']}: krill {r['krill_reason']}; PETSc "
                  f"{r['petsc_iterations']} iterations" for r in missed_have]
        lines.append("")
    if unavailable:
        methods_missing = {}
        for r in unavailable:
            methods_missing[r["method"].split(":")[0]] = \
                methods_missing.get(r["method"].split(":")[0], 0) + 1
        lines += ["Not available in this krill (krill refused the option): " +
                  ", ".join(f"{m} ({c} pairs)" for m, c in sorted(methods_missing.items())),
                  ""]
    disagree = [r for r in same if r["krill_converged"] and not r["agree"]]
    if disagree:
        lines += [f"Both converged, counts differ by more than {AGREE:.0%}:", ""]
        lines += [f"- {r['matrix']} {r['method']}: krill {r['krill_iterations']}, PETSc "
                  f"{r['petsc_iterations']} (ratio {fmt(r['ratio'], '.2f')})" for r in disagree]
        lines.append("")
    lines += ["## Table", "",
              "| matrix | n | nnz | method (krill ↔ PETSc) | krill its | PETSc its | ratio | "
              f"within {AGREE:.0%} ({AGREE_SHIFT:.0%} shifted) | both converged | notes |",
              "|---|---:|---:|---|---:|---:|---:|---|---|---|"]
    for r in ran:
        notes = []
        if not r["krill_converged"]:
            notes.append(f"krill: {r['krill_reason']}")
        if not r["petsc_converged"]:
            notes.append(f"PETSc: {r['petsc_reason']}" +
                         (f" ({r['petsc_note']})" if r["petsc_note"] else ""))
        lines.append(
            f"| {r['matrix']} | {r['n']} | {r['nnz']} | {r['method']} ↔ {r['petsc_method']} | "
            f"{fmt(r['krill_iterations'])} | {fmt(r['petsc_iterations'])} | "
            f"{fmt(r['ratio'], '.2f')} | {yes_no(r['agree'])} | "
            f"{yes_no(r['krill_converged'] and r['petsc_converged'])} | "
            f"{'; '.join(notes).replace('|', '/')} |")
    if skipped:
        lines += ["", "## Not run", ""] + [f"- {name}: {why}" for name, why in skipped]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "compare_petsc.md"), "w") as f:
        f.write(text)
    keys = ["matrix", "n", "nnz", "symmetric", "method", "petsc_method", "krill_iterations",
            "petsc_iterations", "ratio", "agree", "krill_converged", "petsc_converged",
            "krill_unavailable",
            "krill_reason", "petsc_reason", "petsc_note", "krill_relres", "petsc_relres",
            "krill_seconds", "petsc_seconds", "krill_cmd", "petsc_cmd"]
    with open(os.path.join(a.out, "compare_petsc.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(ran)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--krill", required=True, help="the krill command")
    ap.add_argument("--bench-solve", required=True, help="bench_solve (writes the dumps)")
    ap.add_argument("--petsc", required=True, help="bench_petsc")
    ap.add_argument("--out", required=True)
    ap.add_argument("--testdata", default=os.path.join(root, "..", "shared", "testdata"))
    ap.add_argument("--gen", default="elasticity3d:12,6,6 convdiff3d:20",
                    help="generated SPECs run beside the testdata (space-separated)")
    ap.add_argument("--bin-dir", default="/tmp/krill-compare-bin")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    ap.add_argument("--max-nnz", type=int, default=5_000_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--maxit", type=int, default=10000)
    ap.add_argument("--restart", type=int, default=30)
    ap.add_argument("--only", action="append", default=[],
                    help="run only this file name or SPEC (repeatable)")
    a = ap.parse_args()
    a.only = set(a.only)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.bin_dir, exist_ok=True)
    t0 = time.time()
    skipped = []
    systems = collect_systems(a, skipped)
    ready = []
    for s in systems:
        why = prepare(a, s)
        if why:
            skipped.append((s["name"], why))
        else:
            ready.append(s)
    tasks = [(s, m) for s in ready for m in methods(s["symmetric"], s["bs"])]
    print(f"compare_petsc: {len(ready)} systems, {len(tasks)} pairs, {a.jobs} at a time",
          flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        rows = list(pool.map(lambda t: compare_pair(a, *t), tasks))
    with open(os.path.join(a.out, "compare_petsc.json"), "w") as f:
        json.dump({"rows": rows, "skipped": skipped}, f, indent=1)
    print(report(a, rows, skipped, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
