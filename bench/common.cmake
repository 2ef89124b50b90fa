# Helpers shared by the benchmark programs (clock, medians, loading, binary dump); included
# by spmv.cmake and solve.cmake. The CUDA-event clock is compiled only in a CUDA build.
include_guard(GLOBAL)
add_library(krill_bench_common STATIC ${CMAKE_CURRENT_LIST_DIR}/bench_common.c)
if(KRILL_HAVE_CUDA)
  target_sources(krill_bench_common PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_cuda.cu)
endif()
target_link_libraries(krill_bench_common PUBLIC krill_static)
target_include_directories(krill_bench_common PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_definitions(krill_bench_common PRIVATE _POSIX_C_SOURCE=200809L
  $<$<BOOL:${KRILL_HAVE_CUDA}>:KRILL_HAVE_CUDA>)
target_compile_options(krill_bench_common PRIVATE $<$<COMPILE_LANGUAGE:C>:${KRILL_C_FLAGS}>
  $<$<COMPILE_LANGUAGE:CUDA>:${KRILL_CUDA_FLAGS}>)
