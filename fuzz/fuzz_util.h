/* fuzz/fuzz_util.h - what the libFuzzer harnesses of fuzz/ share: a scratch file per
 * process, bitwise comparison of CSRs and of error outcomes, and the properties every
 * matrix that reads without error must have. A violated property calls abort(), which
 * libFuzzer reports as a crash with the input that caused it. */
#ifndef KRILL_FUZZ_UTIL_H
#define KRILL_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "krill/csr.h"
#include "krill/status.h"

/* Host memory the readers may take in a harness: a header that claims more fails with
 * KRILL_ERR_ALLOC at once (core's krill_host_mem_limit). An input is at most a few kB, so
 * what it can hold fits easily; a size line may still declare a million empty rows, which
 * costs 8 MB to build: more would slow the fuzzer down without reaching new code. */
#define FUZZ_MEM_LIMIT ((size_t)8 << 20)

/* libFuzzer's entry points: LLVMFuzzerInitialize (fuzz_util.c, for every harness) sets the
 * memory limit, creates the CPU context and has the scratch files removed at exit; each
 * harness defines LLVMFuzzerTestOneInput. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "$TMPDIR/krill-fuzz-PID-TAG" (TMPDIR defaults to /dev/shm where it exists, else /tmp);
 * the same for a tag every call. */
const char *fuzz_path(const char *tag);

/* Write data[0..size) to path, replacing it; abort() if that fails. */
void fuzz_write(const char *path, const void *data, size_t size);

/* Print "fuzz property violated: WHAT" (printf-style) to stderr and abort(). */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void fuzz_fail(const char *fmt, ...);

/* The outcome of a read: its status and a copy of its message. */
typedef struct fuzz_outcome {
    krill_status st;
    char msg[512];
} fuzz_outcome;

/* Record st and, when it is not KRILL_OK, krill_last_error(). */
void fuzz_record(fuzz_outcome *o, krill_status st);

/* abort() unless two reads of the same input ended alike (status and message), `how`
 * naming the pair. */
void fuzz_same_outcome(const fuzz_outcome *a, const fuzz_outcome *b, const char *how);

/* abort() unless a and b (either may be NULL) are both NULL or equal bit for bit. */
void fuzz_same_csr(const krill_csr *a, const krill_csr *b, const char *how);

/* The properties of a matrix read without error: krill_csr_check passes; it builds as
 * "csr" and "ell" on the CPU and comes back from each format unchanged; written with
 * krill_mm_write and read again it is the same bit for bit. */
void fuzz_check_matrix(const krill_csr *a);

#endif
