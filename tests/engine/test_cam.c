/* camclass — the engine's tap and class activation maps (engine.h cc_engine_tap_read, cam.h).
 *
 *     test_cam FP32_BUNDLE INT8_BUNDLE [ZOO_BUNDLE...]
 *
 * 1. A model built here whose answer depends on one quadrant of the picture: a 1x1 stride-2
 *    convolution passing R, G, B through a ReLU (the feature map F, [1, 3, 8, 8]), global
 *    average pooling, a linear classifier of 3 classes. The picture is grey with a red
 *    top-right quadrant, a green bottom-left and a blue bottom-right one; the classifier's
 *    biases make class 0 (W row [1, 0, 0]: red) win. Its map must be bright (> 0.9) in the
 *    top-right quadrant and dark (< 0.5) in the others, on every backend. The weights are
 *    chosen so that the wrong row (class 1: green) or W transposed (column 0: [1, 0, 3], blue)
 *    light up another quadrant.
 * 2. The tapped feature map of whole networks (FP32_BUNDLE: the random mobilenet_v2; the same
 *    with int8 weights and activations) on cpu and vulkan against ref, memory poisoned (a
 *    value the run did not write reads as NaN / -128): f32 within 1e-4 x max |ref|. The CPU
 *    backend's int8 feature map (int8 activations put it far from ref's f32 one on this random
 *    model and input: cosine ~0.85, printed) must be on its int8 grid, dequantized, and be what
 *    its answer was computed from: on every backend, the classifier applied in f32 to the tap
 *    (global average, W, bias) gives the backend's own scores within a cosine of 0.99.
 *    The same for the torchvision zoo's bundles given after them, whose maps exist where their
 *    classifier is one linear on the pooled features (not mobilenet_v3, not squeezenet).
 * 3. Refusals: a tap that is no activation, a read without a tap or before a run, a model
 *    without pooling before its classifier (one line each).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cam.h"
#include "engine.h"
#include "testutil.h"

#define TOLERANCE 1e-4     // f32 tap vs ref, relative to max |ref|
#define MIN_AGREEMENT 0.99 // a backend's scores vs the classifier on its own tap
#define SIDE 16            // the quadrant model's input side; F is SIDE/2

/* Every backend; Vulkan also through host staging buffers, as on a discrete GPU (the tap is then
 * copied out after the output). */
static const struct backend {
    const char *name;
    enum cc_backend_kind kind;
    bool staging;
} backends[] = {
    {"ref", CC_BACKEND_REF, false},
    {"cpu", CC_BACKEND_CPU, false},
    {"vulkan", CC_BACKEND_VULKAN, false},
    {"vulkan-staging", CC_BACKEND_VULKAN, true},
};
enum { N_BACKENDS = sizeof(backends) / sizeof(backends[0]) };

static struct cc_engine_options options(const struct backend *b, const char *tap)
{
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = b->kind;
    opt.vk_staging = b->staging;
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opt.pipeline_cache = "";
    opt.cpu_cache = "";
    opt.tap = tap;
    return opt;
}

/* ---------------------------------------------------------------------------------------- */
/* The quadrant model                                                                        */

static int add(struct cc_model *m, const char *name, int ndim, const int64_t *shape,
               const float *data, struct cc_error *err)
{
    return cc_model_add_tensor(m, name, CC_DTYPE_F32, ndim, shape, data, err);
}

/* A 1x1 convolution of 3 channels with weight scale * identity and a ReLU, x -> a new tensor
 * [1, 3, side/stride, side/stride] named name. Returns it, or -1. */
static int conv(struct cc_model *m, const char *name, int x, int side, int stride, float scale,
                struct cc_error *err)
{
    float eye[9] = {scale, 0, 0, 0, scale, 0, 0, 0, scale};
    char wname[64];
    snprintf(wname, sizeof(wname), "%s.w", name);
    int64_t s_y[4] = {1, 3, side / stride, side / stride}, s_w[4] = {3, 3, 1, 1};
    int y = add(m, name, 4, s_y, NULL, err), w = add(m, wname, 4, s_w, eye, err);
    union cc_attrs attrs = {.conv = {{stride, stride}, {0, 0, 0, 0}, {1, 1}, 1}};
    int in[2] = {x, w};
    if (y < 0 || w < 0 ||
        cc_model_add_node(m, CC_OP_CONV2D, name, 2, in, 1, &y, &attrs, cc_act_relu(), err) < 0)
        return -1;
    return y;
}

