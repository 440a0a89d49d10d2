/* camclass — the model bundle loader: manifest -> model (see bundle.h, docs/MODEL_FORMAT.md).
 *
 * Order of work: open the zip and check every entry name (bundle_zip.c), read and parse
 * manifest.json (cJSON), then tensors (reading constant data straight into model storage: f32
 * values, or i8 values and their per-channel scales),
 * input/output spec, labels and graph, each through the model.h builder, and last
 * cc_model_finalize(), which checks the graph (order, shapes, limits). Every message starts
 * with "bundle PATH: ".
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "bundle.h"
#include "bundle_zip.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bundle.c reads little-endian f32 data (values, i8 scales) in place; add byte swapping"
#endif

#define FORMAT_NAME "camclass-bundle"
#define FORMAT_VERSION 3          // the newest this loader reads; versions 1 and 2 still load
#define FIRST_ACT_QUANT_VERSION 2 // activation quantization ("quant" on an f32 activation)
#define FIRST_ANTIALIAS_VERSION 3 // "antialias": true in input.resize
#define MANIFEST_ENTRY "manifest.json"
#define MAX_MANIFEST_BYTES ((uint64_t)16 << 20)
#define MAX_LABELS_BYTES ((uint64_t)32 << 20) // 100 000 labels of 256 bytes + line ends
#define MAX_CONST_BYTES ((int64_t)2 << 30)
#define MAX_TENSORS 65536
#define MAX_NODES 65536
#define MAX_CLASSES 100000
#define MAX_DIM 1048576.0
#define MAX_JSON_INT 9007199254740992.0 // 2^53: larger JSON numbers are not exact as doubles
#define DATA_ALIGN 64

// State of one load. Nothing outlives the call except the returned model.
struct loader {
    struct cc_bundle_zip *zip; // the open archive, bundle name and caller's error (borrowed)
    struct cc_model *m;        // the model being built (owned until returned)
    struct cc_error merr;      // builder errors, passed on with the bundle prefix
    int64_t const_bytes;       // constant data read so far
    int version;               // the manifest's format version (1 to FORMAT_VERSION)
};

/* ---------------------------------------------------------------------------------------- */
/* Errors and small helpers                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Sets "bundle PATH: <msg>", one line (cc_bundle_zip_failv). Returns false. */
__attribute__((format(printf, 2, 3))) static bool fail(struct loader *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_bundle_zip_failv(L->zip, fmt, ap);
    va_end(ap);
    return false;
}

/* Passes a builder error (L->merr) on with the bundle prefix. */
static bool fail_builder(struct loader *L)
{
    return fail(L, "%s", L->merr.msg);
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

static const char *json_type_name(int type)
{
    return type == cJSON_String   ? "string"
           : type == cJSON_Number ? "number"
           : type == cJSON_Array  ? "array"
                                  : "object";
}

/* obj[key], which must exist and have the given cJSON type. */
static const cJSON *member(struct loader *L, const cJSON *obj, const char *key, int type,
                           const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        fail(L, "%s has no \"%s\"", where, key);
    else if ((v->type & 0xff) != type)
        fail(L, "%s: \"%s\" must be a %s", where, key, json_type_name(type));
    else
        return v;
    return NULL;
}

/* obj[key] as a string, or NULL with the error set. */
static const char *member_str(struct loader *L, const cJSON *obj, const char *key,
                              const char *where)
{
    const cJSON *v = member(L, obj, key, cJSON_String, where);
    return v ? v->valuestring : NULL;
}

/* v as an integer in lo..hi (JSON numbers are doubles: exact up to 2^53). */
static bool json_int(struct loader *L, const cJSON *v, double lo, double hi, int64_t *out,
                     const char *where, const char *key)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d >= lo && d <= hi) || d != floor(d)) {
        if (isnan(d))
            return fail(L, "%s: \"%s\" must be an integer in %.0f..%.0f", where, key, lo, hi);
        return fail(L, "%s: \"%s\" must be an integer in %.0f..%.0f (got %.17g)", where, key, lo,
                    hi, d);
    }
    *out = (int64_t)d;
    return true;
}

/* v as an array of n_min..n_max integers in lo..hi; *n gets the length. */
static bool json_ints(struct loader *L, const cJSON *v, int n_min, int n_max, double lo, double hi,
                      int64_t *out, int *n, const char *where, const char *key)
{
    int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (len < n_min || len > n_max) {
        if (n_min == n_max)
            return fail(L, "%s: \"%s\" must be an array of %d integers", where, key, n_min);
        return fail(L, "%s: \"%s\" must be an array of %d to %d integers", where, key, n_min,
                    n_max);
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!json_int(L, e, lo, hi, &out[i++], where, key))
            return false;
    }
    *n = len;
    return true;
}

