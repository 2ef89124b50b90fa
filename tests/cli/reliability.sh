#!/bin/bash
# reliability.sh KRILL SCENARIO: hostile thread counts and outputs that cannot be written
# (issue 17). Exit 0 = pass, 1 = fail, 77 = skipped (with the reason printed).
set -u
krill=$1 scenario=$2
. "$(dirname "$0")/lib.sh"   # scratch folder, fail, skip, run

need_full() { [ -c /dev/full ] || skip "/dev/full is not a character device here"; }
# clean: no temporary file (.krill-*) is left in the folder.
clean() {
  local left
  left=$(ls -A | grep '^\.krill-')
  [ -z "$left" ] || fail "temporary files left: $left"
}
# says PATTERN: stderr matches the extended regular expression.
says() { grep -Eq -e "$1" err || { cat err; fail "stderr does not match /$1/"; }; }

# The commands that take --threads, each with a small problem.
thread_commands=(
  "solve --gen poisson3d:3 --quiet"
  "formats --gen poisson3d:3 --formats csr --quiet"
  "apsp --gen random:20 --device cpu"
  "dot --n 100 --phi 1 --device cpu --reps 1"
)

case "$scenario" in
threads_limit)   # above KRILL_MAX_THREADS: a usage error naming --threads and the range
  for cmd in "${thread_commands[@]}"; do
    run 2 $cmd --threads 100000
    says "--threads expects an integer in \[1, 4096\], got '100000'"
  done
  # OpenMP's default team, which reads, generates and writes before any context exists
  for cmd in "solve --gen poisson3d:3 --quiet" "gen poisson3d:3 -o g.mtx"; do
    OMP_NUM_THREADS=100000 run 2 $cmd
    says "^krill: OpenMP's default team .*: krill_ctx_create: threads = 0 means OpenMP's \
default, here 100000, more than KRILL_MAX_THREADS = 4096"
  done
  [ -e g.mtx ] && fail "g.mtx was written"
  ;;
threads_refused)   # the system refuses the threads: exit 3 and a message, never libgomp's
  # exit 1 ("Thread creation failed", which reads as "not converged") or a crash. A
  # default thread stack of 1 TiB cannot be mapped, so no thread starts; OpenMP's own
  # default is 1 thread so that nothing before the context starts any.
  for cmd in "${thread_commands[@]}"; do
    (ulimit -s 1073741824 && OMP_NUM_THREADS=1 "$krill" $cmd --threads 4 >out 2>err)
    rc=$?
    echo "krill $cmd --threads 4 (ulimit -s 1 TiB) -> exit $rc"
    [ "$rc" -eq 3 ] || { cat out err; fail "exit code $rc, expected 3"; }
    says "^krill: krill_ctx_create: threads = 4: the system started only 1 of them"
  done
  (ulimit -s 1073741824 && OMP_NUM_THREADS=2 "$krill" gen poisson3d:3 -o g.mtx >out 2>err)
  rc=$?
  echo "krill gen (OMP_NUM_THREADS=2, ulimit -s 1 TiB) -> exit $rc"
  [ "$rc" -eq 3 ] || { cat out err; fail "exit code $rc, expected 3"; }
  says "^krill: OpenMP's default team .*: threads = 2: the system started only 1 of them"
  ;;
stdout_full)   # standard output on a full disk: exit 2 and a message, never exit 0
  need_full
  for cmd in "solve --gen poisson3d:3 --json" "solve --gen poisson3d:3" "gen --list" \
             "apsp --gen random:20 --json" "info" "help" "--version"; do
    "$krill" $cmd >/dev/full 2>err
    rc=$?
    echo "krill $cmd >/dev/full -> exit $rc"
    [ "$rc" -eq 2 ] || { cat err; fail "exit code $rc, expected 2"; }
    says "^krill: standard output: write failed: No space left on device"
  done
  "$krill" formats --gen poisson3d:3 --formats csr --json - --quiet >/dev/full 2>err
  [ $? -eq 2 ] || { cat err; fail "formats --json - >/dev/full: exit code, expected 2"; }
  says "^krill: --json -: write failed: No space left on device"
  [ "$(grep -c . err)" -eq 1 ] || { cat err; fail "more than one message"; }
  run 1 solve --gen poisson3d:6 --maxit 1 --quiet   # nothing written: the outcome stands
  ;;
