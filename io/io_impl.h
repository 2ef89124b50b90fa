/* io/io_impl.h - internals of io/: the Matrix Market reader and writer, shared by the files of
 * io/: loading a file into memory (mm_load.c), the number lexer (mm_lex.c, with the powers
 * of five of mm_pow5.c), the header (mm_header.c), the parallel body parser (mm_body.c)
 * and the CSR builder (mm_build.c); mm_read.c and mm_write.c hold the public functions.
 *
 * A read is: load the whole file (gunzip if it starts with the gzip magic) -> parse banner
 * and size line -> parse the data lines in parallel chunks into triplets (or, for `array`,
 * values in file order) -> build the CSR (expand symmetric storage, sort rows, sum
 * duplicates). Every step reports the first problem in file order, so the message is the
 * same whatever the thread count. */
#ifndef KRILL_IO_IMPL_H
#define KRILL_IO_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/core_impl.h"
#include "krill/io.h"
#include "krill/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- mm_load.c ------------------------------------------------------------------------
 * Read the whole file at `path` into a new krill-allocated buffer (*text, *len bytes, plus
 * a terminating NUL that is not counted). A file that starts with the gzip magic bytes
 * 1f 8b is decompressed with zlib (KRILL_ERR_UNSUPPORTED when built without it). */
krill_status krill_io_load(const char *path, char **text, size_t *len);

/* ---- mm_lex.c -------------------------------------------------------------------------
 * Tokens are separated by blanks (space, tab, carriage return); a line ends at '\n'. A
 * lexer reads one token starting at *p, stops at the first blank, '\n' or `end`, and on
 * success moves *p there. Any other character inside the token makes it MM_LEX_BAD. */
typedef enum mm_lex {
    MM_LEX_OK = 0,
    MM_LEX_BAD,              /* not a number of the expected syntax */
    MM_LEX_NONFINITE,        /* inf, infinity or nan, in any case, with any sign */
    MM_LEX_RANGE,            /* too large: an integer over 18 digits, a real overflowing */
    MM_LEX_LONG              /* a real token longer than MM_LEX_MAX_TOKEN characters */
} mm_lex;

#define MM_LEX_MAX_TOKEN 511

static inline int mm_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static inline int mm_is_sep(char c) { return mm_is_blank(c) || c == '\n'; }

/* A decimal real [+-]digits[.digits][(e|E)[+-]digits] (digits on at least one side of the
 * point), correctly rounded to the nearest double (ties to even) whatever its length.
 * `decimal_point` is the C library's current one (localeconv), used only on the slow path
 * that hands the token to strtod. */
mm_lex mm_lex_real(const char **p, const char *end, char decimal_point, double *out);

/* A decimal integer [+-]digits converted to the nearest double (the `integer` field). */
mm_lex mm_lex_integer_value(const char **p, const char *end, char decimal_point, double *out);

/* ---- SWAR digits: eight characters at once as one little-endian 64-bit word -----------
 * Used where 8 bytes can be read (p + 8 <= end); elsewhere one character at a time. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MM_SWAR 1
#define MM_ONES 0x0101010101010101ull

static inline uint64_t mm_load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* How many of the word's first characters are digits (0..8). A byte is a digit when its
 * high nibble is 3 and stays 3 after adding 6. A carry out of a byte >= 0xfa can only
 * disturb the bytes after it, which come after a non-digit anyway. */
static inline int mm_leading_digits(uint64_t v)
{
    const uint64_t high = 0xf0 * MM_ONES, three = 0x30 * MM_ONES;
    uint64_t bad = ((v & high) ^ three) | (((v + 6 * MM_ONES) & high) ^ three);
    return bad ? __builtin_ctzll(bad) >> 3 : 8;
}

