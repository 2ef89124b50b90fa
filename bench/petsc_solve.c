/* bench/petsc_solve.c - the CPU peer of bench_solve: PETSc's KSP on the same system.
 *
 *   bench_petsc -A NAME.A.bin -b NAME.b.bin -solver cg|gmres|fgmres|bicgstab|pipecg
 *               [-pc none|jacobi|pbjacobi|ilu|icc] [-bs B] [-rtol 1e-8] [-restart 30]
 *               [-maxit 10000] [-runs 3] [-problem LABEL] [-json FILE] [PETSc options]
 *
 * Reads the binary dump written by `bench_solve --write-bin` (format in bench_common.h),
 * builds an AIJ matrix (block size B when -bs is given, set before assembly: pbjacobi
 * inverts the B x B diagonal blocks), and solves from x0 = 0 with the same method as krill.
 * Under mpirun every process reads the dump and keeps krill's rows: the default partition
 * of krill_dist_mat_scatter (rank r starts at the first row whose first entry is at or after
 * r nnz / P), so that block Jacobi (-pc bjacobi-ilu / bjacobi-icc: one block per process,
 * ILU(0) / ICC(0) inside, PETSc's default parallel preconditioner) has krill's blocks.
 *   - cg: KSPCG, preconditioned on the left (PCG), stopping on the UNPRECONDITIONED
 *     residual norm ||b - A x|| (PETSc's CG default is the preconditioned norm ||M^{-1} r||;
 *     krill's CG tests ||r||);
 *   - gmres / fgmres: KSPGMRES / KSPFGMRES with the given restart, right preconditioning
 *     (the residual GMRES minimizes is then the true one), classical Gram-Schmidt refined
 *     always (= CGS2, krill's --ortho cgs2; PETSc's own default is CGS without refinement:
 *     -ksp_gmres_cgs_refinement_type refine_never gives it back);
 *   - bicgstab: KSPBCGS, right preconditioning, unpreconditioned norm;
 *   - pipecg: KSPPIPECG (Ghysels-Vanroose, krill's pipecg), as cg.
 * Preconditioners: none; jacobi (PETSc accepts zero diagonal entries where krill refuses
 * the matrix: their number goes to the JSON's note); pbjacobi (point-block Jacobi, krill's
 * bjacobi:B); ilu / icc with zero fill, natural ordering and no pivot shift (krill's ilu0 /
 * ic0:noshift; PETSc's own ICC default is a positive-definite shift: -pc_factor_shift_type
 * positive_definite gives it back, and compare_petsc.py passes it to pair icc with krill's
 * ic0 and ilu with ilu0:shift). A zero pivot then ends the solve as
 * DIVERGED_PC_FAILED, reported, not hidden; a negative ICC pivot does not stop PETSc (it
 * goes on as an incomplete LDL^T, where krill's ic0 refuses the matrix): their number goes
 * to the JSON's note.
 * Stopping test: ||r_k|| < max(rtol ||b||, abstol) with x0 = 0, krill's rtol relative to
 * ||b||; the divergence test is off (dtol 1e100: krill has none), so a transient growth of
 * BiCGStab's residual does not end the solve on one side only. PETSc options on the
 * command line are applied last and override all of the above.
 *
 * Timing: KSPSetUp (the preconditioner's build: factorization, block inverses) is timed
 * once as pc_setup_s; one warm-up solve capped at one restart cycle (30 iterations) stays
 * outside; then `runs` KSPSolve calls from x0 = 0, each timed with PetscTime. Time to
 * solution t_total_s = pc_setup_s + the median solve. A setup that fails with an error
 * (for instance ILU on a matrix with a missing diagonal entry) is reported as such in the
 * JSON, not solved. Prints one JSON object. */
#include <petscksp.h>
#include <petsctime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_RUNS 32
/* Divergence tolerance: ||r_k|| > DTOL ||b|| would stop PETSc; krill has no such test. */
#define DTOL 1e100

/* The methods krill has, as PETSc names them. */
typedef struct solver_kind {
    const char *name;        /* krill's name */
    KSPType type;
    int restarted;           /* takes -restart and the Gram-Schmidt choice */
    PCSide side;
} solver_kind;

