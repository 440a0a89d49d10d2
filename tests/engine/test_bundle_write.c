/* camclass — tests of the bundle writer (engine/bundle/bundle_write.c) and of the manifest's
 * "training" key in the loader.
 *
 * Usage: test_bundle_write PYTHON CHECK_SCRIPT BUNDLE...
 *
 * Round trip, for every BUNDLE: load -> cc_bundle_write into a temporary directory -> load
 * again: the two models are equal (cc_model_hash, names, input/output spec, labels, training),
 * the written format version is the original's (the lowest the model needs, as the exporter
 * writes; also with antialias cleared: 2 with quantized activations, else 1), the reloaded
 * model written again gives the same bytes, and the ref backend's outputs on a fixed input are
 * bitwise equal. The first two bundles (the self-test ones) are also read by Python
 * (CHECK_SCRIPT: camclass_export/ccm_bundle.py's read_bundle and run_graph, against the ref
 * output within 1e-5). Then "training" (written, read back, kept on rewrite, wrong types and sizes refused),
 * overwrite refused with the file unchanged, a missing directory, and failures after the
 * temporary file exists (rename over a directory, a full disk through RLIMIT_FSIZE) leaving no
 * file behind.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zip.h>

#include "bundle.h"
#include "bundle_write.h"
#include "engine.h"
#include "testutil.h"

static char dir[] = "/tmp/camclass-bundle-write-XXXXXX"; // set once by main (mkdtemp), removed last

/* dir/name into buf; returns buf. */
static const char *in_dir(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
    return buf;
}

/* The names in dir that are neither given nor "." / ".." (leftovers), joined into out. */
static int leftovers(const char *keep, char *out, size_t size)
{
    DIR *d = opendir(dir);
    int n = 0;
    out[0] = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *name = e->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..") || (keep && strstr(keep, name)))
            continue;
        n++;
        strncat(out, name, size - strlen(out) - 2);
        strncat(out, " ", size - strlen(out) - 1);
    }
    if (d)
        closedir(d);
    return n;
}

/* A failure message must be one line naming the file. */
static void check_one_line(const char *label, const struct cc_error *err, const char *path,
                           const char *must_say)
{
    CHECKF(err->msg[0] && !strchr(err->msg, '\n'), "%s: not one line: \"%s\"", label, err->msg);
    CHECKF(strstr(err->msg, path) != NULL, "%s: does not name %s: \"%s\"", label, path, err->msg);
    CHECKF(strstr(err->msg, must_say) != NULL, "%s: does not say \"%s\": \"%s\"", label, must_say,
           err->msg);
}

/* ---------------------------------------------------------------------------------------- */
/* Comparing models and outputs                                                              */
/* ---------------------------------------------------------------------------------------- */

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void check_same_specs(const char *label, const struct cc_model *a, const struct cc_model *b)
{
    const struct cc_input_spec *ia = &a->input, *ib = &b->input;
    CHECKF(ia->tensor == ib->tensor && ia->color == ib->color &&
               !memcmp(ia->mean, ib->mean, sizeof(ia->mean)) &&
               !memcmp(ia->std, ib->std, sizeof(ia->std)) && ia->resize == ib->resize &&
               ia->resize_size == ib->resize_size && ia->antialias == ib->antialias,
           "%s: input spec differs (resize %d/%d size %d/%d antialias %d/%d)", label, ia->resize,
           ib->resize, ia->resize_size, ib->resize_size, ia->antialias, ib->antialias);
    CHECKF(a->output.tensor == b->output.tensor && a->output.kind == b->output.kind &&
               a->output.classes == b->output.classes,
           "%s: output spec differs", label);
}

