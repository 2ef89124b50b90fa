# Distributed solves over MPI (dist/, doc/mpi.md), label mpi: each test runs on 1, 2, 3 and
# 4 ranks through MPIEXEC_EXECUTABLE. With Open MPI, --oversubscribe (CI has 2 cores) and
# --allow-run-as-root (CI runs as root); KRILL_MPIEXEC_FLAGS, when set, replaces them. Every
# test has a TIMEOUT: a collective that one rank left must fail the test, never hang CI.
if(NOT KRILL_HAVE_MPI)
  return()
endif()
set(KRILL_MPIEXEC_FLAGS "" CACHE STRING
    "Flags for mpiexec before the program in the MPI tests (empty: Open MPI's two above)")
set(mpiexec_flags ${KRILL_MPIEXEC_FLAGS})
if(NOT mpiexec_flags AND MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
  set(mpiexec_flags --oversubscribe --allow-run-as-root)
endif()

# Under the sanitizers (make asan): Open MPI keeps its runtime's memory until exit, so
# LeakSanitizer gets the full unwinder (its libraries have no frame pointers) and
# lsan_mpi.supp, and the plugins stay loaded so their frames have names.
set(mpi_test_env "OMP_NUM_THREADS=1;OMP_WAIT_POLICY=passive")
if(KRILL_SANITIZE)
  list(APPEND mpi_test_env "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0"
       "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan_mpi.supp"
       "OMPI_MCA_mca_component_disable_dlclose=1")
endif()

add_library(krill_mpi_testutil STATIC mpi_testutil.c)
target_link_libraries(krill_mpi_testutil PUBLIC krill_testutil MPI::MPI_C)

# krill_mpi_test(NAME source.c): one executable, tests NAME_np1 .. NAME_np4.
function(krill_mpi_test name source)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE krill_mpi_testutil)
  foreach(np 1 2 3 4)
    add_test(NAME ${name}_np${np} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
             ${mpiexec_flags} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}>
             ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_np${np} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS ${np}
      ENVIRONMENT "KRILL_TESTDATA=${KRILL_TESTDATA_DIR};KRILL_TESTDATA_LOCAL=${KRILL_TESTDATA_LOCAL_DIR};${mpi_test_env}")
  endforeach()
endfunction()

# krill_mpi_gpu_test(NAME [RANKS...]): NAME's executable again on 1 and 2 ranks (or RANKS)
# with one GPU per rank, ranks sharing GPUs when there are fewer (KRILL_TEST_MPI_DEVICE=gpu,
# mpi_testutil.h), labels mpi and gpu; 77 (skipped) without GPUs.
function(krill_mpi_gpu_test name)
  set(counts ${ARGN})
  if(NOT counts)
    set(counts 1 2)
  endif()
  foreach(np ${counts})
    add_test(NAME ${name}_gpu_np${np} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
             ${np} ${mpiexec_flags} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}>
             ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_gpu_np${np} PROPERTIES LABELS "mpi;gpu" TIMEOUT 300
      PROCESSORS ${np} SKIP_RETURN_CODE 77 ENVIRONMENT
      "KRILL_TEST_MPI_DEVICE=gpu;KRILL_TESTDATA=${KRILL_TESTDATA_DIR};KRILL_TESTDATA_LOCAL=${KRILL_TESTDATA_LOCAL_DIR};${mpi_test_env}")
  endforeach()
  # with NCCL built: two and four ranks again with the reductions and every halo through it
  # (KRILL_NCCL=1, core/nccl.cu), two with the reductions only, four with the default (auto:
  # the reductions through NCCL, each matrix's halo by the path timed faster at its setup);
  # skipped (77) where the ranks share a GPU and so have no NCCL
  if(KRILL_HAVE_NCCL)
    foreach(case 1:2 reductions:2 1:4 auto:4)
      string(REPLACE ":" ";" case ${case})
      list(GET case 0 mode)
      list(GET case 1 np)
      set(t ${name}_gpu_nccl_${mode}_np${np})
      add_test(NAME ${t} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
               ${mpiexec_flags} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${t} PROPERTIES LABELS "mpi;gpu" TIMEOUT 300 PROCESSORS ${np}
        SKIP_RETURN_CODE 77 ENVIRONMENT "KRILL_NCCL=${mode};KRILL_TEST_REQUIRE_NCCL=1;\
KRILL_TEST_MPI_DEVICE=gpu;KRILL_TESTDATA=${KRILL_TESTDATA_DIR};\
KRILL_TESTDATA_LOCAL=${KRILL_TESTDATA_LOCAL_DIR};${mpi_test_env}")
    endforeach()
  endif()
