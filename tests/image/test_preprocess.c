/* camclass — preprocessing against PyTorch and PIL (suite 'unit').
 *
 * Usage: test_preprocess PYTHON make_preprocess_ref.py [PHOTO...]
 * Runs the reference script into a temporary directory (the references are produced by
 * PyTorch, and for "antialias": true by PIL, in this run), then preprocesses every frame it
 * wrote and compares: max abs diff ≤ 1e-4 for every format, geometry and policy, with and
 * without antialias. The photos (real PNG/JPEG pictures: the PHOTOs, by default the script's
 * list from Debian's python3-skimage) are decoded by camclass's own file source and compared with
 * PIL's decode + resize, also ≤ 1e-4 (the issue asked for 0.02: camclass gives PIL's bytes); each
 * prints its max and mean difference, and how far the resize without antialias is from PIL's. MJPEG
 * frames are also compared with decoding the same JPEG by libjpeg and taking the RGB24 path (must
 * be identical). Also checks the vectorized YUV row converters on all 2^24 inputs, the geometry
 * rules, and malformed frames.
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "convert.h"
#include "decode.h"
#include "preprocess.h"
#include "source_file.h"
#include "testutil.h"
#include "testutil_jpeg.h"

#define TOLERANCE 1e-4

extern char **environ;

/* ---- YUV converters: vectorized rows == the scalar definition, for every input ---------- */

static void test_yuv_rows(void)
{
    // One row holds every Y for a fixed (U, V): 256 pixels = 128 pairs.
    uint8_t yuyv[512], ny[256], nuv[256], r[256], g[256], b[256], r2[256], g2[256], b2[256];
    long bad = 0;
    for (int u = 0; u < 256; u++) {
        for (int v = 0; v < 256; v++) {
            for (int k = 0; k < 128; k++) {
                yuyv[4 * k] = ny[2 * k] = (uint8_t)(2 * k);
                yuyv[4 * k + 2] = ny[2 * k + 1] = (uint8_t)(2 * k + 1);
                yuyv[4 * k + 1] = nuv[2 * k] = (uint8_t)u;
                yuyv[4 * k + 3] = nuv[2 * k + 1] = (uint8_t)v;
            }
            cc_yuyv_row_to_planar(yuyv, 0, 128, r, g, b);
            cc_nv12_row_to_planar(ny, nuv, 0, 128, r2, g2, b2);
            for (int y = 0; y < 256; y++) {
                int o[3];
                cc_yuv_to_rgb(y, u, v, o);
                bad += o[0] != r[y] || o[1] != g[y] || o[2] != b[y];
                bad += o[0] != r2[y] || o[1] != g2[y] || o[2] != b2[y];
            }
        }
    }
    CHECKF(bad == 0, "vectorized YUV rows differ from cc_yuv_to_rgb at %ld pixels", bad);
    int o[3];
    cc_yuv_to_rgb(235, 128, 128, o);
    CHECKF(o[0] == 255 && o[1] == 255 && o[2] == 255, "white: %d %d %d", o[0], o[1], o[2]);
    cc_yuv_to_rgb(16, 128, 128, o);
    CHECKF(o[0] == 0 && o[1] == 0 && o[2] == 0, "black: %d %d %d", o[0], o[1], o[2]);
}

/* ---- geometry rules ------------------------------------------------------------------- */

static void check_geo(int in_w, int in_h, int s, int out_w, int out_h, int rw, int rh, int cx,
                      int cy)
{
    struct cc_input_spec spec = {.resize = s ? CC_RESIZE_CENTER_CROP : CC_RESIZE_SQUASH,
                                 .resize_size = s};
    struct cc_preprocess_geometry g;
    struct cc_error err = {{0}};
    bool ok = cc_preprocess_geometry(in_w, in_h, &spec, out_w, out_h, &g, &err);
    CHECKF(ok && g.resized_w == rw && g.resized_h == rh && g.crop_x == cx && g.crop_y == cy,
           "geometry %dx%d S=%d -> %dx%d: got resized %dx%d crop (%d,%d), want %dx%d (%d,%d) %s",
           in_w, in_h, s, out_w, out_h, g.resized_w, g.resized_h, g.crop_x, g.crop_y, rw, rh, cx,
           cy, err.msg);
}

