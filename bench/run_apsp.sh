#!/usr/bin/env bash
# bench/run_apsp.sh - the APSP benchmarks (the blocked Floyd-Warshall paper's Tables 1, 3
# and 4 on this machine, the peers, the issue's targets met or not).
#
#   DEVICE=cpu|gpu bench/run_apsp.sh OUTDIR      (from anywhere; DEVICE default: gpu when
#                                                nvidia-smi finds one, else cpu)
#
# 1. configures BUILD_DIR if it has no build files yet and builds bench_minplus and
#    bench_apsp;
# 2. bench_minplus: the min-plus peak of the device for int32, float, double;
# 3. bench_apsp: every method of the device, weights WEIGHTS, n in SIZES, RUNS timed solves
#    after WARMUP, --paths (int32 with P at the largest n of each method); a method's next n
#    is skipped when its predicted solve time passes MAX_SECONDS (plain and dijkstra get
#    slow);
# 4. CPU: the same for the blocked methods on ONE thread at PER_CORE_SIZES (int32, float,
#    double), then the peers on the graphs step 3 wrote: SciPy shortest_path FW and D,
#    NetworkX floyd_warshall_numpy (n <= NX_MAX), one thread each, checked against krill's
#    distances (installs scipy and networkx with pip when missing, unless NO_INSTALL=1);
#    GPU: n = LARGE_SIZE for LARGE_METHODS (int32, one timed solve after a warm-up); the
#    GPU's peers are krill's plain method (one kernel per k: the pre-blocking baseline,
#    part of step 3) and the measured peak;
# 5. apsp_peers.py report: OUTDIR/apsp.md (printed last), beside OUTDIR/*.json, *.csv,
#    env.txt and logs/*.log. A step that fails or times out is reported and the script goes
#    on.
# About 5 minutes on an H100 (after the build) and 10-15 minutes on 2 CPU cores.
#
# Environment (defaults): BUILD_DIR (build), PYTHON (python3), THREADS (OpenMP's default),
# RUNS (3), WARMUP (1), WEIGHTS (int32,float), METHODS (every method of the device),
# SIZES (cpu 256,512,1024,2048; gpu 512,1024,2048,4096,8192,16384), MAX_SECONDS (cpu 15,
# gpu 8), PER_CORE_SIZES (1024,2048), PEER_MAX_SECONDS (60), NX_MAX (1024), LARGE_SIZE
# (32768; 0 skips), LARGE_METHODS (fw-a,fw-rec), STEP_LIMIT (1800 s), NO_INSTALL (0).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "[DEVICE=cpu|gpu] bench/run_apsp.sh OUTDIR" "$@"
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
PYTHON=${PYTHON:-python3}
DEVICE=${DEVICE:-auto}
if [ "$DEVICE" = auto ]; then
    DEVICE=cpu
    nvidia-smi -L >/dev/null 2>&1 && DEVICE=gpu
fi
case "$DEVICE" in cpu | gpu) ;; *) echo "run_apsp.sh: DEVICE=cpu|gpu, got $DEVICE" >&2; exit 2 ;; esac
RUNS=${RUNS:-3}
WARMUP=${WARMUP:-1}
WEIGHTS=${WEIGHTS:-int32,float}
LIMIT=${STEP_LIMIT:-1800}
if [ "$DEVICE" = gpu ]; then
    SIZES=${SIZES:-512,1024,2048,4096,8192,16384}
    MAX_SECONDS=${MAX_SECONDS:-8}
else
    SIZES=${SIZES:-256,512,1024,2048}
    MAX_SECONDS=${MAX_SECONDS:-15}
fi
PER_CORE_SIZES=${PER_CORE_SIZES:-1024,2048}
PEER_MAX_SECONDS=${PEER_MAX_SECONDS:-60}
NX_MAX=${NX_MAX:-1024}
LARGE_SIZE=${LARGE_SIZE:-32768}
LARGE_METHODS=${LARGE_METHODS:-fw-a,fw-rec}
THREADS_FLAG=()
[ -n "${THREADS:-}" ] && THREADS_FLAG=(--threads "$THREADS")
METHODS_FLAG=()
[ -n "${METHODS:-}" ] && METHODS_FLAG=(--methods "$METHODS")

if [ "$DEVICE" = cpu ] && [ "${NO_INSTALL:-0}" != 1 ] &&
    ! "$PYTHON" -c 'import scipy, numpy, networkx' 2>/dev/null; then
    run_step install-peers 900 "$PYTHON" -m pip install scipy numpy networkx
