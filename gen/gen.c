/* gen/gen.c - krill_gen: spec parsing and validation, the table of generators, and the
 * help lines.
 *
 * A spec is NAME or NAME:ARG[,ARG...]. Each generator declares its parameters (name,
 * integer or real, optional with a default); this file checks every argument before a
 * builder runs, so builders only see valid values: integers are written with decimal
 * digits only and lie in [1, INT32_MAX]; reals are finite and >= 0. Builders check that the
 * sizes derived from them fit (krill_gen_rows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_impl.h"

typedef enum gen_kind {
    GEN_INTEGER = 0,         /* a positive integer <= INT32_MAX */
    GEN_REAL = 1             /* a finite real >= 0 */
} gen_kind;

typedef struct gen_param {
    const char *name;        /* as it appears in messages: "K", "PE", "NX" */
    gen_kind kind;
    int optional;            /* may be omitted; only trailing parameters are optional */
    double fallback;         /* the value of an omitted optional parameter */
} gen_param;

typedef struct gen_entry {
    const char *name;
    const char *help;        /* the line krill_gen_help returns */
    int n_params;
    gen_param params[KRILL_GEN_MAX_ARGS];
    krill_gen_build_fn build;
} gen_entry;

/* Help lines (also the table's `help`, and krill_gen_help's array, in table order). */
static const char help_poisson3d[] =
    "poisson3d:K            7-point Laplacian on a K^3 grid, Dirichlet; SPD";
static const char help_convdiff3d[] =
    "convdiff3d:K[,PE]      7-point convection-diffusion, upwind, velocity (1,1,1), cell "
    "Peclet PE (default 1); nonsymmetric";
static const char help_elasticity3d[] =
    "elasticity3d:NX,NY,NZ  linear elasticity, trilinear hexahedra, cantilever clamped at "
    "x = 0; SPD, 3*NX*(NY+1)*(NZ+1) rows";
static const char help_stokes2d[] =
    "stokes2d:K[,C]         Stokes saddle point [[A, B'], [B, -C I]] on a K x K MAC grid (A: "
    "Laplacians of u and v, B: -divergence), C default 0.01; symmetric indefinite, 3K^2-2K "
    "rows";
static const char help_band1[] =
    "band1[:N]              diagonal (paper: N = 2000000, nnz 2000000)";
static const char help_band3[] =
    "band3[:N]              tridiagonal (paper: N = 2000000, nnz 5999998)";
static const char help_band101[] =
    "band101[:N]            band of width 101 (paper: N = 200000, nnz 20197450)";
static const char help_rand1[] =
    "rand1[:N]              one entry per row, random permutation (paper: N = 2000000)";
static const char help_rand100[] =
    "rand100[:N]            100 random columns per row, N >= 100 (paper: N = 200000, nnz "
    "20000000)";
static const char help_band1x[] =
    "band1x[:N]             diagonal with a full first row (paper: N = 2000000, nnz 3999999)";

#define GEN_PAPER_N(default_n) {{"N", GEN_INTEGER, 1, (default_n)}}

static const gen_entry gen_table[] = {
    {.name = "poisson3d", .help = help_poisson3d, .n_params = 1,
     .params = {{"K", GEN_INTEGER, 0, 0}}, .build = krill_gen_poisson3d},
    {.name = "convdiff3d", .help = help_convdiff3d, .n_params = 2,
     .params = {{"K", GEN_INTEGER, 0, 0}, {"PE", GEN_REAL, 1, 1.0}},
     .build = krill_gen_convdiff3d},
    {.name = "elasticity3d", .help = help_elasticity3d, .n_params = 3,
     .params = {{"NX", GEN_INTEGER, 0, 0}, {"NY", GEN_INTEGER, 0, 0}, {"NZ", GEN_INTEGER, 0, 0}},
     .build = krill_gen_elasticity3d},
    {.name = "stokes2d", .help = help_stokes2d, .n_params = 2,
     .params = {{"K", GEN_INTEGER, 0, 0}, {"C", GEN_REAL, 1, 0.01}},
     .build = krill_gen_stokes2d},
    {.name = "band1", .help = help_band1, .n_params = 1, .params = GEN_PAPER_N(2000000),
     .build = krill_gen_band1},
    {.name = "band3", .help = help_band3, .n_params = 1, .params = GEN_PAPER_N(2000000),
     .build = krill_gen_band3},
    {.name = "band101", .help = help_band101, .n_params = 1, .params = GEN_PAPER_N(200000),
     .build = krill_gen_band101},
    {.name = "rand1", .help = help_rand1, .n_params = 1, .params = GEN_PAPER_N(2000000),
     .build = krill_gen_rand1},
    {.name = "rand100", .help = help_rand100, .n_params = 1, .params = GEN_PAPER_N(200000),
     .build = krill_gen_rand100},
    {.name = "band1x", .help = help_band1x, .n_params = 1, .params = GEN_PAPER_N(2000000),
     .build = krill_gen_band1x},
};
#define GEN_COUNT ((int)(sizeof gen_table / sizeof gen_table[0]))

static const char *const gen_help_lines[] = {
    help_poisson3d, help_convdiff3d, help_elasticity3d, help_stokes2d, help_band1, help_band3,
    help_band101, help_rand1, help_rand100, help_band1x, NULL,
};

const char *const *krill_gen_help(void) { return gen_help_lines; }

/* "name:P1,P2[,P3]" into buf. */
static const char *gen_usage(const gen_entry *g, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s", g->name);
    for (int i = 0; i < g->n_params && used < size; i++) {
        const char *sep = i == 0 ? ":" : ",";
        if (g->params[i].optional)
            used += (size_t)snprintf(buf + used, size - used, "[%s%s]", sep, g->params[i].name);
        else
            used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, g->params[i].name);
    }
    return buf;
}

