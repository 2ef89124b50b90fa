/* tests/fortran_abi.c - what module krill (fortran/krill.f90) must agree with, from the C
 * headers, a line each: every enumerator's value and each enum's size; the size of every
 * struct the module mirrors as a bind(C) type, and each field's offset and size. The macro
 * KRILL_CTX_OPTS_INIT, which the module's default initialization of krill_ctx_opts copies.
 * tests/fortran_abi.f90 prints the same lines from the module; tests/test_fortran.sh
 * compares the two outputs. */
#include <stddef.h>
#include <stdio.h>
#include <krill.h>

#define VALUE(name) printf("%s %lld\n", #name, (long long)(name))
#define SIZE(type) printf("sizeof %s %zu\n", #type, sizeof(type))
#define OFFSET(type, field) printf("field %s %s offset %zu size %zu\n", #type, #field, \
                                   offsetof(type, field), sizeof(((type *)0)->field))

int main(void)
{
    VALUE(KRILL_OK); VALUE(KRILL_ERR_ARG); VALUE(KRILL_ERR_ALLOC); VALUE(KRILL_ERR_IO);
    VALUE(KRILL_ERR_PARSE); VALUE(KRILL_ERR_UNSUPPORTED); VALUE(KRILL_ERR_NUMERIC);
    VALUE(KRILL_ERR_NO_DEVICE); VALUE(KRILL_ERR_DEVICE); VALUE(KRILL_ERR_DEVICE_ALLOC);
    VALUE(KRILL_ERR_INTERNAL);
    VALUE(KRILL_DEVICE_AUTO); VALUE(KRILL_DEVICE_CPU); VALUE(KRILL_DEVICE_CUDA);
    VALUE(KRILL_MAX_THREADS);
    VALUE(KRILL_REPRO_OFF); VALUE(KRILL_REPRO_OZAKI); VALUE(KRILL_REPRO_OZAKI_FAST);
    VALUE(KRILL_SOLVER_GMRES); VALUE(KRILL_SOLVER_CG); VALUE(KRILL_SOLVER_FGMRES);
    VALUE(KRILL_SOLVER_BICGSTAB); VALUE(KRILL_SOLVER_MINRES); VALUE(KRILL_SOLVER_PIPECG);
    VALUE(KRILL_ORTHO_CGS2); VALUE(KRILL_ORTHO_MGS); VALUE(KRILL_ORTHO_DCGS2);
    VALUE(KRILL_REASON_NONE); VALUE(KRILL_CONVERGED_RTOL); VALUE(KRILL_CONVERGED_ATOL);
    VALUE(KRILL_CONVERGED_ZERO_RHS); VALUE(KRILL_DIVERGED_MAXIT);
    VALUE(KRILL_DIVERGED_BREAKDOWN); VALUE(KRILL_DIVERGED_INDEFINITE);
    VALUE(KRILL_DIVERGED_NAN);
    /* the enums themselves: module krill declares them integer(c_int) */
    SIZE(krill_status); SIZE(krill_device); SIZE(krill_repro_mode); SIZE(krill_solver_type);
    SIZE(krill_ortho); SIZE(krill_reason);

    SIZE(krill_ctx_opts);
    OFFSET(krill_ctx_opts, device); OFFSET(krill_ctx_opts, threads);
    OFFSET(krill_ctx_opts, device_id); OFFSET(krill_ctx_opts, comm);
    {   /* KRILL_CTX_OPTS_INIT: module krill's default initialization of krill_ctx_opts */
        krill_ctx_opts init = KRILL_CTX_OPTS_INIT;
        printf("init krill_ctx_opts %d %d %d %d\n", (int)init.device, init.threads,
               init.device_id, init.comm != NULL);
    }
    SIZE(krill_ctx_alloc_stats);
    OFFSET(krill_ctx_alloc_stats, allocations); OFFSET(krill_ctx_alloc_stats, bytes);
    SIZE(krill_csr);
    OFFSET(krill_csr, n_rows); OFFSET(krill_csr, n_cols); OFFSET(krill_csr, nnz);
    OFFSET(krill_csr, row_ptr); OFFSET(krill_csr, col); OFFSET(krill_csr, val);
    SIZE(krill_solver_opts);
    OFFSET(krill_solver_opts, solver); OFFSET(krill_solver_opts, rtol);
    OFFSET(krill_solver_opts, atol); OFFSET(krill_solver_opts, maxit);
    OFFSET(krill_solver_opts, restart); OFFSET(krill_solver_opts, ortho);
    OFFSET(krill_solver_opts, sstep);
    OFFSET(krill_solver_opts, monitor); OFFSET(krill_solver_opts, monitor_data);
    SIZE(krill_solve_times);
    OFFSET(krill_solve_times, setup); OFFSET(krill_solve_times, spmv);
    OFFSET(krill_solve_times, precond); OFFSET(krill_solve_times, ortho);
    OFFSET(krill_solve_times, other); OFFSET(krill_solve_times, total);
    OFFSET(krill_solve_times, comm); OFFSET(krill_solve_times, halo);
    OFFSET(krill_solve_times, halo_hidden);
    SIZE(krill_solve_info);
    OFFSET(krill_solve_info, reason); OFFSET(krill_solve_info, iterations);
    OFFSET(krill_solve_info, relres); OFFSET(krill_solve_info, resnorm);
    OFFSET(krill_solve_info, bnorm); OFFSET(krill_solve_info, history);
    OFFSET(krill_solve_info, history_len); OFFSET(krill_solve_info, times);
    return 0;
}
