/* camclass — tests of the bundle loader (engine/bundle/bundle.c,
 * engine/bundle/bundle_manifest.c).
 *
 * Writes bundles with libzip into a temporary directory: one valid tiny bundle (conv2d+relu6 ->
 * global_avg_pool -> flatten -> linear+clamp, labels.txt) whose loaded fields are checked, then
 * a table of malformed variants, each made by changing one thing (a manifest field, set by a
 * JSON path, or how the zip is written) and each expecting its own error message. Last, the
 * valid bundle cut at many lengths and with flipped bytes must fail cleanly, never crash.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zip.h>

#include "bundle.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------- */
/* The valid bundle                                                                          */
/* ---------------------------------------------------------------------------------------- */

// Written with ' for " to stay readable; quotes() swaps them back.
static const char valid_manifest[] =
    "{'format': 'camclass-bundle', 'version': 1, 'name': 'tiny',"
    " 'input': {'tensor': 'input', 'shape': [1, 3, 8, 8], 'color_order': 'BGR',"
    "   'mean': [0.5, 0.4, 0.3], 'std': [0.2, 0.25, 0.5],"
    "   'resize': {'policy': 'center_crop', 'size': 10}},"
    " 'output': {'tensor': 'logits', 'kind': 'logits', 'classes': 2},"
    " 'labels': {'entry': 'labels.txt'},"
    " 'tensors': ["
    "  {'name': 'input', 'dtype': 'f32', 'shape': [1, 3, 8, 8]},"
    "  {'name': 'conv.w', 'dtype': 'f32', 'shape': [4, 3, 3, 3],"
    "   'data': {'entry': 'weights.bin', 'offset': 0, 'size': 432}},"
    "  {'name': 'conv.b', 'dtype': 'f32', 'shape': [4],"
    "   'data': {'entry': 'weights.bin', 'offset': 448, 'size': 16}},"
    "  {'name': 'conv.out', 'dtype': 'f32', 'shape': [1, 4, 4, 4]},"
    "  {'name': 'gap.out', 'dtype': 'f32', 'shape': [1, 4, 1, 1]},"
    "  {'name': 'flat.out', 'dtype': 'f32', 'shape': [1, 4]},"
    "  {'name': 'fc.w', 'dtype': 'f32', 'shape': [2, 4],"
    "   'data': {'entry': 'weights.bin', 'offset': 512, 'size': 32}},"
    "  {'name': 'fc.b', 'dtype': 'f32', 'shape': [2],"
    "   'data': {'entry': 'weights.bin', 'offset': 576, 'size': 8}},"
    "  {'name': 'logits', 'dtype': 'f32', 'shape': [1, 2]}],"
    " 'graph': ["
    "  {'op': 'conv2d', 'name': 'conv', 'inputs': ['input', 'conv.w', 'conv.b'],"
    "   'outputs': ['conv.out'], 'attrs': {'stride': [2, 2], 'padding': [1, 1, 1, 1],"
    "   'dilation': [1, 1], 'groups': 1, 'activation': 'relu6'}},"
    "  {'op': 'global_avg_pool', 'name': 'gap', 'inputs': ['conv.out'], 'outputs': ['gap.out']},"
    "  {'op': 'flatten', 'name': 'flat', 'inputs': ['gap.out'], 'outputs': ['flat.out']},"
    "  {'op': 'linear', 'name': 'fc', 'inputs': ['flat.out', 'fc.w', 'fc.b'],"
    "   'outputs': ['logits'],"
    "   'attrs': {'activation': 'clamp', 'clamp_min': -5, 'clamp_max': 5}}]}";

#define WEIGHTS_BYTES 584 // conv.w @0 (432), conv.b @448 (16), fc.w @512 (32), fc.b @576 (8)
#define DEFAULT_LABELS "cat\r\ndog\n\n"

/* scales.bin, for the i8 variants: 64-byte slots of two scales each, one good and then one
 * bad first scale per slot (0, negative, NaN, infinity). */
#define SCALE_SLOTS 5
static const float scale_slots[SCALE_SLOTS][2] = {
    {0.5f, 0.25f}, {0.0f, 1.0f}, {-1.0f, 1.0f}, {NAN, 1.0f}, {INFINITY, 1.0f}};

/* fc.w (tensors/6, [2, 4]) as i8: its values are the first 8 bytes of fc.w's f32 data, with
 * data size and quant (", 'quant': {...}" or "") as given. */
#define FC_W_I8(size, quant)                                                                       \
    "{'name': 'fc.w', 'dtype': 'i8', 'shape': [2, 4],"                                             \
    " 'data': {'entry': 'weights.bin', 'offset': 512, 'size': " size "}" quant "}"
#define QUANT(axis, offset, size)                                                                  \
    ", 'quant': {'axis': " axis ", 'scales': {'entry': 'scales.bin', 'offset': " offset            \
    ", 'size': " size "}}"

/* The value stored at float index i of weights.bin. */
static float weight_value(size_t i)
{
    return (float)i * 0.25f - 3.0f;
}

/* Returns a malloc'd copy of s with every ' turned into ". */
static char *quotes(const char *s)
{
    char *r = strdup(s);
    for (char *p = r; p && *p; p++)
        if (*p == '\'')
            *p = '"';
    return r;
}

/* How a variant's zip is written; zero = like the valid bundle. */
struct zip_opts {
    const char *raw_file;      // write these bytes as the whole file instead of a zip
    const char *manifest_text; // manifest.json contents instead of the (changed) JSON
    bool no_manifest;
    bool compress_data;
    bool no_labels_txt;
    const char *labels_text; // labels.txt contents instead of DEFAULT_LABELS
    const char *extra_entry; // also add a 1-byte entry with this name
    size_t pad_manifest;     // pad manifest.json with spaces to this many bytes
    bool dup_labels;         // rename scales.bin to labels.txt in the written bytes (the
                             // same length): the zip names labels.txt twice
    int version;             // manifest "version" when not 0 (2: activation quantization,
                             // 3: antialias allowed, 4: unknown_threshold allowed)
};

