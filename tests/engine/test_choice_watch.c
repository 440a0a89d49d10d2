/* camclass — the watch over the CPU backend's load-time timings (engine/cpu/choice_watch.h), on
 * given times (no clock, no load):
 * - quiet timings (the threads waited for a core a few % of their time) keep the pool and are
 *   fit to be saved, a preempted run among many too;
 * - one window of pooled runs whose threads waited over CC_WATCH_CROWDED_WAIT of it among quiet
 *   ones changes nothing; two in a row: the pool is left from the next node on (not within the
 *   node in progress) and for the rest, and nothing is saved, the reason naming the wait and
 *   how many timings went on the calling thread alone;
 * - one thread (no pool): waits over CC_WATCH_QUIET_WAIT of the timed time are not saved, under
 *   it are;
 * - CAMCLASS_CPU_CROWDED=yes: no pool from the start, never saved; no: the pool, always saved;
 *   a bad value is one line naming it and the choices. */
#include <string.h>

#include "choice_watch.h"
#include "testutil.h"

enum { MS = 1000000 };

/* n timed runs of 1 ms each on the node in progress (on 2 threads where it uses the pool), its
 * threads waiting for a core waited of their time. */
static void runs(struct cc_choice_watch *w, int n, double waited)
{
    int threads = w->pooled ? 2 : 1;
    for (int i = 0; i < n; i++)
        cc_choice_watch_took(w, MS, (int64_t)(waited * MS * threads), threads);
}

/* One window's worth of 1 ms runs. */
static void window(struct cc_choice_watch *w, double waited)
{
    runs(w, CC_WATCH_WINDOW_NS / MS, waited);
}

static void test_pool(void)
{
    char why[192] = "";
    struct cc_choice_watch w;
    cc_choice_watch_init(&w, CC_WATCH_AUTO, 2);
    for (int node = 0; node < 20; node++) {
        CHECKF(cc_choice_watch_node(&w), "quiet node %d: the pool", node);
        window(&w, 0.01);
    }
    cc_choice_watch_took(&w, 10 * MS, 9 * MS, 2); // one thread preempted for 9 ms of a 10 ms run
    runs(&w, 10, 0.01);
    CHECKF(cc_choice_watch_node(&w), "one preempted run: still the pool");
    CHECKF(cc_choice_watch_quiet(&w, why, sizeof(why)), "quiet, one preempted run: %s", why);

    window(&w, 0.8);
    window(&w, 0.01);
    window(&w, 0.8);
    CHECKF(cc_choice_watch_node(&w), "crowded windows not in a row: still the pool");
    window(&w, 0.8); // two in a row
    CHECKF(w.pooled, "the node in progress keeps its pool: its candidates are timed alike");
    CHECKF(!cc_choice_watch_node(&w), "the next node: the calling thread alone");
    runs(&w, 10, 0.01);
    CHECKF(!cc_choice_watch_node(&w), "and the rest, quiet again or not");
    runs(&w, 10, 0.01);
    CHECKF(!cc_choice_watch_quiet(&w, why, sizeof(why)) &&
               strstr(why, "; 20 of 511 timings on one thread, not the pool") &&
               strstr(why, "its threads waited for a core "),
           "left the pool: not saved, says why: %s", why);
}

static void test_one_thread(void)
{
    char why[192] = "";
    struct cc_choice_watch w;
    cc_choice_watch_init(&w, CC_WATCH_AUTO, 1);
    CHECK(!cc_choice_watch_node(&w));
    runs(&w, 100, 0.25);
    CHECKF(cc_choice_watch_quiet(&w, why, sizeof(why)), "waited 25%%: quiet (%s)", why);
    runs(&w, 400, 0.5); // now 45 %
    CHECKF(!cc_choice_watch_quiet(&w, why, sizeof(why)) &&
               strstr(why, "waited for a core 45% of their time in the 500 ms timed") &&
               !strstr(why, "pool"),
           "one thread waiting 45%%: not saved: %s", why);
}

static void test_forced(void)
{
    char why[192] = "";
    struct cc_choice_watch w;
    cc_choice_watch_init(&w, CC_WATCH_CROWDED, 2);
    CHECK(!cc_choice_watch_node(&w));
    runs(&w, 4, 0.0);
    CHECKF(!cc_choice_watch_quiet(&w, why, sizeof(why)) &&
               strstr(why, "CAMCLASS_CPU_CROWDED=yes") &&
               strstr(why, "4 of 4 timings on one thread"),
           "yes: %s", why);
    cc_choice_watch_init(&w, CC_WATCH_QUIET, 2);
    runs(&w, 4, 0.9);
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
