# tests of overlap/ (the CPU executor stands in for the GPU's lanes; test_gpu_overlap runs
# the same clients on a GPU). The model's cache goes to the build tree, a folder per test:
# test_overlap deletes and breaks its cache on purpose, which must not reach another test.
krill_test(test_overlap_plan test_overlap_plan.c LABELS unit)
krill_test(test_overlap test_overlap.c LABELS unit)
krill_test(test_gpu_overlap test_gpu_overlap.c LABELS gpu)
foreach(t test_overlap test_gpu_overlap)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_CURRENT_BINARY_DIR}/cache/${t}")
endforeach()

# `krill overlap`: arguments, errors, the CPU executor's runs.
krill_cli_case(overlap_help 0 "^usage: krill overlap calibrate" "" overlap --help)
krill_cli_case(help_lists_overlap 0 "^  overlap +the transfer/kernel overlap" "" help)
krill_cli_case(overlap_no_subcommand 2 "" "expected `calibrate` or `gemm H M W`" overlap)
krill_cli_case(overlap_bad_subcommand 2 "" "expected `calibrate`" overlap fly)
krill_cli_case(overlap_calibrate_extra 2 "" "unexpected argument 'x'" overlap calibrate x
               --device cpu)
krill_cli_case(overlap_gemm_missing 2 "" "needs H M W \\(got 2 numbers\\)" overlap gemm 1 2
               --device cpu)
krill_cli_case(overlap_gemm_bad_dim 2 "" "M = '0' must be an integer" overlap gemm 4 0 4
               --device cpu)
krill_cli_case(overlap_gemm_bad_memory 2 "" "--memory '12Q' is not a positive byte count"
               overlap gemm 4 4 4 --memory 12Q --device cpu)
krill_cli_case(overlap_gemm_bad_mode 2 "" "--mode expects one of auto, pipelined, sequential"
               overlap gemm 4 4 4 --mode fast --device cpu)
krill_cli_case(overlap_gemm_no_fit 3 "" "no block side fits the 1024 bytes" overlap gemm 64 64 64
               --memory 1K --device cpu)
krill_cli_case(overlap_calibrate_cpu 0 "^H2D pinned +[0-9.]+ GB/s" "" overlap calibrate
               --device cpu)
krill_cli_case(overlap_gemm_cpu 0 "largest sampled error 0.00e\\+00" "" overlap gemm 200 150 170
               --memory 300K --check --device cpu --timeline t.svg)
krill_cli_case(overlap_gemm_cpu_json 0 "\"efficiency\": 0?\\.[0-9]" "" overlap gemm 100 80 90
               --block 32 --json --device cpu)
krill_cli_case(overlap_gemm_huge 3 "" "operands A, B and C\\) needs [0-9]+ bytes" overlap gemm
               2147483648 2147483648 2 --device cpu)
