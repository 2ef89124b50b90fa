#!/usr/bin/env bash
# bench/run_formats.sh - every sparse format side by side (issue 3), on the GPU or the CPU.
#
#   bench/run_formats.sh OUTDIR      (from the repository root, after the build)
#
# 1. bench_spmv with every format and CSR kernel variant (and cuSPARSE and `auto` on the GPU)
#    on the six matrices of the SpMV paper (Table 2, its sizes), poisson3d:160, elasticity3d
#    with ~2 million rows, and the larger testdata matrices;
# 2. bench_gmres_formats: GMRES(30), at most 1000 iterations, with every format, the time
#    split into build / transfer / SpMV / other (the RBP paper's Figure 8);
# 3. formats_report.py: OUTDIR/formats.md (tables, targets met or not) and OUTDIR/formats.svg
#    (GFLOP/s per matrix and format: the SpMV paper's Figures 3 and 7 on this hardware).
#
# Environment (defaults): BUILD_DIR (build), DEVICE (gpu if nvidia-smi works, else cpu),
# PYTHON (python3), TESTDATA (.testdata or ../shared/testdata), FORMATS (device-dependent
# list below), MATRICES (the list above), GMRES_MATRICES (elasticity3d:100,40,40
# poisson3d:128 convdiff3d:128), GMRES_FORMATS (every krill format), SPMV_LIMIT (420 s).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "bench/run_formats.sh OUTDIR   (run from the repository root after the build)" "$@"
PYTHON=${PYTHON:-python3}
if [ -z "${DEVICE:-}" ]; then
    DEVICE=cpu
    nvidia-smi -L >/dev/null 2>&1 && DEVICE=gpu
fi
find_testdata
KRILL_FORMATS=csr,ell,ellr,rbp-csr,rbp-ell,rbp-ellr,segscan
# auto as the SpMV tables judge it: its SpMV-only choice (over 10^15 SpMVs no build counts;
# plain `auto` weighs the builds against one GMRES(30) cycle, doc/auto.md)
AUTO=auto:spmvs=1000000000000000
if [ "$DEVICE" = gpu ]; then
    DEFAULT_FORMATS=$KRILL_FORMATS,csr:scalar,csr:vector,csr:block,csr:cyclic,csr:warp,cusparse,$AUTO
else
    DEFAULT_FORMATS=$KRILL_FORMATS,$AUTO
fi
FORMATS=${FORMATS:-$DEFAULT_FORMATS}
LARGE=""
if [ -n "$TESTDATA" ]; then
    for f in pyamg_helmholtz_2D bcsstk15 delaunay_n15 bcsstk13 speaker107k; do
        [ -f "$TESTDATA/mtx/$f.mtx" ] && LARGE="$LARGE $TESTDATA/mtx/$f.mtx"
    done
fi
MATRICES=${MATRICES:-band1 band3 band101 rand1 rand100 band1x poisson3d:160 elasticity3d:160,64,64$LARGE}
GMRES_MATRICES=${GMRES_MATRICES:-elasticity3d:100,40,40 poisson3d:128 convdiff3d:128}
GMRES_FORMATS=${GMRES_FORMATS:-$KRILL_FORMATS}
mkdir -p "$OUT/logs"
T_START=$(date +%s)

SPMV=$BUILD/bench/bench_spmv
GMRES=$BUILD/bench/bench_gmres_formats
if [ ! -x "$SPMV" ] || [ ! -x "$GMRES" ]; then
    run_step build 400 cmake --build "$BUILD" --target bench_spmv bench_gmres_formats
fi

# shellcheck disable=SC2086
run_step "spmv-$DEVICE" "${SPMV_LIMIT:-420}" "$SPMV" --device "$DEVICE" --formats "$FORMATS" \
    --csv "$OUT/formats_spmv_$DEVICE.csv" --json "$OUT/formats_spmv_$DEVICE.json" $MATRICES
# shellcheck disable=SC2086
run_step "gmres-$DEVICE" 300 "$GMRES" --device "$DEVICE" --formats "$GMRES_FORMATS" \
    --csv "$OUT/formats_gmres_$DEVICE.csv" --json "$OUT/formats_gmres_$DEVICE.json" \
    $GMRES_MATRICES
run_step report 60 "$PYTHON" "$ROOT/bench/formats_report.py" \
    --spmv "$OUT/formats_spmv_$DEVICE.json" --gmres "$OUT/formats_gmres_$DEVICE.json" \
    --md "$OUT/formats.md" --svg "$OUT/formats.svg"
echo
echo "======== krill formats benchmark on $DEVICE: ($(($(date +%s) - T_START)) s) ========"
grep -vE '^\$|^# load' "$OUT/logs/spmv-$DEVICE.log" 2>/dev/null | head -n 200
grep -vE '^\$|^# load' "$OUT/logs/gmres-$DEVICE.log" 2>/dev/null | head -n 60
[ -f "$OUT/formats.md" ] && grep -A12 '^Targets' "$OUT/formats.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
