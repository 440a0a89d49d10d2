/* camclass — unit test of the shared engine's turns (app/engine_turns.c), with threads and no
 * timing: three lanes, each a thread that holds, takes, records its turn and gives 300 times,
 * and says (fresh) that a frame waits while it has turns left. However the threads are
 * scheduled, the turns go round: after every turn no lane has had more than one turn more than
 * another, the turns come in rounds of the three lanes, and a lane that leaves early is never
 * waited for (the others finish). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine_turns.h"
#include "testutil.h"

enum { LANES = 3, TURNS = 300, SHORT = 40 };

struct lane_run {
    struct cc_engine_turns *turns;
    int lane, turns_wanted;
    atomic_int left_to_do; // read by fresh() on other threads
    int *log, *n_log;      // the shared record of turns, written inside a turn only
};

static bool fresh(void *ctx)
{
    struct lane_run *l = ctx;
    return atomic_load(&l->left_to_do) > 0;
}

static void *lane_main(void *arg)
{
    struct lane_run *l = arg;
    for (int i = 0; i < l->turns_wanted; i++) {
        cc_engine_turns_hold(l->turns, l->lane);
        cc_engine_turns_take(l->turns, l->lane);
        l->log[(*l->n_log)++] = l->lane; // only the lane whose turn it is writes
        atomic_fetch_sub(&l->left_to_do, 1);
        cc_engine_turns_give(l->turns, l->lane);
    }
    cc_engine_turns_leave(l->turns, l->lane);
    return NULL;
}

/* Runs LANES lanes, lane i wanting want[i] turns; the order of turns into log. */
static int run_lanes(const int want[LANES], int *log)
{
    struct cc_error err = {0};
    struct cc_engine_turns *t = cc_engine_turns_create(&err);
    CHECKF(t != NULL, "%s", err.msg);
    struct lane_run l[LANES];
    pthread_t th[LANES];
    int n_log = 0;
    for (int i = 0; i < LANES; i++) {
        l[i] = (struct lane_run){.turns = t, .turns_wanted = want[i], .log = log, .n_log = &n_log};
        atomic_init(&l[i].left_to_do, want[i]);
        l[i].lane = cc_engine_turns_join(t, fresh, &l[i]);
        CHECK(l[i].lane == i);
    }
    for (int i = 0; i < LANES; i++)
        pthread_create(&th[i], NULL, lane_main, &l[i]);
    for (int i = 0; i < LANES; i++)
        pthread_join(th[i], NULL);
    cc_engine_turns_destroy(t);
    return n_log;
}

static void test_rounds(void)
{
    static int log[LANES * TURNS];
    int want[LANES] = {TURNS, TURNS, TURNS};
    int n = run_lanes(want, log);
    CHECK(n == LANES * TURNS);
    int count[LANES] = {0}, worst = 0;
    for (int k = 0; k < n; k++) {
        count[log[k]]++;
        int lo = count[0], hi = count[0];
        for (int i = 1; i < LANES; i++)
            lo = count[i] < lo ? count[i] : lo, hi = count[i] > hi ? count[i] : hi;
        worst = hi - lo > worst ? hi - lo : worst;
    }
    CHECKF(worst <= 1, "a lane got %d turns more than another at some point", worst);
    bool rounds = true; // each run of LANES turns holds every lane once
    for (int k = 0; k + LANES <= n; k += LANES)
        rounds = rounds && log[k] != log[k + 1] && log[k] != log[k + 2] && log[k + 1] != log[k + 2];
    CHECK(rounds);
}

/* Lane 1 leaves after SHORT turns: the others do all of theirs (the test would hang otherwise),
 * in rounds of two after it left. */
static void test_leave(void)
{
    static int log[LANES * TURNS];
    int want[LANES] = {TURNS, SHORT, TURNS};
    int n = run_lanes(want, log);
    CHECK(n == 2 * TURNS + SHORT);
    int count[LANES] = {0}, worst = 0;
    for (int k = 0; k < n; k++) {
        count[log[k]]++;
        int d = count[0] - count[2];
        worst = (d < 0 ? -d : d) > worst ? (d < 0 ? -d : d) : worst;
    }
    CHECKF(worst <= 1, "lanes 0 and 2 %d turns apart at some point", worst);
    CHECK(count[1] == SHORT);
}

int main(void)
{
    test_rounds();
    test_leave();
    return tu_exit_code();
}