static bool add_entry(zip_t *za, const char *name, const void *data, size_t size, bool deflate)
{
    zip_source_t *s = zip_source_buffer(za, data, size, 0);
    zip_int64_t i = s ? zip_file_add(za, name, s, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
    if (i < 0) {
        zip_source_free(s);
        return false;
    }
    return zip_set_file_compression(za, (zip_uint64_t)i, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                    0) == 0;
}

/* Renames entry from to the name to (of the same length) in the zip file's bytes: its local
 * header and its central directory record (libzip writes no duplicate names itself). */
static bool rename_entry(const char *path, const char *from, const char *to)
{
    size_t n, len = strlen(from), hits = 0;
    uint8_t *d = tu_read_file(path, &n);
    for (size_t i = 0; d && i + len <= n; i++)
        if (memcmp(d + i, from, len) == 0)
            memcpy(d + i, to, len), hits++;
    FILE *f = d ? fopen(path, "wb") : NULL;
    bool ok = f && fwrite(d, 1, n, f) == n;
    ok = (f ? fclose(f) == 0 : false) && ok && hits == 2;
    free(d);
    return ok;
}

/* Writes a bundle to path; manifest is the JSON text (buffers live until zip_close). */
static bool write_bundle(const char *path, const char *manifest, const struct zip_opts *o)
{
    if (o->raw_file) {
        FILE *f = fopen(path, "wb");
        bool ok = f && fwrite(o->raw_file, 1, strlen(o->raw_file), f) == strlen(o->raw_file);
        return (f ? fclose(f) == 0 : false) && ok;
    }
    float weights[WEIGHTS_BYTES / 4];
    for (size_t i = 0; i < WEIGHTS_BYTES / 4; i++)
        weights[i] = weight_value(i);
    const char *text = o->manifest_text ? o->manifest_text : manifest;
    char *padded = NULL;
    if (o->pad_manifest > strlen(text) && (padded = malloc(o->pad_manifest + 1))) {
        memset(padded, ' ', o->pad_manifest);
        memcpy(padded, text, strlen(text));
        padded[o->pad_manifest] = 0;
        text = padded;
    }
    const char *labels = o->labels_text ? o->labels_text : DEFAULT_LABELS;
    float scales[SCALE_SLOTS * 16] = {0};
    for (int i = 0; i < SCALE_SLOTS; i++)
        memcpy(&scales[i * 16], scale_slots[i], sizeof(scale_slots[i]));
    int code;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    bool ok = za && (o->no_manifest || add_entry(za, "manifest.json", text, strlen(text), true)) &&
              add_entry(za, "weights.bin", weights, sizeof(weights), o->compress_data) &&
              add_entry(za, "scales.bin", scales, sizeof(scales), false) &&
              (o->no_labels_txt || add_entry(za, "labels.txt", labels, strlen(labels), true)) &&
              (!o->extra_entry || add_entry(za, o->extra_entry, "x", 1, false));
    if (!ok)
        zip_discard(za);
    else
        ok = zip_close(za) == 0;
    free(padded);
    return ok && (!o->dup_labels || rename_entry(path, "scales.bin", "labels.txt"));
}

/* ---------------------------------------------------------------------------------------- */
/* Manifest changes by JSON path                                                             */
/* ---------------------------------------------------------------------------------------- */

static cJSON *child(cJSON *node, const char *key)
{
    if (cJSON_IsArray(node))
        return cJSON_GetArrayItem(node, atoi(key));
    return cJSON_GetObjectItemCaseSensitive(node, key);
}

/* Sets root at path ("tensors/1/data/offset") to the JSON value (' for "), or deletes it when
 * value is NULL. Returns false when the path does not exist. */
static bool json_set(cJSON *root, const char *path, const char *value)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", path);
    char *last = strrchr(buf, '/');
    cJSON *parent = root;
    if (last) {
        *last++ = 0;
        for (char *tok = strtok(buf, "/"); tok && parent; tok = strtok(NULL, "/"))
            parent = child(parent, tok);
    } else {
        last = buf;
    }
    if (!parent)
        return false;
    if (!value) {
        cJSON *gone = cJSON_IsArray(parent) ? cJSON_DetachItemFromArray(parent, atoi(last))
                                            : cJSON_DetachItemFromObjectCaseSensitive(parent, last);
        cJSON_Delete(gone);
        return gone != NULL;
    }
    char *text = quotes(value);
    cJSON *v = cJSON_Parse(text);
    free(text);
    if (!v)
        return false;
    if (cJSON_IsArray(parent))
        return cJSON_ReplaceItemInArray(parent, atoi(last), v);
    if (cJSON_GetObjectItemCaseSensitive(parent, last))
        return cJSON_ReplaceItemInObjectCaseSensitive(parent, last, v);
    cJSON_AddItemToObject(parent, last, v);
    return true;
}

