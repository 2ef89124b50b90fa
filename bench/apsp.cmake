# benchmark programs of area apsp: bench_minplus (the min-plus peak of a device,
# krill_apsp_peak) and bench_apsp (the APSP paper's Tables 1, 3 and 4 through the public
# API; bench/apsp_peers.py times SciPy and NetworkX on the graphs it writes, and
# bench/run_apsp.sh runs them all). How they measure: doc/apsp.md, "Benchmarks".
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
krill_bench(bench_minplus bench_minplus.c)
target_link_libraries(bench_minplus PRIVATE krill_bench_common)
if(KRILL_HAVE_CUDA)
  target_link_libraries(bench_minplus PRIVATE CUDA::cudart)   # the SM clock attribute
endif()
krill_bench(bench_apsp bench_apsp.c)
target_sources(bench_apsp PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_apsp_report.c)
target_link_libraries(bench_apsp PRIVATE krill_bench_common)
