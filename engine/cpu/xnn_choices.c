/* camclass — the CPU backend's layer-choice cache (see xnn_choices.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_file.h"
#include "cpu_info.h"
#include "xnn_choices.h"

bool cc_xnn_has_choice(const struct cc_node *n)
{
    return n->op == CC_OP_CONV2D || n->op == CC_OP_LINEAR;
}

char cc_xnn_remembered(const struct xnn_state *s, int n)
{
    if (!s->remembered)
        return 0;
    int i = 0; // n's index among the nodes that have a letter
    for (int k = 0; k < n; k++)
        i += cc_xnn_has_choice(&s->model->nodes[k]);
    return s->remembered[i];
}

int cc_xnn_direct_way(const struct cc_conv3x3 *p)
{
    return !p->wino ? 0 : p->wino_m == 4 ? 2 : 1;
}

/* The layer-choice cache's letter for a conv or linear's step: b BLIS, p our f32 1x1 GEMM,
 * d / w / v our k x k conv (direct, Winograd F(2x2), F(4x4)), s the f32 stem, q our int8 1x1
 * GEMM, S the int8 stem, e our int8 depthwise, f a fused block's, x XNNPACK's. */
static char step_letter(const struct step *st)
{
    switch (st->kind) {
    case STEP_PW:
        return 'p';
    case STEP_BLIS:
        return 'b';
    case STEP_DIRECT:
        return "dwv"[cc_xnn_direct_way(st->direct)];
    case STEP_STEM:
        return 's';
    case STEP_Q8GEMM:
        return 'q';
    case STEP_Q8STEM:
        return 'S';
    case STEP_Q8DW:
        return 'e';
    case STEP_FUSED:
    case STEP_SKIP:
        return 'f';
    default:
        return 'x';
    }
}

// The format: 2: every one-group conv, not only 1x1; 3: 's', the direct stem; 4: 'f', a fused
// block's conv; 5: int8 one-group convs too ('x' or 'f': the int8 fused block); 6: 'p', our own
// f32 1x1 GEMM; 7: 'f' also for blocks with hardswish, 5x5 depthwise or squeeze-excitation (a
// cache of 6 remembers them as layers); 8: 'd' and 'w', our own k x k conv (conv3x3.h), direct
// or Winograd; 9: 'q', our int8 1x1 GEMM, and a letter for every linear; 10: 'S', our int8
// stem (a cache of 9 remembers XNNPACK's for it, unmeasured), 'v', our own 3x3 conv as
// Winograd F(4x4, 3x3) ('w' stays F(2x2, 3x3)), 'p' also for 1x1 convs with hardswish (a cache
// of 9 remembers them as XNNPACK's), 'e', our int8 depthwise, and a letter for every
// convolution (depthwise and grouped too). It is in the default
// file's name as well as its header, so that builds of different formats sharing one cache
// folder keep a file each instead of rewriting one file at every start.
#define CHOICES_FORMAT "10"
#define CHOICE_LETTERS "bxsfpdwvqSe"
#define CHOICES_NAME "cpu-layer-choices-" CHOICES_FORMAT ".txt"
#define CHOICES_HEADER "camclass cpu layer choices " CHOICES_FORMAT "\n"

bool cc_xnn_choices_open(struct xnn_choices *c, struct xnn_state *s,
                         const struct cc_engine_options *opts, int threads, struct cc_error *err)
{
    const struct cc_model *m = s->model;
    bool measure = !opts || opts->cpu_pointwise == CC_CPU_POINTWISE_MEASURE;
    const char *cfg = opts ? opts->cpu_cache : NULL;
    enum cc_watch_mode crowd;
    *c = (struct xnn_choices){.notices = opts ? opts->notices : NULL};
    if (!cc_choice_watch_mode_parse(getenv("CAMCLASS_CPU_CROWDED"), &crowd, err))
        return false;
    cc_choice_watch_init(&c->watch, crowd, (int)cc_xnn_pool_threads(s));
    s->watch = &c->watch;
    c->path = !measure ? NULL
              : cfg    ? (cfg[0] ? strdup(cfg) : NULL)
                       : cc_cache_file_default(CHOICES_NAME);
    c->old = c->path ? cc_cache_lines_read(c->path, CHOICES_HEADER) : NULL;
    char cpu[160];
    // A ceiling on the own kernels (CAMCLASS_CPU_ISA) times other kernels: a key of its own.
    enum cc_cpu_isa_cap cap = cc_cpu_isa_cap();
    cc_cpu_describe(cpu, sizeof(cpu), threads,
                    cap == CC_CPU_ISA_AVX2 ? ", kernels <= avx2"
                    : cap == CC_CPU_ISA_C  ? ", kernels c"
                                           : "");
    snprintf(c->key, sizeof(c->key), "%016llx %s", (unsigned long long)cc_model_hash(m), cpu);
    for (int n = 0; n < m->n_nodes; n++)
        c->count += cc_xnn_has_choice(&m->nodes[n]);
    if (c->old && cc_cache_lines_find(c->old, c->key, c->got, sizeof(c->got)) &&
        (int)strlen(c->got) == c->count && strspn(c->got, CHOICE_LETTERS) == strlen(c->got))
        s->remembered = c->got;
    return true;
}

/* Whether every CAMCLASS_CPU_* way switch of s is "measure": only then is a line written. */
static bool all_measured(const struct xnn_state *s)
{
    return s->stem_mode.kind == CC_STEM_MEASURE && s->fused_mode == CC_FUSED_MEASURE &&
           s->pw_mode.kind == CC_STEM_MEASURE && s->direct_mode == CC_CONV3X3_MODE_MEASURE &&
           s->q8_mode == CC_FUSED_MEASURE && s->q8stem_mode.kind == CC_FUSED_MEASURE &&
           s->q8dw_mode.kind == CC_FUSED_MEASURE;
}

/* Whether the layers were timed on a quiet machine; else says why on c->notices. */
static bool timed_quiet(const struct xnn_choices *c)
{
    char why[192];
    if (cc_choice_watch_quiet(&c->watch, why, sizeof(why)))
        return true;
    if (c->notices)
        fprintf(c->notices,
                "camclass: cpu backend: layer choices not saved: the machine was busy while they "
                "were timed (%s); a quiet start times them again\n",
                why);
    return false;
}

void cc_xnn_choices_close(struct xnn_choices *c, struct xnn_state *s, bool built)
{
    const struct cc_model *m = s->model;
    if (built && c->path && c->count && !s->remembered && c->count < (int)sizeof(c->got) &&
        all_measured(s) && timed_quiet(c)) {
        int i = 0;
        for (int n = 0; n < m->n_nodes; n++)
            if (cc_xnn_has_choice(&m->nodes[n]))
                c->got[i++] = step_letter(&s->steps[n]);
        c->got[i] = '\0';
        struct cc_error ignored = {0};
        cc_cache_lines_store(c->path, CHOICES_HEADER, c->old, c->key, c->got, &ignored);
    }
    s->remembered = NULL;
    s->watch = NULL;
    free(c->old);
    free(c->path);
    c->old = c->path = NULL;
}