/* Writes the valid bundle with one change to path. */
static bool write_variant(const char *path, const char *set_path, const char *value,
                          const struct zip_opts *o)
{
    char *text = quotes(valid_manifest);
    cJSON *root = cJSON_Parse(text);
    free(text);
    char version[8];
    snprintf(version, sizeof(version), "%d", o->version);
    bool ok = root && (!set_path || json_set(root, set_path, value)) &&
              (!o->version || json_set(root, "version", version));
    char *manifest = ok ? cJSON_PrintUnformatted(root) : NULL;
    ok = manifest && write_bundle(path, manifest, o);
    free(manifest);
    cJSON_Delete(root);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* Tests                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void check_valid_model(const struct cc_model *m)
{
    CHECK(strcmp(m->name, "tiny") == 0);
    CHECK(m->n_tensors == 9 && m->n_nodes == 4);
    CHECK(m->input.tensor == 0 && m->input.color == CC_COLOR_BGR);
    CHECK(m->input.mean[1] == 0.4f && m->input.std[2] == 0.5f);
    CHECK(m->input.resize == CC_RESIZE_CENTER_CROP && m->input.resize_size == 10);
    CHECK(!m->input.antialias); // absent: false
    CHECK(m->output.tensor == 8 && m->output.kind == CC_OUTPUT_LOGITS && m->output.classes == 2);
    CHECK(m->n_labels == 2 && strcmp(m->labels[0], "cat") == 0 && strcmp(m->labels[1], "dog") == 0);
    static const struct {
        int tensor;
        size_t offset; // bytes in weights.bin
    } consts[] = {{1, 0}, {2, 448}, {6, 512}, {7, 576}};
    for (size_t c = 0; c < sizeof(consts) / sizeof(consts[0]); c++) {
        const struct cc_tensor *t = &m->tensors[consts[c].tensor];
        bool same = t->data != NULL;
        for (int64_t i = 0; same && i < t->count; i++)
            same = t->data[i] == weight_value(consts[c].offset / 4 + (size_t)i);
        CHECKF(same, "data of tensor %s", t->name);
        CHECKF(((uintptr_t)t->data & 63) == 0, "tensor %s data is 64-byte aligned", t->name);
    }
    CHECK(m->tensors[3].data == NULL && m->tensors[3].producer == 0);
    CHECK(m->tensors[8].producer == 3);
    const struct cc_node *conv = &m->nodes[0], *fc = &m->nodes[3];
    CHECK(conv->op == CC_OP_CONV2D && conv->n_inputs == 3 && conv->attrs.conv.stride[0] == 2 &&
          conv->attrs.conv.pad[3] == 1 && conv->attrs.conv.groups == 1);
    CHECK(conv->act.min == 0.0f && conv->act.max == 6.0f);
    CHECK(fc->op == CC_OP_LINEAR && fc->act.min == -5.0f && fc->act.max == 5.0f);
    CHECK(m->nodes[1].op == CC_OP_GLOBAL_AVG_POOL && isinf(m->nodes[1].act.max));
}

static void test_valid(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/valid.ccm", dir);
    static const struct zip_opts plain = {0};
    CHECK(write_variant(path, NULL, NULL, &plain));
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(path, &err);
    CHECKF(m != NULL, "valid bundle: %s", err.msg);
    if (m)
        check_valid_model(m);
    cc_model_destroy(m);

    // Inline labels instead of labels.txt, and no labels.txt entry at all.
    static const struct zip_opts no_txt = {.no_labels_txt = true};
    CHECK(write_variant(path, "labels", "['cat', 'dog']", &no_txt));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->n_labels == 2 && strcmp(m->labels[1], "dog") == 0, "inline labels: %s", err.msg);
    cc_model_destroy(m);
    unlink(path);

    // fc.w as i8 (int8 values, per-output-channel scales): read as such, f32 data NULL.
    CHECK(write_variant(path, "tensors/6", FC_W_I8("8", QUANT("0", "0", "8")), &plain));
    m = cc_bundle_load(path, &err);
    if (CHECKF(m != NULL, "i8 fc.w: %s", err.msg)) {
        const struct cc_tensor *t = &m->tensors[6];
        float f32[2] = {weight_value(128), weight_value(129)}; // the bytes at offset 512
        CHECK(t->dtype == CC_DTYPE_I8 && t->data == NULL && t->q && t->scales);
        CHECK(t->q && memcmp(t->q, f32, 8) == 0 && ((uintptr_t)t->q & 63) == 0);
        CHECK(t->scales && t->scales[0] == 0.5f && t->scales[1] == 0.25f);
        float deq[8];
        cc_tensor_dequantize(t, deq);
        CHECK(deq[1] == (float)t->q[1] * 0.5f && deq[6] == (float)t->q[6] * 0.25f);
    }
    cc_model_destroy(m);
    unlink(path);

    // Version 2: conv.out with an activation quantization; the graph input too.
    static const struct zip_opts v2 = {.version = 2};
    CHECK(write_variant(path, "tensors/3/quant", "{'scale': 0.0625, 'zero_point': -3}", &v2));
    m = cc_bundle_load(path, &err);
    if (CHECKF(m != NULL, "version 2, quantized conv.out: %s", err.msg)) {
        const struct cc_tensor *t = &m->tensors[3];
        CHECK(t->quantized && t->act_quant.scale == 0.0625f && t->act_quant.zero_point == -3);
        CHECK(!m->tensors[0].quantized && !m->tensors[8].quantized);
    }
    cc_model_destroy(m);
    CHECK(write_variant(path, "tensors/0/quant", "{'scale': 0.03, 'zero_point': 127}", &v2));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->tensors[0].quantized && m->tensors[0].act_quant.zero_point == 127,
           "version 2, quantized input: %s", err.msg);
    cc_model_destroy(m);
    CHECK(write_variant(path, NULL, NULL, &v2)); // version 2 without any quantization
    m = cc_bundle_load(path, &err);
    CHECKF(m != NULL, "version 2, nothing quantized: %s", err.msg);
    cc_model_destroy(m);
    unlink(path);

    // Version 3: "antialias": true (squash or center_crop); false is allowed in any version.
    static const struct zip_opts v3 = {.version = 3};
    CHECK(write_variant(path, "input/resize/antialias", "true", &v3));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->input.antialias && m->input.resize == CC_RESIZE_CENTER_CROP &&
               m->input.resize_size == 10,
           "version 3, antialias: %s", err.msg);
    cc_model_destroy(m);
    CHECK(write_variant(path, "input/resize", "{'policy': 'squash', 'antialias': true}", &v3));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->input.antialias && m->input.resize == CC_RESIZE_SQUASH,
           "version 3, squash with antialias: %s", err.msg);
    cc_model_destroy(m);
    CHECK(write_variant(path, "tensors/3/quant", "{'scale': 0.0625, 'zero_point': -3}", &v3));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->tensors[3].quantized && !m->input.antialias, "version 3, quantized conv.out: %s",
           err.msg);
    cc_model_destroy(m);
    // A UTF-8 BOM before labels.txt's first line is not part of the first label; an escaped
    // backslash before "u0000" is no NUL.
    static const struct zip_opts bom = {.labels_text = "\xef\xbb\xbf" "cat\ndog\n"};
    CHECK(write_variant(path, NULL, NULL, &bom));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->n_labels == 2 && !strcmp(m->labels[0], "cat"), "labels.txt with a BOM: %s",
           m ? m->labels[0] : err.msg);
    cc_model_destroy(m);
    CHECK(write_variant(path, "labels", "['c\\\\u0000at', 'dog']", &plain));
    m = cc_bundle_load(path, &err);
    CHECKF(m && !strcmp(m->labels[0], "c\\u0000at"), "an escaped backslash before u0000: %s",
           m ? m->labels[0] : err.msg);
    cc_model_destroy(m);
    // A NUL escaped into an inline label is refused, not cut (written as text: cJSON would cut
    // it on the way out too). The replacement keeps the manifest's length.
    char *nul = quotes(valid_manifest);
    char *at = nul ? strstr(nul, "{\"entry\": \"labels.txt\"}") : NULL;
    if (CHECK(at != NULL)) {
        memcpy(at, "[\"c\\u0000at\", \"dog\"]   ", 23);
        CHECK(write_bundle(path, nul, &plain));
        m = cc_bundle_load(path, &err);
        CHECKF(!m && strstr(err.msg, "holds \\u0000 (a NUL character)"), "NUL in a label: %s",
               m ? m->labels[0] : err.msg);
        cc_model_destroy(m);
    }
    free(nul);
    // Version 4: output.unknown_threshold; versions 1-3 without it still load (above).
    static const struct zip_opts v4 = {.version = 4};
    CHECK(write_variant(path, "output/unknown_threshold", "0.625", &v4));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->output.unknown_threshold == 0.625f, "version 4, unknown threshold: %s",
           err.msg);
    cc_model_destroy(m);
    CHECK(write_variant(path, "input/resize/antialias", "false", &plain));
    m = cc_bundle_load(path, &err);
    CHECKF(m && !m->input.antialias, "version 1, antialias false: %s", err.msg);
    CHECK(m && m->input.roi.kind == CC_ROI_NONE); // absent: the whole frame
    cc_model_destroy(m);
    // input.roi, optional in any version: fractions of the frame, kept as written.
    CHECK(write_variant(path, "input/roi", "[0.5, 0.25, 0.5, 0.75]", &plain));
    m = cc_bundle_load(path, &err);
    CHECKF(m && m->input.roi.kind == CC_ROI_FRACTION && m->input.roi.x == 0.5 &&
               m->input.roi.y == 0.25 && m->input.roi.w == 0.5 && m->input.roi.h == 0.75,
           "version 1, input.roi: %s", err.msg);
    cc_model_destroy(m);
    unlink(path);

    snprintf(path, sizeof(path), "%s/does-not-exist.ccm", dir);
    CHECK(!cc_bundle_load(path, &err) && strstr(err.msg, "cannot open"));
    CHECK(!cc_bundle_load(NULL, &err) && strstr(err.msg, "no bundle path"));
    CHECK(!cc_bundle_load(path, NULL)); // err may be NULL
}

