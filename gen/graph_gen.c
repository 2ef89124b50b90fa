/* gen/graph_gen.c - krill_graph_gen: deterministic graphs from a SPEC string (the
 * generators of include/krill/graph.h), its spec parser and its help lines.
 *
 * A spec is NAME:ARG[,ARG...]. Every argument is written with decimal digits only (at most
 * 18); sizes must be >= 1, a seed may be 0. The builders then check what the sizes imply:
 * at most INT32_MAX vertices and at most GRAPH_GEN_MAX_ARCS arcs (for complete:N that is
 * N <= 46341), so that no spec asks for an absurd allocation. Failures are KRILL_ERR_ARG
 * naming the generator and the part of the spec.
 *
 * random draws from splitmix64 (seeded with SEED), so a spec gives the same graph on every
 * machine; a number in [0, k) is the high 32 bits of a draw times k, shifted down 32
 * (k < 2^31: the bias is below 2^-32). Its arcs go through graph_build (io/), which reduces
 * parallel arcs to their minimum. grid2d and complete are written row by row, already
 * sorted, with no parallel arcs. */
#include <string.h>

#include "io/io_impl.h"

#define GRAPH_GEN_MAX_ARGS 3
#define GRAPH_GEN_MAX_ARCS ((int64_t)INT32_MAX)
#define GRAPH_GEN_MAX_DIGITS 18

typedef struct graph_gen_args {
    const char *name;                     /* the generator, for messages */
    int64_t v[GRAPH_GEN_MAX_ARGS];        /* the arguments; omitted ones hold the defaults */
} graph_gen_args;

typedef krill_status (*graph_gen_fn)(const graph_gen_args *args, krill_csr **graph);

typedef struct graph_gen_entry {
    const char *name;
    const char *usage;                    /* "random:N[,DEG[,SEED]]" */
    int required, total;                  /* arguments: at least `required`, at most `total` */
    const char *param[GRAPH_GEN_MAX_ARGS];
    int64_t least[GRAPH_GEN_MAX_ARGS];    /* the smallest value allowed */
    int64_t fallback[GRAPH_GEN_MAX_ARGS]; /* the value of an omitted optional argument */
    graph_gen_fn build;
} graph_gen_entry;

/* ---- splitmix64 ----------------------------------------------------------------------- */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t next64(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ull;
    return mix64(*state);
}

/* A number in [0, k), k <= 2^32. */
static int64_t below(uint64_t *state, int64_t k)
{
    return (int64_t)(((next64(state) >> 32) * (uint64_t)k) >> 32);
}

/* ---- the generators --------------------------------------------------------------------- */
static krill_status gen_random(const graph_gen_args *args, krill_csr **graph)
{
    krill_status st = KRILL_OK;
    graph_arcs arcs = {0, 0, NULL, NULL, NULL};
    const int64_t n = args->v[0], deg = args->v[1];
    uint64_t state = (uint64_t)args->v[2];
    KRILL_REQUIRE(n >= 2, "random: N = %lld: arcs with distinct ends need N >= 2 vertices",
                  (long long)n);
    KRILL_REQUIRE(n <= INT32_MAX, "random: N = %lld is more than %d vertices", (long long)n,
                  INT32_MAX);
    KRILL_REQUIRE(deg <= GRAPH_GEN_MAX_ARCS / n, "random: N*DEG = %lld*%lld arcs, more than "
                  "%lld", (long long)n, (long long)deg, (long long)GRAPH_GEN_MAX_ARCS);
    KRILL_TRY(graph_arcs_alloc(&arcs, n * deg));
    for (int64_t k = 0; k < n * deg; k++) {
        int64_t u = below(&state, n), v = below(&state, n - 1);
        if (v >= u) v++;                          /* distinct ends, uniform over the others */
        arcs.src[k] = (int32_t)u;
        arcs.dst[k] = (int32_t)v;
        arcs.w[k] = (double)below(&state, n);
    }
    arcs.count = n * deg;
    KRILL_TRY(graph_build((int32_t)n, &arcs, graph, NULL));
cleanup:
    graph_arcs_free(&arcs);
    return st;
}

/* The weight of the grid edge {a, b} (both directions): 1..100 from the two vertices. */
static double grid_weight(int64_t a, int64_t b)
{
    uint64_t lo = (uint64_t)(a < b ? a : b), hi = (uint64_t)(a < b ? b : a);
    return (double)(1 + mix64(lo << 32 | hi) % 100);
}

static krill_status gen_grid2d(const graph_gen_args *args, krill_csr **graph)
{
    krill_status st = KRILL_OK;
    krill_csr *g = NULL;
    const int64_t rows = args->v[0], cols = args->v[1];
    KRILL_REQUIRE(cols <= INT32_MAX / rows, "grid2d: R*C = %lld*%lld vertices, more than %d",
                  (long long)rows, (long long)cols, INT32_MAX);
    const int64_t n = rows * cols, arcs = 2 * (rows * (cols - 1) + cols * (rows - 1));
    KRILL_REQUIRE(arcs <= GRAPH_GEN_MAX_ARCS, "grid2d: R = %lld, C = %lld gives %lld arcs, "
                  "more than %lld", (long long)rows, (long long)cols, (long long)arcs,
                  (long long)GRAPH_GEN_MAX_ARCS);
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, arcs, &g));
    int64_t p = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) {
            const int64_t u = r * cols + c;
            const int64_t nb[4] = {r > 0 ? u - cols : -1, c > 0 ? u - 1 : -1,
                                   c + 1 < cols ? u + 1 : -1, r + 1 < rows ? u + cols : -1};
            for (int k = 0; k < 4; k++) {
                if (nb[k] < 0) continue;
                g->col[p] = (int32_t)nb[k];
                g->val[p++] = grid_weight(u, nb[k]);
            }
            g->row_ptr[u + 1] = p;
        }
    }
    *graph = g;
    g = NULL;
