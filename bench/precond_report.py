#!/usr/bin/env python3
"""bench/precond_report.py - the time-to-solution table from what run_precond.sh leaves.

    precond_report.py DIR

Reads DIR/precond/*.json: bench_solve --json (krill, one result per preconditioner),
cupy_solve.py --json (CuPy or SciPy) and bench_petsc -json (PETSc; its pc / bs are mapped
back to krill's names: pbjacobi -bs B = bjacobi:B, ilu = ilu0, icc = ic0), and the failure records that
run_precond.sh writes for a step that left no result (timed out, crashed). Writes
DIR/precond.md and DIR/precond.csv: per problem and preconditioner, every library's
iterations, preconditioner build time, solve time, time per iteration and time to solution
(build + solve), and krill's time to solution over each peer's on the same device kind.
Standard library only.
"""
import csv
import glob
import json
import os
import sys

PETSC_PC = {"none": "none", "jacobi": "jacobi", "ilu": "ilu0", "icc": "ic0"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"precond_report.py: skipping {path}: {e}", file=sys.stderr)
        return None


def rows_of(doc):
    """Normalized rows: problem, precond, library label, side, numbers, note."""
    lib = doc.get("library", "?")
    if lib == "krill":
        dev = doc.get("device", "")
        side = "gpu" if dev.startswith("cuda") else "cpu"
        threads = doc.get("threads")
        label = "krill" if side == "gpu" else \
            f"krill ({threads} thread{'' if threads == 1 else 's'})"
        for r in doc.get("results", []):
            yield dict(r, library=label, side=side, peer=False,
                       note=r.get("message") or "")
        return
    if lib == "petsc":
        pc = doc.get("pc", "?")
        precond = f"bjacobi:{doc.get('bs')}" if pc == "pbjacobi" else PETSC_PC.get(pc, pc)
        if doc.get("precond"):                          # a failure record names it itself
            precond = doc["precond"]
        label = f"PETSc {doc.get('version', '')} (1 process)".replace("  ", " ")
        ok = doc.get("ok", doc.get("reason") not in (None, "SETUP_FAILED"))
        yield dict(doc, precond=precond, library=label, side="cpu", peer=True, ok=ok,
                   note=doc.get("message") or doc.get("note") or "")
        return
    side = "gpu" if lib == "cupy" else "cpu"
    label = {"cupy": "CuPy", "scipy": "SciPy"}.get(lib, lib)
    label += f" {doc['version']}" if doc.get("version") else ""
    yield dict(doc, library=label, side=side, peer=True, ok=doc.get("ok", True),
               reason=doc.get("reason") or ("converged" if doc.get("converged")
                                            else f"info {doc.get('info')}"),
               note=doc.get("message") or doc.get("precond_impl") or "")


def fmt(v, spec, missing="-"):
    return missing if v is None else format(v, spec)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    rows = []
    for path in sorted(glob.glob(os.path.join(out_dir, "precond", "*.json"))):
        doc = load(path)
        if doc:
            rows.extend(rows_of(doc))
    problems = list(dict.fromkeys(r.get("problem", "?") for r in rows))
    lines = ["## Time to solution with preconditioners", "",
             "b = A*1, x0 = 0, stop at ||b - A x|| <= 1e-8 ||b||, GMRES restart 30. setup: the "
             "preconditioner's build (median over the runs); solve: median whole-solve time; "
             "total = setup + solve (the matrix's own build and upload are not counted). "
             "krill / peer: krill's total over the peer's on the same kind of device "
             "(below 1: krill is faster).", ""]
    table = []
    for prob in problems:
        mine = [r for r in rows if r.get("problem") == prob]
        n = next((r.get("n") for r in mine if r.get("n")), None)
        lines += [f"### {prob}" + (f" ({n:,} rows)" if n else ""), "",
                  "| precond | library | iterations | converged | setup s | solve s | "
                  "ms / iteration | total s | krill / peer | note |",
                  "|---|---|---:|---|---:|---:|---:|---:|---:|---|"]
        preconds = list(dict.fromkeys(r.get("precond", "none") for r in
                                      sorted(mine, key=lambda r: r["peer"])))   # krill's order
        for pc in preconds:
            group = sorted((r for r in mine if r.get("precond", "none") == pc),
                           key=lambda r: (r["peer"], r["library"]))
            peers = [r for r in group if r["peer"] and r.get("ok") and r.get("converged")]
            for r in group:
                ok = r.get("ok", True)
                total = r.get("t_total_s") if ok else None
                ratios = []
                if not r["peer"] and ok and r.get("converged") and total:
                    for p in peers:
                        if p["side"] == r["side"] and p.get("t_total_s"):
                            ratios.append(f"{total / p['t_total_s']:.2f} vs "
                                          f"{p['library'].split()[0]}")
                per = r.get("t_per_iter_s")
                note = (r.get("note") or "") if not ok or r["peer"] else ""
                if ok and not r.get("converged"):
                    note = f"{r.get('reason', 'not converged')}; {note}".strip("; ")
                lines.append(
                    f"| {pc} | {r['library']} | {fmt(r.get('iterations') if ok else None, 'd')} "
                    f"| {'yes' if ok and r.get('converged') else 'no'} | "
                    f"{fmt(r.get('pc_setup_s') if ok else None, '.3f')} | "
                    f"{fmt(r.get('t_median_s') if ok else None, '.3f')} | "
                    f"{fmt(per * 1e3 if ok and per else None, '.3f')} | {fmt(total, '.3f')} | "
                    f"{'; '.join(ratios) or '-'} | "
                    f"{('FAILED: ' if not ok else '') + note.replace('|', '/')} |")
                table.append({"problem": prob, "precond": pc, "library": r["library"],
                              "side": r["side"], "ok": ok, "iterations": r.get("iterations"),
                              "converged": r.get("converged"), "pc_setup_s": r.get("pc_setup_s"),
                              "t_median_s": r.get("t_median_s"), "t_per_iter_s": per,
                              "t_total_s": total, "note": r.get("note", "")})
        lines.append("")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "precond.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "precond.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]) if table else ["problem"])
        w.writeheader()
        w.writerows(table)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