struct bad_case {
    const char *what;
    const char *path;  // manifest field to change (NULL: none)
    const char *value; // its new JSON value, ' for " (NULL: delete the field)
    struct zip_opts zip;
    const char *expect; // substring of the error message
};

static const struct bad_case bad_cases[] = {
    {"not a zip", NULL, NULL, {.raw_file = "hello, I am not a zip file\n"}, "not a zip archive"},
    {"missing manifest", NULL, NULL, {.no_manifest = true}, "no manifest.json entry"},
    // Before: "damaged zip archive (File already exists)" before, naming nothing.
    {"an entry twice", NULL, NULL, {.dup_labels = true}, "entry \"labels.txt\" appears twice"},
    {"malformed JSON",
     NULL,
     NULL,
     {.manifest_text = "{\"format\": \"camclass-bundle\", "},
     "manifest.json is not valid JSON"},
    {"manifest not an object", NULL, NULL, {.manifest_text = "[1, 2]"}, "not a JSON object"},
    {"manifest above 16 MiB",
     NULL,
     NULL,
     {.pad_manifest = (16 << 20) + 1},
     "manifest entry \"manifest.json\" is 16777217 bytes, above the limit of 16777216"},
    {"wrong format", "format", "'onnx'", {0}, "\"format\" is \"onnx\", expected"},
    {"unknown version",
     "version",
     "5",
     {0},
     "unknown format version 5; this camclass reads versions 1 to 4"},
    {"fractional version", "version", "1.5", {0}, "unknown format version 1.5"},
    {"activation quant in version 1",
     "tensors/3/quant",
     "{'scale': 0.5, 'zero_point': 0}",
     {0},
     "tensor \"conv.out\": \"quant\" on an f32 activation needs format version 2 (this "
     "bundle says 1)"},
    {"activation quant, unknown key",
     "tensors/3/quant",
     "{'scale': 0.5, 'zero_point': 0, 'axis': 0}",
     {.version = 2},
     "tensor \"conv.out\": unknown \"quant\" key \"axis\"; an activation's quant takes "
     "scale, zero_point"},
    {"activation quant, no scale",
     "tensors/3/quant",
     "{'zero_point': 0}",
     {.version = 2},
     "tensor \"conv.out\" has no \"scale\""},
    {"activation quant, zero scale",
     "tensors/3/quant",
     "{'scale': 0, 'zero_point': 0}",
     {.version = 2},
     "tensor \"conv.out\": quant scale 0 must be finite and > 0"},
    {"activation quant, huge scale",
     "tensors/3/quant",
     "{'scale': 1e300, 'zero_point': 0}",
     {.version = 2},
     "tensor \"conv.out\": quant scale 1e+300 must be finite and > 0"},
    {"activation quant, zero point out of range",
     "tensors/3/quant",
     "{'scale': 0.5, 'zero_point': 128}",
     {.version = 2},
     "tensor \"conv.out\": \"quant.zero_point\" must be an integer in -128..127 (got 128)"},
    {"activation quant, fractional zero point",
     "tensors/3/quant",
     "{'scale': 0.5, 'zero_point': 1.5}",
     {.version = 2},
     "\"quant.zero_point\" must be an integer in -128..127 (got 1.5)"},
    {"activation quant not an object",
     "tensors/3/quant",
     "[0.5, 0]",
     {.version = 2},
     "tensor \"conv.out\": \"quant\" must be {\"scale\": S, \"zero_point\": Z}"},
    {"activation quant on an f32 constant",
     "tensors/7/quant",
     "{'scale': 0.5, 'zero_point': 0}",
     {.version = 2},
     "tensor \"fc.b\": \"quant\" is for activations and i8 weights, not f32 constants"},
    {"missing name", "name", NULL, {0}, "manifest has no \"name\""},
    {"name of the wrong type", "name", "5", {0}, "manifest: \"name\" must be a string"},
    {"graph of the wrong type", "graph", "{'nodes': []}", {0}, "\"graph\" must be a"},
    {"unknown op",
     "graph/1/op",
     "'gelu'",
     {0},
     "node \"gap\" uses unknown op \"gelu\"; this camclass supports conv2d, add, "
     "global_avg_pool, linear, flatten, reshape, softmax, clamp"},
    {"undefined tensor",
     "graph/1/inputs/0",
     "'nope'",
     {0},
     "node \"gap\": input \"nope\" is not a declared tensor"},
    {"duplicate tensor", "tensors/4/name", "'conv.out'", {0}, "duplicate tensor name \"conv.out\""},
    {"duplicate node", "graph/2/name", "'gap'", {0}, "duplicate node name \"gap\""},
    {"shape mismatch",
     "tensors/3/shape",
     "[1, 4, 5, 5]",
     {0},
     "node \"conv\" (conv2d): computed output shape [1,4,4,4] but tensor \"conv.out\" is "
     "declared [1,4,5,5]"},
    {"input count",
     "graph/1/inputs",
     "['conv.out', 'conv.b']",
     {0},
     "node \"gap\" (global_avg_pool) has 2 inputs; global_avg_pool takes 1"},
    {"dtype f16",
     "tensors/1/dtype",
     "'f16'",
     {0},
     "tensor \"conv.w\": dtype f16 is not supported by this camclass"},
    {"i8 without quant",
     "tensors/6/dtype",
     "'i8'",
     {0},
     "tensor \"fc.w\": dtype i8 needs \"quant\": {\"axis\": 0, \"scales\""},
    {"i8 f32-sized data",
     "tensors/6",
     FC_W_I8("32", QUANT("0", "0", "8")),
     {0},
     "tensor \"fc.w\": data size is 32 bytes but its 8 i8 values take 8"},
    {"i8 scales size",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "0", "4")),
     {0},
     "tensor \"fc.w\": scales size is 4 bytes but its 2 f32 scales (one per output channel, "
     "shape[0]) take 8"},
    {"i8 axis 1",
     "tensors/6",
     FC_W_I8("8", QUANT("1", "0", "8")),
     {0},
     "tensor \"fc.w\": quant axis 1 is not supported; i8 scales are per output channel (axis "
     "0)"},
    {"i8 zero scale",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "64", "8")),
     {0},
     "tensor \"fc.w\": scale 0 is 0; every i8 scale must be finite and > 0"},
    {"i8 negative scale",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "128", "8")),
     {0},
     "tensor \"fc.w\": scale 0 is -1; every i8 scale must be finite and > 0"},
    {"i8 NaN scale",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "192", "8")),
     {0},
     "tensor \"fc.w\": scale 0 is nan; every i8 scale must be finite and > 0"},
    {"i8 infinite scale",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "256", "8")),
     {0},
     "tensor \"fc.w\": scale 0 is inf; every i8 scale must be finite and > 0"},
    {"i8 scales misaligned",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "32", "8")),
     {0},
     "tensor \"fc.w\": scales offset 32 is not a multiple of 64"},
    {"i8 scales outside",
     "tensors/6",
     FC_W_I8("8", QUANT("0", "320", "8")),
     {0},
     "tensor \"fc.w\": scales bytes 320..328 lie outside entry \"scales.bin\" (320 bytes)"},
    {"i8 unknown quant key",
     "tensors/6",
     FC_W_I8("8", ", 'quant': {'axis': 0, 'zero_point': 0}"),
     {0},
     "tensor \"fc.w\": unknown \"quant\" key \"zero_point\"; quant takes axis, scales"},
    {"i8 bias",
     "tensors/7",
     "{'name': 'fc.b', 'dtype': 'i8', 'shape': [2],"
     " 'data': {'entry': 'weights.bin', 'offset': 576, 'size': 2}" QUANT("0", "0", "8") "}",
     {0},
     "node \"fc\" (linear): input 2 \"fc.b\" is i8; only the weight (input 1) of conv2d and "
     "linear may be i8"},
    {"i8 activation",
     "tensors/3/dtype",
     "'i8'",
     {0},
     "tensor \"conv.out\": dtype i8 without \"data\"; only constants"},
    {"quant on f32",
     "tensors/7/quant",
     "{'axis': 0, 'scales': {'entry': 'scales.bin', 'offset': 0, 'size': 8}}",
     {0},
     "tensor \"fc.b\": \"quant\" is for activations and i8 weights, not f32 constants"},
    {"unknown dtype", "tensors/6/dtype", "'f64'", {0}, "unknown dtype \"f64\""},
    {"data outside entry",
     "tensors/7/data/offset",
     "640",
     {0},
     "tensor \"fc.b\": data bytes 640..648 lie outside entry \"weights.bin\" (584 bytes)"},
    {"offset near 2^53",
     "tensors/1/data/offset",
     "9007199254740928",
     {0},
     "lie outside entry \"weights.bin\""},
    {"offset near UINT64_MAX",
     "tensors/1/data/offset",
     "18446744073709551615",
     {0},
     "tensor \"conv.w\": \"offset\" must be an integer in 0..9007199254740992"},
    {"negative size", "tensors/2/data/size", "-16", {0}, "\"size\" must be an integer"},
    {"wrong data size",
     "tensors/2/data/size",
     "12",
     {0},
     "tensor \"conv.b\": data size is 12 bytes but its 4 f32 values take 16"},
    {"misaligned offset",
     "tensors/2/data/offset",
     "456",
     {0},
     "data offset 456 is not a multiple of 64"},
    {"missing data entry",
     "tensors/2/data/entry",
     "'nope.bin'",
     {0},
     "tensor \"conv.b\": data entry \"nope.bin\" is not in the bundle"},
    {"compressed data",
     NULL,
     NULL,
     {.compress_data = true},
     "tensor \"conv.w\": data entry \"weights.bin\" is compressed"},
    {"dimension above limit",
     "tensors/3/shape",
     "[1, 4, 2000000, 4]",
     {0},
     "tensor \"conv.out\": dimension 2 is 2000000, outside 1..1048576"},
    {"element count overflow",
     "tensors/3/shape",
     "[1048576, 1048576, 1048576, 1048576]",
     {0},
     "tensor \"conv.out\": more than 268435456 elements"},
    {"five dimensions",
     "tensors/3/shape",
     "[1, 1, 4, 4, 4]",
     {0},
     "\"shape\" must be an array of 1 to 4 integers"},
    {"label count", "labels", "['a', 'b', 'c']", {0}, "3 labels for 2 classes"},
    {"labels.txt missing",
     NULL,
     NULL,
     {.no_labels_txt = true},
     "labels entry \"labels.txt\" is not in the bundle"},
    {"blank label",
     NULL,
     NULL,
     {.labels_text = "cat\n\ndog\n"},
     "labels entry \"labels.txt\" line 2 is empty"},
    {"no labels", "labels", NULL, {0}, "manifest has no \"labels\""},
    // Loaded with empty labels before (finalize counts labels only when there are some).
    {"empty labels", "labels", "[]", {0}, "\"labels\" holds no label; give one per class (2)"},
    {"empty labels.txt",
     NULL,
     NULL,
     {.labels_text = "\n\n"},
     "\"labels\" holds no label; give one per class (2)"},
    {"classes mismatch",
     "output/classes",
     "3",
     {0},
     "output tensor \"logits\" has shape [1,2], expected [1,3]"},
    {"unknown output kind",
     "output/kind",
     "'scores'",
     {0},
     "\"kind\" is \"scores\"; expected one of logits, probabilities"},
    {"dotdot entry",
     NULL,
     NULL,
     {.extra_entry = "../evil.txt"},
     "entry \"../evil.txt\" has a \"..\" component"},
    {"dotdot data reference",
     "tensors/1/data/entry",
     "'a/../../weights.bin'",
     {0},
     "entry \"a/../../weights.bin\" has a \"..\" component"},
    {"absolute entry",
     NULL,
     NULL,
     {.extra_entry = "/etc/passwd"},
     "entry \"/etc/passwd\" is an absolute path"},
    {"backslash entry", NULL, NULL, {.extra_entry = "dir\\evil.txt"}, "contains a backslash"},
    {"drive letter entry", NULL, NULL, {.extra_entry = "C:evil.txt"}, "drive letter"},
    {"use before produce",
     "graph/1/inputs/0",
     "'flat.out'",
     {0},
     "node \"gap\" reads tensor \"flat.out\" before node \"flat\" produces it (cycle or wrong "
     "order"},
    {"produced twice",
     "graph/2/outputs/0",
     "'gap.out'",
     {0},
     "tensor \"gap.out\" is produced by both node \"gap\" and node \"flat\""},
    {"missing input spec", "input", NULL, {0}, "manifest has no \"input\" object"},
    {"input shape differs",
     "input/shape",
     "[1, 3, 9, 9]",
     {0},
     "input: \"shape\" [1,3,9,9] differs from the declared shape of tensor \"input\""},
    {"std zero", "input/std/1", "0", {0}, "every std must be > 0"},
    {"unknown color order", "input/color_order", "'RGBA'", {0}, "expected one of RGB, BGR"},
    {"crop size too small", "input/resize/size", "4", {0}, "center_crop needs size >= max(H, W)"},
    {"antialias a string",
     "input/resize/antialias",
     "'yes'",
     {.version = 3},
     "input.resize: \"antialias\" must be true or false, not a string"},
    {"antialias a number",
     "input/resize/antialias",
     "1",
     {.version = 3},
     "input.resize: \"antialias\" must be true or false, not a number"},
    {"roi not four numbers", "input/roi", "[0.5, 0.5, 0.5]", {0}, "\"roi\" must be an array of 4"},
    {"roi a string", "input/roi", "'0,0,1,1'", {0}, "\"roi\" must be an array of 4 numbers"},
    {"roi past the edge", "input/roi", "[0.5, 0, 0.6, 1]", {0}, "input.roi [x, y, w, h]: ROI"},
    {"roi empty", "input/roi", "[0, 0, 0, 1]", {0}, "input.roi [x, y, w, h]: ROI width"},
    {"roi negative", "input/roi", "[-0.1, 0, 0.5, 1]", {0}, "must lie in [0, 1]"},
    {"antialias null",
     "input/resize/antialias",
     "null",
     {0},
     "input.resize: \"antialias\" must be true or false, not null"},
    {"antialias in version 1",
     "input/resize/antialias",
     "true",
     {0},
     "input.resize: \"antialias\": true needs format version 3 (this bundle says 1)"},
    {"unknown threshold in version 3",
     "output/unknown_threshold",
     "0.5",
     {.version = 3},
     "output.unknown_threshold needs format version 4 (this bundle says 3)"},
    {"unknown threshold 1", "output/unknown_threshold", "1", {.version = 4},
     "output.unknown_threshold must be a number between 0 and 1"},
    {"unknown threshold text", "output/unknown_threshold", "'high'", {.version = 4},
     "output.unknown_threshold must be a number between 0 and 1"},
    {"antialias in version 2",
     "input/resize/antialias",
     "true",
     {.version = 2},
     "input.resize: \"antialias\": true needs format version 3 (this bundle says 2)"},
    {"groups",
     "graph/0/attrs/groups",
     "2",
     {0},
     "node \"conv\" (conv2d): groups 2 must divide the input channels (3)"},
    {"stride zero", "graph/0/attrs/stride", "[0, 1]", {0}, "stride out of range"},
    {"unknown attribute",
     "graph/2/attrs",
     "{'axis': 1}",
     {0},
     "node \"flat\": unknown attribute \"axis\"; flatten takes none"},
    {"unknown activation",
     "graph/0/attrs/activation",
     "'gelu'",
     {0},
     "\"activation\" is \"gelu\"; expected one of none, relu, relu6, clamp"},
    {"clamp min above max", "graph/3/attrs/clamp_min", "6", {0}, "clamp_min 6 > clamp_max 5"},
    {"output not produced",
     "output/tensor",
     "'fc.b'",
     {0},
     "output tensor \"fc.b\" is produced by no node"},
};

