/* bench/petsc_solve.c - the CPU peer of bench_solve: PETSc's KSP on the same system.
 *
 *   bench_petsc -A NAME.A.bin -b NAME.b.bin -solver cg|gmres [-rtol 1e-8] [-restart 30]
 *               [-maxit 10000] [-runs 3] [-problem LABEL] [-json FILE] [PETSc options]
 *
 * Reads the binary dump written by `bench_solve --write-bin` (format in bench_common.h),
 * builds a SeqAIJ matrix on one process, and solves from x0 = 0 with no preconditioner
 * (PCNONE), the same method as krill: KSPCG, or KSPGMRES with the given restart and
 * classical Gram-Schmidt refined always (= CGS2, krill's default; PETSc's own default is
 * CGS without refinement: -ksp_gmres_cgs_refinement_type refine_never gives it back).
 * Stopping test: PETSc's default, ||r_k|| < max(rtol ||b||, abstol) with x0 = 0, the same
 * as krill's rtol relative to ||b||. PETSc options on the command line are applied last.
 *
 * Timing: KSPSetUp and one warm-up solve capped at one restart cycle stay outside; then
 * `runs` KSPSolve calls from x0 = 0, each timed with PetscTime. Prints one JSON object. */
#include <petscksp.h>
#include <petsctime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Read `count` items of `size` bytes; 0 on success. */
static int read_all(FILE *f, void *p, size_t size, size_t count)
{
    return count == 0 || fread(p, size, count, f) == count ? 0 : -1;
}

static PetscErrorCode read_matrix(const char *path, Mat *A)
{
    FILE *f = fopen(path, "rb");
    char magic[8];
    int64_t hdr[3], *rp = NULL;
    int32_t *col = NULL;
    double *val = NULL;
    PetscInt *ai = NULL, *aj = NULL;
    int bad;

    PetscFunctionBeginUser;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open", path);
    bad = read_all(f, magic, 1, 8) || memcmp(magic, "KRILLCSR", 8) != 0 ||
          read_all(f, hdr, sizeof hdr[0], 3) || hdr[0] < 0 || hdr[1] < 0 || hdr[2] < 0 ||
          hdr[0] > PETSC_MAX_INT || hdr[2] > PETSC_MAX_INT;
    if (!bad) {
        PetscCall(PetscMalloc1(hdr[0] + 1, &rp));
        PetscCall(PetscMalloc1(hdr[2], &col));
        PetscCall(PetscMalloc1(hdr[2], &val));
        bad = read_all(f, rp, sizeof rp[0], (size_t)hdr[0] + 1) ||
              read_all(f, col, sizeof col[0], (size_t)hdr[2]) ||
              read_all(f, val, sizeof val[0], (size_t)hdr[2]) || rp[0] != 0 ||
              rp[hdr[0]] != hdr[2];
    }
    fclose(f);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: not a KRILLCSR dump, truncated, or too large for 32-bit PetscInt", path);
    PetscCall(PetscMalloc1(hdr[0] + 1, &ai));
    PetscCall(PetscMalloc1(hdr[2], &aj));
    for (int64_t i = 0; i <= hdr[0]; i++) ai[i] = (PetscInt)rp[i];
    for (int64_t k = 0; k < hdr[2]; k++) aj[k] = (PetscInt)col[k];
    PetscCall(MatCreate(PETSC_COMM_SELF, A));
    PetscCall(MatSetSizes(*A, (PetscInt)hdr[0], (PetscInt)hdr[1], (PetscInt)hdr[0],
                          (PetscInt)hdr[1]));
    PetscCall(MatSetType(*A, MATSEQAIJ));
    PetscCall(MatSeqAIJSetPreallocationCSR(*A, ai, aj, val));   /* copies */
    PetscCall(PetscFree(ai));
    PetscCall(PetscFree(aj));
    PetscCall(PetscFree(rp));
    PetscCall(PetscFree(col));
    PetscCall(PetscFree(val));
    PetscFunctionReturn(0);
}