/* The number written by the word's first n digits (1 <= n <= 8). */
static inline uint64_t mm_digits_value(uint64_t v, int n)
{
    v -= 0x30 * MM_ONES;               /* digits to 0..9; no borrow leaves a digit byte */
    v <<= 8 * (8 - n);                 /* drop the bytes after the digits: leading zeros */
    v = (v * 10 + (v >> 8)) & 0x00ff00ff00ff00ffull;        /* 2-digit numbers */
    v = (v * 100 + (v >> 16)) & 0x0000ffff0000ffffull;      /* 4-digit numbers */
    return (v * 10000 + (v >> 32)) & 0xffffffffull;         /* the 8-digit number */
}
#else
#define MM_SWAR 0
#endif

/* An unsigned decimal integer of at most 18 digits after its leading zeros (indices);
 * inline: two per entry. */
static inline mm_lex mm_lex_index(const char **pp, const char *end, int64_t *out)
{
    const char *start = *pp, *p = start;
    while (p < end && *p == '0') p++;  /* leading zeros: no value, no digit of the limit */
    const char *digits = p;
    uint64_t v = 0;
    int run_ended = 0;
#if MM_SWAR
    if (end - p >= 8) {
        int n = mm_leading_digits(mm_load8(p));
        if (n > 0) v = mm_digits_value(mm_load8(p), n);
        p += n;
        run_ended = n < 8;
    }
#endif
    for (; !run_ended && p < end && (unsigned)(*p - '0') < 10u; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (p == start || (p < end && !mm_is_sep(*p))) return MM_LEX_BAD;
    if (p - digits > 18) return MM_LEX_RANGE;
    *out = (int64_t)v;
    *pp = p;
    return MM_LEX_OK;
}

/* Copy the token at p (up to a separator or `end`) into buf for a message: at most 40
 * characters, then "...", with unprintable bytes shown as '?'. Returns buf. */
const char *mm_token_text(const char *p, const char *end, char *buf, size_t size);

/* ---- mm_pow5.c (generated by mm_pow5.py) ------------------------------------------------
 * 5^q = (P + d) * 2^b with P = hi * 2^64 + lo in [2^127, 2^128) and 0 <= d < 1: the first
 * 128 bits of 5^q, truncated; exact (d = 0) for 0 <= q <= MM_POW5_EXACT_MAX_Q. */
#define MM_POW5_MIN_Q (-342)
#define MM_POW5_MAX_Q 308
#define MM_POW5_EXACT_MAX_Q 55

typedef struct mm_pow5 {
    uint64_t hi, lo;
    int b;
} mm_pow5;

extern const mm_pow5 mm_pow5_table[MM_POW5_MAX_Q - MM_POW5_MIN_Q + 1];

/* ---- mm_header.c ---------------------------------------------------------------------- */
typedef struct mm_header {
    krill_mm_info info;
    int64_t size_line;       /* line number of the size line */
    size_t body;             /* offset of the first byte after the size line */
    int64_t values;          /* data lines the body must hold: `entries` for coordinate,
                                the stored part of the array (all, or one triangle) */
} mm_header;

/* Parse the banner and the size line of text[0..len). Fills h->info as far as it gets (the
 * caller copies it out even on failure). Errors: KRILL_ERR_PARSE "NAME:LINE: what";
 * KRILL_ERR_UNSUPPORTED for complex/hermitian files and sizes over int32. */
krill_status mm_parse_header(const char *name, const char *text, size_t len, mm_header *h);

/* 1 + the number of '\n' in text[0..pos): the line that holds byte pos. */
int64_t mm_line_of(const char *text, size_t pos);

/* ---- mm_body.c ------------------------------------------------------------------------ */
typedef struct mm_entries {
    int64_t count;           /* == header values */
    int32_t *row, *col;      /* zero-based indices in file order; NULL for array files */
    double *val;             /* values in file order (1.0 for pattern) */
} mm_entries;

/* Parse the data lines after the header into e (allocated here; release with
 * mm_entries_free, also after a failure). */
krill_status mm_parse_body(const char *name, const char *text, size_t len, const mm_header *h,
                           mm_entries *e);
void mm_entries_free(mm_entries *e);

/* The line of the body's data line k (0-based, in file order, as mm_parse_body counts). */
int64_t mm_line_of_entry(const char *text, size_t len, const mm_header *h, int64_t k);

/* Threads for a pass over `work` items: 1 below `serial_below`, else OpenMP's maximum. */
int mm_threads_for(int64_t work, int64_t serial_below);

/* ---- mm_read.c ------------------------------------------------------------------------
 * KRILL_OK when `bytes` fit in the host memory available; else KRILL_ERR_ALLOC
 * "NAME:LINE: reading the R x C matrix (WHAT) needs N bytes of host memory, M are
 * available" (LINE: the size line). */
krill_status mm_check_memory(const char *name, const mm_header *h, size_t bytes,
                             const char *what);

/* ---- mm_build.c -----------------------------------------------------------------------
 * The CSR of the parsed file: symmetric and skew-symmetric storage expanded to full,
 * rows sorted, duplicates summed in file order (so the sum has the same bits for every
 * thread count). Array files give a dense CSR: every entry, zeros included. */
krill_status mm_build_csr(const char *name, const mm_header *h, const mm_entries *e,
                          krill_csr **csr);

/* ==== graph readers (include/krill/graph.h) ==============================================
 * Shared by io/graph_read.c (the public functions, the adjacency builder, Matrix Market),
 * io/graph_text.c (DIMACS .gr and METIS .graph) and io/graph_edgelist.c (SNAP-style edge
 * lists), and by gen/graph_gen.c (the random generator builds through graph_build).
 *
 * A read is: load the whole file (krill_io_load: gunzipped by magic bytes) -> one serial
 * pass over the lines, checking each token with the lexers above and appending the arcs in
 * file order -> graph_build: a counting sort by tail, each row sorted by head, parallel
 * arcs reduced to their smallest weight. Parsing stops at the first problem, so errors come
 * in file order, as "NAME:LINE: what". */

/* Arcs in file order: tail src[k] -> head dst[k], weight w[k] (zero-based vertices). */
typedef struct graph_arcs {
    int64_t count, cap;
    int32_t *src, *dst;
    double *w;
} graph_arcs;

/* Room for cap arcs (count = 0). Release with graph_arcs_free, also after a failure. */
krill_status graph_arcs_alloc(graph_arcs *a, int64_t cap);
void graph_arcs_free(graph_arcs *a);

/* The n x n adjacency of the arcs (all < n): rows sorted, parallel arcs reduced to the
 * smallest weight (the first of equal ones), self loops kept. Fills info's n, arcs,
 * self_loops, negative, integer_weights, min_weight and max_weight (info may be NULL). */
krill_status graph_build(int32_t n, const graph_arcs *a, krill_csr **graph,
                         krill_graph_info *info);

/* KRILL_OK when the adjacency of n vertices and `arcs` arcs fits in the host memory
 * available; else KRILL_ERR_ALLOC "NAME:LINE: a graph of N vertices and M arcs needs ...". */
krill_status graph_check_memory(const char *name, int64_t line, int64_t n, int64_t arcs);

/* ---- the line scanner of the text formats ------------------------------------------ */
typedef struct graph_src {
    const char *name;        /* the file name in messages */
    int64_t line;            /* the line being parsed (1-based) */
    char decimal_point;      /* the C library's, for mm_lex_real's slow path */
} graph_src;

static inline const char *graph_skip_blanks(const char *p, const char *end)
{
    while (p < end && mm_is_blank(*p)) p++;
    return p;
}

/* The '\n' that ends the line at p, or end. */
static inline const char *graph_line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* Lines of text[0..len): a last line without '\n' counts; an empty text has none. */
int64_t graph_count_lines(const char *text, size_t len);

/* The reason an index token at tok (of the line ending at le) was refused, as
 * KRILL_ERR_PARSE "NAME:LINE: ..." naming `what` and the range [lo, hi]. */
krill_status graph_index_error(const graph_src *s, const char *tok, const char *le,
                               const char *what, int64_t lo, int64_t hi);

/* The unsigned decimal integer after the blanks at *p, in [lo, hi] (the line ends at le);
 * moves *p past it. The fast path is inline: it runs for every vertex of every arc. */
static inline krill_status graph_read_index(const graph_src *s, const char **p, const char *le,
                                            const char *what, int64_t lo, int64_t hi,
                                            int64_t *v)
{
    const char *tok = graph_skip_blanks(*p, le), *q = tok;
    if (tok < le && mm_lex_index(&q, le, v) == MM_LEX_OK && *v >= lo && *v <= hi) {
        *p = q;
        return KRILL_OK;
    }
    return graph_index_error(s, tok, le, what, lo, hi);
}

/* Largest magnitude of an integer weight: 2^53 - 1, so that every integer accepted is the
 * double read (2^53 + 1 would round to 2^53 and pass a test against 2^53). */
#define GRAPH_MAX_INTEGER_WEIGHT 9007199254740991.0

/* The weight after the blanks at *p into *w: a finite real, or with `integer` an integer
 * of magnitude < 2^53. `what` names it in messages ("weight", "edge weight"). */
krill_status graph_read_weight(const graph_src *s, const char **p, const char *le, int integer,
                               const char *what, double *w);

/* Nothing but blanks may follow on the line: else "unexpected 'TOKEN' after `after`". */
krill_status graph_line_done(const graph_src *s, const char *p, const char *le,
                             const char *after);

/* ---- the formats: parse text[0..len) and build the graph; info is never NULL and was
 * cleared with its format set by the caller; each parser fills it as far as it gets ---- */
krill_status graph_read_dimacs(const char *name, const char *text, size_t len,
                               krill_csr **graph, krill_graph_info *info);
krill_status graph_read_metis(const char *name, const char *text, size_t len,
                              krill_csr **graph, krill_graph_info *info);
krill_status graph_read_edgelist(const char *name, const char *text, size_t len,
                                 krill_graph_ids ids, int undirected, krill_csr **graph,
                                 krill_graph_info *info);

/* ---- outfile.c: output files written whole or not at all -------------------------------
 * krill_outfile_open writes to a temporary file in the target's folder
 * (".krill-PID-SERIAL.tmp", with the permissions of the file it replaces, or those of a new
 * file); krill_outfile_close(out, 1) checks that every write succeeded, flushes, fsyncs,
 * closes and renames it over the target, so the target is either untouched or complete. A
 * symbolic link to a regular file replaces the file it points to. A target that exists and
 * is not a regular file (a device such as /dev/full or /dev/stdout, a FIFO) is written in
 * place. The matrix writers, the .npy writer and the `krill` command's outputs use it. */
typedef struct krill_outfile {
    FILE *f;                 /* where to write; NULL once closed */
    const char *name;        /* the path (or stream name) given, for messages */
    char *target;            /* the file that the temporary one replaces; NULL: in place */
    char *tmp;               /* the temporary file; NULL: in place */
    int borrowed;            /* f is the caller's stream: flushed and checked, not closed */
} krill_outfile;

/* Open `path` for writing; KRILL_ERR_IO "PATH: cannot create: REASON" on failure. */
krill_status krill_outfile_open(krill_outfile *out, const char *path);
/* Write to the caller's open stream (e.g. stdout) under `name`: closing only checks it. */
void krill_outfile_stream(krill_outfile *out, FILE *f, const char *name);
/* commit = 1: the stream's error flag, fflush, fsync, fclose and rename must all succeed,
 * else KRILL_ERR_IO "NAME: write failed: REASON" and the temporary file is removed.
 * commit = 0 (the caller failed): close and remove the temporary file, KRILL_OK. */
krill_status krill_outfile_close(krill_outfile *out, int commit);

/* ---- krill binary CSR files (bin_write.c, bin_read.c; doc/binary-format.md) ------------
 * A 128-byte header, the chunk checksum tables, then the row_ptr (int64), col (int32, padded
 * with zeros to a multiple of 8 bytes) and val (double) sections, all in the writer's byte
 * order. Each section is checksummed in chunks of `chunk` bytes (FNV-1a 64 of the bytes as
 * stored), so a reader of a slice verifies exactly the chunks it reads. */
#define KRILL_BIN_MAGIC "KRILLCSR"            /* 8 bytes, no NUL */
#define KRILL_BIN_VERSION 1u
#define KRILL_BIN_HEADER_BYTES 128
#define KRILL_BIN_ORDER_MARK 0x0A0B0C0Du      /* reads as 0x0D0C0B0A when byte-swapped */
#define KRILL_BIN_DEFAULT_CHUNK ((int64_t)1 << 20)
#define KRILL_BIN_MIN_CHUNK ((int64_t)64)
#define KRILL_BIN_MAX_CHUNK ((int64_t)1 << 30)
#define KRILL_BIN_KNOWN_FLAGS (KRILL_BIN_SYMMETRIC | KRILL_BIN_DIAG_POSITIVE | \
                               KRILL_BIN_DIAG_NEGATIVE)

