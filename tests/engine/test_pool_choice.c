/* camclass — the CPU backend's choice of the thread pool or the calling thread alone per run
 * (engine/cpu/pool_choice.h), on given times (no clock, no load):
 * - quiet pooled runs (the calling thread on a core nearly all the time) keep the pool;
 * - one crowded run (on a core under half of it) among quiet ones changes nothing; two in a row
 *   send the next CC_POOL_SOLO_MIN runs to the calling thread alone, then the pool is tried
 *   again;
 * - still crowded: twice as many runs alone each time, up to CC_POOL_SOLO_MAX; one quiet try
 *   and the pool stays, the next crowded one starts from CC_POOL_SOLO_MIN again;
 * - CAMCLASS_CPU_POOL=always keeps the pool whatever the times; a bad value is one line naming
 *   it and the choices.
 * Whether one thread is faster on a crowded machine is a benchmark's question (PERFORMANCE.md). */
#include <string.h>

#include "pool_choice.h"
#include "testutil.h"

enum { QUIET, CROWDED };

/* One run with the choice: whether it used the pool; its thread was on a core all of its
 * 10 ms (QUIET) or 2 of them (CROWDED). */
static bool run(struct cc_pool_choice *c, int load)
{
    bool pooled = cc_pool_choice_begin(c);
    cc_pool_choice_took(c, pooled, load == QUIET ? 9800000 : 2000000, 10000000);
    return pooled;
}

/* Runs alone until one uses the pool, whose thread has load; the number of runs alone. */
static int alone_then(struct cc_pool_choice *c, int load)
{
    int n = 0;
    while (!run(c, load) && n <= 10 * CC_POOL_SOLO_MAX)
        n++;
    return n;
}

static void test_auto(void)
{
    struct cc_pool_choice c;
    cc_pool_choice_init(&c, CC_POOL_AUTO);
    bool all = true;
    for (int i = 0; i < 100; i++)
        all &= run(&c, QUIET);
    CHECKF(all && c.solo_runs == 0, "quiet runs keep the pool (%llu alone)",
           (unsigned long long)c.solo_runs);

    bool pooled = run(&c, CROWDED) && run(&c, QUIET) && run(&c, CROWDED) && run(&c, QUIET);
    CHECKF(pooled && c.solo_runs == 0, "one crowded run at a time: still the pool (%llu alone)",
           (unsigned long long)c.solo_runs);
    CHECK(run(&c, CROWDED) && run(&c, CROWDED)); // two in a row, both pooled
    int want = CC_POOL_SOLO_MIN;
    for (int k = 0; k < 7; k++) { // each try crowded too: 8, 16, ... up to the most
        int n = alone_then(&c, CROWDED);
        CHECKF(n == want, "stretch %d alone: %d runs, want %d", k, n, want);
        want = 2 * want < CC_POOL_SOLO_MAX ? 2 * want : CC_POOL_SOLO_MAX;
    }
    int n = alone_then(&c, QUIET); // the longest stretch, then a quiet try
    CHECKF(n == CC_POOL_SOLO_MAX, "the longest stretch: %d runs, want %d", n, CC_POOL_SOLO_MAX);
    all = true;
    for (int i = 0; i < 50; i++)
        all &= run(&c, QUIET);
    CHECKF(all, "after a quiet try the pool stays");
    CHECK(run(&c, CROWDED) && run(&c, CROWDED));
    n = alone_then(&c, QUIET);
    CHECKF(n == CC_POOL_SOLO_MIN, "crowded again: %d alone, want %d (from the least again)", n,
           CC_POOL_SOLO_MIN);
}

static void test_always(void)
{
    struct cc_pool_choice c;
    cc_pool_choice_init(&c, CC_POOL_ALWAYS);
    bool all = true;
    for (int i = 0; i < 100; i++)
        all &= run(&c, i % 2 ? CROWDED : QUIET);
    CHECKF(all && c.solo_runs == 0, "always: the pool at every run (%llu alone)",
           (unsigned long long)c.solo_runs);
}

static void test_parse(void)
{
    enum cc_pool_mode m = CC_POOL_ALWAYS;
    struct cc_error err = {0};
    CHECK(cc_pool_mode_parse(NULL, &m, &err) && m == CC_POOL_AUTO);
    CHECK(cc_pool_mode_parse("auto", &m, &err) && m == CC_POOL_AUTO);
    CHECK(cc_pool_mode_parse("always", &m, &err) && m == CC_POOL_ALWAYS);
    CHECKF(!cc_pool_mode_parse("sometimes", &m, &err) && strstr(err.msg, "\"sometimes\"") &&
               strstr(err.msg, "auto") && strstr(err.msg, "always") && !strchr(err.msg, '\n'),
           "a bad value: %s", err.msg);
}

int main(void)
{
    test_auto();
    test_always();
    test_parse();
    return tu_exit_code();
}
