# benchmark programs of area precond: bench_trsv (the ilu0 / ic0 apply against cuSPARSE's
# cusparseSpSV on the same factors); GPU only, so built only in a CUDA build.
if(KRILL_HAVE_CUDA)
  include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
  krill_bench(bench_trsv bench_trsv.c)
  target_link_libraries(bench_trsv PRIVATE krill_bench_common CUDA::cusparse CUDA::cudart)
endif()
