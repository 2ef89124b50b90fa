#!/bin/bash
# apsp.sh KRILL SCENARIO: the multi-step tests of `krill apsp`. Exit 0 = pass, 1 = fail,
# 77 = skipped (with the reason printed). Timings are printed by krill but never asserted.
# Test data: graphs/ of $KRILL_TESTDATA (the shared set), else of $KRILL_TESTDATA_LOCAL
# (the set committed with krill; doc/testdata.md). The numpy parts run where python3 has
# numpy and are skipped quietly elsewhere (CI installs nothing for them).
set -u
krill=$1 scenario=$2
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

need_python() { command -v python3 >/dev/null || skip "python3 is not installed"; }
have_numpy() { command -v python3 >/dev/null && python3 -c 'import numpy' 2>/dev/null; }
# testdata REL: the path of a test data file (the shared set first), or "" when absent.
testdata() {
  local dir
  for dir in "${KRILL_TESTDATA:-}" "${KRILL_TESTDATA_LOCAL:-}"; do
    [ -n "$dir" ] && [ -f "$dir/$1" ] && { printf '%s\n' "$dir/$1"; return; }
  done
  printf '\n'
}
have_gpu() { "$krill" info 2>/dev/null | grep -Eq '^ +cuda:'; }
# has ERE: stdout has a line matching ERE.
has() { grep -Eq -e "$1" out || { cat out; fail "no line matching /$1/"; }; }
# checksum: the 16 hex digits of the summary's checksum line.
checksum() { sed -nE 's/^ +checksum ([0-9a-f]{16}) .*/\1/p' out; }
# json_get KEY: a field of the JSON object in out (nested with dots: times.total).
json_get() {
  python3 -c 'import json, sys
v = json.load(open("out"))
for k in sys.argv[1].split("."): v = v[k]
print(json.dumps(v))' "$1"
}

# The Dijkstra example graph (1-based in the file): the shortest path 1 -> 5 is 1 3 6 5 of
# length 9 + 2 + 9 = 20 (1 2 4 5 is 32, 1 3 4 5 is 26, 1 6 5 is 23); vertex 5 has no arc
# out, so nothing is reachable from it.
write_small() {
  cat >small.gr <<'EOF'
c the Dijkstra example: 0-based path 0 -> 4 is 0 2 5 4, length 20
p sp 6 9
a 1 2 7
a 1 3 9
a 1 6 14
a 2 3 10
a 2 4 15
a 3 4 11
a 3 6 2
a 4 5 6
a 6 5 9
EOF
}

case "$scenario" in
summary)     # every line of the summary; int32 chosen for a generated graph, and why
  run 0 apsp --gen random:300 --device cpu
  cat out
  has '^graph +random:300 \(generated\)$'
  has '^ +n 300, arcs [0-9]+$'
  has '^ +self loops 0, negative arcs 0, weights in \[[0-9]+, [0-9]+\], all integers$'
  has '^method +[a-z-]+ \(.+\)$'
  has '^device +cpu: '
  has '^weights +int32 \(generated graphs have integer weights\)$'
  has '^time +generate [0-9.]+ ms, solve:$'
  for row in setup transfer compute total; do has "^ +$row +[0-9.]+ ms"; done
  has '^rate +[0-9.e+]+ relaxations min\(a \+ b, c\), [0-9.e+]+ per second$'
  has "^ +([0-9.]+% of the device's measured min-plus peak|the device's min-plus peak could not)"
  has '^result +unreachable pairs [0-9]+, largest finite distance [0-9]+$'
  has '^ +checksum [0-9a-f]{16} \(FNV-1a of D'"'"'s bytes; int32: the same on every method'
  [ -s err ] && { cat err; fail "stderr not empty (no terminal: no progress line)"; }
  # a blocked method splits the compute time by tile kind (the paper's Table 4)
  run 0 apsp --gen random:300 --device cpu --method fw-a
  for row in pivot panels rest; do has "^ +$row +[0-9.]+ ms"; done
  has '^method +fw-a \(asked for\)$'
  ;;
json)        # one object, every field with its type
  need_python
  write_small
  run 0 apsp small.gr --json --device cpu --path 0 4
  [ -s err ] && { cat err; fail "stderr not empty"; }
  python3 - <<'EOF' || fail "bad JSON"
