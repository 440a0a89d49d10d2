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

// The working arrays of one cc_plan_init, each (n_tensors); owned by it.
struct planner {
    const struct cc_model *m;
    int *root;            // tensor -> root of its alias group, -1 for constants
    int *group_of;        // root tensor -> index into groups, -1 for other tensors
    struct group *groups; // (n_groups)
    int n_groups;
    struct range *used; // first_fit's scratch
};

// Step 1: one group per alias root, sized for it, not yet live anywhere.
static void make_groups(struct planner *p, size_t align)
{
    const struct cc_model *m = p->m;
    find_alias_roots(m, p->root);
    p->n_groups = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        p->group_of[t] = -1;
        if (p->root[t] != t)
            continue;
        size_t bytes = (size_t)m->tensors[t].count * sizeof(float);
        if (bytes == 0)
            bytes = 1; // keeps every group a real, distinct range
        p->groups[p->n_groups] = (struct group){
            .root = t, .size = align_up(bytes, align), .first = m->n_nodes, .last = -1};
        p->group_of[t] = p->n_groups++;
    }
}

// Node n reads (write false) or writes tensor t: widens its group's live range. A read before
// any write makes the group live from the start.
static void touch(struct planner *p, int n, int t, bool write)
{
    if (t < 0 || p->root[t] < 0)
        return;
    struct group *g = &p->groups[p->group_of[p->root[t]]];
    if (n > g->last)
        g->last = n;
    if (n < g->first)
        g->first = write ? n : -1;
}

// Step 2: live ranges from the nodes' reads and writes (and the reads moved until later).
static void live_ranges(struct planner *p, int keep, const int *until)
{
    const struct cc_model *m = p->m;
    for (int n = 0; n < m->n_nodes; n++) {
        const struct cc_node *node = &m->nodes[n];
        for (int i = 0; i < node->n_inputs; i++)
            touch(p, n, node->inputs[i], false);
        for (int o = 0; o < node->n_outputs; o++)
            touch(p, n, node->outputs[o], true);
    }
    for (int t = 0; until && t < m->n_tensors; t++)
        if (until[t] >= 0 && until[t] < m->n_nodes)
            touch(p, until[t], t, false);
    // The graph input and output (and whatever aliases them) are live the whole time; the kept
    // tensor from its producer to the end.
    int pinned[3] = {m->input.tensor, m->output.tensor, keep};
    for (int i = 0; i < 3; i++) {
        int t = pinned[i];
        if (t >= 0 && t < m->n_tensors && p->root[t] >= 0) {
            struct group *g = &p->groups[p->group_of[p->root[t]]];
            if (i < 2)
                g->first = -1;
            g->last = m->n_nodes;
        }
    }
    for (int gi = 0; gi < p->n_groups; gi++) {
        struct group *g = &p->groups[gi];
        if (g->first > g->last) // neither read nor written: keep it, but alone
            g->first = g->last = -2;
    }
}

// Step 3: greedy placement, largest first; sets plan's sizes and offsets.
static void place_groups(struct planner *p, size_t align, struct cc_plan *plan)
{
    struct group *groups = p->groups;
    for (int gi = 0; gi < p->n_groups; gi++)
        plan->naive_size += groups[gi].size;
    qsort(groups, (size_t)p->n_groups, sizeof(*groups), group_cmp);
    for (int gi = 0; gi < p->n_groups; gi++) {
        struct group *g = &groups[gi];
        int n_used = 0;
        for (int pj = 0; pj < gi; pj++) {
            const struct group *q = &groups[pj];
            if (q->first <= g->last && g->first <= q->last)
                p->used[n_used++] = (struct range){q->offset, q->offset + q->size};
        }
        g->offset = first_fit(p->used, n_used, g->size, align);
        if (g->offset + g->size > plan->arena_size)
            plan->arena_size = g->offset + g->size;
        p->group_of[g->root] = gi; // groups moved by the sort
    }
    for (int t = 0; t < p->m->n_tensors; t++)
        plan->offset[t] = p->root[t] < 0 ? SIZE_MAX : groups[p->group_of[p->root[t]]].offset;
}

bool cc_plan_init(struct cc_plan *plan, const struct cc_model *m, size_t align,
                  struct cc_error *err)
{
    return cc_plan_init_keep(plan, m, align, -1, err);
}

bool cc_plan_init_keep(struct cc_plan *plan, const struct cc_model *m, size_t align, int keep,
                       struct cc_error *err)
{
    return cc_plan_init_until(plan, m, align, keep, NULL, err);
}

bool cc_plan_init_until(struct cc_plan *plan, const struct cc_model *m, size_t align, int keep,
                        const int *until, struct cc_error *err)
{
    memset(plan, 0, sizeof(*plan));
    if (align == 0 || (align & (align - 1)) != 0)
        return cc_error_set(err, "plan: alignment %zu is not a power of two", align);

    size_t nt = (size_t)(m->n_tensors > 0 ? m->n_tensors : 1);
    struct planner p = {
        .m = m,
        .root = malloc(nt * sizeof(*p.root)),
        .group_of = malloc(nt * sizeof(*p.group_of)),
        .groups = calloc(nt, sizeof(*p.groups)),
        .used = malloc(nt * sizeof(*p.used)),
    };
    plan->offset = malloc(nt * sizeof(*plan->offset));
    bool ok = p.root && p.group_of && p.groups && p.used && plan->offset;
    if (ok) {
        make_groups(&p, align);
        live_ranges(&p, keep, until);
        place_groups(&p, align, plan);
    } else {
        cc_error_set(err, "plan: out of memory for %d tensors", m->n_tensors);
        cc_plan_finish(plan);
    }
    free(p.root);
    free(p.group_of);
    free(p.groups);
    free(p.used);
    return ok;
}

void cc_plan_finish(struct cc_plan *plan)
{
    if (!plan)
        return;
    free(plan->offset);
    memset(plan, 0, sizeof(*plan));
}
