# tests of area solver: CG, pipelined CG, GMRES, FGMRES, BiCGStab and MINRES on the CPU against independent
# references (the CSR reference SpMV for the true residual, a banded Cholesky for condition
# numbers, a host BiCGStab), the preconditioners, and the same systems on the GPU compared
# with the CPU.
krill_test(test_cg test_cg.c LABELS unit)
# the workspace kept between solves: reuse after NaN, sizes, release, the bookkeeping
krill_test(test_ws_cache test_ws_cache.c LABELS unit)
# CG on -A x = -b: the iterations (and bits) of A x = b, plain and reproducible
krill_test(test_cg_sign test_cg_sign.c LABELS unit)
krill_test(test_gpu_cg_sign test_cg_sign.c LABELS gpu)
target_compile_definitions(test_gpu_cg_sign PRIVATE CG_SIGN_TEST_GPU)
# MINRES: stokes2d, symmetric indefinite testdata, Jacobi (+-), repro on 1 and 2 threads, faults
krill_test(test_minres test_minres.c LABELS data)
# Pipelined CG against CG: every preconditioner, -A, the stops, the attainable accuracy,
# threads, reproducible bits on 1-3 threads, faults
krill_test(test_pipecg test_pipecg.c LABELS data)
# MINRES against SciPy's minres (iteration counts within 15%); skipped without python3 + scipy
find_program(KRILL_PYTHON3 python3)
if(KRILL_PYTHON3)
  add_test(NAME test_minres_scipy COMMAND ${KRILL_PYTHON3}
    ${CMAKE_CURRENT_SOURCE_DIR}/minres_scipy.py $<TARGET_FILE:krill_cli>
    ${CMAKE_CURRENT_BINARY_DIR}/minres_scipy gen:stokes2d:8 gen:stokes2d:32 gen:stokes2d:16,0
    testdata:mtx/tumorAntiAngiogenesis_2.mtx testdata:mtx/reorientation_1.mtx
    testdata:mtx/hangGlider_2.mtx testdata:mtx/Si2.mtx testdata:mtx/rdb200.mtx)
  set_tests_properties(test_minres_scipy PROPERTIES SKIP_RETURN_CODE 77 LABELS "data"
    ENVIRONMENT "KRILL_TESTDATA=${KRILL_TESTDATA_DIR};KRILL_TESTDATA_LOCAL=${KRILL_TESTDATA_LOCAL_DIR};OMP_NUM_THREADS=1")
endif()
# two threads on small, busy CI machines: let an idle one sleep
foreach(t test_cg_sign test_minres test_pipecg)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)
endforeach()
krill_test(test_gmres test_gmres.c LABELS data)
krill_test(test_precond test_precond.c LABELS unit)
krill_test(test_solver_gpu test_solver_gpu.c LABELS gpu)
krill_test(test_bjacobi test_bjacobi.c LABELS unit)
krill_test(test_gpu_bjacobi test_bjacobi.c LABELS gpu)
target_compile_definitions(test_gpu_bjacobi PRIVATE BJACOBI_TEST_GPU)
krill_test(test_bicgstab test_bicgstab.c LABELS data)
# ilu0 / ic0 against the KIJ reference, on the CPU (bitwise) and the GPU
krill_test(test_ilu test_ilu.c LABELS data)
krill_test(test_gpu_ilu test_ilu.c LABELS gpu)
target_compile_definitions(test_gpu_ilu PRIVATE ILU_TEST_GPU)
# shifted ilu0 / ic0 (ic0's default, ilu0:shift): matrices that need a shift, -A, refusals,
# updates, faults, reproducible bits across threads (CPU)
krill_test(test_ilu_shift test_ilu_shift.c LABELS data)
krill_test(test_gpu_ilu_shift test_ilu_shift.c LABELS gpu)
target_compile_definitions(test_gpu_ilu_shift PRIVATE ILU_SHIFT_TEST_GPU)
krill_test(test_fgmres test_fgmres.c LABELS data)
# DCGS2 (issue 18): its passes against plain C references, iterations against CGS2 (within
# 2%), loss of orthogonality against CGS2 and MGS, FGMRES; the testdata walk; the GPU variant
krill_test(test_dcgs2 test_dcgs2.c LABELS unit)
krill_test(test_dcgs2_testdata test_dcgs2.c LABELS data ARGS testdata)
krill_test(test_gpu_dcgs2 test_dcgs2.c LABELS gpu)
target_compile_definitions(test_gpu_dcgs2 PRIVATE DCGS2_TEST_GPU)
foreach(t test_dcgs2 test_dcgs2_testdata)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)
endforeach()
# s-step GMRES (issue 18's stretch): the host pieces (eigenvalues, Leja order, Cholesky),
# S = 2, 4, 8 against GMRES(DCGS2) (iterations, true residual, ||I - Q'Q||), refusals, edges,
# reproducible bits across threads, allocation faults; the testdata walk; the GPU variant
krill_test(test_sstep test_sstep.c LABELS unit)
krill_test(test_sstep_testdata test_sstep.c LABELS data ARGS testdata)
krill_test(test_gpu_sstep test_sstep.c LABELS gpu)
target_compile_definitions(test_gpu_sstep PRIVATE SSTEP_TEST_GPU)
foreach(t test_sstep test_sstep_testdata)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT OMP_WAIT_POLICY=passive)
endforeach()
# extreme but finite scaling: diag(1e160 ...) and diag(1e-170 ...) in every solver, and
# scaled real problems against the unscaled (solve.c's equilibration, krill_norm_from_ss)
krill_test(test_scaling test_scaling.c LABELS data)