stdout_closed)   # a pipe whose reader is gone (SIGPIPE ignored), a closed descriptor
  command -v python3 >/dev/null || skip "python3 is not installed"
  for cmd in "gen --list" "solve --gen poisson3d:3 --json"; do
    python3 - "$krill" $cmd >out 2>err <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)                       # no reader: every write fails with EPIPE
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, restore_signals=False)
sys.stderr.write(p.stderr.decode())
sys.exit(p.returncode)
PY
    rc=$?
    echo "krill $cmd | (closed pipe, SIGPIPE ignored) -> exit $rc"
    [ "$rc" -eq 2 ] || { cat err; fail "exit code $rc, expected 2"; }
    says "^krill: standard output: write failed: Broken pipe"
  done
  "$krill" solve --gen poisson3d:3 --history h.csv >&- 2>err
  rc=$?
  echo "krill solve --history h.csv >&- -> exit $rc"
  [ "$rc" -eq 2 ] || { cat err; fail "exit code $rc, expected 2"; }
  says "^krill: standard output: write failed: Bad file descriptor"
  head -1 h.csv | grep -qx 'iteration,residual_norm,relative_residual' \
    || fail "h.csv is not the history alone"
  grep -q '^matrix' h.csv && fail "the report went into h.csv"
  "$krill" solve --gen poisson3d:3 --quiet >&- || fail "--quiet with stdout closed failed"
  ;;
files_full)   # a disk that fills up (RLIMIT_FSIZE, 1 KiB): exit 2 and a message naming the
  # option and file; a file of that name that existed stays as it was, no new or temporary
  # file is left
  trap '' XFSZ
  echo old >old
  for f in g.mtx g.mtx.gz s.mtx h.csv j.json c.csv p.svg d.mtx d.npy p.npy; do cp old "$f"; done
  cases=(
    "g.mtx|gen poisson3d:8 -o g.mtx"
    "g.mtx.gz|gen poisson3d:8 -o g.mtx.gz"
    "s.mtx|solve --gen poisson3d:8 --out s.mtx --quiet"
    "--history h.csv|solve --gen poisson3d:12 --rtol 1e-12 --history h.csv --quiet"
    "--json j.json|formats --gen poisson3d:8 --json j.json --quiet"
    "--csv c.csv|formats --gen poisson3d:8 --csv c.csv --quiet"
    "--plot p.svg|formats --gen poisson3d:8 --plot p.svg --quiet"
    "--out d.mtx|apsp --gen random:100 --device cpu --out d.mtx"
    "d.npy|apsp --gen random:100 --device cpu --out d.npy"
    "p.npy|apsp --gen random:100 --device cpu --paths --pred p.npy"
  )
  for c in "${cases[@]}"; do
    names=${c%%|*} cmd=${c#*|}
    (ulimit -f 1 && "$krill" $cmd >out 2>err)
    rc=$?
    echo "krill $cmd (ulimit -f 1) -> exit $rc"
    [ "$rc" -eq 2 ] || { cat out err; fail "exit code $rc, expected 2"; }
    says "^krill( apsp)?: $names: write failed: File too large"
    file=${names#* }
    cmp -s old "$file" || fail "$file was changed"
  done
  (ulimit -f 1 && "$krill" gen poisson3d:8 -o new.mtx >out 2>err)
  [ $? -eq 2 ] && [ ! -e new.mtx ] || fail "a failed write left new.mtx"
  clean
  ;;
files_unwritable)   # a folder that does not exist, a file in place of a folder, a device:
  # exit 2 and a message; nothing is left, and the device stays a device
  need_full
  echo file >plain
  for dir in no-such-dir plain; do
    for c in "gen poisson3d:3 -o $dir/g.mtx" "solve --gen poisson3d:3 --out $dir/s.mtx" \
             "solve --gen poisson3d:3 --history $dir/h.csv" \
             "formats --gen poisson3d:3 --json $dir/j.json" \
             "apsp --gen random:20 --device cpu --out $dir/d.mtx" \
             "apsp --gen random:20 --device cpu --out $dir/d.npy"; do
      run 2 $c
      says "$dir/[a-z]\.[a-z]+: cannot create: (No such file or directory|Not a directory)"
    done
  done
  if [ "$(id -u)" -ne 0 ]; then   # root writes into any folder
    mkdir ro && chmod 500 ro
    run 2 solve --gen poisson3d:3 --history ro/h.csv
    says "ro/h.csv: cannot create: Permission denied"
  fi
  ln -s /dev/full full.npy
  for c in "gen poisson3d:3 -o /dev/full" "solve --gen poisson3d:3 --history /dev/full --quiet" \
           "formats --gen poisson3d:3 --csv /dev/full --quiet" \
           "apsp --gen random:20 --device cpu --out full.npy"; do
    run 2 $c
    says "write failed: No space left on device"
    [ -c /dev/full ] || fail "/dev/full is no longer a device"
  done
  [ -L full.npy ] || fail "the link full.npy was replaced"
  clean
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo "PASS"
