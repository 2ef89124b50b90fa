/* The solvers on the GPU: the fused Krylov kernels against their CPU twins (solver/fused.c),
 * then CG, PCG (Jacobi), GMRES and FGMRES (CGS2, MGS) and BiCGStab on the same systems as
 * the CPU tests, with every registered preconditioner that builds, compared with the CPU
 * run: same reason, iterations within 2 (BiCGStab, whose residual is not monotone and more
 * sensitive to rounding: within 2 + 10%), true relative residual <= rtol by the reference
 * SpMV, solution close to the CPU's. Also the monitor (exact stop on the GPU), maxit, b = 0,
 * the time breakdown, and allocation faults, for each solver. */
#include "core/core_impl.h"
#include "solver/solver_impl.h"
#include "solver_util.h"

static void from_ctx(krill_ctx *ctx, double *h, const double *d, int64_t n)
{
    CHECK_OK(krill_mem_download(ctx, h, d, (size_t)n * sizeof(double)));
}

/* CGS passes at the edges of the fused kernel's instances (8, 16, 32 columns) and past
 * them (the cuBLAS fallback), GPU against CPU: the sums alone, the subtraction with the
 * sums, the subtraction alone (CGS2's three passes). */
static void test_cgs_wide(krill_ctx *gpu, krill_ctx *cpu)
{
    const int64_t n = 20011;
    const int widths[] = {1, 8, 9, 16, 17, KRILL_CGS_MAX_COLS, KRILL_CGS_MAX_COLS + 3};
    for (int t = 0; t < (int)(sizeof widths / sizeof widths[0]); t++) {
        const int k = widths[t];
        double *vh = malloc((size_t)n * (size_t)(k + 1) * sizeof(double));
        double h[2][2 * KRILL_CGS_MAX_COLS + 8], *wout[2];
        krill_ctx *ctxs[2] = {cpu, gpu};
        tu_random(vh, n * (k + 1), 60 + (uint64_t)t);
        for (int c = 0; c < 2; c++) {
            krill_ctx *ctx = ctxs[c];
            krill_reduce_ws red;
            double *v = su_to_ctx(ctx, vh, n * (k + 1)), *w = v + (size_t)k * (size_t)n;
            double *hd = su_to_ctx(ctx, vh, 2 * k + 2);
            CHECK_OK(krill_reduce_ws_create(ctx, k + 1, &red));
            CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, NULL, w, hd, NULL));
            CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, hd, w, hd + k, hd + 2 * k));
            CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, hd + k, w, NULL, hd + 2 * k + 1));
            CHECK_OK(krill_scalars_read(ctx, hd, h[c], 2 * k + 2));
            wout[c] = malloc((size_t)n * sizeof(double));
            from_ctx(ctx, wout[c], w, n);
            krill_reduce_ws_destroy(ctx, &red);
            krill_mem_free(ctx, v);
            krill_mem_free(ctx, hd);
        }
        for (int i = 0; i <= 2 * k + 1; i++) CHECK_CLOSE(h[1][i] / h[0][i], 1.0, 1e-11);
        CHECK(tu_max_rel_diff(wout[1], wout[0], n) <= 1e-11);
        for (int c = 0; c < 2; c++) free(wout[c]);
        free(vh);
    }
}

