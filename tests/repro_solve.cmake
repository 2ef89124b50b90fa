# tests of area repro (solvers): whole reproducible solves bit for bit across CPU thread
# counts (test_repro_solve), across the formats (..._formats: skipped, with the list, while
# a format has no reproducible SpMV), and GPU against CPU (test_gpu_repro_solve[_formats]).
krill_test(test_repro_solve test_repro_solve.c LABELS data)
krill_test(test_repro_solve_formats test_repro_solve.c LABELS data ARGS formats)
krill_test(test_gpu_repro_solve test_gpu_repro_solve.c LABELS gpu)
krill_test(test_gpu_repro_solve_formats test_gpu_repro_solve.c LABELS gpu ARGS formats)
# 7 threads on small CI machines: let the idle ones sleep
foreach(t test_repro_solve test_repro_solve_formats)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)
endforeach()
