/* solver/solve.c - krill_solve: option defaults, argument checks, the right-hand side's norm
 * (b = 0 answers x = 0 at once), the history buffer and the timer, the equilibration of an
 * extreme b, then GMRES / FGMRES (s-step GMRES when opts.sstep >= 2), CG, BiCGStab or MINRES.
 *
 * Decisions:
 * - NaN or Inf in b, or in the initial residual b - A x0 (NaN/Inf in x0), is bad input:
 *   KRILL_ERR_NUMERIC with a message, info->reason = KRILL_DIVERGED_NAN. A NaN or Inf that
 *   arises during the iteration is a reason (KRILL_DIVERGED_NAN), not an error.
 * - info is always written (zeroed first); on an error its history is released (NULL).
 * - The history is allocated once, with maxit + 1 entries, before any other work. */
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver/solver_impl.h"

/* A solve's expectation of SpMVs for `auto` (formats/auto.c weighs each format's build
 * against them): its first SOLVE_WINDOW iterations (GMRES, FGMRES: its first restart cycle),
 * at most maxit, BiCGStab two SpMVs each, plus the initial residual and the true residual at
 * the window's end. doc/auto.md says why a window and not maxit. (s-step GMRES makes a few
 * more, its discarded block SpMVs: counting fewer errs towards csr.) */
#define SOLVE_WINDOW 30
#define SOLVE_RESIDUALS 2

int64_t krill_auto_solve_spmvs(const krill_solver_opts *opts, int solves)
{
    const int restarted = opts->solver == KRILL_SOLVER_GMRES ||
                          opts->solver == KRILL_SOLVER_FGMRES;
    const int window = restarted && opts->restart > 0 ? opts->restart : SOLVE_WINDOW;
    const int iterations = opts->maxit > 0 && opts->maxit < window ? opts->maxit : window;
    const int per_iteration = opts->solver == KRILL_SOLVER_BICGSTAB ? 2 : 1;
    return (int64_t)(solves > 1 ? solves : 1) *
           ((int64_t)per_iteration * iterations + SOLVE_RESIDUALS);
}

const char *krill_auto_for_solves(const char *format, const krill_solver_opts *opts,
                                  int solves, char *buf, size_t len)
{
    const int64_t most = 1000000000000000LL;   /* the largest N auto:spmvs= takes */
    int64_t spmvs;
    if (!format || strcmp(format, "auto") != 0) return format;
    spmvs = krill_auto_solve_spmvs(opts, solves);
    snprintf(buf, len, "auto:spmvs=%lld", (long long)(spmvs < most ? spmvs : most));
    return buf;
}

void krill_solver_opts_default(krill_solver_opts *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->solver = KRILL_SOLVER_GMRES;
    opts->rtol = 1e-8;
    opts->atol = 0.0;
    opts->maxit = 10000;
    opts->restart = 30;
    opts->ortho = KRILL_ORTHO_DCGS2;
    opts->monitor = NULL;
    opts->monitor_data = NULL;
}

const char *krill_reason_string(krill_reason reason)
{
    switch (reason) {
    case KRILL_REASON_NONE: return "not run";
    case KRILL_CONVERGED_RTOL: return "converged (rtol)";
    case KRILL_CONVERGED_ATOL: return "converged (atol)";
    case KRILL_CONVERGED_ZERO_RHS: return "converged (b = 0, x = 0)";
    case KRILL_DIVERGED_MAXIT: return "not converged (maxit reached)";
    case KRILL_DIVERGED_BREAKDOWN: return "breakdown (singular Krylov system)";
    case KRILL_DIVERGED_INDEFINITE: return "indefinite matrix or preconditioner";
    case KRILL_DIVERGED_NAN: return "NaN or Inf in the iteration";
    }
    return "unknown reason";
}

const char *krill_solver_name(krill_solver_type solver)
{
    switch (solver) {
    case KRILL_SOLVER_GMRES: return "gmres";
    case KRILL_SOLVER_CG: return "cg";
    case KRILL_SOLVER_FGMRES: return "fgmres";
    case KRILL_SOLVER_BICGSTAB: return "bicgstab";
    case KRILL_SOLVER_MINRES: return "minres";
    case KRILL_SOLVER_PIPECG: return "pipecg";
    }
    return "unknown solver";
}