static PetscErrorCode read_vector(const char *path, PetscInt n, Vec *b)
{
    FILE *f = fopen(path, "rb");
    char magic[8];
    int64_t len = -1;
    PetscScalar *x;
    int bad;

    PetscFunctionBeginUser;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open", path);
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, b));
    PetscCall(VecGetArray(*b, &x));
    bad = read_all(f, magic, 1, 8) || memcmp(magic, "KRILLVEC", 8) != 0 ||
          read_all(f, &len, sizeof len, 1) || len != n ||
          read_all(f, x, sizeof x[0], (size_t)n);
    PetscCall(VecRestoreArray(*b, &x));
    fclose(f);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: not a KRILLVEC dump of length %" PetscInt_FMT ", or truncated", path, n);
    PetscFunctionReturn(0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAX_RUNS 32

int main(int argc, char **argv)
{
    char a_path[PETSC_MAX_PATH_LEN] = "", b_path[PETSC_MAX_PATH_LEN] = "", solver[16] = "cg";
    char json_path[PETSC_MAX_PATH_LEN] = "", ortho[48] = "-", version[32], problem[96] = "";
    PetscReal rtol = 1e-8, relres, rnorm, bnorm;
    PetscInt restart = 30, maxit = 10000, runs = 3, n, n_cols, its = 0;
    PetscBool flg;
    Mat A;
    Vec b, x, r;
    KSP ksp;
    PC pc;
    MatInfo minfo;
    KSPConvergedReason reason;
    double t[MAX_RUNS], sorted[MAX_RUNS], med;
    FILE *out[2] = {stdout, NULL};
    int is_cg;

    PetscCall(PetscInitialize(&argc, &argv, NULL,
                              "bench_petsc: KSP on a krill binary dump, for bench/run_cpu.sh"));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-A", a_path, sizeof a_path, &flg));
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_USER, "-A NAME.A.bin is required");
    PetscCall(PetscOptionsGetString(NULL, NULL, "-b", b_path, sizeof b_path, &flg));
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_USER, "-b NAME.b.bin is required");
    PetscCall(PetscOptionsGetString(NULL, NULL, "-solver", solver, sizeof solver, NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-json", json_path, sizeof json_path, NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof problem, NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-restart", &restart, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-maxit", &maxit, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-runs", &runs, NULL));
    is_cg = strcmp(solver, "cg") == 0;
    PetscCheck(is_cg || strcmp(solver, "gmres") == 0, PETSC_COMM_SELF, PETSC_ERR_USER,
               "-solver must be cg or gmres, not %s", solver);
    PetscCheck(runs >= 1 && runs <= MAX_RUNS, PETSC_COMM_SELF, PETSC_ERR_USER,
               "-runs must be in 1..%d", MAX_RUNS);

    PetscCall(read_matrix(a_path, &A));
    PetscCall(MatGetSize(A, &n, &n_cols));
    PetscCheck(n == n_cols, PETSC_COMM_SELF, PETSC_ERR_USER, "%s: the matrix is not square", a_path);
    PetscCall(read_vector(b_path, n, &b));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &minfo));
    PetscCall(VecDuplicate(b, &x));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecNorm(b, NORM_2, &bnorm));

    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, is_cg ? KSPCG : KSPGMRES));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    if (!is_cg) {
        PetscCall(KSPGMRESSetRestart(ksp, restart));
        PetscCall(KSPGMRESSetCGSRefinementType(ksp, KSP_GMRES_CGS_REFINE_ALWAYS));
    }
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    if (!is_cg) {
        KSPGMRESCGSRefinementType rt;
        PetscErrorCode (*fn)(KSP, PetscInt);
        PetscCall(KSPGMRESGetOrthogonalization(ksp, &fn));
        PetscCall(KSPGMRESGetCGSRefinementType(ksp, &rt));
        PetscCall(PetscSNPrintf(ortho, sizeof ortho, "%s",
                                fn == KSPGMRESModifiedGramSchmidtOrthogonalization ? "mgs"
                                : rt == KSP_GMRES_CGS_REFINE_ALWAYS                ? "cgs2"
                                : rt == KSP_GMRES_CGS_REFINE_NEVER                 ? "cgs"
                                                                    : "cgs-ifneeded"));
    }

    /* warm-up: one restart cycle */
    PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT,
                               restart < maxit ? restart : maxit));
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, maxit));
    for (PetscInt k = 0; k < runs; k++) {
        PetscLogDouble t0, t1;
        PetscCall(VecSet(x, 0.0));
        PetscCall(PetscTime(&t0));
        PetscCall(KSPSolve(ksp, b, x));
        PetscCall(PetscTime(&t1));
        t[k] = t1 - t0;
    }
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));                     /* r = b - A x */
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    relres = bnorm > 0 ? rnorm / bnorm : rnorm;

    memcpy(sorted, t, sizeof t[0] * (size_t)runs);
    qsort(sorted, (size_t)runs, sizeof sorted[0], cmp_double);
    med = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
    {
        PetscInt major, minor, sub;
        PetscCall(PetscGetVersionNumber(&major, &minor, &sub, NULL));
        PetscCall(PetscSNPrintf(version, sizeof version, "%d.%d.%d", (int)major, (int)minor,
                                (int)sub));
    }
    if (json_path[0]) {
        out[1] = fopen(json_path, "w");
        PetscCheck(out[1], PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot create", json_path);
    }
    for (int o = 0; o < 2 && out[o]; o++) {
        fprintf(out[o],
                "{\"library\": \"petsc\", \"version\": \"%s\", \"problem\": \"%s\", "
                "\"processes\": 1, "
                "\"solver\": \"%s\", \"orthogonalization\": \"%s\", \"restart\": %d, "
                "\"n\": %d, \"nnz\": %.0f, \"rtol\": %.3e, \"maxit\": %d, \"runs\": %d, "
                "\"iterations\": %d, \"reason\": \"%s\", \"converged\": %s, "
                "\"relres\": %.6e, \"t_median_s\": %.6e, \"t_min_s\": %.6e, "
                "\"t_max_s\": %.6e, \"t_per_iter_s\": %.6e}\n",
                version, problem, solver, ortho, (int)restart, (int)n, minfo.nz_used, (double)rtol,
                (int)maxit, (int)runs, (int)its, KSPConvergedReasons[reason],
                reason > 0 ? "true" : "false", (double)relres, med, sorted[0],
                sorted[runs - 1], its > 0 ? med / its : 0.0);
    }
    if (out[1]) fclose(out[1]);

    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFinalize());
    return 0;
}
