/* camclass-train --int8 — the trained model made int8 (see train_int8.h). */
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "input_tensor.h"
#include "train_int8.h"

struct cc_model *cc_train_int8_quantize(const struct cc_model *m, const struct cc_dataset *d,
                                        FILE *progress, struct cc_train_int8 *r, bool *bad_image,
                                        struct cc_error *err)
{
    *bad_image = false;
    size_t n_in = (size_t)m->tensors[m->input.tensor].count;
    float *x = malloc(n_in * sizeof(float));
    struct cc_calibration *c = x ? cc_calibration_new(m, err) : NULL;
    bool ok = c != NULL;
    if (!x)
        cc_error_set(err, "out of memory for a %zu-value input tensor", n_in);
    int todo = 0, done = 0;
    for (int i = 0; i < d->n_samples; i++)
        todo += !d->samples[i].held_out;
    for (int i = 0; ok && i < d->n_samples; i++) {
        const struct cc_sample *s = &d->samples[i];
        char what[128];
        if (s->held_out)
            continue;
        *bad_image = !cc_input_tensor_load(s->path, m, x, n_in, what, sizeof(what), err);
        ok = !*bad_image && cc_calibration_run(c, x, err);
        done += ok;
        if (progress && ok && done * 10 / todo != (done - 1) * 10 / todo)
            fprintf(progress, "camclass-train: int8 calibration, %d of %d images\n", done, todo);
    }
    r->calibration_images = done;
    struct cc_model *m8 = ok ? cc_calibration_quantize(c, NULL, err) : NULL;
    cc_calibration_destroy(c);
    free(x);
    return m8;
}

/* Index of the largest of n scores (the first on ties). */
static int top1(const float *v, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        best = v[i] > v[best] ? i : best;
    return (int)best;
}

bool cc_train_int8_measure(struct cc_model *m8, const struct cc_dataset *d,
                           const struct cc_engine_options *opts, const int *f32_pred,
                           struct cc_engine **engine, struct cc_train_int8 *r, struct cc_error *err)
{
    struct cc_engine_options o = *opts;
    o.backend = CC_BACKEND_CPU;
    o.notices = NULL;
    r->held = r->correct = r->agree = 0;
    struct cc_engine *e = *engine = cc_engine_create_from_model(m8, &o, err);
    if (!e)
        return false;
    snprintf(r->device, sizeof(r->device), "%s", cc_engine_device_name(e));
    size_t n_in = cc_engine_input_count(e), n_out = cc_engine_output_count(e);
    float *x = malloc(n_in * sizeof(float)), *y = malloc(n_out * sizeof(float));
    bool ok = x && y;
    if (!ok)
        cc_error_set(err, "out of memory for the int8 model's input and output");
    for (int i = 0; ok && i < d->n_samples; i++) {
        const struct cc_sample *s = &d->samples[i];
        char what[128];
        if (!s->held_out)
            continue;
        ok = cc_input_tensor_load(s->path, cc_engine_model(e), x, n_in, what, sizeof(what), err) &&
             cc_engine_run(e, x, y, err);
        int p = ok ? top1(y, n_out) : -1;
        r->correct += p == s->label;
        r->agree += p == f32_pred[r->held];
        r->held += ok;
    }
    free(x);
    free(y);
    return ok;
}
