/* camclass fuzz target — the bundle manifest alone: the input is the text of manifest.json.
 *
 * The loader reads manifests only out of a zip, so each input is wrapped (stored, with
 * libzip, in memory) into a bundle that also holds the entries a manifest may reference:
 * weights.bin (4096 bytes of small f32 values), scales.bin (positive f32 scales) and
 * labels.txt (two lines) — the names the seeds use, so that tensor data, quantization
 * scales and labels get past "entry not found" and into the range, shape and graph checks.
 * Keys and words of the format are in manifest.dict (-dict=, as tools/fuzz.sh passes). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>

#include "bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WEIGHTS_FLOATS 1024

static float weights[WEIGHTS_FLOATS]; // written once; the same for every input
static float scales[64];
static const char labels[] = "cat\ndog\n";

static bool add(zip_t *za, const char *name, const void *bytes, size_t n)
{
    zip_source_t *s = zip_source_buffer(za, bytes, n, 0);
    zip_int64_t i = s ? zip_file_add(za, name, s, 0) : -1;
    if (i < 0) {
        zip_source_free(s);
        return false;
    }
    return zip_set_file_compression(za, (zip_uint64_t)i, ZIP_CM_STORE, 0) == 0;
}

/* Writes the bundle around manifest into a malloc'd buffer; NULL on a libzip failure (which
 * would be a harness bug: abort then, so that it is seen). */
static uint8_t *wrap(const uint8_t *manifest, size_t size, size_t *out_size)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    if (!src)
        return NULL;
    zip_source_keep(src); // still ours after zip_close, to read the archive back
    zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    uint8_t *buf = NULL;
    if (!za)
        goto done;
    if (!add(za, "manifest.json", manifest, size) || !add(za, "weights.bin", weights,
                                                          sizeof(weights)) ||
        !add(za, "scales.bin", scales, sizeof(scales)) ||
        !add(za, "labels.txt", labels, sizeof(labels) - 1) || zip_close(za) != 0) {
        zip_discard(za);
        goto done;
    }
    zip_stat_t st;
    if (zip_source_stat(src, &st) != 0 || zip_source_open(src) != 0)
        goto done;
    if ((buf = malloc(st.size ? st.size : 1)) &&
        zip_source_read(src, buf, st.size) != (zip_int64_t)st.size) {
        free(buf);
        buf = NULL;
    }
    zip_source_close(src);
    *out_size = st.size;
done:
    zip_source_free(src);
    zip_error_fini(&ze);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!weights[1]) {
        for (int i = 0; i < WEIGHTS_FLOATS; i++)
            weights[i] = (float)(i % 64) * 0.25f - 8.0f;
        for (int i = 0; i < 64; i++)
            scales[i] = 0.01f * (float)(i + 1);
    }
    size_t zsize = 0;
    uint8_t *zip = wrap(data, size, &zsize);
    if (!zip)
        abort();
    struct cc_error err = {{0}};
    struct cc_model *m = cc_bundle_load_from_memory(zip, zsize, "fuzz-manifest.ccm", &err);
    if (!m == !err.msg[0])
        __builtin_trap();
    cc_model_destroy(m);
    free(zip);
    return 0;
}