cleanup:
    krill_csr_destroy(&g);
    return st;
}

static krill_status gen_complete(const graph_gen_args *args, krill_csr **graph)
{
    krill_status st = KRILL_OK;
    krill_csr *g = NULL;
    const int64_t n = args->v[0];
    KRILL_REQUIRE(n <= 46341 && n * (n - 1) <= GRAPH_GEN_MAX_ARCS, "complete: N = %lld gives "
                  "N*(N-1) arcs, more than %lld (N <= 46341)", (long long)n,
                  (long long)GRAPH_GEN_MAX_ARCS);
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, n * (n - 1), &g));
    int64_t p = 0;
    for (int64_t u = 0; u < n; u++) {
        for (int64_t v = 0; v < n; v++) {
            if (v == u) continue;
            g->col[p] = (int32_t)v;
            g->val[p++] = (double)(1 + (u * 7 + v * 13) % 97);
        }
        g->row_ptr[u + 1] = p;
    }
    *graph = g;
    g = NULL;
cleanup:
    krill_csr_destroy(&g);
    return st;
}

/* ---- the table, help and spec parser -------------------------------------------------- */
static const graph_gen_entry graph_gen_table[] = {
    {"random", "random:N[,DEG[,SEED]]", 1, 3, {"N", "DEG", "SEED"}, {1, 1, 0}, {0, 4, 1},
     gen_random},
    {"grid2d", "grid2d:R,C", 2, 2, {"R", "C", NULL}, {1, 1, 0}, {0, 0, 0}, gen_grid2d},
    {"complete", "complete:N", 1, 1, {"N", NULL, NULL}, {1, 0, 0}, {0, 0, 0}, gen_complete},
};
#define GRAPH_GEN_COUNT ((int)(sizeof graph_gen_table / sizeof graph_gen_table[0]))

static const char *const graph_gen_help_lines[] = {
    "random:N[,DEG[,SEED]]  N vertices, DEG*N arcs (DEG default 4) with distinct random ends, "
    "integer weights uniform in [0, N), SEED default 1; parallel arcs reduced to the minimum",
    "grid2d:R,C             R x C grid: arcs both ways between 4-neighbours, integer weights "
    "in [1, 100] from the positions",
    "complete:N             every arc u -> v, u != v, weight 1 + (u*7 + v*13) mod 97 "
    "(N <= 46341)",
    NULL,
};

const char *const *krill_graph_gen_help(void) { return graph_gen_help_lines; }

/* Argument i of g, the text [arg, arg + len), into args->v[i]. */
static krill_status parse_arg(const graph_gen_entry *g, int i, const char *arg, size_t len,
                              graph_gen_args *args)
{
    krill_status st = KRILL_OK;
    const int shown = len > 40 ? 40 : (int)len;
    const char *kind = g->least[i] > 0 ? "a positive integer" : "a non-negative integer";
    int digits = len > 0;
    int64_t value = 0;
    for (size_t k = 0; k < len && digits; k++) digits = arg[k] >= '0' && arg[k] <= '9';
    KRILL_REQUIRE(digits, "%s: %s must be %s, got '%.*s' (usage: %s)", g->name, g->param[i],
                  kind, shown, arg, g->usage);
    KRILL_REQUIRE(len <= GRAPH_GEN_MAX_DIGITS, "%s: %s = %.*s is too large", g->name,
                  g->param[i], shown, arg);
    for (size_t k = 0; k < len; k++) value = 10 * value + (arg[k] - '0');
    KRILL_REQUIRE(value >= g->least[i], "%s: %s must be %s, got '%.*s' (usage: %s)", g->name,
                  g->param[i], kind, shown, arg, g->usage);
    args->v[i] = value;
cleanup:
    return st;
}

krill_status krill_graph_gen(const char *spec, krill_csr **graph)
{
    krill_status st = KRILL_OK;
    const graph_gen_entry *g = NULL;
    graph_gen_args args;
    memset(&args, 0, sizeof args);
    KRILL_REQUIRE(graph != NULL, "krill_graph_gen: graph is NULL");
    *graph = NULL;
    KRILL_REQUIRE(spec != NULL, "krill_graph_gen: spec is NULL");
    const char *colon = strchr(spec, ':');
    const size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; i < GRAPH_GEN_COUNT && !g; i++)
        if (strlen(graph_gen_table[i].name) == name_len &&
            strncmp(graph_gen_table[i].name, spec, name_len) == 0)
            g = &graph_gen_table[i];
    KRILL_REQUIRE(g != NULL, "unknown graph generator '%.*s' in spec '%s' (known: random, "
                  "grid2d, complete)", (int)(name_len > 40 ? 40 : name_len), spec, spec);
    args.name = g->name;
    for (int i = 0; i < g->total; i++) args.v[i] = g->fallback[i];
    int given = 0;
    if (colon) {
        for (const char *arg = colon + 1;;) {
            const char *comma = strchr(arg, ',');
            const size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
            KRILL_REQUIRE(given < g->total, "%s: too many arguments in '%s' (usage: %s)",
                          g->name, spec, g->usage);
            KRILL_TRY(parse_arg(g, given, arg, len, &args));
            given++;
            if (!comma) break;
            arg = comma + 1;
        }
    }
    KRILL_REQUIRE(given >= g->required, "%s: missing %s in '%s' (usage: %s)", g->name,
                  g->param[given], spec, g->usage);
    KRILL_TRY(g->build(&args, graph));
cleanup:
    return st;
}