static void test_malformed(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/bad.ccm", dir);
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const struct bad_case *c = &bad_cases[i];
        if (!CHECKF(write_variant(path, c->path, c->value, &c->zip), "%s: cannot write bundle",
                    c->what))
            continue;
        struct cc_error err = {0};
        struct cc_model *m = cc_bundle_load(path, &err);
        CHECKF(!m && strstr(err.msg, c->expect) && strncmp(err.msg, "bundle ", 7) == 0 &&
                   !strchr(err.msg, '\n'),
               "%s:\n  got  \"%s\"\n  want \"%s\"", c->what, err.msg, c->expect);
        printf("%-24s %s\n", c->what, err.msg);
        cc_model_destroy(m);
        unlink(path);
    }
}

/* The valid bundle (with the change set_path = value, e.g. an i8 weight; NULL: none) cut at
 * every length, and with random bytes flipped: loading must fail with one message (or, for
 * flips inside tensor data, succeed), and never crash. */
static void test_damaged(const char *dir, const char *set_path, const char *value)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/cut.ccm", dir);
    static const struct zip_opts plain = {0};
    size_t size = 0;
    unsigned char *full =
        write_variant(path, set_path, value, &plain) ? tu_read_file(path, &size) : NULL;
    if (!CHECK(full != NULL && size > 0))
        return;
    int bad = 0;
    for (size_t cut = 0; cut < size; cut++) {
        struct cc_error err = {0};
        struct cc_model *m = cc_bundle_load_from_memory(full, cut, "cut.ccm", &err);
        bad += m != NULL || strncmp(err.msg, "bundle cut.ccm: ", 16) != 0;
        cc_model_destroy(m);
    }
    CHECKF(bad == 0, "%d of %zu truncated bundles loaded or gave no message", bad, size);

    // A few cuts through the file path as well.
    for (size_t cut = 1; cut < size; cut += size / 7) {
        FILE *f = fopen(path, "wb");
        bool ok = f && fwrite(full, 1, cut, f) == cut;
        if (f)
            fclose(f);
        struct cc_error err = {0};
        struct cc_model *m = ok ? cc_bundle_load(path, &err) : NULL;
        CHECKF(ok && !m && err.msg[0], "file cut at %zu bytes: \"%s\"", cut, err.msg);
        cc_model_destroy(m);
    }

    // One flipped bit inside the stored weights: only the entry's CRC-32 can tell. Found by 4
    // weights in a row: one float's 4 bytes (2.0: 00 00 00 40) also occur in the zip headers
    // at some times of day (the DOS time of weights.bin's header at minute 2 mod 8, second 0-1,
    // after its stored method's zeros), and a flip there loads.
    float probe[4];
    for (int i = 0; i < 4; i++)
        probe[i] = weight_value(20 + (size_t)i);
    unsigned char *at = memmem(full, size, probe, sizeof(probe));
    if (CHECK(at != NULL)) {
        *at ^= 1;
        struct cc_error err = {0};
        struct cc_model *m = cc_bundle_load_from_memory(full, size, "flip.ccm", &err);
        CHECKF(!m && strstr(err.msg, "entry \"weights.bin\" is damaged"), "weights bit flip: %s",
               err.msg);
        cc_model_destroy(m);
        *at ^= 1;
    }

    struct tu_rng rng;
    tu_rng_seed(&rng, 7);
    unsigned char *copy = malloc(size);
    int loaded = 0, silent = 0;
    for (int iter = 0; copy && iter < 2000; iter++) {
        memcpy(copy, full, size);
        for (int k = tu_rng_range(&rng, 1, 4); k > 0; k--)
            copy[tu_rng_range(&rng, 0, (int)size - 1)] ^= (unsigned char)tu_rng_range(&rng, 1, 255);
        struct cc_error err = {0};
        struct cc_model *m = cc_bundle_load_from_memory(copy, size, "flip.ccm", &err);
        loaded += m != NULL;
        silent += !m && !err.msg[0];
        cc_model_destroy(m);
    }
    CHECKF(silent == 0, "%d damaged bundles failed without a message", silent);
    printf("damaged bundles%s: %zu cuts rejected, %d of 2000 with flipped bytes still loaded\n",
           set_path ? " (i8 fc.w)" : "", size, loaded);
    free(copy);
    free(full);
    unlink(path);
}

