/* camclass — the bundle manifest's JSON side (see bundle_manifest.h, docs/MODEL_FORMAT.md).
 *
 * The load's error reporting, the checked JSON getters every section of the manifest reads
 * through, and the sections that are JSON alone: the header (format, version), the input and
 * output specs and the graph (each op's attributes, fused activations, nodes), each through
 * the model.h builder. Tensors with their data, labels and the archive are bundle.c's.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundle_manifest.h"
#include "bundle_zip.h"

#define FORMAT_NAME "camclass-bundle"
#define FORMAT_VERSION 4          // the newest this loader reads; versions 1 to 3 still load
#define FIRST_ANTIALIAS_VERSION 3 // "antialias": true in input.resize
#define FIRST_UNKNOWN_VERSION 4   // "unknown_threshold" in output
#define MAX_NODES 65536
#define MAX_CLASSES 100000
#define MAX_DIM 1048576.0
#define MAX_TRAINING_BYTES 65536 // the "training" object as compact JSON text

/* ---------------------------------------------------------------------------------------- */
/* Errors and small helpers                                                                  */
/* ---------------------------------------------------------------------------------------- */

bool cc_manifest_fail(struct cc_bundle_loader *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_bundle_zip_failv(L->zip, fmt, ap);
    va_end(ap);
    return false;
}

bool cc_manifest_fail_builder(struct cc_bundle_loader *L)
{
    return cc_manifest_fail(L, "%s", L->merr.msg);
}

/* Looks name up in a table of n names; -1 when absent. */
static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* Writes "a, b, c" into buf. */
static const char *join(char *buf, size_t size, const char *const *names, int n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
    return buf;
}

/* ---------------------------------------------------------------------------------------- */
/* JSON access: each getter fails with a message naming where (a tensor, node, "input"...)  */
/* ---------------------------------------------------------------------------------------- */

/* What JSON value v is, with its article, for "must be X, not Y" messages. */
static const char *json_value_kind(const cJSON *v)
{
    return cJSON_IsNull(v)     ? "null"
           : cJSON_IsBool(v)   ? "a boolean"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsArray(v)  ? "an array"
                               : "an object";
}

static const char *json_type_name(int type)
{
    return type == cJSON_String   ? "string"
           : type == cJSON_Number ? "number"
           : type == cJSON_Array  ? "array"
                                  : "object";
}

const cJSON *cc_manifest_member(struct cc_bundle_loader *L, const cJSON *obj, const char *key,
                                int type, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        cc_manifest_fail(L, "%s has no \"%s\"", where, key);
    else if ((v->type & 0xff) != type)
        cc_manifest_fail(L, "%s: \"%s\" must be a %s", where, key, json_type_name(type));
    else
        return v;
    return NULL;
}

const char *cc_manifest_str(struct cc_bundle_loader *L, const cJSON *obj, const char *key,
                            const char *where)
{
    const cJSON *v = cc_manifest_member(L, obj, key, cJSON_String, where);
    return v ? v->valuestring : NULL;
}

bool cc_manifest_int(struct cc_bundle_loader *L, const cJSON *v, double lo, double hi, int64_t *out,
                     const char *where, const char *key)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d >= lo && d <= hi) || d != floor(d)) {
        if (isnan(d))
            return cc_manifest_fail(L, "%s: \"%s\" must be an integer in %.0f..%.0f", where, key,
                                    lo, hi);
        return cc_manifest_fail(L, "%s: \"%s\" must be an integer in %.0f..%.0f (got %.17g)", where,
                                key, lo, hi, d);
    }
    *out = (int64_t)d;
    return true;
}

bool cc_manifest_ints(struct cc_bundle_loader *L, const cJSON *v, int n_min, int n_max, double lo,
                      double hi, int64_t *out, int *n, const char *where, const char *key)
{
    int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (len < n_min || len > n_max) {
        if (n_min == n_max)
            return cc_manifest_fail(L, "%s: \"%s\" must be an array of %d integers", where, key,
                                    n_min);
        return cc_manifest_fail(L, "%s: \"%s\" must be an array of %d to %d integers", where, key,
                                n_min, n_max);
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cc_manifest_int(L, e, lo, hi, &out[i++], where, key))
            return false;
    }
    *n = len;
    return true;
}

