#!/bin/bash
# formats.sh KRILL SCENARIO: the multi-step tests of `krill formats`. Exit 0 = pass,
# 1 = fail, 77 = skipped (with the reason printed). Test data: $KRILL_TESTDATA. Timings are
# never asserted; check_formats.py derives everything else from the .mtx on its own.
set -u
krill=$1 scenario=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

need_python() { command -v python3 >/dev/null || skip "python3 is not installed"; }
# testdata FILE: file=the path of mtx/FILE, or skip.
testdata() {
  file=${KRILL_TESTDATA:-}/mtx/$1
  [ -f "$file" ] || skip "$file is absent"
}

case "$scenario" in
table)       # a row per format on the CPU; every registered format is a row or said absent
  run 0 formats --gen poisson3d:10 --device cpu --reps 3
  cat out
  grep -Eq '^krill formats: poisson3d:10 \(generated\), 1000 x 1000, 6400 nonzeros$' out \
    || fail "no header line naming the matrix and its sizes"
  grep -Eq '^device +cpu' out || fail "no device line"
  grep -Eq '^matrix +N 1000, N_z 6400, K 7 ' out || fail "no matrix quantities"
  grep -Eq '^format +variant +MB +vs csr' out || fail "no column titles"
  for name in csr ell ellr; do
    grep -Eq "^$name +[^ ]+ +[0-9.]+ +[0-9.]+ " out || fail "no measured row for $name"
  done
  registered=$("$krill" info | sed -n 's/^formats *//p' | tr -d ',')
  [ -n "$registered" ] || fail "krill info lists no formats"
  for name in $registered; do
    grep -Eq "^$name +" out || grep -Eq "^not on the CPU:.*\\b$name\\b" out \
      || fail "$name is neither a row nor listed as not on the CPU"
  done
  grep -Eq '^auto -> [a-z]' out || fail "no row for auto and the format it chose"
  [ "$(grep -Ec '^[a-z].*[0-9]\* ' out)" -eq 1 ] || fail "not exactly one fastest mark"
  grep -Eq '^\* fastest: [a-z]' out || fail "no line naming the fastest"
  [ -s err ] && { cat err; fail "stderr not empty"; }
  ;;
outputs)     # --json, --csv, --plot from a file, checked against the file; --quiet
  need_python
  run 0 gen poisson3d:10 -o p.mtx
  run 0 formats p.mtx --device cpu --reps 3 --json f.json --csv f.csv --plot f.svg --quiet
  [ -s out ] && { cat out; fail "--quiet printed on stdout"; }
  python3 "$here/check_formats.py" p.mtx f.json --csv f.csv --svg f.svg --expect csr,ell,ellr \
    || fail "outputs do not match p.mtx"
  ;;
stdout)      # --json - and --csv -: stdout holds only that, and no table
  need_python
  run 0 formats --gen poisson3d:6 --device cpu --reps 2 --formats csr,ell --json -
  python3 -c '
import json, sys
sys.exit(list(json.load(open("out"))["formats"]) != ["csr", "ell"])' \
    || { cat out; fail "stdout is not the JSON object with csr and ell"; }
  run 0 formats --gen poisson3d:6 --device cpu --reps 2 --formats csr,ell --csv -
  [ "$(wc -l <out)" -eq 3 ] || { cat out; fail "CSV on stdout is not a header and 2 lines"; }
  head -1 out | grep -q '^format,measured,' || fail "CSV has no header"
  ;;
escape)      # a file name with XML's special characters: the SVG stays well-formed
  need_python
  run 0 gen poisson3d:4 -o 'a&b<"c">.mtx'
  run 0 formats 'a&b<"c">.mtx' --device cpu --reps 2 --json f.json --plot f.svg
  python3 "$here/check_formats.py" 'a&b<"c">.mtx' f.json --svg f.svg || fail "bad SVG"
  ;;
not_built)   # a format the device lacks gets a row that says why; the others still run
  need_python
  run 0 formats --gen poisson3d:6 --device cpu --reps 2 --formats csr,cusparse,ell --json f.json
  "$krill" formats --gen poisson3d:6 --device cpu --reps 2 --formats csr,cusparse,ell >table
  cat table
  grep -Eq '^cusparse +not built: .*(CPU|cpu)' table || fail "no row saying why cusparse is absent"
  grep -Eq '^ell +padded' table || fail "ell was not measured after the failure"
  python3 -c '
import json, sys
f = json.load(open("f.json"))["formats"]
sys.exit(not (f["csr"]["measured"] and f["ell"]["measured"] and not f["cusparse"]["measured"]
              and "CPU" in f["cusparse"]["error"]))' || { cat f.json; fail "bad JSON rows"; }
  ;;
reorder)     # --reorder rcm: the header gives the bandwidth before and after
  need_python
  run 0 gen poisson3d:8 -o p.mtx
  run 0 formats p.mtx --reorder rcm --device cpu --reps 2 --json f.json
  "$krill" formats p.mtx --reorder rcm --device cpu --reps 2 --formats csr >table
  cat table
  grep -Eq '^reorder +rcm: half bandwidth 64 -> [0-9]+$' table || fail "no bandwidth line"
  python3 "$here/check_formats.py" p.mtx f.json --reordered || fail "outputs do not match p.mtx"
  ;;
rectangular) # SpMV needs no square matrix; renumbering does
  need_python
  testdata ash219.mtx
  run 0 formats "$file" --device cpu --reps 2 --json f.json
  python3 "$here/check_formats.py" "$file" f.json || fail "outputs do not match $file"
  run 2 formats "$file" --reorder rcm
  cat err
  grep -Eq -- '--reorder.*(square|rectangular)' err || fail "the message does not say why"
  ;;
testdata)    # a real symmetric matrix (stored as a triangle) from the test data
  need_python
  testdata bcsstk01.mtx
  run 0 formats "$file" --device cpu --reps 2 --json f.json --csv f.csv --plot f.svg
  python3 "$here/check_formats.py" "$file" f.json --csv f.csv --svg f.svg --expect csr,ell,ellr \
    || fail "outputs do not match $file"
  ;;
gpu)         # on a GPU: cusparse and the forced CSR kernels are rows, with ratios to cuSPARSE
  need_python
  "$krill" info >info.txt 2>&1 || { cat info.txt; fail "krill info failed"; }
  grep -Eq '^ +cuda:' info.txt || skip "no GPU"
  run 0 gen poisson3d:10 -o p.mtx
  run 0 formats p.mtx --device gpu --reps 5 --json f.json --csv f.csv --plot f.svg
  cat out
  grep -Eq '^format .* vs cusparse$' out || fail "no vs cusparse column"
  for name in csr:cyclic csr:warp cusparse; do
    grep -Eq "^$name +" out || fail "no row for $name"
  done
  python3 "$here/check_formats.py" p.mtx f.json --csv f.csv --svg f.svg --gpu \
    --expect csr,ell,ellr,cusparse || fail "outputs do not match p.mtx"
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo "PASS"
