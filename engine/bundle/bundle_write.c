/* camclass — the bundle writer: model -> bundle (see bundle_write.h, docs/MODEL_FORMAT.md).
 *
 * Order of work: check what the model builder does not (labels, options), build manifest.json
 * with cJSON, one function per section, mirroring what bundle.c and bundle_manifest.c read
 * (every attribute spelled as their parsers spell it), while laying the constants out in
 * weights.bin; then write the zip (libzip) to a temporary file beside the path, fsync it and
 * rename it into place. The exporter's writer (python/camclass_export/export.py, write_bundle)
 * is the model: the same entry names, 64-byte aligned tensors, labels.txt one label per line, entry
 * times 1980-01-01 so that one model always gives the same bytes.
 *
 * weights.bin is never copied: it is a libzip buffer source made of fragments that point into
 * the model's tensors (and a static block of zeros for the alignment padding), read by
 * zip_close. Every failure sets one line, "writing bundle PATH: <what>; <the way out>", where
 * it is found, and removes the temporary file.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zip.h>

#include "bundle_write.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bundle_write.c writes f32 data (values, i8 scales) as it is in memory; add byte swapping"
#endif

#define FORMAT_NAME "camclass-bundle"
#define VERSION_BASE 1       // what every bundle is unless it uses one of the following
#define VERSION_ACT_QUANT 2  // "quant" on an f32 activation
#define VERSION_ANTIALIAS 3  // "antialias": true in input.resize
#define VERSION_UNKNOWN 4    // "unknown_threshold" in output
#define MANIFEST_ENTRY "manifest.json"
#define LABELS_ENTRY "labels.txt"
#define DATA_ENTRY "weights.bin"
#define DATA_ALIGN 64
#define MAX_TRAINING_BYTES 65536 // as the loader (bundle_manifest.c) takes it
#define DOS_DATE_1980 0x21       // 1980-01-01 in MS-DOS date format, time 00:00 (0)

// The alignment padding of weights.bin: never written (libzip only reads fragments).
static const uint8_t zeros[DATA_ALIGN];

/* State of one write. Nothing outlives the call. */
struct writer {
    const struct cc_model *m; // borrowed
    const char *path;         // the bundle's path, for messages (borrowed)
    struct cc_error *err;     // the caller's (borrowed; may be NULL)
    bool oom;                 // a cJSON allocation failed while the manifest was built
    zip_buffer_fragment_t *frags; // (n_frags) weights.bin in order; the array is owned, the
                                  // bytes are borrowed from m and zeros
    int n_frags, cap_frags;
    uint64_t data_size; // bytes of weights.bin so far
};