/* obj[key] as int array of exactly n ints, or def when the key is absent. */
static bool attr_ints(struct cc_bundle_loader *L, const cJSON *obj, const char *key, int n,
                      int *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return true; // the caller filled in the default
    int64_t tmp[4];
    int got;
    if (!cc_manifest_ints(L, v, n, n, -2147483648.0, 2147483647.0, tmp, &got, where, key))
        return false;
    for (int i = 0; i < n; i++)
        out[i] = (int)tmp[i];
    return true;
}

/* obj[key] as one of names (as an index). Absent: def when def >= 0, else an error. */
static bool member_enum(struct cc_bundle_loader *L, const cJSON *obj, const char *key,
                        const char *const *names, int n, int def, int *out, const char *where)
{
    if (def >= 0 && !cJSON_GetObjectItemCaseSensitive(obj, key)) {
        *out = def;
        return true;
    }
    const char *s = cc_manifest_str(L, obj, key, where);
    if (!s)
        return false;
    if ((*out = name_index(names, n, s)) < 0) {
        char list[256];
        return cc_manifest_fail(L, "%s: \"%s\" is \"%s\"; expected one of %s", where, key, s,
                                join(list, sizeof(list), names, n));
    }
    return true;
}

float cc_manifest_float(double d)
{
    return d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
}

/* obj[key] as n floats. */
static bool member_floats(struct cc_bundle_loader *L, const cJSON *obj, const char *key, int n,
                          float *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
        return cc_manifest_fail(L, "%s: \"%s\" must be an array of %d numbers", where, key, n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsNumber(e))
            return cc_manifest_fail(L, "%s: \"%s\" must be an array of %d numbers", where, key, n);
        out[i++] = cc_manifest_float(e->valuedouble);
    }
    return true;
}

/* Tensor index by name; -1 with the error set ("<where>: <role> "x" is not a declared
 * tensor") when absent. */
static int lookup(struct cc_bundle_loader *L, const char *name, const char *where, const char *role)
{
    int t = cc_model_find_tensor(L->m, name);
    if (t < 0)
        cc_manifest_fail(L, "%s: %s \"%s\" is not a declared tensor (see \"tensors\")", where, role,
                         name);
    return t;
}

/* ---------------------------------------------------------------------------------------- */
/* Input and output spec, labels                                                             */
/* ---------------------------------------------------------------------------------------- */

static const char *const color_names[] = {[CC_COLOR_RGB] = "RGB", [CC_COLOR_BGR] = "BGR"};
static const char *const resize_names[] = {
    [CC_RESIZE_SQUASH] = "squash", [CC_RESIZE_CENTER_CROP] = "center_crop"};
static const char *const kind_names[] = {
    [CC_OUTPUT_LOGITS] = "logits", [CC_OUTPUT_PROBABILITIES] = "probabilities"};

/* input.roi (optional, any version): [x, y, w, h], fractions of the frame that camclass-train
 * cropped to and camclass crops to (common/roi.h). */
static bool load_roi(struct cc_bundle_loader *L, const cJSON *ji, struct cc_input_spec *in)
{
    if (!cJSON_GetObjectItemCaseSensitive(ji, "roi"))
        return true;
    float checked[4]; // the shape and types; the values are kept as doubles, as written
    if (!member_floats(L, ji, "roi", 4, checked, "input"))
        return false;
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(ji, "roi");
    double v[4];
    for (int i = 0; i < 4; i++)
        v[i] = cJSON_GetArrayItem(jr, i)->valuedouble;
    struct cc_roi roi = {CC_ROI_FRACTION, v[0], v[1], v[2], v[3]};
    struct cc_error why = {0};
    if (!cc_roi_check_fractions(&roi, &why))
        return cc_manifest_fail(L, "input.roi [x, y, w, h]: %s", why.msg);
    in->roi = roi;
    return true;
}