void krill_solve_info_free(krill_solve_info *info)
{
    if (!info) return;
    krill_free(info->history);
    info->history = NULL;
    info->history_len = 0;
}

krill_reason krill_converged_reason(const krill_solve_problem *p, double resnorm)
{
    if (resnorm <= p->opts.rtol * p->bnorm) return KRILL_CONVERGED_RTOL;
    if (resnorm <= p->opts.atol) return KRILL_CONVERGED_ATOL;
    return KRILL_REASON_NONE;
}

krill_status krill_solve_finish(const krill_solve_problem *p, krill_reason reason, int iterations,
                               double resnorm, krill_solve_info *info)
{
    if (!krill_is_finite(resnorm)) {
        reason = KRILL_DIVERGED_NAN;
    } else if (reason == KRILL_REASON_NONE || reason == KRILL_DIVERGED_MAXIT ||
               reason == KRILL_DIVERGED_BREAKDOWN) {
        krill_reason conv = krill_converged_reason(p, resnorm);
        if (conv != KRILL_REASON_NONE) reason = conv;
        else if (reason == KRILL_REASON_NONE) reason = KRILL_DIVERGED_MAXIT;
    }
    info->reason = reason;
    info->iterations = iterations;
    info->history_len = iterations + 1;
    info->resnorm = resnorm;
    info->relres = resnorm / p->bnorm;
    return krill_timer_finish(p->timer, &info->times);
}

krill_status krill_true_residual(const krill_solve_problem *p, double *r, double *norm_dev,
                                 double *norm)
{
    krill_status st = KRILL_OK;
    /* b' = bscale b is exact: bscale is a power of two */
    if (p->bscale == 1.0) KRILL_TRY(krill_blas_copy(p->ctx, p->n, p->b, r));
    else KRILL_TRY(krill_blas_axpby(p->ctx, p->n, p->bscale, p->b, 0.0, r));
    KRILL_TRY(krill_mat_spmv_raw(p->a, -1.0, p->x, 1.0, r));
    KRILL_TRY(krill_blas_nrm2(p->ctx, p->n, r, norm_dev));
    KRILL_TRY(krill_scalars_read(p->ctx, norm_dev, norm, 1));
cleanup:
    return st;
}

krill_status krill_norm_from_ss(const krill_solve_problem *p, const double *x, double ss,
                                double *norm_dev, double *norm)
{
    krill_status st = KRILL_OK;
    *norm = sqrt(ss);
    if (krill_ss_in_range(ss) || isnan(ss)) goto cleanup;
    KRILL_TRY(krill_blas_nrm2(p->ctx, p->n, x, norm_dev));
    KRILL_TRY(krill_scalars_read(p->ctx, norm_dev, norm, 1));
cleanup:
    return st;
}

krill_status krill_initial_residual(const krill_solve_problem *p, double *r, double *norm_dev,
                                    double *norm, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_true_residual(p, r, norm_dev, norm));
    if (!krill_is_finite(*norm)) {
        info->reason = KRILL_DIVERGED_NAN;
        st = krill_error(KRILL_ERR_NUMERIC, "krill_solve: the initial residual b - A x is not "
                         "finite (||r|| = %g): x (the initial guess) holds NaN or Inf, or A x "
                         "overflows", *norm);
        goto cleanup;
    }
    info->history[0] = *norm;
cleanup:
    return st;
}

