/* camclass — fused convert + resample + normalize (see preprocess.h, docs/PREPROCESSING.md).
 *
 * Two resamplers, as the bundle's resize spec says: PyTorch's bilinear without antialiasing
 * (the default, below) and PIL's bilinear with antialiasing (antialias.c; aa_* below).
 *
 * The bilinear resampling is separable and PyTorch evaluates it as
 *   out = h0·(w0·p00 + w1·p01) + h1·(w0·p10 + w1·p11)
 * i.e. horizontally first, then vertically. We do the same: for each source row an output row
 * needs, the horizontal pass fetches and converts only the two source pixels of each output
 * column (tap tables) into a planar float row; the vertical pass blends two such rows,
 * normalizes and writes the three output planes. A source row is converted at most once per
 * frame while consecutive output rows share it (a two-row cache), and source pixels that no
 * tap touches are never read.
 *
 * With antialiasing each output reads k source pixels per axis (k ≈ 2·scale), and PIL
 * rounds the horizontal pass to bytes before the vertical one: each source row the crop window
 * needs is converted once (YUYV, NV12: over the span its taps touch) and resampled
 * horizontally into a byte row, lazily as the output rows come to need it; each output row is
 * then the vertical pass over k of those rows, fused with normalization.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antialias.h"
#include "convert.h"
#include "decode.h"
#include "preprocess.h"

/* Taps of one axis: output position o blends source positions i0[o], i1[o] with weights
 * w0[o], w1[o] (w0 + w1 = 1, computed as PyTorch does). */
struct taps {
    int *i0, *i1;   // (n) source indices
    float *w0, *w1; // (n) weights
    int n;
};

struct cc_preprocess {
    // Geometry the tap tables were built for (valid when have_geometry).
    bool have_geometry;
    struct cc_preprocess_geometry geo;
    enum cc_resize_policy policy;
    int resize_size;
    bool antialias;     // which of the two tap sets below is built
    struct taps tx, ty; // (out_w), (out_h); without antialias
    int tap_cap_x, tap_cap_y;

    // With antialias: the tap tables (antialias.h) and the horizontally resampled source rows
    // ay.lo … ay.hi − 1, each (3, out_w) planar bytes (R, G, B; GREY: R only).
    struct cc_antialias_taps ax, ay;
    uint8_t *aa_rows;
    size_t aa_rows_cap;

    // Two horizontally resampled source rows, each planar (3, out_w); row_src[k] is the
    // source row held by rows[k], or -1.
    float *rows[2];
    int row_src[2];
    int row_cap;

    // YUYV/NV12: the touched span of the current source row converted to RGB, planar
    // (3, planar_cap) bytes; see hrow().
    uint8_t *planar;
    int planar_cap;

    struct cc_image jpeg; // decoded MJPEG frame (RGB)
};

// Internal pixel layout: a source row already converted to planar R, G, B bytes.
#define PIX_PLANAR_RGB CC_PIX_COUNT

/* ---------------------------------------------------------------------------------------- */
/* Geometry and tap tables                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Python's int(round(d / 2.0)) for d >= 0: round half to even. */
static int half_round_even(int d)
{
    int h = d / 2;
    return h + ((d & 1) && (h & 1));
}