bool cc_manifest_load_input(struct cc_bundle_loader *L, const cJSON *root)
{
    struct cc_input_spec *in = &L->m->input;
    const cJSON *ji = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!cJSON_IsObject(ji))
        return cc_manifest_fail(
            L, "manifest has no \"input\" object (tensor, shape, color_order, mean, std, "
               "resize)");
    const char *name = cc_manifest_str(L, ji, "tensor", "input");
    if (!name || (in->tensor = lookup(L, name, "input", "tensor")) < 0)
        return false;
    const struct cc_tensor *t = &L->m->tensors[in->tensor];
    int64_t shape[4];
    int n;
    if (!cc_manifest_ints(L, cJSON_GetObjectItemCaseSensitive(ji, "shape"), 4, 4, 0, MAX_DIM, shape,
                          &n, "input", "shape"))
        return false;
    if (t->ndim != 4 || memcmp(shape, t->shape, sizeof(shape)) != 0)
        return cc_manifest_fail(
            L,
            "input: \"shape\" [%lld,%lld,%lld,%lld] differs from the declared shape of "
            "tensor \"%s\"",
            (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3],
            t->name);
    int color, resize;
    if (!member_enum(L, ji, "color_order", color_names, 2, -1, &color, "input") ||
        !member_floats(L, ji, "mean", 3, in->mean, "input") ||
        !member_floats(L, ji, "std", 3, in->std, "input"))
        return false;
    in->color = (enum cc_color_order)color;
    const cJSON *jr = cc_manifest_member(L, ji, "resize", cJSON_Object, "input");
    if (!jr || !member_enum(L, jr, "policy", resize_names, 2, -1, &resize, "input.resize"))
        return false;
    in->resize = (enum cc_resize_policy)resize;
    int64_t size = 0;
    if (in->resize == CC_RESIZE_CENTER_CROP &&
        !cc_manifest_int(L, cJSON_GetObjectItemCaseSensitive(jr, "size"), 1, MAX_DIM, &size,
                         "input.resize", "size"))
        return false;
    in->resize_size = (int)size;
    // Absent means false: older bundles keep PyTorch's bilinear without antialiasing. true
    // needs version 3, so that a reader from before it refuses the bundle instead of
    // resampling it the old way (it ignores keys it does not know).
    const cJSON *ja = cJSON_GetObjectItemCaseSensitive(jr, "antialias");
    if (ja && !cJSON_IsBool(ja))
        return cc_manifest_fail(L, "input.resize: \"antialias\" must be true or false, not %s",
                                json_value_kind(ja));
    in->antialias = cJSON_IsTrue(ja);
    if (in->antialias && L->version < FIRST_ANTIALIAS_VERSION)
        return cc_manifest_fail(
            L,
            "input.resize: \"antialias\": true needs format version %d (this bundle says "
            "%d); re-export it with this camclass's camclass-export",
            FIRST_ANTIALIAS_VERSION, L->version);
    return load_roi(L, ji, in);
}

/* output.unknown_threshold (version 4): optional, a number in (0, 1). A reader before version 4
 * would ignore it and answer a class where the model says "unknown", hence the version. */
static bool load_unknown_threshold(struct cc_bundle_loader *L, const cJSON *jo,
                                   struct cc_output_spec *out)
{
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(jo, "unknown_threshold");
    if (!jt)
        return true;
    if (!cJSON_IsNumber(jt) || !(jt->valuedouble > 0 && jt->valuedouble < 1))
        return cc_manifest_fail(L, "output.unknown_threshold must be a number between 0 and 1 "
                                   "(the lowest top probability that is an answer)");
    if (L->version < FIRST_UNKNOWN_VERSION)
        return cc_manifest_fail(L, "output.unknown_threshold needs format version %d (this "
                                   "bundle says %d)", FIRST_UNKNOWN_VERSION, L->version);
    out->unknown_threshold = (float)jt->valuedouble;
    return true;
}

bool cc_manifest_load_output(struct cc_bundle_loader *L, const cJSON *root)
{
    struct cc_output_spec *out = &L->m->output;
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(root, "output");
    if (!cJSON_IsObject(jo))
        return cc_manifest_fail(L, "manifest has no \"output\" object (tensor, kind, classes)");
    const char *name = cc_manifest_str(L, jo, "tensor", "output");
    int kind;
    int64_t classes = 0;
    if (!name || (out->tensor = lookup(L, name, "output", "tensor")) < 0 ||
        !member_enum(L, jo, "kind", kind_names, 2, -1, &kind, "output") ||
        !cc_manifest_int(L, cJSON_GetObjectItemCaseSensitive(jo, "classes"), 1, MAX_CLASSES,
                         &classes, "output", "classes"))
        return false;
    out->kind = (enum cc_output_kind)kind;
    out->classes = (int)classes;
    return load_unknown_threshold(L, jo, out);
}

