/* camclass — whole-network test of int8 weights.
 *
 *     test_network_int8 FP32_BUNDLE [INT8_BUNDLE]
 *
 * Quantizes every conv2d/linear weight of FP32_BUNDLE (the build's random mobilenet_v2) to i8
 * in C, by the exporter's rule of docs/MODEL_FORMAT.md ("i8 tensors": per output channel,
 * scale = f32(max|w| / 127), q = round-half-even(w / scale)), and runs the result on the CPU
 * backend (dequantized at load) and the Vulkan backend (int8 on the device, dequantized in the
 * shaders) on one random input. Passes when
 *     max |vulkan - cpu| <= 1e-4 * max |cpu|           (both use the same f32 weight values)
 *     cosine(int8 logits, fp32 logits) >= 0.99         (what quantization costs; printed)
 * INT8_BUNDLE, when given (the exporter's --quantize int8 output of the same module), must hold
 * exactly the values quantized here, and is run the same way.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "engine.h"
#include "testutil.h"

#define TOLERANCE 1e-4    // vulkan vs cpu, relative to max |cpu|
#define MIN_COSINE 0.99   // int8 vs fp32 logits
#define INPUT_SEED 0x1e57 // the random input, uniform in [-2, 2]

/* ---------------------------------------------------------------------------------------- */
/* Quantization (the exporter's rule)                                                       */

/* Whether tensor t of m is read only as the weight (input 1) of conv2d/linear nodes. */
static bool weight_only(const struct cc_model *m, int t)
{
    bool used = false;
    for (int k = 0; k < m->n_nodes; k++) {
        const struct cc_node *n = &m->nodes[k];
        for (int i = 0; i < n->n_inputs; i++) {
            if (n->inputs[i] != t)
                continue;
            if (i != 1 || (n->op != CC_OP_CONV2D && n->op != CC_OP_LINEAR))
                return false;
            used = true;
        }
    }
    return used;
}

/* Quantizes t's f32 values per output channel into q and scales (shape[0] of them). */
static void quantize(const struct cc_tensor *t, int8_t *q, float *scales)
{
    int64_t per = t->count / t->shape[0];
    for (int64_t o = 0; o < t->shape[0]; o++) {
        const float *w = t->data + o * per;
        float amax = 0;
        for (int64_t i = 0; i < per; i++)
            amax = fmaxf(amax, fabsf(w[i]));
        scales[o] = amax > 0 ? (float)((double)amax / 127.0) : 1.0f;
        for (int64_t i = 0; i < per; i++) {
            double v = rint((double)w[i] / (double)scales[o]); // half to even
            q[o * per + i] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
        }
    }
}

