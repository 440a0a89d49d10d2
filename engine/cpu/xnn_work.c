/* camclass — the pieces of a CPU-backend node's work (xnn_build.h): XNNPACK's status names and
 * checks, a node's operators and C loops and their run, and the activations XNNPACK does not
 * fuse, run after the main operator. Used by the op table's builders (xnn_build.c,
 * xnn_build_zoo.c); calls neither. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_build.h"

const char *cc_xnn_status_name(enum xnn_status st)
{
    switch (st) {
    case xnn_status_success:
        return "xnn_status_success";
    case xnn_status_uninitialized:
        return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter:
        return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state:
        return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter:
        return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware:
        return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory:
        return "xnn_status_out_of_memory";
    }
    return "an unknown xnn_status";
}

bool cc_xnn_failed(const char *call, const struct cc_node *n, enum xnn_status st,
                   struct cc_error *err)
{
    return cc_error_set(err,
                        "cpu backend: %s for node \"%s\" (%s) failed: %s; "
                        "--backend ref runs the plain C ops instead",
                        call, n->name, cc_op_name(n->op), cc_xnn_status_name(st));
}

bool cc_xnn_no_memory(const struct cc_xnn_build *b)
{
    return cc_error_set(b->err, "cpu backend: out of memory building node \"%s\" (%s)",
                        b->node->name, cc_op_name(b->node->op));
}

bool cc_xnn_check(const struct cc_xnn_build *b, const char *call, enum xnn_status rc)
{
    return rc == xnn_status_success || cc_xnn_failed(call, b->node, rc, b->err);
}

/* ------------------------------------------------------------------------------------------
 * A node's work: operators and C loops
 */

static struct cc_xnn_part *new_part(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    struct cc_xnn_part *p = realloc(w->parts, (size_t)(w->n_parts + 1) * sizeof(*p));
    if (!p) {
        cc_xnn_no_memory(b);
        return NULL;
    }
    w->parts = p;
    p = &w->parts[w->n_parts++];
    memset(p, 0, sizeof(*p));
    return p;
}

xnn_operator_t *cc_xnn_new_op(const struct cc_xnn_build *b, struct cc_xnn_work *w)
{
    struct cc_xnn_part *p = new_part(b, w);
    return p ? &p->op : NULL;
}

bool cc_xnn_add_loop(const struct cc_xnn_build *b, struct cc_xnn_work *w,
                     pthreadpool_task_1d_tile_1d_t task, void *ctx, size_t range, size_t tile,
                     bool last)
{
    if (!ctx)
        return cc_xnn_no_memory(b);
    struct cc_xnn_part *p = new_part(b, w);
    if (!p) {
        free(ctx);
        return false;
    }
    bool yield = last && (b->flags & XNN_FLAG_YIELD_WORKERS);
    *p = (struct cc_xnn_part){
        .task = task,
        .ctx = ctx,
        .range = range,
        .tile = tile ? tile : 1,
        .flags = yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0,
    };
    return true;
}

bool cc_xnn_work_run(const struct cc_xnn_work *w, pthreadpool_t pool, const struct cc_node *n,
                     struct cc_error *err)
{
    for (int i = 0; i < w->n_parts; i++) {
        const struct cc_xnn_part *p = &w->parts[i];
        if (!p->op) {
            pthreadpool_parallelize_1d_tile_1d(pool, p->task, p->ctx, p->range, p->tile,
                                               p->flags | PTHREADPOOL_FLAG_DISABLE_DENORMALS);
            continue;
        }
        enum xnn_status rc = xnn_run_operator(p->op, pool);
        if (rc != xnn_status_success)
            return cc_xnn_failed("xnn_run_operator", n, rc, err);
    }
    return true;
}

void cc_xnn_work_finish(struct cc_xnn_work *w)
{
    for (int i = 0; i < w->n_parts; i++) {
        if (w->parts[i].op)
            xnn_delete_operator(w->parts[i].op);
        free(w->parts[i].ctx);
    }
    free(w->parts);
    *w = (struct cc_xnn_work){0};
}

/* ------------------------------------------------------------------------------------------
 * Activations other than clamp: XNNPACK's operators fuse only output_min/output_max, so
 * these run after the node's operator, in place on its output.
 */

/* How a kind runs: an XNNPACK unary operator, then (or alone) a C loop. */
struct act_row {
    enum xnn_status (*create)(size_t channels, size_t input_stride, size_t output_stride,
                              uint32_t flags, xnn_operator_t *op);
    enum xnn_status (*setup)(xnn_operator_t op, size_t batch, const float *x, float *y,
                             pthreadpool_t pool);
    const char *create_name, *setup_name;
    bool loop; // a C loop after the operator (silu: x times its sigmoid) or alone
};

