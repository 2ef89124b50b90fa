#!/usr/bin/env bash
# bench/run_gpu.sh - every GPU benchmark of the issue in one go, peers side by side.
#
#   bench/run_gpu.sh OUTDIR          (from the repository root, after the build)
#
# 1. bench_spmv: krill's CSR kernels and cuSPARSE on the six paper matrices, poisson3d:160 and
#    elasticity3d:160,64,64 (2,028,000 rows): time, GB/s, ratio to cuSPARSE.
# 2. for each solve problem: bench_solve --no-solve --write-bin (the binary dump), then
#    bench_solve on the GPU and cupy_solve.py (CuPy cg / gmres) on the same dump.
# 3. report.py: OUTDIR/summary.md, printed last.
# Writes OUTDIR/spmv_gpu.{csv,json}, OUTDIR/solve/*.json, OUTDIR/logs/*.log, OUTDIR/env.txt.
# Every step has a time limit; a failed step is reported and the next one runs.
#
# Environment (defaults): BUILD_DIR (build), PYTHON (python3), BIN_DIR (/tmp/krill-bench-bin,
# kept out of OUTDIR: the dumps are ~200 MB each), RUNS (3), RTOL (1e-8), RESTART (30),
# MAXIT_CG (10000), MAXIT_GMRES (10000), SPMV_FORMATS (csr,csr:scalar,csr:vector,cusparse),
# SPMV_MATRICES (the list above), PROBLEMS ("cg:poisson3d:128 gmres:convdiff3d:128").
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "bench/run_gpu.sh OUTDIR   (run from the repository root after the build)" "$@"
PYTHON=${PYTHON:-python3}
BIN_DIR=${BIN_DIR:-/tmp/krill-bench-bin}
RUNS=${RUNS:-3}
RTOL=${RTOL:-1e-8}
RESTART=${RESTART:-30}
MAXIT_CG=${MAXIT_CG:-10000}
MAXIT_GMRES=${MAXIT_GMRES:-10000}
SPMV_FORMATS=${SPMV_FORMATS:-csr,csr:scalar,csr:vector,cusparse}
SPMV_MATRICES=${SPMV_MATRICES:-band1 band3 band101 rand1 rand100 band1x poisson3d:160 elasticity3d:160,64,64}
PROBLEMS=${PROBLEMS:-cg:poisson3d:128 gmres:convdiff3d:128}
mkdir -p "$OUT/logs" "$OUT/solve" "$BIN_DIR"
T_START=$(date +%s)

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
        --format=csv 2>&1
    "$PYTHON" -c 'import cupy, scipy, numpy; print("cupy", cupy.__version__, "scipy",
scipy.__version__, "numpy", numpy.__version__)' 2>&1
    nproc
} >"$OUT/env.txt"
head -n 3 "$OUT/env.txt" | tail -n 2

SPMV=$BUILD/bench/bench_spmv
SOLVE=$BUILD/bench/bench_solve
if [ ! -x "$SPMV" ] || [ ! -x "$SOLVE" ]; then
    run_step build 400 cmake --build "$BUILD" --target bench_spmv bench_solve
fi

# shellcheck disable=SC2086
run_step spmv-gpu 240 "$SPMV" --device gpu --formats "$SPMV_FORMATS" \
    --csv "$OUT/spmv_gpu.csv" --json "$OUT/spmv_gpu.json" $SPMV_MATRICES

for prob in $PROBLEMS; do
    solver=${prob%%:*}
    matrix=${prob#*:}
    safe=$(safe_name "$matrix")
    maxit=$MAXIT_CG
    [ "$solver" = gmres ] && maxit=$MAXIT_GMRES
    run_step "dump-$safe" 120 "$SOLVE" --device cpu --no-solve --write-bin "$BIN_DIR" "$prob"
    run_step "krill-gpu-$solver-$safe" 150 "$SOLVE" --device gpu --runs "$RUNS" \
        --rtol "$RTOL" --restart "$RESTART" --maxit "$maxit" \
        --json "$OUT/solve/krill_gpu_${solver}_$safe.json" "$prob"
    if [ -f "$BIN_DIR/$safe.A.bin" ]; then
        run_step "cupy-$solver-$safe" 150 "$PYTHON" "$ROOT/bench/cupy_solve.py" \
            --backend cupy --A "$BIN_DIR/$safe.A.bin" --b "$BIN_DIR/$safe.b.bin" \
            --solver "$solver" --rtol "$RTOL" --restart "$RESTART" --maxit "$maxit" \
            --runs "$RUNS" --problem "$prob" --json "$OUT/solve/cupy_${solver}_$safe.json"
    else
        echo "[skip]   cupy-$solver-$safe: no dump $BIN_DIR/$safe.A.bin"
    fi
done

run_step report 60 "$PYTHON" "$ROOT/bench/report.py" "$OUT"
echo
echo "================ krill GPU benchmarks: summary ($(($(date +%s) - T_START)) s) ================"
grep -E '^#|FAILED' "$OUT/logs/spmv-gpu.log" 2>/dev/null | head -n 20
[ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
