/* camclass — unit tests of the activation planner (engine/plan.c).
 *
 * The main check simulates a run over the planned arena: every node checks that each of its
 * inputs holds what its producer wrote (an owner tag per 4-byte word), before and after it
 * writes its output's tag. After the last node the graph input and output must still be
 * intact. This runs on many generated graphs (random widths, fan-out, adds of far-apart
 * tensors, reshapes), next to exact checks of aliasing, alignment and reuse on a chain.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "plan.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------- */
/* Graph generation                                                                          */
/* ---------------------------------------------------------------------------------------- */

enum { MAX_ACTS = 64 };

struct gen {
    struct cc_model *m;
    struct tu_rng rng;
    struct cc_error err;
    int acts[MAX_ACTS]; // 4-D activation tensors made so far, usable as inputs
    int n_acts;
    int n_made; // counter for unique names
    bool ok;
};

static int add_tensor(struct gen *g, const char *prefix, int ndim, const int64_t *shape,
                      bool constant)
{
    char name[64];
    snprintf(name, sizeof(name), "%s%d", prefix, g->n_made++);
    float *data = NULL;
    if (constant) {
        int64_t n = 1;
        for (int i = 0; i < ndim; i++)
            n *= shape[i];
        data = calloc((size_t)n, sizeof(float));
    }
    int t = cc_model_add_tensor(g->m, name, CC_DTYPE_F32, ndim, shape, data, &g->err);
    free(data);
    if (t < 0)
        g->ok = false;
    return t;
}

static int add_node(struct gen *g, enum cc_op op, int n_in, const int *in, int out,
                    const union cc_attrs *attrs)
{
    char name[64];
    snprintf(name, sizeof(name), "%s%d", cc_op_name(op), g->n_made++);
    if (g->ok &&
        cc_model_add_node(g->m, op, name, n_in, in, 1, &out, attrs, cc_act_none(), &g->err) < 0)
        g->ok = false;
    return out;
}

static const int64_t *shape_of(struct gen *g, int t)
{
    return g->m->tensors[t].shape;
}

static int pick_act(struct gen *g)
{
    return g->acts[tu_rng_range(&g->rng, 0, g->n_acts - 1)];
}

static void remember(struct gen *g, int t)
{
    if (g->n_acts < MAX_ACTS)
        g->acts[g->n_acts++] = t;
}

// conv2d 1x1 from x to a random channel count (same H, W).
static int gen_conv(struct gen *g, int x, int out_c)
{
    const int64_t *s = shape_of(g, x);
    int64_t ws[] = {out_c, s[1], 1, 1}, ys[] = {1, out_c, s[2], s[3]};
    int w = add_tensor(g, "w", 4, ws, true);
    int y = add_tensor(g, "t", 4, ys, false);
    union cc_attrs a = {.conv = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1}};
    int in[] = {x, w};
    return add_node(g, CC_OP_CONV2D, 2, in, y, &a);
}

/* A random valid graph: input [1,3,H,W] -> n_ops random nodes -> gap -> flatten -> linear. */
static struct cc_model *gen_graph(uint64_t seed, int n_ops)
{
    struct gen g = {.ok = true};
    tu_rng_seed(&g.rng, seed);
    g.m = cc_model_new("generated");
    int64_t in_s[] = {1, 3, tu_rng_range(&g.rng, 1, 6), tu_rng_range(&g.rng, 1, 6)};
    int input = add_tensor(&g, "input", 4, in_s, false);
    remember(&g, input);
    for (int i = 0; i < n_ops && g.ok; i++) {
        int x = pick_act(&g);
        int64_t s[4]; // a copy: adding tensors may move the model's tensor array
        memcpy(s, shape_of(&g, x), sizeof(s));
        int kind = tu_rng_range(&g.rng, 0, 9);
        if (kind <= 3) {
            remember(&g, gen_conv(&g, x, tu_rng_range(&g.rng, 1, 9)));
        } else if (kind <= 6) { // add x to a tensor of the same shape, or to itself
            int b = x;
            for (int k = 0; k < g.n_acts; k++)
                if (memcmp(shape_of(&g, g.acts[k]), s, 4 * sizeof(*s)) == 0 &&
                    tu_rng_range(&g.rng, 0, 1))
                    b = g.acts[k];
            int in[] = {x, b};
            int y = add_tensor(&g, "t", 4, s, false);
            remember(&g, add_node(&g, CC_OP_ADD, 2, in, y, NULL));
        } else if (kind <= 8) {
            int y = add_tensor(&g, "t", 4, s, false);
            remember(&g, add_node(&g, CC_OP_CLAMP, 1, &x, y, NULL));
        } else { // reshape [1,C,H,W] -> [1,C*H*W,1,1]; an alias of x
            int64_t rs[] = {1, s[1] * s[2] * s[3], 1, 1};
            int y = add_tensor(&g, "r", 4, rs, false);
            remember(&g, add_node(&g, CC_OP_RESHAPE, 1, &x, y, NULL));
        }
    }
    int last = g.acts[g.n_acts - 1];
    int64_t c = shape_of(&g, last)[1];
    int64_t gs[] = {1, c, 1, 1}, fs[] = {1, c}, ws[] = {5, c}, os[] = {1, 5};
    int gap = add_tensor(&g, "gap", 4, gs, false);
    add_node(&g, CC_OP_GLOBAL_AVG_POOL, 1, &last, gap, NULL);
    int flat = add_tensor(&g, "flat", 2, fs, false);
    add_node(&g, CC_OP_FLATTEN, 1, &gap, flat, NULL);
    int w = add_tensor(&g, "fcw", 2, ws, true);
    int out = add_tensor(&g, "logits", 2, os, false);
    int fc_in[] = {flat, w};
    add_node(&g, CC_OP_LINEAR, 2, fc_in, out, NULL);
    g.m->input.tensor = input;
    g.m->output.tensor = out;
    if (g.ok && !cc_model_finalize(g.m, &g.err))
        g.ok = false;
    CHECKF(g.ok, "generated graph %llu: %s", (unsigned long long)seed, g.err.msg);
    if (!g.ok) {
        cc_model_destroy(g.m);
        return NULL;
    }
    return g.m;
}