static void check_same_model(const char *label, const struct cc_model *a, const struct cc_model *b)
{
    CHECKF(cc_model_hash(a) == cc_model_hash(b), "%s: model hash differs", label);
    CHECKF(same_str(a->name, b->name), "%s: name \"%s\" became \"%s\"", label, a->name, b->name);
    check_same_specs(label, a, b);
    bool same = a->n_labels == b->n_labels;
    for (int i = 0; same && i < a->n_labels; i++)
        same = same_str(a->labels[i], b->labels[i]);
    CHECKF(same, "%s: labels differ (%d and %d labels)", label, a->n_labels, b->n_labels);
    same = a->n_tensors == b->n_tensors && a->n_nodes == b->n_nodes;
    for (int i = 0; same && i < a->n_tensors; i++)
        same = same_str(a->tensors[i].name, b->tensors[i].name) &&
               a->tensors[i].quantized == b->tensors[i].quantized;
    for (int i = 0; same && i < a->n_nodes; i++)
        same = same_str(a->nodes[i].name, b->nodes[i].name);
    CHECKF(same, "%s: tensor or node names differ", label);
    CHECKF(same_str(a->training_json, b->training_json), "%s: training \"%s\" became \"%s\"",
           label, a->training_json ? a->training_json : "(none)",
           b->training_json ? b->training_json : "(none)");
}

/* m's output on the ref backend for input x (the engine takes m); NULL on failure. */
static float *run_ref(const char *label, struct cc_model *m, const float *x, size_t *n)
{
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_REF;
    struct cc_error err = {0};
    struct cc_engine *e = cc_engine_create_from_model(m, &opt, &err);
    if (!CHECKF(e != NULL, "%s: ref engine: %s", label, err.msg))
        return NULL;
    *n = cc_engine_output_count(e);
    float *y = malloc(*n * sizeof(float));
    if (!CHECKF(y && cc_engine_run(e, x, y, &err), "%s: ref run: %s", label, err.msg)) {
        free(y);
        y = NULL;
    }
    cc_engine_destroy(e);
    return y;
}

