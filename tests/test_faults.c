/* Allocation faults through the public functions that allocate (issue 17): each is walked
 * with its k-th allocation failing, k = 1, 2, ... until it succeeds (tu_alloc_fault_walk):
 * every failure is KRILL_ERR_ALLOC (or DEVICE_ALLOC) with a message, leaves its outputs NULL
 * or unchanged, and leaks nothing (the ASan build). The generators, the CSR constructors,
 * vectors, the ELL, ELL-R and auto builds, SpMV timing, preconditioner value updates, the
 * Matrix Market vector and array writers and the coordinate vector reader; krill_solve in
 * reproducible mode and with ilu0, ic0 and bjacobi. krill_csr_is_symmetric takes its cursor
 * through the hook and, refused it, still answers (a search per entry). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"
#include "solver_util.h"

/* ---- the CSR constructors and generators ------------------------------------------------ */

typedef struct csr_call {
    const char *spec;        /* krill_gen */
    const krill_csr *src;    /* krill_csr_copy */
    krill_csr *out;
} csr_call;

static int csr_out_null(void *user) { return ((csr_call *)user)->out == NULL; }

static void csr_out_free(void *user) { krill_csr_destroy(&((csr_call *)user)->out); }

static krill_status run_gen(void *user)
{
    csr_call *c = user;
    return krill_gen(c->spec, &c->out);
}

static krill_status run_csr_create(void *user)
{
    return krill_csr_create(40, 30, 100, &((csr_call *)user)->out);
}

static krill_status run_csr_copy(void *user)
{
    csr_call *c = user;
    return krill_csr_copy(c->src, &c->out);
}

static krill_status run_from_triplets(void *user)
{
    /* duplicates (summed) and unsorted rows */
    static const int32_t rows[6] = { 2, 0, 1, 2, 0, 2 };
    static const int32_t cols[6] = { 1, 0, 1, 1, 2, 0 };
    static const double vals[6] = { 1.0, 2.0, 3.0, 4.0, 5.0, 6.0 };
    return krill_csr_from_triplets(3, 3, 6, rows, cols, vals, &((csr_call *)user)->out);
}

static void walk_csr(const char *what, krill_status (*run)(void *), csr_call *c)
{
    tu_fault_call call = { what, run, csr_out_null, csr_out_free, c, 0 };
    c->out = NULL;
    tu_alloc_fault_walk(&call);
}

static void test_csr(void)
{
    static const char *const specs[] = { "poisson3d:4", "convdiff3d:4,2", "elasticity3d:2,1,1",
                                         "band1:50", "band3:50", "band101:200", "rand1:50",
                                         "rand100:120", "band1x:50" };
    csr_call c = { NULL, NULL, NULL };
    krill_csr *src = su_gen("convdiff3d:4,2");
    char what[64];
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        c.spec = specs[i];
        snprintf(what, sizeof what, "krill_gen(%s)", specs[i]);
        walk_csr(what, run_gen, &c);
    }
    walk_csr("krill_csr_create", run_csr_create, &c);
    c.src = src;
    walk_csr("krill_csr_copy", run_csr_copy, &c);
    walk_csr("krill_csr_from_triplets", run_from_triplets, &c);
    krill_csr_destroy(&src);
}

/* The cursor goes through the hook; refused, the search per entry gives the same answers. */
static void test_is_symmetric(void)
{
    krill_csr *sym = su_gen("poisson3d:4"), *nonsym = su_gen("convdiff3d:4,2");
    long before = krill_alloc_calls();
    CHECK(krill_csr_is_symmetric(sym) == 1);
    CHECK(krill_alloc_calls() - before == 1);
    krill_fault_alloc_after(1);
    CHECK(krill_csr_is_symmetric(sym) == 1);
    krill_fault_alloc_after(1);
    CHECK(krill_csr_is_symmetric(nonsym) == 0);
    krill_fault_alloc_after(0);
    krill_csr_destroy(&sym);
    krill_csr_destroy(&nonsym);
}

/* ---- vectors, matrices, timing ------------------------------------------------------------ */

typedef struct ctx_call {
    krill_ctx *ctx;
    const krill_csr *csr;
    const char *format;
    double *data;            /* krill_vec_wrap's storage */
    krill_vec *v;
    krill_mat *m;
    double seconds;          /* krill_mat_time_spmv's output: -1 until it succeeds */
} ctx_call;

static int vec_null(void *user) { return ((ctx_call *)user)->v == NULL; }

static void vec_free(void *user) { krill_vec_destroy(&((ctx_call *)user)->v); }

static int mat_null(void *user) { return ((ctx_call *)user)->m == NULL; }

static void mat_free(void *user) { krill_mat_destroy(&((ctx_call *)user)->m); }

static krill_status run_vec_create(void *user)
{
    ctx_call *c = user;
    return krill_vec_create(c->ctx, 100, &c->v);
}

static krill_status run_vec_wrap(void *user)
{
    ctx_call *c = user;
    return krill_vec_wrap(c->ctx, 100, c->data, &c->v);
}

