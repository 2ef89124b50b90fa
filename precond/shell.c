/* precond/shell.c - the shell preconditioner: z = M^{-1} r by a callback of the caller
 * (krill_pc_create_shell; doc/shell.md).
 *
 * Not in the registry (it is not built from a matrix by name): krill_pc_create_shell makes
 * the krill_pc itself, with this table, for any matrix of n rows on the context. Apply is
 * the callback alone (formats/shell.c's krill_shell_call: the context synchronized first, a
 * failure's status passed on with a message naming the shell preconditioner); nothing is
 * allocated besides the handle. Reproducible mode refuses it: z's bits are the callback's,
 * and nothing could make them independent of the thread count or the device. */
#include <string.h>

#include "precond/precond_impl.h"

typedef struct pc_shell {
    krill_shell_apply apply;
    void *user;
    int64_t n;
} pc_shell;

static krill_status shell_build(krill_ctx *ctx, const krill_mat *mat, const char *param,
                                void **impl)
{
    (void)ctx, (void)mat, (void)param, (void)impl;
    return krill_error(KRILL_ERR_ARG, "the shell preconditioner is made by "
                       "krill_pc_create_shell, not by name");
}

static krill_status shell_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    const pc_shell *p = impl;
    return krill_shell_call(ctx, p->apply, p->user, r, z, p->n, "shell preconditioner");
}

static krill_status shell_apply_repro(krill_ctx *ctx, const void *impl, const double *r,
                                      double *z)
{
    (void)ctx, (void)impl, (void)r, (void)z;
    return krill_error(KRILL_ERR_UNSUPPORTED, "shell preconditioner: reproducible mode needs "
                       "z = M^{-1} r with the same bits on every thread count and device, and "
                       "a shell preconditioner's are its callback's: turn reproducible mode "
                       "off for it");
}

/* Nothing is derived from a matrix: the caller changes what the callback computes. */
static krill_status shell_update(krill_ctx *ctx, void *impl, const krill_mat *mat)
{
    (void)ctx, (void)impl, (void)mat;
    return KRILL_OK;
}

static void shell_destroy(krill_ctx *ctx, void *impl)
{
    (void)ctx;
    krill_free(impl);
}

static const krill_pc_ops pc_shell_ops = {
    .name = "shell",
    .summary = "shell: z = M^{-1} r by a callback of the caller",
    .build = shell_build,
    .apply = shell_apply,
    .apply_repro = shell_apply_repro,
    .update = shell_update,
    .inverse_diagonal = NULL,
    .is_identity = 0,
    .destroy = shell_destroy,
    .describe = NULL,
};

krill_status krill_pc_create_shell(krill_ctx *ctx, int64_t n, krill_shell_apply apply,
                                   void *user, krill_pc **out)
{
    krill_status st = KRILL_OK;
    krill_pc *pc = NULL;
    pc_shell *p = NULL;

    KRILL_REQUIRE(out != NULL, "krill_pc_create_shell: pc (the output pointer) is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL, "krill_pc_create_shell: ctx is NULL");
    KRILL_REQUIRE(n >= 0, "krill_pc_create_shell: n = %lld; the order must be >= 0",
                  (long long)n);
    KRILL_REQUIRE(apply != NULL, "krill_pc_create_shell: apply (the callback) is NULL");
    KRILL_CALLOC(p, 1);
    p->apply = apply;
    p->user = user;
    p->n = n;
    KRILL_CALLOC(pc, 1);
    pc->ctx = ctx;
    pc->mat = NULL;
    pc->ops = &pc_shell_ops;
    pc->impl = p;
    p = NULL;
    pc->n = n;
    strcpy(pc->name, "shell");
    *out = pc;
    pc = NULL;
cleanup:
    krill_free(p);
    krill_pc_destroy(&pc);
    return st;
}