/* ---------------------------------------------------------------------------------------- */
/* Graph                                                                                     */
/* ---------------------------------------------------------------------------------------- */

// Attribute names each op accepts; anything else is an error (catches exporter typos).
static const char *const conv_keys[] = {"stride",     "padding",   "dilation", "groups",
                                        "activation", "clamp_min", "clamp_max"};
static const char *const act_keys[] = {"activation", "clamp_min", "clamp_max"};
static const char *const max_pool_keys[] = {"kernel", "stride", "padding", "ceil_mode"};
static const char *const avg_pool_keys[] = {"kernel", "stride", "padding", "ceil_mode",
                                            "count_include_pad"};
static const char *const slice_keys[] = {"start", "end"};
static const char *const shuffle_keys[] = {"groups"};
#define KEYS(k)                                                                                    \
    {                                                                                              \
        k, (int)(sizeof(k) / sizeof(k[0]))                                                         \
    }
static const struct {
    const char *const *keys;
    int n;
} op_attr_keys[CC_OP_COUNT] = {
    [CC_OP_CONV2D] = KEYS(conv_keys),
    [CC_OP_ADD] = KEYS(act_keys),
    [CC_OP_LINEAR] = KEYS(act_keys),
    [CC_OP_CLAMP] = KEYS(act_keys),
    [CC_OP_MUL] = KEYS(act_keys),
    [CC_OP_MAX_POOL2D] = KEYS(max_pool_keys),
    [CC_OP_AVG_POOL2D] = KEYS(avg_pool_keys),
    [CC_OP_SLICE] = KEYS(slice_keys),
    [CC_OP_CHANNEL_SHUFFLE] = KEYS(shuffle_keys),
};

// Fused activations by name; "clamp" reads clamp_min and clamp_max.
static const char *const act_names[] = {"none",    "relu",        "relu6",     "clamp",
                                        "sigmoid", "hardsigmoid", "hardswish", "silu"};
enum { ACT_NAME_CLAMP = 3 };

/* The activation named by act_names[i] (clamp: without its range). */
static struct cc_act act_by_name(int i)
{
    static const enum cc_act_kind kinds[] = {CC_ACT_SIGMOID, CC_ACT_HARDSIGMOID, CC_ACT_HARDSWISH,
                                             CC_ACT_SILU};
    switch (i) {
    case 1:
        return cc_act_relu();
    case 2:
        return cc_act_relu6();
    case 0:
    case ACT_NAME_CLAMP:
        return cc_act_none();
    default:
        return cc_act_of(kinds[i - 4]);
    }
}

/* ja["activation"] (and clamp_min/clamp_max) into act. */
static bool load_act(struct cc_bundle_loader *L, const cJSON *ja, struct cc_act *act,
                     const char *where)
{
    int kind;
    if (!member_enum(L, ja, "activation", act_names,
                     (int)(sizeof(act_names) / sizeof(act_names[0])), 0, &kind, where))
        return false;
    *act = act_by_name(kind);
    if (kind != ACT_NAME_CLAMP)
        return true;
    const cJSON *lo = cc_manifest_member(L, ja, "clamp_min", cJSON_Number, where);
    const cJSON *hi = lo ? cc_manifest_member(L, ja, "clamp_max", cJSON_Number, where) : NULL;
    if (hi)
        *act = (struct cc_act){cc_manifest_float(lo->valuedouble),
                               cc_manifest_float(hi->valuedouble), CC_ACT_CLAMP};
    return hi != NULL;
}

/* obj[key] as an integer in lo..hi; def when absent. */
static bool attr_int(struct cc_bundle_loader *L, const cJSON *obj, const char *key, int lo, int hi,
                     int def, int *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    int64_t x = def;
    if (v && !cc_manifest_int(L, v, lo, hi, &x, where, key))
        return false;
    *out = (int)x;
    return true;
}

/* obj[key] as a JSON boolean (0 or 1); def when absent. */
static bool attr_bool(struct cc_bundle_loader *L, const cJSON *obj, const char *key, int def,
                      int *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v && !cJSON_IsBool(v))
        return cc_manifest_fail(L, "%s: \"%s\" must be true or false", where, key);
    *out = v ? cJSON_IsTrue(v) : def;
    return true;
}

