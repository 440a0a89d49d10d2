/* camclass — an f32 convolution over NHWC activations as BLIS GEMMs (see blis_conv.h).
 *
 * One BLIS thread per call (its per-call runtime object; no global BLIS setting): the tasks
 * are rows of output pixels handed out by the backend's own pthreadpool, so there is one thread
 * pool in the process, not BLIS's OpenMP threads spinning beside pthreadpool's workers. Each
 * task gathers its own rows of patches (in its own slot of the wave's scratch), so tasks share
 * nothing but their inputs. */
#include <stdlib.h>
#include <string.h>

#include <blis.h>

#include "blis_conv.h"

bool cc_blis_conv_is_pointwise(const struct cc_model *m, const struct cc_node *node)
{
    const struct cc_tensor *w = &m->tensors[node->inputs[1]];
    const struct cc_conv2d_attrs *a = &node->attrs.conv;
    return w->shape[2] == 1 && w->shape[3] == 1 && a->stride[0] == 1 && a->stride[1] == 1 &&
           !a->pad[0] && !a->pad[1] && !a->pad[2] && !a->pad[3];
}

struct cc_blis_conv_split cc_blis_conv_split(const struct cc_model *m, const struct cc_node *node,
                                             size_t threads)
{
    const struct cc_tensor *w = &m->tensors[node->inputs[1]];
    const struct cc_tensor *y = &m->tensors[node->outputs[0]];
    size_t pixels = (size_t)(y->shape[2] * y->shape[3]), k = (size_t)(w->count / w->shape[0]);
    threads = threads ? threads : 1;
    size_t rows = threads == 1 ? pixels : (pixels + 4 * threads - 1) / (4 * threads);
    if (!cc_blis_conv_is_pointwise(m, node) && rows * k * threads > CC_BLIS_CONV_PATCH_BUDGET)
        rows = CC_BLIS_CONV_PATCH_BUDGET / (k * threads);
    rows = rows < 32 ? 32 : rows;
    struct cc_blis_conv_split s = {.rows = rows, .tasks = (pixels + rows - 1) / rows};
    s.wave = CC_BLIS_CONV_PATCH_BUDGET / (rows * k);
    s.wave = s.wave < threads ? threads : s.wave;
    s.wave = s.wave > s.tasks ? s.tasks : s.wave;
    return s;
}

size_t cc_blis_conv_patch_floats(const struct cc_model *m, const struct cc_node *node,
                                 size_t threads)
{
    if (cc_blis_conv_is_pointwise(m, node))
        return 0;
    const struct cc_tensor *w = &m->tensors[node->inputs[1]];
    struct cc_blis_conv_split s = cc_blis_conv_split(m, node, threads);
    return s.wave * s.rows * (size_t)(w->count / w->shape[0]);
}

void cc_blis_conv_pack_weights(const float *w, int n, int c, int kh, int kw, float *out)
{
    for (int o = 0; o < n; o++)
        for (int ky = 0; ky < kh; ky++)
            for (int kx = 0; kx < kw; kx++)
                for (int ch = 0; ch < c; ch++)
                    out[(((size_t)o * kh + ky) * kw + kx) * c + ch] =
                        w[(((size_t)o * c + ch) * kh + ky) * kw + kx];
}

/* Rows [p0, p0 + rows) of the patch matrix: output pixel p's taps (ky, kx), each the C input
 * values under it, zeros where the tap falls in the padding. */
static void gather(const struct cc_blis_conv *p, size_t p0, size_t rows, float *out)
{
    const struct cc_conv2d_attrs *a = &p->attrs;
    const size_t c = (size_t)p->c, k = (size_t)p->kh * p->kw * c;
    for (size_t r = 0; r < rows; r++) {
        int oy = (int)((p0 + r) / (size_t)p->wo), ox = (int)((p0 + r) % (size_t)p->wo);
        float *row = out + r * k;
        for (int ky = 0; ky < p->kh; ky++) {
            int iy = oy * a->stride[0] - a->pad[0] + ky * a->dilation[0];
            for (int kx = 0; kx < p->kw; kx++) {
                int ix = ox * a->stride[1] - a->pad[1] + kx * a->dilation[1];
                float *dst = row + ((size_t)ky * p->kw + kx) * c;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->wd)
                    memset(dst, 0, c * sizeof(float));
                else
                    memcpy(dst, p->x + ((size_t)iy * p->wd + ix) * c, c * sizeof(float));
            }
        }
    }
}