// This XNNPACK (2022) has no hardsigmoid and no swish (SiLU) operator.
static const struct act_row act_rows[CC_ACT_KIND_COUNT] = {
    [CC_ACT_SIGMOID] = {xnn_create_sigmoid_nc_f32, xnn_setup_sigmoid_nc_f32,
                        "xnn_create_sigmoid_nc_f32", "xnn_setup_sigmoid_nc_f32", false},
    [CC_ACT_HARDSIGMOID] = {NULL, NULL, NULL, NULL, true},
    [CC_ACT_HARDSWISH] = {xnn_create_hardswish_nc_f32, xnn_setup_hardswish_nc_f32,
                          "xnn_create_hardswish_nc_f32", "xnn_setup_hardswish_nc_f32", false},
    [CC_ACT_SILU] = {xnn_create_sigmoid_nc_f32, xnn_setup_sigmoid_nc_f32,
                     "xnn_create_sigmoid_nc_f32", "xnn_setup_sigmoid_nc_f32", true},
};

enum {
    ACT_TILE = 1024,   // values per task of an activation loop: 4 KiB, as XNNPACK's own
    ACT_CHUNK = 65536, // values of silu's sigmoid-then-multiply at a time: 256 KiB, half of
                       // Zen's L2 (1.2M values of efficientnet_b0: 0.33 -> 0.23 ms at 1 thread)
};

/* An activation loop's arguments: y = x * s (silu, s = sigmoid(x)), or cc_act_apply. */
struct act_loop {
    const float *x, *s; // x: (n) values; s: (n) sigmoids of x for silu, else NULL; not owned
    float *y;           // (n); may be x; not owned
    struct cc_act act;
};

static void act_task(void *ctx, size_t start, size_t count)
{
    const struct act_loop *l = ctx;
    const float *x = l->x + start;
    float *y = l->y + start;
    if (l->s) {
        const float *s = l->s + start;
        for (size_t i = 0; i < count; i++)
            y[i] = x[i] * s[i];
    } else {
        for (size_t i = 0; i < count; i++)
            y[i] = cc_act_apply(l->act, x[i]);
    }
}

uint32_t cc_xnn_main_flags(const struct cc_xnn_build *b)
{
    return b->node->act.kind == CC_ACT_CLAMP ? b->flags : 0;
}

/* Appends the parts of act on values [0, n) of x into y: the row's operator (into s, when
 * the row has a loop after it, else into y), then its loop. */
static bool act_span(const struct cc_xnn_build *b, struct cc_xnn_work *w, const float *x, float *s,
                     float *y, size_t n, bool last)
{
    const struct act_row *row = &act_rows[b->node->act.kind];
    if (row->create) {
        xnn_operator_t *op = cc_xnn_new_op(b, w);
        uint32_t flags = last && !row->loop ? b->flags : 0;
        if (!op || !cc_xnn_check(b, row->create_name, row->create(n, n, n, flags, op)) ||
            !cc_xnn_check(b, row->setup_name, row->setup(*op, 1, x, row->loop ? s : y, b->pool)))
            return false;
    }
    if (!row->loop)
        return true;
    struct act_loop *l = malloc(sizeof(*l));
    if (l)
        *l = (struct act_loop){.x = x, .s = row->create ? s : NULL, .y = y, .act = b->node->act};
    return cc_xnn_add_loop(b, w, act_task, l, n, ACT_TILE, last);
}

bool cc_xnn_act(const struct cc_xnn_build *b, struct cc_xnn_work *w, const float *x, float *y,
                size_t n)
{
    struct cc_act act = b->node->act;
    if (act.kind == CC_ACT_CLAMP)
        return true;
    if ((unsigned)act.kind >= CC_ACT_KIND_COUNT)
        return cc_error_set(b->err, "cpu backend: node \"%s\" (%s): unknown activation kind %d",
                            b->node->name, cc_op_name(b->node->op), (int)act.kind);
    const struct act_row *row = &act_rows[act.kind];
    if (!row->create || !row->loop)
        return act_span(b, w, x, NULL, y, n, true);
    // An operator, then a loop over what it wrote (silu): in chunks, so that the loop finds
    // the chunk still in cache; in place the operator writes to the scratch.
    if (x == y && !b->scratch)
        return cc_error_set(b->err,
                            "cpu backend: node \"%s\" (%s): no scratch memory for its %s "
                            "(a bug in cc_xnn_scratch_floats)",
                            b->node->name, cc_op_name(b->node->op), cc_act_kind_name(act.kind));
    for (size_t i = 0; i < n; i += ACT_CHUNK) {
        size_t m = n - i < ACT_CHUNK ? n - i : ACT_CHUNK;
        float *s = x == y ? b->scratch : y + i;
        if (!act_span(b, w, x + i, s, y + i, m, i + m == n))
            return false;
    }
    return true;
}

size_t cc_xnn_scratch_floats(const struct cc_model *m, const struct cc_node *n)
{
    // silu in place on the output of an operator: its sigmoids go to the scratch, a chunk at
    // a time.
    if (n->act.kind != CC_ACT_SILU || n->op == CC_OP_CLAMP)
        return 0;
    size_t count = (size_t)m->tensors[n->outputs[0]].count;
    return count < ACT_CHUNK ? count : ACT_CHUNK;
}
