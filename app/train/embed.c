/* camclass-train — feature vectors of a dataset's images (see embed.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "input_tensor.h"

/* xorshift64*, uniform in [lo, hi). */
static float uniform(uint64_t *s, float lo, float hi)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    uint64_t r = *s * 2685821657736338717ull;
    return lo + (hi - lo) * (float)((double)(r >> 11) / 9007199254740992.0);
}

/* One view's draws. */
struct view {
    int dx, dy;
    bool flip;
    float brightness, contrast, gain[3];
};

static struct view draw_view(uint64_t *s, int w, int h, bool flip)
{
    struct view v = {
        .dx = (int)lroundf(uniform(s, -0.08f, 0.08f) * (float)w),
        .dy = (int)lroundf(uniform(s, -0.08f, 0.08f) * (float)h),
        .flip = flip && uniform(s, 0, 1) < 0.5f,
        .brightness = uniform(s, -0.1f, 0.1f),
        .contrast = uniform(s, 0.8f, 1.2f),
    };
    for (int c = 0; c < 3; c++)
        v.gain[c] = uniform(s, 0.95f, 1.05f);
    return v;
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* y = view v of x, both [1, 3, h, w] normalized as the model's input spec says. */
static void apply_view(const struct cc_input_spec *in, const struct view *v, const float *x,
                       float *y, int h, int w)
{
    for (int c = 0; c < 3; c++) {
        const float *xc = x + (size_t)c * h * w;
        float *yc = y + (size_t)c * h * w;
        for (int r = 0; r < h; r++)
            for (int col = 0; col < w; col++) {
                int sc = v->flip ? w - 1 - col : col;
                int sr = clampi(r - v->dy, 0, h - 1);
                sc = clampi(sc - v->dx, 0, w - 1);
                float p = xc[(size_t)sr * w + sc] * in->std[c] + in->mean[c]; // in [0, 1]
                p = ((p - 0.5f) * v->contrast + 0.5f + v->brightness) * v->gain[c];
                p = fminf(fmaxf(p, 0.0f), 1.0f);
                yc[(size_t)r * w + col] = (p - in->mean[c]) / in->std[c];
            }
    }
}

bool cc_embed_dataset(struct cc_engine *backbone, const struct cc_dataset *d,
                      const struct cc_embed_options *o, float *features, bool *bad_image,
                      struct cc_error *err)
{
    *bad_image = false;
    const struct cc_model *m = cc_engine_model(backbone);
    const struct cc_tensor *t = &m->tensors[m->input.tensor];
    int h = (int)t->shape[2], w = (int)t->shape[3];
    size_t n_in = cc_engine_input_count(backbone), n_out = cc_engine_output_count(backbone);
    float *x = malloc(n_in * sizeof(float)), *y = malloc(n_in * sizeof(float));
    bool ok = x && y;
    if (!ok)
        cc_error_set(err, "out of memory for two %zu-value input tensors", n_in);
    uint64_t s = o->seed ? o->seed : 1;
    for (int i = 0; ok && i < d->n_samples; i++) {
        const struct cc_sample *smp = &d->samples[i];
        char what[128];
        *bad_image = !cc_input_tensor_load(smp->path, m, x, n_in, what, sizeof(what), err);
        ok = !*bad_image &&
             cc_engine_run(backbone, x, features + cc_embed_row(i, 0, o->augment) * n_out, err);
        for (int v = 1; ok && !smp->held_out && v <= o->augment; v++) {
            struct view view = draw_view(&s, w, h, o->flip);
            apply_view(&m->input, &view, x, y, h, w);
            ok = cc_engine_run(backbone, y, features + cc_embed_row(i, v, o->augment) * n_out,
                               err);
        }
        if (o->progress && (i + 1) * 10 / d->n_samples != i * 10 / d->n_samples)
            fprintf(o->progress, "camclass-train: features of %d of %d images\n", i + 1,
                    d->n_samples);
    }
    free(x);
    free(y);
    return ok;
}