/* input -> "features" (R, G, B at stride 2) -> n_more convolutions doubling it -> pooling ->
 * flatten -> linear. Later layers may reuse the memory of "features" unless it is tapped. */
static struct cc_model *quadrant_model(int n_more, struct cc_error *err)
{
    static const float w[9] = {1, 0, 0, 0, 1, 0, 3, 0, 1}; // rows: classes; columns: R, G, B
    static const float b[3] = {0, -5, -10};
    struct cc_model *m = cc_model_new("quadrant");
    int64_t s_in[4] = {1, 3, SIDE, SIDE}, s_p[4] = {1, 3, 1, 1}, s_v[2] = {1, 3}, s_w[2] = {3, 3};
    int64_t s_b[1] = {3};
    int x = add(m, "input", 4, s_in, NULL, err);
    int f = conv(m, "features", x, SIDE, 2, 1, err);
    for (int i = 0; i < n_more && f >= 0; i++) {
        char name[32];
        snprintf(name, sizeof(name), "more%d", i);
        f = conv(m, name, f, SIDE / 2, 1, 2, err);
    }
    int p = add(m, "pooled", 4, s_p, NULL, err), v = add(m, "flat", 2, s_v, NULL, err);
    int lw = add(m, "fc.w", 2, s_w, w, err), lb = add(m, "fc.b", 1, s_b, b, err);
    int y = add(m, "logits", 2, s_v, NULL, err);
    int lin_in[3] = {v, lw, lb};
    m->input.tensor = x;
    m->output.tensor = y;
    if (f < 0 ||
        cc_model_add_node(m, CC_OP_GLOBAL_AVG_POOL, "pool", 1, &f, 1, &p, NULL, cc_act_none(),
                          err) < 0 ||
        cc_model_add_node(m, CC_OP_FLATTEN, "flatten", 1, &p, 1, &v, NULL, cc_act_none(), err) <
            0 ||
        cc_model_add_node(m, CC_OP_LINEAR, "fc", 3, lin_in, 1, &y, NULL, cc_act_none(), err) < 0 ||
        !cc_model_finalize(m, err)) {
        cc_model_destroy(m);
        return NULL;
    }
    return m;
}

/* Grey, red top-right, green bottom-left, blue bottom-right: NCHW. */
static void quadrant_picture(float *in)
{
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            int q = (y >= SIDE / 2) * 2 + (x >= SIDE / 2); // 0 TL, 1 TR, 2 BL, 3 BR
            float rgb[4][3] = {{.2f, .2f, .2f}, {1, 0, 0}, {0, .6f, 0}, {0, 0, 1}};
            for (int c = 0; c < 3; c++)
                in[(c * SIDE + y) * SIDE + x] = rgb[q][c];
        }
}

/* The mean of map (side x side) over quadrant q. */
static float quadrant_mean(const float *map, int side, int q)
{
    int y0 = q / 2 * side / 2, x0 = q % 2 * side / 2;
    float sum = 0;
    for (int y = y0; y < y0 + side / 2; y++)
        for (int x = x0; x < x0 + side / 2; x++)
            sum += map[y * side + x];
    return sum / (float)(side * side / 4);
}

