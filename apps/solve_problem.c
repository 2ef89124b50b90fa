/* apps/solve_problem.c - the problem setup of `krill solve`, rank 0's part before the solve:
 * read or generate A, choose the solver from A (or the binary file's header when every rank
 * reads its own rows), make b, and with --reorder rcm renumber both. cmd_solve.c parses the
 * options, builds the matrix on the device, solves and reports. */
#include <stdlib.h>
#include <string.h>
#include "solve_problem.h"

/* Seed of the deterministic random right-hand side (--rhs random). */
#define RANDOM_RHS_SEED 0x9E3779B97F4A7C15ull

const char *const cli_solver_names[] = { "gmres", "cg", "fgmres", "bicgstab", "minres",
                                         "pipecg", NULL };
static const krill_solver_type solver_types[] = { KRILL_SOLVER_GMRES, KRILL_SOLVER_CG,
                                                  KRILL_SOLVER_FGMRES, KRILL_SOLVER_BICGSTAB,
                                                  KRILL_SOLVER_MINRES, KRILL_SOLVER_PIPECG };
enum { SOLVER_GMRES, SOLVER_CG, SOLVER_MINRES = 4 };   /* indices in cli_solver_names */
const char *const cli_ortho_names[] = { "cgs2", "mgs", "dcgs2", NULL };
static const krill_ortho ortho_types[] = { KRILL_ORTHO_CGS2, KRILL_ORTHO_MGS,
                                           KRILL_ORTHO_DCGS2 };
const char *const cli_reorder_names[] = { "none", "rcm", NULL };

/* Read the file, generate --gen SPEC, or generate the default problem; refuse what the
 * solvers cannot take (rectangular here; complex is refused by the reader). */
static int load_matrix(const solve_args *args, cli_solve_report *report, krill_csr **csr)
{
    int rc = CLI_EXIT_OK;
    double t0 = cli_seconds();
    if (args->matrix_path && krill_bin_detect(args->matrix_path)) {
        report->source = args->matrix_path;
        report->source_note = "krill binary file";
        CLI_TRY(krill_bin_read(args->matrix_path, csr, NULL));
    } else if (args->matrix_path) {
        report->source = args->matrix_path;
        report->source_note = "Matrix Market file";
        krill_mm_opts square = KRILL_MM_OPTS_INIT;
        square.square = 1;       /* refused from the size line, before anything is allocated */
        CLI_TRY(krill_mm_read_opts(args->matrix_path, &square, csr, NULL));
    } else {
        report->source = args->gen_spec ? args->gen_spec : DEFAULT_PROBLEM;
        report->source_note = args->gen_spec ? "generated" : "default problem";
        CLI_TRY(krill_gen(report->source, csr));
    }
    report->load_seconds = cli_seconds() - t0;
    if ((*csr)->n_rows != (*csr)->n_cols) {
        rc = cli_error(CLI_EXIT_USAGE, "%s: the matrix is rectangular (%ld x %ld); the "
                       "solvers need a square matrix", report->source,
                       (long)(*csr)->n_rows, (long)(*csr)->n_cols);
        goto cleanup;
    }
    report->n = (*csr)->n_rows;
    report->nnz = (*csr)->nnz;
cleanup:
    if (rc != CLI_EXIT_OK) krill_csr_destroy(csr);
    return rc;
}

/* The sign of the diagonal of the square matrix a: +1 when every diagonal entry is present
 * and positive, -1 when every one is negative, 0 otherwise (both signs, or a zero or missing
 * entry). A symmetric matrix can be definite only with +1 (positive) or -1 (negative):
 * a_ii = e_i'A e_i. Cheap to check, and necessary only. */
static int diagonal_sign(const krill_csr *a)
{
    int pos = 0, neg = 0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        double d = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) d = a->val[p];
        pos += d > 0.0;
        neg += d < 0.0;
    }
    return pos == a->n_rows ? 1 : neg == a->n_rows ? -1 : 0;
}

/* What choose_solver needs to know of A: whether it is symmetric, and diagonal_sign's
 * answer (computed only where the choice depends on them). */
