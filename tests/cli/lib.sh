# tests/cli/lib.sh - what the multi-step CLI test scripts share (sourced after they set
# `krill`): a scratch folder that is the working directory and is removed at exit; fail
# (exit 1) and skip (exit 77, ctest's SKIP_RETURN_CODE) with a message; run, which runs
# krill with stdout in ./out and stderr in ./err and checks its exit code (a script may
# define its own run after sourcing this).
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
# run EXIT ARGS...: run krill, keep stdout in out, stderr in err, check the exit code.
run() {
  local expected=$1; shift
  "$krill" "$@" >out 2>err
  local rc=$?
  echo "krill $* -> exit $rc"
  [ "$rc" -eq "$expected" ] || { cat out err; fail "exit code $rc, expected $expected"; }
}
