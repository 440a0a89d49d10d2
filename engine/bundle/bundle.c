/* camclass — the model bundle loader: manifest -> model (see bundle.h, docs/MODEL_FORMAT.md).
 *
 * Order of work: open the zip and check every entry name (bundle_zip.c), read and parse
 * manifest.json (cJSON), check its header (bundle_manifest.c), then tensors (reading constant
 * data straight into model storage: f32 values, or i8 values and their per-channel scales),
 * input/output spec (bundle_manifest.c), labels, and the graph (bundle_manifest.c), each
 * through the model.h builder, and last cc_model_finalize(), which checks the graph (order,
 * shapes, limits). Every message starts with "bundle PATH: ".
 *
 * This file holds what reads the archive: the tensors and their constant data (data
 * references checked for size, alignment, range and the constant-data limit, then read and
 * CRC-32 checked through bundle_zip.c), the labels (an array, a bundle entry, or --labels
 * FILE), manifest.json itself, and the public entry points. What is the manifest's JSON alone
 * is in bundle_manifest.c.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "bundle.h"
#include "bundle_manifest.h"
#include "bundle_zip.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bundle.c reads little-endian f32 data (values, i8 scales) in place; add byte swapping"
#endif

#define FIRST_ACT_QUANT_VERSION 2 // activation quantization ("quant" on an f32 activation)
#define MANIFEST_ENTRY "manifest.json"
#define MAX_MANIFEST_BYTES ((uint64_t)16 << 20)
#define MAX_LABELS_BYTES ((uint64_t)32 << 20) // 100 000 labels of 256 bytes + line ends
#define MAX_CONST_BYTES ((int64_t)2 << 30)
#define MAX_TENSORS 65536
#define MAX_JSON_INT 9007199254740992.0 // 2^53: larger JSON numbers are not exact as doubles
#define DATA_ALIGN 64

/* ---------------------------------------------------------------------------------------- */
/* Tensors and their constant data                                                           */
/* ---------------------------------------------------------------------------------------- */

/* A checked data reference {entry, offset, size} (docs/MODEL_FORMAT.md, "tensors"). */
struct data_ref {
    const char *entry; // borrowed from the manifest
    int64_t index;     // of the entry in the zip
    int64_t offset, size;
};

/* Checks the reference jref (named key in messages: "data" or "scales") to count values of
 * elem bytes each (type, e.g. "f32 values", says what they are): size exact, offset aligned,
 * entry stored, range inside it, the constant-data limit. Fills r; false with the error set. */
static bool check_ref(struct cc_bundle_loader *L, const cJSON *jref, const char *key, int64_t count,
                      int elem, const char *type, const char *where, struct data_ref *r)
{
    if (!cJSON_IsObject(jref))
        return cc_manifest_fail(L, "%s: \"%s\" must be an object {entry, offset, size}", where,
                                key);
    r->entry = cc_manifest_str(L, jref, "entry", where);
    if (!r->entry ||
        !cc_manifest_int(L, cJSON_GetObjectItemCaseSensitive(jref, "offset"), 0, MAX_JSON_INT,
                         &r->offset, where, "offset") ||
        !cc_manifest_int(L, cJSON_GetObjectItemCaseSensitive(jref, "size"), 0, MAX_JSON_INT,
                         &r->size, where, "size"))
        return false;
    int64_t want = count * elem; // count <= 2^28 (checked by the builder), elem <= 4
    if (r->size != want)
        return cc_manifest_fail(L, "%s: %s size is %lld bytes but its %lld %s take %lld", where,
                                key, (long long)r->size, (long long)count, type, (long long)want);
    if (r->offset % DATA_ALIGN)
        return cc_manifest_fail(L,
                                "%s: %s offset %lld is not a multiple of %d; re-export the bundle",
                                where, key, (long long)r->offset, DATA_ALIGN);
    if (L->const_bytes + r->size > MAX_CONST_BYTES)
        return cc_manifest_fail(L, "%s: constant data exceeds the limit of %lld bytes", where,
                                (long long)MAX_CONST_BYTES);
    char what[320];
    snprintf(what, sizeof(what), "%s: %s", where, key);
    uint64_t entry_size, end;
    if ((r->index = cc_bundle_zip_find_stored(L->zip, r->entry, what, &entry_size)) < 0)
        return false;
    if (__builtin_add_overflow((uint64_t)r->offset, (uint64_t)r->size, &end) || end > entry_size)
        return cc_manifest_fail(L, "%s: %s bytes %lld..%lld lie outside entry \"%s\" (%llu bytes)",
                                where, key, (long long)r->offset, (long long)(r->offset + r->size),
                                r->entry, (unsigned long long)entry_size);
    L->const_bytes += r->size;
    return true;
}