static krill_status run_mat_create(void *user)
{
    ctx_call *c = user;
    return krill_mat_create(c->ctx, c->csr, c->format, &c->m);
}

static krill_status run_time_spmv(void *user)
{
    ctx_call *c = user;
    return krill_mat_time_spmv(c->m, 1, 3, &c->seconds);
}

/* a failure leaves the median 0 (it is reset on entry) */
static int seconds_reset(void *user) { return ((ctx_call *)user)->seconds == 0.0; }

static void test_vec_mat(krill_ctx *ctx)
{
    static const char *const formats[] = { "ell", "ellr", "auto", "auto:measure" };
    double data[100];
    ctx_call c = { ctx, NULL, NULL, data, NULL, NULL, -1.0 };
    tu_fault_call vc = { "krill_vec_create", run_vec_create, vec_null, vec_free, &c, 0 };
    tu_fault_call vw = { "krill_vec_wrap", run_vec_wrap, vec_null, vec_free, &c, 0 };
    tu_fault_call mc = { NULL, run_mat_create, mat_null, mat_free, &c, 0 };
    tu_fault_call ts = { "krill_mat_time_spmv", run_time_spmv, seconds_reset, NULL, &c, 0 };
    krill_csr *csr = su_gen("convdiff3d:5,2");
    char what[64];
    for (int i = 0; i < 100; i++) data[i] = i;
    tu_alloc_fault_walk(&vc);
    tu_alloc_fault_walk(&vw);
    for (int i = 0; i < 100; i++) CHECK(data[i] == i);   /* wrapped, not touched */
    c.csr = csr;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        snprintf(what, sizeof what, "krill_mat_create(%s)", formats[i]);
        c.format = formats[i];
        mc.what = what;
        /* auto:measure leaves a candidate whose build runs out of memory unmeasured */
        mc.survives = strcmp(formats[i], "auto:measure") == 0;
        tu_alloc_fault_walk(&mc);
    }
    c.format = "csr";
    CHECK_OK(run_mat_create(&c));
    tu_alloc_fault_walk(&ts);
    CHECK(c.seconds >= 0.0);
    krill_mat_destroy(&c.m);
    krill_csr_destroy(&csr);
}

/* ---- preconditioner value updates ---------------------------------------------------------
 * After a failed update a preconditioner refuses to apply (doc/decisions.md: it may no
 * longer match the matrix) until an update succeeds; the successful update with the same
 * values gives the same preconditioner. (Jacobi's update allocates nothing.) */

typedef struct pc_call {
    krill_pc *pc;
    krill_vec *r, *z;
    double *before, *after;  /* n: M^{-1} r before the walk, and now */
    int64_t n;
} pc_call;

static krill_status run_pc_update(void *user)
{
    return krill_pc_update_values(((pc_call *)user)->pc);
}

static int pc_applies_as_before(void *user)
{
    pc_call *c = user;
    if (krill_pc_apply(c->pc, c->r, c->z) != KRILL_OK ||
        krill_vec_download(c->z, c->after) != KRILL_OK)
        return 0;
    return memcmp(c->before, c->after, (size_t)c->n * sizeof(double)) == 0;
}

static int pc_refuses(void *user)
{
    pc_call *c = user;
    return krill_pc_apply(c->pc, c->r, c->z) == KRILL_ERR_NUMERIC &&
           strstr(krill_last_error(), "last update failed") != NULL;
}

static void test_pc_update(krill_ctx *ctx)
{
    static const char *const names[] = { "bjacobi", "bjacobi:3", "ilu0", "ic0" };
    krill_csr *csr = su_gen("elasticity3d:3,2,2");
    krill_mat *a = NULL;
    pc_call c;
    double *r = NULL;
    char what[64];
    tu_fault_call call = { what, run_pc_update, pc_refuses, NULL, &c, 0 };
    memset(&c, 0, sizeof c);
    c.n = csr->n_rows;
    r = malloc((size_t)c.n * sizeof(double));
    c.before = malloc((size_t)c.n * sizeof(double));
    c.after = malloc((size_t)c.n * sizeof(double));
    if (!r || !c.before || !c.after) exit(1);
    tu_random(r, c.n, 3);
    CHECK_OK(krill_mat_create(ctx, csr, "csr", &a));
    CHECK_OK(krill_vec_create(ctx, c.n, &c.r));
    CHECK_OK(krill_vec_create(ctx, c.n, &c.z));
    CHECK_OK(krill_vec_upload(c.r, r));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_OK(krill_pc_create(a, names[i], &c.pc));
        CHECK_OK(krill_pc_apply(c.pc, c.r, c.z));
        CHECK_OK(krill_vec_download(c.z, c.before));
        snprintf(what, sizeof what, "krill_pc_update_values(%s)", names[i]);
        /* the same values: the successful update gives the same preconditioner as well */
        tu_alloc_fault_walk(&call);
        CHECK(pc_applies_as_before(&c));
        krill_pc_destroy(&c.pc);
    }
    krill_vec_destroy(&c.r);
    krill_vec_destroy(&c.z);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
    free(r);
    free(c.before);
    free(c.after);
}

