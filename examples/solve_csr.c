/* examples/solve_csr.c - solve a 1-D Laplacian (tridiag(-1, 2, -1), n = 100) with CG.
 * The CSR arrays are this program's own; b = A*1, so the solution is x = 1. */
#include <math.h>
#include <stdio.h>
#include <krill.h>

#define N 100

int main(void)
{
    static int64_t row_ptr[N + 1];
    static int32_t col[3 * N];
    static double val[3 * N], b[N], x[N];
    int64_t nnz = 0;
    for (int i = 0; i < N; i++) {              /* row i: -1 at i-1, 2 at i, -1 at i+1 */
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < N) { col[nnz] = j; val[nnz++] = (j == i) ? 2.0 : -1.0; }
        row_ptr[i + 1] = nnz;
        b[i] = (i == 0 || i == N - 1) ? 1.0 : 0.0;     /* A*1 */
    }
    krill_csr a = { N, N, nnz, row_ptr, col, val };
    krill_ctx *ctx = NULL; krill_mat *mat = NULL; krill_vec *vb = NULL, *vx = NULL;
    krill_solver_opts opts; krill_solve_info info = { 0 };
    krill_solver_opts_default(&opts);
    opts.solver = KRILL_SOLVER_CG;
    krill_status st = krill_ctx_create(NULL, &ctx);            /* AUTO: the GPU if any */
    if (!st) st = krill_mat_create(ctx, &a, "csr", &mat);
    if (!st) st = krill_vec_create(ctx, N, &vb);
    if (!st) st = krill_vec_create(ctx, N, &vx);               /* x0 = 0 */
    if (!st) st = krill_vec_upload(vb, b);
    if (!st) st = krill_solve(mat, NULL, vb, vx, &opts, &info);
    if (!st) st = krill_vec_download(vx, x);
    double err = 0.0;
    for (int i = 0; !st && i < N; i++) err = fmax(err, fabs(x[i] - 1.0));
    if (st) fprintf(stderr, "solve_csr: %s\n", krill_last_error());
    else printf("%s on %s: %s, %d iterations, relative residual %.2e, max error %.2e\n",
                "cg", krill_ctx_describe(ctx), krill_reason_string(info.reason),
                info.iterations, info.relres, err);
    int converged = !st && info.reason > 0;
    krill_solve_info_free(&info);
    krill_vec_destroy(&vx); krill_vec_destroy(&vb);
    krill_mat_destroy(&mat); krill_ctx_destroy(&ctx);
    return converged ? 0 : 1;
}