/* ---------------------------------------------------------------------------------------- */
/* The simulated run                                                                         */
/* ---------------------------------------------------------------------------------------- */

// Tag of the memory a tensor owns: the first tensor of its alias chain.
static int alias_root(const struct cc_model *m, int t)
{
    int p = m->tensors[t].producer;
    while (p >= 0 && (m->nodes[p].op == CC_OP_FLATTEN || m->nodes[p].op == CC_OP_RESHAPE) &&
           !m->tensors[m->nodes[p].inputs[0]].data) {
        t = m->nodes[p].inputs[0];
        p = m->tensors[t].producer;
    }
    return t;
}

static size_t bytes_of(const struct cc_model *m, int t)
{
    return (size_t)m->tensors[t].count * sizeof(float);
}

static void write_tags(int *tags, const struct cc_plan *p, const struct cc_model *m, int t)
{
    for (size_t i = 0; i < bytes_of(m, t) / 4; i++)
        tags[p->offset[t] / 4 + i] = alias_root(m, t);
}

static bool tags_hold(const int *tags, const struct cc_plan *p, const struct cc_model *m, int t)
{
    for (size_t i = 0; i < bytes_of(m, t) / 4; i++)
        if (tags[p->offset[t] / 4 + i] != alias_root(m, t))
            return false;
    return true;
}

/* Checks a plan of m exhaustively (layout, then the simulated run). */
static void check_plan(const struct cc_model *m, const struct cc_plan *p, size_t align,
                       const char *what)
{
    int *tags = malloc(p->arena_size + sizeof(int));
    for (size_t i = 0; i < p->arena_size / 4; i++)
        tags[i] = -1;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct cc_tensor *tensor = &m->tensors[t];
        if (tensor->data) {
            CHECKF(p->offset[t] == SIZE_MAX, "%s: constant %s has an offset", what, tensor->name);
            continue;
        }
        CHECKF(p->offset[t] % align == 0, "%s: %s at %zu is not %zu-aligned", what, tensor->name,
               p->offset[t], align);
        CHECKF(p->offset[t] + bytes_of(m, t) <= p->arena_size, "%s: %s ends past the arena", what,
               tensor->name);
        CHECKF(p->offset[t] == p->offset[alias_root(m, t)], "%s: alias %s has its own memory", what,
               tensor->name);
    }
    CHECKF(p->arena_size <= p->naive_size, "%s: arena %zu > naive %zu", what, p->arena_size,
           p->naive_size);

    write_tags(tags, p, m, m->input.tensor);
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        // A node reads while it writes: its inputs must hold before and after the write.
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1)
                write_tags(tags, p, m, node->outputs[0]);
            for (int i = 0; i < node->n_inputs; i++) {
                int t = node->inputs[i];
                if (!m->tensors[t].data)
                    CHECKF(tags_hold(tags, p, m, t), "%s: node %s reads %s, overwritten %s", what,
                           node->name, m->tensors[t].name, pass ? "by its output" : "earlier");
            }
        }
    }
    CHECKF(tags_hold(tags, p, m, m->input.tensor), "%s: the graph input was overwritten", what);
    CHECKF(tags_hold(tags, p, m, m->output.tensor), "%s: the graph output was overwritten", what);
    free(tags);
}