bool cc_preprocess_geometry(int in_w, int in_h, const struct cc_input_spec *spec, int out_w,
                            int out_h, struct cc_preprocess_geometry *g, struct cc_error *err)
{
    if (in_w <= 0 || in_h <= 0 || out_w <= 0 || out_h <= 0)
        return cc_error_set(err, "preprocess: frame %dx%d or tensor %dx%d has no pixels", in_w,
                            in_h, out_w, out_h);
    struct cc_roi_rect src;
    if (!cc_roi_rect(&spec->roi, in_w, in_h, &src, err))
        return false;
    *g = (struct cc_preprocess_geometry){.in_w = in_w,
                                         .in_h = in_h,
                                         .src = src,
                                         .out_w = out_w,
                                         .out_h = out_h,
                                         .resized_w = out_w,
                                         .resized_h = out_h};
    if (spec->resize == CC_RESIZE_SQUASH)
        return true;
    int s = spec->resize_size;
    if (s < out_w || s < out_h)
        return cc_error_set(err,
                            "preprocess: center_crop size %d is smaller than the %dx%d input; "
                            "the bundle's resize.size must be >= max(H, W)",
                            s, out_w, out_h);
    // torchvision Resize(S): the shorter side becomes S, the longer int(S * long / short)
    // (Python: integer product, true division in double, truncation).
    long long s_long;
    in_w = src.w, in_h = src.h; // the resize sees the ROI only
    if (in_w <= in_h) {
        s_long = (long long)((double)((long long)s * in_h) / in_w);
        g->resized_w = s;
        g->resized_h = s_long > (1 << 24) ? (1 << 24) : (int)s_long;
    } else {
        s_long = (long long)((double)((long long)s * in_w) / in_h);
        g->resized_h = s;
        g->resized_w = s_long > (1 << 24) ? (1 << 24) : (int)s_long;
    }
    g->crop_x = half_round_even(g->resized_w - out_w);
    g->crop_y = half_round_even(g->resized_h - out_h);
    return true;
}

/* PyTorch's compute_source_index_and_lambda (UpSample.h) for align_corners=False, linear:
 * scale = float(in) / resized (float); src = scale · (d + 0.5) − 0.5 (double) clamped at 0;
 * i0 = trunc(src), i1 = i0 + (i0 < in − 1), w1 = src − i0, w0 = 1 − w1. Same size: identity.
 * The indices are then moved by `offset`, the ROI's first column or row in the frame. */
static void taps_compute(struct taps *t, int in, int resized, int crop, int offset)
{
    float scale = (float)in / (float)resized;
    for (int o = 0; o < t->n; o++) {
        int d = crop + o;
        if (resized == in) {
            t->i0[o] = t->i1[o] = d + offset;
            t->w0[o] = 1.0f;
            t->w1[o] = 0.0f;
            continue;
        }
        // The scale is a float but the source position is formed in double (PyTorch's
        // dst_index + 0.5 is a double); the fraction is rounded to float only at the end.
        // Checked weight for weight against F.interpolate by test_preprocess.
        double src = (double)scale * ((double)d + 0.5) - 0.5;
        if (src < 0.0)
            src = 0.0;
        int i0 = (int)src;
        t->i0[o] = i0 + offset;
        t->i1[o] = i0 + (i0 < in - 1 ? 1 : 0) + offset;
        float l1 = fminf(fmaxf((float)(src - i0), 0.0f), 1.0f);
        t->w1[o] = l1;
        t->w0[o] = 1.0f - l1;
    }
}

static bool taps_reserve(struct taps *t, int *cap, int n)
{
    if (n > *cap) {
        int *i0 = realloc(t->i0, sizeof(int) * n);
        if (i0)
            t->i0 = i0;
        int *i1 = realloc(t->i1, sizeof(int) * n);
        if (i1)
            t->i1 = i1;
        float *w0 = realloc(t->w0, sizeof(float) * n);
        if (w0)
            t->w0 = w0;
        float *w1 = realloc(t->w1, sizeof(float) * n);
        if (w1)
            t->w1 = w1;
        if (!i0 || !i1 || !w0 || !w1)
            return false;
        *cap = n;
    }
    t->n = n;
    return true;
}

static void taps_finish(struct taps *t)
{
    free(t->i0);
    free(t->i1);
    free(t->w0);
    free(t->w1);
}

/* Antialiased taps of outputs crop … crop + n − 1 of a ROI of `in` pixels starting at source
 * position `offset`: the ROI's taps, moved to the frame's positions. */
