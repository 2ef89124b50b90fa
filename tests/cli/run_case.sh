#!/bin/sh
# run_case.sh EXIT STDOUT_ERE STDERR_ERE -- COMMAND [ARGS...]
# Run COMMAND; fail unless it exits with EXIT, its stdout matches STDOUT_ERE and its stderr
# matches STDERR_ERE (an empty pattern is not checked). An expected exit code 2 (bad usage
# or input) also requires a message on stderr that starts with "krill".
set -u
expected=$1 out_re=$2 err_re=$3
shift 3
[ "$1" = "--" ] && shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
if [ "$rc" -ne "$expected" ]; then
  echo "FAIL: exit code $rc, expected $expected"; fail=1
fi
if [ -n "$out_re" ] && ! grep -Eq -e "$out_re" "$tmp/out"; then
  echo "FAIL: stdout does not match /$out_re/"; fail=1
fi
if [ -n "$err_re" ] && ! grep -Eq -e "$err_re" "$tmp/err"; then
  echo "FAIL: stderr does not match /$err_re/"; fail=1
fi
if [ "$expected" -eq 2 ] && ! grep -Eq '^krill' "$tmp/err"; then
  echo "FAIL: no 'krill...' message on stderr"; fail=1
fi
echo "command: $*"
echo "--- stdout"; cat "$tmp/out"
echo "--- stderr"; cat "$tmp/err"
exit $fail
