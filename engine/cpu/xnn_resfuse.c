/* camclass — the residual add fused into our own k x k convolution's store (xnn_resfuse.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_word.h"
#include "xnn_resfuse.h"
#include "xnn_steps.h"

/* The node before `before` whose output is tensor t, or -1 (the graph input, a constant). */
static int producer(const struct cc_model *m, int t, int before)
{
    for (int k = before - 1; k >= 0; k--)
        if (m->nodes[k].outputs[0] == t)
            return k;
    return -1;
}

/* How many node inputs read tensor t. */
static int readers(const struct cc_model *m, int t)
{
    int count = 0;
    for (int k = 0; k < m->n_nodes; k++)
        for (int i = 0; i < m->nodes[k].n_inputs; i++)
            count += m->nodes[k].inputs[i] == t;
    return count;
}

/* The convolution (one we may run, cc_conv3x3_applies, without an activation) whose output is
 * add node a's input i, read by a alone and not the graph's output; or -1. */
static int fusable_conv(const struct cc_model *m, int a, int i)
{
    const struct cc_node *node = &m->nodes[a];
    if (node->op != CC_OP_ADD || node->n_inputs != 2 || node->act.kind != CC_ACT_CLAMP)
        return -1;
    int t = node->inputs[i], c = producer(m, t, a);
    if (c < 0 || !cc_conv3x3_applies(m, &m->nodes[c]) || !cc_act_is_none(m->nodes[c].act) ||
        readers(m, t) != 1 || t == m->output.tensor)
        return -1;
    return c;
}

bool cc_xnn_resfuse_plan(struct xnn_state *s, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    static const char *const words[] = {"on", "off"};
    static const struct cc_env_word spec = {
        "CAMCLASS_CPU_CONV3X3_RESIDUAL", "a switch",
        "on (the default: residual adds fused into our own convolutions) or off", words, 2};
    int off;
    if (!cc_env_word_parse(&spec, getenv("CAMCLASS_CPU_CONV3X3_RESIDUAL"), &off, err))
        return false;
    s->resfuse = !off && s->direct_mode != CC_CONV3X3_MODE_OFF;
    size_t n = (size_t)(m->n_tensors > 0 ? m->n_tensors : 1);
    int *until = s->resfuse ? malloc(n * sizeof(int)) : NULL;
    if (s->resfuse && !until)
        return cc_error_set(err, "cpu backend: out of memory for the activation plan");
    for (int t = 0; until && t < m->n_tensors; t++)
        until[t] = -1;
    for (int a = 0; until && a < m->n_nodes; a++)
        for (int i = 0; i < 2; i++) {
            int c = fusable_conv(m, a, i);
            if (c >= 0) // the convolution's input: read at a when fused
                until[m->nodes[c].inputs[0]] = a;
        }
    bool ok = cc_plan_init_until(&s->plan, m, ARENA_ALIGN, s->tap, until, err);
    free(until);
    return ok;
}

/* Whether a node after c and before a writes memory that x (floats) lies in. */
static bool written_between(const struct xnn_state *s, int c, int a, const float *x, size_t xn)
{
    const struct cc_model *m = s->model;
    for (int k = c + 1; k < a; k++) {
        int t = m->nodes[k].outputs[0];
        const char *d = s->places[t].data, *xb = (const char *)x;
        size_t bytes = m->tensors[t].count * cc_xnn_elem_size(s->places[t].type);
        if (d && d < xb + xn * sizeof(float) && xb < d + bytes)
            return true;
    }
    return false;
}

/* The profile's name for add node a run by convolution c's step (s->shown[a]), made where
 * memory allows (else the add's own name stays). */
static void show(struct xnn_state *s, int a, int c)
{
    const struct cc_model *m = s->model;
    struct cc_act act = m->nodes[a].act;
    const char *what = cc_act_is_none(act)                             ? ""
                       : act.min == 0 && isinf(act.max) && act.max > 0 ? ", relu"
                       : act.min == 0 && act.max == 6                  ? ", relu6"
                                                                       : ", clamp";
    if (!s->shown && !(s->shown = calloc((size_t)m->n_nodes, sizeof(*s->shown))))
        return;
    const char *name = m->nodes[c].name;
    size_t size = strlen(name) + sizeof(" (+ add, relu6)");
    if ((s->shown[a].label = malloc(size)))
        snprintf(s->shown[a].label, size, "%s (+ add%s)", name, what);
    s->shown[a].node = c;
}

struct cc_layer_timing cc_xnn_resfuse_timing(const struct xnn_state *s, int n, double ms)
{
    if (s->shown && s->shown[n].label)
        return (struct cc_layer_timing){s->shown[n].node, ms, s->shown[n].label};
    return (struct cc_layer_timing){n, ms, NULL};
}

/* Fuses add node a with convolution c, the producer of its input i, where that can be. */
static bool try_fuse(struct xnn_state *s, int a, int i)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[a];
    int t = node->inputs[i], r = node->inputs[1 - i], y = node->outputs[0];
    int c = fusable_conv(m, a, i);
    if (c < 0 || s->steps[c].kind != STEP_DIRECT || t == s->tap || s->places[t].want_other)
        return false;
    struct cc_conv3x3 *p = s->steps[c].direct;
    const struct cc_tensor *tt = &m->tensors[t], *rt = &m->tensors[r], *yt = &m->tensors[y];
    const float *res = cc_xnn_state_values(s, r, STORE_F32);
    int64_t count = (int64_t)p->d.ho * p->d.wo * p->d.n;
    if (tt->count != count || memcmp(tt->shape, rt->shape, sizeof(tt->shape)) ||
        memcmp(tt->shape, yt->shape, sizeof(tt->shape)) || !res || s->places[y].type != STORE_F32 ||
        written_between(s, c, a, p->x, (size_t)p->d.h * p->d.w * p->d.c) ||
        !cc_conv3x3_fuse_residual(p, res, s->places[y].data, node->act))
        return false;
    p->yield = cc_xnn_steps_runs_last(s, a);
    cc_xnn_work_finish(&s->steps[a].work);
    s->steps[a] = s->steps[c];
    s->steps[c] = (struct step){.kind = STEP_SKIP};
    s->n_residual++;
    show(s, a, c);
    return true;
}

void cc_xnn_resfuse(struct xnn_state *s)
{
    const struct cc_model *m = s->model;
    for (int a = 0; s->resfuse && a < m->n_nodes; a++)
        if (s->steps[a].kind == STEP_XNN && !s->steps[a].int8 && !try_fuse(s, a, 0))
            try_fuse(s, a, 1);
}
