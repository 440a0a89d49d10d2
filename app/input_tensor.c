/* camclass — a model input tensor from a file (see input_tensor.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "input_tensor.h"
#include "preprocess.h"
#include "source_file.h"

static bool is_image_name(const char *path)
{
    static const char *const suffixes[] = {".png", ".jpg", ".jpeg", ".y4m"};
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t n = strlen(suffixes[i]);
        if (len > n && strcasecmp(path + len - n, suffixes[i]) == 0)
            return true;
    }
    return false;
}

static bool load_raw(const char *path, float *x, size_t count, struct cc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cc_error_set(err, "cannot open input %s: %s", path, strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    bool ok = size == (long)(count * sizeof(float)) && fseek(f, 0, SEEK_SET) == 0 &&
              fread(x, sizeof(float), count, f) == count;
    fclose(f);
    if (!ok)
        return cc_error_set(err,
                            "input %s has %ld bytes; a raw input for this model is %zu float32 "
                            "values (%zu bytes, little-endian, NCHW), or give a PNG/JPEG image",
                            path, size, count, count * sizeof(float));
    return true;
}

static bool load_image(const char *path, const struct cc_model *m, float *x, char *what,
                       size_t what_size, struct cc_error *err)
{
    const struct cc_tensor *in = &m->tensors[m->input.tensor];
    struct cc_source_file *src = cc_source_file_open(path, false, err);
    struct cc_preprocess *pp = src ? cc_preprocess_create(err) : NULL;
    struct cc_frame f = {0};
    bool ok = false;
    if (pp) {
        int r = cc_source_file_read(src, &f, err);
        if (r == 0)
            cc_error_set(err, "input %s holds no frame", path);
        ok = r == 1 &&
             cc_preprocess(pp, &f, &m->input, (int)in->shape[3], (int)in->shape[2], x, err);
        if (ok)
            snprintf(what, what_size, "image %dx%d %s, preprocessed as the bundle says", f.width,
                     f.height, cc_pixfmt_name(f.format));
    }
    free(f.data);
    cc_preprocess_destroy(pp);
    cc_source_file_destroy(src);
    return ok;
}

bool cc_input_tensor_load(const char *path, const struct cc_model *m, float *x, size_t count,
                          char *what, size_t what_size, struct cc_error *err)
{
    const struct cc_tensor *in = &m->tensors[m->input.tensor];
    if (is_image_name(path)) {
        if (in->ndim != 4 || in->shape[1] != 3)
            return cc_error_set(err,
                                "input %s is an image, but the model's input is not [1,3,H,W]; "
                                "give a raw float32 tensor",
                                path);
        return load_image(path, m, x, what, what_size, err);
    }
    snprintf(what, what_size, "raw float32, %zu values", count);
    return load_raw(path, x, count, err);
}