/* ---------------------------------------------------------------------------------------- */
/* Tests                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void test_generated(void)
{
    static const size_t aligns[] = {4, 16, 64, 256};
    int reused = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct cc_model *m = gen_graph(seed, 1 + (int)(seed % 30));
        if (!m)
            continue;
        size_t align = aligns[seed % 4];
        struct cc_plan p;
        struct cc_error err = {0};
        if (CHECKF(cc_plan_init(&p, m, align, &err), "plan: %s", err.msg)) {
            char what[64];
            snprintf(what, sizeof(what), "graph %llu", (unsigned long long)seed);
            check_plan(m, &p, align, what);
            reused += p.arena_size < p.naive_size;
            cc_plan_finish(&p);
        }
        cc_model_destroy(m);
    }
    CHECKF(reused > 100, "only %d of 300 generated graphs reuse any memory", reused);
}

/* The chain below with conv 1's output (read by conv 2) live until conv 7 (cc_plan_init_until,
 * the CPU backend's residual fusion): the outputs of convs 2-7 keep out of its memory, which
 * the ping-pong plan gives conv 3's output otherwise. */
static void check_until(const struct cc_model *m, const int convs[8])
{
    int *until = malloc((size_t)m->n_tensors * sizeof(int));
    for (int t = 0; t < m->n_tensors; t++)
        until[t] = -1;
    until[convs[1]] = m->tensors[convs[7]].producer;
    struct cc_plan p;
    struct cc_error err = {0};
    if (CHECKF(cc_plan_init_until(&p, m, 64, -1, until, &err), "plan: %s", err.msg)) {
        check_plan(m, &p, 64, "chain with until");
        size_t at = p.offset[convs[1]], bytes = bytes_of(m, convs[1]);
        for (int k = 2; k < 8; k++)
            CHECKF(p.offset[convs[k]] >= at + bytes || p.offset[convs[k]] + bytes <= at,
                   "conv %d's output over conv 1's, which is live until conv 7", k);
        cc_plan_finish(&p);
    }
    free(until);
}

/* input -> 8 x (conv 1x1, same size) -> gap -> flatten -> linear: a ping-pong pair suffices. */
static void test_chain(void)
{
    struct gen g = {.ok = true};
    tu_rng_seed(&g.rng, 7);
    g.m = cc_model_new("chain");
    int64_t in_s[] = {1, 3, 8, 8};
    int x = add_tensor(&g, "input", 4, in_s, false), input = x, convs[8];
    for (int i = 0; i < 8; i++)
        x = convs[i] = gen_conv(&g, x, 3);
    int64_t gs[] = {1, 3, 1, 1}, fs[] = {1, 3}, ws[] = {2, 3}, os[] = {1, 2};
    int gap = add_node(&g, CC_OP_GLOBAL_AVG_POOL, 1, &x, add_tensor(&g, "g", 4, gs, false), NULL);
    int flat = add_node(&g, CC_OP_FLATTEN, 1, &gap, add_tensor(&g, "f", 2, fs, false), NULL);
    int fc_in[] = {flat, add_tensor(&g, "fcw", 2, ws, true)};
    int out = add_node(&g, CC_OP_LINEAR, 2, fc_in, add_tensor(&g, "logits", 2, os, false), NULL);
    g.m->input.tensor = input;
    g.m->output.tensor = out;
    CHECKF(g.ok && cc_model_finalize(g.m, &g.err), "chain: %s", g.err.msg);
    if (!g.ok) {
        cc_model_destroy(g.m);
        return;
    }

    struct cc_plan p;
    struct cc_error err = {0};
    CHECKF(cc_plan_init(&p, g.m, 64, &err), "plan: %s", err.msg);
    check_plan(g.m, &p, 64, "chain");
    const size_t big = 3 * 8 * 8 * sizeof(float); // 768, already a multiple of 64
    // input (pinned) + two ping-pong buffers for the convs; the small tail fits beside them.
    CHECKF(p.arena_size <= 3 * big + 3 * 64, "chain arena %zu, expected <= %zu", p.arena_size,
           3 * big + 3 * 64);
    CHECKF(p.naive_size >= 9 * big, "chain naive size %zu", p.naive_size);
    CHECK(p.arena_size < p.naive_size / 2);
    CHECK(p.offset[flat] == p.offset[gap]); // flatten aliases its input
    CHECK(p.offset[out] != p.offset[flat]);
    // The input is never shared: no other tensor (aliases aside) starts inside it.
    for (int t = 0; t < g.m->n_tensors; t++)
        if (t != input && !g.m->tensors[t].data)
            CHECKF(p.offset[t] >= p.offset[input] + big ||
                       p.offset[t] + bytes_of(g.m, t) <= p.offset[input],
                   "tensor %s overlaps the input", g.m->tensors[t].name);
    cc_plan_finish(&p);
    cc_plan_finish(&p); // finish twice is harmless
    check_until(g.m, convs);
    cc_model_destroy(g.m);
}

static void test_bad_align(void)
{
    struct cc_model *m = gen_graph(1, 3);
    struct cc_plan p;
    struct cc_error err = {0};
    CHECK(!cc_plan_init(&p, m, 48, &err));
    CHECKF(strstr(err.msg, "power of two") != NULL, "message: %s", err.msg);
    cc_model_destroy(m);
}

int main(void)
{
    test_generated();
    test_chain();
    test_bad_align();
    return tu_exit_code();
}