fi
{
    date -u
    uname -a
    echo "device: $DEVICE; cpus: $(nproc); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    grep -m1 'model name' /proc/cpuinfo
    if [ "$DEVICE" = gpu ]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
            --format=csv 2>&1
        nvcc --version 2>&1 | tail -n 1
    else
        "$PYTHON" -c 'import scipy, numpy, networkx; print("scipy", scipy.__version__, "numpy",
numpy.__version__, "networkx", networkx.__version__)' 2>&1
    fi
} >"$OUT/env.txt"
cat "$OUT/env.txt"

if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
    GENERATOR=()
    command -v ninja >/dev/null 2>&1 && GENERATOR=(-G Ninja)
    run_step configure 600 cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" \
        -DCMAKE_BUILD_TYPE=Release
fi
if ! run_step build 3600 cmake --build "$BUILD" -j "$(nproc)" --target bench_minplus bench_apsp
then
    print_step_summary
    exit 1
fi
MINPLUS=$BUILD/bench/bench_minplus
APSP=$BUILD/bench/bench_apsp
COMMAND="DEVICE=$DEVICE RUNS=$RUNS WARMUP=$WARMUP WEIGHTS=$WEIGHTS SIZES=$SIZES MAX_SECONDS=$MAX_SECONDS"

run_step minplus "$LIMIT" "$MINPLUS" --device "$DEVICE" "${THREADS_FLAG[@]}" \
    --json "$OUT/minplus.json" --csv "$OUT/minplus.csv"
WRITE=()
[ "$DEVICE" = cpu ] && WRITE=(--write-graph "$OUT/graphs" --write-dist "$OUT/dist")
run_step apsp "$LIMIT" "$APSP" --device "$DEVICE" "${THREADS_FLAG[@]}" "${METHODS_FLAG[@]}" \
    --sizes "$SIZES" --weights "$WEIGHTS" --runs "$RUNS" --warmup "$WARMUP" --paths \
    --max-seconds "$MAX_SECONDS" "${WRITE[@]}" --json "$OUT/apsp.json" --csv "$OUT/apsp.csv"
REPORT=(--device "$DEVICE" --minplus "$OUT/minplus.json" --apsp "$OUT/apsp.json")
if [ "$DEVICE" = cpu ]; then
    COMMAND="$COMMAND PER_CORE_SIZES=$PER_CORE_SIZES PEER_MAX_SECONDS=$PEER_MAX_SECONDS"
    run_step apsp-1thread "$LIMIT" env OMP_NUM_THREADS=1 "$APSP" --device cpu --threads 1 \
        --methods fw-a,fw-b,fw-rec --sizes "$PER_CORE_SIZES" --weights int32,float,double \
        --runs "$RUNS" --warmup "$WARMUP" --max-seconds "$MAX_SECONDS" \
        --json "$OUT/apsp_1thread.json" --csv "$OUT/apsp_1thread.csv"
    run_step peers "$LIMIT" env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
        "$PYTHON" "$ROOT/bench/apsp_peers.py" run --graphs "$OUT/graphs" --dist "$OUT/dist" \
        --runs "$RUNS" --max-seconds "$PEER_MAX_SECONDS" --nx-max "$NX_MAX" \
        --json "$OUT/peers.json"
    REPORT+=(--apsp1 "$OUT/apsp_1thread.json" --peers "$OUT/peers.json")
elif [ "$LARGE_SIZE" != 0 ]; then
    COMMAND="$COMMAND LARGE_SIZE=$LARGE_SIZE LARGE_METHODS=$LARGE_METHODS"
    run_step apsp-large "$LIMIT" "$APSP" --device gpu --methods "$LARGE_METHODS" \
        --sizes "$LARGE_SIZE" --weights int32 --runs 1 --warmup 1 --max-seconds 0 \
        --json "$OUT/apsp_large.json" --csv "$OUT/apsp_large.csv"
    REPORT+=(--apsp-large "$OUT/apsp_large.json")
fi
run_step report 300 "$PYTHON" "$ROOT/bench/apsp_peers.py" report "${REPORT[@]}" \
    --command "$COMMAND bench/run_apsp.sh OUTDIR" --out "$OUT/apsp.md"
echo
[ -f "$OUT/apsp.md" ] && cat "$OUT/apsp.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
