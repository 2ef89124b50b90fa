#!/usr/bin/env bash
# bench/run_trsv.sh - the ilu0 / ic0 apply on the GPU against cuSPARSE's cusparseSpSV on the
# same factors (bench_trsv; how it measures: the head of bench/bench_trsv.c).
#
#   bench/run_trsv.sh OUTDIR          (from the repository root)
#
# Configures BUILD_DIR with CUDA if it has no build files yet, builds bench_trsv, runs it on
# MATRICES and writes OUTDIR/trsv.md (the markdown table, printed last), OUTDIR/trsv.csv,
# OUTDIR/env.txt and OUTDIR/logs/*.log. Without a GPU it says so and exits 0, running nothing.
#
# Environment (defaults): BUILD_DIR (build), REPS (30), WARMUP (5), LIMIT (400 s for the
# runs), CPU (1: also time krill's CPU apply on 1 and all threads: bench_trsv --cpu),
# GROUP_SIZES (auto: bench_trsv --groups, the GPU solves' rows per group, e.g. auto,1,3),
# TESTDATA (.testdata or ../shared/testdata), MATRICES (poisson3d:128 convdiff3d:128
# elasticity3d:100,40,40, and the testdata matrices bcsstk15 and lap3D_7pt_n20 if present).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "bench/run_trsv.sh OUTDIR   (run from the repository root)" "$@"
REPS=${REPS:-30}
WARMUP=${WARMUP:-5}
LIMIT=${LIMIT:-400}
CPU_FLAG=()
[ "${CPU:-1}" = 1 ] && CPU_FLAG=(--cpu)
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "run_trsv.sh: skipped: no GPU here (nvidia-smi finds none); bench_trsv times GPU solves"
    exit 0
fi
find_testdata
REAL=""
if [ -n "$TESTDATA" ]; then
    for f in bcsstk15 lap3D_7pt_n20; do
        [ -f "$TESTDATA/mtx/$f.mtx" ] && REAL="$REAL $TESTDATA/mtx/$f.mtx"
    done
fi
MATRICES=${MATRICES:-poisson3d:128 convdiff3d:128 elasticity3d:100,40,40$REAL}
mkdir -p "$OUT/logs"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
        --format=csv 2>&1
    nvcc --version 2>&1 | tail -n 1
} >"$OUT/env.txt"

if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
    GENERATOR=()
    command -v ninja >/dev/null 2>&1 && GENERATOR=(-G Ninja)
    run_step configure 300 cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" \
        -DCMAKE_BUILD_TYPE=Release -DKRILL_WITH_CUDA=ON
fi
if ! run_step build 600 cmake --build "$BUILD" --target bench_trsv; then
    print_step_summary
    exit 1
fi
# shellcheck disable=SC2086
run_step trsv "$LIMIT" "$BUILD/bench/bench_trsv" --reps "$REPS" --warmup "$WARMUP" \
    --groups "${GROUP_SIZES:-auto}" "${CPU_FLAG[@]}" --md "$OUT/trsv.md" --csv "$OUT/trsv.csv" $MATRICES
echo
grep -vE '^\$|^# load' "$OUT/logs/trsv.log" 2>/dev/null
echo
[ -f "$OUT/trsv.md" ] && cat "$OUT/trsv.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