endfunction()

# the distributed SpMV against the serial reference: generated matrices in every CPU
# format, partitions with a rank of zero rows or all rows on one rank, no halo, testdata
krill_mpi_test(test_mpi_spmv test_mpi_spmv.c)
krill_mpi_gpu_test(test_mpi_spmv)   # the same on GPU ranks (every format, cusparse too)
# every solver (none, Jacobi) against the serial solve; ILU(0)/IC(0) of the diagonal blocks
krill_mpi_test(test_mpi_solve test_mpi_solve.c)
krill_mpi_gpu_test(test_mpi_solve)  # GPU ranks against the serial CPU solves; GPU refusals
# the reproducible mode across rank counts: sums and every solver bit for bit against one
# process, on 1, 2, 3, 4 and 7 ranks
krill_mpi_test(test_mpi_repro test_mpi_repro.c)
add_test(NAME test_mpi_repro_np7 COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 7
         ${mpiexec_flags} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:test_mpi_repro> ${MPIEXEC_POSTFLAGS})
set_tests_properties(test_mpi_repro_np7 PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 7
  ENVIRONMENT "KRILL_TESTDATA=${KRILL_TESTDATA_DIR};KRILL_TESTDATA_LOCAL=${KRILL_TESTDATA_LOCAL_DIR};${mpi_test_env}")
krill_mpi_gpu_test(test_mpi_repro 1 2 3)   # GPU ranks against the serial CPU bits
# a failure on one rank (allocation faults on the last rank through every collective
# function, malformed rows, a block size that divides one rank's rows only) on every rank
krill_mpi_test(test_mpi_faults test_mpi_faults.c)
krill_mpi_gpu_test(test_mpi_faults)   # the same on GPU ranks, and the device reductions' failure flag
# krill_dist_mat_scatter_metis: SpMV and solves in the user's order, halo rows vs metis,
# edge cases; without METIS the refusal on every rank
krill_mpi_test(test_mpi_metis test_mpi_metis.c)
# `mpirun -n 2 krill solve`: one report with each rank's load, x written once, failures
add_test(NAME cli_solve_mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/mpi.sh
         ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} $<TARGET_FILE:krill_cli> ${mpiexec_flags}
         ${MPIEXEC_PREFLAGS})
set_tests_properties(cli_solve_mpi PROPERTIES LABELS "mpi;cli" TIMEOUT 120 PROCESSORS 2
  SKIP_RETURN_CODE 77 ENVIRONMENT "${mpi_test_env}")
# `mpirun -n 2 krill solve --partition metis`: converges, x in A's numbering (skips without
# METIS)
add_test(NAME cli_solve_mpi_metis COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/mpi_metis.sh
         ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} $<TARGET_FILE:krill_cli> ${mpiexec_flags}
         ${MPIEXEC_PREFLAGS})
set_tests_properties(cli_solve_mpi_metis PROPERTIES LABELS "mpi;cli" TIMEOUT 120 PROCESSORS 2
  SKIP_RETURN_CODE 77 ENVIRONMENT "${mpi_test_env}")
# each rank reads its own rows of a krill binary file (dist/read.c): the same matrix, SpMV and
# solve as the scatter of the .mtx, every partition; corrupt files refused on every rank
krill_mpi_test(test_mpi_read test_mpi_read.c)
# `mpirun -n 2 krill solve A.krill`: each rank reads its rows; the .mtx's solution, one message
add_test(NAME cli_solve_mpi_bin COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/mpi_bin.sh
         ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} $<TARGET_FILE:krill_cli> ${mpiexec_flags}
         ${MPIEXEC_PREFLAGS})
set_tests_properties(cli_solve_mpi_bin PROPERTIES LABELS "mpi;cli" TIMEOUT 120 PROCESSORS 2
  ENVIRONMENT "${mpi_test_env}")
