/* camclass — unit tests of the model builder and cc_model_finalize (engine/model.c).
 *
 * Builds a tiny network by code (conv2d+relu6 -> global_avg_pool -> flatten -> linear), checks
 * that it finalizes, then breaks it one way at a time and checks each error message. Last, the
 * name index: tensors and nodes up to the 65 536 limit, duplicates caught across every growth.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------- */
/* The tiny network, with knobs for breaking it                                              */
/* ---------------------------------------------------------------------------------------- */

struct knobs {
    int64_t conv_out_hw; // declared conv output H and W (correct: 4)
    int64_t w_in_ch;     // weight dim 1 (correct: 3)
    int groups;          // correct: 1
    int64_t fc_classes;  // linear output (correct: 2)
    int n_labels;        // correct: 2
    bool swap_nodes;     // put global_avg_pool before conv2d
    bool no_input_spec;
    float std0; // correct: 0.5
    bool act_on_flatten;
    bool w_is_input; // the conv's weight is the graph input (not a constant)
};

static const struct knobs good = {4, 3, 1, 2, 2, false, false, 0.5f, false};

/* Returns a model (not finalized) or NULL when the builder itself failed (err set). */
static struct cc_model *build(const struct knobs *k, struct cc_error *err)
{
    static const float zeros[4 * 3 * 3 * 3] = {0};
    const struct {
        const char *name;
        int ndim;
        int64_t shape[4];
        bool constant;
    } tensors[] = {
        {"input", 4, {1, 3, 8, 8}, false},
        {"conv.w", 4, {4, k->w_in_ch, 3, 3}, true},
        {"conv.b", 1, {4}, true},
        {"conv.out", 4, {1, 4, k->conv_out_hw, k->conv_out_hw}, false},
        {"gap.out", 4, {1, 4, 1, 1}, false},
        {"flat.out", 2, {1, 4}, false},
        {"fc.w", 2, {k->fc_classes, 4}, true},
        {"fc.b", 1, {k->fc_classes}, true},
        {"logits", 2, {1, k->fc_classes}, false},
    };
    struct cc_model *m = cc_model_new("tiny");
    int t[9];
    for (int i = 0; i < 9; i++)
        if ((t[i] = cc_model_add_tensor(m, tensors[i].name, CC_DTYPE_F32, tensors[i].ndim,
                                        tensors[i].shape, tensors[i].constant ? zeros : NULL,
                                        err)) < 0)
            goto fail;
    union cc_attrs conv = {.conv = {{2, 2}, {1, 1, 1, 1}, {1, 1}, k->groups}};
    int conv_in[] = {t[0], k->w_is_input ? t[0] : t[1], t[2]}, fc_in[] = {t[5], t[6], t[7]};
    const struct {
        enum cc_op op;
        const char *name;
        int n_in;
        const int *in;
        int out;
        const union cc_attrs *attrs;
        struct cc_act act;
    } nodes[] = {
        {CC_OP_CONV2D, "conv", 3, conv_in, t[3], &conv, cc_act_relu6()},
        {CC_OP_GLOBAL_AVG_POOL, "gap", 1, &t[3], t[4], NULL, cc_act_none()},
        {CC_OP_FLATTEN, "flat", 1, &t[4], t[5], NULL,
         k->act_on_flatten ? cc_act_relu() : cc_act_none()},
        {CC_OP_LINEAR, "fc", 3, fc_in, t[8], NULL, cc_act_none()},
    };
    for (int i = 0; i < 4; i++) {
        int j = k->swap_nodes && i < 2 ? 1 - i : i; // swap: gap before conv
        if (cc_model_add_node(m, nodes[j].op, nodes[j].name, nodes[j].n_in, nodes[j].in, 1,
                              &nodes[j].out, nodes[j].attrs, nodes[j].act, err) < 0)
            goto fail;
    }
    for (int i = 0; i < k->n_labels; i++)
        if (!cc_model_add_label(m, i % 2 ? "dog" : "cat", err))
            goto fail;
    if (!k->no_input_spec)
        m->input.tensor = t[0];
    m->input.std[0] = k->std0;
    m->output.tensor = t[8];
    return m;
fail:
    cc_model_destroy(m);
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Tests                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void test_names(void)
{
    for (int op = 0; op < CC_OP_COUNT; op++)
        CHECKF((int)cc_op_from_name(cc_op_name((enum cc_op)op)) == op, "op %d round trip", op);
    CHECK(cc_op_from_name("gelu") == CC_OP_COUNT);
    CHECK(strcmp(cc_op_name(CC_OP_GLOBAL_AVG_POOL), "global_avg_pool") == 0);
    CHECK(strcmp(cc_dtype_name(CC_DTYPE_I8), "i8") == 0);
    CHECK(isinf(cc_act_none().min) && cc_act_none().min < 0 && cc_act_relu6().max == 6.0f);
}

static void test_good(void)
{
    struct cc_error err = {0};
    struct cc_model *m = build(&good, &err);
    CHECKF(m != NULL, "build: %s", err.msg);
    if (!m)
        return;
    CHECKF(cc_model_finalize(m, &err), "finalize: %s", err.msg);
    CHECK(m->output.classes == 2 && m->n_labels == 2 && m->n_nodes == 4);
    int logits = cc_model_find_tensor(m, "logits");
    CHECK(logits == 8 && m->tensors[logits].producer == 3);
    CHECK(m->tensors[cc_model_find_tensor(m, "conv.w")].producer == -1);
    CHECK(((uintptr_t)m->tensors[1].data & 63) == 0);
    CHECK(m->tensors[3].count == 64);
    cc_model_destroy(m);
    cc_model_destroy(NULL);
}

struct bad_case {
    const char *what;
    struct knobs k;
    const char *expect;
};

static void test_bad(void)
{
    static const struct bad_case cases[] = {
        {"conv output",
         {2, 3, 1, 2, 2, false, false, 0.5f, false},
         "node \"conv\" (conv2d): computed output shape [1,4,4,4] but tensor \"conv.out\" is "
         "declared [1,4,2,2]"},
        {"weight channels",
         {4, 2, 1, 2, 2, false, false, 0.5f, false},
         "input \"conv.w\" has shape [4,2,3,3], expected [O,3,kh,kw]"},
        {"groups", {4, 3, 2, 2, 2, false, false, 0.5f, false}, "groups 2 must divide"},
        {"labels", {4, 3, 1, 2, 3, false, false, 0.5f, false}, "3 labels for 2 classes"},
        {"order",
         {4, 3, 1, 2, 2, true, false, 0.5f, false},
         "node \"gap\" reads tensor \"conv.out\" before node \"conv\" produces it (cycle"},
        {"input spec", {4, 3, 1, 2, 2, false, true, 0.5f, false}, "model has no input tensor"},
        {"std", {4, 3, 1, 2, 2, false, false, 0.0f, false}, "every std must be > 0"},
        {"act",
         {4, 3, 1, 2, 2, false, false, 0.5f, true},
         "node \"flat\" (flatten) has a fused activation"},
        // The CPU backend packs weights at load and read a computed one's NULL data: refused.
        {"weight not a constant",
         {4, 3, 1, 2, 2, false, false, 0.5f, false, true},
         "node \"conv\" (conv2d): its weight \"input\" is not a constant"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cc_error err = {0};
        struct cc_model *m = build(&cases[i].k, &err);
        bool ok = m && cc_model_finalize(m, &err);
        CHECKF(!ok && strstr(err.msg, cases[i].expect), "%s: got \"%s\", want \"%s\"",
               cases[i].what, err.msg, cases[i].expect);
        cc_model_destroy(m);
    }
}

static void test_builder_errors(void)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_model_new("b");
    int64_t ok_shape[] = {2, 2}, big[] = {1 << 20, 1 << 20}, zero[] = {3, 0};
    CHECK(cc_model_add_tensor(m, "a", CC_DTYPE_F32, 2, ok_shape, NULL, &err) == 0);
    CHECK(cc_model_add_tensor(m, "a", CC_DTYPE_F32, 2, ok_shape, NULL, &err) < 0 &&
          strstr(err.msg, "duplicate tensor name \"a\""));
    CHECK(cc_model_add_tensor(m, "big", CC_DTYPE_F32, 2, big, NULL, &err) < 0 &&
          strstr(err.msg, "elements"));
    CHECK(cc_model_add_tensor(m, "z", CC_DTYPE_F32, 2, zero, NULL, &err) < 0 &&
          strstr(err.msg, "dimension 1 is 0"));
    CHECK(cc_model_add_tensor(m, "h", CC_DTYPE_F16, 2, ok_shape, NULL, &err) < 0 &&
          strstr(err.msg, "dtype f16 is not supported"));
    CHECK(cc_model_add_tensor(m, "", CC_DTYPE_F32, 2, ok_shape, NULL, &err) < 0);
    // i8: values and scales copied into aligned storage; f32 data for an i8 tensor refused.
    const int8_t q[4] = {-128, -1, 0, 127};
    const float scales[2] = {0.5f, 2.0f}, f[4] = {0};
    int qi = cc_model_add_tensor_i8(m, "q", 2, ok_shape, q, scales, &err);
    if (CHECKF(qi >= 0, "add i8: %s", err.msg)) {
        const struct cc_tensor *t = &m->tensors[qi];
        float deq[4];
        cc_tensor_dequantize(t, deq);
        CHECK(t->dtype == CC_DTYPE_I8 && !t->data && ((uintptr_t)t->q & 63) == 0 &&
              cc_tensor_is_const(t));
        CHECK(deq[0] == -64.0f && deq[1] == -0.5f && deq[2] == 0.0f && deq[3] == 254.0f);
    }
    CHECK(cc_model_add_tensor(m, "q2", CC_DTYPE_I8, 2, ok_shape, f, &err) < 0 &&
          strstr(err.msg, "cc_model_add_tensor_i8"));
    int in[] = {0}, out[] = {0}, bad[] = {7};
    CHECK(cc_model_add_node(m, CC_OP_SOFTMAX, "s", 1, in, 1, out, NULL, cc_act_none(), &err) == 0);
    CHECK(cc_model_add_node(m, CC_OP_SOFTMAX, "s", 1, in, 1, out, NULL, cc_act_none(), &err) < 0 &&
          strstr(err.msg, "duplicate node name \"s\""));
    CHECK(cc_model_add_node(m, CC_OP_SOFTMAX, "t", 1, bad, 1, out, NULL, cc_act_none(), &err) < 0 &&
          strstr(err.msg, "tensor index 7"));
    CHECK(!cc_model_add_label(m, "", &err) && strstr(err.msg, "label 1 is 0 bytes"));
    cc_model_destroy(m);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Names tried: more than the limit of 65 536 tensors (and nodes), so that the last ones are
// refused and must then be absent.
#define MANY_NAMES 70000
#define NAME_LIMIT 65536

/* The name index (model.c): tensors and nodes named "t<i>" / "n<i>" up to the limit, a
 * duplicate of the first and of the latest name tried around each growth of the arrays (16,
 * 32, ... items), then every name looked up, those past the limit being absent. Correctness only:
 * the time is printed for information (a hostile bundle with 65 536 tensors took seconds with the
 * old linear scan). */
static void test_many_names(void)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_model_new("many");
    int64_t shape[] = {1};
    int io[] = {0};
    char name[32];
    int bad = 0, dup_checks = 0;
    double t0 = now_s();
    for (int i = 0; i < MANY_NAMES; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        int got = cc_model_add_tensor(m, name, CC_DTYPE_F32, 1, shape, NULL, &err);
        bool want_ok = i < NAME_LIMIT;
        if (want_ok ? got != i : got >= 0 || !strstr(err.msg, "too many tensors"))
            bad += !CHECKF(false, "add tensor %s: got %d (%s)", name, got, err.msg);
        snprintf(name, sizeof(name), "n%d", i);
        got = cc_model_add_node(m, CC_OP_SOFTMAX, name, 1, io, 1, io, NULL, cc_act_none(), &err);
        if (want_ok ? got != i : got >= 0 || !strstr(err.msg, "too many nodes"))
            bad += !CHECKF(false, "add node %s: got %d (%s)", name, got, err.msg);
        if (bad > 5)
            break;
        // Duplicates just before and just after each growth (at 2^k items), and at the end.
        if ((i & (i - 1)) != 0 && (i & (i + 1)) != 0 && i != MANY_NAMES - 1)
            continue;
        const char *tdups[] = {"t0", NULL}, *ndups[] = {"n0", NULL};
        char tlast[32], nlast[32];
        int last = i < NAME_LIMIT ? i : NAME_LIMIT - 1; // the latest name added
        snprintf(tlast, sizeof(tlast), "t%d", last);
        snprintf(nlast, sizeof(nlast), "n%d", last);
        tdups[1] = tlast;
        ndups[1] = nlast;
        for (int d = 0; d < 2; d++) {
            int nt = m->n_tensors, nn = m->n_nodes;
            CHECKF(cc_model_add_tensor(m, tdups[d], CC_DTYPE_F32, 1, shape, NULL, &err) < 0 &&
                       strstr(err.msg, "duplicate tensor name") && m->n_tensors == nt,
                   "duplicate tensor \"%s\" after %d: %s", tdups[d], i + 1, err.msg);
            CHECKF(cc_model_add_node(m, CC_OP_SOFTMAX, ndups[d], 1, io, 1, io, NULL, cc_act_none(),
                                     &err) < 0 &&
                       strstr(err.msg, "duplicate node name") && m->n_nodes == nn,
                   "duplicate node \"%s\" after %d: %s", ndups[d], i + 1, err.msg);
            dup_checks++;
        }
    }
    double t1 = now_s();
    CHECK(m->n_tensors == NAME_LIMIT && m->n_nodes == NAME_LIMIT && dup_checks >= 2 * 33);
    int misses = 0;
    for (int i = 0; i < MANY_NAMES && misses < 5; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        int got = cc_model_find_tensor(m, name);
        misses += !CHECKF(got == (i < NAME_LIMIT ? i : -1), "find %s: got %d", name, got);
    }
    CHECK(cc_model_find_tensor(m, "n0") == -1 && cc_model_find_tensor(m, "t") == -1 &&
          cc_model_find_tensor(m, "t00") == -1 && cc_model_find_tensor(m, NULL) == -1 &&
          cc_model_find_tensor(NULL, "t0") == -1);
    printf("info: %d tensors and %d nodes added in %.3f s, %d names looked up in %.3f s\n",
           m->n_tensors, m->n_nodes, t1 - t0, MANY_NAMES, now_s() - t1);
    cc_model_destroy(m);

    struct cc_model *empty = cc_model_new("empty");
    CHECK(cc_model_find_tensor(empty, "t0") == -1);
    cc_model_destroy(empty);
}

int main(void)
{
    test_names();
    test_good();
    test_bad();
    test_builder_errors();
    test_many_names();
    return tu_exit_code();
}
