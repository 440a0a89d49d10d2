/* camclass — activation memory plan (see plan.h).
 *
 * 1. Alias groups: a flatten/reshape output shares its input's memory, so the two form one
 *    group whose root is the first tensor that is not an alias.
 * 2. Live range of a group: [first node that writes any member, last node that reads any
 *    member], both inclusive, so a node's inputs and output never overlap. A group holding the
 *    graph input or output is live for the whole run ([-1, n_nodes]).
 * 3. Greedy placement: groups sorted by size (largest first), each put at the lowest aligned
 *    offset that is free among the already-placed groups whose ranges overlap its own.
 *
 * Cost: O(G^2 log G) for G groups, fine for the few hundred activations of real models.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

// One alias group (indexed by its root tensor).
struct group {
    int root;      // tensor index of the root (the tensor memory is sized for)
    size_t size;   // bytes, rounded up to align
    int first;     // first node writing a member; -1 = live from before the run
    int last;      // last node reading a member; n_nodes = live after the run
    size_t offset; // in the arena, once placed
};

// A placed byte range [begin, end) that a candidate must avoid.
struct range {
    size_t begin, end;
};

static bool is_activation(const struct cc_tensor *t)
{
    return !cc_tensor_is_const(t);
}

static bool is_alias_op(enum cc_op op)
{
    return op == CC_OP_FLATTEN || op == CC_OP_RESHAPE;
}

static size_t align_up(size_t x, size_t align)
{
    return (x + align - 1) & ~(align - 1);
}

// Sort order: larger first, then earlier first, then by root for determinism.
static int group_cmp(const void *pa, const void *pb)
{
    const struct group *a = pa, *b = pb;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->root < b->root ? -1 : (a->root > b->root);
}

static int range_cmp(const void *pa, const void *pb)
{
    const struct range *a = pa, *b = pb;
    return a->begin < b->begin ? -1 : (a->begin > b->begin);
}

/* Lowest offset (multiple of align) where size bytes fit between the sorted ranges. */
static size_t first_fit(struct range *used, int n_used, size_t size, size_t align)
{
    qsort(used, (size_t)n_used, sizeof(*used), range_cmp);
    size_t candidate = 0;
    for (int i = 0; i < n_used; i++) {
        if (candidate + size <= used[i].begin)
            break;
        if (used[i].end > candidate)
            candidate = align_up(used[i].end, align);
    }
    return candidate;
}

// Writes for every tensor the root of its alias group into root[] (-1 for constants).
static void find_alias_roots(const struct cc_model *m, int *root)
{
    for (int t = 0; t < m->n_tensors; t++)
        root[t] = is_activation(&m->tensors[t]) ? t : -1;
    // Nodes are in topological order, so an alias input's root is already final.
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        if (!is_alias_op(node->op) || node->n_inputs < 1 || node->n_outputs < 1)
            continue;
        int in = node->inputs[0], out = node->outputs[0];
        if (root[in] >= 0)
            root[out] = root[in];
    }
}

bool cc_plan_init(struct cc_plan *plan, const struct cc_model *m, size_t align,
                  struct cc_error *err)
{
    memset(plan, 0, sizeof(*plan));
    if (align == 0 || (align & (align - 1)) != 0)
        return cc_error_set(err, "plan: alignment %zu is not a power of two", align);

    int nt = m->n_tensors;
    int *root = malloc((size_t)(nt > 0 ? nt : 1) * sizeof(*root));
    int *group_of = malloc((size_t)(nt > 0 ? nt : 1) * sizeof(*group_of)); // root -> group
    struct group *groups = calloc((size_t)(nt > 0 ? nt : 1), sizeof(*groups));
    struct range *used = malloc((size_t)(nt > 0 ? nt : 1) * sizeof(*used));
    plan->offset = malloc((size_t)(nt > 0 ? nt : 1) * sizeof(*plan->offset));
    if (!root || !group_of || !groups || !used || !plan->offset) {
        cc_error_set(err, "plan: out of memory for %d tensors", nt);
        goto error;
    }

    find_alias_roots(m, root);
    int n_groups = 0;
    for (int t = 0; t < nt; t++) {
        group_of[t] = -1;
        if (root[t] != t)
            continue;
        const struct cc_tensor *tensor = &m->tensors[t];
        size_t bytes = (size_t)tensor->count * sizeof(float);
        if (bytes == 0)
            bytes = 1; // keeps every group a real, distinct range
        struct group *g = &groups[n_groups];
        *g = (struct group){
            .root = t, .size = align_up(bytes, align), .first = m->n_nodes, .last = -1};
        group_of[t] = n_groups++;
    }

    // Live ranges from the nodes' reads and writes.
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        for (int i = 0; i < node->n_inputs; i++) {
            int t = node->inputs[i];
            if (t >= 0 && root[t] >= 0) {
                struct group *g = &groups[group_of[root[t]]];
                if (n > g->last)
                    g->last = n;
                if (n < g->first) // read before any write: lives from the start
                    g->first = -1;
            }
        }
        for (int o = 0; o < node->n_outputs; o++) {
            int t = node->outputs[o];
            if (t >= 0 && root[t] >= 0) {
                struct group *g = &groups[group_of[root[t]]];
                if (n < g->first)
                    g->first = n;
                if (n > g->last)
                    g->last = n;
            }
        }
    }
    // The graph input and output (and whatever aliases them) are live the whole time.
    int pinned[2] = {m->input.tensor, m->output.tensor};
    for (int i = 0; i < 2; i++) {
        int t = pinned[i];
        if (t >= 0 && t < nt && root[t] >= 0) {
            struct group *g = &groups[group_of[root[t]]];
            g->first = -1;
            g->last = m->n_nodes;
        }
    }
    for (int gi = 0; gi < n_groups; gi++) {
        struct group *g = &groups[gi];
        if (g->first > g->last) // neither read nor written: keep it, but alone
            g->first = g->last = -2;
        plan->naive_size += g->size;
    }

    qsort(groups, (size_t)n_groups, sizeof(*groups), group_cmp);
    for (int gi = 0; gi < n_groups; gi++) {
        struct group *g = &groups[gi];
        int n_used = 0;
        for (int pj = 0; pj < gi; pj++) {
            const struct group *p = &groups[pj];
            if (p->first <= g->last && g->first <= p->last)
                used[n_used++] = (struct range){p->offset, p->offset + p->size};
        }
        g->offset = first_fit(used, n_used, g->size, align);
        if (g->offset + g->size > plan->arena_size)
            plan->arena_size = g->offset + g->size;
        group_of[g->root] = gi; // groups moved by the sort
    }

    for (int t = 0; t < nt; t++)
        plan->offset[t] = root[t] < 0 ? SIZE_MAX : groups[group_of[root[t]]].offset;

    free(root);
    free(group_of);
    free(groups);
    free(used);
    return true;

error:
    free(root);
    free(group_of);
    free(groups);
    free(used);
    cc_plan_finish(plan);
    return false;
}

void cc_plan_finish(struct cc_plan *plan)
{
    if (!plan)
        return;
    free(plan->offset);
    memset(plan, 0, sizeof(*plan));
}
