# tests of apsp/
krill_test(test_apsp_cpu test_apsp_cpu.c LABELS unit)   # the CPU kernels, by hand
# The public API on the CPU and the GPU against the oracles (plain FW, Dijkstra, the
# shortest-path certificate of apsp_testutil.h).
add_library(krill_apsp_testutil STATIC apsp_testutil.c)
target_link_libraries(krill_apsp_testutil PUBLIC krill_testutil)
krill_test(test_apsp test_apsp.c LABELS data)
target_link_libraries(test_apsp PRIVATE krill_apsp_testutil)
krill_test(test_gpu_apsp test_gpu_apsp.c LABELS gpu)
target_link_libraries(test_gpu_apsp PRIVATE krill_apsp_testutil)
# Out of core (apsp/ooc.c through overlap/) on the CPU executor, against the in-core run.
krill_test(test_apsp_ooc test_apsp_ooc.c LABELS data)
target_link_libraries(test_apsp_ooc PRIVATE krill_apsp_testutil)
set_property(TEST test_apsp_ooc APPEND PROPERTY ENVIRONMENT
             "XDG_CACHE_HOME=${CMAKE_CURRENT_BINARY_DIR}/cache/test_apsp_ooc")
