/* camclass — shared test utilities (see testutil.h). */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

// Counters of one test program; a test program is single-threaded by convention.
static int checks_run, checks_failed;

bool tu_check(bool cond, const char *file, int line, const char *fmt, ...)
{
    checks_run++;
    if (cond)
        return true;
    checks_failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return false;
}

int tu_failures(void)
{
    return checks_failed;
}

int tu_exit_code(void)
{
    printf("%d checks, %d failed\n", checks_run, checks_failed);
    return checks_failed ? 1 : 0;
}

void tu_rng_seed(struct tu_rng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 1;
}

uint32_t tu_rng_u32(struct tu_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

int tu_rng_range(struct tu_rng *r, int lo, int hi)
{
    return lo + (int)(tu_rng_u32(r) % (uint32_t)(hi - lo + 1));
}

float tu_rng_uniform(struct tu_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)(tu_rng_u32(r) >> 8) / (float)(1u << 24);
}

void tu_rng_fill(struct tu_rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = tu_rng_uniform(r, lo, hi);
}

double tu_max_abs_diff(const float *a, const float *b, size_t n, size_t *worst)
{
    double m = 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m || isnan(d)) {
            m = isnan(d) ? INFINITY : d;
            w = i;
        }
    }
    if (worst)
        *worst = w;
    return m;
}

double tu_max_abs(const float *x, size_t n)
{
    // A compare, not fmax(): Debian 12's aarch64 gcc 12.2 at -O3 stops with an internal compiler
    // error (vect_transform_reduction) vectorizing an fmax() reduction over doubles. Same result:
    // a NaN is skipped either way.
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs((double)x[i]);
        if (a > m)
            m = a;
    }
    return m;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tu_sort_doubles(double *v, size_t n)
{
    qsort(v, n, sizeof(double), by_value);
}

void *tu_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[len] = 0;
    if (size)
        *size = len;
    return buf;
}

bool tu_tmpdir(char *dir, size_t size, const char *name)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int n = snprintf(dir, size, "%s/%s.XXXXXX", base, name);
    if (!CHECKF(n > 0 && (size_t)n < size, "temporary directory name %s/%s too long", base, name))
        return false;
    return CHECKF(mkdtemp(dir) != NULL, "mkdtemp(%s): %s", dir, strerror(errno));
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    if (remove(path) != 0) {
        fprintf(stderr, "could not remove %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

bool tu_rmtree(const char *path)
{
    return nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS) == 0;
}

void tu_notice(void *ctx, const char *line)
{
    struct tu_notices *n = ctx;
    pthread_mutex_lock(&n->lock);
    size_t len = strlen(n->text);
    snprintf(n->text + len, sizeof(n->text) - len, "%s\n", line);
    pthread_mutex_unlock(&n->lock);
}