/* A fixed input for m (the caller frees it); *n gets its count. */
static float *fixed_input(const struct cc_model *m, size_t *n)
{
    *n = (size_t)m->tensors[m->input.tensor].count;
    float *x = malloc(*n * sizeof(float));
    struct tu_rng r;
    tu_rng_seed(&r, 7);
    if (x)
        tu_rng_fill(&r, x, *n, -2.0f, 2.0f);
    return x;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading and changing a bundle's manifest (libzip, cJSON)                                  */
/* ---------------------------------------------------------------------------------------- */

/* The parsed manifest.json of the bundle at path, or NULL. */
static cJSON *read_manifest(const char *path)
{
    zip_t *za = zip_open(path, ZIP_RDONLY, NULL);
    zip_stat_t st;
    cJSON *root = NULL;
    if (za && zip_stat(za, "manifest.json", 0, &st) == 0) {
        char *text = malloc(st.size + 1);
        zip_file_t *f = zip_fopen(za, "manifest.json", 0);
        if (text && f && zip_fread(f, text, st.size) == (zip_int64_t)st.size) {
            text[st.size] = 0;
            root = cJSON_Parse(text);
        }
        if (f)
            zip_fclose(f);
        free(text);
    }
    if (za)
        zip_discard(za);
    return root;
}

static int manifest_version(const char *path)
{
    cJSON *root = read_manifest(path);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
    int version = cJSON_IsNumber(v) ? v->valueint : -1;
    cJSON_Delete(root);
    return version;
}

/* Replaces the manifest's top-level key with value (owned), rewriting manifest.json in place. */
static bool set_manifest_key(const char *path, const char *key, cJSON *value)
{
    cJSON *root = read_manifest(path);
    if (!root) {
        cJSON_Delete(value);
        return false;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, key);
    cJSON_AddItemToObject(root, key, value); // root owns value from here
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    zip_t *za = text ? zip_open(path, 0, NULL) : NULL;
    zip_source_t *src = za ? zip_source_buffer(za, text, strlen(text), 1) : NULL; // frees text
    if (!src)
        free(text);
    bool ok = src && zip_file_add(za, "manifest.json", src, ZIP_FL_OVERWRITE) >= 0;
    if (src && !ok)
        zip_source_free(src);
    if (za && ok)
        return zip_close(za) == 0;
    if (za)
        zip_discard(za);
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Round trip                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Writes m to dir/name (overwrite); false (counted) on failure. */
static bool write_ok(const char *label, const struct cc_model *m, const char *path,
                     const char *training)
{
    struct cc_bundle_write_options opts = {.training_json = training, .overwrite = true};
    struct cc_error err = {0};
    return CHECKF(cc_bundle_write(m, path, &opts, &err), "%s: write: %s", label, err.msg);
}

/* The ref outputs of a and b (both taken) on one fixed input are bitwise equal. With check
 * (PYTHON, SCRIPT), the input and a's output go to files for the Python reader of path. */
static void check_same_outputs(const char *label, struct cc_model *a, struct cc_model *b,
                               const char *const *check, const char *path)
{
    size_t n_in, na = 0, nb = 0;
    float *x = fixed_input(a, &n_in);
    float *ya = x ? run_ref(label, a, x, &na) : (cc_model_destroy(a), NULL);
    float *yb = x ? run_ref(label, b, x, &nb) : (cc_model_destroy(b), NULL);
    CHECKF(ya && yb && na == nb && !memcmp(ya, yb, na * sizeof(float)),
           "%s: ref outputs of the original and the written model differ", label);
    if (check && ya) {
        char in_path[512], out_path[512], cmd[2048];
        FILE *fi = fopen(in_dir(in_path, sizeof(in_path), "input.f32"), "wb");
        FILE *fo = fopen(in_dir(out_path, sizeof(out_path), "output.f32"), "wb");
        bool ok = fi && fo && fwrite(x, sizeof(float), n_in, fi) == n_in &&
                  fwrite(ya, sizeof(float), na, fo) == na;
        ok = (fi ? fclose(fi) == 0 : false) && ok;
        ok = (fo ? fclose(fo) == 0 : false) && ok;
        snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' '%s' '%s'", check[0], check[1], path, in_path,
                 out_path);
        CHECKF(ok && system(cmd) == 0, "%s: the Python reader rejects the written bundle (%s)",
               label, cmd);
        unlink(in_path);
        unlink(out_path);
    }
    free(x);
    free(ya);
    free(yb);
}

/* load -> write -> load: equal models, the same version, the same outputs; the reloaded model
 * written again gives the same bytes. */
static void check_round_trip(const char *src, const char *const *check)
{
    char path[512], again[512];
    const char *label = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    struct cc_error err = {0};
    struct cc_model *a = cc_bundle_load(src, &err), *b = NULL;
    if (!CHECKF(a != NULL, "%s: load: %s", label, err.msg))
        return;
    in_dir(path, sizeof(path), "written.ccm");
    in_dir(again, sizeof(again), "again.ccm");
    if (write_ok(label, a, path, NULL) &&
        CHECKF((b = cc_bundle_load(path, &err)) != NULL, "%s: reload: %s", label, err.msg)) {
        check_same_model(label, a, b);
        CHECKF(manifest_version(path) == manifest_version(src),
               "%s: written as version %d, the original is version %d", label,
               manifest_version(path), manifest_version(src));
        size_t n1 = 0, n2 = 0;
        char *bytes1 = tu_read_file(path, &n1), *bytes2 = NULL;
        if (write_ok(label, b, again, NULL))
            bytes2 = tu_read_file(again, &n2);
        CHECKF(bytes1 && bytes2 && n1 == n2 && !memcmp(bytes1, bytes2, n1),
               "%s: the reloaded model is written as other bytes", label);
        free(bytes1);
        free(bytes2);
        check_same_outputs(label, a, b, check, path);
        a = b = NULL;
    }
    cc_model_destroy(a);
    cc_model_destroy(b);
    unlink(path);
    unlink(again);
}

/* The model of src without antialiasing is written as version 2 when it has quantized
 * activations, else 1 (the lowest version it needs), and read back as the same model. */
static void check_lowest_version(const char *src)
{
    char path[512];
    const char *label = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    struct cc_error err = {0};
    struct cc_model *a = cc_bundle_load(src, &err), *b = NULL;
    if (!a || !a->input.antialias) {
        cc_model_destroy(a);
        return;
    }
    a->input.antialias = false;
    int want = 1;
    for (int i = 0; i < a->n_tensors; i++)
        want = a->tensors[i].quantized ? 2 : want;
    in_dir(path, sizeof(path), "no-antialias.ccm");
    if (write_ok(label, a, path, NULL)) {
        CHECKF(manifest_version(path) == want, "%s without antialias: version %d, want %d",
               label, manifest_version(path), want);
        b = cc_bundle_load(path, &err);
        CHECKF(b != NULL, "%s without antialias: reload: %s", label, err.msg);
        if (b)
            check_same_model(label, a, b);
    }
    cc_model_destroy(a);
    cc_model_destroy(b);
    unlink(path);
}

/* ---------------------------------------------------------------------------------------- */
/* "training"                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* The loader refuses the bundle at path with "training" set to value (owned), one line. */
static void check_training_refused(const char *label, const char *path, cJSON *value,
                                   const char *must_say)
{
    struct cc_error err = {0};
    CHECKF(set_manifest_key(path, "training", value), "%s: rewriting the manifest", label);
    struct cc_model *m = cc_bundle_load(path, &err);
    CHECKF(m == NULL, "%s: loaded", label);
    cc_model_destroy(m);
    check_one_line(label, &err, path, must_say);
}

/* The writer refuses training text json with a line that says must_say. */
static void check_training_not_written(const struct cc_model *m, const char *json,
                                       const char *must_say)
{
    char path[512];
    struct cc_bundle_write_options opts = {.training_json = json};
    struct cc_error err = {0};
    in_dir(path, sizeof(path), "bad-training.ccm");
    CHECKF(!cc_bundle_write(m, path, &opts, &err), "training %.40s: written", json);
    check_one_line("training refused by the writer", &err, path, must_say);
    CHECKF(access(path, F_OK) != 0, "training %.40s: a file was left", json);
}

static void test_training(const char *src)
{
    static const char given[] = "{\"data\": \"vivid clips\", \"epochs\": 3, \"lr\": 0.001}";
    static const char compact[] = "{\"data\":\"vivid clips\",\"epochs\":3,\"lr\":0.001}";
    char path[512], again[512];
    struct cc_error err = {0};
    struct cc_model *a = cc_bundle_load(src, &err), *b = NULL, *c = NULL;
    if (!CHECKF(a != NULL, "training: load %s: %s", src, err.msg))
        return;
    CHECKF(a->training_json == NULL, "training: %s has none, got %s", src, a->training_json);
    in_dir(path, sizeof(path), "trained.ccm");
    in_dir(again, sizeof(again), "trained-again.ccm");
    if (write_ok("training", a, path, given) && (b = cc_bundle_load(path, &err)))
        CHECKF(same_str(b->training_json, compact), "training: read back as %s",
               b->training_json ? b->training_json : "(none)");
    CHECKF(b != NULL, "training: reload: %s", err.msg);
    // NULL in the options keeps the loaded model's own.
    if (b && write_ok("training kept", b, again, NULL) && (c = cc_bundle_load(again, &err)))
        CHECKF(same_str(c->training_json, compact), "training: not kept on rewrite: %s",
               c->training_json ? c->training_json : "(none)");
    check_training_not_written(a, "[1, 2]", "must be a JSON object");
    check_training_not_written(a, "{\"epochs\": 3", "is not valid JSON");
    char *big = malloc(70000);
    if (big) {
        memset(big, 'x', 70000);
        memcpy(big, "{\"a\": \"", 7);
        memcpy(big + 70000 - 3, "\"}", 3);
        check_training_not_written(a, big, "above the limit");
        check_training_refused("training too big", path, cJSON_Parse(big), "above the limit");
        free(big);
    }
    check_training_refused("training string", path, cJSON_CreateString("vivid"),
                           "\"training\" must be a JSON object");
    check_training_refused("training array", again, cJSON_CreateArray(), "not an array");
    cc_model_destroy(a);
    cc_model_destroy(b);
    cc_model_destroy(c);
    unlink(path);
    unlink(again);
}

/* ---------------------------------------------------------------------------------------- */
/* Refusals and failures: nothing changed, nothing left behind                               */
/* ---------------------------------------------------------------------------------------- */

static void test_overwrite(const struct cc_model *m)
{
    char path[512], left[1024];
    struct cc_error err = {0};
    in_dir(path, sizeof(path), "existing.ccm");
    FILE *f = fopen(path, "wb");
    CHECKF(f && fputs("not a bundle, and kept as it is", f) >= 0 && fclose(f) == 0, "%s", path);
    struct cc_bundle_write_options opts = {.overwrite = false};
    CHECKF(!cc_bundle_write(m, path, &opts, &err), "overwrite=false wrote over %s", path);
    check_one_line("overwrite=false", &err, path, "exists");
    size_t n = 0;
    char *bytes = tu_read_file(path, &n);
    CHECKF(bytes && n == 31 && !memcmp(bytes, "not a bundle, and kept as it is", 31),
           "overwrite=false changed %s", path);
    free(bytes);
    CHECKF(leftovers("existing.ccm", left, sizeof(left)) == 0, "overwrite=false left %s", left);
    opts.overwrite = true;
    CHECKF(cc_bundle_write(m, path, &opts, &err), "overwrite=true: %s", err.msg);
    struct cc_model *back = cc_bundle_load(path, &err);
    CHECKF(back && cc_model_hash(back) == cc_model_hash(m), "overwrite=true: %s", err.msg);
    cc_model_destroy(back);
    unlink(path);
}

static void test_missing_directory(const struct cc_model *m)
{
    char path[512], left[1024];
    struct cc_error err = {0};
    in_dir(path, sizeof(path), "no-such-dir/model.ccm");
    CHECKF(!cc_bundle_write(m, path, NULL, &err), "wrote into a missing directory");
    check_one_line("missing directory", &err, path, "does not exist");
    CHECKF(leftovers(NULL, left, sizeof(left)) == 0, "missing directory: left %s", left);
}

/* Failures after the temporary file exists: a rename over a directory, and a full disk (a
 * file size limit: write() fails with EFBIG as it would with ENOSPC). */
static void test_no_leftovers(const struct cc_model *m)
{
    char path[512], left[1024];
    struct cc_bundle_write_options opts = {.overwrite = true};
    struct cc_error err = {0};
    CHECKF(mkdir(in_dir(path, sizeof(path), "a-directory"), 0755) == 0, "mkdir %s", path);
    CHECKF(!cc_bundle_write(m, path, &opts, &err), "wrote over directory %s", path);
    check_one_line("over a directory", &err, path, "directory");
    CHECKF(leftovers("a-directory", left, sizeof(left)) == 0, "over a directory: left %s", left);
    rmdir(path);

    in_dir(path, sizeof(path), "full-disk.ccm");
    struct rlimit old, small = {64 << 10, 64 << 10};
    signal(SIGXFSZ, SIG_IGN);
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    small.rlim_max = old.rlim_max;
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    bool wrote = cc_bundle_write(m, path, &opts, &err);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECKF(!wrote, "wrote %s beyond a 64 KiB file size limit", path);
    check_one_line("full disk", &err, path, "File too large");
    CHECKF(leftovers(NULL, left, sizeof(left)) == 0, "full disk: left %s", left);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_bundle_write PYTHON CHECK_SCRIPT BUNDLE...\n");
        return 2;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *check[] = {argv[1], argv[2]};
    for (int i = 3; i < argc; i++) // the self-test bundles are also read by Python
        check_round_trip(argv[i], i < 5 ? check : NULL);
    for (int i = 3; i < argc; i++)
        check_lowest_version(argv[i]);
    test_training(argv[3]);
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(argv[3], &err);
    if (CHECKF(m != NULL, "load %s: %s", argv[3], err.msg)) {
        test_overwrite(m);
        test_missing_directory(m);
        test_no_leftovers(m);
    }
    cc_model_destroy(m);
    char left[1024];
    CHECKF(leftovers(NULL, left, sizeof(left)) == 0, "left in %s: %s", dir, left);
    rmdir(dir);
    return tu_exit_code();
}
