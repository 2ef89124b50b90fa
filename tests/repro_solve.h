/* tests/repro_solve.h - what the reproducible-solve tests share (test_repro_solve.c on the
 * CPU, test_gpu_repro_solve.c against the GPU): the problems and solver cases, one whole
 * solve on a context in a given mode with its results brought to the host, and the bitwise
 * comparison of two solves (status, reason, iterations, every history entry, the final true
 * residual and every byte of x). Header-only, like solver_util.h. */
#ifndef KRILL_TEST_REPRO_SOLVE_H
#define KRILL_TEST_REPRO_SOLVE_H

#include <stdlib.h>
#include <string.h>

#include "ozaki/ozaki_impl.h"
#include "testutil.h"

/* A solver with its preconditioner and iteration budget. The budgets are short of
 * convergence on purpose: every solve runs the same number of iterations through restarts
 * (GMRES(30) restarts once), so the comparisons see long histories. */
typedef struct rs_case {
    const char *label;
    krill_solver_type solver;
    krill_ortho ortho;
    const char *pc;              /* NULL: none */
    int maxit;
    int spd_only;                /* CG, MINRES: only on SPD (symmetric) problems */
} rs_case;

static const rs_case rs_cases[] = {
    {"gmres(30)", KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, NULL, 45, 0},
    {"gmres(30) mgs", KRILL_SOLVER_GMRES, KRILL_ORTHO_MGS, NULL, 40, 0},
    {"gmres(30)+jacobi", KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, "jacobi", 40, 0},
    {"fgmres(30)+jacobi", KRILL_SOLVER_FGMRES, KRILL_ORTHO_CGS2, "jacobi", 40, 0},
    {"cg", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, NULL, 60, 1},
    {"cg+jacobi", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, "jacobi", 60, 1},        /* DIAGONAL */
    {"cg+bjacobi:3", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, "bjacobi:3", 60, 1},  /* GENERAL */
    {"bicgstab", KRILL_SOLVER_BICGSTAB, KRILL_ORTHO_CGS2, NULL, 30, 0},
    {"minres", KRILL_SOLVER_MINRES, KRILL_ORTHO_CGS2, NULL, 60, 1},
    {"minres+jacobi", KRILL_SOLVER_MINRES, KRILL_ORTHO_CGS2, "jacobi", 60, 1},
    {"gmres(30) dcgs2", KRILL_SOLVER_GMRES, KRILL_ORTHO_DCGS2, NULL, 45, 0},
    {"fgmres(30)+jac dcgs2", KRILL_SOLVER_FGMRES, KRILL_ORTHO_DCGS2, "jacobi", 40, 0},
};
#define RS_NCASES ((int)(sizeof rs_cases / sizeof rs_cases[0]))

/* A test matrix: a generator spec, or a testdata file (skipped with a message when the
 * folder is absent). `cg_only`: a larger SPD problem for the CG cases alone. */
typedef struct rs_problem {
    const char *spec;            /* krill_gen spec, or NULL */
    const char *file;            /* testdata path, or NULL */
    int spd;
    int cg_only;
} rs_problem;

static const rs_problem rs_problems[] = {
    {"elasticity3d:7,7,7", NULL, 1, 0},      /* 8 x 8 x 8 nodes, 1344 rows, SPD */
    {"convdiff3d:24", NULL, 0, 0},           /* 13824 rows, nonsymmetric */
    {"poisson3d:21", NULL, 1, 1},            /* 9261 rows, SPD: CG on a vector >= 8192 */
    {NULL, "mtx/bcsstk15.mtx", 1, 0},        /* 3948 rows, SPD, real (HB structural) */
};
#define RS_NPROBLEMS ((int)(sizeof rs_problems / sizeof rs_problems[0]))

/* The reproducible modes under test: exact, and a fixed slice count. */
typedef struct rs_mode {
    krill_repro_mode mode;
    int slices;
    const char *name;
} rs_mode;

static const rs_mode rs_modes[] = {
    {KRILL_REPRO_OZAKI, 0, "exact"},
    {KRILL_REPRO_OZAKI, 2, "S=2"},
};
#define RS_NMODES ((int)(sizeof rs_modes / sizeof rs_modes[0]))

static inline int rs_case_applies(const rs_case *c, const rs_problem *p)
{
    return (!c->spd_only || p->spd) && (!p->cg_only || c->solver == KRILL_SOLVER_CG);
}

/* The problem's matrix, or NULL (with a message) when its testdata file is absent. */
static inline krill_csr *rs_matrix(const rs_problem *p, char *name, size_t len)
{
    krill_csr *csr = NULL;
    const char *path;
    if (p->spec) {
        snprintf(name, len, "%s", p->spec);
        if (krill_gen(p->spec, &csr) != KRILL_OK) {
            fprintf(stderr, "krill_gen(%s) failed: %s\n", p->spec, krill_last_error());
            exit(1);
        }
        return csr;
    }
    snprintf(name, len, "%s", p->file);
    path = tu_testdata_path(p->file);
    if (!path) {
        printf("%s: skipped (testdata folder absent: set KRILL_TESTDATA)\n", p->file);
        return NULL;
    }
    if (krill_mm_read(path, &csr, NULL) != KRILL_OK) {
        fprintf(stderr, "reading %s failed: %s\n", path, krill_last_error());
        exit(1);
    }
    return csr;
}