static bool aa_taps_build(struct cc_antialias_taps *t, int offset, int in, int resized, int crop,
                          int n)
{
    if (!cc_antialias_taps_build(t, in, resized, crop, n))
        return false;
    for (int o = 0; o < t->n; o++)
        t->first[o] += offset;
    t->lo += offset;
    t->hi += offset;
    return true;
}

/* Rebuilds the tap tables and row buffers when the geometry (ROI included) changed. */
static bool prepare_geometry(struct cc_preprocess *pp, int in_w, int in_h,
                             const struct cc_input_spec *spec, int out_w, int out_h,
                             struct cc_error *err)
{
    struct cc_preprocess_geometry g;
    if (!cc_preprocess_geometry(in_w, in_h, spec, out_w, out_h, &g, err)) {
        pp->have_geometry = false;
        return false;
    }
    if (pp->have_geometry && memcmp(&g, &pp->geo, sizeof(g)) == 0 && pp->policy == spec->resize &&
        (spec->resize == CC_RESIZE_SQUASH || pp->resize_size == spec->resize_size) &&
        pp->antialias == spec->antialias)
        return true;
    pp->have_geometry = false;
    if (spec->antialias) {
        if (!aa_taps_build(&pp->ax, g.src.x, g.src.w, g.resized_w, g.crop_x, out_w) ||
            !aa_taps_build(&pp->ay, g.src.y, g.src.h, g.resized_h, g.crop_y, out_h))
            return cc_error_set(err, "preprocess: out of memory for %dx%d tap tables", out_w,
                                out_h);
        size_t need = (size_t)(pp->ay.hi - pp->ay.lo) * 3 * (size_t)out_w;
        if (need > pp->aa_rows_cap) {
            uint8_t *r = realloc(pp->aa_rows, need);
            if (!r)
                return cc_error_set(err, "preprocess: out of memory for %d resampled rows",
                                    pp->ay.hi - pp->ay.lo);
            pp->aa_rows = r;
            pp->aa_rows_cap = need;
        }
    } else if (!taps_reserve(&pp->tx, &pp->tap_cap_x, out_w) ||
               !taps_reserve(&pp->ty, &pp->tap_cap_y, out_h)) {
        return cc_error_set(err, "preprocess: out of memory for %dx%d tap tables", out_w, out_h);
    }
    int planar_w = in_w + 1; // whole pairs of an odd width
    if (planar_w > pp->planar_cap) {
        uint8_t *p = realloc(pp->planar, 3 * (size_t)planar_w);
        if (!p)
            return cc_error_set(err, "preprocess: out of memory for a %d-pixel row", in_w);
        pp->planar = p;
        pp->planar_cap = planar_w;
    }
    if (out_w > pp->row_cap) {
        for (int k = 0; k < 2; k++) {
            float *r = realloc(pp->rows[k], sizeof(float) * 3 * (size_t)out_w);
            if (!r)
                return cc_error_set(err, "preprocess: out of memory for row buffers");
            pp->rows[k] = r;
        }
        pp->row_cap = out_w;
    }
    if (!spec->antialias) {
        taps_compute(&pp->tx, g.src.w, g.resized_w, g.crop_x, g.src.x);
        taps_compute(&pp->ty, g.src.h, g.resized_h, g.crop_y, g.src.y);
    }
    pp->geo = g;
    pp->policy = spec->resize;
    pp->resize_size = spec->resize_size;
    pp->antialias = spec->antialias;
    pp->have_geometry = true;
    return true;
}

struct cc_preprocess *cc_preprocess_create(struct cc_error *err)
{
    struct cc_preprocess *pp = calloc(1, sizeof(*pp));
    if (!pp)
        cc_error_set(err, "preprocess: out of memory");
    return pp;
}

