/* apps/output.c - the command's outputs: files written whole or not at all, standard
 * output checked at exit (cli_impl.h, "outputs"). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "cli_impl.h"

int cli_output_open(krill_outfile *out, const char *option, const char *path)
{
    int rc = CLI_EXIT_OK;
    if (krill_outfile_open(out, path) != KRILL_OK)
        rc = cli_error(CLI_EXIT_USAGE, "%s %s", option, krill_last_error());
    return rc;
}

int cli_output_close(krill_outfile *out, const char *option, int commit)
{
    int rc = CLI_EXIT_OK;
    if (krill_outfile_close(out, commit) != KRILL_OK)
        rc = cli_error(CLI_EXIT_USAGE, "%s %s", option, krill_last_error());
    return rc;
}

void cli_output_stdout(krill_outfile *out) { krill_outfile_stream(out, stdout, "-"); }

void cli_guard_std_streams(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
            open("/dev/null", O_RDONLY);   /* the lowest free descriptor: fd itself */
}

int cli_close_stdout(int rc)
{
    int failed = ferror(stdout);
    errno = 0;
    failed |= fclose(stdout) != 0;
    const int code = errno;
    if (failed && (rc == CLI_EXIT_OK || rc == CLI_EXIT_NOT_CONVERGED))   /* not reported yet */
        rc = cli_error(CLI_EXIT_USAGE, "standard output: write failed: %s",
                       code ? strerror(code) : "an earlier write was refused");
    return rc;
}
