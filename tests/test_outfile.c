/* Output files written whole or not at all (io/outfile.c, issue 17), directly and through
 * the writers that use it (krill_mm_write_vector, plain and .gz, krill_npy_write): the
 * target appears only when complete; a failed write (a full disk, simulated with
 * RLIMIT_FSIZE, and /dev/full) or a discarded one leaves no file, no temporary file and an
 * older file as it was; a device is written in place and stays a device; a symbolic link
 * keeps pointing to the file it names; an existing file keeps its permissions; a missing
 * or unwritable folder is an error naming the path; each failing allocation leaves
 * nothing behind. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"
#include "testutil.h"

static char dir[] = "/tmp/krill-outfile-XXXXXX";

typedef struct path_buf {
    char s[256];
} path_buf;

/* dir/name; in_dir(name).s lives until the end of the full expression. */
static path_buf in_dir(const char *name)
{
    path_buf p;
    snprintf(p.s, sizeof p.s, "%s/%s", dir, name);
    return p;
}

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* 1 when the file holds exactly `text`. */
static int holds(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return f != NULL && strcmp(buf, text) == 0;
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Temporary files (".krill-*") left in the folder. */
static int leftovers(void)
{
    int count = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        count += strncmp(e->d_name, ".krill-", 7) == 0;
    if (d) closedir(d);
    return count;
}

static void test_commit_and_discard(void)
{
    krill_outfile out;
    const path_buf buf = in_dir("a.txt");
    const char *path = buf.s;
    CHECK_OK(krill_outfile_open(&out, path));
    fputs("new", out.f);
    CHECK(!exists(path) && leftovers() == 1);          /* written beside, not yet in place */
    CHECK_OK(krill_outfile_close(&out, 1));
    CHECK(holds(path, "new") && leftovers() == 0 && out.f == NULL);
    CHECK_OK(krill_outfile_close(&out, 1));             /* closing twice does nothing */

    CHECK_OK(krill_outfile_open(&out, path));           /* discarded: the old file stays */
    fputs("newer", out.f);
    CHECK_OK(krill_outfile_close(&out, 0));
    CHECK(holds(path, "new") && leftovers() == 0);
}

/* A new file gets 0666 less the umask; a replaced one keeps its permissions. */
static void test_permissions(void)
{
    struct stat sb;
    const path_buf buf = in_dir("mode.mtx");
    const char *path = buf.s;
    const double x[2] = { 1.0, 2.0 };
    mode_t mask = umask(022);
    CHECK_OK(krill_mm_write_vector(path, x, 2));
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644);
    CHECK(chmod(path, 0600) == 0);
    CHECK_OK(krill_mm_write_vector(path, x, 2));
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    umask(mask);
}