/* A pool call's context: tasks first .. first + wave of the convolution. */
struct wave {
    const struct cc_blis_conv *p;
    size_t first;
};

static void run_rows(void *ctx, size_t i)
{
    const struct wave *wv = ctx;
    const struct cc_blis_conv *p = wv->p;
    const size_t m = (size_t)p->ho * p->wo, n = (size_t)p->n;
    const size_t k = (size_t)p->kh * p->kw * p->c;
    size_t r0 = (wv->first + i) * p->split.rows;
    size_t rows = m - r0 < p->split.rows ? m - r0 : p->split.rows;
    const float *a = p->x + r0 * k; // a 1x1 convolution: the input rows themselves
    if (p->patches) {
        float *mine = p->patches + i * p->split.rows * k; // this task's slot in the wave
        gather(p, r0, rows, mine);
        a = mine;
    }
    rntm_t rntm;
    bli_rntm_init(&rntm);
    bli_rntm_set_num_threads(1, &rntm);
    float one = 1.0f, zero = 0.0f;
    // y[r0.., :] (rows, n) = a (rows, k) times w^T (k, n): w read with row stride 1 and column
    // stride k is w transposed.
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)rows, (dim_t)n, (dim_t)k, &one,
                 (float *)a, (inc_t)k, 1, (float *)p->w, 1, (inc_t)k, &zero, p->y + r0 * n,
                 (inc_t)n, 1, NULL, &rntm);
    for (size_t r = 0; r < rows; r++) {
        float *y = p->y + (r0 + r) * n;
        for (size_t o = 0; o < n; o++) {
            float v = y[o] + (p->bias ? p->bias[o] : 0.0f);
            v = v < p->act.min ? p->act.min : v;
            y[o] = v > p->act.max ? p->act.max : v;
        }
        if (p->act.kind != CC_ACT_CLAMP) // min/max are open: the loop above only added bias
            for (size_t o = 0; o < n; o++)
                y[o] = cc_act_apply(p->act, y[o]);
    }
}

void cc_blis_conv_run(const struct cc_blis_conv *p, pthreadpool_t pool)
{
    // A 1x1 convolution gathers nothing: all its tasks go in one call.
    size_t wave = p->patches ? p->split.wave : p->split.tasks;
    for (size_t first = 0; first < p->split.tasks; first += wave) {
        struct wave wv = {p, first};
        size_t count = p->split.tasks - first < wave ? p->split.tasks - first : wave;
        bool last = first + count >= p->split.tasks;
        pthreadpool_parallelize_1d(pool, run_rows, &wv, count,
                                   PTHREADPOOL_FLAG_DISABLE_DENORMALS |
                                       (last && p->yield ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
    }
}

bool cc_blis_conv_setup(struct cc_error *err)
{
    void *probe = malloc(CC_BLIS_SETUP_PROBE);
    if (!probe)
        return cc_error_set(err,
                            "out of memory setting up BLIS, the GEMM library (%zu KiB): "
                            "free memory or raise the process's memory limit",
                            CC_BLIS_SETUP_PROBE >> 10);
    free(probe);
    bli_init();
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
    rntm_t rntm;
    bli_rntm_init(&rntm);
    bli_rntm_set_num_threads(1, &rntm);
    float one = 1.0f, zero = 0.0f;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, 2, 2, 2, &one, a, 2, 1, b, 2, 1, &zero, c, 2,
                 1, NULL, &rntm);
    return true;
}