/* obj[key] as int array of exactly n ints, or def when the key is absent. */
static bool attr_ints(struct loader *L, const cJSON *obj, const char *key, int n, int *out,
                      const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return true; // the caller filled in the default
    int64_t tmp[4];
    int got;
    if (!json_ints(L, v, n, n, -2147483648.0, 2147483647.0, tmp, &got, where, key))
        return false;
    for (int i = 0; i < n; i++)
        out[i] = (int)tmp[i];
    return true;
}

/* obj[key] as one of names (as an index). Absent: def when def >= 0, else an error. */
static bool member_enum(struct loader *L, const cJSON *obj, const char *key,
                        const char *const *names, int n, int def, int *out, const char *where)
{
    if (def >= 0 && !cJSON_GetObjectItemCaseSensitive(obj, key)) {
        *out = def;
        return true;
    }
    const char *s = member_str(L, obj, key, where);
    if (!s)
        return false;
    if ((*out = name_index(names, n, s)) < 0) {
        char list[256];
        return fail(L, "%s: \"%s\" is \"%s\"; expected one of %s", where, key, s,
                    join(list, sizeof(list), names, n));
    }
    return true;
}

/* d as a float; values beyond the float range become +-infinity (a plain cast would be
 * undefined behaviour). */
static float to_float(double d)
{
    return d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
}