static void test_quadrant(const struct backend *b)
{
    const char *name = b->name;
    struct cc_error err = {0};
    struct cc_model *m = quadrant_model(0, &err);
    if (!CHECKF(m != NULL, "quadrant model: %s", err.msg))
        return;
    struct cc_cam cam;
    if (!CHECKF(cc_cam_init(&cam, m, &err), "cc_cam_init: %s", err.msg)) {
        cc_model_destroy(m);
        return;
    }
    CHECK(cam.channels == 3 && cam.h == SIDE / 2 && cam.w == SIDE / 2 && cam.classes == 3);
    struct cc_engine_options opt = options(b, cc_cam_tap(&cam, m));
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err);
    float in[3 * SIDE * SIDE], scores[3], fmap[3 * SIDE * SIDE / 4], map[SIDE * SIDE / 4];
    quadrant_picture(in);
    if (CHECKF(e != NULL, "%s: %s", name, err.msg) &&
        CHECK(cc_engine_tap_count(e) == (size_t)(3 * cam.h * cam.w)) &&
        CHECKF(cc_engine_run(e, in, scores, &err), "%s: %s", name, err.msg) &&
        CHECKF(cc_engine_tap_read(e, fmap, &err), "%s: %s", name, err.msg)) {
        struct cc_topk top;
        cc_topk(scores, 3, 1, &top);
        CHECKF(top.index == 0, "%s: the red class should win, got %d", name, top.index);
        cc_cam_compute(&cam, fmap, top.index, map);
        float q[4];
        for (int i = 0; i < 4; i++)
            q[i] = quadrant_mean(map, cam.w, i);
        printf("%s: quadrant means of the map TL %.2f TR %.2f BL %.2f BR %.2f\n", name, q[0], q[1],
               q[2], q[3]);
        CHECKF(q[1] > 0.9f && q[0] < 0.5f && q[2] < 0.5f && q[3] < 0.5f,
               "%s: the map does not light up the red (top-right) quadrant only", name);
    }
    cc_engine_destroy(e);
    cc_cam_finish(&cam);
}

/* A tap early in the graph, whose memory the later convolutions would reuse, holds exactly what
 * was computed there after the run: R, G, B of every second pixel (the later ones double it). */
static void test_tap_kept(const struct backend *b)
{
    struct cc_error err = {0};
    struct cc_model *m = quadrant_model(3, &err);
    struct cc_engine_options opt = options(b, "features");
    struct cc_engine *e = m ? cc_engine_create_from_model(m, &opt, &err) : NULL;
    float in[3 * SIDE * SIDE], scores[3], fmap[3 * SIDE * SIDE / 4];
    quadrant_picture(in);
    if (!CHECKF(e != NULL, "%s: %s", b->name, err.msg) ||
        !CHECKF(cc_engine_run(e, in, scores, &err), "%s: %s", b->name, err.msg) ||
        !CHECKF(cc_engine_tap_read(e, fmap, &err), "%s: %s", b->name, err.msg)) {
        cc_engine_destroy(e);
        return;
    }
    int wrong = 0, h = SIDE / 2;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < h; x++)
                wrong += fmap[(c * h + y) * h + x] != in[(c * SIDE + 2 * y) * SIDE + 2 * x];
    CHECKF(wrong == 0, "%s: %d of %d tapped values are not what the layer computed", b->name, wrong,
           3 * h * h);
    cc_engine_destroy(e);
}

/* ---------------------------------------------------------------------------------------- */
/* Whole networks                                                                            */

/* The tap of bundle's feature map on one backend for input in; NULL on failure (checked). */
static double cosine(const float *a, const float *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++)
        ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return ab / sqrt(aa * bb);
}

/* The cosine between the engine's scores and the classifier applied to the tapped map in f32
 * (global average, W, bias): 1 when the tap is what the network computed its answer from. */
static double head_agreement(struct cc_engine *e, const struct cc_cam *cam, const float *fmap,
                             const float *scores)
{
    const struct cc_model *m = cc_engine_model(e);
    const struct cc_node *fc = &m->nodes[cam->cls.linear];
    size_t hw = (size_t)cam->h * (size_t)cam->w;
    float *mine = calloc((size_t)cam->classes, sizeof(float));
    double pooled, agree = 0;
    if (!CHECK(mine))
        return 0;
    for (int c = 0; c < cam->channels; c++) {
        pooled = 0;
        for (size_t i = 0; i < hw; i++)
            pooled += fmap[(size_t)c * hw + i];
        for (int k = 0; k < cam->classes; k++)
            mine[k] += cam->weight[(size_t)k * (size_t)cam->channels + (size_t)c] *
                       (float)(pooled / (double)hw);
    }
    for (int k = 0; fc->n_inputs > 2 && k < cam->classes; k++)
        mine[k] += m->tensors[fc->inputs[2]].data[k];
    agree = cosine(mine, scores, (size_t)cam->classes);
    free(mine);
    return agree;
}