import json, sys
text = open("out").read()
d = json.loads(text)                       # raises on trailing text after the object
num = (int, float)
types = {"n": int, "m": int, "weights": str, "method": str, "why": str, "device": str,
         "tile": int, "times": dict, "relaxations": num, "relax_per_second": num,
         "peak_relax_per_second": num + (type(None),), "peak_fraction": num + (type(None),),
         "unreachable": int, "max_finite": num, "checksum": str,
         "negative_cycle": type(None), "path": dict}
bad = [k for k, t in types.items()
       if k not in d or not isinstance(d[k], t) or (t is int and isinstance(d[k], bool))]
times = ("setup", "upload", "pivot", "panels", "rest", "compute", "download", "total")
bad += ["times." + k for k in times
        if not isinstance(d["times"].get(k), num) or d["times"][k] < 0]
want = {"n": 6, "m": 9, "weights": "int32", "unreachable": 16, "max_finite": 21,
        "path": {"from": 0, "to": 4, "length": 20, "vertices": [0, 2, 5, 4]}}
bad += [f"{k} = {d.get(k)!r}, expected {v!r}" for k, v in want.items() if d.get(k) != v]
if len(d["checksum"]) != 16 or any(c not in "0123456789abcdef" for c in d["checksum"]):
    bad.append("checksum is not 16 hex digits")
print(text)
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
  ;;
path)        # the known shortest path, also with --path U,V and in float and double
  write_small
  for form in "--path 0 4" "--path 0,4" "--path=0,4"; do
    # shellcheck disable=SC2086
    run 0 apsp small.gr --device cpu $form
    has '^path +0 -> 4: length 20, 4 vertices: 0 2 5 4$'
  done
  for w in float double; do
    run 0 apsp small.gr --device cpu --weights $w --path 0 4
    has "^weights +$w \(as asked\)$"
    has '^path +0 -> 4: length 20, 4 vertices: 0 2 5 4$'
  done
  run 0 apsp small.gr --device cpu --path 4 0
  has '^path +4 -> 0: unreachable'
  run 0 apsp small.gr --device cpu --path 3 3
  has '^path +3 -> 3: length 0, 1 vertices: 3$'
  has '^weights +int32 \(every weight is an integer\)$'
  ;;
negative)    # negative arcs without a negative cycle: the path takes them
  cat >neg.gr <<'EOF'
p sp 4 5
a 1 2 4
a 1 3 5
a 3 2 -3
a 2 4 1
a 3 4 2
EOF
  run 0 apsp neg.gr --device cpu --path 0 3
  has '^ +self loops 0, negative arcs 1, weights in \[-3, 5\], all integers$'
  has '^path +0 -> 3: length 3, 4 vertices: 0 2 1 3$'
  run 2 apsp neg.gr --device cpu --method dijkstra
  cat err
  grep -Eiq 'negative' err || fail "dijkstra with a negative arc: the message does not say why"
  ;;
negative_cycle)   # exit 2, the message names a vertex of the cycle; --json says which
  cat >cycle.gr <<'EOF'
p sp 4 4
a 1 2 1
a 2 3 -3
a 3 1 1
a 3 4 1
EOF
  run 2 apsp cycle.gr --device cpu
  cat err
  grep -Eiq '^krill: .*negative cycle' err || fail "the message does not say negative cycle"
  grep -Eq '[0-2]' err || fail "the message names no vertex"
  [ -s out ] && fail "a summary despite the negative cycle"
  run 2 apsp cycle.gr --device cpu --paths
  cat err
  if command -v python3 >/dev/null; then
    run 2 apsp cycle.gr --device cpu --json
    v=$(json_get negative_cycle) || fail "no JSON on stdout"
    echo "negative_cycle: $v"
    case $v in 0|1|2) ;; *) fail "negative_cycle = $v is not a vertex of the cycle";; esac
  fi
  file=$(testdata graphs/negative-cycles-example.gr)
  if [ -n "$file" ]; then
    run 2 apsp "$file" --device cpu
    grep -Eiq 'negative cycle' err || fail "$file: no negative cycle reported"
  fi
  ;;
malformed)   # a bad arc line: the message names FILE:LINE
  printf 'p sp 3 2\na 1 2 5\na 2 x 1\n' >bad.gr
  run 2 apsp bad.gr
  cat err
  grep -q 'bad.gr:3' err || fail "message does not name bad.gr:3"
  ;;
