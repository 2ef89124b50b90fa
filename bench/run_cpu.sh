#!/usr/bin/env bash
# bench/run_cpu.sh - krill's solvers on the CPU beside PETSc (1 process) and SciPy.
#
#   bench/run_cpu.sh [OUTDIR]        (default OUTDIR: BUILD_DIR/results-cpu)
#
# 1. installs what is missing (unless NO_INSTALL=1): petsc-dev through apt-get, scipy and
#    numpy through pip; configures and builds bench_solve, bench_spmv and bench_petsc;
# 2. for each problem: bench_solve --no-solve --write-bin (the binary dump), then on that
#    same system krill at THREADS threads and at 1 thread, PETSc KSP (1 MPI process,
#    PCNONE, CG or GMRES(restart) with CGS2), SciPy cg / gmres (cupy_solve.py --backend scipy);
# 3. bench_spmv on the CPU (CSR) for the solve matrices;
# 4. report.py: OUTDIR/summary.md, printed last.
# PETSc and SciPy run with OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1: one process, one
# thread; krill is reported at 1 thread and at all threads beside them.
#
# Environment (defaults): BUILD_DIR (build-bench), BIN_DIR (/tmp/krill-bench-bin), PYTHON
# (python3), THREADS (nproc), RUNS (3), RUNS_GMRES (RUNS), RTOL (1e-8), RESTART (30),
# MAXIT_CG (10000), MAXIT_GMRES (10000), PROBLEMS ("cg:poisson3d:128 gmres:convdiff3d:128"),
# STEP_LIMIT (3600 s), SPMV (1: run step 3), NO_INSTALL (0).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-build-bench}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT=${1:-$BUILD/results-cpu}
BIN_DIR=${BIN_DIR:-/tmp/krill-bench-bin}
PYTHON=${PYTHON:-python3}
THREADS=${THREADS:-$(nproc)}
RUNS=${RUNS:-3}
RTOL=${RTOL:-1e-8}
RESTART=${RESTART:-30}
MAXIT_CG=${MAXIT_CG:-10000}
MAXIT_GMRES=${MAXIT_GMRES:-10000}
PROBLEMS=${PROBLEMS:-cg:poisson3d:128 gmres:convdiff3d:128}
LIMIT=${STEP_LIMIT:-3600}
mkdir -p "$OUT/logs" "$OUT/solve" "$BIN_DIR"
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
T_START=$(date +%s)

if [ "${NO_INSTALL:-0}" != 1 ]; then
    if ! pkg-config --exists PETSc 2>/dev/null; then
        run_step install-petsc 1800 env DEBIAN_FRONTEND=noninteractive apt-get -y install petsc-dev
    fi
    if ! "$PYTHON" -c 'import scipy, numpy' 2>/dev/null; then
        run_step install-scipy 900 "$PYTHON" -m pip install scipy numpy
    fi
fi
{
    date -u
    grep -m1 'model name' /proc/cpuinfo
    echo "cores: $(nproc); krill threads: $THREADS; load at start: $(cut -d" " -f1-3 /proc/loadavg)"
    pkg-config --modversion PETSc 2>&1 | sed 's/^/PETSc /'
    "$PYTHON" -c 'import scipy, numpy; print("scipy", scipy.__version__, "numpy", numpy.__version__)' 2>&1
} >"$OUT/env.txt"
cat "$OUT/env.txt"

run_step configure 600 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DKRILL_BUILD_TESTS=OFF
run_step build 3600 cmake --build "$BUILD" -j "$(nproc)" --target bench_solve bench_spmv
[ -f "$BUILD/build.ninja" ] && grep -q bench_petsc "$BUILD/build.ninja" &&
    run_step build-petsc 600 cmake --build "$BUILD" --target bench_petsc
SOLVE=$BUILD/bench/bench_solve
PETSC=$BUILD/bench/bench_petsc
ONE=(env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1)

for prob in $PROBLEMS; do
    solver=${prob%%:*}
    matrix=${prob#*:}
    safe=$(safe_name "$matrix")
    maxit=$MAXIT_CG
    runs=$RUNS
    if [ "$solver" = gmres ]; then
        maxit=$MAXIT_GMRES
        runs=${RUNS_GMRES:-$RUNS}
    fi
    common=(--rtol "$RTOL" --restart "$RESTART" --maxit "$maxit" --runs "$runs")
    run_step "dump-$safe" 600 "$SOLVE" --device cpu --no-solve --write-bin "$BIN_DIR" "$prob"
    for t in $(printf '%s\n' "$THREADS" 1 | awk '!seen[$0]++'); do
        run_step "krill-cpu-t$t-$solver-$safe" "$LIMIT" env OMP_NUM_THREADS="$t" "$SOLVE" \
            --device cpu --threads "$t" "${common[@]}" \
            --json "$OUT/solve/krill_cpu_t${t}_${solver}_$safe.json" "$prob"
    done
    if [ ! -f "$BIN_DIR/$safe.A.bin" ]; then
        echo "[skip]   peers of $prob: no dump $BIN_DIR/$safe.A.bin"
        continue
    fi
    if [ -x "$PETSC" ]; then
        run_step "petsc-$solver-$safe" "$LIMIT" "${ONE[@]}" "$PETSC" -A "$BIN_DIR/$safe.A.bin" \
            -b "$BIN_DIR/$safe.b.bin" -solver "$solver" -rtol "$RTOL" -restart "$RESTART" \
            -maxit "$maxit" -runs "$runs" -problem "$prob" \
            -json "$OUT/solve/petsc_${solver}_$safe.json"
    else
        echo "[skip]   petsc-$solver-$safe: bench_petsc was not built (PETSc or MPI not found)"
    fi
    run_step "scipy-$solver-$safe" "$LIMIT" "${ONE[@]}" "$PYTHON" "$ROOT/bench/cupy_solve.py" \
        --backend scipy --A "$BIN_DIR/$safe.A.bin" --b "$BIN_DIR/$safe.b.bin" \
        --solver "$solver" --rtol "$RTOL" --restart "$RESTART" --maxit "$maxit" \
        --runs "$runs" --problem "$prob" --json "$OUT/solve/scipy_${solver}_$safe.json"
done

if [ "${SPMV:-1}" = 1 ]; then
    spmv_mats=()
    for prob in $PROBLEMS; do spmv_mats+=("${prob#*:}"); done
    run_step spmv-cpu "$LIMIT" env OMP_NUM_THREADS="$THREADS" "$BUILD/bench/bench_spmv" \
        --device cpu --threads "$THREADS" --csv "$OUT/spmv_cpu.csv" \
        --json "$OUT/spmv_cpu.json" "${spmv_mats[@]}"
fi

run_step report 60 "$PYTHON" "$ROOT/bench/report.py" "$OUT"
echo
echo "================ krill CPU benchmarks: summary ($(($(date +%s) - T_START)) s) ================"
[ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
