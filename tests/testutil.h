/* camclass — shared test utilities.
 *
 * A test program calls CHECK()/CHECKF() freely, then returns tu_exit_code() from main. A
 * failed check prints file:line and the message and is counted; the program carries on so
 * that one run shows every failure.
 */
#ifndef CC_TESTUTIL_H
#define CC_TESTUTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Counts a check; prints "FAIL file:line: msg" when cond is false. Returns cond. */
bool tu_check(bool cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define CHECK(cond) tu_check((cond), __FILE__, __LINE__, "%s", #cond)
#define CHECKF(cond, ...) tu_check((cond), __FILE__, __LINE__, __VA_ARGS__)

/* Prints "N checks, N failed" and returns 0 when nothing failed, 1 otherwise. */
int tu_exit_code(void);

/* Failed checks so far: a program that reports per test (PASS/FAIL) takes the difference. */
int tu_failures(void);

/* Deterministic random numbers (xorshift64*), state owned by the caller. */
struct tu_rng {
    uint64_t s;
};
void tu_rng_seed(struct tu_rng *r, uint64_t seed);
uint32_t tu_rng_u32(struct tu_rng *r);
int tu_rng_range(struct tu_rng *r, int lo, int hi); // inclusive
float tu_rng_uniform(struct tu_rng *r, float lo, float hi);
void tu_rng_fill(struct tu_rng *r, float *x, size_t n, float lo, float hi);

/* Largest |a[i] - b[i]| and the largest |b[i]|; index of the worst element in *worst. */
double tu_max_abs_diff(const float *a, const float *b, size_t n, size_t *worst);
double tu_max_abs(const float *x, size_t n);
// v sorted in increasing order (the benchmarks' percentiles)
void tu_sort_doubles(double *v, size_t n);

/* Reads a whole file; returns a malloc'd buffer (NUL-terminated) or NULL. */
void *tu_read_file(const char *path, size_t *size);

/* Makes a new directory $TMPDIR/NAME.XXXXXX (TMPDIR unset: /tmp) and writes its path to dir
 * (size bytes). false, with a failed check naming the path and errno, when it cannot. */
bool tu_tmpdir(char *dir, size_t size, const char *name);

/* Removes path and everything below it, links not followed; false, with a line on stderr,
 * when something was left. */
bool tu_rmtree(const char *path);

/* Lines a module hands to its notice callback (any thread), kept in order. */
struct tu_notices {
    pthread_mutex_t lock;
    char text[8192]; // each line and a '\n'; cut when full
};
#define TU_NOTICES_INIT                                                                            \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, ""                                                              \
    }

/* A notice callback (common/notice.h's shape) appending line to the tu_notices at ctx. */
void tu_notice(void *ctx, const char *line);

#endif
