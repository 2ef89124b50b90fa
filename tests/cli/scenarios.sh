#!/bin/bash
# scenarios.sh KRILL SCENARIO: the multi-step CLI tests. Exit 0 = pass, 1 = fail,
# 77 = skipped (with the reason printed). Test data: $KRILL_TESTDATA.
set -u
krill=$1 scenario=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

need_python() { command -v python3 >/dev/null || skip "python3 is not installed"; }

case "$scenario" in
json)        # every field with its type, nothing else on stdout, no progress line
  need_python
  run 0 solve --gen poisson3d:10 --json
  python3 "$here/check_json.py" out converged=true solver='"cg"' n=1000 nnz=6400 \
    || fail "bad JSON"
  [ -s err ] && { cat err; fail "stderr not empty when piped"; }
  ;;
runs)        # --runs N: N more solves after the reported one, their median in both reports
  need_python
  run 0 solve --gen poisson3d:10 --runs 3 --json
  python3 - out <<'PY' || fail "bad --runs JSON"
import json, sys
t = json.load(open(sys.argv[1]))["times"]
assert t["runs"] == 3 and 0 < t["median_total"], t
PY
  run 0 solve --gen poisson3d:10 --runs 2
  grep -q 'median of 2 more solves' out || { cat out; fail "no --runs line in the report"; }
  run 2 solve --gen poisson3d:10 --runs 0
  ;;
maxit)       # not converged: exit 1, a reason, exactly maxit iterations
  need_python
  run 1 solve --gen poisson3d:10 --maxit 2 --json
  python3 "$here/check_json.py" out converged=false iterations=2 || fail "bad JSON"
  grep -Eq '"reason": "[^"]*max' out || fail "reason does not mention the iteration limit"
  ;;
malformed)   # a garbage number on line 4: the message names FILE:LINE
  printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2.0\n2 2 1.5x\n3 3 1\n' >bad.mtx
  run 2 solve bad.mtx
  cat err
  grep -q 'bad.mtx:4' err || fail "message does not name bad.mtx:4"
  ;;
default_solver)   # symmetric with a zero diagonal: indefinite, so MINRES; SPD: CG; nonsym: GMRES
  printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1.0\n3 2 1.0\n3 3 2.0\n' >indef.mtx
  run 0 solve indef.mtx
  grep -Eq '^solver +minres \(A is symmetric with diagonal entries of both signs or zero' out ||
    { cat out; fail "not minres"; }
  run 0 solve --gen stokes2d:4
  grep -Eq '^solver +minres ' out || { cat out; fail "not minres for a saddle point"; }
  run 1 solve --gen stokes2d:4 --solver cg
  grep -q 'try --solver minres' out || { cat out; fail "CG's indefinite stop does not suggest minres"; }
  run 0 solve --gen poisson3d:4
  grep -Eq '^solver +cg ' out || { cat out; fail "not cg for an SPD matrix"; }
  run 0 solve --gen convdiff3d:4
  grep -Eq '^solver +gmres \(A is not symmetric' out || { cat out; fail "not gmres"; }
  ;;
gen_solve)   # krill gen, then solve the file it wrote
  need_python
  run 0 gen poisson3d:4 -o t.mtx
  head -1 t.mtx | grep -q '^%%MatrixMarket matrix coordinate real general' \
    || fail "t.mtx has no Matrix Market header"
  run 0 solve t.mtx --json
  python3 "$here/check_json.py" out converged=true n=64 nnz=352 solver='"cg"' \
    || fail "bad JSON"
  ;;
out)         # --out writes x, readable back with the right length and x ~ 1
  run 0 solve --gen poisson3d:6 --out x.mtx --rtol 1e-10 --quiet
  [ -s out ] && fail "--quiet printed on stdout"
  run 0 solve --gen poisson3d:6 --rhs x.mtx --quiet    # and read back by krill itself
  awk 'BEGIN { n = -1 }
       /^%/ { next }
       n < 0 { if ($1 != 216 || $2 != 1) exit 1; n = 0; next }
       { n++; e = $1 - 1; if (e < 0) e = -e; if (e > 1e-6) exit 2 }
       END { if (n != 216) exit 3 }' x.mtx || fail "x.mtx: wrong size or x != 1 (awk $?)"
  ;;