static krill_status check_options(const krill_solver_opts *o)
{
    krill_status st = KRILL_OK;
    const int gmres_like = o->solver == KRILL_SOLVER_GMRES || o->solver == KRILL_SOLVER_FGMRES;
    KRILL_REQUIRE(gmres_like || o->solver == KRILL_SOLVER_CG ||
                  o->solver == KRILL_SOLVER_BICGSTAB || o->solver == KRILL_SOLVER_MINRES ||
                  o->solver == KRILL_SOLVER_PIPECG,
                  "krill_solve: unknown solver %d (KRILL_SOLVER_GMRES = 0, KRILL_SOLVER_CG = 1, "
                  "KRILL_SOLVER_FGMRES = 2, KRILL_SOLVER_BICGSTAB = 3, KRILL_SOLVER_MINRES = 4, "
                  "KRILL_SOLVER_PIPECG = 5)",
                  (int)o->solver);
    KRILL_REQUIRE(o->rtol >= 0.0 && krill_is_finite(o->rtol),
                  "krill_solve: rtol = %g; it must be finite and >= 0", o->rtol);
    KRILL_REQUIRE(o->atol >= 0.0 && krill_is_finite(o->atol),
                  "krill_solve: atol = %g; it must be finite and >= 0", o->atol);
    KRILL_REQUIRE(o->maxit >= 0, "krill_solve: maxit = %d; it must be >= 0", o->maxit);
    KRILL_REQUIRE(o->sstep >= 0 && o->sstep <= KRILL_SSTEP_MAX,
                  "krill_solve: sstep = %d; it must be 0 or 1 (ordinary GMRES) or 2 .. %d "
                  "(s-step GMRES)", o->sstep, KRILL_SSTEP_MAX);
    if (o->sstep > 1 && o->solver == KRILL_SOLVER_FGMRES) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "krill_solve: s-step GMRES (sstep = %d) needs a "
                         "fixed preconditioner, so FGMRES does not take it: use "
                         "KRILL_SOLVER_GMRES, or sstep = 0", o->sstep);
        goto cleanup;
    }
    KRILL_REQUIRE(o->sstep <= 1 || o->solver == KRILL_SOLVER_GMRES,
                  "krill_solve: sstep = %d applies to GMRES only, not to %s (set sstep = 0)",
                  o->sstep, krill_solver_name(o->solver));
    if (gmres_like) {
        KRILL_REQUIRE(o->restart >= 1, "krill_solve: restart = %d; GMRES needs restart >= 1",
                      o->restart);
        if (o->sstep > 1 && o->restart % o->sstep != 0) {
            const int below = o->restart / o->sstep * o->sstep, above = below + o->sstep;
            char use[48];
            if (below > 0) snprintf(use, sizeof use, "restart %d or %d", below, above);
            else snprintf(use, sizeof use, "restart %d", above);
            st = krill_error(KRILL_ERR_ARG, "krill_solve: restart = %d is not a multiple of "
                             "sstep = %d: s-step GMRES builds its basis in blocks of %d vectors "
                             "(use %s)", o->restart, o->sstep, o->sstep, use);
            goto cleanup;
        }
        KRILL_REQUIRE(o->ortho == KRILL_ORTHO_CGS2 || o->ortho == KRILL_ORTHO_MGS ||
                          o->ortho == KRILL_ORTHO_DCGS2,
                      "krill_solve: unknown orthogonalization %d (KRILL_ORTHO_CGS2 = 0, "
                      "KRILL_ORTHO_MGS = 1, KRILL_ORTHO_DCGS2 = 2)", (int)o->ortho);
    }
cleanup:
    return st;
}

static krill_status check_arguments(const krill_mat *a, const krill_pc *pc, const krill_vec *b,
                                    const krill_vec *x)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a != NULL, "krill_solve: matrix a is NULL");
    KRILL_REQUIRE(b != NULL, "krill_solve: right-hand side b is NULL");
    KRILL_REQUIRE(x != NULL, "krill_solve: solution vector x is NULL");
    if (a->n_rows != a->n_cols) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "krill_solve: the matrix is %lld x %lld: krill "
                         "solves square systems", (long long)a->n_rows, (long long)a->n_cols);
        goto cleanup;
    }
    KRILL_REQUIRE(krill_vec_size(b) == a->n_rows,
                  "krill_solve: b has length %lld but the matrix has %lld rows",
                  (long long)krill_vec_size(b), (long long)a->n_rows);
    KRILL_REQUIRE(krill_vec_size(x) == a->n_cols,
                  "krill_solve: x has length %lld but the matrix has %lld columns",
                  (long long)krill_vec_size(x), (long long)a->n_cols);
    KRILL_REQUIRE(krill_vec_ctx(b) == a->ctx,
                  "krill_solve: b lives on a different context than the matrix");
    KRILL_REQUIRE(krill_vec_ctx(x) == a->ctx,
                  "krill_solve: x lives on a different context than the matrix");
    KRILL_REQUIRE(krill_vec_data((krill_vec *)b) != krill_vec_data((krill_vec *)x),
                  "krill_solve: x and b must be distinct vectors (x is overwritten)");
    if (pc) {
        KRILL_REQUIRE(pc->ctx == a->ctx, "krill_solve: the preconditioner \"%s\" lives on a "
                      "different context than the matrix", pc->name);
        KRILL_REQUIRE(pc->n == a->n_rows, "krill_solve: the preconditioner \"%s\" is for %lld "
                      "rows but the matrix has %lld", pc->name, (long long)pc->n,
                      (long long)a->n_rows);
    }