static const solver_kind solver_kinds[] = {
    {.name = "cg", .type = KSPCG, .restarted = 0, .side = PC_LEFT},
    {.name = "gmres", .type = KSPGMRES, .restarted = 1, .side = PC_RIGHT},
    {.name = "fgmres", .type = KSPFGMRES, .restarted = 1, .side = PC_RIGHT},
    {.name = "bicgstab", .type = KSPBCGS, .restarted = 0, .side = PC_RIGHT},
    {.name = "pipecg", .type = KSPPIPECG, .restarted = 0, .side = PC_LEFT},
};

typedef struct pc_kind {
    const char *name;        /* -pc NAME */
    PCType type;
    int factor;              /* incomplete factorization: zero fill, natural order */
} pc_kind;

static const pc_kind pc_kinds[] = {
    {.name = "none", .type = PCNONE, .factor = 0},
    {.name = "jacobi", .type = PCJACOBI, .factor = 0},
    {.name = "pbjacobi", .type = PCPBJACOBI, .factor = 0},
    {.name = "ilu", .type = PCILU, .factor = 1},
    {.name = "icc", .type = PCICC, .factor = 1},
    {.name = "bjacobi-ilu", .type = PCBJACOBI, .factor = 0},   /* -sub_pc_type ilu */
    {.name = "bjacobi-icc", .type = PCBJACOBI, .factor = 0},   /* -sub_pc_type icc */
};

typedef struct bench_opts {
    char a_path[PETSC_MAX_PATH_LEN], b_path[PETSC_MAX_PATH_LEN], json_path[PETSC_MAX_PATH_LEN];
    char solver[16], pc[16], problem[96];
    PetscReal rtol;
    PetscInt restart, maxit, runs, bs;
    const solver_kind *sk;
    const pc_kind *pk;
} bench_opts;

typedef struct bench_result {
    char version[32], ortho[48], shift[32], reason[64], note[160];
    PetscInt n, its;
    int processes;
    double nnz;
    int converged;
    PetscReal relres;
    double t_setup, t[MAX_RUNS];
} bench_result;

/* Read `count` items of `size` bytes; 0 on success. */
static int read_all(FILE *f, void *p, size_t size, size_t count)
{
    return count == 0 || fread(p, size, count, f) == count ? 0 : -1;
}

/* This process's rows [*r0, *r1) of n: krill_dist_mat_scatter's default (balanced by
 * nonzeros: rank r starts at the first row whose first entry is at or after r nnz / P). */
static PetscErrorCode krill_rows(const int64_t *rp, int64_t n, int64_t *r0, int64_t *r1)
{
    PetscMPIInt rank, size;
    int64_t start[2];
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    for (int k = 0; k < 2; k++) {
        const int r = rank + k;
        int64_t i = 0;
        if (r >= size) {
            start[k] = n;
            continue;
        }
        while (i < n && rp[i] < (rp[n] * r) / size) i++;
        start[k] = r == 0 ? 0 : i;
    }
    *r0 = start[0];
    *r1 = start[1];
    PetscFunctionReturn(0);
}

static PetscErrorCode read_matrix(const char *path, PetscInt bs, Mat *A, int64_t *r0,
                                  int64_t *r1)
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
    PetscCheck(hdr[0] % bs == 0 && hdr[1] % bs == 0, PETSC_COMM_SELF, PETSC_ERR_USER,
               "-bs %" PetscInt_FMT ": %s is %lld x %lld, not a multiple of the block size",
               bs, path, (long long)hdr[0], (long long)hdr[1]);
    PetscCall(krill_rows(rp, hdr[0], r0, r1));
    PetscCall(PetscMalloc1(*r1 - *r0 + 1, &ai));
    PetscCall(PetscMalloc1(hdr[2], &aj));
    for (int64_t i = *r0; i <= *r1; i++) ai[i - *r0] = (PetscInt)(rp[i] - rp[*r0]);
    for (int64_t k = 0; k < hdr[2]; k++) aj[k] = (PetscInt)col[k];
    PetscCall(MatCreate(PETSC_COMM_WORLD, A));
    PetscCall(MatSetSizes(*A, (PetscInt)(*r1 - *r0), (PetscInt)(*r1 - *r0), (PetscInt)hdr[0],
                          (PetscInt)hdr[1]));
    PetscCall(MatSetType(*A, MATAIJ));                          /* Seq on one process */
    PetscCall(MatSetBlockSize(*A, bs));                         /* before assembly */
    /* copies, assembles (the call of the other type does nothing) */
    PetscCall(MatSeqAIJSetPreallocationCSR(*A, ai, aj, val));
    PetscCall(MatMPIAIJSetPreallocationCSR(*A, ai, aj + rp[*r0], val + rp[*r0]));
    PetscCall(PetscFree(ai));
    PetscCall(PetscFree(aj));
    PetscCall(PetscFree(rp));
    PetscCall(PetscFree(col));
    PetscCall(PetscFree(val));
    PetscFunctionReturn(0);
}