/* Sets "writing bundle PATH: <msg>". Returns false. */
__attribute__((format(printf, 2, 3))) static bool fail(struct writer *w, const char *fmt, ...)
{
    char msg[sizeof(w->err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cc_error_set(w->err, "writing bundle %s: %s", w->path, msg);
}

/* ---------------------------------------------------------------------------------------- */
/* JSON building: failures only set w->oom, checked once when the manifest is done          */
/* ---------------------------------------------------------------------------------------- */

/* Adds item (owned; NULL from a failed create) to obj as key, or to array obj when key is
 * NULL. Returns item, or NULL (item freed, w->oom set). */
static cJSON *put(struct writer *w, cJSON *obj, const char *key, cJSON *item)
{
    bool ok = item && (key ? cJSON_AddItemToObject(obj, key, item)
                           : cJSON_AddItemToArray(obj, item));
    if (!ok) {
        cJSON_Delete(item);
        w->oom = true;
        return NULL;
    }
    return item;
}

/* f as the JSON number with the fewest digits that reads back as f (0.485f is written
 * 0.485, as the exporter writes it) and that the loader does not read as infinity
 * (cc_manifest_float: beyond FLT_MAX; FLT_MAX itself is written 3.4028234663852886e+38). */
static cJSON *json_float(float f)
{
    char buf[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof(buf), "%.*g", digits, (double)f);
        double d = strtod(buf, NULL);
        if ((float)d == f && fabs(d) <= FLT_MAX)
            return cJSON_CreateNumber(d);
    }
    return cJSON_CreateNumber((double)f);
}

static cJSON *json_floats(struct writer *w, const float *v, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        put(w, arr, NULL, json_float(v[i]));
    return arr;
}

static cJSON *json_ints(struct writer *w, const int64_t *v, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        put(w, arr, NULL, cJSON_CreateNumber((double)v[i]));
    return arr;
}

static cJSON *json_int_array(struct writer *w, const int *v, int n)
{
    int64_t tmp[4];
    for (int i = 0; i < n; i++)
        tmp[i] = v[i];
    return json_ints(w, tmp, n);
}

/* ---------------------------------------------------------------------------------------- */
/* Checks the builder leaves to the loader, and the options                                  */
/* ---------------------------------------------------------------------------------------- */

/* What the loader needs that a finalized model may lack: labels, one per class, each on one
 * line of labels.txt; every constant f32 or i8; a ROI in fractions (the manifest's form). */
static bool check_model(struct writer *w)
{
    const struct cc_model *m = w->m;
    if (m->input.tensor < 0 || m->output.tensor < 0 || m->output.classes < 1)
        return fail(w, "model \"%s\" has no input or output set; finalize it before writing",
                    m->name);
    if (m->n_labels != m->output.classes)
        return fail(w, "model \"%s\" has %d labels for %d classes; add one label per class",
                    m->name, m->n_labels, m->output.classes);
    if (m->input.roi.kind == CC_ROI_PIXELS)
        return fail(w,
                    "model \"%s\" has a ROI in pixels; a bundle stores fractions of the frame "
                    "(cc_roi_to_fractions)",
                    m->name);
    for (int i = 0; i < m->n_labels; i++)
        if (strpbrk(m->labels[i], "\r\n"))
            return fail(w, "label %d holds a line break; labels.txt has one label per line", i + 1);
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].dtype != CC_DTYPE_F32 && m->tensors[i].dtype != CC_DTYPE_I8)
            return fail(w, "tensor \"%s\" has dtype %s; bundles store f32 and i8",
                        m->tensors[i].name, cc_dtype_name(m->tensors[i].dtype));
    return true;
}

/* The "training" object to write: opts->training_json parsed, else the model's own (a loaded
 * bundle's). *out gets a new cJSON object, or NULL when there is none. */
static bool training_object(struct writer *w, const struct cc_bundle_write_options *opts,
                            cJSON **out)
{
    const char *text = opts && opts->training_json ? opts->training_json : w->m->training_json;
    *out = NULL;
    if (!text)
        return true;
    const char *from = text == w->m->training_json ? "the model's training_json"
                                                   : "the training JSON";
    const char *end = NULL; // not cJSON_GetErrorPtr(): that is global state
    cJSON *t = cJSON_ParseWithOpts(text, &end, true);
    if (!t)
        return fail(w, "%s is not valid JSON (error near byte %zu); pass a JSON object", from,
                    (size_t)(end && end >= text ? end - text : 0));
    char *compact = cJSON_IsObject(t) ? cJSON_PrintUnformatted(t) : NULL;
    size_t len = compact ? strlen(compact) : 0;
    free(compact);
    if (!cJSON_IsObject(t) || len > MAX_TRAINING_BYTES) {
        cJSON_Delete(t);
        if (len > MAX_TRAINING_BYTES)
            return fail(w, "%s is %zu bytes, above the limit of %d; keep it to a summary", from,
                        len, MAX_TRAINING_BYTES);
        return fail(w, "%s must be a JSON object ({...}), as readers expect", from);
    }
    *out = t;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Manifest sections                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* The lowest format version that holds m (docs/MODEL_FORMAT.md, "version"). */
static int model_version(const struct cc_model *m)
{
    if (m->output.unknown_threshold > 0)
        return VERSION_UNKNOWN;
    if (m->input.antialias)
        return VERSION_ANTIALIAS;
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].quantized)
            return VERSION_ACT_QUANT;
    return VERSION_BASE;
}

