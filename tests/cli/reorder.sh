#!/bin/bash
# reorder.sh KRILL CASE: `krill solve --reorder rcm` (exit 0 = pass, 1 = fail, 77 = skipped).
#   solution SPEC TOL: with a random b, the x written with --reorder rcm equals the x written
#                      without, ||x_rcm - x|| <= TOL ||x||: both solve to rtol 1e-10, so
#                      they differ by at most about 2 cond(A) 1e-10 (TOL has room for that);
#                      an x left in the RCM numbering would differ by O(1)
#   json               the reorder fields of --json, and the human line
set -u
krill=$1 case=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

case "$case" in
solution)
  spec=$3 tol=$4
  run 0 solve --gen "$spec" --rhs random --rtol 1e-10 --out x_none.mtx --quiet
  run 0 solve --gen "$spec" --rhs random --rtol 1e-10 --out x_rcm.mtx --reorder rcm --quiet
  # entries after the size line, pairwise; relative 2-norm of the difference
  awk -v tol="$tol" '
    FNR == 1 { body = 0 }
    /^%/ { next }
    !body { body = 1; if (FILENAME == ARGV[1]) n = $1; else if ($1 != n) exit 3; next }
    FILENAME == ARGV[1] { x[++i] = $1; next }
    { d = $1 - x[++j]; diff += d * d; norm += x[j] * x[j] }
    END {
      if (j != n || i != n) exit 4
      rel = sqrt(diff / norm)
      printf "n %d, ||x_rcm - x|| / ||x|| = %.3g (tolerance %g)\n", n, rel, tol
      exit rel <= tol ? 0 : 5
    }' x_none.mtx x_rcm.mtx || fail "the solutions differ (awk $?)"
  ;;
json)
  command -v python3 >/dev/null || skip "python3 is not installed"
  run 0 solve --gen poisson3d:10 --reorder rcm --json
  python3 "$here/check_json.py" out converged=true reorder='"rcm"' bandwidth_before=100 \
    || fail "bad JSON"
  python3 - out <<'PY' || fail "bandwidth_after or times.reorder wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
after, t = doc["bandwidth_after"], doc["times"]["reorder"]
print("bandwidth_after", after, "times.reorder", t)
sys.exit(0 if isinstance(after, int) and 0 < after < 100 and t > 0 else 1)
PY
  run 0 solve --gen poisson3d:10 --json
  python3 "$here/check_json.py" out reorder='"none"' bandwidth_before=100 \
    bandwidth_after=100 || fail "bad JSON without --reorder"
  run 0 solve --gen poisson3d:10 --reorder rcm
  grep -Eq '^ +reorder rcm: half bandwidth 100 -> [0-9]+, [0-9.]+ ms$' out \
    || { cat out; fail "no reorder line in the summary"; }
  ;;
*)
  fail "unknown case $case"
  ;;
esac
echo "PASS"
