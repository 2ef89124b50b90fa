#!/bin/bash
# tests/cli/mpi_metis.sh MPIEXEC NP_FLAG KRILL [MPIEXEC_FLAGS...]: `mpirun -n 2 krill solve
# --partition metis` converges to the serial error against x = 1, names the partition and
# the total halo (also in --json), and writes x in A's own numbering (a random b: the
# solution equals the serial one entry by entry, which a permuted x would not); on one
# process metis is a no-op, said so. Skipped (77) in a build without METIS, where the option
# is refused with exit code 2.
mpiexec=$1 np=$2 krill=$3
shift 3
. "$(dirname "$0")/lib.sh"
run() {   # run EXIT NP ARGS...: krill solve on NP ranks
  local expected=$1 n=$2; shift 2
  "$mpiexec" "$np" "$n" "$@" >out 2>err
  local rc=$?
  echo "mpiexec $np $n ... -> exit $rc"
  [ "$rc" -eq "$expected" ] || { cat out err; fail "exit code $rc, expected $expected"; }
}
flags=("$@")

"$krill" solve --gen poisson3d:4 --partition metis --threads 1 >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'without METIS' err; then
  cat err
  skip "this krill was built without METIS (the refusal above is what was checked)"
fi
[ "$rc" -eq 0 ] || { cat out err; fail "one process with --partition metis: exit $rc"; }
grep -q 'partition metis: nothing to partition' out || { cat out; fail "no-op not reported"; }

run 0 2 "${flags[@]}" "$krill" solve --gen poisson3d:12 --partition metis --precond jacobi \
  --threads 1 --out x.mtx
cat out
grep -q '^partition metis: .*total halo [0-9]' out || fail "the partition line is missing"
grep -q 'rank 0: rows' out && grep -q 'rank 1: rows' out || fail "per-rank loads missing"
grep -q 'converged' out || fail "not converged"
[ "$(grep -vc "^%" x.mtx)" -eq 1729 ] || fail "x.mtx does not hold a size line and 1728 entries"
awk '/error vs x = 1/ { e = $10 + 0 } END { exit !(e < 1e-6) }' out ||
  fail "the error against x = 1 is not below 1e-6"

# a random b: x in A's numbering is the serial x entry by entry (rtol 1e-10: within 1e-6)
"$krill" solve --gen convdiff3d:10,2 --rhs random --rtol 1e-10 --threads 1 --out serial.mtx \
  >serial.out || { cat serial.out; fail "the serial solve failed"; }
run 0 2 "${flags[@]}" "$krill" solve --gen convdiff3d:10,2 --rhs random --rtol 1e-10 \
  --partition metis --threads 1 --out metis.mtx
grep -q '^partition metis' out || { cat out; fail "not partitioned by METIS"; }
python3 - serial.mtx metis.mtx <<'PY' || fail "the METIS solution is not the serial one in A's order"
import sys
def read(p):
    v = [l for l in open(p) if not l.startswith("%")]
    return [float(x) for x in v[1:]]
s, m = read(sys.argv[1]), read(sys.argv[2])
assert len(s) == len(m) == 1000, (len(s), len(m))
scale = max(abs(x) for x in s)
d = max(abs(a - b) for a, b in zip(s, m)) / scale
print("max |x_metis - x_serial| / max |x_serial| = %.2e" % d)
assert d < 1e-6, d
PY

# --json: the partition, permuted, loads adding up to the matrix
run 0 2 "${flags[@]}" "$krill" solve --gen elasticity3d:6,3,3 --partition metis --threads 1 \
  --json
python3 - out <<'PY' || fail "the JSON report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["converged"] and r["ranks"] == 2, r
assert r["partition"] == "metis" and r["permuted"] is True, r
loads = r["per_rank"]
assert sum(loads[k]["rows"] for k in "01") == r["n"], loads
assert sum(loads[k]["nnz_diag"] + loads[k]["nnz_off"] for k in "01") == r["nnz"], loads
PY
echo "PASS"