static void test_geometry(void)
{
    check_geo(640, 480, 0, 224, 224, 224, 224, 0, 0);
    // int(256*640/480) = 341; round(117/2 = 58.5) = 58 (half to even); (256-224)/2 = 16.
    check_geo(640, 480, 256, 224, 224, 341, 256, 58, 16);
    // int(256*1280/720) = 455; round(115.5) = 116.
    check_geo(1280, 720, 256, 224, 224, 455, 256, 116, 16);
    check_geo(101, 333, 256, 224, 224, 256, 844, 16, 310);
    check_geo(333, 101, 225, 224, 224, 741, 225, 258, 0); // round(0.5) = 0
    check_geo(300, 300, 227, 224, 224, 227, 227, 2, 2);   // round(1.5) = 2
    struct cc_input_spec spec = {.resize = CC_RESIZE_CENTER_CROP, .resize_size = 200};
    struct cc_preprocess_geometry g;
    struct cc_error err = {{0}};
    CHECK(!cc_preprocess_geometry(640, 480, &spec, 224, 224, &g, &err));
    CHECKF(strstr(err.msg, "resize.size") != NULL, "error text: %s", err.msg);
}

/* ---- malformed frames ----------------------------------------------------------------- */

static void test_bad_frames(struct cc_preprocess *pp)
{
    static uint8_t data[64 * 48 * 3];
    float *out = malloc(sizeof(float) * 3 * 32 * 32);
    struct cc_input_spec spec = {.color = CC_COLOR_RGB, .std = {1, 1, 1}};
    struct cc_error err = {{0}};
    struct cc_frame f = {.format = CC_PIX_YUYV,
                         .width = 64,
                         .height = 48,
                         .stride = 128,
                         .data = data,
                         .size = 64 * 48 * 2 - 1,
                         .sequence = 7};
    CHECK(!cc_preprocess(pp, &f, &spec, 32, 32, out, &err));
    CHECKF(strstr(err.msg, "frame 7") && strstr(err.msg, "truncated"), "%s", err.msg);
    f.size = sizeof(data);
    f.stride = 100;
    CHECK(!cc_preprocess(pp, &f, &spec, 32, 32, out, &err));
    CHECKF(strstr(err.msg, "stride 100") != NULL, "%s", err.msg);
    f.format = CC_PIX_NV12;
    f.stride = 64;
    f.size = 64 * 48 + 64 * 23; // one UV row short
    CHECK(!cc_preprocess(pp, &f, &spec, 32, 32, out, &err));
    f.size = 64 * 48 * 3 / 2;
    err.msg[0] = 0;
    CHECKF(cc_preprocess(pp, &f, &spec, 32, 32, out, &err), "%s", err.msg);
    f.format = CC_PIX_MJPEG;
    f.size = 100;
    memset(data, 0x55, 100);
    CHECK(!cc_preprocess(pp, &f, &spec, 32, 32, out, &err));
    CHECKF(strstr(err.msg, "MJPEG frame 7") != NULL, "%s", err.msg);
    free(out);
}

/* ---- MJPEG without Huffman tables ------------------------------------------------------ */

/* Many webcams send MJPEG frames without DHT segments (the standard tables are implied).
 * Encodes a frame with libjpeg's standard tables, strips every DHT segment, and checks that
 * the frame still preprocesses to exactly the same tensor. */