edgelist)    # ids remapped from 0; --undirected; non-integer weights give double
  printf '# a path 10 - 20 - 30\n10 20 1.5\n20 30 2.5\n' >e.txt
  run 0 apsp e.txt --device cpu --path 0 2
  has '^weights +double \(some weights are not integers\)$'
  has '^path +0 -> 2: length 4, 3 vertices: 0 1 2$'
  run 0 apsp e.txt --device cpu --path 2 0
  has '^path +2 -> 0: unreachable'
  run 0 apsp e.txt --device cpu --path 2 0 --undirected
  has '^path +2 -> 0: length 4, 3 vertices: 2 1 0$'
  run 0 apsp e.txt --device cpu --ids 0 --path 10 30
  has '^ +n 31, '
  has '^path +10 -> 30: length 4, 3 vertices: 10 20 30$'
  write_small
  run 2 apsp small.gr --device cpu --undirected
  grep -q -- '--undirected applies to edge lists' err || { cat err; fail "not refused"; }
  ;;
outputs)     # --out / --pred .npy of the right size; numpy reads them back where present
  run 0 apsp --gen random:300 --device cpu --out d.npy --pred p.npy
  has '^output +D -> d.npy \(int32, 300 x 300\)$'
  has '^ +P -> p.npy \(int32, -9999 = no predecessor\)$'
  sum=$(checksum)
  for f in d.npy p.npy; do
    size=$(wc -c <$f)
    data=$((300 * 300 * 4))
    echo "$f: $size bytes"
    [ "$size" -gt "$data" ] && [ $(((size - data) % 64)) -eq 0 ] \
      && [ $((size - data)) -le 256 ] || fail "$f has $size bytes, not a header + $data"
    head -c 6 $f | od -c | grep -q 'N   U   M   P   Y' || fail "$f has no .npy magic"
  done
  run 0 apsp --gen random:300 --device cpu --weights double --out d8.npy
  [ $(($(wc -c <d8.npy) % 64)) -eq 0 ] || fail "d8.npy: header + data not 64-aligned"
  if have_numpy; then
    python3 - "$sum" <<'EOF' || fail "numpy disagrees"
import sys
import numpy as np
d, p, d8 = np.load("d.npy"), np.load("p.npy"), np.load("d8.npy")
def fnv1a(data, basis=0xcbf29ce484222325):
    h = basis
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"
h = fnv1a(d.tobytes())
print(f"numpy: D {d.dtype} {d.shape}, P {p.dtype} {p.shape}, FNV-1a {h}")
assert d.dtype == np.int32 and d.shape == (300, 300) and p.dtype == np.int32
# 1469598103934665603 is FNV's offset basis 14695981039346656037 less its last digit
assert fnv1a(d.tobytes(), 1469598103934665603) != sys.argv[1], \
    "the summary's checksum uses the offset basis 1469598103934665603, not FNV-1a's"
assert h == sys.argv[1], "checksum of the file differs from the summary's"
assert (np.diag(p) == -9999).all() and (np.diag(d) == 0).all()
reach = d < 1073741823
assert (d8[reach] == d[reach]).all() and np.isinf(d8[~reach]).all()
# P is consistent with D: D[u][v] = D[u][P[u][v]] + w(P[u][v] -> v) >= D[u][P[u][v]]
u, v = np.nonzero(reach & (p >= 0))
assert (d[u, v] >= d[u, p[u, v]]).all()
EOF
  else
    echo "numpy is absent: the files were not loaded"
  fi
  # D as Matrix Market array: column-major, row u column v = D[u][v]; unreachable = INF
  write_small
  run 0 apsp small.gr --device cpu --out d.mtx
  head -1 d.mtx | grep -q '^%%MatrixMarket matrix array integer general$' || fail "d.mtx header"
  awk '/^%/ { next }
       !size { size = 1; if ($1 != 6 || $2 != 6) exit 1; next }
       { v = int(k / 6); u = k % 6; k++; if (u == 0 && v == 4 && $1 != 20) exit 2
         if (u == 4 && v == 0 && $1 != 1073741823) exit 3 }
       END { if (k != 36) exit 4 }' d.mtx || fail "d.mtx content (awk $?)"
  run 0 apsp small.gr --device cpu --weights double --out d8.mtx
  grep -q '^inf$' d8.mtx || fail "no inf in d8.mtx"
  # Matrix Market text is for small graphs only
  run 2 apsp --gen random:2001 --device cpu --out big.mtx
  grep -q 'use .npy' err || { cat err; fail "no advice to use .npy"; }
  [ -e big.mtx ] && fail "big.mtx was written"
  ;;