static void add_input(struct writer *w, cJSON *root)
{
    const struct cc_input_spec *in = &w->m->input;
    const struct cc_tensor *t = &w->m->tensors[in->tensor];
    cJSON *ji = put(w, root, "input", cJSON_CreateObject());
    if (!ji)
        return;
    put(w, ji, "tensor", cJSON_CreateString(t->name));
    put(w, ji, "shape", json_ints(w, t->shape, t->ndim));
    put(w, ji, "color_order", cJSON_CreateString(in->color == CC_COLOR_BGR ? "BGR" : "RGB"));
    put(w, ji, "mean", json_floats(w, in->mean, 3));
    put(w, ji, "std", json_floats(w, in->std, 3));
    cJSON *jr = put(w, ji, "resize", cJSON_CreateObject());
    if (!jr)
        return;
    bool crop = in->resize == CC_RESIZE_CENTER_CROP;
    put(w, jr, "policy", cJSON_CreateString(crop ? "center_crop" : "squash"));
    if (crop)
        put(w, jr, "size", cJSON_CreateNumber(in->resize_size));
    if (in->antialias) // written only when true, as the exporter does: absent means false
        put(w, jr, "antialias", cJSON_CreateTrue());
    if (in->roi.kind == CC_ROI_FRACTION) { // absent: the whole frame
        double v[4] = {in->roi.x, in->roi.y, in->roi.w, in->roi.h};
        put(w, ji, "roi", cJSON_CreateDoubleArray(v, 4));
    }
}

static void add_output(struct writer *w, cJSON *root)
{
    const struct cc_output_spec *out = &w->m->output;
    cJSON *jo = put(w, root, "output", cJSON_CreateObject());
    if (!jo)
        return;
    put(w, jo, "tensor", cJSON_CreateString(w->m->tensors[out->tensor].name));
    put(w, jo, "kind",
        cJSON_CreateString(out->kind == CC_OUTPUT_PROBABILITIES ? "probabilities" : "logits"));
    put(w, jo, "classes", cJSON_CreateNumber(out->classes));
    if (out->unknown_threshold > 0)
        put(w, jo, "unknown_threshold", cJSON_CreateNumber(out->unknown_threshold));
}

/* Appends size bytes at p to weights.bin at the next multiple of DATA_ALIGN. Returns the data
 * reference {entry, offset, size}, or NULL (w->oom set). */
static cJSON *put_data(struct writer *w, const void *p, uint64_t size)
{
    if (w->n_frags + 2 > w->cap_frags) {
        int cap = w->cap_frags ? 2 * w->cap_frags : 64;
        zip_buffer_fragment_t *f = realloc(w->frags, (size_t)cap * sizeof(*f));
        if (!f) {
            w->oom = true;
            return NULL;
        }
        w->frags = f;
        w->cap_frags = cap;
    }
    uint64_t pad = -w->data_size % DATA_ALIGN;
    if (pad) // libzip only reads fragments: the casts drop a const it does not need
        w->frags[w->n_frags++] = (zip_buffer_fragment_t){(zip_uint8_t *)zeros, pad};
    w->frags[w->n_frags++] = (zip_buffer_fragment_t){(zip_uint8_t *)p, size};
    w->data_size += pad;
    cJSON *ref = cJSON_CreateObject();
    if (ref) {
        put(w, ref, "entry", cJSON_CreateString(DATA_ENTRY));
        put(w, ref, "offset", cJSON_CreateNumber((double)w->data_size));
        put(w, ref, "size", cJSON_CreateNumber((double)size));
    }
    w->data_size += size;
    return ref;
}

/* One entry of "tensors": name, dtype, shape, and the data (and quant) it has. */
static void add_tensor(struct writer *w, cJSON *arr, const struct cc_tensor *t)
{
    cJSON *jt = put(w, arr, NULL, cJSON_CreateObject());
    if (!jt)
        return;
    put(w, jt, "name", cJSON_CreateString(t->name));
    put(w, jt, "dtype", cJSON_CreateString(cc_dtype_name(t->dtype)));
    put(w, jt, "shape", json_ints(w, t->shape, t->ndim));
    cJSON *jq = NULL;
    if (t->q) { // i8 values, then their scales at the next multiple of 64, as the exporter
        put(w, jt, "data", put_data(w, t->q, (uint64_t)t->count));
        if ((jq = put(w, jt, "quant", cJSON_CreateObject()))) {
            put(w, jq, "axis", cJSON_CreateNumber(0));
            put(w, jq, "scales", put_data(w, t->scales, (uint64_t)t->shape[0] * sizeof(float)));
        }
    } else if (t->data) {
        put(w, jt, "data", put_data(w, t->data, (uint64_t)t->count * sizeof(float)));
    } else if (t->quantized && (jq = put(w, jt, "quant", cJSON_CreateObject()))) {
        put(w, jq, "scale", json_float(t->act_quant.scale));
        put(w, jq, "zero_point", cJSON_CreateNumber(t->act_quant.zero_point));
    }
}

