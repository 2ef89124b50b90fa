# tests of reproducible SpMV (every format's spmv_repro, issue 5): the exact row sums against
# MPFR and IEEE, every CPU format on 1, 2, 3 and 7 threads against the exact-row reference
# (label data), every GPU format against the CPU's bits and the long-row refusal (label gpu).
add_library(krill_repro_spmv_data STATIC repro_spmv_data.c)
target_link_libraries(krill_repro_spmv_data PUBLIC krill_testutil m)

krill_test(test_repro_spmv test_repro_spmv.c LABELS data)
target_link_libraries(test_repro_spmv PRIVATE krill_repro_spmv_data krill_ozaki_ref)
set_property(TEST test_repro_spmv APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)   # 7 threads on small CI machines
krill_test(test_gpu_repro_spmv test_gpu_repro_spmv.c LABELS gpu)
target_link_libraries(test_gpu_repro_spmv PRIVATE krill_repro_spmv_data krill_ozaki_ref)
