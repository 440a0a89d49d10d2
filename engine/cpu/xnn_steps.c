/* camclass — building the CPU backend's steps and choosing each layer's way (xnn_steps.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_choices.h"
#include "xnn_steps.h"
#include "xnn_timing.h"

/* An earlier such convolution (or linear) with the same input and weight shapes and attributes
 * (mobilenet_v2 has 34 1x1 layers of 19 shapes, resnet50 16 3x3 ones of 4): node n takes its
 * measured choice instead of timing again, which matters where timing is slow (a Pi, an
 * emulator). -1 when there is none. */
static int same_shape_before(const struct xnn_state *s, int n)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    for (int k = 0; k < n; k++) {
        const struct cc_node *other = &m->nodes[k];
        if (!cc_xnn_has_choice(other) || other->op != node->op ||
            s->steps[k].int8 != s->steps[n].int8)
            continue;
        const struct cc_tensor *x2 = &m->tensors[other->inputs[0]];
        const struct cc_tensor *w2 = &m->tensors[other->inputs[1]];
        if (!memcmp(x->shape, x2->shape, sizeof(x->shape)) &&
            !memcmp(w->shape, w2->shape, sizeof(w->shape)) &&
            !memcmp(&node->attrs.conv, &other->attrs.conv, sizeof(node->attrs.conv)))
            return k;
    }
    return -1;
}

/* For an f32 one-group convolution whose XNNPACK operator is built: prepares the BLIS way too
 * and keeps whichever opts->cpu_pointwise says, or (measure) the faster of the two on this
 * machine, timed here on the arena (min of 2 runs after one warm-up each; a layer of a shape
 * already measured takes that choice). */