/* A copy of the finalized model src with its conv2d/linear weights as i8; NULL with err. */
static struct cc_model *quantized_copy(const struct cc_model *src, struct cc_error *err)
{
    struct cc_model *m = cc_model_new(src->name);
    if (!m) {
        cc_error_set(err, "out of memory");
        return NULL;
    }
    for (int i = 0; i < src->n_tensors; i++) {
        const struct cc_tensor *t = &src->tensors[i];
        int idx;
        if (t->data && weight_only(src, i)) {
            int8_t *q = malloc((size_t)t->count);
            float *scales = malloc((size_t)t->shape[0] * sizeof(float));
            quantize(t, q, scales);
            idx = cc_model_add_tensor_i8(m, t->name, t->ndim, t->shape, q, scales, err);
            free(q);
            free(scales);
        } else {
            idx = cc_model_add_tensor(m, t->name, t->dtype, t->ndim, t->shape, t->data, err);
        }
        if (idx != i)
            goto error;
    }
    for (int k = 0; k < src->n_nodes; k++) {
        const struct cc_node *n = &src->nodes[k];
        if (cc_model_add_node(m, n->op, n->name, n->n_inputs, n->inputs, n->n_outputs, n->outputs,
                              &n->attrs, n->act, err) != k)
            goto error;
    }
    for (int i = 0; i < src->n_labels; i++)
        if (!cc_model_add_label(m, src->labels[i], err))
            goto error;
    m->input = src->input;
    m->output = src->output;
    if (cc_model_finalize(m, err))
        return m;
error:
    cc_model_destroy(m);
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Running and comparing                                                                    */

/* Runs model (ownership passes) on backend; the malloc'd logits, or NULL after a failed check. */
static float *run(struct cc_model *model, enum cc_backend_kind backend, const char *what,
                  size_t *n_out)
{
    struct cc_error err = {0};
    struct cc_engine_options opt = cc_engine_options_default();
    opt.poison = true; // the CPU backends: memory a run did not write reads as NaN / -128
    opt.backend = backend;
    opt.notices = stderr;
    if (!CHECKF(model != NULL, "%s: no model", what))
        return NULL;
    struct cc_engine *e = cc_engine_create_from_model(model, &opt, &err);
    if (!CHECKF(e != NULL, "%s: creating the engine: %s", what, err.msg))
        return NULL;
    size_t n_in = cc_engine_input_count(e);
    *n_out = cc_engine_output_count(e);
    float *in = malloc(n_in * sizeof(float));
    float *out = calloc(*n_out, sizeof(float));
    struct tu_rng rng;
    tu_rng_seed(&rng, INPUT_SEED);
    tu_rng_fill(&rng, in, n_in, -2.0f, 2.0f);
    bool ok = CHECKF(cc_engine_run(e, in, out, &err), "%s: run: %s", what, err.msg);
    printf("%s: backend %s, device %s\n", what, cc_engine_backend_name(e),
           cc_engine_device_name(e));
    /* The model must be input-sensitive, or agreement below would say little: a second input
     * with other statistics (half the range, shifted) must move the logits by >= 5% of max. */
    float *other = calloc(*n_out, sizeof(float));
    tu_rng_fill(&rng, in, n_in, -1.0f, 1.0f);
    for (size_t i = 0; i < n_in; i++)
        in[i] += 0.5f;
    if (ok && CHECK(other != NULL) &&
        CHECKF(cc_engine_run(e, in, other, &err), "%s: second run: %s", what, err.msg)) {
        double moved = tu_max_abs_diff(out, other, *n_out, NULL) / tu_max_abs(out, *n_out);
        printf("%s: a second input moves the logits by %.3g x max|logit|\n", what, moved);
        CHECKF(moved >= 0.05, "%s: not input-sensitive (%.3g x max|logit| < 0.05)", what, moved);
    }
    free(other);
    free(in);
    cc_engine_destroy(e);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

static double cosine(const float *a, const float *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return ab / sqrt(aa * bb);
}

static void print_top5(const char *what, const float *x, size_t n)
{
    struct cc_topk top[5];
    int k = cc_topk(x, (int)n, 5, top);
    printf("%-16s top-5", what);
    for (int i = 0; i < k; i++)
        printf(" %d (%.4f)", top[i].index, top[i].score);
    printf("\n");
}

/* Constant bytes as a backend gets them: f32 4 per value, i8 1 per value + 4 per scale. */
static long long const_bytes(const struct cc_model *m)
{
    long long b = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const struct cc_tensor *t = &m->tensors[i];
        b += t->data ? t->count * 4 : t->q ? t->count + t->shape[0] * 4 : 0;
    }
    return b;
}

/* The exporter's i8 bundle must hold exactly our values. */
static void compare_with_bundle(const struct cc_model *ours, const struct cc_model *theirs)
{
    if (!CHECKF(ours->n_tensors == theirs->n_tensors, "tensor counts %d vs %d", ours->n_tensors,
                theirs->n_tensors))
        return;
    int n_i8 = 0;
    for (int i = 0; i < ours->n_tensors; i++) {
        const struct cc_tensor *a = &ours->tensors[i];
        const struct cc_tensor *b = &theirs->tensors[cc_model_find_tensor(theirs, a->name)];
        if (!CHECKF(a->dtype == b->dtype, "tensor %s: %s here, %s in the bundle", a->name,
                    cc_dtype_name(a->dtype), cc_dtype_name(b->dtype)) ||
            !a->q)
            continue;
        n_i8++;
        CHECKF(memcmp(a->q, b->q, (size_t)a->count) == 0 &&
                   memcmp(a->scales, b->scales, (size_t)a->shape[0] * sizeof(float)) == 0,
               "tensor %s: the bundle's int8 values or scales differ from the rule's", a->name);
    }
    printf("int8 bundle: %d i8 tensors, values and scales identical to the C quantization\n", n_i8);
}

/* Runs the i8 model made by make() on both backends and checks them against each other and
 * against the fp32 logits. */
static void check_int8(const char *what, struct cc_model *(*make)(const char *, struct cc_error *),
                       const char *arg, const float *fp32, size_t n)
{
    struct cc_error err = {0};
    char label[128];
    size_t n_cpu = 0, n_vk = 0;
    snprintf(label, sizeof(label), "%s cpu", what);
    float *cpu = run(make(arg, &err), CC_BACKEND_CPU, label, &n_cpu);
    CHECKF(err.msg[0] == 0, "%s: %s", what, err.msg);
    snprintf(label, sizeof(label), "%s vulkan", what);
    float *vk = run(make(arg, &err), CC_BACKEND_VULKAN, label, &n_vk);
    if (cpu && vk && CHECK(n_cpu == n && n_vk == n)) {
        size_t worst = 0;
        double diff = tu_max_abs_diff(vk, cpu, n, &worst), scale = tu_max_abs(cpu, n);
        printf("%s: max |vulkan - cpu| = %.3g (%.3g x max|cpu| %.4g; tolerance %.0e)\n", what, diff,
               diff / scale, scale, TOLERANCE);
        CHECKF(diff <= TOLERANCE * scale, "%s: max |vulkan - cpu| %.3g > %.0e x %.4g (logit %zu)",
               what, diff, TOLERANCE, scale, worst);
        double cs = cosine(cpu, fp32, n);
        size_t w2 = 0;
        double d32 = tu_max_abs_diff(cpu, fp32, n, &w2);
        printf("%s: cosine similarity with the fp32 logits %.6f (minimum %.2f); max |int8 - "
               "fp32| = %.3g x max|fp32|\n",
               what, cs, MIN_COSINE, d32 / tu_max_abs(fp32, n));
        CHECKF(cs >= MIN_COSINE, "%s: cosine similarity %.6f < %.2f", what, cs, MIN_COSINE);
        print_top5(label, vk, n);
    }
    free(cpu);
    free(vk);
}

/* The two ways of making the i8 model: quantized here from the fp32 bundle, or loaded. */
static struct cc_model *make_quantized(const char *fp32_path, struct cc_error *err)
{
    struct cc_model *src = cc_bundle_load(fp32_path, err);
    struct cc_model *m = src ? quantized_copy(src, err) : NULL;
    cc_model_destroy(src);
    return m;
}

static struct cc_model *make_loaded(const char *int8_path, struct cc_error *err)
{
    return cc_bundle_load(int8_path, err);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s FP32_BUNDLE [INT8_BUNDLE]\n", argv[0]);
        return 2;
    }
    struct cc_error err = {0};
    struct cc_model *m32 = cc_bundle_load(argv[1], &err);
    struct cc_model *m8 = m32 ? quantized_copy(m32, &err) : NULL;
    if (!CHECKF(m8 != NULL, "quantizing %s: %s", argv[1], err.msg)) {
        cc_model_destroy(m32);
        return tu_exit_code();
    }
    printf("constant bytes: fp32 %lld, int8 weights %lld (%.2fx smaller)\n", const_bytes(m32),
           const_bytes(m8), (double)const_bytes(m32) / (double)const_bytes(m8));
    size_t n = 0;
    float *fp32 = run(m32, CC_BACKEND_CPU, "fp32 cpu", &n);
    if (fp32) {
        print_top5("fp32 cpu", fp32, n);
        check_int8("int8 (C)", make_quantized, argv[1], fp32, n);
        if (argc == 3) {
            struct cc_model *theirs = cc_bundle_load(argv[2], &err);
            if (CHECKF(theirs != NULL, "%s: %s", argv[2], err.msg))
                compare_with_bundle(m8, theirs);
            cc_model_destroy(theirs);
            check_int8("int8 bundle", make_loaded, argv[2], fp32, n);
        }
    }
    free(fp32);
    cc_model_destroy(m8);
    return tu_exit_code();
}
