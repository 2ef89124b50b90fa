# benchmark program of area overlap: bench_overlap (the scheduler's DGEMM experiment, the
# paper's Tables 2 and 3 and out-of-core shapes, cuBLASXt beside it on the GPU); how it
# measures: doc/overlap.md, "Benchmarks".
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
krill_bench(bench_overlap bench_overlap.c)
target_link_libraries(bench_overlap PRIVATE krill_bench_common)
