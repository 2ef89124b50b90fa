#!/bin/bash
# dot.sh KRILL SCENARIO: the multi-step tests of `krill dot`. Exit 0 = pass, 1 = fail,
# 77 = skipped (with the reason printed). Timings are printed by krill but never asserted.
#
# The exact values below were computed once with MPFR (2048+ bits, exact, rounded to
# nearest) from krill_gen_dot_vectors' vectors, which have the same bits on every machine:
#   n 1000, phi 2, seed 1: -167.80254829105436   0xc064f9ae79c0f141
#   n 1000, phi 8, seed 1: -2403081322861.3926   0xc2817c16780b6b24
set -u
krill=$1 scenario=$2
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

# run EXIT ARGS...: run krill, keep stdout in out, stderr in err, check the exit code.
run() {
  local expected=$1; shift
  "$krill" "$@" >out 2>err
  local rc=$?
  echo "krill $* -> exit $rc"
  cat out err
  [ "$rc" -eq "$expected" ] || fail "exit code $rc, expected $expected"
}
# row LABEL: the table row of a mode ("plain", "exact", "ozaki S=3", ...), or fail.
row() {
  local line
  line=$(grep -E "^$1 +[-+0-9.e]+ +0x[0-9a-f]{16} +([0-9.e+-]+|inf) +[0-9.e+-]+$" out \
         | head -n 1)
  [ -n "$line" ] || fail "no well-formed row for '$1'"
  printf '%s\n' "$line"
}
# field LABEL K: the K-th field of the row after its label (1 value, 2 bits, 3 rel_error,
# 4 time_s).
field() {
  local words
  words=$(row "$1" | sed -E "s/^$1 +//") || exit 1
  printf '%s\n' "$words" | awk -v k="$2" '{ print $k }'
}
check_header() {
  grep -Eq "^krill dot: n = $1, phi = $2, seed = $3$" out || fail "no header line"
  grep -Eq '^device +cpu' out || fail "no device line naming the CPU"
  grep -Eq '^inputs +\(rand - 0\.5\) \* exp\(phi \* randn\); max \|x_i\| = ' out \
    || fail "no inputs line"
  grep -Eq '^mode +value +bits +rel_error +time_s$' out || fail "no column titles"
  [ -s err ] && fail "stderr not empty"
  return 0
}

case "$scenario" in
shape)       # plain, the mode asked for, exact; exact = MPFR's value, its error 0
  run 0 dot --n 1000 --phi 2 --slices 3 --device cpu
  check_header 1000 2 1
  [ "$(grep -Ec '^(plain|ozaki S=3|exact) ' out)" -eq 3 ] || fail "not the three rows"
  [ "$(field exact 2)" = 0xc064f9ae79c0f141 ] || fail "exact mode is not MPFR's value"
  [ "$(field exact 1)" = -167.80254829105436 ] || fail "exact value not printed with %.17g"
  [ "$(field exact 3)" = 0 ] || fail "exact mode's error is not 0"
  # the plain error is the distance to the exact value, and small at this phi
  awk -v e="$(field plain 3)" 'BEGIN { exit !(e >= 0 && e < 1e-12) }' \
    || fail "plain error $(field plain 3) out of [0, 1e-12)"
  ;;
fast)        # --fast with slices; a wide range (phi 8), so that S=2 is visibly inexact
  run 0 dot --n 1000 --phi 8 --slices 2 --fast --device cpu --seed 1 --reps 2
  check_header 1000 8 1
  [ "$(grep -Ec '^(plain|ozaki-fast S=2|exact) ' out)" -eq 3 ] || fail "not the three rows"
  [ "$(field exact 2)" = 0xc2817c16780b6b24 ] || fail "exact mode is not MPFR's value"
  [ "$(field exact 3)" = 0 ] || fail "exact mode's error is not 0"
  ;;
exact_only)  # no --slices: the mode asked for is exact mode, printed once
  run 0 dot --n 1000 --phi 2 --device cpu
  check_header 1000 2 1
  [ "$(grep -Ec '^(plain|exact) ' out)" -eq 2 ] || fail "not the plain and exact rows"
  grep -Eq '^ozaki' out && fail "an ozaki row without --slices"
  [ "$(field exact 2)" = 0xc064f9ae79c0f141 ] || fail "exact mode is not MPFR's value"
  ;;
threads)     # the reproducible rows have the same bits on 1 and 3 threads, seed by seed;
             # plain mode differs for some seed (else the test would prove nothing). n is
             # well above the length below which a reduction runs on one thread.
  plain_differs=0
  for seed in 1 2 3; do
    run 0 dot --n 200000 --phi 4 --slices 3 --device cpu --threads 1 --seed "$seed" --reps 1
    one="$(field 'ozaki S=3' 2) $(field exact 2)" plain_one=$(field plain 2)
    run 0 dot --n 200000 --phi 4 --slices 3 --device cpu --threads 3 --seed "$seed" --reps 1
    three="$(field 'ozaki S=3' 2) $(field exact 2)" plain_three=$(field plain 2)
    [ "$one" = "$three" ] || fail "seed $seed: 1 thread gives $one, 3 threads $three"
    [ "$plain_one" != "$plain_three" ] && plain_differs=1
  done
  [ "$plain_differs" = 1 ] || fail "plain mode gave the same bits on 1 and 3 threads for every seed"
  ;;
gpu)         # the reproducible rows have the same bits on the GPU as on the CPU
  "$krill" info | grep -Eq '^ +cuda:' || skip "no usable CUDA device"
  for slices in 0 2 3; do
    run 0 dot --n 100000 --phi 4 --slices "$slices" --device cpu
    cpu="$(field exact 2)"
    [ "$slices" -gt 0 ] && cpu="$cpu $(field "ozaki S=$slices" 2)"
    "$krill" dot --n 100000 --phi 4 --slices "$slices" --device gpu >out 2>err \
      || { cat out err; fail "--device gpu failed"; }
    cat out
    grep -Eq '^device +cuda' out || fail "not run on the GPU"
    gpu="$(field exact 2)"
    [ "$slices" -gt 0 ] && gpu="$gpu $(field "ozaki S=$slices" 2)"
    [ "$cpu" = "$gpu" ] || fail "slices $slices: CPU gives $cpu, GPU $gpu"
  done
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo "PASS"
