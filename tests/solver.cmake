# tests of area solver: CG and GMRES on the CPU against independent references (the CSR
# reference SpMV for the true residual, a banded Cholesky for condition numbers), the
# preconditioners, and the same systems on the GPU compared with the CPU.
krill_test(test_cg test_cg.c LABELS unit)
krill_test(test_gmres test_gmres.c LABELS data)
krill_test(test_precond test_precond.c LABELS unit)
krill_test(test_solver_gpu test_solver_gpu.c LABELS gpu)
