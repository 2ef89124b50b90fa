# The Fortran module (fortran/krill.f90, doc/fortran.md).
# fortran_api and fortran_fem2d (label unit): tests/test_fortran.f90 and examples/fem2d.f90
# built here with the module, when CMake found a Fortran compiler (KRILL_WITH_FORTRAN).
# fortran_install (label install): the same two and the check of the module's constants and
# types against the C headers, built with that compiler against the installed package;
# skipped (77) with a message when there is no compiler.
if(KRILL_HAVE_FORTRAN)
  function(krill_fortran_test name source)
    add_executable(${name} ${source})
    target_link_libraries(${name} PRIVATE krill_fortran)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS unit ENVIRONMENT "OMP_NUM_THREADS=2")
  endfunction()
  krill_fortran_test(fortran_api test_fortran.f90)   # writes test_fortran.mtx here
  krill_fortran_test(fortran_fem2d ${PROJECT_SOURCE_DIR}/examples/fem2d.f90)
endif()

set(KRILL_FORTRAN_TEST_FC "")
if(KRILL_HAVE_FORTRAN)
  set(KRILL_FORTRAN_TEST_FC ${CMAKE_Fortran_COMPILER})
endif()
add_test(NAME fortran_install COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_fortran.sh
         "${KRILL_FORTRAN_TEST_FC}" ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
         ${CMAKE_C_COMPILER} ${CMAKE_INSTALL_LIBDIR})
# KRILL_EXAMPLE_CFLAGS: set by tests/cli.cmake (the sanitizer flags of a sanitizer build)
set_tests_properties(fortran_install PROPERTIES LABELS install TIMEOUT 600 SKIP_RETURN_CODE 77
                     ENVIRONMENT "OMP_NUM_THREADS=2;KRILL_EXAMPLE_CFLAGS=${KRILL_EXAMPLE_CFLAGS}")
