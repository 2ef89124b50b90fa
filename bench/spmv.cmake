# benchmark programs of area spmv: bench_spmv (krill formats and cuSPARSE, same input)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
krill_bench(bench_spmv bench_spmv.c)
target_link_libraries(bench_spmv PRIVATE krill_bench_common)