cleanup:
    return st;
}

/* Equilibration. The solvers' sums of squares (r'r, BiCGStab's r0'r, and CG's p'Ap ~
 * ||A|| ||r||^2) overflow or underflow when ||b|| is extreme although the system is
 * well posed: diag(1e160, 2e160, 3e160) x = (1e160, 2e160, 3e160) has r'r ~ 1e321. When
 * ||b|| lies outside [2^-BSCALE_BAND, 2^BSCALE_BAND), the solver runs on A x' = b' with
 * b' = 2^-e b, x' = 2^-e x and e = ilogb(||b||), so 1 <= ||b'|| < 2. A power of two: the
 * scaling and its undoing are exact (barring subnormals), and the iterates are those of
 * the unscaled problem times 2^-e, bit for bit, wherever those stayed in range; the
 * tolerance, the history, the monitor's values and the residual norm are converted. Inside
 * the band nothing changes: no pass over x. The norms of vectors A M^{-1} v (GMRES's
 * h_{j+1,j}, BiCGStab's ||v|| and ||t||) scale with A as well: krill_norm_from_ss handles
 * those where they come. */
#define BSCALE_BAND 64

typedef struct scaled_monitor {
    krill_monitor_fn fn;     /* the caller's monitor */
    void *data;
    double unscale;          /* 1 / bscale: residual norms back to b's units */
} scaled_monitor;

static int scaled_monitor_fn(int iteration, double residual_norm, void *user)
{
    const scaled_monitor *m = user;
    return m->fn(iteration, residual_norm * m->unscale, m->data);
}

static krill_status run_solver(const krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    if (p->opts.solver == KRILL_SOLVER_CG) KRILL_TRY(krill_cg_run(p, info));
    else if (p->opts.solver == KRILL_SOLVER_BICGSTAB) KRILL_TRY(krill_bicgstab_run(p, info));
    else if (p->opts.solver == KRILL_SOLVER_MINRES) KRILL_TRY(krill_minres_run(p, info));
    else if (p->opts.solver == KRILL_SOLVER_PIPECG) KRILL_TRY(krill_pipecg_run(p, info));
    else if (p->opts.sstep > 1) KRILL_TRY(krill_sstep_run(p, info));
    else KRILL_TRY(krill_gmres_run(p, info));
cleanup:
    return st;
}

/* The solve, on the scaled system when ||b|| is extreme (see above); x is back in b's
 * units whatever happened. p->bnorm = ||b|| > 0 on entry. */
static krill_status run_equilibrated(krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK, unscale_st = KRILL_OK;
    scaled_monitor mon;
    int e = ilogb(p->bnorm), scaled = 0;
    if (e < -1022) e = -1022;    /* ||b|| subnormal: 2^1022 is the largest power we use */
    p->bscale = e >= -BSCALE_BAND && e < BSCALE_BAND ? 1.0 : ldexp(1.0, -e);
    if (p->bscale != 1.0) {
        p->bnorm *= p->bscale;
        p->opts.atol *= p->bscale;
        if (p->opts.monitor) {
            mon.fn = p->opts.monitor;
            mon.data = p->opts.monitor_data;
            mon.unscale = 1.0 / p->bscale;
            p->opts.monitor = scaled_monitor_fn;
            p->opts.monitor_data = &mon;
        }
        KRILL_TRY(krill_blas_scal(p->ctx, p->n, p->bscale, p->x));
        scaled = 1;
    }
    p->tol = p->opts.rtol * p->bnorm > p->opts.atol ? p->opts.rtol * p->bnorm : p->opts.atol;
    st = run_solver(p, info);
    if (st == KRILL_OK && scaled) {
        for (int i = 0; i < info->history_len; i++) info->history[i] /= p->bscale;
        info->resnorm /= p->bscale;
    }
cleanup:
    if (scaled) unscale_st = krill_blas_scal(p->ctx, p->n, 1.0 / p->bscale, p->x);
    return st != KRILL_OK ? st : unscale_st;
}