/* Runs one fused operation on both contexts from the same inputs and compares the outputs. */
static void test_kernels(krill_ctx *gpu, krill_ctx *cpu)
{
    const int64_t n = 100003;      /* several blocks per SM and a ragged tail */
    const int k = 7;
    krill_ctx *ctxs[2] = {cpu, gpu};
    double *vh = malloc((size_t)n * (k + 1) * sizeof(double));
    double *wh = malloc((size_t)n * sizeof(double)), *dh = malloc((size_t)n * sizeof(double));
    double *out[2], h[2][8], res[2], cgs[2][48], *wh_cgs[2];
    krill_cg_state st[2][3];
    tu_random(vh, n * (k + 1), 51);
    tu_random(wh, n, 52);
    tu_random(dh, n, 53);
    for (int64_t i = 0; i < n; i++) dh[i] = 1.0 + fabs(dh[i]);
    /* per context: w and x after the GEMVs and axpy-dots, then r and p after the CG steps */
    for (int c = 0; c < 2; c++) out[c] = malloc((size_t)n * 4 * sizeof(double));
    for (int c = 0; c < 2; c++) wh_cgs[c] = malloc((size_t)n * sizeof(double));

    for (int c = 0; c < 2; c++) {
        krill_ctx *ctx = ctxs[c];
        krill_reduce_ws red;
        double *v = su_to_ctx(ctx, vh, n * (k + 1)), *w = su_to_ctx(ctx, wh, n);
        double *d = su_to_ctx(ctx, dh, n), *x = su_to_ctx(ctx, wh, n), *hd = su_to_ctx(ctx, vh, 48);
        krill_cg_state *s = NULL;
        krill_async_read reader;
        CHECK_OK(krill_reduce_ws_create(ctx, k + 1, &red));
        CHECK_OK(krill_mem_alloc(ctx, (void **)&s, sizeof *s, "state"));
        CHECK_OK(krill_async_read_create(ctx, sizeof *s, &reader));

        /* the CGS2 passes as GMRES runs them: V^T w (and w'w); w -= V h1 with V^T w;
         * w -= V h2 with w'w; V^T w once more (V is random here, not orthonormal: the
         * passes are compared with the CPU's, not checked for orthogonality) */
        CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, NULL, w, hd, hd + 40));
        CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, hd, w, hd + 16, NULL));
        CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, hd + 16, w, NULL, hd + 41));
        CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, NULL, w, hd + 24, NULL));
        CHECK_OK(krill_scalars_read(ctx, hd, cgs[c], 48));
        from_ctx(ctx, wh_cgs[c], w, n);
        CHECK_OK(krill_mem_upload(ctx, w, wh, (size_t)n * sizeof(double)));

        /* GEMV-N (beta 1 and 0), axpy + dot */
        CHECK_OK(krill_fused_cgs_pass(ctx, &red, n, k, v, n, NULL, w, hd, NULL));
        CHECK_OK(krill_scalars_read(ctx, hd, h[c], k));
        CHECK_OK(krill_fused_gemv_n(ctx, n, k, -1.0, v, n, hd, 1.0, w));
        CHECK_OK(krill_fused_gemv_n(ctx, n, k, 0.5, v, n, hd, 0.0, x));
        CHECK_OK(krill_fused_axpy_dot(ctx, &red, n, hd + 1, v, w, v + n, hd + 9));
        CHECK_OK(krill_fused_axpy_dot(ctx, &red, n, hd + 2, v + n, w, NULL, hd + 10));
        CHECK_OK(krill_scalars_read(ctx, hd + 9, &h[c][0] + 7, 1));
        CHECK_OK(krill_scalars_read(ctx, hd + 10, &res[c], 1));
        from_ctx(ctx, out[c], w, n);
        from_ctx(ctx, out[c] + n, x, n);

        /* CG: residual + direction in the three preconditioner modes, from one state */
        for (int mode = KRILL_CG_PC_NONE; mode <= KRILL_CG_PC_GENERAL; mode++) {
            krill_cg_state init = {0};
            init.rz = 3.0;
            init.pap = 2.0;
            init.rz_next = 1.5;
            init.tol2 = 1e-300;
            init.applied = 4;
            CHECK_OK(krill_mem_upload(ctx, s, &init, sizeof init));
            CHECK_OK(krill_fused_cg_residual(ctx, &red, n, 5, mode, s, v, w,
                                             mode == KRILL_CG_PC_DIAGONAL ? d : NULL));
            if (mode == KRILL_CG_PC_GENERAL) CHECK_OK(krill_fused_cg_scalars(ctx, 5, s));
            CHECK_OK(krill_fused_cg_direction(ctx, n, 5, s, w,
                                              mode == KRILL_CG_PC_DIAGONAL ? d : NULL, x,
                                              v + 2 * n));
            CHECK_OK(krill_async_read_start(&reader, 1, s));
            CHECK_OK(krill_async_read_wait(&reader, 1, &st[c][mode]));
        }
        from_ctx(ctx, out[c] + 2 * n, w, n);
        from_ctx(ctx, out[c] + 3 * n, v + 2 * n, n);

        krill_async_read_destroy(&reader);
        krill_mem_free(ctx, s);
        krill_reduce_ws_destroy(ctx, &red);
        krill_mem_free(ctx, v);
        krill_mem_free(ctx, w);
        krill_mem_free(ctx, d);
        krill_mem_free(ctx, x);
        krill_mem_free(ctx, hd);
    }
    for (int i = 0; i < 8; i++) CHECK_CLOSE(h[1][i], h[0][i], 1e-11);
    for (int i = 0; i < k; i++) {
        CHECK_CLOSE(cgs[1][i] / cgs[0][i], 1.0, 1e-11);
        CHECK_CLOSE(cgs[1][16 + i] / cgs[0][16 + i], 1.0, 1e-11);
        CHECK_CLOSE(cgs[1][24 + i] / cgs[0][24 + i], 1.0, 1e-11);
    }
    CHECK_CLOSE(cgs[1][40] / cgs[0][40], 1.0, 1e-12);
    CHECK_CLOSE(cgs[1][41] / cgs[0][41], 1.0, 1e-12);
    CHECK(tu_max_rel_diff(wh_cgs[1], wh_cgs[0], n) <= 1e-11);
    for (int c = 0; c < 2; c++) free(wh_cgs[c]);
    CHECK_CLOSE(res[1], res[0], 1e-11);
    CHECK(tu_max_rel_diff(out[1], out[0], 4 * n) <= 1e-11);
    for (int mode = 0; mode < 3; mode++) {
        CHECK(st[1][mode].applied == 5 && st[0][mode].applied == 5);
        CHECK(st[1][mode].stop == st[0][mode].stop && st[0][mode].stop == KRILL_CG_RUNNING);
        CHECK_CLOSE(st[1][mode].alpha, 1.5, 0.0);
        CHECK_CLOSE(st[1][mode].rr, st[0][mode].rr, 1e-11);
        CHECK_CLOSE(st[1][mode].rz, st[0][mode].rz, 1e-11);
        CHECK_CLOSE(st[1][mode].beta, st[0][mode].beta, 1e-11);
    }
    for (int c = 0; c < 2; c++) free(out[c]);
    free(vh);
    free(wh);
    free(dh);
}

