#!/bin/bash
# tests/cli/mpi.sh MPIEXEC NP_FLAG KRILL [MPIEXEC_FLAGS...]: `mpirun -n 2 krill solve` prints
# one report (rank 0's) with both ranks' loads (also in --json), writes x once, and converges
# to the serial error; --repro gives the serial solution's bits; a file that cannot be read fails on every rank with exit code 2, one
# message.
mpiexec=$1 np=$2 krill=$3
shift 3
. "$(dirname "$0")/lib.sh"
# run EXIT NP ARGS...: krill solve on NP ranks
run() {
  local expected=$1 n=$2; shift 2
  "$mpiexec" "$np" "$n" "$@" >out 2>err
  local rc=$?
  echo "mpiexec $np $n ... -> exit $rc"
  [ "$rc" -eq "$expected" ] || { cat out err; fail "exit code $rc, expected $expected"; }
}
flags=("$@")

run 0 2 "${flags[@]}" "$krill" solve --gen poisson3d:12 --precond jacobi --threads 1 --out x.mtx
cat out
[ "$(grep -c '^result' out)" -eq 1 ] || fail "expected one report, got $(grep -c '^result' out)"
grep -q 'MPI rank 0 of 2' out || fail "the device line does not name the ranks"
grep -q 'rank 0: rows' out && grep -q 'rank 1: rows' out || fail "per-rank loads missing"
grep -q '^ *comm ' out || fail "no communication time in the breakdown"
grep -q 'converged' out || fail "not converged"
[ "$(grep -c '^%%MatrixMarket' x.mtx)" -eq 1 ] || fail "x.mtx was not written once"
[ "$(grep -vc "^%" x.mtx)" -eq 1729 ] || fail "x.mtx does not hold a size line and 1728 entries"
awk '/error vs x = 1/ { e = $10 + 0 } END { exit !(e < 1e-6) }' out ||
  fail "the error against x = 1 is not below 1e-6"

# --json: one object, with both ranks' loads adding up to the matrix
run 0 2 "${flags[@]}" "$krill" solve --gen poisson3d:12 --threads 1 --json
python3 - out <<'PY' || fail "the JSON report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["converged"] and r["ranks"] == 2, r
loads = r["per_rank"]
assert sum(loads[k]["rows"] for k in "01") == r["n"] == 1728, loads
assert sum(loads[k]["nnz_diag"] + loads[k]["nnz_off"] for k in "01") == r["nnz"], loads
assert loads["0"]["halo"] == loads["1"]["sent"] == 144, loads
t = r["times"]
assert 0 < t["comm"] <= t["total"], t
PY

# --repro: 2 ranks give the serial solve's solution bits (the printed hash of x)
"$krill" solve --gen convdiff3d:12,2 --precond jacobi --repro --threads 2 >serial.out ||
  fail "the serial --repro solve failed"
run 0 2 "${flags[@]}" "$krill" solve --gen convdiff3d:12,2 --precond jacobi --repro --threads 1
serial_hash=$(awk '/solution hash/ { print $3 }' serial.out)
[ -n "$serial_hash" ] && [ "$(awk '/solution hash/ { print $3 }' out)" = "$serial_hash" ] ||
  { cat serial.out out; fail "--repro on 2 ranks: another solution than the serial one"; }

run 2 2 "${flags[@]}" "$krill" solve no-such-file.mtx --threads 1
[ "$(grep -c 'no-such-file' err)" -eq 1 ] || { cat err; fail "expected one error message"; }
echo "PASS"