/* Paths that are not bundle files: a directory, a FIFO (must not wait for a writer: a 10 s
 * alarm ends the test if it does), a device. Each says what the path is and what to give. */
static void test_not_a_file(const char *dir)
{
    char fifo[512];
    snprintf(fifo, sizeof(fifo), "%s/fifo.ccm", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    static const struct {
        const char *path; // NULL: the test directory; "fifo": the FIFO
        const char *expect;
    } cases[] = {
        {NULL, " is a directory; give the path of a .ccm bundle"},
        {"fifo", " is not a regular file (a FIFO); give the path of a .ccm bundle"},
        {"/dev/zero", " is not a regular file (a character device); give the path of a .ccm"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *path = !cases[i].path                   ? dir
                           : !strcmp(cases[i].path, "fifo") ? fifo
                                                            : cases[i].path;
        char want[600];
        snprintf(want, sizeof(want), "bundle %s%s", path, cases[i].expect);
        struct cc_error err = {0};
        alarm(10);
        struct cc_model *m = cc_bundle_load(path, &err);
        alarm(0);
        CHECKF(!m && strstr(err.msg, want), "%s:\n  got  \"%s\"\n  want \"%s\"", path, err.msg,
               want);
        printf("%-24s %s\n", "not a file", err.msg);
        cc_model_destroy(m);
    }
    unlink(fifo);
}

/* Sets the uncompressed size of entry name in its local header and its central directory
 * record (both, so that libzip's consistency check passes). */
static bool patch_entry_size(unsigned char *zip, size_t size, const char *name, uint32_t value)
{
    size_t len = strlen(name);
    int patched = 0;
    for (size_t i = 0; i + 46 + len <= size; i++) {
        size_t at = 0;
        if (!memcmp(zip + i, "PK\3\4", 4) && !memcmp(zip + i + 30, name, len))
            at = i + 22; // local file header: uncompressed size at 22, name at 30
        else if (!memcmp(zip + i, "PK\1\2", 4) && !memcmp(zip + i + 46, name, len))
            at = i + 24; // central directory: uncompressed size at 24, name at 46
        if (at) {
            for (int b = 0; b < 4; b++)
                zip[at + b] = (unsigned char)(value >> (8 * b));
            patched++;
        }
    }
    return patched == 2;
}

/* An entry that inflates to more than its directory record declares: the message names the
 * entry and the declared size (it said "No error" when the extra byte was found). */
static void test_inflates_past_size(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/long.ccm", dir);
    static const struct zip_opts plain = {0};
    size_t size = 0;
    unsigned char *zip = write_variant(path, NULL, NULL, &plain) ? tu_read_file(path, &size) : NULL;
    if (!CHECK(zip != NULL) || !CHECK(patch_entry_size(zip, size, "manifest.json", 100))) {
        free(zip);
        return;
    }
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load_from_memory(zip, size, "long.ccm", &err);
    const char *want = "bundle long.ccm: entry \"manifest.json\" inflates to more than the 100 "
                       "bytes its directory record declares; the bundle is damaged";
    CHECKF(!m && strstr(err.msg, want), "inflates past its size:\n  got  \"%s\"\n  want \"%s\"",
           err.msg, want);
    printf("%-24s %s\n", "inflates past its size", err.msg);
    cc_model_destroy(m);
    free(zip);
    unlink(path);
}

int main(void)
{
    char dir[] = "/tmp/camclass-bundle-test-XXXXXX";
    if (!CHECK(mkdtemp(dir) != NULL))
        return tu_exit_code();
    test_valid(dir);
    test_malformed(dir);
    test_not_a_file(dir);
    test_inflates_past_size(dir);
    test_damaged(dir, NULL, NULL);
    test_damaged(dir, "tensors/6", FC_W_I8("8", QUANT("0", "0", "8")));
    rmdir(dir);
    return tu_exit_code();
}