/* obj[key] as n floats. */
static bool member_floats(struct loader *L, const cJSON *obj, const char *key, int n, float *out,
                          const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
        return fail(L, "%s: \"%s\" must be an array of %d numbers", where, key, n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsNumber(e))
            return fail(L, "%s: \"%s\" must be an array of %d numbers", where, key, n);
        out[i++] = to_float(e->valuedouble);
    }
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Tensors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Tensor index by name; -1 with the error set ("<where>: <role> "x" is not a declared
 * tensor") when absent. */
static int lookup(struct loader *L, const char *name, const char *where, const char *role)
{
    int t = cc_model_find_tensor(L->m, name);
    if (t < 0)
        fail(L, "%s: %s \"%s\" is not a declared tensor (see \"tensors\")", where, role, name);
    return t;
}

/* A checked data reference {entry, offset, size} (docs/MODEL_FORMAT.md, "tensors"). */
struct data_ref {
    const char *entry; // borrowed from the manifest
    int64_t index;     // of the entry in the zip
    int64_t offset, size;
};

/* Checks the reference jref (named key in messages: "data" or "scales") to count values of
 * elem bytes each (type, e.g. "f32 values", says what they are): size exact, offset aligned,
 * entry stored, range inside it, the constant-data limit. Fills r; false with the error set. */
static bool check_ref(struct loader *L, const cJSON *jref, const char *key, int64_t count, int elem,
                      const char *type, const char *where, struct data_ref *r)
{
    if (!cJSON_IsObject(jref))
        return fail(L, "%s: \"%s\" must be an object {entry, offset, size}", where, key);
    r->entry = member_str(L, jref, "entry", where);
    if (!r->entry ||
        !json_int(L, cJSON_GetObjectItemCaseSensitive(jref, "offset"), 0, MAX_JSON_INT, &r->offset,
                  where, "offset") ||
        !json_int(L, cJSON_GetObjectItemCaseSensitive(jref, "size"), 0, MAX_JSON_INT, &r->size,
                  where, "size"))
        return false;
    int64_t want = count * elem; // count <= 2^28 (checked by the builder), elem <= 4
    if (r->size != want)
        return fail(L, "%s: %s size is %lld bytes but its %lld %s take %lld", where, key,
                    (long long)r->size, (long long)count, type, (long long)want);
    if (r->offset % DATA_ALIGN)
        return fail(L, "%s: %s offset %lld is not a multiple of %d; re-export the bundle", where,
                    key, (long long)r->offset, DATA_ALIGN);
    if (L->const_bytes + r->size > MAX_CONST_BYTES)
        return fail(L, "%s: constant data exceeds the limit of %lld bytes", where,
                    (long long)MAX_CONST_BYTES);
    char what[320];
    snprintf(what, sizeof(what), "%s: %s", where, key);
    uint64_t entry_size, end;
    if ((r->index = cc_bundle_zip_find_stored(L->zip, r->entry, what, &entry_size)) < 0)
        return false;
    if (__builtin_add_overflow((uint64_t)r->offset, (uint64_t)r->size, &end) || end > entry_size)
        return fail(L, "%s: %s bytes %lld..%lld lie outside entry \"%s\" (%llu bytes)", where, key,
                    (long long)r->offset, (long long)(r->offset + r->size), r->entry,
                    (unsigned long long)entry_size);
    L->const_bytes += r->size;
    return true;
}

/* Reads the bytes of a checked reference into dst, and checks the entry's CRC-32 (once). */
static bool read_ref(struct loader *L, const struct data_ref *r, void *dst)
{
    return cc_bundle_zip_read_range(L->zip, r->index, r->entry, (uint64_t)r->offset,
                                    (uint64_t)r->size, false, dst) &&
           cc_bundle_zip_check_crc(L->zip, r->index, r->entry);
}

/* Reads the data of f32 tensor idx described by jdata {entry, offset, size}. */
static bool load_data(struct loader *L, const cJSON *jdata, int idx, const char *where)
{
    struct data_ref r;
    if (!check_ref(L, jdata, "data", L->m->tensors[idx].count, 4, "f32 values", where, &r))
        return false;
    float *dst = cc_model_alloc_tensor_data(L->m, idx, &L->merr);
    if (!dst)
        return fail_builder(L);
    return read_ref(L, &r, dst);
}

/* Reads i8 tensor idx: its values (jdata) and "quant": {"axis": 0, "scales": {ref}} (jquant).
 * The scales' values (finite, > 0) and where the tensor is used are checked by finalize. */
static bool load_i8(struct loader *L, const cJSON *jdata, const cJSON *jquant, int idx,
                    const char *where)
{
    const struct cc_tensor *t = &L->m->tensors[idx];
    if (!jdata)
        return fail(L,
                    "%s: dtype i8 without \"data\"; only constants (the weights of conv2d and "
                    "linear nodes) may be i8",
                    where);
    if (!cJSON_IsObject(jquant))
        return fail(L,
                    "%s: dtype i8 needs \"quant\": {\"axis\": 0, \"scales\": {entry, offset, "
                    "size}} (the bundle format: camclass-export(1))",
                    where);
    const cJSON *e;
    cJSON_ArrayForEach(e, jquant)
    {
        if (strcmp(e->string, "axis") != 0 && strcmp(e->string, "scales") != 0)
            return fail(L, "%s: unknown \"quant\" key \"%s\"; quant takes axis, scales", where,
                        e->string);
    }
    int64_t axis = 0;
    if (!json_int(L, cJSON_GetObjectItemCaseSensitive(jquant, "axis"), -MAX_JSON_INT, MAX_JSON_INT,
                  &axis, where, "quant.axis"))
        return false;
    if (axis != 0)
        return fail(L,
                    "%s: quant axis %lld is not supported; i8 scales are per output channel "
                    "(axis 0)",
                    where, (long long)axis);
    struct data_ref rq, rs;
    int8_t *q;
    float *scales;
    if (!check_ref(L, jdata, "data", t->count, 1, "i8 values", where, &rq) ||
        !check_ref(L, cJSON_GetObjectItemCaseSensitive(jquant, "scales"), "scales", t->shape[0], 4,
                   "f32 scales (one per output channel, shape[0])", where, &rs))
        return false;
    if (!cc_model_alloc_tensor_i8(L->m, idx, &q, &scales, &L->merr))
        return fail_builder(L);
    return read_ref(L, &rq, q) && read_ref(L, &rs, scales);
}

/* Reads the activation quantization {"scale": S, "zero_point": Z} of f32 activation idx
 * (format version 2); the ranges are checked again by the builder. */
static bool load_act_quant(struct loader *L, const cJSON *jquant, int idx, const char *where)
{
    if (L->m->tensors[idx].data)
        return fail(L, "%s: \"quant\" is for activations and i8 weights, not f32 constants", where);
    if (L->version < FIRST_ACT_QUANT_VERSION)
        return fail(L,
                    "%s: \"quant\" on an f32 activation needs format version %d (this bundle "
                    "says %d); re-export it with this camclass's camclass-export",
                    where, FIRST_ACT_QUANT_VERSION, L->version);
    if (!cJSON_IsObject(jquant))
        return fail(L, "%s: \"quant\" must be {\"scale\": S, \"zero_point\": Z}", where);
    const cJSON *e;
    cJSON_ArrayForEach(e, jquant)
    {
        if (strcmp(e->string, "scale") != 0 && strcmp(e->string, "zero_point") != 0)
            return fail(L,
                        "%s: unknown \"quant\" key \"%s\"; an activation's quant takes scale, "
                        "zero_point",
                        where, e->string);
    }
    const cJSON *js = member(L, jquant, "scale", cJSON_Number, where);
    int64_t zp = 0;
    if (!js || !json_int(L, cJSON_GetObjectItemCaseSensitive(jquant, "zero_point"), -128, 127, &zp,
                         where, "quant.zero_point"))
        return false;
    float scale = to_float(js->valuedouble);
    if (!(scale > 0) || !isfinite(scale))
        return fail(L, "%s: quant scale %.9g must be finite and > 0", where, js->valuedouble);
    struct cc_act_quant q = {scale, (int)zp};
    return cc_model_set_act_quant(L->m, idx, q, &L->merr) || fail_builder(L);
}

static bool load_tensor(struct loader *L, const cJSON *jt, int i)
{
    char where[300];
    snprintf(where, sizeof(where), "tensors[%d]", i);
    if (!cJSON_IsObject(jt))
        return fail(L, "%s is not an object", where);
    const char *name = member_str(L, jt, "name", where);
    if (!name)
        return false;
    snprintf(where, sizeof(where), "tensor \"%.256s\"", name);
    const char *dt = member_str(L, jt, "dtype", where);
    if (!dt)
        return false;
    enum cc_dtype dtype = CC_DTYPE_F32;
    while (dtype <= CC_DTYPE_I8 && strcmp(cc_dtype_name(dtype), dt) != 0)
        dtype++;
    if (dtype > CC_DTYPE_I8)
        return fail(L, "%s: unknown dtype \"%s\"; bundles store f32 and i8", where, dt);
    if (dtype == CC_DTYPE_F16)
        return fail(L, "%s: dtype %s is not supported by this camclass; export the model as f32",
                    where, dt);
    const cJSON *jquant = cJSON_GetObjectItemCaseSensitive(jt, "quant");
    int64_t shape[CC_MAX_DIMS];
    int ndim;
    if (!json_ints(L, cJSON_GetObjectItemCaseSensitive(jt, "shape"), 1, CC_MAX_DIMS, -MAX_JSON_INT,
                   MAX_JSON_INT, shape, &ndim, where, "shape"))
        return false;
    int idx = cc_model_add_tensor(L->m, name, dtype, ndim, shape, NULL, &L->merr);
    if (idx < 0)
        return fail_builder(L);
    const cJSON *jdata = cJSON_GetObjectItemCaseSensitive(jt, "data");
    if (dtype == CC_DTYPE_I8)
        return load_i8(L, jdata, jquant, idx, where);
    return (!jdata || load_data(L, jdata, idx, where)) &&
           (!jquant || load_act_quant(L, jquant, idx, where));
}

static bool load_tensors(struct loader *L, const cJSON *root)
{
    const cJSON *arr = member(L, root, "tensors", cJSON_Array, "manifest");
    if (!arr)
        return false;
    if (cJSON_GetArraySize(arr) > MAX_TENSORS)
        return fail(L, "%d tensors, above the limit of %d", cJSON_GetArraySize(arr), MAX_TENSORS);
    int i = 0;
    const cJSON *jt;
    cJSON_ArrayForEach(jt, arr)
    {
        if (!load_tensor(L, jt, i++))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Input and output spec, labels                                                             */
/* ---------------------------------------------------------------------------------------- */

static const char *const color_names[] = {[CC_COLOR_RGB] = "RGB", [CC_COLOR_BGR] = "BGR"};
static const char *const resize_names[] = {
    [CC_RESIZE_SQUASH] = "squash", [CC_RESIZE_CENTER_CROP] = "center_crop"};
static const char *const kind_names[] = {
    [CC_OUTPUT_LOGITS] = "logits", [CC_OUTPUT_PROBABILITIES] = "probabilities"};

static bool load_input(struct loader *L, const cJSON *root)
{
    struct cc_input_spec *in = &L->m->input;
    const cJSON *ji = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!cJSON_IsObject(ji))
        return fail(L, "manifest has no \"input\" object (tensor, shape, color_order, mean, std, "
                       "resize)");
    const char *name = member_str(L, ji, "tensor", "input");
    if (!name || (in->tensor = lookup(L, name, "input", "tensor")) < 0)
        return false;
    const struct cc_tensor *t = &L->m->tensors[in->tensor];
    int64_t shape[4];
    int n;
    if (!json_ints(L, cJSON_GetObjectItemCaseSensitive(ji, "shape"), 4, 4, 0, MAX_DIM, shape, &n,
                   "input", "shape"))
        return false;
    if (t->ndim != 4 || memcmp(shape, t->shape, sizeof(shape)) != 0)
        return fail(L,
                    "input: \"shape\" [%lld,%lld,%lld,%lld] differs from the declared shape of "
                    "tensor \"%s\"",
                    (long long)shape[0], (long long)shape[1], (long long)shape[2],
                    (long long)shape[3], t->name);
    int color, resize;
    if (!member_enum(L, ji, "color_order", color_names, 2, -1, &color, "input") ||
        !member_floats(L, ji, "mean", 3, in->mean, "input") ||
        !member_floats(L, ji, "std", 3, in->std, "input"))
        return false;
    in->color = (enum cc_color_order)color;
    const cJSON *jr = member(L, ji, "resize", cJSON_Object, "input");
    if (!jr || !member_enum(L, jr, "policy", resize_names, 2, -1, &resize, "input.resize"))
        return false;
    in->resize = (enum cc_resize_policy)resize;
    int64_t size = 0;
    if (in->resize == CC_RESIZE_CENTER_CROP &&
        !json_int(L, cJSON_GetObjectItemCaseSensitive(jr, "size"), 1, MAX_DIM, &size,
                  "input.resize", "size"))
        return false;
    in->resize_size = (int)size;
    // Absent means false: older bundles keep PyTorch's bilinear without antialiasing. true
    // needs version 3, so that a reader from before it refuses the bundle instead of
    // resampling it the old way (it ignores keys it does not know).
    const cJSON *ja = cJSON_GetObjectItemCaseSensitive(jr, "antialias");
    if (ja && !cJSON_IsBool(ja))
        return fail(L, "input.resize: \"antialias\" must be true or false, not %s",
                    cJSON_IsNull(ja)     ? "null"
                    : cJSON_IsString(ja) ? "a string"
                    : cJSON_IsNumber(ja) ? "a number"
                    : cJSON_IsArray(ja)  ? "an array"
                                         : "an object");
    in->antialias = cJSON_IsTrue(ja);
    if (in->antialias && L->version < FIRST_ANTIALIAS_VERSION)
        return fail(L,
                    "input.resize: \"antialias\": true needs format version %d (this bundle says "
                    "%d); re-export it with this camclass's camclass-export",
                    FIRST_ANTIALIAS_VERSION, L->version);
    return true;
}

static bool load_output(struct loader *L, const cJSON *root)
{
    struct cc_output_spec *out = &L->m->output;
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(root, "output");
    if (!cJSON_IsObject(jo))
        return fail(L, "manifest has no \"output\" object (tensor, kind, classes)");
    const char *name = member_str(L, jo, "tensor", "output");
    int kind;
    int64_t classes = 0;
    if (!name || (out->tensor = lookup(L, name, "output", "tensor")) < 0 ||
        !member_enum(L, jo, "kind", kind_names, 2, -1, &kind, "output") ||
        !json_int(L, cJSON_GetObjectItemCaseSensitive(jo, "classes"), 1, MAX_CLASSES, &classes,
                  "output", "classes"))
        return false;
    out->kind = (enum cc_output_kind)kind;
    out->classes = (int)classes;
    return true;
}

/* Adds the lines of text (size bytes, NUL-terminated, changed in place) to m as labels: "\n"
 * or "\r\n" ends, blank lines at the end ignored. Messages name `what` and the line. */
static bool label_lines(struct cc_model *m, char *text, size_t size, const char *what,
                        struct cc_error *err)
{
    if (memchr(text, 0, size))
        return cc_error_set(err, "%s contains a NUL byte; it must be UTF-8 text", what);
    while (size > 0 && (text[size - 1] == '\n' || text[size - 1] == '\r'))
        text[--size] = 0;
    int line = 1;
    for (char *p = text; size > 0 && p; line++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        size_t len = strlen(p);
        if (len > 0 && p[len - 1] == '\r')
            p[--len] = 0;
        if (len == 0)
            return cc_error_set(err, "%s line %d is empty; every class needs a label", what, line);
        struct cc_error e = {0};
        if (!cc_model_add_label(m, p, &e))
            return cc_error_set(err, "%s line %d: %s", what, line, e.msg);
        p = nl ? nl + 1 : NULL;
    }
    return true;
}

/* Adds the lines of a labels entry of the bundle. */
static bool add_label_lines(struct loader *L, const char *entry, char *text, size_t size)
{
    char what[300];
    snprintf(what, sizeof(what), "labels entry \"%.256s\"", entry);
    return label_lines(L->m, text, size, what, &L->merr) || fail(L, "%s", L->merr.msg);
}

bool cc_bundle_replace_labels(struct cc_model *m, const char *path, struct cc_error *err)
{
    // stat before open: a FIFO would wait for a writer; a directory is no labels file.
    struct stat st;
    if (stat(path, &st) != 0)
        return cc_error_set(err, "labels file %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cc_error_set(err,
                            "labels file %s is %s, not a regular file; give a text file with "
                            "one label per line",
                            path, cc_file_kind(st.st_mode));
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "labels file %s: %s", path, strerror(errno));
    char *text = malloc(MAX_LABELS_BYTES + 1);
    size_t size = text ? fread(text, 1, MAX_LABELS_BYTES + 1, f) : 0;
    bool read_error = ferror(f);
    fclose(f);
    if (!text)
        return cc_error_set(err, "labels file %s: out of memory", path);
    char what[300];
    snprintf(what, sizeof(what), "labels file %.256s", path);
    // Parsed into a scratch model first: on any error m keeps its labels.
    struct cc_model *tmp = cc_model_new("labels");
    bool ok = false;
    if (read_error)
        cc_error_set(err, "%s: read error", what);
    else if (size > MAX_LABELS_BYTES)
        cc_error_set(err, "%s is larger than %llu bytes", what,
                     (unsigned long long)MAX_LABELS_BYTES);
    else if (!tmp)
        cc_error_set(err, "%s: out of memory", what);
    else if (text[size] = 0, label_lines(tmp, text, size, what, err)) {
        if (tmp->n_labels != m->output.classes)
            cc_error_set(err, "%s has %d labels for a model with %d classes; give one label per "
                         "line, %d lines", what, tmp->n_labels, m->output.classes,
                         m->output.classes);
        else
            ok = true;
    }
    free(text);
    if (ok) { // swap: m takes the new labels, tmp the old ones (freed with it)
        char **labels = m->labels;
        int n = m->n_labels;
        m->labels = tmp->labels;
        m->n_labels = tmp->n_labels;
        tmp->labels = labels;
        tmp->n_labels = n;
    }
    cc_model_destroy(tmp);
    return ok;
}

static bool load_labels(struct loader *L, const cJSON *root)
{
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(root, "labels");
    if (cJSON_IsArray(jl)) {
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, jl)
        {
            if (!cJSON_IsString(e))
                return fail(L, "labels[%d] is not a string", i);
            if (!cc_model_add_label(L->m, e->valuestring, &L->merr))
                return fail_builder(L);
            i++;
        }
        return true;
    }
    if (!cJSON_IsObject(jl))
        return fail(L, "manifest has no \"labels\"; give an array of strings or "
                       "{\"entry\": \"labels.txt\"}");
    const char *entry = member_str(L, jl, "entry", "labels");
    size_t size;
    char *text =
        entry ? cc_bundle_zip_read(L->zip, entry, "labels", MAX_LABELS_BYTES, &size) : NULL;
    bool ok = text && add_label_lines(L, entry, text, size);
    free(text);
    return ok;
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
#define KEYS(k) {k, (int)(sizeof(k) / sizeof(k[0]))}
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
static bool load_act(struct loader *L, const cJSON *ja, struct cc_act *act, const char *where)
{
    int kind;
    if (!member_enum(L, ja, "activation", act_names, (int)(sizeof(act_names) / sizeof(act_names[0])),
                     0, &kind, where))
        return false;
    *act = act_by_name(kind);
    if (kind != ACT_NAME_CLAMP)
        return true;
    const cJSON *lo = member(L, ja, "clamp_min", cJSON_Number, where);
    const cJSON *hi = lo ? member(L, ja, "clamp_max", cJSON_Number, where) : NULL;
    if (hi)
        *act = (struct cc_act){to_float(lo->valuedouble), to_float(hi->valuedouble), CC_ACT_CLAMP};
    return hi != NULL;
}

/* obj[key] as an integer in lo..hi; def when absent. */
static bool attr_int(struct loader *L, const cJSON *obj, const char *key, int lo, int hi, int def,
                     int *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    int64_t x = def;
    if (v && !json_int(L, v, lo, hi, &x, where, key))
        return false;
    *out = (int)x;
    return true;
}

/* obj[key] as a JSON boolean (0 or 1); def when absent. */
static bool attr_bool(struct loader *L, const cJSON *obj, const char *key, int def, int *out,
                      const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v && !cJSON_IsBool(v))
        return fail(L, "%s: \"%s\" must be true or false", where, key);
    *out = v ? cJSON_IsTrue(v) : def;
    return true;
}

