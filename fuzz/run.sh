#!/usr/bin/env bash
# fuzz/run.sh BUILD SECONDS [HARNESS...] - run each libFuzzer harness of BUILD/fuzz for
# SECONDS seconds (all eight when none is named), starting from its committed seeds in
# fuzz/corpus/HARNESS, with the dictionary fuzz/mm.dict, fuzz/graph.dict or fuzz/bin.dict. New inputs go to BUILD/fuzz-corpus/HARNESS (the committed corpus is
# not touched), logs to BUILD/fuzz-logs/HARNESS.log, a crashing input to
# BUILD/fuzz-artifacts/. Prints each harness's final executions, cov and ft; exits 1 if
# any harness found a crash, a leak, a sanitizer report or a violated property.
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD SECONDS [HARNESS...]}
seconds=${2:?usage: fuzz/run.sh BUILD SECONDS [HARNESS...]}
shift 2
src="$(cd "$(dirname "$0")" && pwd)"
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] ||
  harnesses=(mm mm_gz vector graph_dimacs graph_metis graph_edgelist graph_mtx bin)
mkdir -p "$build/fuzz-logs" "$build/fuzz-artifacts"
failed=0
for h in "${harnesses[@]}"; do
  exe="$build/fuzz/fuzz_$h"
  [ -x "$exe" ] || { echo "fuzz: $exe is not built (make fuzz builds it)"; exit 2; }
  mkdir -p "$build/fuzz-corpus/$h"
  log="$build/fuzz-logs/$h.log"
  case $h in graph_dimacs|graph_metis|graph_edgelist) dict=graph.dict ;; bin) dict=bin.dict ;;
    *) dict=mm.dict ;; esac
  # -rss_limit_mb: a reader that takes more than 2 GiB is a finding (the harnesses cap the
  # readers at 8 MiB); -max_len: small files cover the parsers, large ones only cost time
  "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -dict="$src/$dict" -artifact_prefix="$build/fuzz-artifacts/$h-" \
    "$build/fuzz-corpus/$h" "$src/corpus/$h" >"$log" 2>&1
  rc=$?
  stats=$(grep -E '^#[0-9]+' "$log" | tail -1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ $rc -ne 0 ]; then
    failed=1
    echo "fuzz_$h: FAILED (exit $rc), see $log:"
    { grep -E 'ERROR|violated|SUMMARY|Test unit written' "$log" || tail -2 "$log"; } |
      head -5 | sed 's/^/  /'
  else
    echo "fuzz_$h: ${runs:-?} executions in ${seconds} s; $(echo "$stats" | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9a-zA-Z]+')"
  fi
done
exit $failed
