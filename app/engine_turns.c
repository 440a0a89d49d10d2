/* camclass — round-robin turns at a shared engine (see engine_turns.h). */
#include "engine_turns.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct lane {
    bool holding; // holds a frame (hold .. give)
    bool left;    // its thread has ended
    bool (*fresh)(void *ctx);
    void *ctx;
};

struct cc_engine_turns {
    pthread_mutex_t lock;
    pthread_cond_t cond; // broadcast when the turn moves
    // Under lock:
    struct lane *lanes; // (n)
    int n;
    int owner; // the lane whose turn it is (running, or about to), -1: none
    int last;  // the lane that had the last turn
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

/* With no owner: the next lane after the last one that holds a frame, or has a fresh one
 * waiting, gets the turn. Locked. */
static void pick(struct cc_engine_turns *t)
{
    if (t->owner >= 0)
        return;
    for (int k = 1; k <= t->n; k++) {
        int j = (t->last + k + t->n) % t->n;
        struct lane *l = &t->lanes[j];
        if (!l->left && (l->holding || (l->fresh && l->fresh(l->ctx)))) {
            t->owner = j;
            pthread_cond_broadcast(&t->cond);
            return;
        }
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
