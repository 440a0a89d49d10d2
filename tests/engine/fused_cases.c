/* camclass — the fused-block tests' shapes and driver (see fused_cases.h). */
#include <stdio.h>
#include <string.h>

#include "fused_cases.h"

/* Blocks every family the host runs must compute: size, cin, t, cout, stride. */
static const struct fused_shape fixed[] = {
    {112, 32, 1, 16, 1}, // mobilenet_v2's first block
    {13, 16, 6, 24, 2},  {14, 24, 6, 24, 1}, {9, 24, 6, 32, 2}, {7, 3, 6, 3, 1},
    {1, 17, 6, 17, 1},   {1, 24, 1, 24, 2},  {2, 3, 1, 17, 1},  {57, 17, 6, 24, 2},
    {7, 160, 6, 160, 1}, // mobilenet_v2's widest (960 expanded channels)
};

/* s with its width drawn from r and the rest derived. */
static struct fused_shape complete(struct fused_shape s, struct tu_rng *r)
{
    s.w = s.size > 2 ? s.size + tu_rng_range(r, -1, 1) : s.size;
    s.cexp = s.cin * s.t;
    s.residual = s.stride == 1 && s.cin == s.cout;
    s.ho = (s.size - 1) / s.stride + 1;
    s.wo = (s.w - 1) / s.stride + 1;
    s.n_in = (size_t)s.size * s.w * s.cin;
    s.n_out = (size_t)s.ho * s.wo * s.cout;
    return s;
}

/* A random shape: channels with odd tails, residual half the time where it can be. */
static struct fused_shape random_shape(struct tu_rng *r)
{
    static const int channels[] = {3, 5, 8, 16, 17, 24, 33};
    struct fused_shape s = {0};
    s.cin = channels[tu_rng_range(r, 0, 6)];
    s.cout = channels[tu_rng_range(r, 0, 6)];
    s.stride = tu_rng_range(r, 1, 2);
    s.cout = s.stride == 1 && tu_rng_range(r, 0, 1) ? s.cin : s.cout;
    s.size = tu_rng_range(r, 1, 57);
    s.t = tu_rng_range(r, 0, 1) ? 6 : 1;
    return complete(s, r);
}

/* One shape with family isa's kernels on 1 to 4 threads against the reference. */
static void check_shape(const struct fused_kind *k, struct tu_rng *r, const struct fused_shape *s,
                        int isa, const char *name)
{
    bool *residual;
    void *b = k->make(r, s, &residual);
    for (int threads = 1; threads <= 4; threads++) {
        struct cc_error err = {{0}};
        if (!CHECKF(k->init(b, isa, threads, &err), "init: %s", err.msg))
            break;
        pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
        for (int poison = 0; poison < k->poisons; poison++) {
            k->run(b, poison, pool);
            char why[256] = "";
            CHECKF(k->compare(b, why, sizeof(why)),
                   "%s, %d thread(s): %dx%d %d -> %d -> %d stride %d%s: %s", name, threads, s->size,
                   s->w, s->cin, s->cexp, s->cout, s->stride, s->residual ? " residual" : "", why);
        }
        pthreadpool_destroy(pool);
    }
    k->destroy(b);
}

/* A residual asked of a block that changes its channel count (16 -> 24) is refused at init. */
static void check_bad_residual(const struct fused_kind *k)
{
    struct tu_rng r;
    tu_rng_seed(&r, 1);
    struct fused_shape s = complete((struct fused_shape){8, 16, 6, 24, 1}, &r);
    bool *residual;
    void *b = k->make(&r, &s, &residual);
    *residual = true;
    struct cc_error err = {{0}};
    CHECK(!k->init(b, 0, 1, &err));
    CHECKF(strstr(err.msg, "residual") != NULL, "error: %s", err.msg);
    k->destroy(b);
}

void fused_cases_run(const struct fused_kind *k, struct tu_rng *r)
{
    check_bad_residual(k);
    for (int isa = 0; isa < k->isa_count; isa++) {
        if (k->skip && k->skip[isa])
            continue;
        bool runs = false;
        const char *name = k->isa(isa, &runs);
        if (!runs) {
            printf("# %s: not on this CPU or build\n", name);
            continue;
        }
        int cases = 0;
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, cases++) {
            struct fused_shape s = complete(fixed[i], r);
            check_shape(k, r, &s, isa, name);
        }
        for (int i = 0; i < 24; i++, cases++) {
            struct fused_shape s = random_shape(r);
            check_shape(k, r, &s, isa, name);
        }
        printf("# %s: %d blocks x 1-4 threads\n", name, cases);
    }
}

void fused_cases_check(const struct fused_kind *k, struct tu_rng *r, struct fused_shape s, int isa)
{
    bool runs = false;
    const char *name = k->isa(isa, &runs);
    struct fused_shape c = complete(s, r);
    check_shape(k, r, &c, isa, name);
}
