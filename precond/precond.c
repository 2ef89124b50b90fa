/* precond/precond.c - the preconditioner registry, the public API of krill/precond.h and
 * the identity preconditioner "none" (z = r). */
#include <stdio.h>
#include <string.h>

#include "precond/precond_impl.h"

/* ---- "none": M = I ------------------------------------------------------------------ */

typedef struct pc_none {
    int64_t n;
} pc_none;

static krill_status none_build(krill_ctx *ctx, const krill_mat *mat, const char *param,
                               void **impl)
{
    krill_status st = KRILL_OK;
    pc_none *p = NULL;
    (void)ctx;
    KRILL_REQUIRE(param == NULL, "preconditioner \"none\" takes no parameter (got \"%s\")",
                  param ? param : "");
    KRILL_ALLOC(p, 1);
    p->n = mat->n_rows;
    *impl = p;
    p = NULL;
cleanup:
    krill_free(p);
    return st;
}

static krill_status none_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    const pc_none *p = impl;
    return krill_blas_copy(ctx, p->n, r, z);
}

static krill_status none_update(krill_ctx *ctx, void *impl, const krill_mat *mat)
{
    (void)ctx;
    (void)impl;
    (void)mat;
    return KRILL_OK;
}

static void none_destroy(krill_ctx *ctx, void *impl)
{
    (void)ctx;
    krill_free(impl);
}

const krill_pc_ops krill_pc_none_ops = {
    .name = "none",
    .summary = "no preconditioning: z = r",
    .build = none_build,
    .apply = none_apply,
    .apply_repro = NULL,     /* a copy: the same bits everywhere */
    .update = none_update,
    .inverse_diagonal = NULL,
    .is_identity = 1,
    .destroy = none_destroy,
};

/* ---- registry ------------------------------------------------------------------------ */

static const krill_pc_ops *const pc_registry[] = {
    &krill_pc_none_ops,
    &krill_pc_jacobi_ops,
    &krill_pc_bjacobi_ops,
    &krill_pc_ilu0_ops,
    &krill_pc_ic0_ops,
};

#define PC_COUNT (sizeof pc_registry / sizeof pc_registry[0])

static const char *const pc_name_list[] = { "none", "jacobi", "bjacobi", "ilu0", "ic0", NULL };
_Static_assert(sizeof pc_name_list / sizeof pc_name_list[0] == PC_COUNT + 1,
               "pc_name_list must list the registry's names, in order");

const char *const *krill_pc_names(void) { return pc_name_list; }

/* "name" or "name:param": the table, and *param pointing after ':' (NULL if none). */
static const krill_pc_ops *pc_find(const char *name, const char **param)
{
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    *param = colon ? colon + 1 : NULL;
    for (size_t i = 0; i < PC_COUNT; i++)
        if (strlen(pc_registry[i]->name) == len && strncmp(pc_registry[i]->name, name, len) == 0)
            return pc_registry[i];
    return NULL;
}

/* z = M^{-1} r by the table: apply_repro in a reproducible mode when there is one. The mode
 * is read at every apply, so one preconditioner serves both modes. */
static krill_status pc_dispatch(const krill_pc *pc, const double *r, double *z)
{
    if (pc->ops->apply_repro && krill_ctx_repro(pc->ctx, NULL) != KRILL_REPRO_OFF)
        return pc->ops->apply_repro(pc->ctx, pc->impl, r, z);
    return pc->ops->apply(pc->ctx, pc->impl, r, z);
}

/* ---- public API ---------------------------------------------------------------------- */

