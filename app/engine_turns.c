/* camclass — round-robin turns at a shared engine (see engine_turns.h). */
#include "engine_turns.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

enum { LAG = 32 }; // turns a lane may be behind the last turn's and still catch up

struct lane {
    bool holding; // holds a frame (hold .. give)
    bool left;    // its thread has ended
    uint64_t tag; // turns had (fair queuing's virtual time of the lane): the least goes first
    bool (*fresh)(void *ctx);
    void *ctx;
};

struct cc_engine_turns {
    pthread_mutex_t lock;
    pthread_cond_t cond; // broadcast when the turn moves
    // Under lock:
    struct lane *lanes; // (n)
    int n;
    int owner;     // the lane whose turn it is (running, or about to), -1: none
    int last;      // the lane that had the last turn
    uint64_t when; // the tag of the last turn: a lane coming back from idle starts near it
};

struct cc_engine_turns *cc_engine_turns_create(struct cc_error *err)
{
    struct cc_engine_turns *t = calloc(1, sizeof(*t));
    if (!t) {
        cc_error_set(err, "out of memory for the engine's turns");
        return NULL;
    }
    t->owner = -1;
    t->last = -1;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    return t;
}

void cc_engine_turns_destroy(struct cc_engine_turns *t)
{
    if (!t)
        return;
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t->lanes);
    free(t);
}

int cc_engine_turns_join(struct cc_engine_turns *t, bool (*fresh)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&t->lock);
    struct lane *l = realloc(t->lanes, (size_t)(t->n + 1) * sizeof(*l));
    int lane = -1;
    if (l) {
        t->lanes = l;
        l[t->n] = (struct lane){.fresh = fresh, .ctx = ctx};
        lane = t->n++;
    }
    pthread_mutex_unlock(&t->lock);
    return lane;
}

/* With no owner: of the lanes that hold a frame or have a fresh one waiting, the one with the
 * fewest turns (tag) gets the turn; ties go round from the lane after the last. A lane that
 * missed its place (its frame came late) so goes first next time, and the counts stay equal.
 * Locked. */
static void pick(struct cc_engine_turns *t)
{
    if (t->owner >= 0)
        return;
    int best = -1;
    for (int k = 1; k <= t->n; k++) {
        int j = (t->last + k + t->n) % t->n;
        struct lane *l = &t->lanes[j];
        if (l->left || !(l->holding || (l->fresh && l->fresh(l->ctx))))
            continue;
        // A lane idle for long (a camera reconnecting) is at most LAG turns behind: it does not
        // take the engine for all the turns it missed, only for a few (a thread the system
        // kept waiting under load catches up).
        if (t->when > LAG && l->tag < t->when - LAG)
            l->tag = t->when - LAG;
        if (best < 0 || l->tag < t->lanes[best].tag)
            best = j;
    }
    if (best >= 0) {
        t->owner = best;
        pthread_cond_broadcast(&t->cond);
    }
}

void cc_engine_turns_hold(struct cc_engine_turns *t, int lane)
{
    pthread_mutex_lock(&t->lock);
    t->lanes[lane].holding = true;
    pick(t);
    pthread_mutex_unlock(&t->lock);
}

void cc_engine_turns_take(struct cc_engine_turns *t, int lane)
{
    pthread_mutex_lock(&t->lock);
    while (t->owner != lane)
        pthread_cond_wait(&t->cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

void cc_engine_turns_give(struct cc_engine_turns *t, int lane)
{
    pthread_mutex_lock(&t->lock);
    t->lanes[lane].holding = false;
    if (t->owner == lane) {
        t->owner = -1;
        t->last = lane;
        if (t->lanes[lane].tag > t->when)
            t->when = t->lanes[lane].tag;
        t->lanes[lane].tag++;
    }
    pick(t);
    pthread_mutex_unlock(&t->lock);
}

void cc_engine_turns_leave(struct cc_engine_turns *t, int lane)
{
    pthread_mutex_lock(&t->lock);
    t->lanes[lane] = (struct lane){.left = true};
    if (t->owner == lane)
        t->owner = -1;
    pick(t);
    pthread_mutex_unlock(&t->lock);
}