typedef struct run_result {
    krill_reason reason;
    int iterations;
    double relres;           /* by the reference SpMV */
    double *x;               /* n */
} run_result;

static void run(krill_ctx *ctx, const char *spec, const char *pc_name,
                const krill_solver_opts *o, run_result *out)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_solve_info info;
    su_system_make(&s, ctx, su_gen(spec), NULL, 61);
    if (pc_name) CHECK_OK(krill_pc_create(s.a, pc_name, &pc));
    CHECK_OK(su_solve(&s, pc, o, &info));
    (void)su_error(&s);
    out->reason = info.reason;
    out->iterations = info.iterations;
    out->relres = su_true_relres(s.csr, s.x_host, s.b_host);
    out->x = malloc((size_t)s.n * sizeof(double));
    memcpy(out->x, s.x_host, (size_t)s.n * sizeof(double));
    CHECK(info.history_len == info.iterations + 1);
    CHECK(info.times.total > 0.0 && info.times.spmv > 0.0 && info.times.ortho > 0.0);
    CHECK(info.times.setup + info.times.spmv + info.times.precond + info.times.ortho +
              info.times.other <= info.times.total * (1.0 + 1e-9) + 1e-9);
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

static void compare(krill_ctx *gpu, krill_ctx *cpu, const char *spec, const char *pc_name,
                    const krill_solver_opts *o)
{
    run_result g, c;
    int64_t n;
    int gmres_like = o->solver == KRILL_SOLVER_GMRES || o->solver == KRILL_SOLVER_FGMRES;
    int slack;
    krill_csr *csr;
    if (!tu_shard_mine()) return;   /* one unit of work (KRILL_TEST_SHARD) */
    csr = su_gen(spec);
    n = csr->n_rows;
    krill_csr_destroy(&csr);
    if (tu_quick() && n > 10000) {   /* quick: the small systems (the same kernels) */
        printf("quick: %s left out\n", spec);
        return;
    }
    run(gpu, spec, pc_name, o, &g);
    run(cpu, spec, pc_name, o, &c);
    slack = o->solver == KRILL_SOLVER_BICGSTAB ? 2 + c.iterations / 10 : 2;
    CHECK(g.reason == c.reason && g.reason == KRILL_CONVERGED_RTOL);
    CHECK(abs(g.iterations - c.iterations) <= slack);
    CHECK(g.relres <= o->rtol);
    CHECK(tu_max_rel_diff(g.x, c.x, n) <= 1e-6);
    printf("%-8s %-5s %-20s pc %-8s: gpu %4d its relres %.2e | cpu %4d its relres %.2e\n",
           krill_solver_name(o->solver),
           gmres_like ? su_ortho_name(o->ortho) : "",
           spec, pc_name ? pc_name : "none", g.iterations, g.relres, c.iterations, c.relres);
    free(g.x);
    free(c.x);
}