void cc_preprocess_destroy(struct cc_preprocess *pp)
{
    if (!pp)
        return;
    taps_finish(&pp->tx);
    taps_finish(&pp->ty);
    cc_antialias_taps_finish(&pp->ax);
    cc_antialias_taps_finish(&pp->ay);
    free(pp->aa_rows);
    free(pp->rows[0]);
    free(pp->rows[1]);
    free(pp->planar);
    cc_image_finish(&pp->jpeg);
    free(pp);
}

/* ---------------------------------------------------------------------------------------- */
/* Pixel fetch per format                                                                   */
/* ---------------------------------------------------------------------------------------- */

// Layout of the source pixels, after MJPEG decoding (fmt is never MJPEG here).
struct source {
    enum cc_pixfmt fmt;
    const uint8_t *data; // first plane
    const uint8_t *uv;   // NV12 chroma plane, else NULL
    int stride;          // bytes per row of both planes
    int w, h;
};

/* Source pixel x of a row as R, G, B. row points at the packed row, or, for PIX_PLANAR_RGB
 * (YUYV and NV12 rows after conversion, see hrow), at the R plane, G and B following `plane`
 * bytes apart each. */
static inline __attribute__((always_inline)) void fetch(int fmt, const uint8_t *row, size_t plane,
                                                        int x, int rgb[3])
{
    switch (fmt) {
    case PIX_PLANAR_RGB:
        rgb[0] = row[x];
        rgb[1] = row[plane + x];
        rgb[2] = row[2 * plane + x];
        break;
    case CC_PIX_RGB24:
        rgb[0] = row[3 * x];
        rgb[1] = row[3 * x + 1];
        rgb[2] = row[3 * x + 2];
        break;
    case CC_PIX_BGR24:
        rgb[0] = row[3 * x + 2];
        rgb[1] = row[3 * x + 1];
        rgb[2] = row[3 * x];
        break;
    case CC_PIX_GREY:
        rgb[0] = rgb[1] = rgb[2] = row[x];
        break;
    default: // not reached: YUYV and NV12 come as PIX_PLANAR_RGB
        rgb[0] = rgb[1] = rgb[2] = 0;
        break;
    }
}

/* The horizontal pass of one row into dst (planar R, G, B rows of tx->n floats):
 * dst[c][o] = p(i0)·w0 + p(i1)·w1, as PyTorch's inner interpolation. Inlined once per format
 * by hrow() so that the per-pixel switch disappears. */
static inline __attribute__((always_inline)) void
hrow_core(int fmt, const uint8_t *row, size_t plane, const struct taps *tx, float *dst)
{
    int n = tx->n;
    float *r = dst, *g = dst + n, *b = dst + 2 * n;
    for (int o = 0; o < n; o++) {
        int p0[3], p1[3];
        fetch(fmt, row, plane, tx->i0[o], p0);
        fetch(fmt, row, plane, tx->i1[o], p1);
        float w0 = tx->w0[o], w1 = tx->w1[o];
        r[o] = (float)p0[0] * w0 + (float)p1[0] * w1;
        g[o] = (float)p0[1] * w0 + (float)p1[1] * w1;
        b[o] = (float)p0[2] * w0 + (float)p1[2] * w1;
    }
}

/* Horizontal pass of source row y. YUYV and NV12 rows are first converted, over the span of
 * pairs the taps touch, to planar RGB in a vectorized loop (convert.h) — faster than
 * converting each tap on its own, and bit-identical; the other formats are fetched directly. */