/* b = A x_true with x_true random (seed 1), by the CSR reference SpMV: one b for all runs. */
static inline double *rs_rhs(const krill_csr *a)
{
    double *xt = calloc((size_t)a->n_rows + 1, sizeof(double));
    double *b = calloc((size_t)a->n_rows + 1, sizeof(double));
    if (!xt || !b) exit(1);
    tu_random(xt, a->n_rows, 1);
    krill_csr_spmv_ref(a, 1.0, xt, 0.0, b);
    free(xt);
    return b;
}

/* What a solve left: everything the contract says is reproducible. */
typedef struct rs_result {
    krill_status st;
    char error[256];             /* krill_last_error() when st != KRILL_OK */
    krill_reason reason;
    int iterations, history_len;
    double resnorm;
    double *history;             /* history_len entries */
    double *x;                   /* n */
    int64_t n;
} rs_result;

static inline void rs_result_free(rs_result *r)
{
    free(r->history);
    free(r->x);
    memset(r, 0, sizeof *r);
}

/* Solve A x = b from x = 0 on ctx (already in its mode) with the matrix in `format`. A
 * failing call is recorded in r->st and r->error (the caller decides what it means). */
static inline void rs_solve(krill_ctx *ctx, const krill_csr *a, const double *b,
                            const char *format, const rs_case *c, rs_result *r)
{
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vb = NULL, *vx = NULL;
    krill_solve_info info;
    krill_solver_opts o;
    memset(r, 0, sizeof *r);
    memset(&info, 0, sizeof info);
    r->n = a->n_rows;
    krill_solver_opts_default(&o);
    o.solver = c->solver;
    o.ortho = c->ortho;
    o.rtol = 1e-14;              /* not reached in maxit: every solve runs its budget */
    o.maxit = c->maxit;
    o.restart = 30;
    r->st = krill_mat_create(ctx, a, format, &m);
    if (r->st == KRILL_OK && c->pc) r->st = krill_pc_create(m, c->pc, &pc);
    if (r->st == KRILL_OK) r->st = krill_vec_create(ctx, a->n_rows, &vb);
    if (r->st == KRILL_OK) r->st = krill_vec_create(ctx, a->n_rows, &vx);
    if (r->st == KRILL_OK) r->st = krill_vec_upload(vb, b);
    if (r->st == KRILL_OK) r->st = krill_vec_fill(vx, 0.0);
    if (r->st == KRILL_OK) r->st = krill_solve(m, pc, vb, vx, &o, &info);
    if (r->st == KRILL_OK) {
        r->x = calloc((size_t)a->n_rows + 1, sizeof(double));
        if (!r->x) exit(1);
        r->st = krill_vec_download(vx, r->x);
    }
    if (r->st != KRILL_OK) {
        snprintf(r->error, sizeof r->error, "%s", krill_last_error());
    } else {
        r->reason = info.reason;
        r->iterations = info.iterations;
        r->history_len = info.history_len;
        r->resnorm = info.resnorm;
        r->history = malloc(((size_t)info.history_len + 1) * sizeof(double));
        if (!r->history) exit(1);
        memcpy(r->history, info.history, (size_t)info.history_len * sizeof(double));
    }
    krill_solve_info_free(&info);
    krill_vec_destroy(&vb);
    krill_vec_destroy(&vx);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
}

/* 0 when a and b are the same solve bit for bit; else a description of the first
 * difference in `why`. Two failed calls are "the same" only with the same status. */
static inline int rs_differ(const rs_result *a, const rs_result *b, char *why, size_t len)
{
    snprintf(why, len, "identical");
    if (a->st != b->st) {
        snprintf(why, len, "status %s vs %s", krill_status_string(a->st),
                 krill_status_string(b->st));
        return 1;
    }
    if (a->st != KRILL_OK) return 0;
    if (a->reason != b->reason || a->iterations != b->iterations ||
        a->history_len != b->history_len) {
        snprintf(why, len, "reason %d vs %d, iterations %d vs %d", (int)a->reason,
                 (int)b->reason, a->iterations, b->iterations);
        return 1;
    }
    for (int i = 0; i < a->history_len; i++)
        if (memcmp(&a->history[i], &b->history[i], sizeof(double)) != 0) {
            snprintf(why, len, "history[%d] = %.17g vs %.17g", i, a->history[i], b->history[i]);
            return 1;
        }
    if (memcmp(&a->resnorm, &b->resnorm, sizeof(double)) != 0) {
        snprintf(why, len, "final true residual %.17g vs %.17g", a->resnorm, b->resnorm);
        return 1;
    }
    for (int64_t i = 0; i < a->n; i++)
        if (memcmp(&a->x[i], &b->x[i], sizeof(double)) != 0) {
            int64_t count = 0;
            for (int64_t j = i; j < a->n; j++) count += memcmp(&a->x[j], &b->x[j], 8) != 0;
            snprintf(why, len, "history equal; x[%lld] = %.17g vs %.17g (%lld of %lld entries "
                     "differ)", (long long)i, a->x[i], b->x[i], (long long)count,
                     (long long)a->n);
            return 1;
        }
    return 0;
}

/* A solve that must have worked: prints the error otherwise. */
static inline void rs_check_ran(const rs_result *r, const char *what)
{
    CHECK(r->st == KRILL_OK);
    if (r->st != KRILL_OK)
        fprintf(stderr, "%s: %s: %s\n", what, krill_status_string(r->st), r->error);
}

#endif
