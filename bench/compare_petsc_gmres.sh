#!/usr/bin/env bash
# bench/compare_petsc_gmres.sh - issue 18's CPU target: krill's GMRES(RESTART) time per
# iteration against PETSc's, one process, same restart, same system.
#
#   bench/compare_petsc_gmres.sh [OUTDIR]      (default OUTDIR: BUILD_DIR/results-gmres)
#
# 1. installs petsc-dev through apt-get when pkg-config does not find PETSc (unless
#    NO_INSTALL=1); configures (Release, no CUDA, no tests) and builds bench_solve and
#    bench_petsc in BUILD_DIR;
# 2. for each MATRIX of PROBLEMS: bench_solve --no-solve --write-bin (the binary dump PETSc
#    reads; krill generates the same matrix from the SPEC), b = A*1, x0 = 0, no
#    preconditioner, restart RESTART, maxit MAXIT, rtol RTOL (not converging before MAXIT
#    is fine: time per iteration is the figure compared);
# 3. ROUNDS rounds; each round runs every configuration once, in an order rotated from round
#    to round so that load from other processes falls on all alike:
#      krill --ortho cgs2 and --ortho dcgs2 at each thread count of THREADS (default 1);
#      PETSc KSPGMRES, 1 process, 1 thread: its default orthogonalization (classical
#      Gram-Schmidt, refinement "ifneeded"), CGS refined always (= krill's cgs2: bench_petsc's
#      own default) and, with MGS=1, modified Gram-Schmidt (-ksp_gmres_modifiedgramschmidt).
#    Each invocation is `--runs 1` / `-runs 1`: the programs' own timers time one whole solve
#    after their own untimed warm-up (a solve capped at one restart cycle), and their JSON
#    gives time per iteration = solve time / iterations;
# 4. prints (and writes OUTDIR/compare_petsc_gmres.md) per problem and configuration: the
#    median and min over the rounds of ms per iteration, iterations, the final true relative
#    residual, krill's orthogonalization share (its own timer), and krill / PETSc ratios.
# Every invocation's command, output and load average are in OUTDIR/logs; JSONs in
# OUTDIR/json.
#
# Environment (defaults): BUILD_DIR (build-petsc), BIN_DIR (/tmp/krill-gmres-bin), PYTHON
# (python3), PROBLEMS ("convdiff3d:64 poisson3d:64"), ROUNDS (5), THREADS ("1"), RESTART
# (30), MAXIT (300), RTOL (1e-8), MGS (1), TIMEOUT (600 s per invocation), NO_INSTALL (0).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-build-petsc}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT=${1:-$BUILD/results-gmres}
BIN_DIR=${BIN_DIR:-/tmp/krill-gmres-bin}
PYTHON=${PYTHON:-python3}
PROBLEMS=${PROBLEMS:-convdiff3d:64 poisson3d:64}
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-1}
RESTART=${RESTART:-30}
MAXIT=${MAXIT:-300}
RTOL=${RTOL:-1e-8}
LIMIT=${TIMEOUT:-600}
mkdir -p "$OUT/logs" "$OUT/json" "$BIN_DIR"
rm -f "$OUT"/json/*.json
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
T_START=$(date +%s)

petsc_setup "$OUT" "problems: $PROBLEMS; rounds: $ROUNDS; krill threads: $THREADS;" \
    "restart $RESTART, maxit $MAXIT, rtol $RTOL"

if [ ! -f "$BUILD/build.ninja" ]; then
    run_step configure 600 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DKRILL_BUILD_TESTS=OFF -DKRILL_WITH_CUDA=OFF
fi
run_step build 3600 cmake --build "$BUILD" -j "$(nproc)" --target bench_solve bench_petsc
SOLVE=$BUILD/bench/bench_solve
PETSC=$BUILD/bench/bench_petsc
echo "build: $BUILD, source $(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' \
    "$BUILD/CMakeCache.txt" 2>/dev/null)" | tee -a "$OUT/env.txt"
for exe in "$SOLVE" "$PETSC"; do
    if [ ! -x "$exe" ]; then
        echo "compare_petsc_gmres.sh: $exe was not built (no PETSc or MPI for bench_petsc?)" >&2
        exit 1
    fi
done

# The configurations: NAME (krill-ORTHO-tT or petsc-ORTHO), run by run_config.
CONFIGS=()
for t in $THREADS; do
    CONFIGS+=("krill-cgs2-t$t" "krill-dcgs2-t$t")
done
CONFIGS+=(petsc-ifneeded petsc-cgs2)
[ "${MGS:-1}" = 1 ] && CONFIGS+=(petsc-mgs)

# run_config NAME MATRIX ROUND: one invocation, its JSON in OUT/json/SAFE.NAME.rROUND.json.
run_config() {
    local name=$1 matrix=$2 round=$3 safe json ortho t
    safe=$(safe_name "$matrix")
    json="$OUT/json/$safe.$name.r$round.json"
    case "$name" in
    krill-*)
        ortho=${name#krill-}
        t=${ortho#*-t}
        ortho=${ortho%-t*}
        run_step "$safe.$name.r$round" "$LIMIT" env OMP_NUM_THREADS="$t" "$SOLVE" \
            --device cpu --threads "$t" --ortho "$ortho" --rtol "$RTOL" --restart "$RESTART" \
            --maxit "$MAXIT" --runs 1 --json "$json" "gmres:$matrix"
        ;;
    petsc-*)
        local extra=()
        case "$name" in
        petsc-ifneeded) extra=(-ksp_gmres_cgs_refinement_type refine_ifneeded) ;;
        petsc-mgs) extra=(-ksp_gmres_modifiedgramschmidt) ;;
        esac
        run_step "$safe.$name.r$round" "$LIMIT" env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
            "$PETSC" -A "$BIN_DIR/$safe.A.bin" -b "$BIN_DIR/$safe.b.bin" -solver gmres \
            -rtol "$RTOL" -restart "$RESTART" -maxit "$MAXIT" -runs 1 -problem "gmres:$matrix" \
            -json "$json" "${extra[@]}"
        ;;
    esac
}

for matrix in $PROBLEMS; do
    run_step "dump-$(safe_name "$matrix")" 600 "$SOLVE" --device cpu --no-solve \
        --write-bin "$BIN_DIR" "gmres:$matrix" || continue
    for ((r = 0; r < ROUNDS; r++)); do
        n=${#CONFIGS[@]}
        for ((i = 0; i < n; i++)); do
            run_config "${CONFIGS[$(((i + r) % n))]}" "$matrix" "$r"
        done
    done
done

"$PYTHON" - "$OUT" "$PROBLEMS" "${CONFIGS[*]}" <<'EOF' | tee "$OUT/compare_petsc_gmres.md"
import glob, json, os, statistics, sys
out, problems, configs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def safe(s):
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in os.path.basename(s))
def load(path):
    d = json.load(open(path))
    if d.get("library") == "krill":
        r = d["results"][0]
        return dict(ok=r["ok"], per_iter=r["t_per_iter_s"], its=r["iterations"],
                    relres=r["relres"], ortho=r["ortho_s"], total=r["t_median_s"])
    return dict(ok=d["t_per_iter_s"] is not None, per_iter=d["t_per_iter_s"],
                its=d["iterations"], relres=d["relres"], ortho=None, total=d["t_median_s"])
for m in problems:
    rows = {}
    for c in configs:
        runs = [load(p) for p in sorted(glob.glob(f"{out}/json/{safe(m)}.{c}.r*.json"))]
        runs = [x for x in runs if x["ok"] and x["per_iter"]]
        if runs:
            rows[c] = runs
    print(f"\n### GMRES, {m}, no preconditioner\n")
    print("| configuration | runs | iterations | relres | ms/iter (median) | ms/iter (min) "
          "| ortho share | / PETSc default | / PETSc CGS2 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    med = {c: statistics.median(x["per_iter"] for x in rs) for c, rs in rows.items()}
    for c, rs in rows.items():
        last = rs[-1]
        its = sorted({x["its"] for x in rs})
        share = "-"
        if last["ortho"] is not None:
            share = "%.0f%%" % (100 * statistics.median(x["ortho"] / x["total"] for x in rs))
        ratio = lambda ref: "%.2f" % (med[c] / med[ref]) if ref in med else "-"
        print(f"| {c} | {len(rs)} | {'/'.join(map(str, its))} | {last['relres']:.3e} "
              f"| {1e3 * med[c]:.3f} | {1e3 * min(x['per_iter'] for x in rs):.3f} | {share} "
              f"| {ratio('petsc-ifneeded')} | {ratio('petsc-cgs2')} |")
EOF
echo
echo "compare_petsc_gmres.sh: $(($(date +%s) - T_START)) s; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
print_step_summary
[ ${#STEPS_FAILED[@]} -eq 0 ]
