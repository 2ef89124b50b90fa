#!/usr/bin/env bash
# bench/run_precond.sh - time to solution with preconditioners, krill beside its peers.
#
#   DEVICE=gpu bench/run_precond.sh OUTDIR     (CuPy beside krill; about 4-6 minutes on an H100)
#   DEVICE=cpu bench/run_precond.sh OUTDIR     (PETSc beside krill; PETSc runs one process)
#
# Problems (the issue's): CG on elasticity3d:160,64,64 (2,028,000 rows, ~165 million
# nonzeros) with jacobi, bjacobi:3 and ic0; GMRES(30) on the nonsymmetric convdiff3d:128
# (2,097,152 rows) with jacobi and ilu0. b = A*1, x0 = 0, rtol 1e-8.
# 1. bench_solve --no-solve --write-bin: the binary dump of each system, so that every
#    library solves the same bits;
# 2. krill: bench_solve --precond LIST on the device (on the CPU at THREADS threads and at
#    1 thread): preconditioner build, iterations, solve time, time per iteration;
# 3. the peer on the same dump, one call per preconditioner:
#    gpu: cupy_solve.py (jacobi: element-wise; bjacobi:3: inverted blocks as a CSR matrix;
#         ilu0: cupyx spilu(fill_factor=1), cuSPARSE ILU(0); ic0: the same ILU(0), which on
#         a symmetric matrix is the IC(0) preconditioner: CuPy has no incomplete Cholesky);
#    cpu: bench_petsc (jacobi, pbjacobi -bs 3, icc and ilu with zero fill and natural
#         ordering), 1 process, 1 thread;
# 4. precond_report.py: OUTDIR/precond.md (printed last) and OUTDIR/precond.csv.
# A preconditioner one side does not have or refuses is a FAILED row with its message; the
# next step runs. CuPy's ILU(0) copies the factor to the host to split it and analyses each
# triangular solve at every apply, so on the 2-million-row systems it runs once
# (PEER_ILU_RUNS) and may still hit its step limit (PEER_ILU_LIMIT): the report then says so.
#
# Environment (defaults): DEVICE (gpu), BUILD_DIR (build), BIN_DIR (/tmp/krill-bench-bin),
# PYTHON (python3), RUNS (2 on the GPU, 1 on the CPU), RTOL (1e-8), RESTART (30), MAXIT
# (10000), CG_PROBLEM (elasticity3d:160,64,64), CG_PRECONDS (jacobi,bjacobi:3,ic0),
# GMRES_PROBLEM (convdiff3d:128), GMRES_PRECONDS (jacobi,ilu0), THREADS (nproc),
# KRILL_THREADS (on the CPU: "THREADS 1"), STEP_LIMIT (150 on the GPU, 1800 on the CPU),
# PEER_ILU_LIMIT (120 on the GPU), PEER_ILU_RUNS (1 on the GPU).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
bench_args "DEVICE=gpu|cpu bench/run_precond.sh OUTDIR   (from the repository root)" "$@"
DEVICE=${DEVICE:-gpu}
case "$DEVICE" in gpu | cpu) ;; *) echo "DEVICE must be gpu or cpu, not $DEVICE" >&2; exit 2 ;; esac
BIN_DIR=${BIN_DIR:-/tmp/krill-bench-bin}
PYTHON=${PYTHON:-python3}
THREADS=${THREADS:-$(nproc)}
if [ "$DEVICE" = gpu ]; then
    RUNS=${RUNS:-2}
    LIMIT=${STEP_LIMIT:-150}
else
    RUNS=${RUNS:-1}
    LIMIT=${STEP_LIMIT:-1800}
fi
ILU_LIMIT=${PEER_ILU_LIMIT:-$LIMIT}
ILU_RUNS=${PEER_ILU_RUNS:-$RUNS}
if [ "$DEVICE" = gpu ]; then
    ILU_LIMIT=${PEER_ILU_LIMIT:-120}
    ILU_RUNS=${PEER_ILU_RUNS:-1}
fi
RTOL=${RTOL:-1e-8}
RESTART=${RESTART:-30}
MAXIT=${MAXIT:-10000}
CG_PROBLEM=${CG_PROBLEM:-elasticity3d:160,64,64}
CG_PRECONDS=${CG_PRECONDS:-jacobi,bjacobi:3,ic0}
GMRES_PROBLEM=${GMRES_PROBLEM:-convdiff3d:128}
GMRES_PRECONDS=${GMRES_PRECONDS:-jacobi,ilu0}
mkdir -p "$OUT/logs" "$OUT/precond" "$BIN_DIR"
T_START=$(date +%s)

{
    date -u
    echo "device: $DEVICE; runs: $RUNS; krill commit: $(git -C "$ROOT" rev-parse --short HEAD 2>&1)"
    if [ "$DEVICE" = gpu ]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
            --format=csv 2>&1
        "$PYTHON" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -n 1
    else
        grep -m1 'model name' /proc/cpuinfo
        echo "cores: $(nproc); load at start: $(cut -d" " -f1-3 /proc/loadavg)"
        pkg-config --modversion PETSc 2>&1 | sed 's/^/PETSc /'
    fi
} >"$OUT/env.txt"
cat "$OUT/env.txt"

SOLVE=$BUILD/bench/bench_solve
PETSC=$BUILD/bench/bench_petsc
targets=(bench_solve)
[ "$DEVICE" = cpu ] && targets+=(bench_petsc)
if [ ! -x "$SOLVE" ] || { [ "$DEVICE" = cpu ] && [ ! -x "$PETSC" ]; }; then
    run_step build 600 cmake --build "$BUILD" --target "${targets[@]}"
