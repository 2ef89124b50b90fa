# shellcheck shell=bash
# bench/lib.sh - shell helpers shared by the run_*.sh and compare_petsc*.sh scripts (sourced,
# not run).
# Each step runs under a time limit with its output in $OUT/logs/NAME.log; the console gets
# one line per step (and the log's tail when it fails), and the script goes on to the next.

STEPS_OK=()
STEPS_FAILED=()

# bench_args USAGE ARGS... : the one argument of a run_*.sh, OUTDIR. With another count,
# prints "usage: USAGE" and exits 2; else sets OUT to it, and BUILD to BUILD_DIR (default
# build), below ROOT when relative.
bench_args() {
    local usage=$1
    shift
    if [ $# -ne 1 ]; then
        echo "usage: $usage" >&2
        exit 2
    fi
    OUT=$1
    BUILD=${BUILD_DIR:-build}
    case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
}

# TESTDATA, unless set: the first of ROOT/.testdata and ROOT/../shared/testdata that has an
# mtx folder (empty when neither has).
find_testdata() {
    local d
    TESTDATA=${TESTDATA:-}
    for d in "$ROOT/.testdata" "$ROOT/../shared/testdata"; do
        if [ -z "$TESTDATA" ] && [ -d "$d/mtx" ]; then TESTDATA=$d; fi
    done
}

# run_step NAME LIMIT_S COMMAND... : 0 when the command exited 0 within the limit.
run_step() {
    local name=$1 limit=$2
    shift 2
    local log="$OUT/logs/$name.log" t0 rc dt
    t0=$(date +%s)
    printf '$ %s\n# load average before: %s\n' "$*" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$log"
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
    rc=$?
    printf '# load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
    dt=$(($(date +%s) - t0))
    if [ "$rc" -eq 0 ]; then
        echo "[ok]     $name (${dt} s)"
        STEPS_OK+=("$name")
    else
        local why="exit $rc"
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${limit} s"
        echo "[FAILED] $name: $why; last lines of $log:"
        tail -n 6 "$log" | sed 's/^/    /'
        STEPS_FAILED+=("$name")
    fi
    return "$rc"
}

# The file-name form of a SPEC or path, as bench_safe_name (bench_common.c) makes it.
safe_name() {
    printf '%s' "${1##*/}" | tr -c 'A-Za-z0-9.-' '_'
}

print_step_summary() {
    echo "steps ok: ${#STEPS_OK[@]}; failed: ${#STEPS_FAILED[@]}${STEPS_FAILED[*]:+ (${STEPS_FAILED[*]})}"
}

# The PETSc comparisons' start: install petsc-dev through apt-get when pkg-config does not
# find PETSc (unless NO_INSTALL=1), then write OUT/env.txt (date, CPU, cores and load, PETSc
# version, krill commit, and the lines given after OUT) and print it. Needs ROOT.
petsc_setup() {
    local out=$1
    shift
    if [ "${NO_INSTALL:-0}" != 1 ] && ! pkg-config --exists PETSc 2>/dev/null; then
        run_step install-petsc 1800 env DEBIAN_FRONTEND=noninteractive apt-get -y install petsc-dev
    fi
    {
        date -u
        grep -m1 'model name' /proc/cpuinfo
        echo "cores: $(nproc); load at start: $(cut -d" " -f1-3 /proc/loadavg)"
        pkg-config --modversion PETSc 2>&1 | sed 's/^/PETSc /'
        git -C "$ROOT" rev-parse --short HEAD 2>&1 | sed 's/^/krill commit /'
        for line in "$@"; do echo "$line"; done
    } >"$out/env.txt"
    cat "$out/env.txt"
}
