# benchmark programs of area solve: bench_solve (krill_solve, and the binary dump the peers
# read); bench_petsc (the CPU peer) when PETSc and MPI are found through pkg-config.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
krill_bench(bench_solve bench_solve.c)
target_link_libraries(bench_solve PRIVATE krill_bench_common)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(KRILL_PETSC QUIET IMPORTED_TARGET PETSc)
endif()
if(KRILL_PETSC_FOUND)
  find_package(MPI QUIET COMPONENTS C)
endif()
if(KRILL_PETSC_FOUND AND MPI_C_FOUND)
  message(STATUS "krill bench: PETSc ${KRILL_PETSC_VERSION} found, building bench_petsc")
  add_executable(bench_petsc petsc_solve.c)
  target_link_libraries(bench_petsc PRIVATE PkgConfig::KRILL_PETSC MPI::MPI_C m)
  target_compile_options(bench_petsc PRIVATE -Wall -Wextra)
else()
  message(STATUS "krill bench: PETSc (pkg-config PETSc) or MPI not found; no bench_petsc")
endif()

# bench_gmres_formats: GMRES(m) with every format, time split as the RBP paper's Figure 8
krill_bench(bench_gmres_formats bench_gmres_formats.c)
target_link_libraries(bench_gmres_formats PRIVATE krill_bench_common)

# bench_ortho: GMRES's orthogonalization passes one at a time against the copy rate
krill_bench(bench_ortho bench_ortho.c)
target_link_libraries(bench_ortho PRIVATE krill_bench_common)
