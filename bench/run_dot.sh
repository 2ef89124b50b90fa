#!/usr/bin/env bash
# bench/run_dot.sh - the reproducible (Ozaki-scheme) dot product: accuracy against MPFR (the
# OzBLAS paper's Table 3, for DOT) and speed beside cuBLAS ddot and krill's plain dot
# (bench_dot; how it measures: the head of bench/bench_dot.c).
#
#   bench/run_dot.sh OUTDIR          (from the repository root)
#
# Configures BUILD_DIR if it has no build files yet, builds bench_dot, runs
#   1. accuracy: max relative error over TRIALS dot products of length N for each phi;
#      the GPU columns (cuBLAS ddot, krill on the GPU, GPU bits = CPU bits) when a GPU is here;
#   2. for each phi in PHI, speed on the GPU (skipped without one): n = 2^SIZES;
#   3. and speed on the CPU at the machine's thread count (THREADS): n = 2^CPU_SIZES;
# and writes OUTDIR/dot.md (the three tables, printed last), OUTDIR/dot_*.csv,
# OUTDIR/env.txt and OUTDIR/logs/*.log. A part that fails or times out is reported in
# dot.md and the script goes on.
#
# Environment (defaults): BUILD_DIR (build), N (1000), TRIALS (1000), PHIS (0,1,2,4,8),
# SLICES (2,3,4), SIZES (20,21,22,23,24,25,26), CPU_SIZES (SIZES), PHI (4,1: the speed
# inputs, one table per value: 4 is the paper's, 1 a milder range, nearer a solver's
# vectors; exact mode needs more slices the wider the range), REPS (11 batches of about
# 10 ms), WARMUP (5), THREADS (OpenMP's default),
# LIMIT (900 s per part), GPU (auto: 1 when nvidia-smi finds one, 0 skips the GPU part),
# CPU (1; 0 skips the CPU speed part).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "bench/run_dot.sh OUTDIR   (run from the repository root)" "$@"
N=${N:-1000}
TRIALS=${TRIALS:-1000}
PHIS=${PHIS:-0,1,2,4,8}
SLICES=${SLICES:-2,3,4}
SIZES=${SIZES:-20,21,22,23,24,25,26}
CPU_SIZES=${CPU_SIZES:-$SIZES}
PHI=${PHI:-4,1}
REPS=${REPS:-11}
WARMUP=${WARMUP:-5}
LIMIT=${LIMIT:-900}
THREADS_FLAG=()
[ -n "${THREADS:-}" ] && THREADS_FLAG=(--threads "$THREADS")
GPU=${GPU:-auto}
if [ "$GPU" = auto ]; then
    GPU=0
    nvidia-smi -L >/dev/null 2>&1 && GPU=1
fi
mkdir -p "$OUT/logs"
{
    date -u
    uname -a
    echo "cpus: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
    grep -m1 'model name' /proc/cpuinfo
    if [ "$GPU" = 1 ]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
            --format=csv 2>&1
        nvcc --version 2>&1 | tail -n 1
    fi
} >"$OUT/env.txt"

if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
    GENERATOR=()
    command -v ninja >/dev/null 2>&1 && GENERATOR=(-G Ninja)
    run_step configure 300 cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" \
        -DCMAKE_BUILD_TYPE=Release
fi
if ! run_step build 900 cmake --build "$BUILD" --target bench_dot; then
    print_step_summary
    exit 1
fi
BENCH="$BUILD/bench/bench_dot"

# part NAME TITLE MD: the markdown of a part, or why there is none.
part() {
    local name=$1 title=$2 md=$3
    echo "## $title"
    echo
    if [ -s "$md" ]; then
        cat "$md"
    else
        echo "No table: see logs/$name.log:"
        echo
        echo '```'
        grep -vE '^\$|^# load' "$OUT/logs/$name.log" 2>/dev/null | tail -n 8
        echo '```'
    fi
    echo
}

run_step accuracy "$LIMIT" "$BENCH" accuracy --n "$N" --trials "$TRIALS" --phis "$PHIS" \
    --slices "$SLICES" "${THREADS_FLAG[@]}" --md "$OUT/dot_accuracy.md" \
    --csv "$OUT/dot_accuracy.csv"
for phi in ${PHI//,/ }; do
    if [ "$GPU" = 1 ]; then
        run_step "speed_gpu_phi$phi" "$LIMIT" "$BENCH" speed --device gpu --sizes "$SIZES" \
            --phi "$phi" --reps "$REPS" --warmup "$WARMUP" \
            --md "$OUT/dot_speed_gpu_phi$phi.md" --csv "$OUT/dot_speed_gpu_phi$phi.csv"
    fi
    if [ "${CPU:-1}" = 1 ]; then
        run_step "speed_cpu_phi$phi" "$LIMIT" "$BENCH" speed --device cpu --sizes "$CPU_SIZES" \
            --phi "$phi" --reps "$REPS" --warmup "$WARMUP" "${THREADS_FLAG[@]}" \
            --md "$OUT/dot_speed_cpu_phi$phi.md" --csv "$OUT/dot_speed_cpu_phi$phi.csv"
    fi
done

{
    echo "# Reproducible dot product (Ozaki scheme): accuracy and speed"
    echo
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(grep -m1 'model name' /proc/cpuinfo \
        | sed 's/.*: //') ($(nproc) cpus)$([ "$GPU" = 1 ] && printf ' and %s' \
        "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)")."
    echo "Command: \`N=$N TRIALS=$TRIALS PHIS=$PHIS SLICES=$SLICES SIZES=$SIZES" \
        "CPU_SIZES=$CPU_SIZES PHI=$PHI REPS=$REPS bench/run_dot.sh OUTDIR\`"
    echo
    part accuracy "Accuracy (Table 3 for DOT)" "$OUT/dot_accuracy.md"
    [ "$GPU" = 1 ] || printf '## Speed on the GPU\n\nSkipped: no GPU here (nvidia-smi finds none).\n\n'
    for phi in ${PHI//,/ }; do
        [ "$GPU" = 1 ] && part "speed_gpu_phi$phi" "Speed on the GPU, phi = $phi" \
            "$OUT/dot_speed_gpu_phi$phi.md"
        [ "${CPU:-1}" = 1 ] && part "speed_cpu_phi$phi" "Speed on the CPU, phi = $phi" \
            "$OUT/dot_speed_cpu_phi$phi.md"
    done
} >"$OUT/dot.md"
echo
cat "$OUT/dot.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