/* The op's own attributes (not the activation); ranges are checked by finalize (op_rules.c). */
static bool load_op_attrs(struct cc_bundle_loader *L, const cJSON *ja, enum cc_op op,
                          union cc_attrs *a, const char *where)
{
    switch (op) {
    case CC_OP_CONV2D:
        return attr_ints(L, ja, "stride", 2, a->conv.stride, where) &&
               attr_ints(L, ja, "padding", 4, a->conv.pad, where) &&
               attr_ints(L, ja, "dilation", 2, a->conv.dilation, where) &&
               attr_int(L, ja, "groups", 1, (int)MAX_DIM, 1, &a->conv.groups, where);
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D: {
        const cJSON *k = cc_manifest_member(L, ja, "kernel", cJSON_Array, where);
        a->pool.kernel[0] = a->pool.kernel[1] = 1;
        if (!k || !attr_ints(L, ja, "kernel", 2, a->pool.kernel, where))
            return false;
        a->pool.stride[0] = a->pool.kernel[0]; // PyTorch's default: stride = kernel
        a->pool.stride[1] = a->pool.kernel[1];
        return attr_ints(L, ja, "stride", 2, a->pool.stride, where) &&
               attr_ints(L, ja, "padding", 4, a->pool.pad, where) &&
               attr_bool(L, ja, "ceil_mode", 0, &a->pool.ceil_mode, where) &&
               attr_bool(L, ja, "count_include_pad", 1, &a->pool.count_include_pad, where);
    }
    case CC_OP_SLICE:
        return attr_int(L, ja, "start", 0, (int)MAX_DIM, 0, &a->slice.start, where) &&
               cc_manifest_member(L, ja, "end", cJSON_Number, where) &&
               attr_int(L, ja, "end", 1, (int)MAX_DIM, 1, &a->slice.end, where);
    case CC_OP_CHANNEL_SHUFFLE:
        return cc_manifest_member(L, ja, "groups", cJSON_Number, where) &&
               attr_int(L, ja, "groups", 1, (int)MAX_DIM, 1, &a->shuffle.groups, where);
    default:
        return true;
    }
}

/* Parses a node's attrs (NULL when absent) into attrs/act. */
static bool load_attrs(struct cc_bundle_loader *L, const cJSON *ja, enum cc_op op,
                       union cc_attrs *attrs, struct cc_act *act, const char *where)
{
    static const cJSON empty = {.type = cJSON_Object};
    memset(attrs, 0, sizeof(*attrs));
    if (op == CC_OP_CONV2D)
        attrs->conv = (struct cc_conv2d_attrs){{1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
    *act = cc_act_none();
    if (!ja)
        ja = &empty; // required attributes are still asked for
    if (!cJSON_IsObject(ja))
        return cc_manifest_fail(L, "%s: \"attrs\" must be an object", where);
    const cJSON *e;
    cJSON_ArrayForEach(e, ja)
    {
        if (name_index(op_attr_keys[op].keys, op_attr_keys[op].n, e->string) < 0) {
            char list[256];
            return cc_manifest_fail(
                L, "%s: unknown attribute \"%s\"; %s takes %s", where, e->string, cc_op_name(op),
                op_attr_keys[op].n
                    ? join(list, sizeof(list), op_attr_keys[op].keys, op_attr_keys[op].n)
                    : "none");
        }
    }
    return load_op_attrs(L, ja, op, attrs, where) && load_act(L, ja, act, where);
}

/* Looks up the names of a node's inputs or outputs (an array of n_min..n_max strings). */
static bool load_node_tensors(struct cc_bundle_loader *L, const cJSON *jn, const char *key,
                              int n_min, int n_max, int *out, int *n, const char *where)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(jn, key);
    int len = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
    if (len < n_min || len > n_max)
        return cc_manifest_fail(L, "%s: \"%s\" must be an array of %d to %d tensor names", where,
                                key, n_min, n_max);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsString(e))
            return cc_manifest_fail(L, "%s: \"%s\" must hold tensor names (strings)", where, key);
        if ((out[i++] = lookup(L, e->valuestring, where, key[0] == 'i' ? "input" : "output")) < 0)
            return false;
    }
    *n = len;
    return true;
}