static void test_solves(krill_ctx *gpu, krill_ctx *cpu)
{
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.rtol = 1e-10;
    o.solver = KRILL_SOLVER_CG;
    compare(gpu, cpu, "poisson3d:12", NULL, &o);
    compare(gpu, cpu, "elasticity3d:6,3,3", NULL, &o);
    compare(gpu, cpu, "elasticity3d:6,3,3", "jacobi", &o);
    compare(gpu, cpu, "poisson3d:40", "jacobi", &o);
    o.solver = KRILL_SOLVER_GMRES;
    for (int ortho = KRILL_ORTHO_CGS2; ortho <= KRILL_ORTHO_DCGS2; ortho++) {
        o.ortho = (krill_ortho)ortho;
        o.restart = 30;
        compare(gpu, cpu, "convdiff3d:10,2", NULL, &o);
        compare(gpu, cpu, "convdiff3d:10,2", "jacobi", &o);
        o.restart = 5;
        compare(gpu, cpu, "convdiff3d:30,1", NULL, &o);
        o.restart = 1;                  /* the narrowest basis: two columns of sums */
        compare(gpu, cpu, "poisson3d:6", NULL, &o);
    }
    o.solver = KRILL_SOLVER_FGMRES;
    for (int ortho = KRILL_ORTHO_CGS2; ortho <= KRILL_ORTHO_DCGS2; ortho++) {
        o.ortho = (krill_ortho)ortho;
        o.restart = 30;
        compare(gpu, cpu, "convdiff3d:10,2", "jacobi", &o);
        o.restart = 5;
        compare(gpu, cpu, "convdiff3d:30,1", "jacobi", &o);
    }
    o.solver = KRILL_SOLVER_BICGSTAB;
    compare(gpu, cpu, "convdiff3d:10,2", NULL, &o);
    compare(gpu, cpu, "convdiff3d:10,2", "jacobi", &o);
    compare(gpu, cpu, "convdiff3d:30,1", NULL, &o);
    compare(gpu, cpu, "convdiff3d:12,20", "jacobi", &o);
    o.solver = KRILL_SOLVER_MINRES;     /* the saddle point, and an SPD matrix with Jacobi */
    compare(gpu, cpu, "stokes2d:16", NULL, &o);
    compare(gpu, cpu, "stokes2d:40", NULL, &o);
    compare(gpu, cpu, "poisson3d:16", "jacobi", &o);
    o.solver = KRILL_SOLVER_PIPECG;     /* the GPU's composed path against the CPU's merged */
    compare(gpu, cpu, "poisson3d:12", NULL, &o);
    compare(gpu, cpu, "elasticity3d:6,3,3", "jacobi", &o);
    compare(gpu, cpu, "poisson3d:16", "ic0", &o);
}

/* 1 when the preconditioner builds on the matrix of `spec` on the CPU (else it says why). */
static int builds_on_cpu(krill_ctx *cpu, const char *spec, const char *pc_name)
{
    krill_csr *csr = su_gen(spec);
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    int ok;
    CHECK_OK(krill_mat_create(cpu, csr, NULL, &a));
    ok = krill_pc_create(a, pc_name, &pc) == KRILL_OK;
    if (!ok) printf("%-20s pc %-8s: not built here (%s)\n", spec, pc_name, krill_last_error());
    krill_pc_destroy(&pc);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
    return ok;
}