/* This process's entries [r0, r1) of the dumped vector of length n. */
static PetscErrorCode read_vector(const char *path, PetscInt n, int64_t r0, int64_t r1, Vec *b)
{
    FILE *f = fopen(path, "rb");
    char magic[8];
    int64_t len = -1;
    PetscScalar *x;
    int bad;

    PetscFunctionBeginUser;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open", path);
    PetscCall(VecCreateMPI(PETSC_COMM_WORLD, (PetscInt)(r1 - r0), n, b));
    PetscCall(VecGetArray(*b, &x));
    bad = read_all(f, magic, 1, 8) || memcmp(magic, "KRILLVEC", 8) != 0 ||
          read_all(f, &len, sizeof len, 1) || len != n ||
          fseek(f, (long)(r0 * (int64_t)sizeof x[0]), SEEK_CUR) != 0 ||
          read_all(f, x, sizeof x[0], (size_t)(r1 - r0));
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

static PetscErrorCode parse_options(bench_opts *o)
{
    PetscBool flg;
    PetscFunctionBeginUser;
    memset(o, 0, sizeof *o);
    strcpy(o->solver, "cg");
    strcpy(o->pc, "none");
    o->rtol = 1e-8;
    o->restart = 30;
    o->maxit = 10000;
    o->runs = 3;
    o->bs = 1;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-A", o->a_path, sizeof o->a_path, &flg));
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_USER, "-A NAME.A.bin is required");
    PetscCall(PetscOptionsGetString(NULL, NULL, "-b", o->b_path, sizeof o->b_path, &flg));
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_USER, "-b NAME.b.bin is required");
    PetscCall(PetscOptionsGetString(NULL, NULL, "-solver", o->solver, sizeof o->solver, NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-pc", o->pc, sizeof o->pc, NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-json", o->json_path, sizeof o->json_path,
                                    NULL));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", o->problem, sizeof o->problem,
                                    NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &o->rtol, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-restart", &o->restart, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-maxit", &o->maxit, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-runs", &o->runs, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-bs", &o->bs, NULL));
    for (size_t i = 0; i < sizeof solver_kinds / sizeof solver_kinds[0]; i++)
        if (strcmp(o->solver, solver_kinds[i].name) == 0) o->sk = &solver_kinds[i];
    for (size_t i = 0; i < sizeof pc_kinds / sizeof pc_kinds[0]; i++)
        if (strcmp(o->pc, pc_kinds[i].name) == 0) o->pk = &pc_kinds[i];
    PetscCheck(o->sk, PETSC_COMM_SELF, PETSC_ERR_USER,
               "-solver must be cg, gmres, fgmres, bicgstab or pipecg, not %s", o->solver);
    PetscCheck(o->pk, PETSC_COMM_SELF, PETSC_ERR_USER,
               "-pc must be none, jacobi, pbjacobi, ilu, icc, bjacobi-ilu or bjacobi-icc, "
               "not %s", o->pc);
    PetscCheck(o->runs >= 1 && o->runs <= MAX_RUNS, PETSC_COMM_SELF, PETSC_ERR_USER,
               "-runs must be in 1..%d", MAX_RUNS);
    PetscCheck(o->bs >= 1, PETSC_COMM_SELF, PETSC_ERR_USER, "-bs must be >= 1");
    PetscCheck(o->restart >= 1 && o->maxit >= 1 && o->rtol > 0, PETSC_COMM_SELF,
               PETSC_ERR_USER, "need -restart >= 1, -maxit >= 1, -rtol > 0");
    PetscFunctionReturn(0);
}

