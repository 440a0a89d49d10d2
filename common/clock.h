/* camclass — the monotonic clock every timing in the engine and the app reads.
 *
 * CLOCK_MONOTONIC: not changed by the wall clock (NTP steps, the user), so intervals and
 * deadlines stay right. Pure functions; nothing keeps state.
 */
#ifndef CC_CLOCK_H
#define CC_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline int64_t cc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline double cc_now_ms(void)
{
    return (double)cc_now_ns() * 1e-6;
}

/* A condition variable whose timed waits read this clock (a deadline from cc_now_ns), so that a
 * change of the wall clock cannot stretch or cut a timeout. */
static inline void cc_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

#endif
