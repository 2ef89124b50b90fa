#!/bin/bash
# tests/cli/mpi_bin.sh MPIEXEC NP_FLAG KRILL [MPIEXEC_FLAGS...]: `mpirun -n 2 krill solve
# A.krill`, each rank reading its own rows of the binary file: one report that says so,
# the solution hash of the scattered .mtx on 2 ranks (the same partition, the same b), with
# --repro the serial solve's hash, --json's per-rank loads adding up; --reorder rcm (rank 0
# reads it all and scatters) converges; a corrupt file fails on every rank with exit code 2
# and one message, naming the chunk.
mpiexec=$1 np=$2 krill=$3
shift 3
. "$(dirname "$0")/lib.sh"
run() {   # run EXIT NP ARGS...: krill on NP ranks
  local expected=$1 n=$2; shift 2
  "$mpiexec" "$np" "$n" "${flags[@]}" "$krill" "$@" >out 2>err
  local rc=$?
  echo "mpiexec $np $n krill $* -> exit $rc"
  [ "$rc" -eq "$expected" ] || { cat out err; fail "exit code $rc, expected $expected"; }
}
flags=("$@")
hash_of() { awk '/solution hash/ { print $3 }' "$1"; }

"$krill" gen convdiff3d:12,2 -o a.mtx --quiet && "$krill" convert a.mtx a.krill --chunk 4K --quiet ||
  fail "gen or convert failed"

run 0 2 solve a.mtx --precond jacobi --threads 1
cp out mtx.out
run 0 2 solve a.krill --precond jacobi --threads 1 --out x.mtx
cat out
grep -q 'krill binary file, each rank reads its rows' out || fail "not read per rank"
grep -q 'rank 0: rows' out && grep -q 'rank 1: rows' out || fail "per-rank loads missing"
[ "$(grep -c '^result' out)" -eq 1 ] || fail "expected one report"
grep -q '^solver    gmres' out || fail "expected gmres (not symmetric)"
[ "$(grep 'half bandwidth' out)" = "$(grep 'half bandwidth' mtx.out)" ] || fail "bandwidth differs"
[ -n "$(hash_of out)" ] && [ "$(hash_of out)" = "$(hash_of mtx.out)" ] ||
  { cat mtx.out; fail "a.krill on 2 ranks: another solution than a.mtx on 2 ranks"; }
[ "$(grep -vc "^%" x.mtx)" -eq 1729 ] || fail "x.mtx does not hold a size line and 1728 entries"

"$krill" solve a.mtx --precond jacobi --repro --threads 2 >serial.out || fail "serial --repro"
run 0 2 solve a.krill --precond jacobi --repro --threads 1
[ -n "$(hash_of serial.out)" ] && [ "$(hash_of out)" = "$(hash_of serial.out)" ] ||
  { cat serial.out out; fail "--repro: a.krill on 2 ranks differs from a.mtx on one"; }

run 0 2 solve a.krill --threads 1 --json --rhs random
python3 - out <<'PY' || fail "the JSON report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["converged"] and r["ranks"] == 2 and r["n"] == 1728, r
loads = r["per_rank"]
assert sum(loads[k]["rows"] for k in "01") == 1728, loads
assert sum(loads[k]["nnz_diag"] + loads[k]["nnz_off"] for k in "01") == r["nnz"], loads
PY

run 0 2 solve a.krill --threads 1 --reorder rcm
grep -q '(krill binary file)' out && grep -q 'converged' out || fail "--reorder rcm"

cp a.krill bad.krill
size=$(stat -c %s a.krill)
printf '\xff' | dd of=bad.krill bs=1 seek=$((size - 3)) conv=notrunc status=none
run 2 2 solve bad.krill --threads 1
[ "$(grep -c 'checksum mismatch in the val section' err)" -eq 1 ] ||
  { cat err; fail "expected one message naming the val chunk"; }
head -c 1000 a.krill >cut.krill
run 2 2 solve cut.krill --threads 1
[ "$(grep -c 'truncated' err)" -eq 1 ] || { cat err; fail "expected one 'truncated'"; }
echo "PASS"
