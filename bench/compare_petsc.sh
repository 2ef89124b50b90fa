#!/usr/bin/env bash
# bench/compare_petsc.sh - the issue's external check: krill's preconditioned solvers and
# PETSc's on the same systems, iteration counts side by side.
#
#   bench/compare_petsc.sh [OUTDIR]        (default OUTDIR: BUILD_DIR/results-compare)
#
# 1. installs petsc-dev through apt-get when pkg-config does not find PETSc (unless
#    NO_INSTALL=1); configures and builds krill, bench_solve and bench_petsc in BUILD_DIR;
# 2. compare_petsc.py: every square real matrix of TESTDATA/mtx (pattern-only, complex and
#    rectangular files are listed as not run) and the generated SPECs in GEN, b = A*1,
#    x0 = 0, rtol 1e-8, maxit 10000, restart 30; gmres + {none, jacobi, ilu0}, cg +
#    {none, jacobi, ic0:noshift} on symmetric matrices, bicgstab + {jacobi, ilu0}, bjacobi:B
#    where the matrix has a node block structure, and the shifted factorizations (issue 18)
#    cg + ic0 / gmres + ilu0:shift against PETSc's -pc_factor_shift_type positive_definite
#    (within 25% is their target); krill on one CPU thread, PETSc one process;
#    every run capped at TIMEOUT seconds; matrices above MAX_NNZ entries are skipped.
# Writes OUTDIR/compare_petsc.md (summary and table, printed last), OUTDIR/compare_petsc.csv,
# OUTDIR/compare_petsc.json (every run with its command line), OUTDIR/logs/*.log and
# OUTDIR/env.txt. About 20-40 minutes on 2 cores (JOBS=2), mostly the systems that neither
# side solves (10000 iterations each).
#
# Environment (defaults): BUILD_DIR (build-bench), PYTHON (python3), TESTDATA
# (ROOT/../shared/testdata), GEN ("elasticity3d:12,6,6 convdiff3d:20"), BIN_DIR
# (/tmp/krill-compare-bin), JOBS (nproc), TIMEOUT (120), MAX_NNZ (5000000), RTOL (1e-8),
# MAXIT (10000), RESTART (30), STEP_LIMIT (7200), NO_INSTALL (0).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-build-bench}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT=${1:-$BUILD/results-compare}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT/logs"
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
T_START=$(date +%s)

petsc_setup "$OUT"

if [ ! -f "$BUILD/build.ninja" ]; then
    run_step configure 600 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DKRILL_BUILD_TESTS=OFF
fi
run_step build 3600 cmake --build "$BUILD" -j "$(nproc)" --target krill_cli bench_solve bench_petsc
for exe in apps/krill bench/bench_solve bench/bench_petsc; do
    if [ ! -x "$BUILD/$exe" ]; then
        echo "compare_petsc.sh: $BUILD/$exe was not built (no PETSc or MPI for bench_petsc?)" >&2
        exit 1
    fi
done

run_step compare "${STEP_LIMIT:-7200}" "$PYTHON" "$ROOT/bench/compare_petsc.py" \
    --krill "$BUILD/apps/krill" --bench-solve "$BUILD/bench/bench_solve" \
    --petsc "$BUILD/bench/bench_petsc" --out "$OUT" \
    --testdata "${TESTDATA:-$ROOT/../shared/testdata}" \
    --gen "${GEN:-elasticity3d:12,6,6 convdiff3d:20}" \
    --bin-dir "${BIN_DIR:-/tmp/krill-compare-bin}" --jobs "${JOBS:-$(nproc)}" \
    --timeout "${TIMEOUT:-120}" --max-nnz "${MAX_NNZ:-5000000}" --rtol "${RTOL:-1e-8}" \
    --maxit "${MAXIT:-10000}" --restart "${RESTART:-30}"
echo
echo "================ krill vs PETSc ($(($(date +%s) - T_START)) s) ================"
[ -f "$OUT/compare_petsc.md" ] && sed -n '1,/^## Table/p' "$OUT/compare_petsc.md"
echo "(full table: $OUT/compare_petsc.md)"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