/* Reads the bytes of a checked reference into dst, and checks the entry's CRC-32 (once). */
static bool read_ref(struct cc_bundle_loader *L, const struct data_ref *r, void *dst)
{
    return cc_bundle_zip_read_range(L->zip, r->index, r->entry, (uint64_t)r->offset,
                                    (uint64_t)r->size, false, dst) &&
           cc_bundle_zip_check_crc(L->zip, r->index, r->entry);
}

/* Reads the data of f32 tensor idx described by jdata {entry, offset, size}. */
static bool load_data(struct cc_bundle_loader *L, const cJSON *jdata, int idx, const char *where)
{
    struct data_ref r;
    if (!check_ref(L, jdata, "data", L->m->tensors[idx].count, 4, "f32 values", where, &r))
        return false;
    float *dst = cc_model_alloc_tensor_data(L->m, idx, &L->merr);
    if (!dst)
        return cc_manifest_fail_builder(L);
    return read_ref(L, &r, dst);
}

/* Reads i8 tensor idx: its values (jdata) and "quant": {"axis": 0, "scales": {ref}} (jquant).
 * The scales' values (finite, > 0) and where the tensor is used are checked by finalize. */
static bool load_i8(struct cc_bundle_loader *L, const cJSON *jdata, const cJSON *jquant, int idx,
                    const char *where)
{
    const struct cc_tensor *t = &L->m->tensors[idx];
    if (!jdata)
        return cc_manifest_fail(
            L,
            "%s: dtype i8 without \"data\"; only constants (the weights of conv2d and "
            "linear nodes) may be i8",
            where);
    if (!cJSON_IsObject(jquant))
        return cc_manifest_fail(
            L,
            "%s: dtype i8 needs \"quant\": {\"axis\": 0, \"scales\": {entry, offset, "
            "size}} (the bundle format: camclass-export(1))",
            where);
    const cJSON *e;
    cJSON_ArrayForEach(e, jquant)
    {
        if (strcmp(e->string, "axis") != 0 && strcmp(e->string, "scales") != 0)
            return cc_manifest_fail(L, "%s: unknown \"quant\" key \"%s\"; quant takes axis, scales",
                                    where, e->string);
    }
    int64_t axis = 0;
    if (!cc_manifest_int(L, cJSON_GetObjectItemCaseSensitive(jquant, "axis"), -MAX_JSON_INT,
                         MAX_JSON_INT, &axis, where, "quant.axis"))
        return false;
    if (axis != 0)
        return cc_manifest_fail(
            L,
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
        return cc_manifest_fail_builder(L);
    return read_ref(L, &rq, q) && read_ref(L, &rs, scales);
}

/* Reads the activation quantization {"scale": S, "zero_point": Z} of f32 activation idx
 * (format version 2); the ranges are checked again by the builder. */
static bool load_act_quant(struct cc_bundle_loader *L, const cJSON *jquant, int idx,
                           const char *where)
{
    if (L->m->tensors[idx].data)
        return cc_manifest_fail(
            L, "%s: \"quant\" is for activations and i8 weights, not f32 constants", where);
    if (L->version < FIRST_ACT_QUANT_VERSION)
        return cc_manifest_fail(
            L,
            "%s: \"quant\" on an f32 activation needs format version %d (this bundle "
            "says %d); re-export it with this camclass's camclass-export",
            where, FIRST_ACT_QUANT_VERSION, L->version);
    if (!cJSON_IsObject(jquant))
        return cc_manifest_fail(L, "%s: \"quant\" must be {\"scale\": S, \"zero_point\": Z}",
                                where);
    const cJSON *e;
    cJSON_ArrayForEach(e, jquant)
    {
        if (strcmp(e->string, "scale") != 0 && strcmp(e->string, "zero_point") != 0)
            return cc_manifest_fail(
                L,
                "%s: unknown \"quant\" key \"%s\"; an activation's quant takes scale, "
                "zero_point",
                where, e->string);
    }
    const cJSON *js = cc_manifest_member(L, jquant, "scale", cJSON_Number, where);
    int64_t zp = 0;
    if (!js || !cc_manifest_int(L, cJSON_GetObjectItemCaseSensitive(jquant, "zero_point"), -128,
                                127, &zp, where, "quant.zero_point"))
        return false;
    float scale = cc_manifest_float(js->valuedouble);
    if (!(scale > 0) || !isfinite(scale))
        return cc_manifest_fail(L, "%s: quant scale %.9g must be finite and > 0", where,
                                js->valuedouble);
    struct cc_act_quant q = {scale, (int)zp};
    return cc_model_set_act_quant(L->m, idx, q, &L->merr) || cc_manifest_fail_builder(L);
}

static bool load_tensor(struct cc_bundle_loader *L, const cJSON *jt, int i)
{
    char where[300];
    snprintf(where, sizeof(where), "tensors[%d]", i);
    if (!cJSON_IsObject(jt))
        return cc_manifest_fail(L, "%s is not an object", where);
    const char *name = cc_manifest_str(L, jt, "name", where);
    if (!name)
        return false;
    snprintf(where, sizeof(where), "tensor \"%.256s\"", name);
    const char *dt = cc_manifest_str(L, jt, "dtype", where);
    if (!dt)
        return false;
    enum cc_dtype dtype = CC_DTYPE_F32;
    while (dtype <= CC_DTYPE_I8 && strcmp(cc_dtype_name(dtype), dt) != 0)
        dtype++;
    if (dtype > CC_DTYPE_I8)
        return cc_manifest_fail(L, "%s: unknown dtype \"%s\"; bundles store f32 and i8", where, dt);
    if (dtype == CC_DTYPE_F16)
        return cc_manifest_fail(
            L, "%s: dtype %s is not supported by this camclass; export the model as f32", where,
            dt);
    const cJSON *jquant = cJSON_GetObjectItemCaseSensitive(jt, "quant");
    int64_t shape[CC_MAX_DIMS];
    int ndim;
    if (!cc_manifest_ints(L, cJSON_GetObjectItemCaseSensitive(jt, "shape"), 1, CC_MAX_DIMS,
                          -MAX_JSON_INT, MAX_JSON_INT, shape, &ndim, where, "shape"))
        return false;
    int idx = cc_model_add_tensor(L->m, name, dtype, ndim, shape, NULL, &L->merr);
    if (idx < 0)
        return cc_manifest_fail_builder(L);
    const cJSON *jdata = cJSON_GetObjectItemCaseSensitive(jt, "data");
    if (dtype == CC_DTYPE_I8)
        return load_i8(L, jdata, jquant, idx, where);
    return (!jdata || load_data(L, jdata, idx, where)) &&
           (!jquant || load_act_quant(L, jquant, idx, where));
}

static bool load_tensors(struct cc_bundle_loader *L, const cJSON *root)
{
    const cJSON *arr = cc_manifest_member(L, root, "tensors", cJSON_Array, "manifest");
    if (!arr)
        return false;
    if (cJSON_GetArraySize(arr) > MAX_TENSORS)
        return cc_manifest_fail(L, "%d tensors, above the limit of %d", cJSON_GetArraySize(arr),
                                MAX_TENSORS);
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
/* Labels                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Adds the lines of text (size bytes, NUL-terminated, changed in place) to m as labels: "\n"
 * or "\r\n" ends, blank lines at the end ignored. Messages name `what` and the line. */
static bool label_lines(struct cc_model *m, char *text, size_t size, const char *what,
                        struct cc_error *err)
{
    if (memchr(text, 0, size))
        return cc_error_set(err, "%s contains a NUL byte; it must be UTF-8 text", what);
    if (size >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) { // a UTF-8 BOM (Notepad) is no label's
        memmove(text, text + 3, size - 2);          // text: its NUL comes along
        size -= 3;
    }
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
static bool add_label_lines(struct cc_bundle_loader *L, const char *entry, char *text, size_t size)
{
    char what[300];
    snprintf(what, sizeof(what), "labels entry \"%.256s\"", entry);
    return label_lines(L->m, text, size, what, &L->merr) || cc_manifest_fail(L, "%s", L->merr.msg);
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

static bool load_labels_from(struct cc_bundle_loader *L, const cJSON *root);

/* The labels, inline or in their entry. None at all is refused here: finalize compares the count
 * with output.classes only when there are labels (a model built in code may have none). */
static bool load_labels(struct cc_bundle_loader *L, const cJSON *root)
{
    if (!load_labels_from(L, root))
        return false;
    if (L->m->n_labels == 0)
        return cc_manifest_fail(L, "\"labels\" holds no label; give one per class (%d)",
                                L->m->output.classes);
    return true;
}

static bool load_labels_from(struct cc_bundle_loader *L, const cJSON *root)
{
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(root, "labels");
    if (cJSON_IsArray(jl)) {
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, jl)
        {
            if (!cJSON_IsString(e))
                return cc_manifest_fail(L, "labels[%d] is not a string", i);
            if (!cc_model_add_label(L->m, e->valuestring, &L->merr))
                return cc_manifest_fail_builder(L);
            i++;
        }
        return true;
    }
    if (!cJSON_IsObject(jl))
        return cc_manifest_fail(L, "manifest has no \"labels\"; give an array of strings or "
                                   "{\"entry\": \"labels.txt\"}");
    const char *entry = cc_manifest_str(L, jl, "entry", "labels");
    size_t size;
    char *text =
        entry ? cc_bundle_zip_read(L->zip, entry, "labels", MAX_LABELS_BYTES, &size) : NULL;
    bool ok = text && add_label_lines(L, entry, text, size);
    free(text);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* Manifest and archive                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Whether JSON text holds the escape \u0000 (a backslash run of odd length before "u0000"):
 * cJSON ends the string there, so a label or name holding it would be cut without a word. */
static bool has_nul_escape(const char *text, size_t size)
{
    for (const char *p = text; (p = memmem(p, size - (size_t)(p - text), "u0000", 5)); p++) {
        size_t slashes = 0;
        while (p - (ptrdiff_t)slashes - 1 >= text && p[-(ptrdiff_t)slashes - 1] == '\\')
            slashes++;
        if (slashes % 2)
            return true;
    }
    return false;
}

/* Parses manifest.json; returns the root object or NULL with the error set. */
static cJSON *read_manifest(struct cc_bundle_loader *L)
{
    if (!cc_bundle_zip_has(L->zip, MANIFEST_ENTRY)) {
        cc_manifest_fail(
            L, "no manifest.json entry; is this a camclass bundle? (camclass-export makes them)");
        return NULL;
    }
    size_t size;
    char *text = cc_bundle_zip_read(L->zip, MANIFEST_ENTRY, "manifest", MAX_MANIFEST_BYTES, &size);
    if (!text)
        return NULL;
    const char *end = NULL;
    bool nul = has_nul_escape(text, size);
    cJSON *root = nul ? NULL : cJSON_ParseWithLengthOpts(text, size, &end, false);
    if (nul) {
        cc_manifest_fail(L, "manifest.json holds \\u0000 (a NUL character) in a string; labels "
                            "and names must be text without it");
    } else if (!root) {
        size_t at = end && end >= text && end <= text + size ? (size_t)(end - text) : 0;
        cc_manifest_fail(L, "manifest.json is not valid JSON (error near byte %zu)", at);
    } else if (!cJSON_IsObject(root)) {
        cc_manifest_fail(L, "manifest.json is not a JSON object");
        cJSON_Delete(root);
        root = NULL;
    }
    free(text);
    return root;
}

/* Loads the model from the open archive z; NULL with z->err set. */
static struct cc_model *load_archive(struct cc_bundle_zip *z)
{
    struct cc_bundle_loader L = {.zip = z};
    cJSON *root = NULL;
    if (!cc_bundle_zip_check_names(z) || !(root = read_manifest(&L)))
        goto error;
    const char *name = cc_manifest_check_header(&L, root);
    if (!name)
        goto error;
    if (!(L.m = cc_model_new(name))) {
        cc_manifest_fail(&L, "out of memory");
        goto error;
    }
    if (!cc_manifest_load_training(&L, root) || !load_tensors(&L, root) ||
        !cc_manifest_load_input(&L, root) || !cc_manifest_load_output(&L, root) ||
        !load_labels(&L, root) || !cc_manifest_load_graph(&L, root))
        goto error;
    if (cc_model_finalize(L.m, &L.merr))
        goto done;
    cc_manifest_fail_builder(&L);
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
    // camclass-export: the exporter's installed name, and tools/camclass-export, the same
    // command in a source tree (which a build-tree camclass runs from): the engine cannot
    // tell which this camclass is, so the message names both, the source tree's as such.
    {".onnx", "an ONNX model; convert it with camclass-export --onnx FILE "
              "(camclass-export(1); in camclass's source tree: tools/camclass-export)"},
    {".pt", "a PyTorch file; convert it with camclass-export --model NAME --weights "
            "FILE (a torchvision model) or --module FILE.py:CLASS --weights FILE "
            "(camclass-export(1); in camclass's source tree: tools/camclass-export)"},
    {".pth", "a PyTorch file; convert it with camclass-export --model NAME --weights "
             "FILE (a torchvision model) or --module FILE.py:CLASS --weights FILE "
             "(camclass-export(1); in camclass's source tree: tools/camclass-export)"},
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
