#!/usr/bin/env python3
"""bench/report.py - markdown tables from the JSON that run_cpu.sh / run_gpu.sh leave.

    report.py DIR [--out DIR/summary.md]

Reads DIR/spmv_*.json (bench_spmv --json) and DIR/solve/*.json (bench_solve --json,
cupy_solve.py --json, bench_petsc -json) and prints:
  - SpMV: per matrix and format, median time, GB/s, GFLOP/s, time / cuSPARSE time;
  - solves: per problem, every library side by side (iterations, relative residual, solve
    time, time per iteration) and the ratio of krill's time per iteration to each peer's
    on the same device kind, with the issue's targets (GPU CG <= 0.6 x CuPy; CPU <= 1.0 x
    PETSc).
Standard library only, so it runs wherever the benchmarks ran.
"""
import argparse
import glob
import json
import os
import sys

TARGETS = {("gpu", "cupy", "cg"): 0.6, ("cpu", "petsc", "cg"): 1.0,
           ("cpu", "petsc", "gmres"): 1.0}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"report.py: skipping {path}: {e}", file=sys.stderr)
        return None


def fmt(v, spec, missing="-"):
    return missing if v is None else format(v, spec)


def spmv_tables(paths):
    lines = []
    for path in paths:
        doc = load(path)
        if not doc:
            continue
        lines += [f"### SpMV: {doc.get('device', '?')} ({os.path.basename(path)})", "",
                  f"clock: {doc.get('clock')}; threads: {doc.get('threads')}; working sets "
                  f"under {doc.get('flush_bytes', 0) / 2**20:.0f} MiB are replicated and "
                  "rotated", "",
                  "| matrix | rows | nnz | format | variant | median µs | GB/s | GFLOP/s | "
                  "time / cuSPARSE | check |",
                  "|---|---:|---:|---|---|---:|---:|---:|---:|---|"]
        for r in doc.get("results", []):
            t = r.get("t_median_s")
            check = "ok" if r.get("ok") else (r.get("message") or "failed")
            lines.append(
                f"| {r['matrix']} | {r['rows']} | {r['nnz']} | {r['format']} | "
                f"{r.get('variant', '-')} | {fmt(t and t * 1e6, '.1f')} | "
                f"{fmt(r.get('gb_per_s'), '.1f')} | {fmt(r.get('gflop_per_s'), '.2f')} | "
                f"{fmt(r.get('time_vs_cusparse'), '.3f')} | {check} |")
        lines.append("")
    return lines


def solve_rows(paths):
    """One dict per (problem, library run): side, library label, numbers."""
    rows = []
    for path in paths:
        doc = load(path)
        if not doc:
            continue
        if doc.get("library") == "krill":
            dev = doc.get("device", "")
            side = "gpu" if dev.startswith("cuda") else "cpu"
            threads = doc.get("threads")
            label = "krill" if side == "gpu" else \
                f"krill ({threads} thread{'' if threads == 1 else 's'})"
            for r in doc.get("results", []):
                rows.append({"problem": r["problem"], "side": side, "library": "krill",
                             "label": label, "solver": r.get("solver"), **r,
                             "note": r.get("message") or ""})
        else:
            lib = doc.get("library", "?")
            side = "gpu" if lib == "cupy" else "cpu"
            label = f"{lib} {doc.get('version', '')}".strip()
            if lib == "petsc":
                label += " (1 process"
                label += f", {doc['orthogonalization']})" if doc.get("solver") == "gmres" \
                    else ")"
            elif lib == "scipy":
                label += " (1 process)"
            rows.append({"side": side, "label": label, **doc, "ok": True, "note": ""})
    return rows


def solve_tables(rows):
    lines = []
    problems = []
    for r in rows:
        if r.get("problem") not in problems:
            problems.append(r.get("problem"))
    for prob in problems:
        group = [r for r in rows if r.get("problem") == prob]
        lines += [f"### Solve: {prob}", "",
                  "| side | library | iterations | converged | relres | solve s (median) | "
                  "solve s (min) | ms / iteration (median) |",
                  "|---|---|---:|---|---:|---:|---:|---:|"]
        for r in sorted(group, key=lambda r: (r["side"], r["library"] != "krill")):
            if not r.get("ok"):
                lines.append(f"| {r['side']} | {r['label']} | failed: {r['note']} | | | | | |")
                continue
            per = r.get("t_per_iter_s")
            if r.get("converged"):
                conv = "yes"
            elif r["library"] == "krill":
                conv = r.get("reason", "no")
            else:
                conv = f"no ({r.get('reason', 'info ' + str(r.get('info')))})"
            lines.append(
                f"| {r['side']} | {r['label']} | {r.get('iterations')} | {conv} | "
                f"{fmt(r.get('relres'), '.2e')} | {fmt(r.get('t_median_s'), '.3f')} | "
                f"{fmt(r.get('t_min_s'), '.3f')} | {fmt(per and per * 1e3, '.3f')} |")
        lines.append("")
        ratio_lines = []
        for k in (r for r in group if r["library"] == "krill" and r.get("ok")):
            for p in (r for r in group if r["library"] != "krill" and r["side"] == k["side"]):
                if not k.get("t_per_iter_s") or not p.get("t_per_iter_s"):
                    continue
                ratio = k["t_per_iter_s"] / p["t_per_iter_s"]
                target = TARGETS.get((k["side"], p["library"], k.get("solver")))
                verdict = "" if target is None else \
                    f" (target <= {target}: {'met' if ratio <= target else 'NOT met'})"
                ratio_lines.append(f"- {k['label']} / {p['label']}: **{ratio:.3f}**{verdict}")
        if ratio_lines:
            lines += ["time per iteration, krill / peer:", ""] + ratio_lines + [""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--out", help="markdown file (default DIR/summary.md)")
    a = ap.parse_args()
    lines = ["## Results", ""]
    lines += spmv_tables(sorted(glob.glob(os.path.join(a.dir, "spmv_*.json"))))
    lines += solve_tables(solve_rows(sorted(glob.glob(os.path.join(a.dir, "solve", "*.json")))))
    text = "\n".join(lines) + "\n"
    out = a.out or os.path.join(a.dir, "summary.md")
    with open(out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