/* Writing through a symbolic link replaces the file it points to; the link stays. */
static void test_symlink(void)
{
    struct stat sb;
    const double x[1] = { 3.0 };
    put_text(in_dir("real.mtx").s, "old");
    CHECK(symlink("real.mtx", in_dir("link.mtx").s) == 0);
    CHECK_OK(krill_mm_write_vector(in_dir("link.mtx").s, x, 1));
    CHECK(lstat(in_dir("link.mtx").s, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(!holds(in_dir("real.mtx").s, "old") && leftovers() == 0);
}

/* A disk that fills up: with RLIMIT_FSIZE at 1000 bytes (SIGXFSZ ignored) a write past it
 * fails with EFBIG, as one past a full disk fails with ENOSPC. */
static void test_file_too_large(void)
{
    struct rlimit saved, small;
    static double big[4096];
    const path_buf old_buf = in_dir("old.mtx"), fresh_buf = in_dir("fresh.npy");
    const char *old = old_buf.s, *fresh = fresh_buf.s;
    for (int k = 0; k < 4096; k++) big[k] = 1.0 / (k + 3);
    put_text(old, "old");
    CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    small = saved;
    small.rlim_cur = 1000;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    CHECK_STATUS(krill_mm_write_vector(old, big, 4096), KRILL_ERR_IO);
    CHECK(strstr(krill_last_error(), "old.mtx: write failed") != NULL);
    CHECK(holds(old, "old") && leftovers() == 0);
    CHECK_STATUS(krill_npy_write(fresh, "<f8", 1, 4096, big), KRILL_ERR_IO);
    CHECK(strstr(krill_last_error(), "fresh.npy: write failed") != NULL);
    CHECK(!exists(fresh) && leftovers() == 0);
#ifdef KRILL_HAVE_ZLIB
    CHECK_STATUS(krill_mm_write_vector(in_dir("v.mtx.gz").s, big, 4096), KRILL_ERR_IO);
    CHECK(!exists(in_dir("v.mtx.gz").s) && leftovers() == 0);
#endif
    CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
    signal(SIGXFSZ, SIG_DFL);
    CHECK_OK(krill_npy_write(fresh, "<f8", 1, 4096, big));
}

/* /dev/full is written in place (never replaced nor removed) and every write fails. */
static void test_device(void)
{
    struct stat sb;
    static double big[4096];
    krill_outfile out;
    if (stat("/dev/full", &sb) != 0 || !S_ISCHR(sb.st_mode)) {
        printf("note: no /dev/full character device; skipped\n");
        return;
    }
    CHECK_STATUS(krill_mm_write_vector("/dev/full", big, 4096), KRILL_ERR_IO);
    CHECK(strstr(krill_last_error(), "/dev/full: write failed: No space left") != NULL);
    CHECK_STATUS(krill_npy_write("/dev/full", "<f8", 1, 16, big), KRILL_ERR_IO);
    CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));

    FILE *f = fopen("/dev/full", "w");                  /* a caller's stream: checked, */
    CHECK(f != NULL);                                   /* not closed                  */
    if (f) {
        krill_outfile_stream(&out, f, "the stream");
        fputs("x", out.f);
        CHECK_STATUS(krill_outfile_close(&out, 1), KRILL_ERR_IO);
        CHECK(strstr(krill_last_error(), "the stream: write failed") != NULL);
        clearerr(f);
        CHECK(fputc('y', f) == 'y');                    /* still open */
        fclose(f);
    }
}

static void test_bad_folder(void)
{
    krill_outfile out;
    const double x[1] = { 1.0 };
    CHECK_STATUS(krill_outfile_open(&out, in_dir("no-such/x.mtx").s), KRILL_ERR_IO);
    CHECK(strstr(krill_last_error(), "no-such/x.mtx: cannot create: No such file") != NULL);
    CHECK(out.f == NULL);
    put_text(in_dir("plain").s, "a file, not a folder");
    CHECK_STATUS(krill_mm_write_vector(in_dir("plain/x.mtx").s, x, 1), KRILL_ERR_IO);
    if (geteuid() != 0) {                               /* root writes anywhere */
        CHECK(mkdir(in_dir("ro").s, 0500) == 0);
        CHECK_STATUS(krill_mm_write_vector(in_dir("ro/x.mtx").s, x, 1), KRILL_ERR_IO);
        CHECK(strstr(krill_last_error(), "Permission denied") != NULL);
        CHECK(rmdir(in_dir("ro").s) == 0);
    }
    CHECK(leftovers() == 0);
}

/* Each allocation of krill_mm_write_vector fails in turn: an error, and no file at all. */
static void test_faults(void)
{
    const path_buf buf = in_dir("fault.mtx");
    const char *path = buf.s;
    const double x[3] = { 1.0, 2.0, 3.0 };
    long before = krill_alloc_calls();
    CHECK_OK(krill_mm_write_vector(path, x, 3));
    long count = krill_alloc_calls() - before;
    CHECK(remove(path) == 0);
    for (long k = 1; k <= count; k++) {
        krill_fault_alloc_after(k);
        CHECK_STATUS(krill_mm_write_vector(path, x, 3), KRILL_ERR_ALLOC);
        krill_fault_alloc_after(0);
        CHECK(!exists(path) && leftovers() == 0);
    }
}

int main(void)
{
    if (!mkdtemp(dir)) tu_skip("cannot make a temporary folder");
    test_commit_and_discard();
    test_permissions();
    test_symlink();
    test_file_too_large();
    test_device();
    test_bad_folder();
    test_faults();
    int rc = tu_finish("test_outfile");
    const char *names[] = { "a.txt", "mode.mtx", "real.mtx", "link.mtx", "old.mtx",
                            "fresh.npy", "plain", "v.mtx.gz" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) remove(in_dir(names[k]).s);
    rmdir(dir);
    return rc;
}