static void test_mjpeg_without_dht(struct cc_preprocess *pp)
{
    enum { W = 96, H = 64 };
    static uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H * 3; i++)
        rgb[i] = (uint8_t)(i * 7 + (i / (W * 3)) * 3);
    size_t jpg_size = 0;
    uint8_t *jpg = tu_jpeg_encode(rgb, W, H, 3, 0, false, &jpg_size); // standard Huffman tables
    if (!jpg)
        return;
    // Copy without DHT (FF C4) segments; everything up to SOS has a 2-byte length.
    uint8_t *stripped = malloc(jpg_size);
    size_t n = 0, i = 2, dht = 0;
    memcpy(stripped, jpg, 2);
    n = 2;
    while (i + 4 <= jpg_size && jpg[i] == 0xff && jpg[i + 1] != 0xda) {
        size_t len = 2 + ((size_t)jpg[i + 2] << 8 | jpg[i + 3]);
        if (jpg[i + 1] == 0xc4)
            dht++;
        else {
            memcpy(stripped + n, jpg + i, len);
            n += len;
        }
        i += len;
    }
    memcpy(stripped + n, jpg + i, jpg_size - i);
    n += jpg_size - i;
    CHECKF(dht > 0, "the test JPEG has no DHT segment to strip");
    struct cc_input_spec spec = {
        .color = CC_COLOR_RGB, .mean = {0.5f, 0.5f, 0.5f}, .std = {0.25f, 0.25f, 0.25f}};
    float *a = malloc(sizeof(float) * 3 * 32 * 32), *b = malloc(sizeof(float) * 3 * 32 * 32);
    struct cc_frame f = {
        .format = CC_PIX_MJPEG, .width = W, .height = H, .data = jpg, .size = jpg_size};
    struct cc_error err = {{0}};
    bool ok = cc_preprocess(pp, &f, &spec, 32, 32, a, &err);
    f.data = stripped;
    f.size = n;
    ok = ok && cc_preprocess(pp, &f, &spec, 32, 32, b, &err);
    CHECKF(ok && memcmp(a, b, sizeof(float) * 3 * 32 * 32) == 0, "MJPEG without DHT: %s",
           ok ? "tensor differs" : err.msg);
    free(a);
    free(b);
    free(stripped);
    free(jpg);
}

/* ---- against PyTorch ------------------------------------------------------------------ */