methods)     # int32: the same checksum on every method and thread count (bit for bit)
  ref=
  for m in plain fw-a fw-b fw-rec dijkstra; do
    for t in 1 2; do
      run 0 apsp --gen random:300 --device cpu --method $m --threads $t
      s=$(checksum)
      echo "  $m, $t threads: $s"
      [ -n "$s" ] || fail "no checksum"
      [ -z "$ref" ] && ref=$s
      [ "$s" = "$ref" ] || fail "$m on $t threads: checksum $s, plain gave $ref"
    done
  done
  ;;
out_of_core) # --device-memory below D: out of core, said so, the in-core checksum
  run 0 apsp --gen random:300 --device cpu
  ref=$(checksum)
  for cap in 64K 256K; do
    run 0 apsp --gen random:300 --device cpu --device-memory $cap
    has '^ +out of core: D in host memory, blocks of [0-9]+ streamed'
    [ "$(checksum)" = "$ref" ] || fail "out of core ($cap): checksum $(checksum), in core $ref"
  done
  run 0 apsp --gen random:300 --device cpu --device-memory 64K --json
  json_get out_of_core | grep -Eq '^[1-9][0-9]*$' || fail "json out_of_core is not a side"
  run 2 apsp --gen random:300 --device cpu --device-memory 64K --paths
  grep -q 'distances only' err || { cat err; fail "paths out of core not refused"; }
  run 2 apsp --gen random:300 --device cpu --device-memory 12Q
  grep -q -- "--device-memory '12Q'" err || { cat err; fail "bad byte count not named"; }
  ;;
testdata)    # the same on a testdata graph (DIMACS, 1024 vertices)
  file=$(testdata graphs/Random4-n.10.0.gr)
  [ -n "$file" ] || skip "graphs/Random4-n.10.0.gr is in neither test data folder"
  ref=
  for m in fw-a fw-b fw-rec dijkstra plain; do
    for t in 1 2; do
      [ $m = plain ] && [ $t = 1 ] && continue     # 1e9 scalar relaxations: keep it short
      run 0 apsp "$file" --device cpu --method $m --threads $t
      s=$(checksum)
      echo "  $m, $t threads: $s"
      [ -n "$s" ] || fail "no checksum"
      [ -z "$ref" ] && ref=$s
      [ "$s" = "$ref" ] || fail "$m on $t threads: checksum $s, fw-a gave $ref"
    done
  done
  has '^ +n 1024, arcs [0-9]+'
  ;;
gpu)         # every GPU method gives the CPU's int32 checksum
  have_gpu || skip "no GPU"
  run 0 apsp --gen random:300 --device cpu --method fw-a
  ref=$(checksum)
  for m in plain fw-a fw-b fw-rec; do
    run 0 apsp --gen random:300 --device gpu --method $m
    has '^device +cuda'
    s=$(checksum)
    echo "  gpu $m: $s (cpu $ref)"
    [ "$s" = "$ref" ] || fail "gpu $m: checksum $s, the CPU gave $ref"
  done
  file=$(testdata graphs/Random4-n.10.0.gr)
  # quick mode (KRILL_TEST_QUICK, under compute-sanitizer): the generated graph alone
  case "${KRILL_TEST_QUICK:-0}" in 0|"") ;; *) echo "  quick: ${file:-the testdata graph} left out"; file="";; esac
  if [ -n "$file" ]; then
    run 0 apsp "$file" --device cpu --method dijkstra
    ref=$(checksum)
    run 0 apsp "$file" --device gpu
    [ "$(checksum)" = "$ref" ] || fail "$file: the GPU's checksum differs from the CPU's"
  fi
  ;;
no_gpu)      # --device gpu without a GPU: exit 2 with a clear message
  have_gpu && skip "a GPU is present"
  run 2 apsp --gen random:50 --device gpu
  cat err
  grep -Eiq 'gpu|cuda|device' err || fail "the message does not say a GPU is missing"
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo "PASS: $scenario"
exit 0