/* The KSP and PC as the header describes; command-line PETSc options applied last. */
static PetscErrorCode configure(KSP ksp, Mat A, const bench_opts *o, bench_result *res)
{
    PC pc;
    PetscFunctionBeginUser;
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, o->sk->type));
    PetscCall(KSPSetPCSide(ksp, o->sk->side));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, o->rtol, PETSC_DEFAULT, DTOL, o->maxit));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, o->pk->type));
    if (o->pk->factor) {
        PetscCall(PCFactorSetLevels(pc, 0));
        PetscCall(PCFactorSetMatOrderingType(pc, MATORDERINGNATURAL));
        PetscCall(PCFactorSetShiftType(pc, MAT_SHIFT_NONE));
    }
    if (strncmp(o->pk->name, "bjacobi-", 8) == 0) {   /* the blocks factored as -pc ilu / icc */
        PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_type",
                                       strcmp(o->pk->name, "bjacobi-icc") == 0 ? "icc" : "ilu"));
        PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_factor_levels", "0"));
        PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_factor_mat_ordering_type", "natural"));
        PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_factor_shift_type", "none"));
    }
    if (o->sk->restarted) {
        PetscCall(KSPGMRESSetRestart(ksp, o->restart));
        PetscCall(KSPGMRESSetCGSRefinementType(ksp, KSP_GMRES_CGS_REFINE_ALWAYS));
    }
    PetscCall(KSPSetFromOptions(ksp));
    strcpy(res->ortho, "-");
    strcpy(res->shift, "-");
    if (o->sk->restarted) {
        KSPGMRESCGSRefinementType rt;
        PetscErrorCode (*fn)(KSP, PetscInt);
        PetscCall(KSPGMRESGetOrthogonalization(ksp, &fn));
        PetscCall(KSPGMRESGetCGSRefinementType(ksp, &rt));
        PetscCall(PetscSNPrintf(res->ortho, sizeof res->ortho, "%s",
                                fn == KSPGMRESModifiedGramSchmidtOrthogonalization ? "mgs"
                                : rt == KSP_GMRES_CGS_REFINE_ALWAYS                ? "cgs2"
                                : rt == KSP_GMRES_CGS_REFINE_NEVER                 ? "cgs"
                                                                    : "cgs-ifneeded"));
    }
    if (o->pk->factor) {
        MatFactorShiftType st;
        PetscCall(PCFactorGetShiftType(pc, &st));
        PetscCall(PetscSNPrintf(res->shift, sizeof res->shift, "%s", MatFactorShiftTypes[st]));
    }
    PetscFunctionReturn(0);
}

/* The number of zero diagonal entries of A into res->note (Jacobi's business). */
static PetscErrorCode note_zero_diagonal(Mat A, bench_result *res)
{
    Vec d;
    const PetscScalar *v;
    PetscInt n, zeros = 0;
    PetscFunctionBeginUser;
    PetscCall(MatCreateVecs(A, &d, NULL));
    PetscCall(MatGetDiagonal(A, d));
    PetscCall(VecGetLocalSize(d, &n));
    PetscCall(VecGetArrayRead(d, &v));
    for (PetscInt i = 0; i < n; i++) zeros += v[i] == 0.0;
    PetscCall(VecRestoreArrayRead(d, &v));
    PetscCall(VecDestroy(&d));
    if (zeros)
        PetscCall(PetscSNPrintf(res->note, sizeof res->note,
                                "%" PetscInt_FMT " zero diagonal entries, which PETSc's "
                                "Jacobi accepts", zeros));
    PetscFunctionReturn(0);
}