static void add_tensors(struct writer *w, cJSON *root)
{
    cJSON *arr = put(w, root, "tensors", cJSON_CreateArray());
    for (int i = 0; arr && i < w->m->n_tensors; i++)
        add_tensor(w, arr, &w->m->tensors[i]);
}

/* ---------------------------------------------------------------------------------------- */
/* Graph                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* A clamp bound for JSON, which has no infinity: an open side is the largest f32, as the
 * exporter writes it (it clamps no finite value; the loader reads it back as FLT_MAX). */
static cJSON *json_bound(float v)
{
    return json_float(isinf(v) ? copysignf(FLT_MAX, v) : v);
}

/* The fused activation as bundle_manifest.c's load_act reads it; "none" is left out. */
static void add_act(struct writer *w, cJSON *ja, struct cc_act act)
{
    static const char *const fn_names[CC_ACT_KIND_COUNT] = {
        [CC_ACT_SIGMOID] = "sigmoid", [CC_ACT_HARDSIGMOID] = "hardsigmoid",
        [CC_ACT_HARDSWISH] = "hardswish", [CC_ACT_SILU] = "silu"};
    const char *name = act.kind != CC_ACT_CLAMP ? fn_names[act.kind] : NULL;
    if (cc_act_is_none(act))
        return;
    if (!name && act.min == 0 && isinf(act.max) && act.max > 0)
        name = "relu";
    else if (!name && act.min == 0 && act.max == 6)
        name = "relu6";
    put(w, ja, "activation", cJSON_CreateString(name ? name : "clamp"));
    if (name)
        return;
    put(w, ja, "clamp_min", json_bound(act.min));
    put(w, ja, "clamp_max", json_bound(act.max));
}

static void add_pool_attrs(struct writer *w, cJSON *ja, enum cc_op op,
                           const struct cc_pool_attrs *p)
{
    put(w, ja, "kernel", json_int_array(w, p->kernel, 2));
    put(w, ja, "stride", json_int_array(w, p->stride, 2));
    put(w, ja, "padding", json_int_array(w, p->pad, 4));
    put(w, ja, "ceil_mode", cJSON_CreateBool(p->ceil_mode));
    if (op == CC_OP_AVG_POOL2D)
        put(w, ja, "count_include_pad", cJSON_CreateBool(p->count_include_pad));
}

/* The node's "attrs", spelled as bundle_manifest.c's load_op_attrs and load_act read them. */
static void add_attrs(struct writer *w, cJSON *ja, const struct cc_node *n)
{
    const union cc_attrs *a = &n->attrs;
    switch (n->op) {
    case CC_OP_CONV2D:
        put(w, ja, "stride", json_int_array(w, a->conv.stride, 2));
        put(w, ja, "padding", json_int_array(w, a->conv.pad, 4));
        put(w, ja, "dilation", json_int_array(w, a->conv.dilation, 2));
        put(w, ja, "groups", cJSON_CreateNumber(a->conv.groups));
        break;
    case CC_OP_MAX_POOL2D:
    case CC_OP_AVG_POOL2D:
        add_pool_attrs(w, ja, n->op, &a->pool);
        break;
    case CC_OP_SLICE:
        put(w, ja, "start", cJSON_CreateNumber(a->slice.start));
        put(w, ja, "end", cJSON_CreateNumber(a->slice.end));
        break;
    case CC_OP_CHANNEL_SHUFFLE:
        put(w, ja, "groups", cJSON_CreateNumber(a->shuffle.groups));
        break;
    default:
        break;
    }
    switch (n->op) { // the ops with a fused activation
    case CC_OP_CONV2D:
    case CC_OP_ADD:
    case CC_OP_LINEAR:
    case CC_OP_CLAMP:
    case CC_OP_MUL:
        add_act(w, ja, n->act);
        break;
    default:
        break;
    }
}

