/* apps/cmd_gen.c - `krill gen SPEC -o A.mtx`: write a generated matrix as Matrix Market. */
#include <inttypes.h>
#include "cli_impl.h"

static void gen_usage(FILE *out)
{
    fprintf(out,
            "usage: krill gen SPEC -o A.mtx\n"
            "       krill gen --list\n"
            "\n"
            "Generate the test matrix named by SPEC (deterministic: the same SPEC gives the\n"
            "same matrix, bit for bit) and write it as `coordinate real general`.\n"
            "\n"
            "  -o, --output FILE   where to write it (required)\n"
            "  --list              list the generators and their arguments\n"
            "  --quiet             print nothing on success\n");
}

static void list_generators(FILE *out)
{
    for (const char *const *line = krill_gen_help(); *line; line++)
        fprintf(out, "%s\n", *line);
}

static int gen_run(int argc, char **argv)
{
    int rc = CLI_EXIT_OK;
    int want_help = 0, want_list = 0, quiet = 0;
    const char *output = NULL;
    const char *spec = NULL;
    int n_positional = 0;
    krill_csr *csr = NULL;
    krill_status st = KRILL_OK;
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = &want_help },
        { .name = "-h", .kind = CLI_FLAG, .flag = &want_help },
        { .name = "--list", .kind = CLI_FLAG, .flag = &want_list },
        { .name = "--quiet", .kind = CLI_FLAG, .flag = &quiet },
        { .name = "-o", .kind = CLI_STRING, .string = &output },
        { .name = "--output", .kind = CLI_STRING, .string = &output },
    };
    rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0], &spec, 1,
                   &n_positional);
    if (rc != CLI_EXIT_OK) goto cleanup;
    if (want_help) {
        gen_usage(stdout);
        goto cleanup;
    }
    if (want_list) {
        list_generators(stdout);
        goto cleanup;
    }
    if (!spec || !output) {
        fprintf(stderr, "krill gen: %s\n", !spec ? "missing SPEC (see krill gen --list)"
                                                 : "missing -o FILE");
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    st = krill_gen(spec, &csr);
    if (st == KRILL_OK) st = krill_mm_write(output, csr);
    if (st != KRILL_OK) {
        rc = cli_fail(st);
        goto cleanup;
    }
    if (!quiet)
        printf("wrote %s: %s, %" PRId32 " x %" PRId32 ", %" PRId64 " nonzeros\n", output, spec,
               csr->n_rows, csr->n_cols, csr->nnz);
cleanup:
    krill_csr_destroy(&csr);
    return rc;
}

const cli_command cli_gen_command = {
    .name = "gen",
    .summary = "write a generated test matrix (poisson3d, elasticity3d, ...) to a .mtx file",
    .run = gen_run,
    .usage = gen_usage,
};