/* After a successful ICC setup: the number of non-positive pivots into res->note. */
static PetscErrorCode note_icc_pivots(KSP ksp, Mat A, bench_result *res)
{
    PC pc;
    PCFailedReason pcr;
    Mat F;
    Vec d;
    const PetscScalar *v;
    PetscInt n, bad = 0;
    PetscFunctionBeginUser;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetFailedReason(pc, &pcr));
    if (pcr != PC_NOERROR) PetscFunctionReturn(0);
    PetscCall(PCFactorGetMatrix(pc, &F));
    PetscCall(MatCreateVecs(A, &d, NULL));
    PetscCall(MatGetDiagonal(F, d));                    /* the pivots of L D L^T */
    PetscCall(VecGetLocalSize(d, &n));
    PetscCall(VecGetArrayRead(d, &v));
    for (PetscInt i = 0; i < n; i++) bad += !(PetscRealPart(v[i]) > 0.0);
    PetscCall(VecRestoreArrayRead(d, &v));
    PetscCall(VecDestroy(&d));
    if (bad)
        PetscCall(PetscSNPrintf(res->note, sizeof res->note,
                                "%" PetscInt_FMT " non-positive ICC pivots: PETSc goes on as an "
                                "incomplete LDL^T", bad));
    PetscFunctionReturn(0);
}

/* KSPSetUp timed; an error inside (not a failed factorization, which PETSc reports as a
 * reason at the solve, but e.g. a missing diagonal entry) is caught into res->note and
 * *failed = 1 instead of ending the program. */
static PetscErrorCode timed_setup(KSP ksp, bench_result *res, int *failed)
{
    PetscLogDouble t0, t1;
    PetscErrorCode ierr;
    PetscFunctionBeginUser;
    PetscCall(PetscTime(&t0));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSetUp(ksp);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscTime(&t1));
    res->t_setup = t1 - t0;
    *failed = ierr != 0;
    if (ierr) {
        const char *text = NULL;
        char *specific = NULL;
        PetscCall(PetscErrorMessage(ierr, &text, &specific));
        PetscCall(PetscSNPrintf(res->note, sizeof res->note, "setup failed: %s",
                                specific && specific[0] ? specific : text ? text : "?"));
        for (char *c = res->note; *c; c++)
            if (*c == '"' || *c == '\\' || *c == '\n') *c = ' ';    /* JSON-safe */
        PetscCall(PetscSNPrintf(res->reason, sizeof res->reason, "SETUP_FAILED"));
    }
    PetscFunctionReturn(0);
}

/* Warm-up (one restart cycle), then o->runs timed solves; iterations, reason, true
 * relative residual of the last one. */
static PetscErrorCode timed_solves(KSP ksp, Mat A, Vec b, const bench_opts *o,
                                   bench_result *res)
{
    Vec x, r;
    PetscReal rnorm, bnorm;
    KSPConvergedReason reason;
    PC pc;
    PCFailedReason pcr;
    PetscFunctionBeginUser;
    PetscCall(VecDuplicate(b, &x));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecNorm(b, NORM_2, &bnorm));
    PetscCall(KSPSetTolerances(ksp, o->rtol, PETSC_DEFAULT, DTOL,
                               o->restart < o->maxit ? o->restart : o->maxit));
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPSetTolerances(ksp, o->rtol, PETSC_DEFAULT, DTOL, o->maxit));
    for (PetscInt k = 0; k < o->runs; k++) {
        PetscLogDouble t0, t1;
        PetscCall(VecSet(x, 0.0));
        PetscCall(PetscTime(&t0));
        PetscCall(KSPSolve(ksp, b, x));
        PetscCall(PetscTime(&t1));
        res->t[k] = t1 - t0;
    }
    PetscCall(KSPGetIterationNumber(ksp, &res->its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(PetscSNPrintf(res->reason, sizeof res->reason, "%s", KSPConvergedReasons[reason]));
    res->converged = reason > 0;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetFailedReason(pc, &pcr));
    if (reason == KSP_DIVERGED_PC_FAILED)
        PetscCall(PetscSNPrintf(res->note, sizeof res->note, "preconditioner failed: %s",
                                PCFailedReasons[pcr]));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));                     /* r = b - A x */
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    res->relres = bnorm > 0 ? rnorm / bnorm : rnorm;
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&x));
    PetscFunctionReturn(0);
}

