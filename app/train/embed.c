/* camclass-train — feature vectors of a dataset's images (see embed.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "file_hash.h"
#include "input_tensor.h"
#include "thumbnail.h"

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

/* The seed of view v of the picture whose SHA-256 is sha: from the run's seed, the picture's
 * bytes and v only (splitmix64 over them). */
static uint64_t view_seed(uint64_t seed, const char *sha, int v)
{
    uint64_t h = seed ^ ((uint64_t)v * 0x9e3779b97f4a7c15ull);
    for (const char *p = sha; *p; p++)
        h = (h ^ (uint64_t)(unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return (h ^ (h >> 31)) | 1;
}

/* Views [have, want) of picture i into its rows and its thumbnail into thumb, from its
 * preprocessed tensor x (loaded here). False with err; *bad_image when the picture does not
 * decode. */
static bool compute_views(struct cc_engine *e, const struct cc_embed_options *o,
                          const struct cc_sample *smp, const char *sha, float *x, float *y,
                          float *thumb, float *rows, int have, int want, bool *bad_image,
                          struct cc_error *err)
{
    const struct cc_model *m = cc_engine_model(e);
    const struct cc_tensor *t = &m->tensors[m->input.tensor];
    int h = (int)t->shape[2], w = (int)t->shape[3];
    size_t n_in = cc_engine_input_count(e), n_out = cc_engine_output_count(e);
    char what[128];
    if (!(*bad_image = !cc_input_tensor_load(smp->path, m, x, n_in, what, sizeof(what), err)))
        cc_thumbnail_of_tensor(&m->input, x, h, w, thumb);
    if (!*bad_image)
        for (int v = have; v < want; v++) {
            const float *in = x;
            if (v > 0) {
                uint64_t s = view_seed(o->seed, sha, v);
                struct view view = draw_view(&s, w, h, o->flip);
                apply_view(&m->input, &view, x, y, h, w);
                in = y;
            }
            if (!cc_engine_run(e, in, rows + (size_t)v * n_out, err))
                return false;
        }
    return !*bad_image;
}

bool cc_embed_dataset(struct cc_engine *backbone, const struct cc_dataset *d,
                      const struct cc_embed_options *o, float *features, float *thumbs,
                      bool *bad_image, struct cc_embed_stats *stats, struct cc_error *err)
{
    *bad_image = false;
    *stats = (struct cc_embed_stats){0};
    size_t n_in = cc_engine_input_count(backbone), n_out = cc_engine_output_count(backbone);
    float *x = malloc(n_in * sizeof(float)), *y = malloc(n_in * sizeof(float));
    bool ok = x && y;
    if (!ok)
        cc_error_set(err, "out of memory for two %zu-value input tensors", n_in);
    for (int i = 0; ok && i < d->n_samples; i++) {
        const struct cc_sample *smp = &d->samples[i];
        float *rows = features + cc_embed_row(i, 0, o->augment) * n_out;
        float *thumb = thumbs + (size_t)i * CC_THUMB_CELLS;
        int want = smp->held_out ? 1 : 1 + o->augment, have = 0;
        char sha[65];
        if (!(ok = cc_sha256_file(smp->path, sha, err))) {
            *bad_image = true;
            break;
        }
        if (o->cache)
            have = cc_feature_cache_get(o->cache, sha, thumb, rows, want);
        stats->cached += have;
        if (have < want) {
            ok =
                compute_views(backbone, o, smp, sha, x, y, thumb, rows, have, want, bad_image, err);
            stats->computed += want - have;
            if (ok && o->cache)
                cc_feature_cache_put(o->cache, sha, thumb, rows, want);
        }
        if (o->progress && (i + 1) * 10 / d->n_samples != i * 10 / d->n_samples)
            fprintf(o->progress, "camclass-train: features of %d of %d images\n", i + 1,
                    d->n_samples);
    }
    free(x);
    free(y);
    return ok;
}