static float *tap_of(const char *bundle, const struct backend *b, const float *in,
                     struct cc_cam *cam_out, struct cc_act_quant *q_out, double *agree)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(bundle, &err);
    if (!CHECKF(m != NULL, "%s: %s", bundle, err.msg))
        return NULL;
    struct cc_cam cam;
    if (!CHECKF(cc_cam_init(&cam, m, &err), "%s: %s", bundle, err.msg)) {
        cc_model_destroy(m);
        return NULL;
    }
    *q_out = m->tensors[cam.feature_map].act_quant;
    struct cc_engine_options opt = options(b, cc_cam_tap(&cam, m));
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err); // takes m
    float *scores = e ? calloc(cc_engine_output_count(e), sizeof(float)) : NULL;
    float *fmap = e ? calloc(cc_engine_tap_count(e), sizeof(float)) : NULL;
    bool ok = CHECKF(e != NULL, "%s on %s: %s", bundle, b->name, err.msg) && CHECK(scores) &&
              CHECK(fmap) && CHECKF(cc_engine_run(e, in, scores, &err), "run: %s", err.msg) &&
              CHECKF(cc_engine_tap_read(e, fmap, &err), "tap: %s", err.msg);
    if (ok)
        *agree = head_agreement(e, &cam, fmap, scores);
    *cam_out = cam;
    free(scores);
    cc_engine_destroy(e);
    if (!ok) {
        free(fmap);
        return NULL;
    }
    return fmap;
}

/* Whether every value is scale * (q - zero_point) for an int8 q. */
static bool on_int8_grid(const float *x, size_t n, struct cc_act_quant q)
{
    for (size_t i = 0; i < n; i++) {
        double k = (double)x[i] / q.scale + q.zero_point;
        if (!(fabs(k - rint(k)) < 1e-3 && k >= -128.5 && k <= 127.5))
            return false;
    }
    return true;
}

static void test_network(const char *bundle, bool int8)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(bundle, &err);
    if (!CHECKF(m != NULL, "%s: %s", bundle, err.msg))
        return;
    size_t n_in = (size_t)m->tensors[m->input.tensor].count;
    cc_model_destroy(m);
    float *in = malloc(n_in * sizeof(float));
    if (!CHECK(in))
        return;
    struct tu_rng rng;
    tu_rng_seed(&rng, 0xca11);
    tu_rng_fill(&rng, in, n_in, -2, 2);
    struct cc_cam cam;
    struct cc_act_quant q;
    double agree;
    float *ref = tap_of(bundle, &backends[0], in, &cam, &q, &agree);
    size_t n = ref ? (size_t)cam.channels * (size_t)cam.h * (size_t)cam.w : 0;
    cc_cam_finish(&cam);
    for (int b = 1; ref && b < N_BACKENDS; b++) {
        float *got = tap_of(bundle, &backends[b], in, &cam, &q, &agree);
        cc_cam_finish(&cam);
        if (!got)
            continue;
        double scale = tu_max_abs(ref, n);
        size_t worst;
        double diff = tu_max_abs_diff(got, ref, n, &worst), cos = cosine(got, ref, n);
        printf("%s on %s: %zu values, max |tap - ref| %.3g x max |ref| (%.4g), cosine %.5f; "
               "its own scores vs the head on its tap: cosine %.5f\n",
               bundle, backends[b].name, n, diff / scale, scale, cos, agree);
        CHECKF(agree >= MIN_AGREEMENT,
               "%s on %s: the scores do not come from the tap (cosine "
               "%.4f < %.2f)",
               bundle, backends[b].name, agree, MIN_AGREEMENT);
        if (int8 && backends[b].kind == CC_BACKEND_CPU) {
            CHECKF(on_int8_grid(got, n, q), "%s: the int8 tap is not dequantized int8", bundle);
        } else {
            CHECKF(diff <= TOLERANCE * scale,
                   "%s on %s: max |tap - ref| %.3g > %.0e x %.4g "
                   "(value %zu)",
                   bundle, backends[b].name, diff, TOLERANCE, scale, worst);
        }
        free(got);
    }
    free(ref);
    free(in);
}

