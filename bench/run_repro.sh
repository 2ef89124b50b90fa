#!/usr/bin/env bash
# bench/run_repro.sh - what the reproducible mode costs a whole solve: the same systems solved
# plain and with --repro S (bench_solve), side by side, as the issue asks: GMRES(30) and CG on
# elasticity3d and poisson3d at about 2 million rows on the GPU, and the CPU's overhead.
#
#   DEVICE=gpu bench/run_repro.sh OUTDIR
#   DEVICE=cpu THREADS=16 PROBLEMS="cg:poisson3d:64" bench/run_repro.sh OUTDIR
#
# Writes OUTDIR/repro.md (printed last), OUTDIR/plain.csv and OUTDIR/repro-S.csv. The ratio
# columns divide the reproducible run by the plain run of the same system: total solve time,
# and time per iteration (the iteration counts may differ a little: the two modes round
# differently). Environment (defaults): DEVICE (gpu), BUILD_DIR (build), THREADS (nproc, CPU
# only), RUNS (3), SLICES ("0 2": exact and S = 2), MAXIT (10000), PRECOND (none),
# PROBLEMS (cg:elasticity3d:160,64,64 gmres:elasticity3d:160,64,64 cg:poisson3d:128
# gmres:poisson3d:128), LIMIT (600 s a step).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "DEVICE=gpu|cpu bench/run_repro.sh OUTDIR   (from the repository root)" "$@"
DEVICE=${DEVICE:-gpu}
THREADS=${THREADS:-$(nproc)}
RUNS=${RUNS:-3}
SLICES=${SLICES:-0 2}
MAXIT=${MAXIT:-10000}
PRECOND=${PRECOND:-none}
LIMIT=${LIMIT:-600}
PROBLEMS=${PROBLEMS:-cg:elasticity3d:160,64,64 gmres:elasticity3d:160,64,64 cg:poisson3d:128 gmres:poisson3d:128}
mkdir -p "$OUT/logs"
SOLVE=$BUILD/bench/bench_solve
[ -x "$SOLVE" ] || run_step build 900 cmake --build "$BUILD" --target bench_solve
# shellcheck disable=SC2086
common=(--device "$DEVICE" --runs "$RUNS" --maxit "$MAXIT" --precond "$PRECOND")
[ "$DEVICE" = cpu ] && common+=(--threads "$THREADS")
for p in $PROBLEMS; do
    safe=$(safe_name "$p")
    run_step "plain-$safe" "$LIMIT" "$SOLVE" "${common[@]}" --csv "$OUT/plain-$safe.csv" "$p"
    for s in $SLICES; do
        run_step "repro$s-$safe" "$LIMIT" "$SOLVE" "${common[@]}" --repro "$s" \
            --csv "$OUT/repro-$s-$safe.csv" "$p"
    done
done
print_step_summary
python3 - "$OUT" "$DEVICE" "$SLICES" <<'PY' | tee "$OUT/repro.md"
import csv, glob, os, sys
out, device, slices = sys.argv[1], sys.argv[2], sys.argv[3].split()
def rows(pattern):
    found = {}
    for path in sorted(glob.glob(os.path.join(out, pattern))):
        for r in csv.DictReader(open(path)):
            found[(r["problem"], r["precond"])] = r
    return found
plain = rows("plain-*.csv")
print(f"### Reproducible solve vs plain ({device})\n")
print("Median of the timed runs (bench_solve); ratio = repro / plain. S = 0 is exact mode.\n")
print("| problem | precond | n | mode | iterations | solve s | ms / iteration | spmv s | ortho s | solve ratio | per-iteration ratio |")
print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
for key, p in plain.items():
    def line(mode, r, base):
        if r.get("ok") != "1":
            print(f"| {key[0]} | {key[1]} | {p['n']} | {mode} | FAILED: {r.get('message', '')} | | | | | | |")
            return
        t, it = float(r["t_median_s"]), int(r["iterations"])
        per = float(r["t_per_iter_s"])
        ratio = f"{t / float(base['t_median_s']):.2f}" if base else ""
        pratio = f"{per / float(base['t_per_iter_s']):.2f}" if base else ""
        print(f"| {key[0]} | {key[1]} | {r['n']} | {mode} | {it} | {t:.3f} | {1e3 * per:.3f} | "
              f"{float(r['spmv_s']):.3f} | {float(r['ortho_s']):.3f} | {ratio} | {pratio} |")
    line("plain", p, None)
    for s in slices:
        r = rows(f"repro-{s}-*.csv").get(key)
        if r is not None:
            line("exact" if s == "0" else f"S = {s}", r, p if p.get("ok") == "1" else None)
PY