/* One argument `text` (length len, not terminated) of parameter p into args slot i. */
static krill_status gen_parse_arg(const gen_entry *g, const gen_param *p, const char *text,
                                  size_t len, int i, krill_gen_args *args)
{
    krill_status st = KRILL_OK;
    const int shown = len > 40 ? 40 : (int)len;  /* quote at most 40 characters */
    if (p->kind == GEN_INTEGER) {
        int64_t value = 0;
        int digits_only = len > 0;
        for (size_t k = 0; k < len && digits_only; k++)
            digits_only = text[k] >= '0' && text[k] <= '9';
        KRILL_REQUIRE(digits_only, "%s: %s must be a positive integer, got '%.*s'", g->name,
                      p->name, shown, text);
        for (size_t k = 0; k < len && value <= INT32_MAX; k++)
            value = 10 * value + (text[k] - '0');
        KRILL_REQUIRE(value >= 1, "%s: %s must be a positive integer, got '%.*s'", g->name,
                      p->name, shown, text);
        KRILL_REQUIRE(value <= INT32_MAX, "%s: %s = %.*s is larger than %d", g->name, p->name,
                      shown, text, INT32_MAX);
        args->integer[i] = value;
        args->real[i] = (double)value;
    } else {
        char buf[64];
        char *end = NULL;
        double value = 0.0;
        int number_start = len > 0 && ((text[0] >= '0' && text[0] <= '9') || text[0] == '.');
        KRILL_REQUIRE(number_start && len < sizeof buf,
                      "%s: %s must be a non-negative number, got '%.*s'", g->name, p->name,
                      shown, text);
        memcpy(buf, text, len);
        buf[len] = '\0';
        value = strtod(buf, &end);
        KRILL_REQUIRE(end == buf + len, "%s: %s must be a non-negative number, got '%s'",
                      g->name, p->name, buf);
        KRILL_REQUIRE(isfinite(value), "%s: %s = %s is not finite", g->name, p->name, buf);
        args->real[i] = value;
        args->integer[i] = 0;
    }
cleanup:
    return st;
}

/* Split the text after "name:" at commas and validate each argument. `rest` is NULL when
 * the spec has no ':'. */
static krill_status gen_parse_args(const gen_entry *g, const char *spec, const char *rest,
                                   krill_gen_args *args)
{
    krill_status st = KRILL_OK;
    char usage[96];
    int given = 0;
    int required = 0;
    while (required < g->n_params && !g->params[required].optional)
        required++;
    args->name = g->name;
    for (int i = 0; i < g->n_params; i++) {
        args->real[i] = g->params[i].fallback;
        args->integer[i] = (int64_t)g->params[i].fallback;
    }
    if (rest != NULL) {
        const char *arg = rest;
        for (;;) {
            const char *comma = strchr(arg, ',');
            size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
            KRILL_REQUIRE(given < g->n_params, "%s: too many arguments in '%s' (usage: %s)",
                          g->name, spec, gen_usage(g, usage, sizeof usage));
            KRILL_TRY(gen_parse_arg(g, &g->params[given], arg, len, given, args));
            given++;
            if (comma == NULL)
                break;
            arg = comma + 1;
        }
    }
    KRILL_REQUIRE(given >= required, "%s: missing %s in '%s' (usage: %s)", g->name,
                  g->params[given].name, spec, gen_usage(g, usage, sizeof usage));
cleanup:
    return st;
}

krill_status krill_gen(const char *spec, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    const gen_entry *g = NULL;
    krill_gen_args args;
    memset(&args, 0, sizeof args);
    KRILL_REQUIRE(csr != NULL, "krill_gen: csr is NULL");
    *csr = NULL;
    KRILL_REQUIRE(spec != NULL, "krill_gen: spec is NULL");
    const char *colon = strchr(spec, ':');
    size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; i < GEN_COUNT && g == NULL; i++)
        if (strlen(gen_table[i].name) == name_len &&
            strncmp(gen_table[i].name, spec, name_len) == 0)
            g = &gen_table[i];
    if (g == NULL) {
        char known[256];
        size_t used = 0;
        for (int i = 0; i < GEN_COUNT && used < sizeof known; i++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                     i ? ", " : "", gen_table[i].name);
        st = krill_error(KRILL_ERR_ARG, "unknown generator '%.*s' in spec '%s' (known: %s)",
                         (int)(name_len > 40 ? 40 : name_len), spec, spec, known);
        goto cleanup;
    }
    KRILL_TRY(gen_parse_args(g, spec, colon ? colon + 1 : NULL, &args));
    KRILL_TRY(g->build(&args, csr));
cleanup:
    return st;
}

krill_status krill_gen_rows(const krill_gen_args *args, const char *what, int64_t a,
                            int64_t b, int64_t c, int32_t *rows)
{
    krill_status st = KRILL_OK;
    /* Each factor is <= INT32_MAX + 1, so a partial product that is still <= INT32_MAX
     * times the next factor cannot overflow int64. */
    int64_t product = a;
    int fits = product <= INT32_MAX;
    if (fits) {
        product *= b;
        fits = product <= INT32_MAX;
    }
    if (fits) {
        product *= c;
        fits = product <= INT32_MAX;
    }
    KRILL_REQUIRE(fits, "%s: %s = %lld x %lld x %lld rows, more than %d (int32 row indices)",
                  args->name, what, (long long)a, (long long)b, (long long)c, INT32_MAX);
    *rows = (int32_t)product;
cleanup:
    return st;
}
