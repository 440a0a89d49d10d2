/* camclass — the watch over the CPU backend's load-time timings (engine/cpu/choice_watch.h), on
 * given times (no clock, no load):
 * - quiet timings (the calling thread on a core nearly all the time) keep the pool and are fit
 *   to be saved, one preempted run among many too;
 * - one crowded pooled run among quiet ones changes nothing; two in a row: the pool is left from
 *   the next node on (not within the node in progress) and for the rest, and nothing is saved,
 *   the reason naming the share and how many timings went on the calling thread alone;
 * - one thread (no pool): a thread on a core under CC_WATCH_QUIET_SHARE of the timed wall time
 *   throughout is not saved, one at or above it is;
 * - CAMCLASS_CPU_CROWDED=yes: no pool from the start, never saved; no: the pool, always saved;
 *   a bad value is one line naming it and the choices. */
#include <string.h>

#include "choice_watch.h"
#include "testutil.h"

enum { MS = 1000000 };

/* n timed runs of 1 ms each on the node in progress, the thread on a core share of it. */
static void runs(struct cc_choice_watch *w, int n, double share)
{
    for (int i = 0; i < n; i++)
        cc_choice_watch_took(w, (int64_t)(share * MS), MS);
}

static void test_pool(void)
{
    char why[192] = "";
    struct cc_choice_watch w;
    cc_choice_watch_init(&w, CC_WATCH_AUTO, true);
    for (int node = 0; node < 20; node++) {
        CHECKF(cc_choice_watch_node(&w), "quiet node %d: the pool", node);
        runs(&w, 8, 0.99);
    }
    cc_choice_watch_took(&w, MS, 10 * MS); // one run preempted for 9 ms among 160 of 1 ms
    runs(&w, 1, 0.99);
    CHECKF(cc_choice_watch_quiet(&w, why, sizeof(why)), "quiet, one preempted run: %s", why);

    runs(&w, 1, 0.2);
    runs(&w, 1, 0.99);
    runs(&w, 1, 0.2);
    CHECKF(cc_choice_watch_node(&w), "crowded runs not in a row: still the pool");
    runs(&w, 2, 0.2); // two in a row
    CHECKF(w.pooled, "the node in progress keeps its pool: its candidates are timed alike");
    CHECKF(!cc_choice_watch_node(&w), "the next node: the calling thread alone");
    runs(&w, 10, 0.99);
    CHECKF(!cc_choice_watch_node(&w), "and the rest, quiet again or not");
    runs(&w, 10, 0.99);
    CHECKF(!cc_choice_watch_quiet(&w, why, sizeof(why)) &&
               strstr(why, "20 of 187 timings on it alone, not the pool") &&
               strstr(why, "this thread was on a core "),
           "left the pool: not saved, says why: %s", why);
}

static void test_one_thread(void)
{
    char why[192] = "";
    struct cc_choice_watch w;
    cc_choice_watch_init(&w, CC_WATCH_AUTO, false);
    CHECK(!cc_choice_watch_node(&w));
    runs(&w, 100, 0.95);
    CHECKF(cc_choice_watch_quiet(&w, why, sizeof(why)), "on a core 95%%: quiet (%s)", why);
    runs(&w, 400, 0.6); // now 67%
    CHECKF(!cc_choice_watch_quiet(&w, why, sizeof(why)) &&
               strstr(why, "on a core 67% of the 500 ms timed") && !strstr(why, "pool"),
           "one thread on a core 67%%: not saved: %s", why);
}

static void test_forced(void)
{
    char why[192] = "";
    struct cc_choice_watch w;
    cc_choice_watch_init(&w, CC_WATCH_CROWDED, true);
    CHECK(!cc_choice_watch_node(&w));
    runs(&w, 4, 1.0);
    CHECKF(!cc_choice_watch_quiet(&w, why, sizeof(why)) &&
               strstr(why, "CAMCLASS_CPU_CROWDED=yes") && strstr(why, "4 of 4 timings on it alone"),
           "yes: %s", why);
    cc_choice_watch_init(&w, CC_WATCH_QUIET, true);
    runs(&w, 4, 0.1);
    CHECK(cc_choice_watch_node(&w) && cc_choice_watch_quiet(&w, why, sizeof(why)));

    enum cc_watch_mode m = CC_WATCH_QUIET;
    struct cc_error err = {0};
    CHECK(cc_choice_watch_mode_parse(NULL, &m, &err) && m == CC_WATCH_AUTO);
    CHECK(cc_choice_watch_mode_parse("auto", &m, &err) && m == CC_WATCH_AUTO);
    CHECK(cc_choice_watch_mode_parse("yes", &m, &err) && m == CC_WATCH_CROWDED);
    CHECK(cc_choice_watch_mode_parse("no", &m, &err) && m == CC_WATCH_QUIET);
    CHECKF(!cc_choice_watch_mode_parse("busy", &m, &err) && strstr(err.msg, "\"busy\"") &&
               strstr(err.msg, "auto") && strstr(err.msg, "yes") && !strchr(err.msg, '\n'),
           "a bad value: %s", err.msg);
}

int main(void)
{
    test_pool();
    test_one_thread();
    test_forced();
    return tu_exit_code();
}
