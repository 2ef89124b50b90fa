/* apps/cmd_convert.c - `krill convert IN OUT`: a matrix from one file format to the other.
 *
 * IN is read by its content: a krill binary file by its magic bytes ("KRILLCSR"), anything
 * else as Matrix Market (.gz too). OUT is written as Matrix Market when its name ends in
 * .mtx or .mtx.gz, else as a krill binary file (doc/binary-format.md; the usual name is
 * A.krill), the "binary cache" that `krill solve` reads, each MPI rank its own rows. */
#include <inttypes.h>
#include <string.h>
#include "cli_impl.h"

static void convert_usage(FILE *out)
{
    fprintf(out,
            "usage: krill convert IN OUT [--chunk BYTES] [--quiet]\n"
            "\n"
            "Convert a matrix between Matrix Market and krill's binary format: IN is\n"
            "recognised by its content (a binary file by its magic bytes, anything else\n"
            "is read as Matrix Market, .gz included); OUT is Matrix Market when its name\n"
            "ends in .mtx or .mtx.gz, else binary (e.g. A.krill). The binary file holds\n"
            "the CSR arrays as they lie in memory with checksums, so `krill solve A.krill`\n"
            "reads it without parsing and, under mpirun, every rank reads only its own\n"
            "rows. Values round-trip bit for bit either way. The output is written whole\n"
            "or not at all.\n"
            "\n"
            "  --chunk BYTES       binary output: bytes per checksummed chunk, a power of\n"
            "                      two from 64 to 1G (default 1M; K, M, G: powers of 1024);\n"
            "                      a rank verifies the chunks it reads\n"
            "  --quiet             print nothing on success\n"
            "\n"
            "exit codes: 0 done, 2 bad usage or bad input, or the output could not be\n"
            "            written, 3 krill failed (out of memory)\n");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int convert_run(int argc, char **argv)
{
    int rc = CLI_EXIT_OK, want_help = 0, quiet = 0, n_positional = 0;
    const char *paths[2] = { NULL, NULL }, *chunk_text = NULL;
    double chunk = 0.0, t0 = cli_seconds();
    krill_csr *csr = NULL;
    krill_bin_info info;
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = &want_help },
        { .name = "-h", .kind = CLI_FLAG, .flag = &want_help },
        { .name = "--chunk", .kind = CLI_STRING, .string = &chunk_text },
        { .name = "--quiet", .kind = CLI_FLAG, .flag = &quiet },
    };
    rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0], paths, 2,
                   &n_positional);
    if (rc != CLI_EXIT_OK) goto cleanup;
    if (want_help) {
        convert_usage(stdout);
        goto cleanup;
    }
    if (n_positional != 2) {
        fprintf(stderr, "krill convert: expected IN and OUT (see krill help convert)\n");
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    const int to_mtx = ends_with(paths[1], ".mtx") || ends_with(paths[1], ".mtx.gz");
    if (chunk_text) {
        chunk = cli_parse_bytes(chunk_text);
        if (chunk < 64 || chunk > 1073741824.0 || ((int64_t)chunk & ((int64_t)chunk - 1)) ||
            chunk != (double)(int64_t)chunk) {
            rc = cli_error(CLI_EXIT_USAGE, "--chunk %s: expected a power of two from 64 to 1G",
                           chunk_text);
            goto cleanup;
        }
        if (to_mtx) {
            rc = cli_error(CLI_EXIT_USAGE, "--chunk: %s is written as Matrix Market, which has "
                           "no chunks", paths[1]);
            goto cleanup;
        }
    }
    const int from_bin = krill_bin_detect(paths[0]);
    CLI_TRY(from_bin ? krill_bin_read(paths[0], &csr, NULL) : krill_mm_read(paths[0], &csr, NULL));
    CLI_TRY(to_mtx ? krill_mm_write(paths[1], csr)
                   : krill_bin_write(paths[1], csr, (int64_t)chunk));
    if (!quiet) {
        printf("%s (%s) -> %s (%s): %" PRId32 " x %" PRId32 ", %" PRId64 " nonzeros",
               paths[0], from_bin ? "krill binary" : "Matrix Market", paths[1],
               to_mtx ? "Matrix Market" : "krill binary", csr->n_rows, csr->n_cols, csr->nnz);
        if (!to_mtx && krill_bin_read_info(paths[1], &info) == KRILL_OK)
            printf(", %" PRId64 " bytes in chunks of %" PRId64 "%s%s", info.file_bytes,
                   info.chunk_bytes, info.flags & KRILL_BIN_SYMMETRIC ? ", symmetric" : "",
                   info.flags & KRILL_BIN_DIAG_POSITIVE   ? ", positive diagonal"
                   : info.flags & KRILL_BIN_DIAG_NEGATIVE ? ", negative diagonal"
                                                          : "");
        printf(", %.3f s\n", cli_seconds() - t0);
    }
cleanup:
    krill_csr_destroy(&csr);
    return rc;
}

const cli_command cli_convert_command = {
    .name = "convert",
    .summary = "convert a matrix between Matrix Market and krill's binary format (A.krill)",
    .run = convert_run,
    .usage = convert_usage,
};
