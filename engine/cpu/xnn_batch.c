/* camclass — the CPU backend's batch model (see xnn_batch.h). */
#include <stdlib.h>
#include <string.h>

#include "xnn_batch.h"
#include "xnn_state.h"

/* Whether tensor t of m is an activation: the graph input or a node's output. */
static bool is_activation(const struct cc_model *m, int t)
{
    return t == m->input.tensor || m->tensors[t].producer >= 0;
}

/* False with err when a node of m reads a constant where it reads activations. */
static bool reads_only_activations(const struct cc_model *m, struct cc_error *err)
{
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        for (int i = 0; i < node->n_inputs; i++)
            if (cc_xnn_state_reads_activation(node, i) && !is_activation(m, node->inputs[i]))
                return cc_error_set(err,
                                    "cpu backend: node \"%s\" (%s) reads constant \"%s\" as an "
                                    "activation, which has no batch dimension; run the frames "
                                    "one at a time",
                                    node->name, cc_op_name(node->op),
                                    m->tensors[node->inputs[i]].name);
    }
    return true;
}

bool cc_xnn_batch_possible(const struct cc_model *m, struct cc_error *err)
{
    if (!reads_only_activations(m, err))
        return false;
    for (int i = 0; i < m->n_tensors; i++)
        if (is_activation(m, i) && (m->tensors[i].ndim < 2 || m->tensors[i].shape[0] != 1))
            return cc_error_set(err,
                                "cpu backend: activation \"%s\" has no batch dimension of 1; "
                                "run the frames one at a time",
                                m->tensors[i].name);
    return true;
}

bool cc_xnn_batch_model(const struct cc_model *m, int n, struct cc_model *out, struct cc_error *err)
{
    *out = (struct cc_model){0};
    if (n < 1)
        return cc_error_set(err, "cpu backend: a batch of %d images; give 1 or more", n);
    if (!cc_xnn_batch_possible(m, err))
        return false;
    struct cc_tensor *t = malloc((size_t)(m->n_tensors > 0 ? m->n_tensors : 1) * sizeof(*t));
    if (!t)
        return cc_error_set(err, "cpu backend: out of memory for a batch of %d", n);
    memcpy(t, m->tensors, (size_t)m->n_tensors * sizeof(*t));
    for (int i = 0; i < m->n_tensors; i++) {
        if (!is_activation(m, i))
            continue;
        t[i].shape[0] = n;
        t[i].count *= n;
    }
    *out = *m;
    out->tensors = t;
    out->cap_tensors = m->n_tensors;
    // The copy finds nothing by name (the index is the model's): the backend looks up only the
    // tap, and a batch state has none.
    out->tensor_names = out->node_names = (struct cc_name_index){0};
    return true;
}

void cc_xnn_batch_model_finish(struct cc_model *batch)
{
    free(batch->tensors);
    *batch = (struct cc_model){0};
}
