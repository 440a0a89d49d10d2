/* camclass — how many images POST /predict decodes at once, and how much memory those decodes
 * may hold together (a 705 KB progressive JPEG of 6324x6324 took 344 MB to decode,
 * and each of the 32 connections could decode one at once).
 *
 *   struct cc_decode_budget *b = cc_decode_budget_create(slots, units, &err);  // at start
 *   any thread, per request: switch (cc_decode_budget_take(b, cost, wait_ns)) ...
 *                            decode and preprocess; free the pixels;
 *                            cc_decode_budget_give(b, cost);
 *   cc_decode_budget_destroy(b);                                     // no request left
 *
 * A request's cost is in units of what it will hold while it decodes (predict.c estimates it
 * from the image's header: its pixels, three times for a progressive JPEG). Slots bound the
 * CPU (waited for: a decode of an ordinary image takes milliseconds); units bound the memory
 * (not waited for: a request whose cost does not fit now is refused at once, to be retried).
 *
 * Threads: any; the budget locks itself.
 */
#ifndef CC_DECODE_BUDGET_H
#define CC_DECODE_BUDGET_H

#include <stdint.h>

#include "error.h"

struct cc_decode_budget;

enum cc_decode_budget_answer {
    CC_DECODE_BUDGET_TAKEN,   // a slot and the units are the caller's until it gives them back
    CC_DECODE_BUDGET_NO_SLOT, // every slot stayed busy for wait_ns
    CC_DECODE_BUDGET_NO_ROOM, // the units in use leave no room for cost now
};

/* slots decodes at once (>= 1), units in all (>= the largest cost a request may take). NULL
 * with err when out of memory. */
struct cc_decode_budget *cc_decode_budget_create(int slots, int64_t units, struct cc_error *err);

/* Takes a slot (waiting up to wait_ns for one) and cost units (0..units; at once or not at
 * all). */
enum cc_decode_budget_answer cc_decode_budget_take(struct cc_decode_budget *b, int64_t cost,
                                                   int64_t wait_ns);

/* Gives back what cc_decode_budget_take(b, cost, …) took; wakes a waiter. */
void cc_decode_budget_give(struct cc_decode_budget *b, int64_t cost);

/* Accepts NULL; no request may hold a part of it. */
void cc_decode_budget_destroy(struct cc_decode_budget *b);

#endif