static void matrix_traits(const solve_args *args, const krill_csr *a, int *symmetric, int *sign)
{
    const int needed = args->solver < 0 && (args->matrix_path || args->gen_spec);
    *symmetric = needed && krill_csr_is_symmetric(a);
    *sign = *symmetric ? diagonal_sign(a) : 0;
}

/* The solver asked for, else GMRES when --sstep asks for s-step GMRES, else CG for the
 * default problem and for symmetric matrices with a diagonal of one sign (possibly
 * definite), MINRES for symmetric matrices whose diagonal has both signs or zeros (then
 * certainly not definite), GMRES for everything else. */
static void choose_solver(const solve_args *args, int symmetric, int sign,
                          cli_solve_report *report)
{
    int index = args->solver;
    if (index >= 0) {
        report->solver_why = "as asked";
    } else if (args->opts.sstep > 1) {
        index = SOLVER_GMRES;
        report->solver_why = "--sstep asks for s-step GMRES";
    } else if (!args->matrix_path && !args->gen_spec) {
        index = SOLVER_CG;
        report->solver_why = "the default problem is SPD";
    } else if (!symmetric) {
        index = SOLVER_GMRES;
        report->solver_why = "A is not symmetric";
    } else if (sign == 0) {
        index = SOLVER_MINRES;
        report->solver_why = "A is symmetric with diagonal entries of both signs or zero, so it "
                             "is indefinite: MINRES";
    } else if (sign < 0) {
        index = SOLVER_CG;
        report->solver_why = "A is symmetric with a negative diagonal; if it is not negative "
                             "definite use --solver minres";
    } else {
        index = SOLVER_CG;
        report->solver_why = "A is symmetric with a positive diagonal; if it is not positive "
                             "definite use --solver minres";
    }
    report->solver = cli_solver_names[index];
    report->opts.solver = solver_types[index];
    report->opts.ortho = ortho_types[args->ortho];
    report->ortho = report->opts.solver == KRILL_SOLVER_GMRES ||
                            report->opts.solver == KRILL_SOLVER_FGMRES
                        ? cli_ortho_names[args->ortho]
                        : NULL;
}

/* b on the host: A*1 (then x_true = 1 is known; a NULL: the ranks make it from their rows,
 * cli_ranks_read), deterministic random in [-1, 1), or read from a file. */
static int make_rhs(const char *rhs, const krill_csr *a, int64_t n, double *b,
                    cli_solve_report *report)
{
    int rc = CLI_EXIT_OK;
    double *file_b = NULL;
    int64_t file_n = 0;
    if (!strcmp(rhs, "ones") && !a) {
        report->exact_known = 1;
        report->rhs = "b = A*1 (exact solution x = 1), each rank its rows";
    } else if (!strcmp(rhs, "ones")) {
        double *ones = malloc((size_t)(n > 0 ? n : 1) * sizeof *ones);
        if (!ones) {
            rc = cli_error(CLI_EXIT_FAILURE, "out of memory for %ld doubles", (long)n);
            goto cleanup;
        }
        for (int64_t i = 0; i < n; i++) ones[i] = 1.0;
        krill_csr_spmv_ref(a, 1.0, ones, 0.0, b);
        free(ones);
        report->exact_known = 1;
        report->rhs = "b = A*1 (exact solution x = 1)";
    } else if (!strcmp(rhs, "random")) {
        uint64_t state = RANDOM_RHS_SEED;
        for (int64_t i = 0; i < n; i++) {          /* xorshift64*; its top 53 bits */
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            uint64_t bits = (state * 0x2545F4914F6CDD1Dull) >> 11;
            b[i] = 2.0 * ((double)bits / 9007199254740992.0) - 1.0;
        }
        report->rhs = "deterministic random b in [-1, 1)";
    } else {
        CLI_TRY(krill_mm_read_vector(rhs, &file_b, &file_n));
        if (file_n != n) {
            rc = cli_error(CLI_EXIT_USAGE, "%s: the vector has %ld entries, the matrix %ld "
                           "rows", rhs, (long)file_n, (long)n);
            goto cleanup;
        }
        memcpy(b, file_b, (size_t)n * sizeof *b);
        report->rhs = rhs;
    }
cleanup:
    krill_host_free(file_b);
    return rc;
}