static void write_json(FILE *f, const bench_opts *o, const bench_result *res, int solved)
{
    double sorted[MAX_RUNS], med = 0.0;
    int runs = solved ? (int)o->runs : 0;
    memcpy(sorted, res->t, sizeof sorted[0] * (size_t)runs);
    qsort(sorted, (size_t)runs, sizeof sorted[0], cmp_double);
    if (runs) med = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
    fprintf(f,
            "{\"library\": \"petsc\", \"version\": \"%s\", \"problem\": \"%s\", "
            "\"processes\": %d, \"solver\": \"%s\", \"ksp\": \"%s\", \"pc\": \"%s\", "
            "\"bs\": %d, \"pc_side\": \"%s\", \"norm\": \"unpreconditioned\", "
            "\"factor_shift\": \"%s\", \"orthogonalization\": \"%s\", \"restart\": %d, "
            "\"n\": %d, \"nnz\": %.0f, \"rtol\": %.3e, \"maxit\": %d, \"runs\": %d, "
            "\"iterations\": %d, \"reason\": \"%s\", \"converged\": %s, ",
            res->version, o->problem, res->processes, o->solver, o->sk->type, o->pc, (int)o->bs,
            PCSides[o->sk->side], res->shift, res->ortho, (int)o->restart, (int)res->n,
            res->nnz, (double)o->rtol, (int)o->maxit, runs, (int)res->its, res->reason,
            res->converged ? "true" : "false");
    if (solved)
        fprintf(f,
                "\"relres\": %.6e, \"pc_setup_s\": %.6e, \"t_median_s\": %.6e, "
                "\"t_min_s\": %.6e, \"t_max_s\": %.6e, \"t_per_iter_s\": %.6e, "
                "\"t_total_s\": %.6e, ",
                (double)res->relres, res->t_setup, med, sorted[0], sorted[runs - 1],
                res->its > 0 ? med / (double)res->its : 0.0, res->t_setup + med);
    else
        fprintf(f, "\"relres\": null, \"pc_setup_s\": %.6e, \"t_median_s\": null, "
                   "\"t_min_s\": null, \"t_max_s\": null, \"t_per_iter_s\": null, "
                   "\"t_total_s\": null, ", res->t_setup);
    fprintf(f, "\"note\": \"%s\"}\n", res->note);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_result res;
    PetscInt n_cols;
    Mat A;
    Vec b;
    KSP ksp;
    MatInfo minfo;
    FILE *json = NULL;
    int failed = 0;
    int64_t r0 = 0, r1 = 0;
    PetscMPIInt rank = 0, size = 1;

    PetscCall(PetscInitialize(&argc, &argv, NULL,
                              "bench_petsc: KSP on a krill binary dump, for bench/run_cpu.sh"));
    memset(&res, 0, sizeof res);
    PetscCall(parse_options(&o));
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    res.processes = (int)size;
    PetscCall(read_matrix(o.a_path, o.bs, &A, &r0, &r1));
    PetscCall(MatGetSize(A, &res.n, &n_cols));
    PetscCheck(res.n == n_cols, PETSC_COMM_SELF, PETSC_ERR_USER,
               "%s: the matrix is not square", o.a_path);
    PetscCall(read_vector(o.b_path, res.n, r0, r1, &b));
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &minfo));
    res.nnz = minfo.nz_used;
    {
        PetscInt major, minor, sub;
        PetscCall(PetscGetVersionNumber(&major, &minor, &sub, NULL));
        PetscCall(PetscSNPrintf(res.version, sizeof res.version, "%d.%d.%d", (int)major,
                                (int)minor, (int)sub));
    }

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(configure(ksp, A, &o, &res));
    if (strcmp(o.pk->name, "jacobi") == 0) PetscCall(note_zero_diagonal(A, &res));
    PetscCall(timed_setup(ksp, &res, &failed));
    if (!failed && strcmp(o.pk->name, "icc") == 0) PetscCall(note_icc_pivots(ksp, A, &res));
    if (!failed) PetscCall(timed_solves(ksp, A, b, &o, &res));

    if (rank == 0) write_json(stdout, &o, &res, !failed);
    if (rank == 0 && o.json_path[0]) {
        json = fopen(o.json_path, "w");
        PetscCheck(json, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot create", o.json_path);
        write_json(json, &o, &res, !failed);
        PetscCheck(fclose(json) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s: write failed",
                   o.json_path);
    }

    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFinalize());
    return 0;
}