/* The op's own attributes (not the activation); ranges are checked by finalize (ops.c). */
static bool load_op_attrs(struct loader *L, const cJSON *ja, enum cc_op op, union cc_attrs *a,
                          const char *where)
{
    switch (op) {
    case CC_OP_CONV2D:
        return attr_ints(L, ja, "stride", 2, a->conv.stride, where) &&
               attr_ints(L, ja, "padding", 4, a->conv.pad, where) &&
               attr_ints(L, ja, "dilation", 2, a->conv.dilation, where) &&
               attr_int(L, ja, "groups", 1, (int)MAX_DIM, 1, &a->conv.groups, where);
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D: {
        const cJSON *k = member(L, ja, "kernel", cJSON_Array, where);
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
               member(L, ja, "end", cJSON_Number, where) &&
               attr_int(L, ja, "end", 1, (int)MAX_DIM, 1, &a->slice.end, where);
    case CC_OP_CHANNEL_SHUFFLE:
        return member(L, ja, "groups", cJSON_Number, where) &&
               attr_int(L, ja, "groups", 1, (int)MAX_DIM, 1, &a->shuffle.groups, where);
    default:
        return true;
    }
}

/* Parses a node's attrs (NULL when absent) into attrs/act. */
static bool load_attrs(struct loader *L, const cJSON *ja, enum cc_op op, union cc_attrs *attrs,
                       struct cc_act *act, const char *where)
{
    static const cJSON empty = {.type = cJSON_Object};
    memset(attrs, 0, sizeof(*attrs));
    if (op == CC_OP_CONV2D)
        attrs->conv = (struct cc_conv2d_attrs){{1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
    *act = cc_act_none();
    if (!ja)
        ja = &empty; // required attributes are still asked for
    if (!cJSON_IsObject(ja))
        return fail(L, "%s: \"attrs\" must be an object", where);
    const cJSON *e;
    cJSON_ArrayForEach(e, ja)
    {
        if (name_index(op_attr_keys[op].keys, op_attr_keys[op].n, e->string) < 0) {
            char list[256];
            return fail(L, "%s: unknown attribute \"%s\"; %s takes %s", where, e->string,
                        cc_op_name(op),
                        op_attr_keys[op].n
                            ? join(list, sizeof(list), op_attr_keys[op].keys, op_attr_keys[op].n)
                            : "none");
        }
    }
    return load_op_attrs(L, ja, op, attrs, where) && load_act(L, ja, act, where);
}

/* Looks up the names of a node's inputs or outputs (an array of n_min..n_max strings). */
static bool load_node_tensors(struct loader *L, const cJSON *jn, const char *key, int n_min,
                              int n_max, int *out, int *n, const char *where)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(jn, key);
    int len = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
    if (len < n_min || len > n_max)
        return fail(L, "%s: \"%s\" must be an array of %d to %d tensor names", where, key, n_min,
                    n_max);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsString(e))
            return fail(L, "%s: \"%s\" must hold tensor names (strings)", where, key);
        if ((out[i++] = lookup(L, e->valuestring, where, key[0] == 'i' ? "input" : "output")) < 0)
            return false;
    }
    *n = len;
    return true;
}