krill_status krill_pc_create(const krill_mat *a, const char *name, krill_pc **pc)
{
    krill_status st = KRILL_OK;
    krill_pc *p = NULL;
    const krill_pc_ops *ops = NULL;
    const char *param = NULL;

    KRILL_REQUIRE(pc != NULL, "krill_pc_create: pc is NULL");
    *pc = NULL;
    KRILL_REQUIRE(a != NULL, "krill_pc_create: matrix a is NULL");
    if (name == NULL) name = "none";
    if (a->n_rows != a->n_cols) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "preconditioner \"%s\": the matrix is %lld x "
                         "%lld; preconditioners are built from square matrices", name,
                         (long long)a->n_rows, (long long)a->n_cols);
        goto cleanup;
    }
    ops = pc_find(name, &param);
    if (ops == NULL) {
        char known[256] = "";
        for (size_t i = 0; i < PC_COUNT; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                     i ? ", " : "", pc_registry[i]->name);
        st = krill_error(KRILL_ERR_ARG, "unknown preconditioner \"%s\" (known: %s)", name,
                         known);
        goto cleanup;
    }
    KRILL_REQUIRE(strlen(name) < sizeof p->name, "preconditioner name \"%s\" is too long", name);
    if (krill_mat_is_shell(a) && !ops->is_identity) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "preconditioner \"%s\" needs the matrix's "
                         "entries, and a shell matrix has none (only a callback y = A x): use "
                         "\"none\" or a preconditioner of your own (krill_pc_create_shell)",
                         name);
        goto cleanup;
    }

    KRILL_CALLOC(p, 1);
    p->ctx = a->ctx;
    p->mat = a;
    p->ops = ops;
    p->n = a->n_rows;
    snprintf(p->name, sizeof p->name, "%s", name);
    KRILL_TRY(ops->build(a->ctx, a, param, &p->impl));
cleanup:
    /* on a communicator (doc/mpi.md) every rank gets its preconditioner or every rank fails */
    if (a) st = krill_ctx_agree(a->ctx, st);
    if (st == KRILL_OK) {
        *pc = p;
        p = NULL;
    }
    if (p) {
        if (p->impl) p->ops->destroy(p->ctx, p->impl);
        krill_free(p);
    }
    return st;
}

void krill_pc_destroy(krill_pc **pc)
{
    if (!pc || !*pc) return;
    if ((*pc)->impl) (*pc)->ops->destroy((*pc)->ctx, (*pc)->impl);
    krill_free(*pc);
    *pc = NULL;
}

krill_status krill_pc_apply(const krill_pc *pc, const krill_vec *r, krill_vec *z)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(pc != NULL, "krill_pc_apply: pc is NULL");
    KRILL_REQUIRE(r != NULL, "krill_pc_apply: r is NULL");
    KRILL_REQUIRE(z != NULL, "krill_pc_apply: z is NULL");
    KRILL_REQUIRE(krill_vec_ctx(r) == pc->ctx && krill_vec_ctx(z) == pc->ctx,
                  "krill_pc_apply: r and z must live on the preconditioner's context");
    KRILL_REQUIRE(krill_vec_size(r) == pc->n && krill_vec_size(z) == pc->n,
                  "krill_pc_apply: r has length %lld and z %lld, the preconditioner %lld",
                  (long long)krill_vec_size(r), (long long)krill_vec_size(z),
                  (long long)pc->n);
    KRILL_REQUIRE(krill_vec_data((krill_vec *)r) != krill_vec_data(z),
                  "krill_pc_apply: r and z must be distinct vectors");
    KRILL_TRY(pc_dispatch(pc, krill_vec_data((krill_vec *)r), krill_vec_data(z)));
cleanup:
    return st;
}

krill_status krill_pc_update_values(krill_pc *pc)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(pc != NULL, "krill_pc_update_values: pc is NULL");
    KRILL_TRY(pc->ops->update(pc->ctx, pc->impl, pc->mat));
cleanup:
    return st;
}

const char *krill_pc_name(const krill_pc *pc) { return pc ? pc->name : "none"; }

const char *krill_pc_describe(const krill_pc *pc)
{
    if (pc == NULL) return krill_pc_none_ops.summary;
    return pc->ops->describe ? pc->ops->describe(pc->impl) : pc->ops->summary;
}

/* ---- for the solvers ----------------------------------------------------------------- */

krill_status krill_pc_apply_raw(const krill_pc *pc, const double *r, double *z)
{
    return pc_dispatch(pc, r, z);
}

int krill_pc_is_identity(const krill_pc *pc) { return pc == NULL || pc->ops->is_identity; }

const double *krill_pc_inverse_diagonal(const krill_pc *pc)
{
    if (pc == NULL || pc->ops->inverse_diagonal == NULL) return NULL;
    return pc->ops->inverse_diagonal(pc->impl);
}
