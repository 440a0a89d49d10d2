/* camclass — the decodes of POST /predict, bounded (see decode_budget.h). */
#include "decode_budget.h"

#include <pthread.h>
#include <stdlib.h>

#include "clock.h"

struct cc_decode_budget {
    pthread_mutex_t lock; // guards used_slots and used_units
    pthread_cond_t freed; // a slot was given back (CLOCK_MONOTONIC: timed waits)
    int slots, used_slots;
    int64_t units, used_units;
};

struct cc_decode_budget *cc_decode_budget_create(int slots, int64_t units, struct cc_error *err)
{
    struct cc_decode_budget *b = calloc(1, sizeof(*b));
    if (!b) {
        cc_error_set(err, "out of memory for the decode budget");
        return NULL;
    }
    pthread_mutex_init(&b->lock, NULL);
    cc_cond_init_monotonic(&b->freed);
    b->slots = slots > 0 ? slots : 1;
    b->units = units;
    return b;
}

enum cc_decode_budget_answer cc_decode_budget_take(struct cc_decode_budget *b, int64_t cost,
                                                   int64_t wait_ns)
{
    int64_t end = cc_now_ns() + wait_ns;
    struct timespec ts = {.tv_sec = end / 1000000000, .tv_nsec = end % 1000000000};
    enum cc_decode_budget_answer a = CC_DECODE_BUDGET_TAKEN;
    pthread_mutex_lock(&b->lock);
    while (b->used_slots >= b->slots && cc_now_ns() < end)
        pthread_cond_timedwait(&b->freed, &b->lock, &ts);
    if (b->used_slots >= b->slots)
        a = CC_DECODE_BUDGET_NO_SLOT;
    else if (b->used_units + cost > b->units)
        a = CC_DECODE_BUDGET_NO_ROOM;
    else
        b->used_slots++, b->used_units += cost;
    pthread_mutex_unlock(&b->lock);
    return a;
}

void cc_decode_budget_give(struct cc_decode_budget *b, int64_t cost)
{
    pthread_mutex_lock(&b->lock);
    b->used_slots--, b->used_units -= cost;
    pthread_cond_signal(&b->freed);
    pthread_mutex_unlock(&b->lock);
}

void cc_decode_budget_destroy(struct cc_decode_budget *b)
{
    if (!b)
        return;
    pthread_cond_destroy(&b->freed);
    pthread_mutex_destroy(&b->lock);
    free(b);
}