/* ---- Matrix Market vectors and arrays ------------------------------------------------------
 * A failed write leaves no file; a failed read leaves *x NULL and *n 0. */

typedef struct mm_call {
    const char *path;
    const double *values;
    double *x;
    int64_t n;
} mm_call;

static krill_status run_write_vector(void *user)
{
    mm_call *c = user;
    return krill_mm_write_vector(c->path, c->values, 7);
}

static krill_status run_write_array(void *user)
{
    mm_call *c = user;
    return krill_mm_write_array(c->path, c->values, 4, 3);
}

static int no_file(void *user) { return access(((mm_call *)user)->path, F_OK) != 0; }

static void remove_file(void *user) { remove(((mm_call *)user)->path); }

static krill_status run_read_vector(void *user)
{
    mm_call *c = user;
    return krill_mm_read_vector(c->path, &c->x, &c->n);
}

static int read_untouched(void *user)
{
    mm_call *c = user;
    return c->x == NULL && c->n == 0;    /* reset on entry */
}

static void read_free(void *user)
{
    mm_call *c = user;
    CHECK(c->n == 5 && c->x != NULL && c->x[0] == 1.5 && c->x[1] == 0.0 && c->x[4] == -2.0);
    krill_host_free(c->x);
    c->x = NULL;
}

static void test_mm(void)
{
    double values[12];
    char path[64];
    mm_call c = { path, values, NULL, -1 };
    tu_fault_call wv = { "krill_mm_write_vector", run_write_vector, no_file, remove_file, &c, 0 };
    tu_fault_call wa = { "krill_mm_write_array", run_write_array, no_file, remove_file, &c, 0 };
    tu_fault_call rv = { "krill_mm_read_vector (coordinate)", run_read_vector, read_untouched,
                         read_free, &c, 0 };
    FILE *f;
    for (int i = 0; i < 12; i++) values[i] = 0.25 * i - 1.0;
    snprintf(path, sizeof path, "test_faults_%ld.mtx", (long)getpid());
    remove(path);
    tu_alloc_fault_walk(&wv);
    tu_alloc_fault_walk(&wa);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("%%MatrixMarket matrix coordinate real general\n5 1 2\n1 1 1.5\n5 1 -2\n", f);
    fclose(f);
    tu_alloc_fault_walk(&rv);
    remove(path);
}

/* ---- krill_solve -------------------------------------------------------------------------- */

static void test_solve(void)
{
    static const struct {
        krill_solver_type solver;
        const char *spec, *pc;
    } cases[] = {
        { KRILL_SOLVER_GMRES, "convdiff3d:5,1", "ilu0" },
        { KRILL_SOLVER_BICGSTAB, "convdiff3d:5,1", "ilu0" },
        { KRILL_SOLVER_CG, "poisson3d:5", "ic0" },
        { KRILL_SOLVER_CG, "poisson3d:5", "bjacobi" },
        { KRILL_SOLVER_FGMRES, "convdiff3d:5,1", "bjacobi" },
    };
    static const krill_solver_type types[4] = { KRILL_SOLVER_GMRES, KRILL_SOLVER_FGMRES,
                                                KRILL_SOLVER_CG, KRILL_SOLVER_BICGSTAB };
    krill_ctx *ctx = tu_cpu_ctx(2), *repro = tu_cpu_ctx(2);
    krill_solver_opts o;
    CHECK_OK(krill_ctx_set_repro(repro, KRILL_REPRO_OZAKI, 0));
    krill_solver_opts_default(&o);
    o.rtol = 1e-8;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        o.solver = cases[i].solver;
        su_check_alloc_faults(ctx, cases[i].spec, 7, cases[i].pc, &o, 4);
    }
    /* reproducible mode: every solver without a preconditioner, CG with the fused Jacobi,
     * GMRES with a general one */
    for (int s = 0; s < 4; s++) {
        o.solver = types[s];
        su_check_alloc_faults(repro, types[s] == KRILL_SOLVER_CG ? "poisson3d:5"
                                                                 : "convdiff3d:5,1", 9, NULL,
                              &o, 4);
    }
    o.solver = KRILL_SOLVER_CG;
    su_check_alloc_faults(repro, "poisson3d:5", 9, "jacobi", &o, 4);
    o.solver = KRILL_SOLVER_GMRES;
    su_check_alloc_faults(repro, "convdiff3d:5,1", 9, "ilu0", &o, 4);
    krill_ctx_destroy(&ctx);
    krill_ctx_destroy(&repro);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_csr();
    test_is_symmetric();
    test_vec_mat(ctx);
    test_pc_update(ctx);
    test_mm();
    test_solve();
    krill_ctx_destroy(&ctx);
    return tu_finish("test_faults");
}