static bool load_node(struct cc_bundle_loader *L, const cJSON *jn, int k)
{
    char where[300];
    snprintf(where, sizeof(where), "graph[%d]", k);
    if (!cJSON_IsObject(jn))
        return cc_manifest_fail(L, "%s is not an object", where);
    const char *name = cc_manifest_str(L, jn, "name", where);
    if (!name)
        return false;
    snprintf(where, sizeof(where), "node \"%.256s\"", name);
    const char *opname = cc_manifest_str(L, jn, "op", where);
    if (!opname)
        return false;
    enum cc_op op = cc_op_from_name(opname);
    if (op == CC_OP_COUNT) {
        const char *ops[CC_OP_COUNT];
        char list[256];
        for (int i = 0; i < CC_OP_COUNT; i++)
            ops[i] = cc_op_name((enum cc_op)i);
        return cc_manifest_fail(L, "%s uses unknown op \"%s\"; this camclass supports %s", where,
                                opname, join(list, sizeof(list), ops, CC_OP_COUNT));
    }
    int in[CC_MAX_NODE_INPUTS], out[CC_MAX_NODE_OUTPUTS], n_in, n_out;
    union cc_attrs attrs;
    struct cc_act act;
    if (!load_node_tensors(L, jn, "inputs", 1, CC_MAX_NODE_INPUTS, in, &n_in, where) ||
        !load_node_tensors(L, jn, "outputs", 1, CC_MAX_NODE_OUTPUTS, out, &n_out, where) ||
        !load_attrs(L, cJSON_GetObjectItemCaseSensitive(jn, "attrs"), op, &attrs, &act, where))
        return false;
    if (cc_model_add_node(L->m, op, name, n_in, in, n_out, out, &attrs, act, &L->merr) < 0)
        return cc_manifest_fail_builder(L);
    return true;
}

bool cc_manifest_load_graph(struct cc_bundle_loader *L, const cJSON *root)
{
    const cJSON *arr = cc_manifest_member(L, root, "graph", cJSON_Array, "manifest");
    if (!arr)
        return false;
    if (cJSON_GetArraySize(arr) > MAX_NODES)
        return cc_manifest_fail(L, "%d nodes, above the limit of %d", cJSON_GetArraySize(arr),
                                MAX_NODES);
    int k = 0;
    const cJSON *jn;
    cJSON_ArrayForEach(jn, arr)
    {
        if (!load_node(L, jn, k++))
            return false;
    }
    return true;
}

const char *cc_manifest_check_header(struct cc_bundle_loader *L, const cJSON *root)
{
    const char *format = cc_manifest_str(L, root, "format", "manifest");
    if (!format)
        return NULL;
    if (strcmp(format, FORMAT_NAME) != 0) {
        cc_manifest_fail(
            L, "manifest \"format\" is \"%s\", expected \"%s\"; this is not a camclass bundle",
            format, FORMAT_NAME);
        return NULL;
    }
    const cJSON *v = cc_manifest_member(L, root, "version", cJSON_Number, "manifest");
    if (!v)
        return NULL;
    if (v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > FORMAT_VERSION) {
        cc_manifest_fail(L, "unknown format version %g; this camclass reads versions 1 to %d",
                         v->valuedouble, FORMAT_VERSION);
        return NULL;
    }
    L->version = (int)v->valuedouble;
    return cc_manifest_str(L, root, "name", "manifest");
}

bool cc_manifest_load_training(struct cc_bundle_loader *L, const cJSON *root)
{
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(root, "training");
    if (!jt)
        return true;
    if (!cJSON_IsObject(jt))
        return cc_manifest_fail(L,
                                "\"training\" must be a JSON object (what the model was trained "
                                "on), not %s; fix or remove it",
                                json_value_kind(jt));
    char *text = cJSON_PrintUnformatted(jt);
    if (!text)
        return cc_manifest_fail(L, "out of memory reading \"training\"");
    size_t len = strlen(text);
    if (len > MAX_TRAINING_BYTES) {
        free(text);
        return cc_manifest_fail(L,
                                "\"training\" is %zu bytes of JSON, above the limit of %d; keep "
                                "it to a summary of what the model was trained on",
                                len, MAX_TRAINING_BYTES);
    }
    L->m->training_json = text; // cJSON allocates with malloc: cc_model_destroy frees it
    return true;
}
