# tests of area solver: CG, GMRES, FGMRES and BiCGStab on the CPU against independent
# references (the CSR reference SpMV for the true residual, a banded Cholesky for condition
# numbers, a host BiCGStab), the preconditioners, and the same systems on the GPU compared
# with the CPU.
krill_test(test_cg test_cg.c LABELS unit)
# CG on -A x = -b: the iterations (and bits) of A x = b, plain and reproducible
krill_test(test_cg_sign test_cg_sign.c LABELS unit)
krill_test(test_gpu_cg_sign test_cg_sign.c LABELS gpu)
target_compile_definitions(test_gpu_cg_sign PRIVATE CG_SIGN_TEST_GPU)
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
# extreme but finite scaling: diag(1e160 ...) and diag(1e-170 ...) in every solver, and
# scaled real problems against the unscaled (solve.c's equilibration, krill_norm_from_ss)
krill_test(test_scaling test_scaling.c LABELS data)