/* Every registered preconditioner that builds on the CPU, with each solver it suits, GPU
 * against CPU: GMRES, FGMRES and BiCGStab on a nonsymmetric matrix, CG on an SPD one. */
static void test_every_preconditioner(krill_ctx *gpu, krill_ctx *cpu)
{
    const char *const *names = krill_pc_names();
    const krill_solver_type nonsym[3] = {KRILL_SOLVER_GMRES, KRILL_SOLVER_FGMRES,
                                         KRILL_SOLVER_BICGSTAB};
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.rtol = 1e-10;
    for (int k = 0; names[k]; k++) {
        if (builds_on_cpu(cpu, "convdiff3d:16,5", names[k]))
            for (int s = 0; s < 3; s++) {
                o.solver = nonsym[s];
                compare(gpu, cpu, "convdiff3d:16,5", names[k], &o);
            }
        if (builds_on_cpu(cpu, "elasticity3d:6,3,3", names[k])) {
            o.solver = KRILL_SOLVER_CG;
            compare(gpu, cpu, "elasticity3d:6,3,3", names[k], &o);
        }
    }
}

/* GPU-specific paths: the monitor stops CG exactly (no run-ahead with a monitor), maxit
 * with the run-ahead, b = 0, faults. */
static void test_gpu_paths(krill_ctx *gpu)
{
    su_system s;
    krill_solve_info info;
    krill_solver_opts o;
    su_monitor mon = {0, 0, 1, 6};
    double *zeros;
    su_system_make(&s, gpu, su_gen("poisson3d:16"), NULL, 62);
    zeros = calloc((size_t)s.n, sizeof(double));
    krill_solver_opts_default(&o);
    for (int solver = KRILL_SOLVER_GMRES; solver <= KRILL_SOLVER_MINRES; solver++) {
        o.solver = (krill_solver_type)solver;
        o.monitor = su_monitor_fn;
        o.monitor_data = &mon;
        mon = (su_monitor){0, 0, 1, 6};
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 6 && mon.calls == 6);
        CHECK(mon.in_order);
        krill_solve_info_free(&info);
        o.monitor = NULL;
        o.maxit = 9;
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 9);
        CHECK(info.history_len == 10);
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        CHECK_CLOSE(info.relres, su_true_relres(s.csr, s.x_host, s.b_host), 1e-8);
        krill_solve_info_free(&info);
        o.maxit = 10000;
        CHECK_OK(krill_vec_upload(s.b, zeros));
        CHECK_OK(krill_vec_fill(s.x, 1.0));
        CHECK_OK(krill_solve(s.a, NULL, s.b, s.x, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_ZERO_RHS);
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        CHECK(su_norm(s.x_host, s.n) == 0.0);
        krill_solve_info_free(&info);
        CHECK_OK(krill_vec_upload(s.b, s.b_host));

        /* every allocation of a solve fails once, cleanly */
        long before = krill_alloc_calls(), calls;
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        calls = krill_alloc_calls() - before;
        krill_solve_info_free(&info);
        for (long k = 1; k <= calls; k++) {
            CHECK_OK(krill_vec_fill(s.x, 0.0));
            krill_fault_alloc_after(k);
            krill_status st = krill_solve(s.a, NULL, s.b, s.x, &o, &info);
            krill_fault_alloc_after(0);
            CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
            CHECK(info.history == NULL);
        }
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL);
        krill_solve_info_free(&info);
    }
    free(zeros);
    su_system_free(&s);
}

int main(void)
{
    krill_ctx *gpu = tu_gpu_ctx_or_skip();
    krill_ctx *cpu = tu_cpu_ctx(2);
    TU_STEP(test_kernels(gpu, cpu));
    TU_STEP(test_cgs_wide(gpu, cpu));
    TU_SPLIT(test_solves(gpu, cpu));                 /* each compare() a unit of work */
    TU_SPLIT(test_every_preconditioner(gpu, cpu));   /* each compare() a unit */
    TU_STEP(test_gpu_paths(gpu));
    krill_ctx_destroy(&gpu);
    krill_ctx_destroy(&cpu);
    return tu_finish("test_solver_gpu");
}
