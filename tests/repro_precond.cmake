# tests of the preconditioners in reproducible mode (apply_repro of precond/): CPU bits
# against an MPFR row-by-row reference on 1, 2, 3 and 7 threads, and GPU bits against the
# CPU's (factors, inverses and applies, after updates too).
krill_test(test_repro_precond test_repro_precond.c LABELS data)
target_link_libraries(test_repro_precond PRIVATE krill_ozaki_ref)
# 7 threads on small CI machines
set_property(TEST test_repro_precond APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)
krill_test(test_gpu_repro_precond test_gpu_repro_precond.c LABELS gpu)
