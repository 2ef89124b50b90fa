#!/bin/bash
# repro.sh KRILL SCENARIO: `krill solve --repro[=S]` keeps its contract as the user sees it:
# the printed solution hash is the same on every thread count, format and device, and the
# plain mode (which may differ) does differ somewhere, so that the comparison means
# something. Exit 0 = pass, 1 = fail, 77 = skipped (with the reason printed).
set -u
krill=$1 scenario=$2
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

# hash ARGS...: solve, print "<hash> <iterations>" of the run (fails on a bad exit or output)
hash() {
  "$krill" solve "$@" --json >out 2>err
  local rc=$?
  [ "$rc" -eq 0 ] || { cat out err >&2; fail "krill solve $* -> exit $rc"; }
  local h it
  h=$(sed -nE 's/^ *"x_hash": "([0-9a-f]{16})",?$/\1/p' out)
  it=$(sed -nE 's/^ *"iterations": ([0-9]+),?$/\1/p' out)
  [ -n "$h" ] && [ -n "$it" ] || { cat out >&2; fail "no x_hash/iterations in krill solve $*"; }
  echo "$h $it"
}
# same LABEL ARGS... -- VARIANT... : the hash of ARGS plus each VARIANT (one word, or
# several joined by ','), all equal
same() {
  local label=$1; shift
  local args=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  local first="" v
  for v in "$@"; do
    local extra
    IFS=',' read -r -a extra <<<"$v"
    local got
    got=$(hash "${args[@]}" "${extra[@]}") || exit 1
    echo "$label [$v]: $got"
    [ -z "$first" ] && first=$got
    [ "$got" = "$first" ] || fail "$label: [$v] gave $got, the first variant $first"
  done
}
threads="--threads,1 --threads,2 --threads,3 --threads,7"
formats="--format,csr --format,ell --format,ellr --format,rbp-csr --format,rbp-ell --format,segscan --format,auto"

case "$scenario" in
threads)      # every solver, with and without a preconditioner, 1..7 threads
  same "cg exact" --gen elasticity3d:6,3,3 --repro --device cpu -- $threads
  same "cg jacobi S=2" --gen poisson3d:24 --repro=2 --precond jacobi --device cpu -- $threads
  same "gmres ilu0" --gen convdiff3d:24 --solver gmres --precond ilu0 --repro --device cpu -- $threads
  same "fgmres" --gen convdiff3d:24 --solver fgmres --repro --device cpu -- $threads
  same "bicgstab bjacobi" --gen elasticity3d:6,3,3 --solver bicgstab --precond bjacobi:3 --repro \
    --device cpu -- $threads
  ;;
formats)      # every format gives the bits of csr
  same "cg formats" --gen elasticity3d:6,3,3 --repro --device cpu --threads 3 -- $formats
  same "gmres formats" --gen convdiff3d:24 --solver gmres --repro --device cpu --threads 2 -- $formats
  ;;
plain_differs)  # without --repro the bits depend on the thread count: the tests above mean something
  a=$(hash --gen convdiff3d:24 --solver gmres --device cpu --threads 1) || exit 1
  b=$(hash --gen convdiff3d:24 --solver gmres --device cpu --threads 7) || exit 1
  echo "plain gmres: 1 thread $a, 7 threads $b"
  [ "${a% *}" != "${b% *}" ] || fail "plain mode gave the same bits on 1 and 7 threads"
  ;;
gpu)          # the GPU gives the CPU's bits
  "$krill" info | grep -Eq '^ +cuda:' || skip "no usable CUDA device"
  for f in csr ell rbp-csr segscan; do
    same "cg $f cpu/gpu" --gen elasticity3d:6,3,3 --repro --format $f -- \
      --device,cpu,--threads,3 --device,gpu
  done
  same "gmres ilu0 cpu/gpu" --gen convdiff3d:24 --solver gmres --precond ilu0 --repro -- \
    --device,cpu --device,gpu
  same "cg ic0 cpu/gpu" --gen poisson3d:24 --precond ic0 --repro=3 -- --device,cpu --device,gpu
  same "bicgstab jacobi cpu/gpu" --gen convdiff3d:24 --solver bicgstab --precond jacobi --repro -- \
    --device,cpu --device,gpu
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo PASS