static bool load_node(struct loader *L, const cJSON *jn, int k)
{
    char where[300];
    snprintf(where, sizeof(where), "graph[%d]", k);
    if (!cJSON_IsObject(jn))
        return fail(L, "%s is not an object", where);
    const char *name = member_str(L, jn, "name", where);
    if (!name)
        return false;
    snprintf(where, sizeof(where), "node \"%.256s\"", name);
    const char *opname = member_str(L, jn, "op", where);
    if (!opname)
        return false;
    enum cc_op op = cc_op_from_name(opname);
    if (op == CC_OP_COUNT) {
        const char *ops[CC_OP_COUNT];
        char list[256];
        for (int i = 0; i < CC_OP_COUNT; i++)
            ops[i] = cc_op_name((enum cc_op)i);
        return fail(L, "%s uses unknown op \"%s\"; this camclass supports %s", where, opname,
                    join(list, sizeof(list), ops, CC_OP_COUNT));
    }
    int in[CC_MAX_NODE_INPUTS], out[CC_MAX_NODE_OUTPUTS], n_in, n_out;
    union cc_attrs attrs;
    struct cc_act act;
    if (!load_node_tensors(L, jn, "inputs", 1, CC_MAX_NODE_INPUTS, in, &n_in, where) ||
        !load_node_tensors(L, jn, "outputs", 1, CC_MAX_NODE_OUTPUTS, out, &n_out, where) ||
        !load_attrs(L, cJSON_GetObjectItemCaseSensitive(jn, "attrs"), op, &attrs, &act, where))
        return false;
    if (cc_model_add_node(L->m, op, name, n_in, in, n_out, out, &attrs, act, &L->merr) < 0)
        return fail_builder(L);
    return true;
}