/* --reorder rcm: A becomes B = P A P^T and b becomes P b (through `scratch`), so the solver
 * works in the RCM numbering on y = P x; solve_run (cmd_solve.c) maps the solution
 * back, x = P^T y. *perm (perm[new] = old) is malloc'ed for the caller to free. */
static int reorder_rcm(krill_csr **csr, int32_t **perm, double *b, double *scratch,
                       cli_solve_report *report)
{
    int rc = CLI_EXIT_OK;
    krill_csr *permuted = NULL;
    const int32_t n = (*csr)->n_rows;
    double t0 = cli_seconds();
    *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof **perm);
    if (!*perm) {
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for a permutation of %ld entries",
                       (long)n);
        goto cleanup;
    }
    CLI_TRY(krill_order_rcm(*csr, *perm));
    CLI_TRY(krill_csr_permute(*csr, *perm, &permuted));
    krill_csr_destroy(csr);
    *csr = permuted;
    permuted = NULL;
    krill_vec_permute_host(n, *perm, b, scratch);
    memcpy(b, scratch, (size_t)n * sizeof *b);
    report->reorder_seconds = cli_seconds() - t0;
    report->bandwidth_after = krill_csr_bandwidth(*csr);
cleanup:
    krill_csr_destroy(&permuted);
    return rc;
}

int cli_solve_make_problem(const solve_args *args, cli_solve_report *report, krill_csr **csr,
                           double **host_b, double **host_x, int32_t **perm)
{
    int symmetric = 0, sign = 0;
    int rc = load_matrix(args, report, csr);
    if (rc != CLI_EXIT_OK) goto cleanup;
    matrix_traits(args, *csr, &symmetric, &sign);
    choose_solver(args, symmetric, sign, report);
    *host_b = malloc((size_t)(report->n > 0 ? report->n : 1) * sizeof **host_b);
    *host_x = malloc((size_t)(report->n > 0 ? report->n : 1) * sizeof **host_x);
    if (!*host_b || !*host_x) {
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for two vectors of %ld doubles",
                       (long)report->n);
        goto cleanup;
    }
    rc = make_rhs(args->rhs, *csr, report->n, *host_b, report);
    if (rc != CLI_EXIT_OK) goto cleanup;
    report->reorder = cli_reorder_names[args->reorder];
    report->bandwidth_before = report->bandwidth_after = krill_csr_bandwidth(*csr);
    if (args->reorder == REORDER_RCM) rc = reorder_rcm(csr, perm, *host_b, *host_x, report);
cleanup:
    return rc;
}

int cli_solve_make_problem_header(const solve_args *args, cli_solve_report *report,
                                  double **host_b, double **host_x)
{
    int rc = CLI_EXIT_OK;
    krill_bin_info info;
    const double t0 = cli_seconds();
    report->source = args->matrix_path;
    report->source_note = "krill binary file, each rank reads its rows";
    CLI_TRY(krill_bin_read_info(args->matrix_path, &info));
    if (info.n_rows != info.n_cols) {
        rc = cli_error(CLI_EXIT_USAGE, "%s: the matrix is rectangular (%ld x %ld); the "
                       "solvers need a square matrix", report->source, (long)info.n_rows,
                       (long)info.n_cols);
        goto cleanup;
    }
    report->n = info.n_rows;
    report->nnz = info.nnz;
    report->load_seconds = cli_seconds() - t0;
    choose_solver(args, (info.flags & KRILL_BIN_SYMMETRIC) != 0,
                  info.flags & KRILL_BIN_DIAG_POSITIVE   ? 1
                  : info.flags & KRILL_BIN_DIAG_NEGATIVE ? -1
                                                         : 0, report);
    *host_b = malloc((size_t)(report->n > 0 ? report->n : 1) * sizeof **host_b);
    *host_x = malloc((size_t)(report->n > 0 ? report->n : 1) * sizeof **host_x);
    if (!*host_b || !*host_x) {
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for two vectors of %ld doubles",
                       (long)report->n);
        goto cleanup;
    }
    rc = make_rhs(args->rhs, NULL, report->n, *host_b, report);
    report->reorder = cli_reorder_names[REORDER_NONE];
cleanup:
    return rc;
}