static void hrow(struct cc_preprocess *pp, const struct source *s, int y, float *dst)
{
    const struct taps *tx = &pp->tx;
    const uint8_t *row = s->data + (size_t)y * s->stride;
    const uint8_t *uvrow = s->uv ? s->uv + (size_t)(y >> 1) * s->stride : NULL;
    size_t plane = (size_t)pp->planar_cap;
    uint8_t *pr = pp->planar, *pg = pr + plane, *pb = pg + plane;
    // Taps are monotonic: the span is [i0 of the first column, i1 of the last].
    int pair0 = tx->i0[0] >> 1, pair1 = (tx->i1[tx->n - 1] >> 1) + 1;
    switch (s->fmt) {
    case CC_PIX_RGB24:
        hrow_core(CC_PIX_RGB24, row, 0, tx, dst);
        break;
    case CC_PIX_BGR24:
        hrow_core(CC_PIX_BGR24, row, 0, tx, dst);
        break;
    case CC_PIX_GREY:
        hrow_core(CC_PIX_GREY, row, 0, tx, dst);
        break;
    case CC_PIX_YUYV:
        cc_yuyv_row_to_planar(row, pair0, pair1, pr, pg, pb);
        hrow_core(PIX_PLANAR_RGB, pr, plane, tx, dst);
        break;
    case CC_PIX_NV12:
        cc_nv12_row_to_planar(row, uvrow, pair0, pair1, pr, pg, pb);
        hrow_core(PIX_PLANAR_RGB, pr, plane, tx, dst);
        break;
    default:
        break;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* With antialias: PIL's bilinear (antialias.h)                                             */
/* ---------------------------------------------------------------------------------------- */

/* Horizontal pass of source row y into dst: (3, out_w) planar bytes R, G, B (GREY: the R plane
 * only; the vertical pass reads it for all three channels). Packed formats are read in place;
 * YUYV and NV12 rows are first converted over the span of pairs the taps touch. */
static void aa_hrow(struct cc_preprocess *pp, const struct source *s, int y, uint8_t *dst)
{
    const struct cc_antialias_taps *tx = &pp->ax;
    const uint8_t *row = s->data + (size_t)y * s->stride;
    size_t n = (size_t)tx->n, plane = (size_t)pp->planar_cap;
    uint8_t *pr = pp->planar, *pg = pr + plane, *pb = pg + plane;
    int pair0 = tx->lo >> 1, pair1 = ((tx->hi - 1) >> 1) + 1;
    switch (s->fmt) {
    case CC_PIX_RGB24:
        cc_antialias_hpass_packed3(tx, row, dst, dst + n, dst + 2 * n);
        break;
    case CC_PIX_BGR24:
        cc_antialias_hpass_packed3(tx, row, dst + 2 * n, dst + n, dst);
        break;
    case CC_PIX_GREY:
        cc_antialias_hpass(tx, row, dst);
        break;
    case CC_PIX_YUYV:
    case CC_PIX_NV12:
        if (s->fmt == CC_PIX_YUYV)
            cc_yuyv_row_to_planar(row, pair0, pair1, pr, pg, pb);
        else
            cc_nv12_row_to_planar(row, s->uv + (size_t)(y >> 1) * s->stride, pair0, pair1, pr, pg,
                                  pb);
        cc_antialias_hpass_planar3(tx, pr, pg, pb, dst, dst + n, dst + 2 * n);
        break;
    default:
        break;
    }
}

/* The whole antialiased frame: each output row's vertical pass over the k horizontally
 * resampled source rows it needs (made when first needed, each once), normalized into the
 * three planes of out. from, scale, bias as in cc_preprocess. */
static void aa_frame(struct cc_preprocess *pp, const struct source *s, const int from[3],
                     const float scale[3], const float bias[3], float *out)
{
    const struct cc_antialias_taps *ty = &pp->ay;
    int out_w = pp->ax.n, out_h = ty->n;
    size_t stride = 3 * (size_t)out_w, plane = (size_t)out_w * out_h;
    bool grey = s->fmt == CC_PIX_GREY;
    int done = ty->lo; // source rows below this one are resampled
    for (int oy = 0; oy < out_h; oy++) {
        int first = ty->first[oy];
        for (; done < first + ty->k; done++)
            aa_hrow(pp, s, done, pp->aa_rows + (size_t)(done - ty->lo) * stride);
        const uint8_t *rows = pp->aa_rows + (size_t)(first - ty->lo) * stride;
        for (int c = 0; c < 3; c++)
            cc_antialias_vpass(ty, oy, rows + (size_t)(grey ? 0 : from[c]) * out_w, stride, out_w,
                               scale[c], bias[c], out + c * plane + (size_t)oy * out_w);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Frame checks and the fused pass                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Fills s from a raw (non-MJPEG) frame after checking that its buffer holds every pixel. */
static bool source_from_frame(const struct cc_frame *in, struct source *s, struct cc_error *err)
{
    if (!cc_frame_check(in, "preprocess", err))
        return false;
    size_t h = (size_t)in->height, stride = (size_t)in->stride;
    *s = (struct source){
        .fmt = in->format, .data = in->data, .stride = in->stride, .w = in->width, .h = in->height};
    if (in->format == CC_PIX_NV12)
        s->uv = in->data + h * stride;
    return true;
}

/* Returns the resampled row of source row y, converting it into a free row buffer unless one
 * of the two already holds it. keep is the source row the current output row also needs. */
static const float *get_row(struct cc_preprocess *pp, const struct source *s, int y, int keep)
{
    for (int k = 0; k < 2; k++)
        if (pp->row_src[k] == y)
            return pp->rows[k];
    int k = pp->row_src[0] == keep ? 1 : 0;
    hrow(pp, s, y, pp->rows[k]);
    pp->row_src[k] = y;
    return pp->rows[k];
}

bool cc_preprocess(struct cc_preprocess *pp, const struct cc_frame *in,
                   const struct cc_input_spec *spec, int out_w, int out_h, float *out_nchw,
                   struct cc_error *err)
{
    struct source s = {0};
    if (in->format == CC_PIX_MJPEG) {
        char name[64];
        snprintf(name, sizeof(name), "MJPEG frame %llu", (unsigned long long)in->sequence);
        if (!in->data || !cc_decode_jpeg(in->data, in->size, name, &pp->jpeg, err))
            return in->data ? false : cc_error_set(err, "preprocess: %s has no data", name);
        s = (struct source){.fmt = CC_PIX_RGB24,
                            .data = pp->jpeg.pixels,
                            .stride = pp->jpeg.width * 3,
                            .w = pp->jpeg.width,
                            .h = pp->jpeg.height};
    } else if (!source_from_frame(in, &s, err)) {
        return false;
    }
    if (!prepare_geometry(pp, s.w, s.h, spec, out_w, out_h, err))
        return false;

    // Per model channel c: the RGB plane it takes and x/255 → (x − mean)/std as one multiply-add.
    int from[3];
    float scale[3], bias[3];
    for (int c = 0; c < 3; c++) {
        from[c] = spec->color == CC_COLOR_RGB ? c : 2 - c;
        scale[c] = 1.0f / (255.0f * spec->std[c]);
        bias[c] = -spec->mean[c] / spec->std[c];
    }
    if (spec->antialias) {
        aa_frame(pp, &s, from, scale, bias, out_nchw);
        return true;
    }
    pp->row_src[0] = pp->row_src[1] = -1;
    size_t plane = (size_t)out_w * out_h;
    for (int oy = 0; oy < out_h; oy++) {
        int y0 = pp->ty.i0[oy], y1 = pp->ty.i1[oy];
        const float *r0 = get_row(pp, &s, y0, y1);
        const float *r1 = get_row(pp, &s, y1, y0);
        float h0 = pp->ty.w0[oy], h1 = pp->ty.w1[oy];
        for (int c = 0; c < 3; c++) {
            const float *a = r0 + (size_t)from[c] * out_w, *b = r1 + (size_t)from[c] * out_w;
            float *dst = out_nchw + c * plane + (size_t)oy * out_w;
            float sc = scale[c], bi = bias[c];
            for (int o = 0; o < out_w; o++)
                dst[o] = (a[o] * h0 + b[o] * h1) * sc + bi;
        }
    }
    return true;
}