static bool load_graph(struct loader *L, const cJSON *root)
{
    const cJSON *arr = member(L, root, "graph", cJSON_Array, "manifest");
    if (!arr)
        return false;
    if (cJSON_GetArraySize(arr) > MAX_NODES)
        return fail(L, "%d nodes, above the limit of %d", cJSON_GetArraySize(arr), MAX_NODES);
    int k = 0;
    const cJSON *jn;
    cJSON_ArrayForEach(jn, arr)
    {
        if (!load_node(L, jn, k++))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Manifest and archive                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Parses manifest.json; returns the root object or NULL with the error set. */
static cJSON *read_manifest(struct loader *L)
{
    if (!cc_bundle_zip_has(L->zip, MANIFEST_ENTRY)) {
        fail(L, "no manifest.json entry; is this a camclass bundle? (camclass-export makes them)");
        return NULL;
    }
    size_t size;
    char *text = cc_bundle_zip_read(L->zip, MANIFEST_ENTRY, "manifest", MAX_MANIFEST_BYTES, &size);
    if (!text)
        return NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, false);
    if (!root) {
        size_t at = end && end >= text && end <= text + size ? (size_t)(end - text) : 0;
        fail(L, "manifest.json is not valid JSON (error near byte %zu)", at);
    } else if (!cJSON_IsObject(root)) {
        fail(L, "manifest.json is not a JSON object");
        cJSON_Delete(root);
        root = NULL;
    }
    free(text);
    return root;
}

/* Checks format and version; returns the model name or NULL. */
static const char *check_header(struct loader *L, const cJSON *root)
{
    const char *format = member_str(L, root, "format", "manifest");
    if (!format)
        return NULL;
    if (strcmp(format, FORMAT_NAME) != 0) {
        fail(L, "manifest \"format\" is \"%s\", expected \"%s\"; this is not a camclass bundle",
             format, FORMAT_NAME);
        return NULL;
    }
    const cJSON *v = member(L, root, "version", cJSON_Number, "manifest");
    if (!v)
        return NULL;
    if (v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > FORMAT_VERSION) {
        fail(L, "unknown format version %g; this camclass reads versions 1 to %d", v->valuedouble,
             FORMAT_VERSION);
        return NULL;
    }
    L->version = (int)v->valuedouble;
    return member_str(L, root, "name", "manifest");
}

/* Loads the model from the open archive z; NULL with z->err set. */
static struct cc_model *load_archive(struct cc_bundle_zip *z)
{
    struct loader L = {.zip = z};
    cJSON *root = NULL;
    if (!cc_bundle_zip_check_names(z) || !(root = read_manifest(&L)))
        goto error;
    const char *name = check_header(&L, root);
    if (!name)
        goto error;
    if (!(L.m = cc_model_new(name))) {
        fail(&L, "out of memory");
        goto error;
    }
    if (!load_tensors(&L, root) || !load_input(&L, root) || !load_output(&L, root) ||
        !load_labels(&L, root) || !load_graph(&L, root))
        goto error;
    if (cc_model_finalize(L.m, &L.merr))
        goto done;
    fail_builder(&L);
error:
    cc_model_destroy(L.m);
    L.m = NULL;
done:
    cJSON_Delete(root);
    return L.m;
}

/* Model files of other frameworks, by extension: what converts each to a bundle. */
static const struct {
    const char *ext;
    const char *what;
} foreign_models[] = {
    // camclass-export: the exporter's installed name (tools/camclass_export.py in the source
    // tree, which the README names too); messages name nothing an installed system lacks.
    {".onnx", "an ONNX model; convert it with camclass-export --onnx FILE "
              "(camclass-export(1))"},
    {".pt", "a PyTorch file; convert it with camclass-export --model NAME --weights "
            "FILE (a torchvision model) or --module FILE.py:CLASS --weights FILE "
            "(camclass-export(1))"},
    {".pth", "a PyTorch file; convert it with camclass-export --model NAME --weights "
             "FILE (a torchvision model) or --module FILE.py:CLASS --weights FILE "
             "(camclass-export(1))"},
    {".tflite", "a TensorFlow Lite model; camclass reads its own bundles (.ccm), made from "
                "PyTorch or ONNX by camclass-export (camclass-export(1))"},
};

struct cc_model *cc_bundle_load(const char *path, struct cc_error *err)
{
    if (!path || !*path) {
        cc_error_set(err, "no bundle path given; pass the path of a .ccm file");
        return NULL;
    }
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof(foreign_models) / sizeof(foreign_models[0]); i++) {
        size_t n = strlen(foreign_models[i].ext);
        if (len > n && strcasecmp(path + len - n, foreign_models[i].ext) == 0) {
            cc_error_set(err, "bundle %s: %s", path, foreign_models[i].what);
            return NULL;
        }
    }
    struct cc_bundle_zip z;
    if (!cc_bundle_zip_open(&z, path, err))
        return NULL;
    struct cc_model *m = load_archive(&z);
    cc_bundle_zip_close(&z);
    return m;
}

struct cc_model *cc_bundle_load_from_memory(const void *data, size_t size, const char *name,
                                            struct cc_error *err)
{
    struct cc_bundle_zip z;
    if (!cc_bundle_zip_open_memory(&z, data, size, name ? name : "(in memory)", err))
        return NULL;
    struct cc_model *m = load_archive(&z);
    cc_bundle_zip_close(&z);
    return m;
}
