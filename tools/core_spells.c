/* camclass — whether this core is shared, and when: a probe of the host, not of camclass
 * (figures only; docs/PERFORMANCE.md, "The first real AVX2-only host").
 *
 *     core_spells [SECONDS]    (default 8; run it pinned: taskset -c 0 build/tools/core_spells)
 *
 * Over and over until SECONDS have passed, on the calling thread: a dependent pointer chase
 * through a shuffled ring of 256 KiB (an L2's size), 8 MiB (L3) and 128 MiB (memory), 20000
 * loads each, and 200000 steps of 4 dependent FMA chains (x86-64: FMA3). All are latency-bound:
 * the core's other hyperthread at work slows the FMA loop a little and the 256 KiB chase, whose
 * lines it evicts, a lot (towards L3's latency). Prints one line per sample (a few ms):
 * milliseconds since the start, the three chases' nanoseconds per load, the FMA loop's
 * milliseconds; then the 10th, 50th and 90th percentiles of each column.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { LINE = 64, CHASE_LOADS = 20000, FMA_STEPS = 200000, MAX_SAMPLES = 100000 };

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* A ring of bytes / LINE cache lines in a random order: each line holds the next one's address. */
static void **make_ring(size_t bytes, unsigned *seed)
{
    size_t n = bytes / LINE, step = LINE / sizeof(void *);
    void **p = aligned_alloc(LINE, n * LINE);
    size_t *order = malloc(n * sizeof(size_t));
    if (!p || !order) {
        fprintf(stderr, "core_spells: out of memory for a %zu-byte ring\n", bytes);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rand_r(seed) % (i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        p[order[i] * step] = &p[order[(i + 1) % n] * step];
    free(order);
    return p;
}

static double chase_ns(void **ring)
{
    void **p = ring;
    double t0 = now_ms();
    for (int i = 0; i < CHASE_LOADS; i++)
        p = (void **)*p;
    double ns = (now_ms() - t0) * 1e6 / CHASE_LOADS;
    void *volatile keep = p; // the chase is not dead code
    (void)keep;
    return ns;
}

#if defined(__x86_64__)
__attribute__((target("fma")))
#endif
static double
fma_ms(void)
{
    double a = 1.0, b = 1.0, c = 1.0, d = 1.0, m = 0.9999, t0 = now_ms();
    for (int i = 0; i < FMA_STEPS; i++) {
        a = __builtin_fma(a, m, m), b = __builtin_fma(b, m, m);
        c = __builtin_fma(c, m, m), d = __builtin_fma(d, m, m);
    }
    double ms = now_ms() - t0;
    volatile double keep = a + b + c + d;
    (void)keep;
    return ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 8.0;
    if (!(secs > 0) || secs > 3600) {
        fprintf(stderr, "core_spells: SECONDS must be a number above 0, at most 3600\n");
        return 2;
    }
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("fma")) {
        fprintf(stderr, "core_spells: this CPU has no FMA (its FMA loop is x86-64 FMA3)\n");
        return 2;
    }
#endif
    unsigned seed = 1;
    void **rings[3] = {make_ring(256 << 10, &seed), make_ring(8 << 20, &seed),
                       make_ring(128 << 20, &seed)};
    static double col[4][MAX_SAMPLES];
    int n = 0;
    printf("# ms  L2-sized_ns  L3-sized_ns  memory_ns  fma_ms\n");
    for (double t0 = now_ms(); now_ms() - t0 < secs * 1e3 && n < MAX_SAMPLES; n++) {
        double at = now_ms() - t0;
        for (int k = 0; k < 3; k++)
            col[k][n] = chase_ns(rings[k]);
        col[3][n] = fma_ms();
        printf("%.0f %.1f %.1f %.1f %.3f\n", at, col[0][n], col[1][n], col[2][n], col[3][n]);
    }
    static const char *names[4] = {"L2-sized chase ns", "L3-sized chase ns", "memory chase ns",
                                   "fma ms"};
    for (int k = 0; k < 4; k++) {
        qsort(col[k], (size_t)n, sizeof(double), cmp_double);
        printf("# %-18s p10 %.2f  median %.2f  p90 %.2f\n", names[k], col[k][n / 10], col[k][n / 2],
               col[k][9 * n / 10]);
    }
    for (int k = 0; k < 3; k++)
        free(rings[k]);
    return 0;
}