history)     # --history: a header and iterations + 1 rows
  need_python
  run 0 solve --gen poisson3d:8 --history h.csv --json
  iterations=$(python3 -c 'import json; print(json.load(open("out"))["iterations"])')
  rows=$(($(wc -l <h.csv) - 1))
  echo "iterations $iterations, history rows $rows"
  [ "$rows" -eq $((iterations + 1)) ] || fail "h.csv has $rows rows, expected $((iterations + 1))"
  head -1 h.csv | grep -q '^iteration,' || fail "h.csv has no header"
  ;;
gmres)       # a nonsymmetric matrix gets GMRES, and it converges
  need_python
  run 0 solve --gen convdiff3d:8 --json
  python3 "$here/check_json.py" out converged=true solver='"gmres"' || fail "bad JSON"
  ;;
solvers)     # fgmres and bicgstab converge and say so (fgmres with the default dcgs2); a preconditioner with a parameter
  need_python
  run 0 solve --gen convdiff3d:8,2 --solver fgmres --precond jacobi --restart 10 --json
  python3 "$here/check_json.py" out converged=true solver='"fgmres"' precond='"jacobi"' \
    ortho='"dcgs2"' restart=10 || fail "bad JSON for fgmres"
  run 0 solve --gen convdiff3d:8,2 --solver bicgstab --json
  python3 "$here/check_json.py" out converged=true solver='"bicgstab"' precond='"none"' \
    ortho=null restart=null precond_detail=null || fail "bad JSON for bicgstab"
  run 0 solve --gen elasticity3d:4,2,2 --solver cg --precond bjacobi:3 --json
  python3 "$here/check_json.py" out converged=true precond='"bjacobi:3"' || fail "bad JSON"
  python3 -c 'import json, sys; d = json.load(open("out"))
sys.exit(0 if isinstance(d["precond_detail"], str) and d["precond_detail"] else 1)' \
    || fail "no precond_detail for bjacobi:3"
  run 0 solve --gen convdiff3d:6 --solver bicgstab --precond jacobi
  grep -Eq '^solver +bicgstab \(as asked\)' out || { cat out; fail "no bicgstab line"; }
  grep -Eq '^ +precond jacobi, ' out || { cat out; fail "no precond line"; }
  ;;
rhs_length)  # a right-hand side of the wrong length is refused
  run 0 gen poisson3d:3 -o small.mtx
  run 0 solve small.mtx --out x27.mtx --quiet
  run 2 solve --gen poisson3d:4 --rhs x27.mtx
  grep -q 'x27.mtx' err || fail "message does not name the vector file"
  ;;
no_gpu)      # --device gpu without a GPU: exit 2 with a clear message
  "$krill" info >info.txt 2>&1 || fail "krill info failed"
  grep -Eq '^ +cuda:' info.txt && skip "a GPU is present"
  run 2 solve --gen poisson3d:4 --device gpu
  cat err
  grep -Eiq 'gpu|cuda|device' err || fail "the message does not say a GPU is missing"
  ;;
rectangular) # a rectangular matrix is refused
  file=${KRILL_TESTDATA:-}/mtx/ash219.mtx
  [ -f "$file" ] || skip "$file is absent"
  run 2 solve "$file"
  cat err
  grep -Eiq 'rectangular|square' err || fail "the message does not say why"
  ;;
complex)     # a complex matrix is refused
  manifest=${KRILL_TESTDATA:-}/MANIFEST.tsv
  [ -f "$manifest" ] || skip "$manifest is absent"
  rel=$(awk -F'\t' '$9 == "complex" && $1 ~ /^mtx\// { print $1; exit }' "$manifest")
  [ -n "$rel" ] || skip "no complex matrix in $manifest"
  [ -f "$KRILL_TESTDATA/$rel" ] || skip "$KRILL_TESTDATA/$rel is absent"
  run 2 solve "$KRILL_TESTDATA/$rel"
  cat err
  grep -iq 'complex' err || fail "the message does not say complex"
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo "PASS"
