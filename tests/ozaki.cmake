# tests of area repro (the Ozaki-scheme reproducible reductions). MPFR is a test-only
# dependency: without it the MPFR comparisons are skipped with a message, the rest runs.
find_path(KRILL_MPFR_INCLUDE_DIR mpfr.h)
find_library(KRILL_MPFR_LIBRARY mpfr)
find_library(KRILL_GMP_LIBRARY gmp)
if(KRILL_MPFR_INCLUDE_DIR AND KRILL_MPFR_LIBRARY AND KRILL_GMP_LIBRARY)
  set(KRILL_HAVE_MPFR ON)
else()
  set(KRILL_HAVE_MPFR OFF)
  message(STATUS "krill: MPFR not found: the reproducible-mode tests skip their MPFR comparisons")
endif()

add_library(krill_ozaki_ref STATIC ozaki_ref.c)
target_link_libraries(krill_ozaki_ref PUBLIC krill_testutil m)
if(KRILL_HAVE_MPFR)
  target_compile_definitions(krill_ozaki_ref PRIVATE KRILL_HAVE_MPFR)
  target_include_directories(krill_ozaki_ref PRIVATE ${KRILL_MPFR_INCLUDE_DIR})
  target_link_libraries(krill_ozaki_ref PUBLIC ${KRILL_MPFR_LIBRARY} ${KRILL_GMP_LIBRARY})
endif()

krill_test(test_ozaki test_ozaki.c LABELS unit)
target_link_libraries(test_ozaki PRIVATE krill_ozaki_ref)
krill_test(test_gpu_ozaki test_gpu_ozaki.c LABELS gpu)
target_link_libraries(test_gpu_ozaki PRIVATE krill_ozaki_ref)
set_property(TEST test_ozaki APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)   # 7 threads on small CI machines
krill_test(test_ozaki_row test_ozaki_row.c LABELS unit)
target_link_libraries(test_ozaki_row PRIVATE krill_ozaki_ref)