enum { BIN_ROW_PTR = 0, BIN_COL = 1, BIN_VAL = 2, BIN_SECTIONS = 3 };

/* Where everything lies, derived from the header's sizes (bin_layout). */
typedef struct bin_layout {
    int64_t bytes[BIN_SECTIONS];     /* section sizes (col padded to a multiple of 8) */
    int64_t chunks[BIN_SECTIONS];    /* ceil(bytes / chunk) */
    int64_t sums[BIN_SECTIONS];      /* file offset of the section's checksum table */
    int64_t data[BIN_SECTIONS];      /* file offset of the section's first byte */
    int64_t file_bytes;              /* the whole file */
} bin_layout;

/* The layout of an n_rows x n_cols matrix of nnz entries in chunks of `chunk` bytes; 0 when
 * the sizes are in range (n_rows, n_cols in [0, 2^31 - 1], 0 <= nnz <= n_rows * n_cols and 2^56,
 * chunk a power of two in [MIN, MAX]) and the file size fits in int64, else -1. */
int bin_layout_of(int64_t n_rows, int64_t n_cols, int64_t nnz, int64_t chunk, bin_layout *l);

/* FNV-1a 64 of p[0..n) continuing from h (start: BIN_FNV_BASIS). */
#define BIN_FNV_BASIS 0xcbf29ce484222325ull
uint64_t bin_fnv(uint64_t h, const void *p, size_t n);

/* An open file, its header checked (bin_read.c). */
typedef struct krill_bin_file {
    const char *name;        /* the path, for messages */
    int fd;                  /* -1 when closed */
    int swap;                /* 1: the file's byte order is not the host's */
    krill_bin_info info;
    bin_layout layout;
} krill_bin_file;

/* Open path and check its header against the file's size: KRILL_ERR_IO when it cannot be
 * opened, KRILL_ERR_PARSE "PATH: what" for anything wrong; nothing is allocated. */
krill_status krill_bin_open(const char *path, krill_bin_file *f);
void krill_bin_close(krill_bin_file *f);                  /* safe on a closed file */
/* row_ptr[first .. first + count) into out (host order), every chunk read verified. */
krill_status krill_bin_read_ptr(krill_bin_file *f, int64_t first, int64_t count, int64_t *out);
/* Rows [r0, r1) as a new CSR with global columns (n_cols of the file), verified and
 * checked (krill_csr_check). */
krill_status krill_bin_read_slice(krill_bin_file *f, int64_t r0, int64_t r1, krill_csr **rows);

#ifdef __cplusplus
}
#endif
#endif
