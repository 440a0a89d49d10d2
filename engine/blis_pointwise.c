/* camclass — a 1x1 convolution over NHWC rows as BLIS GEMMs (see blis_pointwise.h).
 *
 * One BLIS thread per call (its per-call runtime object; no global BLIS setting): the tasks
 * are rows of pixels handed out by the backend's own pthreadpool, so there is one thread pool
 * in the process, not BLIS's OpenMP threads spinning beside pthreadpool's workers. */
#include <blis.h>

#include "blis_pointwise.h"

static void run_rows(void *ctx, size_t task)
{
    const struct cc_blis_pointwise *p = ctx;
    size_t r0 = task * p->rows;
    size_t rows = p->m - r0 < p->rows ? p->m - r0 : p->rows;
    rntm_t rntm;
    bli_rntm_init(&rntm);
    bli_rntm_set_num_threads(1, &rntm);
    float one = 1.0f, zero = 0.0f;
    // y[r0.., :] (rows, n) = x[r0.., :] (rows, k) times w^T (k, n): w read with row stride 1
    // and column stride k is w transposed.
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)rows, (dim_t)p->n, (dim_t)p->k, &one,
                 (float *)p->x + r0 * p->k, (inc_t)p->k, 1, (float *)p->w, 1, (inc_t)p->k, &zero,
                 p->y + r0 * p->n, (inc_t)p->n, 1, NULL, &rntm);
    for (size_t r = 0; r < rows; r++) {
        float *y = p->y + (r0 + r) * p->n;
        for (size_t o = 0; o < p->n; o++) {
            float v = y[o] + (p->bias ? p->bias[o] : 0.0f);
            v = v < p->act.min ? p->act.min : v;
            y[o] = v > p->act.max ? p->act.max : v;
        }
        if (p->act.kind != CC_ACT_CLAMP) // min/max are open: the loop above only added bias
            for (size_t o = 0; o < p->n; o++)
                y[o] = cc_act_apply(p->act, y[o]);
    }
}

void cc_blis_pointwise_run(const struct cc_blis_pointwise *p, pthreadpool_t pool)
{
    size_t tasks = (p->m + p->rows - 1) / p->rows;
    pthreadpool_parallelize_1d(pool, run_rows, (void *)p, tasks,
                               PTHREADPOOL_FLAG_DISABLE_DENORMALS);
}
