# benchmark programs of area repro: bench_dot (the Ozaki-scheme dot: accuracy against MPFR,
# the OzBLAS paper's Table 3 for DOT; speed beside cuBLAS ddot). MPFR (libmpfr-dev) is the
# accuracy reference and is linked only when found; without it `bench_dot accuracy` skips.
# The cache names are those of tests/ozaki.cmake, so one setting serves both.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
krill_bench(bench_dot bench_dot.c bench_dot_accuracy.c bench_dot_speed.c)
target_link_libraries(bench_dot PRIVATE krill_bench_common)
find_path(KRILL_MPFR_INCLUDE_DIR mpfr.h)
find_library(KRILL_MPFR_LIBRARY mpfr)
find_library(KRILL_GMP_LIBRARY gmp)
if(KRILL_MPFR_INCLUDE_DIR AND KRILL_MPFR_LIBRARY AND KRILL_GMP_LIBRARY)
  message(STATUS "krill bench: MPFR found (${KRILL_MPFR_LIBRARY}), bench_dot accuracy enabled")
  target_include_directories(bench_dot PRIVATE ${KRILL_MPFR_INCLUDE_DIR})
  target_link_libraries(bench_dot PRIVATE ${KRILL_MPFR_LIBRARY} ${KRILL_GMP_LIBRARY})
  target_compile_definitions(bench_dot PRIVATE KRILL_HAVE_MPFR)
else()
  message(STATUS "krill bench: MPFR not found; bench_dot accuracy will skip")
endif()
if(KRILL_HAVE_CUDA)
  target_link_libraries(bench_dot PRIVATE CUDA::cublas CUDA::cudart)
endif()
