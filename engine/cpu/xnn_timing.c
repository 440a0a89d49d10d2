/* camclass — timing the CPU backend's candidate steps for the load-time choices (see
 * xnn_timing.h). */
#include <math.h>

#include "choice_watch.h"
#include "clock.h"
#include "evict.h"
#include "xnn_timing.h"

/* One run of step st of node on pool. probe: an NCHW input for a stem step, or (others) the
 * input to transpose into the graph input's place first (and, for an int8 step, to convert to
 * int8) (NULL: none). */
static void run_step(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                     const float *probe, pthreadpool_t pool)
{
    const struct cc_model *m = s->model;
    const struct place *in = &s->places[m->input.tensor];
    bool stem = st->kind == STEP_STEM || st->kind == STEP_Q8STEM;
    if (probe && !stem)
        cc_xnn_state_move(&m->tensors[m->input.tensor], probe, in->data, true, sizeof(float));
    if (probe && !stem && st->int8 && in->convert)
        xnn_run_operator(in->convert, pool);
    if (st->kind == STEP_BLIS)
        cc_blis_conv_run(st->gemm, pool);
    else if (st->kind == STEP_DIRECT)
        cc_conv3x3_run(st->direct, pool);
    else if (st->kind == STEP_STEM)
        cc_stem_conv_run(st->stem, probe, pool);
    else if (st->kind == STEP_FUSED)
        cc_xnn_fused_step_run(st->fused, pool);
    else if (st->kind == STEP_PW)
        cc_f32_pw_run(st->pw, pool);
    else if (st->kind == STEP_Q8GEMM)
        cc_q8_gemm_run(st->q8, cc_xnn_state_values(s, node->inputs[0], STORE_QS8),
                       s->places[node->outputs[0]].data, pool);
    else if (st->kind == STEP_Q8STEM)
        cc_q8_stem_run(st->q8stem, probe, s->places[node->outputs[0]].data, pool);
    else if (st->kind == STEP_Q8DW)
        cc_q8_dw_run(st->q8dw, cc_xnn_state_values(s, node->inputs[0], STORE_QS8),
                     s->places[node->outputs[0]].data, pool);
    else
        cc_xnn_work_run(&st->work, pool, node, NULL);
}

/* The time of one run of nodes first..last back to back, as a network run meets them: each
 * with its own step, or all with step one (then first == last); judged by watch (NULL: none). */
static double timed_once(struct xnn_state *s, int first, int last, const struct step *one,
                         const float *probe, struct cc_choice_watch *watch)
{
    pthreadpool_t pool = s->watch->pooled ? s->pool : NULL; // choice_watch.h
    cc_xnn_state_poison(s);
    cc_choice_watch_begin(watch);
    double t0 = cc_now_ms();
    for (int k = first; k <= last; k++)
        run_step(s, &s->model->nodes[k], one ? one : &s->steps[k], probe, pool);
    double t = cc_now_ms() - t0;
    cc_choice_watch_end(watch);
    return t;
}

/* The least time of runs runs of step st of node (see run_step), each judged by watch. */
static double timed(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                    const float *probe, int runs, struct cc_choice_watch *watch)
{
    int n = (int)(node - s->model->nodes);
    double best = INFINITY;
    for (int i = 0; i < runs; i++) {
        double t = timed_once(s, n, n, st, probe, watch);
        best = t < best ? t : best;
    }
    return best;
}

double cc_xnn_min_time(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                       const float *probe, int runs)
{
    return timed(s, node, st, probe, runs, s->watch);
}

void cc_xnn_warm_up(struct xnn_state *s, const struct cc_node *node, const struct step *st,
                    const float *probe)
{
    timed(s, node, st, probe, 1, NULL);
}

bool cc_xnn_faster(struct xnn_state *s, const struct cc_node *node, const struct step *a,
                   const float *pa, const struct step *b, const float *pb, int runs)
{
    cc_xnn_warm_up(s, node, b, pb);
    cc_xnn_warm_up(s, node, a, pa);
    double ta = INFINITY, tb = INFINITY;
    for (int i = 0; i < runs; i++) { // alternating: a slow spell of the host slows both alike
        double x = cc_xnn_min_time(s, node, a, pa, 1), y = cc_xnn_min_time(s, node, b, pb, 1);
        ta = x < ta ? x : ta;
        tb = y < tb ? y : tb;
    }
    return ta < tb;
}

/* The time of one run of f's steps, back to back (fused: the fused step instead), judged by
 * watch (NULL: none, a warm-up). Not the sum of each step timed alone: each of those pays
 * what a network run pays once, waking the pool's workers (tens of us in a virtual machine)
 * and reading the clock, which made 3 or 4 layers look 0.01-0.05 ms slower than they run and
 * chose the fused block for most 14x14 and 28x28 blocks at 2 threads, where the network ran
 * them 25-40 % slower than their layers (docs/PERFORMANCE.md). */
static double block_time(struct xnn_state *s, const struct cc_fused_match *f,
                         const struct step *fused, struct cc_choice_watch *watch)
{
    return fused ? timed_once(s, f->last, f->last, fused, NULL, watch)
                 : timed_once(s, f->first, f->last, NULL, NULL, watch);
}

enum { FUSED_RUNS = 5 }; // timed runs of each way after a warm-up one (fused_faster)

/* Drops from the caches the tensors larger than L2 that f's nodes write (evict.h): memory that a
 * network run last touched a whole run before it reaches the block. */
static void block_evict(const struct xnn_state *s, const struct cc_fused_match *f)
{
    const struct cc_model *m = s->model;
    size_t l2 = cc_evict_l2_bytes();
    for (int k = f->first; k <= f->last; k++) {
        int t = m->nodes[k].outputs[0];
        const struct place *p = &s->places[t];
        size_t bytes = (size_t)m->tensors[t].count * cc_xnn_elem_size(p->type);
        if (bytes > l2)
            cc_evict(p->data, bytes);
    }
}

bool cc_xnn_fused_faster(struct xnn_state *s, const struct cc_fused_match *f,
                         const struct step *fused)
{
    double layers = INFINITY, one = INFINITY;
    for (int i = 0; i <= FUSED_RUNS; i++) {
        block_evict(s, f);
        struct cc_choice_watch *watch = i > 0 ? s->watch : NULL; // the first pair warms up
        double tl = block_time(s, f, NULL, watch);
        block_evict(s, f);
        double tf = block_time(s, f, fused, watch);
        if (i > 0) {
            layers = tl < layers ? tl : layers;
            one = tf < one ? tf : one;
        }
    }
    return one < layers;
}
