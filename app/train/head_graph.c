/* camclass-train — the base model's graph, cut and re-headed (see head_graph.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cam.h"
#include "head_graph.h"

bool cc_head_graph_find(const struct cc_model *base, struct cc_head_graph *g, struct cc_error *err)
{
    struct cc_classifier c;
    struct cc_error why = {0};
    *g = (struct cc_head_graph){.classifier = -1, .softmax = -1, .features = -1};
    if (!cc_classifier_find(base, &c, &why))
        return cc_error_set(err,
                            "model \"%s\" is not a classifier base: %s; give a bundle whose "
                            "graph ends in global pooling and a linear classifier",
                            base->name, why.msg);
    *g = (struct cc_head_graph){c.linear, c.softmax, c.features, c.n_features};
    return true;
}

/* ------------------------------------------------------------------------------------------
 * Copying through the builder
 */

/* A copy of base into m, tensor by tensor as the kept nodes need them. */
struct copy {
    const struct cc_model *base;
    struct cc_model *m;
    int *map;                    // (base->n_tensors) index in m, or -1 before it is copied
    const struct cc_head_graph *g;
    const float *w, *b;          // replace: the new head; NULL for the backbone
    int n_classes;
    struct cc_error *err;
};

/* Whether base tensor t holds the old logits (the classifier's output or the softmax's). */
static bool is_logits(const struct copy *c, int t)
{
    const struct cc_model *base = c->base;
    return c->w && (t == base->nodes[c->g->classifier].outputs[0] ||
                    (c->g->softmax >= 0 && t == base->nodes[c->g->softmax].outputs[0]));
}

static int add_plain(struct copy *c, int t)
{
    const struct cc_tensor *s = &c->base->tensors[t];
    int64_t shape[CC_MAX_DIMS];
    memcpy(shape, s->shape, sizeof(shape));
    const struct cc_node *cls = &c->base->nodes[c->g->classifier];
    const float *data = s->data;
    bool head_weight = c->w && t == cls->inputs[1], head_bias = c->w && cls->n_inputs > 2 &&
                                                                 t == cls->inputs[2];
    if (head_weight || is_logits(c, t))
        shape[head_weight ? 0 : 1] = c->n_classes;
    if (head_weight)
        shape[1] = c->g->n_features, data = c->w;
    if (head_bias)
        shape[0] = c->n_classes, data = c->b;
    if (s->dtype == CC_DTYPE_I8 && !head_weight)
        return cc_model_add_tensor_i8(c->m, s->name, s->ndim, shape, s->q, s->scales, c->err);
    int i = cc_model_add_tensor(c->m, s->name, CC_DTYPE_F32, s->ndim, shape, data, c->err);
    if (i >= 0 && s->quantized && !is_logits(c, t) &&
        !cc_model_set_act_quant(c->m, i, s->act_quant, c->err))
        return -1;
    return i;
}

static int copy_tensor(struct copy *c, int t)
{
    if (c->map[t] < 0)
        c->map[t] = add_plain(c, t);
    return c->map[t];
}

static bool copy_node(struct copy *c, int n)
{
    const struct cc_node *s = &c->base->nodes[n];
    int in[CC_MAX_NODE_INPUTS + 1], out[CC_MAX_NODE_OUTPUTS];
    int n_in = s->n_inputs;
    for (int i = 0; i < s->n_inputs; i++)
        if ((in[i] = copy_tensor(c, s->inputs[i])) < 0)
            return false;
    if (c->w && n == c->g->classifier && n_in == 2) { // the new head always has a bias
        char name[300];
        snprintf(name, sizeof(name), "%s.trained_bias", s->name);
        int64_t shape[1] = {c->n_classes};
        if ((in[n_in++] = cc_model_add_tensor(c->m, name, CC_DTYPE_F32, 1, shape, c->b,
                                              c->err)) < 0)
            return false;
    }
    for (int i = 0; i < s->n_outputs; i++)
        if ((out[i] = copy_tensor(c, s->outputs[i])) < 0)
            return false;
    return cc_model_add_node(c->m, s->op, s->name, n_in, in, s->n_outputs, out, &s->attrs,
                             s->act, c->err) >= 0;
}

/* Copies nodes [0, n_nodes) of base, the input spec, and output tensor out into a new model
 * named name (not finalized). NULL with err set. */
static struct cc_model *copy_graph(struct copy *c, const char *name, int n_nodes, int out)
{
    const struct cc_model *base = c->base;
    c->m = cc_model_new(name);
    c->map = malloc((size_t)base->n_tensors * sizeof(int));
    if (!c->m || !c->map) {
        cc_error_set(c->err, "out of memory copying model \"%s\"", base->name);
        goto error;
    }
    for (int t = 0; t < base->n_tensors; t++)
        c->map[t] = -1;
    c->m->input = base->input;
    if ((c->m->input.tensor = copy_tensor(c, base->input.tensor)) < 0)
        goto error;
    for (int n = 0; n < n_nodes; n++)
        if (!copy_node(c, n))
            goto error;
    c->m->output = base->output;
    if ((c->m->output.tensor = copy_tensor(c, out)) < 0)
        goto error;
    free(c->map);
    return c->m;

error:
    free(c->map);
    cc_model_destroy(c->m);
    return NULL;
}

struct cc_model *cc_head_graph_backbone(const struct cc_model *base, const struct cc_head_graph *g,
                                        struct cc_error *err)
{
    struct copy c = {.base = base, .g = g, .err = err};
    char name[300];
    snprintf(name, sizeof(name), "%s (backbone)", base->name);
    struct cc_model *m = copy_graph(&c, name, g->classifier, g->features);
    if (!m)
        return NULL;
    m->output.kind = CC_OUTPUT_LOGITS;
    m->output.classes = 0; // from the feature tensor's shape, without the class limit
    if (!cc_model_finalize(m, err)) {
        cc_model_destroy(m);
        return NULL;
    }
    return m;
}

struct cc_model *cc_head_graph_replace(const struct cc_model *base, const struct cc_head_graph *g,
                                       const float *w, const float *b, int n_classes,
                                       const char *const *labels, const char *name,
                                       struct cc_error *err)
{
    struct copy c = {.base = base, .g = g, .w = w, .b = b, .n_classes = n_classes, .err = err};
    struct cc_model *m = copy_graph(&c, name, base->n_nodes, base->output.tensor);
    if (!m)
        return NULL;
    m->output.classes = n_classes;
    for (int k = 0; k < n_classes; k++)
        if (!cc_model_add_label(m, labels[k], err))
            goto error;
    if (!cc_model_finalize(m, err))
        goto error;
    return m;

error:
    cc_model_destroy(m);
    return NULL;
}
