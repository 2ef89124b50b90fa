#!/bin/bash
# tests/cli/convert.sh KRILL [TESTDATA_MTX_DIR]: `krill convert` and `krill solve A.krill`
# (exit 0 = pass, 1 = fail). A matrix converted to binary and back is the same file; solving
# the .krill gives the solution hash of solving the .mtx (plain and --repro; symmetric and
# not, so the solver chosen from the writer's flags is the one chosen from the matrix; a few
# testdata matrices too); --chunk is checked; a corrupt, truncated or foreign file is
# refused with exit 2 and a message naming it, and leaves an existing output as it was.
set -u
krill=$1 testdata=${2:-}
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

hash_of() { awk '/solution hash/ { print $3 }' "$1"; }

# same_solve FILE.mtx FILE.krill ARGS...: both solves end alike with the same hash
same_solve() {
  local mtx=$1 bin=$2; shift 2
  "$krill" solve "$mtx" "$@" >a.out 2>a.err; local ra=$?
  "$krill" solve "$bin" "$@" >b.out 2>b.err; local rb=$?
  echo "krill solve $mtx|$bin $* -> exit $ra|$rb"
  [ "$ra" -eq "$rb" ] && [ "$ra" -le 1 ] || { cat a.out a.err b.out b.err; fail "exit codes $ra, $rb"; }
  [ -n "$(hash_of a.out)" ] && [ "$(hash_of a.out)" = "$(hash_of b.out)" ] ||
    { cat a.out b.out; fail "$bin: another solution than $mtx"; }
  [ "$(grep '^solver' a.out)" = "$(grep '^solver' b.out)" ] || fail "$bin: another solver"
  grep -q 'krill binary file' b.out || fail "$bin: not reported as a binary file"
}

run 0 gen poisson3d:10 -o p.mtx --quiet
run 0 convert p.mtx p.krill
grep -q '^p.mtx (Matrix Market) -> p.krill (krill binary): 1000 x 1000, 6400 nonzeros, .* bytes in chunks of 1048576, symmetric, positive diagonal' out ||
  { cat out; fail "the convert line"; }
[ "$(head -c 8 p.krill)" = KRILLCSR ] || fail "p.krill does not start with the magic"
run 0 convert p.krill back.mtx --quiet
[ ! -s out ] || fail "--quiet printed something"
cmp -s p.mtx back.mtx || fail "p.mtx -> p.krill -> back.mtx is not the same file"
run 0 convert p.krill copy.bin --chunk 64 --quiet     # binary to binary, any name
cmp -s p.krill copy.bin && fail "--chunk 64 wrote the same file as the default"
same_solve p.mtx p.krill --threads 1
same_solve p.mtx copy.bin --threads 2 --precond jacobi
same_solve p.mtx p.krill --repro --threads 2
run 0 gen convdiff3d:8,2 -o c.mtx --quiet
run 0 convert c.mtx c.krill --quiet
same_solve c.mtx c.krill --threads 1
grep -q '^solver    gmres' b.out || fail "convdiff3d: expected gmres"
same_solve c.mtx c.krill --threads 1 --reorder rcm --rhs random
for name in bcsstk01 west0067 pores_1 saylr1; do
  [ -n "$testdata" ] && [ -f "$testdata/$name.mtx" ] || continue
  run 0 convert "$testdata/$name.mtx" "$name.krill" --quiet
  same_solve "$testdata/$name.mtx" "$name.krill" --threads 1 --maxit 200
done

# --chunk and arguments
run 2 convert p.mtx x.krill --chunk 100
grep -q 'power of two' err || fail "--chunk 100: $(cat err)"
run 2 convert p.mtx x.krill --chunk 32
run 2 convert p.mtx x.mtx --chunk 1K
grep -q 'no chunks' err || fail "--chunk with .mtx output: $(cat err)"
run 2 convert p.mtx
run 0 help convert
grep -q '^usage: krill convert IN OUT' out || fail "krill help convert"
run 0 help
grep -q '^  convert ' out || fail "krill help does not list convert"

# corrupt, truncated, foreign: exit 2 with the file named, no output written
size=$(stat -c %s p.krill)
cp p.krill bad.krill
printf '\xff' | dd of=bad.krill bs=1 seek=$((size - 5)) conv=notrunc status=none
run 2 solve bad.krill --threads 1
grep -q 'bad.krill: checksum mismatch in the val section, chunk 1 of 1' err || fail "$(cat err)"
cp c.krill old.krill
run 2 convert bad.krill old.krill
cmp -s c.krill old.krill || fail "a failed convert changed its output"
head -c $((size - 100)) p.krill >cut.krill
run 2 solve cut.krill --threads 1
grep -q 'cut.krill: .*not a krill binary file\|cut.krill: truncated' err || fail "$(cat err)"
run 2 convert cut.krill x.mtx
grep -q 'truncated' err || fail "$(cat err)"
[ ! -e x.mtx ] || fail "a failed convert left x.mtx"
cp p.krill ver.krill
printf '\x07' | dd of=ver.krill bs=1 seek=12 conv=notrunc status=none
run 2 solve ver.krill
grep -q 'format version 7; this krill reads version 1' err || fail "$(cat err)"
echo "PASS"