/* "inputs" or "outputs": the names of n tensor indices. */
static cJSON *tensor_names(struct writer *w, const int *idx, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        put(w, arr, NULL, cJSON_CreateString(w->m->tensors[idx[i]].name));
    return arr;
}

static void add_graph(struct writer *w, cJSON *root)
{
    cJSON *arr = put(w, root, "graph", cJSON_CreateArray());
    for (int i = 0; arr && i < w->m->n_nodes; i++) {
        const struct cc_node *n = &w->m->nodes[i];
        cJSON *jn = put(w, arr, NULL, cJSON_CreateObject());
        if (!jn)
            return;
        put(w, jn, "op", cJSON_CreateString(cc_op_name(n->op)));
        put(w, jn, "name", cJSON_CreateString(n->name));
        put(w, jn, "inputs", tensor_names(w, n->inputs, n->n_inputs));
        put(w, jn, "outputs", tensor_names(w, n->outputs, n->n_outputs));
        cJSON *ja = cJSON_CreateObject();
        if (ja)
            add_attrs(w, ja, n);
        if (ja && !ja->child) // as the exporter: no "attrs" for a node without any
            cJSON_Delete(ja);
        else
            put(w, jn, "attrs", ja);
    }
}

/* The whole manifest as text (owned by the caller), or NULL with the error set. training
 * (owned) is added as the "training" key when not NULL. */
static char *build_manifest(struct writer *w, cJSON *training)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        cJSON_Delete(training);
        fail(w, "out of memory building manifest.json");
        return NULL;
    }
    put(w, root, "format", cJSON_CreateString(FORMAT_NAME));
    put(w, root, "version", cJSON_CreateNumber(model_version(w->m)));
    put(w, root, "name", cJSON_CreateString(w->m->name));
    if (training)
        put(w, root, "training", training);
    add_input(w, root);
    add_output(w, root);
    cJSON *jl = put(w, root, "labels", cJSON_CreateObject());
    if (jl)
        put(w, jl, "entry", cJSON_CreateString(LABELS_ENTRY));
    add_tensors(w, root);
    add_graph(w, root);
    char *text = w->oom ? NULL : cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        fail(w, "out of memory building manifest.json");
    return text;
}

/* labels.txt: each label and "\n" (owned by the caller), or NULL with the error set. */
static char *labels_text(struct writer *w, size_t *size)
{
    size_t len = 0;
    for (int i = 0; i < w->m->n_labels; i++)
        len += strlen(w->m->labels[i]) + 1;
    char *text = malloc(len + 1), *p = text;
    if (!text) {
        fail(w, "out of memory writing labels.txt");
        return NULL;
    }
    for (int i = 0; i < w->m->n_labels; i++)
        p += sprintf(p, "%s\n", w->m->labels[i]);
    *size = len;
    return text;
}

/* ---------------------------------------------------------------------------------------- */
/* The archive and the file                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Adds src (owned; NULL from a failed create, the error then in za) as entry name, stored,
 * dated 1980-01-01 as the exporter's entries (so that one model gives the same bytes). */
static bool add_entry(struct writer *w, zip_t *za, const char *name, zip_source_t *src)
{
    zip_int64_t i = src ? zip_file_add(za, name, src, ZIP_FL_ENC_UTF_8) : -1;
    if (i < 0) {
        zip_source_free(src);
        return fail(w, "adding entry %s: %s", name, zip_strerror(za));
    }
    if (zip_set_file_compression(za, (zip_uint64_t)i, ZIP_CM_STORE, 0) < 0 ||
        zip_file_set_dostime(za, (zip_uint64_t)i, 0, DOS_DATE_1980, 0) < 0)
        return fail(w, "entry %s: %s", name, zip_strerror(za));
    return true;
}

/* Writes the zip to tmp (an empty file); libzip writes it to a file of its own beside tmp and
 * renames that over tmp in zip_close, or removes it on failure. */