/* ---------------------------------------------------------------------------------------- */
/* Refusals                                                                                  */

static void test_refusals(void)
{
    struct cc_error err = {0};
    struct cc_model *m = quadrant_model(0, &err);
    struct cc_engine_options opt = options(&backends[0], "fc.w"); // a constant
    CHECK(!cc_engine_create_from_model(m, &opt, &err) && strstr(err.msg, "name an activation"));
    printf("constant tap: %s\n", err.msg);
    m = quadrant_model(0, &err);
    opt.tap = NULL;
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err);
    float fmap[3 * SIDE * SIDE / 4];
    CHECK(e && cc_engine_tap_count(e) == 0 && !cc_engine_tap_read(e, fmap, &err));
    cc_engine_destroy(e);
    m = quadrant_model(0, &err);
    opt.tap = "features";
    e = cc_engine_create_from_model(m, &opt, &err);
    CHECK(e && !cc_engine_tap_read(e, fmap, &err) && strstr(err.msg, "before a run"));
    cc_engine_destroy(e);

    // input -> flatten -> linear: no pooled feature map.
    m = cc_model_new("flat");
    int64_t s_in[4] = {1, 3, 2, 2}, s_v[2] = {1, 12}, s_w[2] = {2, 12}, s_y[2] = {1, 2};
    float w[24] = {0};
    int x = add(m, "input", 4, s_in, NULL, &err), v = add(m, "flat", 2, s_v, NULL, &err);
    int lw = add(m, "fc.w", 2, s_w, w, &err), y = add(m, "logits", 2, s_y, NULL, &err);
    int lin_in[2] = {v, lw};
    m->input.tensor = x;
    m->output.tensor = y;
    struct cc_cam cam = {0};
    if (CHECK(cc_model_add_node(m, CC_OP_FLATTEN, "flatten", 1, &x, 1, &v, NULL, cc_act_none(),
                                &err) >= 0 &&
              cc_model_add_node(m, CC_OP_LINEAR, "fc", 2, lin_in, 1, &y, NULL, cc_act_none(),
                                &err) >= 0 &&
              cc_model_finalize(m, &err)))
        CHECK(!cc_cam_init(&cam, m, &err) &&
              strstr(err.msg, "does not read the global average pooling"));
    printf("no pooling: %s\n", err.msg);
    cc_cam_finish(&cam);
    cc_model_destroy(m);
}

/* A torchvision classifier of the zoo: a map unless its classifier is not one linear on the
 * pooled features (mobilenet_v3: two linears; squeezenet: a convolution), then one line saying
 * so; where there is one, the tap on every backend as in test_network. */
static void test_zoo(const char *bundle)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(bundle, &err);
    if (!CHECKF(m != NULL, "%s: %s", bundle, err.msg))
        return;
    struct cc_cam cam;
    bool has = cc_cam_init(&cam, m, &err);
    bool want = !strstr(bundle, "mobilenet_v3") && !strstr(bundle, "squeezenet");
    printf("%s: %s%s\n", bundle, has ? "a map" : "no map: ", has ? "" : err.msg);
    CHECKF(has == want && (has || (strstr(err.msg, "its ") == err.msg && !strchr(err.msg, '\n'))),
           "%s: a map %d, expected %d (%s)", bundle, has, want, has ? "" : err.msg);
    cc_cam_finish(&cam);
    cc_model_destroy(m);
    if (has)
        test_network(bundle, false);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FP32_BUNDLE INT8_BUNDLE [ZOO_BUNDLE...]\n", argv[0]);
        return 2;
    }
    for (int b = 0; b < N_BACKENDS; b++)
        test_quadrant(&backends[b]), test_tap_kept(&backends[b]);
    test_refusals();
    test_network(argv[1], false);
    test_network(argv[2], true);
    for (int i = 3; i < argc; i++)
        test_zoo(argv[i]);
    return tu_exit_code();
}
