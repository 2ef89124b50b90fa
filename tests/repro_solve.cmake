# tests of area repro (solvers): whole reproducible solves bit for bit across CPU thread
# counts (test_repro_solve), across the formats (..._formats: skipped, with the list, while
# a format has no reproducible SpMV), and GPU against CPU (test_gpu_repro_solve[_formats]).
# The whole-solve tests are labelled slow as well: the sanitizer build (make asan) runs the
# quick variant (the first problem only) instead.
krill_test(test_repro_solve test_repro_solve.c LABELS data slow)
krill_test(test_repro_solve_formats test_repro_solve.c LABELS data slow ARGS formats)
krill_test(test_repro_solve_quick test_repro_solve.c LABELS data ARGS quick)
krill_test(test_gpu_repro_solve test_gpu_repro_solve.c LABELS gpu)
krill_test(test_gpu_repro_solve_formats test_gpu_repro_solve.c LABELS gpu ARGS formats)
# 7 threads on small CI machines: let the idle ones sleep
foreach(t test_repro_solve test_repro_solve_formats test_repro_solve_quick)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)
endforeach()