static bool write_zip(struct writer *w, const char *tmp, const char *manifest, const char *labels,
                      size_t labels_size)
{
    int code;
    zip_t *za = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        fail(w, "cannot create %s: %s", tmp, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return false;
    }
    bool ok =
        add_entry(w, za, MANIFEST_ENTRY, zip_source_buffer(za, manifest, strlen(manifest), 0)) &&
        add_entry(w, za, LABELS_ENTRY, zip_source_buffer(za, labels, labels_size, 0)) &&
        add_entry(w, za, DATA_ENTRY,
                  zip_source_buffer_fragment(za, w->frags, (zip_uint64_t)w->n_frags, 0));
    if (ok && zip_close(za) == 0)
        return true;
    if (ok) // a full disk ends here: "Write error: No space left on device"
        fail(w, "writing %s: %s; check the free space and that the directory is writable", tmp,
             zip_strerror(za));
    zip_discard(za);
    return false;
}

/* Creates the empty file "DIR/.NAME.XXXXXX.tmp" beside path (as the exporter names its
 * temporary file); *tmp gets its name (owned by the caller). */
static bool make_temp(struct writer *w, char **tmp)
{
    const char *slash = strrchr(w->path, '/');
    int dir_len = slash ? (int)(slash - w->path) + 1 : 0;
    const char *base = w->path + dir_len;
    if (!*base)
        return fail(w, "the path names no file; give one such as model.ccm");
    size_t size = strlen(w->path) + sizeof("/..XXXXXX.tmp");
    if (!(*tmp = malloc(size)))
        return fail(w, "out of memory");
    snprintf(*tmp, size, "%.*s.%s.XXXXXX.tmp", dir_len, w->path, base);
    int fd = mkstemps(*tmp, 4);
    if (fd >= 0)
        return close(fd) == 0 || fail(w, "closing %s: %s", *tmp, strerror(errno));
    int e = errno;
    free(*tmp);
    *tmp = NULL;
    if (e == ENOENT || e == ENOTDIR)
        return fail(w, "directory %.*s does not exist; create it or give another path",
                    dir_len ? dir_len : 1, dir_len ? w->path : ".");
    return fail(w, "cannot create a temporary file in %.*s: %s; check that it is writable",
                dir_len ? dir_len : 1, dir_len ? w->path : ".", strerror(e));
}

/* Makes tmp durable and readable by all (0644, as the exporter), then renames it to the
 * bundle's path: over an existing file with overwrite, else only where none exists. */
static bool commit(struct writer *w, const char *tmp, bool overwrite)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(w, "syncing %s: %s; check the disk", tmp, strerror(e));
    }
    if (close(fd) != 0)
        return fail(w, "closing %s: %s; check the disk", tmp, strerror(errno));
    int r = overwrite ? rename(tmp, w->path)
                      : renameat2(AT_FDCWD, tmp, AT_FDCWD, w->path, RENAME_NOREPLACE);
    if (r != 0 && !overwrite && errno == EINVAL) // a file system without RENAME_NOREPLACE
        r = link(tmp, w->path) == 0 ? unlink(tmp) : -1;
    if (r == 0)
        return true;
    if (errno == EEXIST)
        return fail(w, "the file exists (it appeared while writing); remove it or overwrite it");
    return fail(w, "renaming %s to it: %s; give the path of a file in a writable directory", tmp,
                strerror(errno));
}

bool cc_bundle_write(const struct cc_model *m, const char *path,
                     const struct cc_bundle_write_options *opts, struct cc_error *err)
{
    if (!path || !*path)
        return cc_error_set(err, "writing bundle: no path given; pass the path of a .ccm file");
    struct writer w = {.m = m, .path = path, .err = err};
    bool overwrite = opts && opts->overwrite;
    struct stat st;
    if (!m)
        return fail(&w, "no model given");
    if (!overwrite && lstat(path, &st) == 0)
        return fail(&w, "the file exists; remove it or choose to overwrite it");
    cJSON *training;
    if (!check_model(&w) || !training_object(&w, opts, &training))
        return false;
    size_t labels_size = 0;
    char *manifest = build_manifest(&w, training), *tmp = NULL;
    char *labels = manifest ? labels_text(&w, &labels_size) : NULL;
    bool ok = labels && make_temp(&w, &tmp);
    if (ok && !(ok = write_zip(&w, tmp, manifest, labels, labels_size) &&
                     commit(&w, tmp, overwrite)))
        unlink(tmp); // every failure after make_temp ends here: nothing is left behind
    free(tmp);
    free(labels);
    free(manifest);
    free(w.frags);
    return ok;
}