static bool choose_gemm(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    struct step *st = &s->steps[n];
    enum cc_cpu_pointwise how = opts ? opts->cpu_pointwise : CC_CPU_POINTWISE_MEASURE;
    if (!cc_xnn_blis_can_run(m, node, st) || how == CC_CPU_POINTWISE_XNNPACK)
        return true;
    if (!s->blis_set_up && !(s->blis_set_up = cc_blis_conv_setup(err)))
        return false;
    s->n_gemm++;
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *y = &m->tensors[node->outputs[0]];
    int o = (int)w->shape[0], c = (int)x->shape[1], kh = (int)w->shape[2], kw = (int)w->shape[3];
    bool pointwise = cc_blis_conv_is_pointwise(m, node);
    const float *weights = w->data;
    if (!weights || !pointwise) { // dequantized (i8 weights in an f32 node) and/or repacked;
                                  // padded: BLIS too reads past a small weight matrix (valgrind:
                                  // 4 bytes past a 1x2 one)
        size_t bytes = cc_xnn_padded((size_t)w->count * sizeof(float));
        float *f32 = malloc(bytes);
        st->gemm_weights = f32 && !pointwise ? malloc(bytes) : f32;
        if (!f32 || !st->gemm_weights) {
            if (f32 != st->gemm_weights)
                free(f32);
            return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
        }
        cc_tensor_dequantize(w, f32);
        if (!pointwise) {
            cc_blis_conv_pack_weights(f32, o, c, kh, kw, st->gemm_weights);
            free(f32);
        }
        weights = st->gemm_weights;
    }
    if (!(st->gemm = malloc(sizeof(*st->gemm))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    *st->gemm = (struct cc_blis_conv){
        .x = cc_xnn_state_values(s, node->inputs[0], STORE_F32),
        .w = weights,
        .bias = node->n_inputs > 2 ? m->tensors[node->inputs[2]].data : NULL,
        .y = s->places[node->outputs[0]].data,
        .h = (int)x->shape[2],
        .wd = (int)x->shape[3],
        .c = c,
        .ho = (int)y->shape[2],
        .wo = (int)y->shape[3],
        .n = o,
        .kh = kh,
        .kw = kw,
        .attrs = node->attrs.conv,
        .act = node->act,
        .split = cc_blis_conv_split(m, node, cc_xnn_pool_threads(s)),
        .patches = pointwise ? NULL : s->patches,
    };
    bool blis = how == CC_CPU_POINTWISE_BLIS;
    int twin = how == CC_CPU_POINTWISE_MEASURE ? same_shape_before(s, n) : -1;
    // A remembered stem ('s') or fused block ('f') switched off: this layer is measured again.
    bool stem_off = s->stem_mode.kind == CC_STEM_OFF, fused_off = s->fused_mode == CC_FUSED_OFF;
    bool pw_off = s->pw_mode.kind == CC_STEM_OFF;
    bool direct_off = s->direct_mode == CC_CONV3X3_MODE_OFF;
    char was = cc_xnn_remembered(s, n);
    if (how == CC_CPU_POINTWISE_MEASURE && s->remembered && !(stem_off && was == 's') &&
        !(fused_off && was == 'f') && !(pw_off && was == 'p') &&
        !(direct_off && (was == 'd' || was == 'w' || was == 'v'))) {
        blis = was == 'b';
    } else if (twin >= 0) { // a twin on conv3x3.h: XNNPACK here, then choose_direct takes it
        blis = s->steps[twin].kind == STEP_BLIS;
    } else if (how == CC_CPU_POINTWISE_MEASURE) {
        struct step xnn = {.kind = STEP_XNN, .work = st->work},
                    gemm = {.kind = STEP_BLIS, .gemm = st->gemm};
        blis = cc_xnn_faster(s, node, &gemm, NULL, &xnn, NULL, 2);
    }
    if (blis) {
        cc_xnn_work_finish(&st->work);
        st->kind = STEP_BLIS;
        s->n_blis++;
    } else {
        free(st->gemm);
        free(st->gemm_weights);
        st->gemm = NULL;
        st->gemm_weights = NULL;
    }
    return true;
}

/* Activation reads of the graph input: how many (only_stems: whether all are direct stems). */
int cc_xnn_steps_input_reads(const struct xnn_state *s, bool *only_stems)
{
    const struct cc_model *m = s->model;
    int reads = 0;
    *only_stems = true;
    for (int n = 0; n < m->n_nodes; n++)
        for (int i = 0; i < m->nodes[n].n_inputs; i++)
            if (m->nodes[n].inputs[i] == m->input.tensor &&
                cc_xnn_state_reads_activation(&m->nodes[n], i)) {
                reads++;
                *only_stems &= s->steps[n].kind == STEP_STEM || s->steps[n].kind == STEP_Q8STEM;
            }
    return reads;
}

static void free_q8(struct step *st)
{
    if (st->q8)
        cc_q8_gemm_finish(st->q8);
    free(st->q8);
    st->q8 = NULL;
    if (st->q8dw)
        cc_q8_dw_finish(st->q8dw);
    free(st->q8dw);
    st->q8dw = NULL;
}

/* Whether node n keeps own (our int8 GEMM or depthwise, cache letter letter) in place of its
 * XNNPACK step: always when forced; where the cache remembers it (a remembered 'f' with fused
 * blocks off: measured again); where a layer of the same shape before chose it; else where it
 * is faster, min of 3 runs after a warm-up each. */
static bool keep_own(struct xnn_state *s, int n, const struct step *own, char letter, bool forced)
{
    const struct cc_node *node = &s->model->nodes[n];
    struct step *st = &s->steps[n];
    int twin = same_shape_before(s, n);
    char was = cc_xnn_remembered(s, n);
    if (forced)
        return true;
    if (was && !(s->fused_mode == CC_FUSED_OFF && was == 'f'))
        return was == letter;
    if (twin >= 0)
        return s->steps[twin].kind == own->kind;
    return cc_xnn_faster(s, node, own, NULL, st, NULL, 3);
}

/* For an int8 1x1 convolution whose XNNPACK operator is built (q8_gemm.h says which): prepares
 * our GEMM too (yield: n's is the run's last operator) and keeps it always with
 * CAMCLASS_CPU_Q8GEMM=on; where the cache remembers it ('q'); else (measured, not with a
 * forced cpu_pointwise) where it is faster, min of 3 runs after a warm-up each; a layer of a
 * shape already measured takes that choice. */
static bool choose_q8(struct xnn_state *s, int n, const struct cc_engine_options *opts, bool yield,
                      struct cc_error *err)
{
    const struct cc_node *node = &s->model->nodes[n];
    struct step *st = &s->steps[n];
    bool forced = s->q8_mode == CC_FUSED_ON;
    bool measure = s->q8_mode == CC_FUSED_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    struct cc_q8_gemm_desc d;
    if ((!forced && !measure) || !st->int8 || st->kind != STEP_XNN ||
        !cc_q8_gemm_from_node(s->model, node, &d))
        return true;
    if (!(st->q8 = calloc(1, sizeof(*st->q8))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    if (!cc_q8_gemm_init(st->q8, &d, cc_q8_gemm_isa_best(), (int)cc_xnn_pool_threads(s), err))
        return false; // st->q8: freed by xnn_destroy
    st->q8->yield = yield;
    struct step q8 = {.kind = STEP_Q8GEMM, .q8 = st->q8};
    if (!keep_own(s, n, &q8, 'q', forced)) {
        free_q8(st);
        return true;
    }
    cc_xnn_work_finish(&st->work);
    st->kind = STEP_Q8GEMM;
    s->n_q8++;
    return true;
}

/* For an int8 depthwise 3x3 convolution whose XNNPACK operator is built (q8_dw.h says which):
 * prepares our depthwise too (yield: n's is the run's last operator) and keeps it as keep_own
 * says ('e'): always with CAMCLASS_CPU_Q8DW=on (or a kernel family), not with off or a forced
 * cpu_pointwise. */
static bool choose_q8dw(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                        bool yield, struct cc_error *err)
{
    const struct cc_node *node = &s->model->nodes[n];
    struct step *st = &s->steps[n];
    bool forced = s->q8dw_mode.kind == CC_FUSED_ON;
    bool measure = s->q8dw_mode.kind == CC_FUSED_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    struct cc_q8_dw_desc d;
    if ((!forced && !measure) || !st->int8 || st->kind != STEP_XNN ||
        !cc_q8_dw_from_node(s->model, node, &d))
        return true;
    if (!(st->q8dw = calloc(1, sizeof(*st->q8dw))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    if (!cc_q8_dw_init(st->q8dw, &d, s->q8dw_mode.isa, (int)cc_xnn_pool_threads(s), err))
        return false; // st->q8dw: freed by xnn_destroy
    st->q8dw->yield = yield;
    struct step own = {.kind = STEP_Q8DW, .q8dw = st->q8dw};
    if (!keep_own(s, n, &own, 'e', forced)) {
        free_q8(st);
        return true;
    }
    cc_xnn_work_finish(&st->work);
    st->kind = STEP_Q8DW;
    s->n_q8dw++;
    return true;
}

/* Frees node n's operators (or GEMM): the stem or a fused block computes it now. */
static void release_step(struct xnn_state *s, int n)
{
    struct step *st = &s->steps[n];
    s->n_blis -= st->kind == STEP_BLIS;
    s->n_pw -= st->kind == STEP_PW;
    s->n_direct -= st->kind == STEP_DIRECT;
    s->n_wino -= st->kind == STEP_DIRECT && st->direct->wino;
    s->n_wino4 -= st->kind == STEP_DIRECT && cc_xnn_direct_way(st->direct) == 2;
    s->n_q8 -= st->kind == STEP_Q8GEMM;
    s->n_q8dw -= st->kind == STEP_Q8DW;
    cc_xnn_work_finish(&st->work);
    if (st->pw)
        cc_f32_pw_finish(st->pw);
    free(st->pw);
    st->pw = NULL;
    if (st->direct)
        cc_conv3x3_finish(st->direct);
    free(st->direct);
    st->direct = NULL;
    free(st->gemm);
    free(st->gemm_weights);
    st->gemm = NULL;
    st->gemm_weights = NULL;
    free_q8(st);
    st->kind = STEP_SKIP;
}

/* Node n's convolution the algo way (conv3x3.h) on the arena as a step, or one with a NULL
 * direct (out of memory: err set). */
static struct step direct_new(struct xnn_state *s, int n, enum cc_conv3x3_algo algo, bool yield,
                              struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    const struct cc_tensor *x = &m->tensors[node->inputs[0]], *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *y = &m->tensors[node->outputs[0]];
    struct cc_conv3x3_desc d = {
        .h = (int)x->shape[2],
        .w = (int)x->shape[3],
        .c = (int)x->shape[1],
        .ho = (int)y->shape[2],
        .wo = (int)y->shape[3],
        .n = (int)w->shape[0],
        .kh = (int)w->shape[2],
        .kw = (int)w->shape[3],
        .attrs = node->attrs.conv,
        .act = node->act,
    };
    float *f32 = malloc((size_t)w->count * sizeof(float));
    struct cc_conv3x3 *p = calloc(1, sizeof(*p));
    bool ok = f32 && p;
    if (ok) {
        cc_tensor_dequantize(w, f32);
        ok = cc_conv3x3_init(
            p, &d, f32, node->n_inputs > 2 ? m->tensors[node->inputs[2]].data : NULL,
            cc_xnn_state_values(s, node->inputs[0], STORE_F32), s->places[node->outputs[0]].data,
            algo, cc_stem_isa_best(), cc_xnn_pool_threads(s), err);
    } else {
        cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    }
    free(f32);
    if (!ok) {
        free(p);
        p = NULL;
    } else {
        p->yield = yield;
    }
    return (struct step){.kind = STEP_DIRECT, .direct = p};
}

/* Which of cand (direct, and Winograd F(2x2, 3x3) and F(4x4, 3x3) where they apply: cand[1]
 * and cand[2].direct not NULL) node n takes in place of its step: -1 none, else the index. The
 * remembered choice ('d', 'w', 'v'), or an earlier layer's of its shape; else the fastest, min
 * of 2 runs after a warm-up each. */
static int pick_direct(struct xnn_state *s, int n, const struct step cand[3])
{
    static const char letters[] = "dwv"; // direct_way's
    const struct cc_node *node = &s->model->nodes[n];
    int pick = -1;
    if (s->remembered) {
        const char *was = strchr(letters, cc_xnn_remembered(s, n));
        pick = was && *was ? (int)(was - letters) : -1;
        return pick >= 0 && cand[pick].direct ? pick : -1;
    }
    int twin = same_shape_before(s, n);
    if (twin >= 0)
        return s->steps[twin].kind != STEP_DIRECT ? -1 : cc_xnn_direct_way(s->steps[twin].direct);
    const struct step *ways[4] = {&s->steps[n], &cand[0], cand[1].direct ? &cand[1] : NULL,
                                  cand[2].direct ? &cand[2] : NULL};
    double best = INFINITY;
    for (int i = 0; i < 4; i++) {
        if (!ways[i])
            continue;
        cc_xnn_warm_up(s, node, ways[i], NULL);
        double t = cc_xnn_min_time(s, node, ways[i], NULL, 2);
        if (t < best)
            best = t, pick = i - 1;
    }
    return pick;
}

/* Makes f32 k x k convolution n's step our own (conv3x3.h), direct or Winograd, in place of
 * what choose_gemm left: always with CAMCLASS_CPU_CONV3X3=on (direct) or winograd (where it
 * applies, else direct); else (measured, not with a forced cpu_pointwise) pick_direct's. */
static bool choose_direct(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                          bool yield, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    enum cc_conv3x3_mode mode = s->direct_mode;
    bool measure = mode == CC_CONV3X3_MODE_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    if ((!measure && mode != CC_CONV3X3_MODE_ON && mode != CC_CONV3X3_MODE_WINOGRAD &&
         mode != CC_CONV3X3_MODE_WINOGRAD4) ||
        !cc_xnn_blis_can_run(m, &m->nodes[n], &s->steps[n]) || !cc_conv3x3_applies(m, &m->nodes[n]))
        return true;
    struct step cand[3] = {direct_new(s, n, CC_CONV3X3_DIRECT, yield, err), {0}, {0}};
    bool ok = cand[0].direct != NULL;
    bool wino = ok && cc_conv3x3_wino_applies(&cand[0].direct->d) && mode != CC_CONV3X3_MODE_ON;
    if (wino && mode != CC_CONV3X3_MODE_WINOGRAD4)
        ok = (cand[1] = direct_new(s, n, CC_CONV3X3_WINOGRAD, yield, err)).direct != NULL;
    if (ok && wino && mode != CC_CONV3X3_MODE_WINOGRAD)
        ok = (cand[2] = direct_new(s, n, CC_CONV3X3_WINOGRAD4, yield, err)).direct != NULL;
    int pick = !ok                                 ? -1
               : mode == CC_CONV3X3_MODE_ON        ? 0
               : mode == CC_CONV3X3_MODE_WINOGRAD  ? cand[1].direct != NULL
               : mode == CC_CONV3X3_MODE_WINOGRAD4 ? (cand[2].direct ? 2 : 0)
                                                   : pick_direct(s, n, cand);
    for (int i = 0; i < 3; i++)
        if (i != pick && cand[i].direct) {
            cc_conv3x3_finish(cand[i].direct);
            free(cand[i].direct);
        }
    if (pick >= 0) {
        release_step(s, n);
        s->steps[n] = cand[pick];
        s->n_direct++;
        s->n_wino += cand[pick].direct->wino;
        s->n_wino4 += pick == 2;
    }
    return ok;
}

/* Whether stem step own (which reads the caller's NCHW input) is faster than node n's step
 * plus, where n is the graph input's only reader, the transpose of the input (and, int8, its
 * conversion) that own saves: min of 3 runs after a warm-up each, on a zero input. False with
 * err on out of memory. */
static bool stem_faster(struct xnn_state *s, int n, const struct step *own, bool *own_faster,
                        struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    bool only_stems;
    float *probe = calloc((size_t)m->tensors[m->input.tensor].count, sizeof(float));
    if (!probe)
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    const float *moved = cc_xnn_steps_input_reads(s, &only_stems) == 1 ? probe : NULL;
    *own_faster = cc_xnn_faster(s, node, own, probe, &s->steps[n], moved, 3);
    free(probe);
    return true;
}

/* Makes node n's step the direct stem (stem_conv.h) in place of what choose_gemm left (yield:
 * n's is the run's last operator, see build_steps), where
 * the stem applies to n and reads the f32 graph input: always with CAMCLASS_CPU_STEM on (or a
 * kernel family); where the cache remembers it ('s'); else (measured, as choose_gemm does: not
 * with a forced cpu_pointwise) where stem_faster says. */
static bool choose_stem(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                        bool yield, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    struct step *st = &s->steps[n];
    int in = m->input.tensor;
    bool forced = s->stem_mode.kind == CC_STEM_ON;
    bool measure = s->stem_mode.kind == CC_STEM_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    if ((!forced && !measure) || st->int8 || node->inputs[0] != in ||
        s->places[in].type != STORE_F32 || !cc_stem_conv_applies(m, node))
        return true;
    if (!(st->stem = calloc(1, sizeof(*st->stem))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    if (!cc_stem_conv_init(st->stem, m, node, s->stem_mode.isa, s->places[node->outputs[0]].data,
                           yield, err))
        return false; // st->stem: freed by xnn_destroy
    struct step own = {.kind = STEP_STEM, .stem = st->stem};
    bool keep = forced;
    if (!forced && s->remembered)
        keep = cc_xnn_remembered(s, n) == 's';
    else if (!forced && !stem_faster(s, n, &own, &keep, err))
        return false;
    if (!keep) {
        cc_stem_conv_finish(st->stem);
        free(st->stem);
        st->stem = NULL;
        return true;
    }
    release_step(s, n);
    st->kind = STEP_STEM;
    s->n_stem++;
    return true;
}

/* Makes int8 node n's step our own int8 stem (q8_stem.h: the input's quantization fused in) in
 * place of its XNNPACK operator (yield: n's is the run's last operator), where it applies and
 * reads the f32 graph input: always with CAMCLASS_CPU_Q8STEM on (or a kernel family); where
 * the cache remembers it ('S'); else (measured, not with a forced cpu_pointwise) where
 * stem_faster says. */
static bool choose_q8stem(struct xnn_state *s, int n, const struct cc_engine_options *opts,
                          bool yield, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    struct step *st = &s->steps[n];
    int in = m->input.tensor;
    bool forced = s->q8stem_mode.kind == CC_FUSED_ON;
    bool measure = s->q8stem_mode.kind == CC_FUSED_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    struct cc_q8_stem_desc d;
    if ((!forced && !measure) || !st->int8 || st->kind != STEP_XNN || node->inputs[0] != in ||
        s->places[in].type != STORE_F32 || !cc_q8_stem_from_node(m, node, &d))
        return true;
    if (!(st->q8stem = calloc(1, sizeof(*st->q8stem))))
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    if (!cc_q8_stem_init(st->q8stem, &d, s->q8stem_mode.isa, err))
        return false; // st->q8stem: freed by xnn_destroy
    st->q8stem->yield = yield;
    struct step own = {.kind = STEP_Q8STEM, .int8 = true, .q8stem = st->q8stem};
    bool keep = forced;
    if (!forced && s->remembered)
        keep = cc_xnn_remembered(s, n) == 'S';
    else if (!forced && !stem_faster(s, n, &own, &keep, err))
        return false;
    if (!keep) {
        cc_q8_stem_finish(st->q8stem);
        free(st->q8stem);
        st->q8stem = NULL;
        return true;
    }
    release_step(s, n);
    st->kind = STEP_Q8STEM;
    s->n_q8stem++;
    return true;
}

/* Makes node n's step our own 1x1 GEMM (f32_gemm.h) in place of what choose_gemm left (yield:
 * n's is the run's last operator), where it applies and n's input is stored f32: always with
 * CAMCLASS_CPU_PW on (or a kernel family); where the cache remembers it ('p'), or a layer of
 * the same shape before chose it; else (measured, not with a forced cpu_pointwise) where it is
 * faster than that step, min of 3 runs after a warm-up each. */
static bool choose_pw(struct xnn_state *s, int n, const struct cc_engine_options *opts, bool yield,
                      struct cc_error *err)
{
    const struct cc_model *m = s->model;
    const struct cc_node *node = &m->nodes[n];
    struct step *st = &s->steps[n];
    bool forced = s->pw_mode.kind == CC_STEM_ON;
    bool measure = s->pw_mode.kind == CC_STEM_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    const float *x = cc_xnn_state_values(s, node->inputs[0], STORE_F32);
    if ((!forced && !measure) || st->int8 || !x || !cc_f32_pw_applies(m, node))
        return true;
    struct cc_f32_pw *pw = calloc(1, sizeof(*pw));
    if (!pw)
        return cc_error_set(err, "cpu backend: out of memory for node \"%s\"", node->name);
    if (!cc_f32_pw_init_node(pw, m, node, s->pw_mode.isa, cc_xnn_pool_threads(s), err)) {
        free(pw);
        return false;
    }
    pw->x = x;
    pw->y = s->places[node->outputs[0]].data;
    pw->yield = yield;
    int twin = same_shape_before(s, n);
    bool keep = forced;
    if (!forced && s->remembered) {
        keep = cc_xnn_remembered(s, n) == 'p';
    } else if (!forced && twin >= 0) {
        keep = s->steps[twin].kind == STEP_PW;
    } else if (!forced) {
        struct step own = {.kind = STEP_PW, .pw = pw};
        keep = cc_xnn_faster(s, node, &own, NULL, st, NULL, 3);
    }
    if (!keep) {
        cc_f32_pw_finish(pw);
        free(pw);
        return true;
    }
    release_step(s, n);
    st->kind = STEP_PW;
    st->pw = pw;
    s->n_pw++;
    return true;
}

bool cc_xnn_steps_runs_last(const struct xnn_state *s, int n)
{
    const struct cc_model *m = s->model;
    for (int k = n; k < m->n_nodes; k++)
        if ((k > n && cc_xnn_op_row(m->nodes[k].op)->build) ||
            s->places[m->nodes[k].outputs[0]].want_other)
            return false;
    return true;
}

/* Whether f's nodes all run as f32 XNNPACK or BLIS steps (*int8 false), or all as int8
 * XNNPACK steps (*int8 true), with the block's tensors in that type, and its input and output
 * do not overlap (the planner may give the output the memory of an input that dies inside the
 * block). */
static bool fusable(const struct xnn_state *s, const struct cc_fused_match *f, bool *int8)
{
    const struct cc_model *m = s->model;
    *int8 = s->steps[f->first].int8;
    for (int k = f->first; k <= f->last; k++)
        if (s->steps[k].int8 != *int8 ||
            (s->steps[k].kind != STEP_XNN &&
             (*int8 ? s->steps[k].kind != STEP_Q8GEMM && s->steps[k].kind != STEP_Q8DW
                    : s->steps[k].kind != STEP_BLIS && s->steps[k].kind != STEP_PW)))
            return false;
    enum store type = *int8 ? STORE_QS8 : STORE_F32;
    const struct place *x = &s->places[f->x], *y = &s->places[f->y];
    const char *xb = x->data, *yb = y->data;
    size_t xn = m->tensors[f->x].count * cc_xnn_elem_size(type);
    size_t yn = m->tensors[f->y].count * cc_xnn_elem_size(type);
    return x->type == type && y->type == type && (xb + xn <= yb || yb + yn <= xb);
}

/* f's fused step (int8: from the model's int8 weights and quantizations), or NULL: not one
 * (then err is untouched) or an error (then false in *ok, err set). */
static struct fused_step *fused_step_new(struct xnn_state *s, struct cc_fused_match *f, bool *ok,
                                         struct cc_error *err)
{
    bool int8;
    struct cc_fq8_desc q;
    *ok = true;
    if (!fusable(s, f, &int8) || (int8 && !cc_fq8_from_match(s->model, f, &q)))
        return NULL;
    struct fused_step *fs = calloc(1, sizeof(*fs));
    int bands = (int)cc_xnn_pool_threads(s);
    if (!fs) {
        *ok = cc_error_set(err, "cpu backend: out of memory for a fused block");
        return NULL;
    }
    fs->int8 = int8;
    *ok = int8 ? cc_fq8_init(&fs->q, &q, cc_fq8_isa_best(), bands, err)
               : cc_fused_block_init(&fs->b, &f->d, cc_stem_isa_best(), bands, err);
    if (!*ok) {
        free(fs);
        return NULL;
    }
    fs->x = s->places[f->x].data;
    fs->y = s->places[f->y].data;
    fs->b.yield = fs->q.yield = cc_xnn_steps_runs_last(s, f->last);
    return fs;
}

/* Makes the block whose project conv is node p (fused_block.h, cc_fused_block_match) one
 * fused step at its last node, the others skipped, where it applies: always with
 * CAMCLASS_CPU_FUSED=on; where the cache remembers it ('f' for p); else (measured, not with a
 * forced cpu_pointwise) where it is faster than its steps (cc_xnn_fused_faster). */
static bool choose_fused(struct xnn_state *s, int p, const struct cc_engine_options *opts,
                         struct cc_error *err)
{
    bool forced = s->fused_mode == CC_FUSED_ON;
    bool measure = s->fused_mode == CC_FUSED_MEASURE &&
                   (!opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE);
    struct cc_fused_match f;
    if ((!forced && !measure) || !cc_fused_block_match(s->model, p, &f))
        return true;
    bool ok;
    struct fused_step *fs = fused_step_new(s, &f, &ok, err);
    cc_fused_match_free(&f);
    if (!fs)
        return ok;
    struct step st = {.kind = STEP_FUSED, .fused = fs};
    bool keep = forced;
    if (!forced && s->remembered) {
        keep = cc_xnn_remembered(s, p) == 'f';
    } else if (!forced) {
        keep = cc_xnn_fused_faster(s, &f, &st);
    }
    if (!keep) {
        cc_xnn_fused_step_finish(fs);
        free(fs);
        return true;
    }
    for (int k = f.first; k <= f.last; k++)
        release_step(s, k);
    s->steps[f.last] = st;
    s->n_fused++;
    return true;
}

/* Creates every node's operator (and the conversions after it) in run order; the last
 * operator of a run gets XNN_FLAG_YIELD_WORKERS. */
static bool build_steps(struct xnn_state *s, const struct cc_engine_options *opts,
                        struct cc_error *err)
{
    const struct cc_model *m = s->model;
    int in = m->input.tensor;
    // Which operator runs last: a node's own, or the conversion of its output after it.
    int last = -1;
    bool last_is_convert = false;
    for (int n = 0; n < m->n_nodes; n++) {
        if (cc_xnn_op_row(m->nodes[n].op)->build)
            last = n, last_is_convert = false;
        if (s->places[m->nodes[n].outputs[0]].want_other)
            last = n, last_is_convert = true;
    }
    if (s->places[in].want_other &&
        !cc_xnn_state_make_other(s, in, last < 0 ? XNN_FLAG_YIELD_WORKERS : 0, err))
        return false;
    for (int n = 0; n < m->n_nodes; n++) {
        cc_choice_watch_node(s->watch); // one node's candidates timed the same way
        const struct cc_node *node = &m->nodes[n];
        const struct cc_xnn_op_row *row = cc_xnn_op_row(node->op);
        struct step *st = &s->steps[n];
        enum store want = st->int8 ? STORE_QS8 : STORE_F32;
        if (row->layout) {
            st->kind = cc_xnn_state_reshape_moves(s, node) ? STEP_RELAYOUT : STEP_ALIAS;
        } else {
            struct cc_xnn_build b = {
                .model = m,
                .node = node,
                .int8 = st->int8,
                .out = s->places[node->outputs[0]].data,
                .scratch = s->scratch,
                .pool = s->pool,
                .flags = n == last && !last_is_convert ? XNN_FLAG_YIELD_WORKERS : 0,
                .err = err,
            };
            for (int i = 0; i < node->n_inputs; i++)
                b.in[i] = cc_xnn_state_values(s, node->inputs[i], want);
            st->kind = STEP_XNN;
            if (!row->build(&b, &st->work) || !choose_gemm(s, n, opts, err))
                return false;
            if (st->kind == STEP_BLIS) // as the XNNPACK operator it replaces would have
                st->gemm->yield = b.flags & XNN_FLAG_YIELD_WORKERS;
            bool yield = b.flags & XNN_FLAG_YIELD_WORKERS;
            if (!choose_pw(s, n, opts, yield, err) || !choose_direct(s, n, opts, yield, err) ||
                !choose_stem(s, n, opts, yield, err) || !choose_q8(s, n, opts, yield, err) ||
                !choose_q8stem(s, n, opts, yield, err) || !choose_q8dw(s, n, opts, yield, err))
                return false;
        }
        int out = node->outputs[0];
        uint32_t flags = n == last && last_is_convert ? XNN_FLAG_YIELD_WORKERS : 0;
        if (s->places[out].want_other && !cc_xnn_state_make_other(s, out, flags, err))
            return false;
    }
    return true;
}

/* build_steps with the measured BLIS/XNNPACK/stem choices remembered in the cache file, keyed
 * by the model hash, thread count, CPU and CAMCLASS_CPU_ISA: a later start with the same key times
 * nothing (that matters on a Pi or in an emulator, where timing 34 layers takes seconds). A file
 * that does not parse, or whose line does not fit the model, is measured again and rewritten; one
 * that cannot be written is not an error (the next start measures again). With CAMCLASS_CPU_STEM
 * set, the file is read but not written: a benchmark switching the stem leaves the other
 * layers' choices as the cache has them and the cache as it was. Timed on a crowded machine
 * (choice_watch.h), they serve this engine and are not written. */
bool cc_xnn_steps_build(struct xnn_state *s, const struct cc_engine_options *opts, int threads,
                        struct cc_error *err)
{
    struct xnn_choices c;
    if (!cc_xnn_choices_open(&c, s, opts, threads, err))
        return false;
    bool ok = build_steps(s, opts, err);
    for (int n = 0; ok && n < s->model->n_nodes; n++) {
        cc_choice_watch_node(s->watch);
        ok = choose_fused(s, n, opts, err);
    }
    cc_xnn_choices_close(&c, s, ok);
    return ok;
}
