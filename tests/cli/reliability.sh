#!/bin/bash
# reliability.sh KRILL SCENARIO: hostile thread counts and outputs that cannot be written
# (issue 17). Exit 0 = pass, 1 = fail, 77 = skipped (with the reason printed).
set -u
krill=$1 scenario=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() { echo "FAIL: $*"; exit 1; }
# run EXIT ARGS...: run krill, keep stdout in out, stderr in err, check the exit code.
run() {
  local expected=$1; shift
  "$krill" "$@" >out 2>err
  local rc=$?
  echo "krill $* -> exit $rc"
  [ "$rc" -eq "$expected" ] || { cat out err; fail "exit code $rc, expected $expected"; }
}
# says PATTERN: stderr matches the extended regular expression.
says() { grep -Eq -e "$1" err || { cat err; fail "stderr does not match /$1/"; }; }

# The commands that take --threads, each with a small problem.
thread_commands=(
  "solve --gen poisson3d:3 --quiet"
  "formats --gen poisson3d:3 --formats csr --quiet"
  "apsp --gen random:20 --device cpu"
  "dot --n 100 --phi 1 --device cpu --reps 1"
)

case "$scenario" in
threads_limit)   # above KRILL_MAX_THREADS: a usage error naming --threads and the range
  for cmd in "${thread_commands[@]}"; do
    run 2 $cmd --threads 100000
    says "--threads expects an integer in \[1, 4096\], got '100000'"
  done
  OMP_NUM_THREADS=5000 run 2 solve --gen poisson3d:3 --quiet
  says "OpenMP's default, here 5000, more than KRILL_MAX_THREADS = 4096"
  ;;
threads_refused)   # the system refuses the threads: exit 3 and a message, never libgomp's
  # exit 1 ("Thread creation failed", which reads as "not converged") or a crash. A
  # default thread stack of 1 TiB cannot be mapped, so no thread starts; OpenMP's own
  # default is 1 thread so that nothing before the context starts any.
  for cmd in "${thread_commands[@]}"; do
    (ulimit -s 1073741824 && OMP_NUM_THREADS=1 "$krill" $cmd --threads 4 >out 2>err)
    rc=$?
    echo "krill $cmd --threads 4 (ulimit -s 1 TiB) -> exit $rc"
    [ "$rc" -eq 3 ] || { cat out err; fail "exit code $rc, expected 3"; }
    says "^krill: krill_ctx_create: threads = 4: the system started only 1 of them"
  done
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo "PASS"