/* Runs PYTHON SCRIPT DIR PHOTO... */
static bool run_script(const char *python, const char *script, const char *dir, char **photos,
                       int n_photos)
{
    char **argv = calloc((size_t)n_photos + 4, sizeof(char *));
    if (!argv)
        return false;
    argv[0] = (char *)python;
    argv[1] = (char *)script;
    argv[2] = (char *)dir;
    for (int i = 0; i < n_photos; i++)
        argv[3 + i] = photos[i];
    pid_t pid;
    int rc = posix_spawn(&pid, python, NULL, NULL, argv, environ);
    free(argv);
    if (rc != 0)
        return false;
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static enum cc_pixfmt parse_format(const char *s)
{
    static const char *names[] = {"YUYV", "MJPEG", "RGB24", "BGR24", "NV12", "GREY"};
    static const enum cc_pixfmt fmts[] = {CC_PIX_YUYV,  CC_PIX_MJPEG, CC_PIX_RGB24,
                                          CC_PIX_BGR24, CC_PIX_NV12,  CC_PIX_GREY};
    for (int i = 0; i < 6; i++)
        if (strcmp(s, names[i]) == 0)
            return fmts[i];
    return CC_PIX_COUNT;
}

/* Mean absolute difference of n floats. */
static double mean_abs_diff(const float *a, const float *b, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += fabs((double)a[i] - (double)b[i]);
    return n ? sum / (double)n : 0;
}

/* The first frame of an image file, through camclass's file source (PNG: RGB24 or GREY,
 * JPEG: RGB24). */
static bool read_photo(const char *path, struct cc_frame *f, struct cc_error *err)
{
    struct cc_source_file *src = cc_source_file_open(path, false, err);
    int got = src ? cc_source_file_read(src, f, err) : -1;
    cc_source_file_destroy(src);
    if (got == 0)
        cc_error_set(err, "%s: no frame", path);
    return got == 1;
}

/* Worst differences, per source format and antialias (0/1). */
struct worst {
    double fmt[2][CC_PIX_COUNT];
    double all[2];
    int cases[2];
    int photos;
    int rois; // cases cropped to a ROI first
    double roi_worst;
};

/* One case line: preprocess the frame, compare with the reference tensor. */
static void run_case(struct cc_preprocess *pp, const char *dir, const char *line, struct worst *w)
{
    char name[128], fmt_s[16], policy[16], color[8], photo[4096] = "";
    int width, height, stride, size, aa, ow, oh;
    struct cc_input_spec spec = {0};
    if (sscanf(line, "%127s %15s %d %d %d %15s %d %d %d %d %7s %f %f %f %f %f %f %4095s", name,
               fmt_s, &width, &height, &stride, policy, &size, &aa, &ow, &oh, color, &spec.mean[0],
               &spec.mean[1], &spec.mean[2], &spec.std[0], &spec.std[1], &spec.std[2],
               photo) < 17) {
        CHECKF(false, "bad case line: %s", line);
        return;
    }
    spec.color = strcmp(color, "BGR") == 0 ? CC_COLOR_BGR : CC_COLOR_RGB;
    spec.resize = strcmp(policy, "squash") == 0 ? CC_RESIZE_SQUASH : CC_RESIZE_CENTER_CROP;
    spec.resize_size = size;
    spec.antialias = aa != 0;
    struct cc_error roi_err = {{0}};
    if (strncmp(photo, "roi=", 4) == 0) { // a ROI case: no photo, the frame cropped first
        if (!CHECKF(cc_roi_parse(photo + 4, &spec.roi, &roi_err), "%s: %s", name, roi_err.msg))
            return;
        photo[0] = 0;
    }
    bool is_photo = strcmp(fmt_s, "FILE") == 0;
    char path[4200];
    size_t ref_size;
    snprintf(path, sizeof(path), "%s/%s.ref", dir, name);
    float *ref = tu_read_file(path, &ref_size);
    size_t n = (size_t)3 * ow * oh;
    float *out = malloc(sizeof(float) * n);
    struct cc_frame f = {0};
    struct cc_error err = {{0}};
    if (is_photo) {
        if (!CHECKF(read_photo(photo, &f, &err), "%s: %s", name, err.msg))
            goto done;
        CHECKF(f.width == width && f.height == height, "%s: decoded %dx%d, PIL %dx%d", name,
               f.width, f.height, width, height);
    } else {
        snprintf(path, sizeof(path), "%s/%s.frame", dir, name);
        size_t frame_size;
        f = (struct cc_frame){.format = parse_format(fmt_s),
                              .width = width,
                              .height = height,
                              .stride = stride,
                              .data = tu_read_file(path, &frame_size)};
        f.size = f.capacity = frame_size;
    }
    if (!CHECKF(f.data && ref && out && ref_size == n * sizeof(float) && f.format != CC_PIX_COUNT,
                "%s: cannot read the case files", name))
        goto done;
    if (!CHECKF(cc_preprocess(pp, &f, &spec, ow, oh, out, &err), "%s: %s", name, err.msg))
        goto done;
    size_t at;
    double diff = tu_max_abs_diff(out, ref, n, &at);
    CHECKF(diff <= TOLERANCE, "%s: max abs diff %.3g at %zu (got %.6f, %s %.6f)", name, diff, at,
           out[at], aa ? "PIL" : "PyTorch", ref[at]);
    w->fmt[aa != 0][f.format] = fmax(w->fmt[aa != 0][f.format], diff);
    w->all[aa != 0] = fmax(w->all[aa != 0], diff);
    w->cases[aa != 0]++;
    if (spec.roi.kind != CC_ROI_NONE) {
        w->rois++;
        w->roi_worst = fmax(w->roi_worst, diff);
    }
    if (is_photo) { // the figures the documentation quotes, and what antialias changes
        w->photos++;
        double mean = mean_abs_diff(out, ref, n);
        spec.antialias = false;
        double old_max = 0, old_mean = 0;
        if (CHECKF(cc_preprocess(pp, &f, &spec, ow, oh, out, &err), "%s: %s", name, err.msg)) {
            old_max = tu_max_abs_diff(out, ref, n, &at);
            old_mean = mean_abs_diff(out, ref, n);
        }
        printf("  %-36s %-5s %4dx%-4d vs PIL: antialias max %.2g mean %.2g; without "
               "antialias max %.3f mean %.4f\n",
               name, cc_pixfmt_name(f.format), width, height, diff, mean, old_max, old_mean);
    }
    if (f.format == CC_PIX_MJPEG) { // same JPEG through libjpeg + the RGB24 path: identical
        struct cc_image img = {0};
        float *out2 = malloc(sizeof(float) * n);
        if (CHECKF(out2 && cc_decode_jpeg(f.data, f.size, name, &img, &err), "%s: %s", name,
                   err.msg)) {
            struct cc_frame rgb = {.format = CC_PIX_RGB24,
                                   .width = img.width,
                                   .height = img.height,
                                   .stride = img.width * 3,
                                   .data = img.pixels,
                                   .size = img.capacity};
            CHECKF(cc_preprocess(pp, &rgb, &spec, ow, oh, out2, &err), "%s", err.msg);
            CHECKF(memcmp(out, out2, n * sizeof(float)) == 0,
                   "%s: MJPEG path differs from libjpeg decode + RGB24 path", name);
        }
        free(out2);
        cc_image_finish(&img);
    }
done:
    free(out);
    free(ref);
    free(f.data);
}

static void test_against_references(struct cc_preprocess *pp, const char *python,
                                    const char *script, char **photos, int n_photos)
{
    char dir[256];
    if (!tu_tmpdir(dir, sizeof(dir), "cc_preprocess_ref"))
        return;
    if (CHECKF(run_script(python, script, dir, photos, n_photos), "%s %s %s failed", python, script,
               dir)) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/cases.txt", dir);
        FILE *f = fopen(path, "r");
        struct worst w = {0};
        char line[8192];
        printf("photos (camclass's file source vs PIL's decoder):\n");
        while (f && fgets(line, sizeof(line), f))
            run_case(pp, dir, line, &w);
        if (f)
            fclose(f);
        CHECKF(w.cases[0] >= 100 && w.cases[1] >= 100 && w.photos >= (n_photos ? n_photos : 8),
               "only %d + %d reference cases, %d of them photos", w.cases[0], w.cases[1], w.photos);
        CHECKF(w.rois >= 60, "only %d ROI cases (60 expected)", w.rois);
        printf("%d cases cropped to a ROI first (vs the crop + resize of PyTorch and PIL), max "
               "abs diff %.3g\n",
               w.rois, w.roi_worst);
        for (int aa = 0; aa < 2; aa++) {
            printf("%d cases against %s, max abs diff %.3g (tolerance %.0e)\n", w.cases[aa],
                   aa ? "PIL (antialias)" : "PyTorch (no antialias)", w.all[aa], TOLERANCE);
            for (int i = 0; i < CC_PIX_COUNT; i++)
                printf("  %-5s max abs diff %.3g\n", cc_pixfmt_name((enum cc_pixfmt)i),
                       w.fmt[aa][i]);
        }
    }
    tu_rmtree(dir);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_preprocess PYTHON make_preprocess_ref.py [PHOTO...]\n");
        return 2;
    }
    struct cc_error err = {{0}};
    struct cc_preprocess *pp = cc_preprocess_create(&err);
    if (!pp) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_yuv_rows();
    test_geometry();
    test_bad_frames(pp);
    test_mjpeg_without_dht(pp);
    test_against_references(pp, argv[1], argv[2], argv + 3, argc - 3);
    cc_preprocess_destroy(pp);
    cc_preprocess_destroy(NULL);
    return tu_exit_code();
}