fi
ONE=(env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1)

# krill's preconditioner name -> bench_petsc's -pc (and -bs)
petsc_pc() {
    case "$1" in
        bjacobi:*) echo "pbjacobi -bs ${1#bjacobi:}" ;;
        ilu0) echo ilu ;;
        ic0) echo icc ;;
        *) echo "$1" ;;
    esac
}

# failure_record FILE LIBRARY PROBLEM PRECONDS RC LIMIT STEP [THREADS]: a JSON result for a step
# that left none (timed out or crashed), so that the report shows the row and why.
failure_record() {
    [ -f "$1" ] && return
    "$PYTHON" - "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$DEVICE" "${@:8}" <<'EOF'
import json, sys
path, lib, problem, preconds, rc, limit, step, device = sys.argv[1:9]
threads = int(sys.argv[9]) if len(sys.argv) > 9 else None
why = (f"timed out after {limit} s" if rc in ("124", "137") else f"exit {rc}") + \
    f" without a result (logs/{step}.log)"
rows = [{"problem": problem, "precond": p, "ok": False, "converged": False, "message": why}
        for p in preconds.split(",")]
doc = {"library": lib, "device": "cuda" if device == "gpu" else "cpu", "threads": threads,
       "results": rows} if lib == "krill" else dict(rows[0], library=lib)
with open(path, "w") as f:
    json.dump(doc, f)
EOF
}

run_problem() {
    local solver=$1 matrix=$2 preconds=$3
    local prob="$solver:$matrix" safe
    safe=$(safe_name "$matrix")
    run_step "dump-$safe" "$LIMIT" "$SOLVE" --device cpu --no-solve --write-bin "$BIN_DIR" "$prob"
    local common=(--rtol "$RTOL" --restart "$RESTART" --maxit "$MAXIT" --runs "$RUNS"
        --precond "$preconds")
    local json rc
    if [ "$DEVICE" = gpu ]; then
        json=$OUT/precond/krill_gpu_${solver}_$safe.json
        rm -f "$json"
        run_step "krill-gpu-$solver-$safe" "$LIMIT" "$SOLVE" --device gpu "${common[@]}" \
            --json "$json" "$prob"
        rc=$?
        [ "$rc" -ne 0 ] && failure_record "$json" krill "$prob" "$preconds" "$rc" "$LIMIT" \
            "krill-gpu-$solver-$safe"
    else
        for t in ${KRILL_THREADS:-$(printf '%s\n' "$THREADS" 1 | awk '!seen[$0]++')}; do
            json=$OUT/precond/krill_cpu_t${t}_${solver}_$safe.json
            rm -f "$json"
            run_step "krill-cpu-t$t-$solver-$safe" "$LIMIT" env OMP_NUM_THREADS="$t" "$SOLVE" \
                --device cpu --threads "$t" "${common[@]}" --json "$json" "$prob"
            rc=$?
            [ "$rc" -ne 0 ] && failure_record "$json" krill "$prob" "$preconds" "$rc" "$LIMIT" \
                "krill-cpu-t$t-$solver-$safe" "$t"
        done
    fi
    if [ ! -f "$BIN_DIR/$safe.A.bin" ]; then
        echo "[skip]   peers of $prob: no dump $BIN_DIR/$safe.A.bin"
        return
    fi
    local pc tag limit runs step lib
    for pc in ${preconds//,/ }; do
        tag=$(safe_name "$pc")
        limit=$LIMIT
        runs=$RUNS
        if [ "$DEVICE" = gpu ]; then
            lib=cupy
            step=cupy-$solver-$safe-$tag
            json=$OUT/precond/cupy_${solver}_${safe}_$tag.json
            case "$pc" in ilu0 | ic0) limit=$ILU_LIMIT runs=$ILU_RUNS ;; esac
            rm -f "$json"
            run_step "$step" "$limit" "$PYTHON" "$ROOT/bench/cupy_solve.py" \
                --backend cupy --A "$BIN_DIR/$safe.A.bin" --b "$BIN_DIR/$safe.b.bin" \
                --solver "$solver" --precond "$pc" --rtol "$RTOL" --restart "$RESTART" \
                --maxit "$MAXIT" --runs "$runs" --spmv-reps 0 --problem "$prob" --json "$json"
        else
            lib=petsc
            step=petsc-$solver-$safe-$tag
            json=$OUT/precond/petsc_${solver}_${safe}_$tag.json
            rm -f "$json"
            # shellcheck disable=SC2046
            run_step "$step" "$limit" "${ONE[@]}" "$PETSC" -A "$BIN_DIR/$safe.A.bin" \
                -b "$BIN_DIR/$safe.b.bin" -solver "$solver" -pc $(petsc_pc "$pc") \
                -rtol "$RTOL" -restart "$RESTART" -maxit "$MAXIT" -runs "$RUNS" \
                -problem "$prob" -json "$json"
        fi
        rc=$?
        [ "$rc" -ne 0 ] && failure_record "$json" "$lib" "$prob" "$pc" "$rc" "$limit" "$step"
    done
}

run_problem cg "$CG_PROBLEM" "$CG_PRECONDS"
run_problem gmres "$GMRES_PROBLEM" "$GMRES_PRECONDS"

run_step report 60 "$PYTHON" "$ROOT/bench/precond_report.py" "$OUT"
echo
echo "======== krill with preconditioners, $DEVICE: summary ($(($(date +%s) - T_START)) s) ========"
[ -f "$OUT/precond.md" ] && cat "$OUT/precond.md"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