krill_status krill_solve(const krill_mat *a, const krill_pc *pc, const krill_vec *b,
                         krill_vec *x, const krill_solver_opts *opts, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    krill_solve_problem p;
    krill_phase_timer timer;
    double *bnorm_dev = NULL;
    int timer_started = 0;
    unsigned long ws_epoch = 0;  /* kept workspace this solve does not take back is freed at
                                    its end (krill_ws_trim) */

    memset(&p, 0, sizeof p);
    KRILL_REQUIRE(info != NULL, "krill_solve: info is NULL");
    memset(info, 0, sizeof *info);
    /* on a communicator, a rank whose local arguments are wrong fails every rank */
    KRILL_TRY(krill_ctx_agree(a ? a->ctx : NULL, check_arguments(a, pc, b, x)));
    if (opts) p.opts = *opts;
    else krill_solver_opts_default(&p.opts);
    KRILL_TRY(check_options(&p.opts));
    p.ctx = a->ctx;
    p.a = a;
    p.pc = pc;
    p.b = krill_vec_data((krill_vec *)b);
    p.x = krill_vec_data(x);
    p.n = a->n_rows;
    p.timer = &timer;
    ws_epoch = krill_ws_epoch(p.ctx);

    krill_timer_init(&timer, p.ctx);
    timer_started = 1;
    KRILL_TRY(krill_ctx_agree(p.ctx, krill_alloc_n((void **)&info->history,
                                                   (size_t)p.opts.maxit + 1, sizeof(double), 0,
                                                   "info->history")));
    KRILL_TRY(krill_ctx_agree(p.ctx, krill_ws_alloc(p.ctx, (void **)&bnorm_dev,
                                                    sizeof *bnorm_dev, "bnorm_dev")));
    {   /* the dimension over the ranks (exact in a double below 2^53 rows) */
        double n_all = (double)p.n;
        KRILL_TRY(krill_ctx_allreduce(p.ctx, &n_all, 1, KRILL_REDUCE_SUM));
        p.n_global = (int64_t)n_all;
    }
    KRILL_TRY(krill_blas_nrm2(p.ctx, p.n, p.b, bnorm_dev));
    KRILL_TRY(krill_scalars_read(p.ctx, bnorm_dev, &p.bnorm, 1));
    info->bnorm = p.bnorm;
    if (!krill_is_finite(p.bnorm)) {
        info->reason = KRILL_DIVERGED_NAN;
        st = krill_error(KRILL_ERR_NUMERIC, "krill_solve: b contains NaN or Inf (||b|| = %g)",
                         p.bnorm);
        goto cleanup;
    }
    if (p.bnorm == 0.0) {        /* b = 0: x = 0 is the solution, exactly */
        KRILL_TRY(krill_blas_fill(p.ctx, p.n, 0.0, p.x));
        KRILL_TRY(krill_ctx_sync(p.ctx));
        info->reason = KRILL_CONVERGED_ZERO_RHS;
        info->history[0] = 0.0;
        info->history_len = 1;
        KRILL_TRY(krill_timer_finish(&timer, &info->times));
        goto cleanup;
    }
    KRILL_TRY(run_equilibrated(&p, info));
cleanup:
    if (p.ctx) {
        krill_ws_free(p.ctx, bnorm_dev);
        krill_ws_trim(p.ctx, ws_epoch);
        /* x is final when krill_solve returns: the workspace's cudaFree used to wait for the
         * device here, and the kept workspace frees nothing, so wait for x's last updates */
        if (krill_on_gpu(p.ctx)) {
            krill_status done = krill_ctx_sync(p.ctx);
            if (st == KRILL_OK) st = done;
            /* NCCL: a failure in a reduction after the solver's last read (CG runs one
             * iteration ahead) is returned here, on every rank */
            if (st == KRILL_OK) st = krill_ctx_settle(p.ctx);
        }
    }
    if (timer_started) krill_timer_destroy(&timer);
    if (st != KRILL_OK && info) krill_solve_info_free(info);
    return st;
}
