/* camclass — file sources: PNG, JPEG, directories, Y4M, corrupt files, the producer thread
 * (suite 'unit'). Every test file is written here (libpng, libjpeg, plain stdio) into a
 * temporary directory that is removed at the end.
 */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <png.h>

#include "convert.h"
#include "source_file.h"
#include "testutil.h"
#include "testutil_jpeg.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512]; // a few live paths at once; single-threaded test
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECKF(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

/* Writes the first `keep` bytes of src to dst (a truncated copy). */
static void truncate_copy(const char *src, const char *dst, double keep_fraction)
{
    size_t n;
    uint8_t *d = tu_read_file(src, &n);
    if (CHECKF(d != NULL, "cannot read %s", src))
        write_bytes(dst, d, (size_t)(n * keep_fraction));
    free(d);
}

/* ---- writers -------------------------------------------------------------------------- */

/* PNG of color_type with bit depth 8 or 16; pixels are 8-bit samples (16-bit: value*257).
 * palette (256 RGB entries) is used for PNG_COLOR_TYPE_PALETTE; interlace is Adam7 or none. */
static void write_png_ex(const char *path, int w, int h, int color_type, int depth,
                         const uint8_t *pixels, int channels, const png_color *palette,
                         int interlace)
{
    FILE *f = fopen(path, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (!CHECKF(f && png && info, "png writer") || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        if (f)
            fclose(f);
        return;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, depth, color_type, interlace, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (palette)
        png_set_PLTE(png, info, palette, 256);
    png_write_info(png, info);
    int passes = png_set_interlace_handling(png);
    uint8_t *row = malloc((size_t)w * channels * 2);
    for (int pass = 0; pass < passes; pass++)
        for (int y = 0; y < h; y++) {
            for (int i = 0; i < w * channels; i++) {
                uint8_t v = pixels[(size_t)y * w * channels + i];
                if (depth == 16) {
                    row[2 * i] = v; // big endian v*257
                    row[2 * i + 1] = v;
                } else {
                    row[i] = v;
                }
            }
            png_write_row(png, row);
        }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
    free(row);
}

static void write_png(const char *path, int w, int h, int color_type, int depth,
                      const uint8_t *pixels, int channels)
{
    write_png_ex(path, w, h, color_type, depth, pixels, channels, NULL, PNG_INTERLACE_NONE);
}

static void write_jpeg(const char *path, int w, int h, int channels, const uint8_t *pixels)
{
    size_t n;
    uint8_t *jpg = tu_jpeg_encode(pixels, w, h, channels, 95, false, &n);
    if (jpg)
        write_bytes(path, jpg, n);
    free(jpg);
}

/* Y4M with `frames` frames of planar data; frame k's byte i is (i * 7 + k * 31) & 255. */
static void write_y4m(const char *path, const char *cspace, int w, int h, int frames,
                      size_t frame_bytes)
{
    FILE *f = fopen(path, "wb");
    if (!CHECKF(f != NULL, "cannot write %s", path))
        return;
    fprintf(f, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1%s%s XCOMMENT=test\n", w, h, cspace ? " C" : "",
            cspace ? cspace : "");
    for (int k = 0; k < frames; k++) {
        fprintf(f, k == 1 ? "FRAME Ixyz\n" : "FRAME\n");
        for (size_t i = 0; i < frame_bytes; i++)
            fputc((int)((i * 7 + (size_t)k * 31) & 255), f);
    }
    fclose(f);
}

/* A PNG that is only a signature and an IHDR declaring w x h: what a decompression bomb
 * shows the decoder before its first IDAT byte. */
static void write_png_header(const char *path, int w, int h)
{
    FILE *f = fopen(path, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (CHECKF(f && png && info, "png writer") && !setjmp(png_jmpbuf(png))) {
        png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
        png_init_io(png, f);
        png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
                     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        png_write_info(png, info);
    }
    png_destroy_write_struct(&png, &info);
    if (f)
        fclose(f);
}

/* A 16x16 JPEG (progressive or baseline) whose SOF marker is patched to declare w x h. */
static void write_jpeg_declaring(const char *path, bool progressive, int w, int h)
{
    static const uint8_t px[16 * 16 * 3];
    size_t n = 0;
    uint8_t *mem = tu_jpeg_encode(px, 16, 16, 3, 0, progressive, &n);
    bool patched = false;
    for (size_t i = 2; mem && i + 9 < n && !patched; i++)
        if (mem[i] == 0xff && (mem[i + 1] == 0xc0 || mem[i + 1] == 0xc2)) {
            // SOFn: marker, length (2), precision (1), height (2), width (2), big endian
            mem[i + 5] = (uint8_t)(h >> 8), mem[i + 6] = (uint8_t)h;
            mem[i + 7] = (uint8_t)(w >> 8), mem[i + 8] = (uint8_t)w;
            patched = true;
        }
    if (CHECKF(patched, "%s: no SOF marker to patch", path))
        write_bytes(path, mem, n);
    free(mem);
}

static uint8_t y4m_byte(size_t i, int k)
{
    return (uint8_t)((i * 7 + (size_t)k * 31) & 255);
}

/* ---- helpers -------------------------------------------------------------------------- */

/* Opens path and reads one frame; returns the read result, err filled on failure. */
static int open_read(const char *path, bool loop, struct cc_frame *f, struct cc_error *err)
{
    struct cc_source_file *src = cc_source_file_open(path, loop, err);
    if (!src)
        return -2;
    int r = cc_source_file_read(src, f, err);
    cc_source_file_destroy(src);
    return r;
}

/* The file must be refused at open or at the first read, with its path in the message. */
static void expect_error(const char *path, const char *what)
{
    struct cc_frame f = {0};
    struct cc_error err = {{0}};
    int r = open_read(path, false, &f, &err);
    CHECKF(r < 0, "%s (%s): no error (read returned %d)", path, what, r);
    CHECKF(strstr(err.msg, path) != NULL, "%s (%s): message does not name the file: %s", path, what,
           err.msg);
    printf("  %-14s -> %s\n", what, err.msg);
    free(f.data);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_png(void)
{
    enum { W = 37, H = 23 };
    uint8_t rgb[W * H * 3], rgba[W * H * 4], grey[W * H];
    struct tu_rng rng;
    tu_rng_seed(&rng, 3);
    for (int i = 0; i < W * H; i++) {
        grey[i] = (uint8_t)tu_rng_u32(&rng);
        for (int c = 0; c < 4; c++) {
            rgba[4 * i + c] = (uint8_t)tu_rng_u32(&rng);
            if (c < 3)
                rgb[3 * i + c] = rgba[4 * i + c];
        }
    }
    struct {
        const char *name;
        int type, depth, channels;
        const uint8_t *pixels, *want;
        enum cc_pixfmt fmt;
    } cases[] = {
        {"rgb8.png", PNG_COLOR_TYPE_RGB, 8, 3, rgb, rgb, CC_PIX_RGB24},
        {"rgb16.png", PNG_COLOR_TYPE_RGB, 16, 3, rgb, rgb, CC_PIX_RGB24},
        {"rgba8.png", PNG_COLOR_TYPE_RGBA, 8, 4, rgba, rgb, CC_PIX_RGB24},
        {"grey8.png", PNG_COLOR_TYPE_GRAY, 8, 1, grey, grey, CC_PIX_GREY},
        {"grey16.png", PNG_COLOR_TYPE_GRAY, 16, 1, grey, grey, CC_PIX_GREY},
    };
    // Palette (index i -> colour (i, 255 - i, 3i)) and Adam7-interlaced files.
    png_color palette[256];
    uint8_t pal_rgb[W * H * 3];
    for (int i = 0; i < 256; i++)
        palette[i] = (png_color){(png_byte)i, (png_byte)(255 - i), (png_byte)(3 * i)};
    for (int i = 0; i < W * H; i++) {
        pal_rgb[3 * i] = palette[grey[i]].red;
        pal_rgb[3 * i + 1] = palette[grey[i]].green;
        pal_rgb[3 * i + 2] = palette[grey[i]].blue;
    }
    write_png_ex(tmp_path("palette.png"), W, H, PNG_COLOR_TYPE_PALETTE, 8, grey, 1, palette,
                 PNG_INTERLACE_NONE);
    write_png_ex(tmp_path("adam7.png"), W, H, PNG_COLOR_TYPE_RGB, 8, rgb, 3, NULL,
                 PNG_INTERLACE_ADAM7);
    struct {
        const char *name;
        const uint8_t *want;
    } more[] = {{"palette.png", pal_rgb}, {"adam7.png", rgb}};
    for (size_t i = 0; i < 2; i++) {
        struct cc_frame f = {0};
        struct cc_error err = {{0}};
        int r = open_read(tmp_path(more[i].name), false, &f, &err);
        CHECKF(r == 1 && f.format == CC_PIX_RGB24 && f.width == W && f.height == H &&
                   memcmp(f.data, more[i].want, (size_t)W * H * 3) == 0,
               "%s: r=%d %s", more[i].name, r, err.msg);
        free(f.data);
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *path = tmp_path(cases[i].name);
        write_png(path, W, H, cases[i].type, cases[i].depth, cases[i].pixels, cases[i].channels);
        struct cc_frame f = {0};
        struct cc_error err = {{0}};
        int r = open_read(path, false, &f, &err);
        size_t n = (size_t)W * H * (cases[i].fmt == CC_PIX_GREY ? 1 : 3);
        CHECKF(r == 1 && f.format == cases[i].fmt && f.width == W && f.height == H && f.size == n &&
                   f.stride == (int)(n / H) && memcmp(f.data, cases[i].want, n) == 0,
               "%s: r=%d %s %dx%d size %zu; %s", cases[i].name, r, cc_pixfmt_name(f.format),
               f.width, f.height, f.size, err.msg);
        free(f.data);
    }
    // A single looped image (decoded once, copied on each loop): the same pixels every time,
    // also when the caller writes into the frame it was given.
    struct cc_error err = {{0}};
    struct cc_source_file *src = cc_source_file_open(tmp_path("rgb8.png"), true, &err);
    if (CHECKF(src != NULL, "rgb8.png looped: %s", err.msg)) {
        struct cc_frame f = {0};
        for (int k = 0; k < 3; k++) {
            int r = cc_source_file_read(src, &f, &err);
            CHECKF(r == 1 && f.size == (size_t)W * H * 3 && memcmp(f.data, rgb, f.size) == 0 &&
                       f.sequence == (uint64_t)k,
                   "rgb8.png loop %d: r=%d %s", k, r, err.msg);
            if (r == 1)
                memset(f.data, 0, f.size);
        }
        free(f.data);
    }
    cc_source_file_destroy(src);
}

static void test_jpeg(void)
{
    enum { W = 64, H = 48 };
    uint8_t rgb[W * H * 3], grey[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            grey[y * W + x] = (uint8_t)(x * 4);
            rgb[3 * (y * W + x)] = (uint8_t)(x * 4);
            rgb[3 * (y * W + x) + 1] = (uint8_t)(y * 5);
            rgb[3 * (y * W + x) + 2] = 128;
        }
    write_jpeg(tmp_path("rgb.jpg"), W, H, 3, rgb);
    write_jpeg(tmp_path("grey.jpeg"), W, H, 1, grey);
    struct cc_frame f = {0};
    struct cc_error err = {{0}};
    int r = open_read(tmp_path("rgb.jpg"), false, &f, &err);
    if (CHECKF(r == 1 && f.format == CC_PIX_RGB24 && f.width == W && f.height == H,
               "rgb.jpg: r=%d %s", r, err.msg)) {
        int worst = 0;
        for (int i = 0; i < W * H * 3; i++) {
            int d = abs(f.data[i] - rgb[i]);
            worst = d > worst ? d : worst;
        }
        CHECKF(worst <= 12, "rgb.jpg decodes %d away from what was encoded", worst);
    }
    r = open_read(tmp_path("grey.jpeg"), false, &f, &err);
    if (CHECKF(r == 1 && f.format == CC_PIX_RGB24, "grey.jpeg: r=%d %s", r, err.msg)) {
        bool same = true;
        for (int i = 0; i < W * H; i++)
            same &= f.data[3 * i] == f.data[3 * i + 1] && f.data[3 * i] == f.data[3 * i + 2] &&
                    abs(f.data[3 * i] - grey[i]) <= 8;
        CHECKF(same, "grey JPEG is not delivered as R = G = B close to the source");
    }
    free(f.data);
}

/* tu_jpeg_encode_cmyk's JPEG as the file path. */
static void write_cmyk_jpeg(const char *path, int w, int h, const uint8_t *inks, bool ycck,
                            bool adobe)
{
    size_t n = 0;
    uint8_t *jpg = tu_jpeg_encode_cmyk(inks, w, h, ycck, adobe, &n);
    FILE *f = jpg ? fopen(path, "wb") : NULL;
    CHECKF(f && fwrite(jpg, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
    free(jpg);
}

/* CMYK and YCCK JPEGs ("Unsupported color conversion request" before) decode
 * to the RGB their inks give: C K / 255 for Adobe's inverted inks, (255 - C)(255 - K) / 255
 * without the marker. */
static void test_cmyk_jpeg(void)
{
    enum { W = 32, H = 16 };
    uint8_t inks[W * H * 4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = inks + 4 * (y * W + x);
            p[0] = (uint8_t)(x * 8), p[1] = (uint8_t)(y * 16), p[2] = 200;
            p[3] = (uint8_t)(x < W / 2 ? 255 : 160);
        }
    static const struct {
        const char *name;
        bool ycck, adobe;
    } cases[] = {{"cmyk-adobe.jpg", false, true},
                 {"ycck-adobe.jpg", true, true},
                 {"cmyk-plain.jpg", false, false}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_cmyk_jpeg(tmp_path(cases[i].name), W, H, inks, cases[i].ycck, cases[i].adobe);
        struct cc_frame f = {0};
        struct cc_error err = {{0}};
        int r = open_read(tmp_path(cases[i].name), false, &f, &err);
        if (CHECKF(r == 1 && f.format == CC_PIX_RGB24 && f.width == W && f.height == H,
                   "%s: r=%d %s", cases[i].name, r, err.msg)) {
            int worst = 0;
            for (int p = 0; p < W * H; p++)
                for (int c = 0; c < 3; c++) {
                    int v = inks[4 * p + c], k = inks[4 * p + 3];
                    int want = cases[i].adobe ? v * k / 255 : (255 - v) * (255 - k) / 255;
                    int d = abs(f.data[3 * p + c] - want);
                    worst = d > worst ? d : worst;
                }
            CHECKF(worst <= 12, "%s decodes %d away from its inks' RGB", cases[i].name, worst);
        }
        free(f.data);
    }
}

static void test_directory(void)
{
    CHECK(mkdir(tmp_path("dir"), 0700) == 0);
    CHECK(mkdir(tmp_path("dir/sub.png"), 0700) == 0); // a directory with an image name
    uint8_t px[3 * 4 * 2] = {0};
    const char *names[] = {"dir/b.png", "dir/c.PNG", "dir/a.jpg"};
    for (int i = 0; i < 3; i++) {
        memset(px, 40 * (i + 1), sizeof(px));
        if (i < 2)
            write_png(tmp_path(names[i]), 4, 2, PNG_COLOR_TYPE_RGB, 8, px, 3);
        else
            write_jpeg(tmp_path(names[i]), 4, 2, 3, px);
    }
    write_bytes(tmp_path("dir/notes.txt"), "hello", 5);
    // Expected order by name bytes: a.jpg (120), b.png (40), c.PNG (80).
    static const int want[] = {120, 40, 80, 120, 40};
    for (int loop = 0; loop < 2; loop++) {
        struct cc_error err = {{0}};
        struct cc_source_file *src = cc_source_file_open(tmp_path("dir"), loop, &err);
        if (!CHECKF(src != NULL, "dir: %s", err.msg))
            continue;
        struct cc_frame f = {0};
        for (int k = 0; k < 5; k++) {
            int r = cc_source_file_read(src, &f, &err);
            if (!loop && k >= 3) {
                CHECKF(r == 0, "dir without loop: read %d gave %d, want end", k, r);
                continue;
            }
            CHECKF(r == 1 && f.width == 4 && f.height == 2 && f.sequence == (uint64_t)k &&
                       abs(f.data[0] - want[k]) <= 2,
                   "dir loop=%d frame %d: r=%d seq %llu value %d want %d %s", loop, k, r,
                   (unsigned long long)f.sequence, r == 1 ? f.data[0] : -1, want[k], err.msg);
        }
        free(f.data);
        cc_source_file_destroy(src);
    }
    CHECK(mkdir(tmp_path("empty"), 0700) == 0);
    expect_error(tmp_path("empty"), "empty dir");
}

static void test_y4m(void)
{
    enum { W = 33, H = 17, CW = 17, CH = 9 };
    const size_t n420 = W * H + 2 * CW * CH;
    write_y4m(tmp_path("v420.y4m"), NULL, W, H, 3, n420); // no C tag: 420jpeg
    write_y4m(tmp_path("v420mpeg2.y4m"), "420mpeg2", W, H, 1, n420);
    write_y4m(tmp_path("v444.y4m"), "444", W, H, 2, 3 * W * H);
    write_y4m(tmp_path("vmono.y4m"), "mono", W, H, 2, W * H);

    struct cc_error err = {{0}};
    struct cc_source_file *src = cc_source_file_open(tmp_path("v420.y4m"), true, &err);
    if (CHECKF(src != NULL, "v420.y4m: %s", err.msg)) {
        CHECKF(cc_source_file_native_fps(src) == 25.0, "fps %g", cc_source_file_native_fps(src));
        struct cc_frame f = {0};
        for (int k = 0; k < 7; k++) { // 3 frames, looping
            int r = cc_source_file_read(src, &f, &err);
            int fk = k % 3;
            if (!CHECKF(r == 1 && f.format == CC_PIX_NV12 && f.width == W && f.height == H &&
                            f.stride == W + 1 && f.sequence == (uint64_t)k,
                        "v420 frame %d: r=%d %s %s", k, r, cc_pixfmt_name(f.format), err.msg))
                break;
            bool ok = true;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    ok &= f.data[y * f.stride + x] == y4m_byte((size_t)y * W + x, fk);
            const uint8_t *uv = f.data + (size_t)f.stride * H;
            for (int y = 0; y < CH; y++)
                for (int x = 0; x < CW; x++) {
                    size_t ui = (size_t)W * H + (size_t)y * CW + x, vi = ui + CW * CH;
                    ok &= uv[y * f.stride + 2 * x] == y4m_byte(ui, fk);
                    ok &= uv[y * f.stride + 2 * x + 1] == y4m_byte(vi, fk);
                }
            CHECKF(ok, "v420 frame %d: NV12 bytes differ from the y4m planes", k);
        }
        free(f.data);
        cc_source_file_destroy(src);
    }
    struct cc_frame f = {0};
    int r = open_read(tmp_path("v420mpeg2.y4m"), false, &f, &err);
    CHECKF(r == 1 && f.format == CC_PIX_NV12, "C420mpeg2: r=%d %s", r, err.msg);
    r = open_read(tmp_path("v444.y4m"), false, &f, &err);
    if (CHECKF(r == 1 && f.format == CC_PIX_RGB24 && f.stride == 3 * W, "C444: r=%d %s", r,
               err.msg)) {
        bool ok = true;
        for (int i = 0; i < W * H; i++) {
            int o[3];
            cc_yuv_to_rgb(y4m_byte((size_t)i, 0), y4m_byte((size_t)i + W * H, 0),
                          y4m_byte((size_t)i + 2 * W * H, 0), o);
            ok &= f.data[3 * i] == o[0] && f.data[3 * i + 1] == o[1] && f.data[3 * i + 2] == o[2];
        }
        CHECKF(ok, "C444 frame differs from cc_yuv_to_rgb");
    }
    r = open_read(tmp_path("vmono.y4m"), false, &f, &err);
    CHECKF(r == 1 && f.format == CC_PIX_GREY && f.stride == W && f.data[5] == y4m_byte(5, 0),
           "Cmono: r=%d %s", r, err.msg);
    free(f.data);
}

static void test_corrupt_files(void)
{
    printf("corrupt files:\n");
    uint8_t px[16 * 16 * 3];
    for (size_t i = 0; i < sizeof(px); i++)
        px[i] = (uint8_t)(i * 13);
    write_png(tmp_path("good.png"), 16, 16, PNG_COLOR_TYPE_RGB, 8, px, 3);
    write_jpeg(tmp_path("good.jpg"), 16, 16, 3, px);
    truncate_copy(tmp_path("good.png"), tmp_path("trunc.png"), 0.6);
    expect_error(tmp_path("trunc.png"), "truncated PNG");
    size_t n;
    uint8_t *d = tu_read_file(tmp_path("good.png"), &n);
    if (d) {
        d[n - 20] ^= 0xff; // inside IDAT: CRC mismatch
        write_bytes(tmp_path("crc.png"), d, n);
        expect_error(tmp_path("crc.png"), "bad CRC PNG");
        free(d);
    }
    truncate_copy(tmp_path("good.jpg"), tmp_path("trunc.jpg"), 0.5);
    expect_error(tmp_path("trunc.jpg"), "truncated JPEG");
    static const uint8_t junk_jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x02, 0x13, 0x37,
                                        0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42};
    write_bytes(tmp_path("junk.jpg"), junk_jpeg, sizeof(junk_jpeg));
    expect_error(tmp_path("junk.jpg"), "garbage JPEG");
    write_bytes(tmp_path("text.png"), "not an image at all", 19);
    expect_error(tmp_path("text.png"), "not an image");
    expect_error(tmp_path("missing.png"), "missing file");
    write_y4m(tmp_path("full.y4m"), "420jpeg", 16, 8, 2, 16 * 8 * 3 / 2);
    truncate_copy(tmp_path("full.y4m"), tmp_path("trunc.y4m"), 0.4);
    expect_error(tmp_path("trunc.y4m"), "truncated Y4M");
    write_bytes(tmp_path("nosize.y4m"), "YUV4MPEG2 F25:1 C420\nFRAME\n", 27);
    expect_error(tmp_path("nosize.y4m"), "Y4M no size");
    write_y4m(tmp_path("c422.y4m"), "422", 16, 8, 1, 16 * 8 * 2);
    expect_error(tmp_path("c422.y4m"), "Y4M C422");
    write_bytes(tmp_path("noframe.y4m"), "YUV4MPEG2 W2 H2 Cmono\nFRAMX\nabcd", 32);
    expect_error(tmp_path("noframe.y4m"), "Y4M bad FRAME");
    // A first frame that cannot be read makes the input unusable: refused at open (camclass
    // exits 2), not at the first read (a failure while running, exit 1).
    static const char *first_bad[] = {"trunc.y4m", "trunc.png", "trunc.jpg", "crc.png"};
    for (size_t i = 0; i < sizeof(first_bad) / sizeof(first_bad[0]); i++) {
        struct cc_error e = {{0}};
        struct cc_source_file *s = cc_source_file_open(tmp_path(first_bad[i]), false, &e);
        CHECKF(!s && strstr(e.msg, first_bad[i]), "%s: %s at open", first_bad[i],
               s ? "accepted" : e.msg);
        cc_source_file_destroy(s);
    }
    // A corrupt file inside a directory is skipped (one warning line, counted) and the files
    // after it are read (it ended the batch before); their frames keep their
    // files' names. A directory where nothing decodes is an error naming it.
    CHECK(mkdir(tmp_path("baddir"), 0700) == 0);
    write_png(tmp_path("baddir/1.png"), 16, 16, PNG_COLOR_TYPE_RGB, 8, px, 3);
    truncate_copy(tmp_path("good.png"), tmp_path("baddir/2.png"), 0.5);
    write_bytes(tmp_path("baddir/3.jpg"), "not a JPEG", 10);
    write_png(tmp_path("baddir/4.png"), 8, 8, PNG_COLOR_TYPE_RGB, 8, px, 3);
    struct cc_error err = {{0}};
    struct cc_source_file *src = cc_source_file_open(tmp_path("baddir"), false, &err);
    struct cc_frame f = {0};
    if (CHECKF(src != NULL, "baddir: %s", err.msg)) {
        CHECK(cc_source_file_read(src, &f, &err) == 1 && f.width == 16 &&
              strcmp(cc_source_file_frame_name(src, f.sequence), "1.png") == 0);
        int r = cc_source_file_read(src, &f, &err);
        CHECKF(r == 1 && f.width == 8 &&
                   strcmp(cc_source_file_frame_name(src, f.sequence), "4.png") == 0,
               "baddir: after 2 bad files, 4.png: %d %s", r, err.msg);
        CHECK(cc_source_file_read(src, &f, &err) == 0);
        CHECKF(cc_source_file_skipped(src) == 2, "skipped %d", cc_source_file_skipped(src));
    }
    cc_source_file_destroy(src);
    CHECK(mkdir(tmp_path("allbad"), 0700) == 0);
    truncate_copy(tmp_path("good.png"), tmp_path("allbad/2.png"), 0.5);
    write_bytes(tmp_path("allbad/3.jpg"), "not a JPEG", 10);
    for (int loop = 0; loop < 2; loop++) {
        src = cc_source_file_open(tmp_path("allbad"), loop, &err);
        CHECKF(!src && strstr(err.msg, "allbad: none of its 2 image files decodes"),
               "allbad loop=%d: %s", loop, src ? "accepted" : err.msg);
        cc_source_file_destroy(src);
    }
    free(f.data);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Y4M stream headers with a numeric field that is out of range or not a number: each is
 * refused at open with the field in the line, never read as some other number (W4294967360
 * was width 64 through a cast of strtol's long to int). Every file has a frame of 64x2 mono
 * bytes, so that a wrongly accepted header yields a frame. */
static void test_y4m_header_fields(void)
{
    printf("y4m header fields:\n");
    static const struct {
        const char *fields; // after "YUV4MPEG2 "
        const char *want;   // in the message
    } bad[] = {
        {"W4294967360 H2", "\"W4294967360\" is not a frame width from 1 to 16384"},
        {"W64 H4294967298", "\"H4294967298\" is not a frame height"},
        {"W-64 H2", "\"W-64\" is not a frame width"},
        {"W+64 H2", "\"W+64\" is not a frame width"},
        {"W0 H2", "\"W0\" is not a frame width"},
        {"W16385 H2", "\"W16385\" is not a frame width from 1 to 16384"},
        {"W64x H2", "\"W64x\" is not a frame width"},
        {"W H2", "\"W\" is not a frame width"},
        {"W9000 H9000", "9000x9000 pixels is more than camclass decodes"},
        {"W64 H2 F25:0", "\"F25:0\" is not a frame rate"},
        {"W64 H2 F-25:1", "\"F-25:1\" is not a frame rate"},
        {"W64 H2 F25", "\"F25\" is not a frame rate"},
        {"W64 H2 F4294967321:1", "\"F4294967321:1\" is not a frame rate"},
        {"W64 H2 F2000000:1", "\"F2000000:1\" is not a frame rate N:D"},
        {"W64 H2 F25:1x", "\"F25:1x\" is not a frame rate"},
        {"W64 H2 A1:0", "\"A1:0\" is not a pixel aspect ratio"},
        {"W64 H2 A4294967297:1", "\"A4294967297:1\" is not a pixel aspect ratio"},
        {"W64 H2 Asquare", "\"Asquare\" is not a pixel aspect ratio"},
    };
    uint8_t frame[64 * 2];
    memset(frame, 128, sizeof(frame));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char name[32], text[160];
        snprintf(name, sizeof(name), "hdr%zu.y4m", i);
        int n = snprintf(text, sizeof(text), "YUV4MPEG2 %s Cmono\nFRAME\n", bad[i].fields);
        const char *path = tmp_path(name);
        FILE *f = fopen(path, "wb");
        if (!CHECKF(f && fwrite(text, 1, (size_t)n, f) == (size_t)n &&
                        fwrite(frame, 1, sizeof(frame), f) == sizeof(frame) && fclose(f) == 0,
                    "cannot write %s", path))
            continue;
        struct cc_frame fr = {0};
        struct cc_error err = {{0}};
        struct cc_source_file *src = cc_source_file_open(path, false, &err);
        CHECKF(!src && strstr(err.msg, path) && strstr(err.msg, bad[i].want),
               "header \"%s\": %s, message \"%s\"", bad[i].fields, src ? "accepted" : "refused",
               err.msg);
        printf("  %-22s -> %s\n", bad[i].fields, err.msg);
        cc_source_file_destroy(src);
        free(fr.data);
    }
    // A header and FRAME line ending "\r\n" (written on Windows): C420, not "C420\r".
    static const char crlf[] = "YUV4MPEG2 W2 H2 F25:1 C420\r\nFRAME\r\n\x80\x80\x80\x80\x80\x80";
    write_bytes(tmp_path("crlf.y4m"), crlf, sizeof(crlf) - 1);
    struct cc_error crlf_err = {{0}};
    struct cc_frame crlf_frame = {0};
    int crlf_r = open_read(tmp_path("crlf.y4m"), false, &crlf_frame, &crlf_err);
    CHECKF(crlf_r == 1 && crlf_frame.width == 2 && crlf_frame.height == 2,
           "a y4m with \\r\\n line ends: %d %s", crlf_r, crlf_err.msg);
    free(crlf_frame.data);
    // A header and no frame: refused, not a run of 0 frames and exit 0.
    write_bytes(tmp_path("hdr_only.y4m"), "YUV4MPEG2 W2 H2 Cmono\n", 22);
    struct cc_error none_err = {{0}};
    struct cc_source_file *none = cc_source_file_open(tmp_path("hdr_only.y4m"), false, &none_err);
    CHECKF(!none && strstr(none_err.msg, "hdr_only.y4m: no frames"), "a header only: %s",
           none ? "accepted" : none_err.msg);
    cc_source_file_destroy(none);
    // The edges that are valid: the largest side, an unknown rate and aspect (0:0).
    static const char *good[] = {"W64 H2 F0:0 A0:0", "W64 H2 F30000:1001 A128:117",
                                 "W16384 H2 F1000000:1"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char text[160];
        int n = snprintf(text, sizeof(text), "YUV4MPEG2 %s Cmono\nFRAME\n", good[i]);
        size_t pixels = strstr(good[i], "W16384") ? 16384 * 2 : 64 * 2;
        char *file = calloc(1, (size_t)n + pixels);
        memcpy(file, text, (size_t)n);
        write_bytes(tmp_path("hdr_good.y4m"), file, (size_t)n + pixels);
        free(file);
        struct cc_error err = {{0}};
        struct cc_source_file *src = cc_source_file_open(tmp_path("hdr_good.y4m"), false, &err);
        CHECKF(src != NULL, "header \"%s\" refused: %s", good[i], err.msg);
        cc_source_file_destroy(src);
    }
}

/* Writes file src into the FIFO fifo from a child process (which waits for a reader); returns
 * its pid. The child ends when all is written or the reader has gone (SIGPIPE). */
static pid_t feed_fifo(const char *fifo, const char *src)
{
    size_t n = 0;
    uint8_t *data = tu_read_file(src, &n);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = fopen(fifo, "wb");
        _exit(f && data && fwrite(data, 1, n, f) == n && fclose(f) == 0 ? 0 : 1);
    }
    free(data);
    return pid;
}

/* Y4M through a FIFO: opened once, the bytes read to recognise the format are handed to the
 * reader (they were lost to a second open, which then waited for a writer forever), every
 * frame arrives. An image or loop on a pipe is refused at open. A 20 s alarm ends the test
 * if an open blocks. */
static void test_pipe(void)
{
    printf("pipes:\n");
    enum { W = 33, H = 17, FRAMES = 3 };
    const size_t n420 = W * H + 2 * 17 * 9;
    write_y4m(tmp_path("p.y4m"), NULL, W, H, FRAMES, n420);
    const char *fifo = tmp_path("p.fifo");
    if (!CHECK(mkfifo(fifo, 0600) == 0))
        return;
    alarm(20);
    pid_t pid = feed_fifo(fifo, tmp_path("p.y4m"));
    struct cc_error err = {{0}};
    struct cc_source_file *src = cc_source_file_open(fifo, false, &err);
    if (CHECKF(src != NULL, "y4m on a FIFO: %s", err.msg)) {
        CHECKF(cc_source_file_native_fps(src) == 25.0, "fps %g", cc_source_file_native_fps(src));
        struct cc_frame f = {0};
        int n = 0, r;
        while ((r = cc_source_file_read(src, &f, &err)) == 1) {
            CHECKF(f.width == W && f.height == H && f.data[0] == y4m_byte(0, n) &&
                       f.data[W - 1] == y4m_byte(W - 1, n),
                   "FIFO frame %d: %dx%d, bytes differ", n, f.width, f.height);
            n++;
        }
        CHECKF(r == 0 && n == FRAMES, "y4m on a FIFO: %d frames, then %d (%s)", n, r, err.msg);
        free(f.data);
    }
    cc_source_file_destroy(src);
    waitpid(pid, NULL, 0);

    static const struct {
        const char *file; // fed into the FIFO
        bool loop;
        const char *want;
    } bad[] = {
        {"p.y4m", true, "a pipe cannot be played again; drop --loop or save the stream to a file"},
        {"good.png", false, "an image is read from a file, not from a pipe"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pid = feed_fifo(fifo, tmp_path(bad[i].file));
        src = cc_source_file_open(fifo, bad[i].loop, &err);
        CHECKF(!src && strstr(err.msg, fifo) && strstr(err.msg, bad[i].want), "%s on a FIFO%s: %s",
               bad[i].file, bad[i].loop ? " with loop" : "", src ? "accepted" : err.msg);
        printf("  %-14s -> %s\n", bad[i].file, err.msg);
        cc_source_file_destroy(src);
        waitpid(pid, NULL, 0);
    }
    alarm(0);
    unlink(fifo);
}

/* Decompression bombs: a tiny file declaring a huge image is refused from its header, before
 * the decoder allocates for it, with the declared size and the limit in the line. The sizes lie
 * between the limit (40 M pixels) and the old one (268 M), which allocated first. */
static void test_image_limits(void)
{
    printf("image limits:\n");
    static const struct {
        const char *name;
        int kind; // 0 PNG header, 1 baseline JPEG, 2 progressive JPEG
        int w, h;
        const char *want; // in the message
    } cases[] = {
        {"bomb.png", 0, 8000, 6000, "8000x6000 pixels is more than camclass decodes"},
        {"wide.png", 0, 16385, 16, "16385x16 pixels"},
        {"huge.png", 0, 2000000, 2000000, "2000000x2000000 pixels"},
        {"bomb.jpg", 1, 8000, 6000, "8000x6000 pixels is more than camclass decodes"},
        {"bomb_prog.jpg", 2, 12000, 12000, "12000x12000 pixels is more than camclass decodes"},
        {"tall.jpg", 1, 16, 30000, "16x30000 pixels"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *path = tmp_path(cases[i].name);
        if (cases[i].kind == 0)
            write_png_header(path, cases[i].w, cases[i].h);
        else
            write_jpeg_declaring(path, cases[i].kind == 2, cases[i].w, cases[i].h);
        struct cc_frame f = {0};
        struct cc_error err = {{0}};
        double t0 = now_s();
        int r = open_read(path, false, &f, &err);
        double dt = now_s() - t0;
        CHECKF(r < 0 && strstr(err.msg, path) && strstr(err.msg, cases[i].want) &&
                   strstr(err.msg, "(40 M pixels, 16384 on a side); scale it down first"),
               "%s: r=%d, message \"%s\"", cases[i].name, r, err.msg);
        // 2 s: room for a loaded machine or a sanitizer; decoding the bombs took 13-15 s.
        CHECKF(f.capacity == 0 && dt < 2.0, "%s: %zu bytes allocated for the frame, %.3f s",
               cases[i].name, f.capacity, dt);
        printf("  %-14s -> %s\n", cases[i].name, err.msg);
        free(f.data);
    }
}

/* Takes every frame until the slot closes; returns how many, sequences must increase. */
static int drain(struct cc_frame_slot *slot, int consumer_ms, struct cc_error *err)
{
    int n = 0;
    int64_t last = -1;
    for (;;) {
        struct cc_frame *f = NULL;
        enum cc_slot_status st = cc_frame_slot_take(slot, 5000, &f, err);
        if (st == CC_SLOT_CLOSED)
            return n;
        if (!CHECKF(st == CC_SLOT_FRAME, "take timed out after %d frames", n))
            return n;
        CHECKF((int64_t)f->sequence > last, "sequence %llu after %lld",
               (unsigned long long)f->sequence, (long long)last);
        last = (int64_t)f->sequence;
        n++;
        cc_frame_slot_release(slot, f);
        if (consumer_ms) {
            struct timespec ts = {0, consumer_ms * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}

static void test_thread(void)
{
    write_y4m(tmp_path("t.y4m"), "420jpeg", 64, 48, 20, 64 * 48 * 3 / 2);
    struct cc_error err = {{0}};
    // fps 0: every frame delivered although the consumer is slow; end of stream closes.
    struct cc_frame_slot *slot = cc_frame_slot_create(1, &err);
    struct cc_source_file *src = cc_source_file_open(tmp_path("t.y4m"), false, &err);
    if (CHECKF(slot && src && cc_source_file_start(src, slot, 0, &err), "%s", err.msg)) {
        int n = drain(slot, 3, &err);
        struct cc_frame_slot_stats st = cc_frame_slot_get_stats(slot);
        CHECKF(n == 20 && st.dropped == 0 && err.msg[0] == 0,
               "fps 0: %d frames, %llu dropped, close message \"%s\"", n,
               (unsigned long long)st.dropped, err.msg);
    }
    cc_source_file_destroy(src);
    cc_frame_slot_destroy(slot);

    // fps 200: 20 frames take about 95 ms, never less. A consumer that a loaded machine delays
    // misses frames (the latest wins), so every frame is either taken or counted dropped, not
    // "15 taken"; the 10 s bound is for a producer that stalls.
    slot = cc_frame_slot_create(1, &err);
    src = cc_source_file_open(tmp_path("t.y4m"), false, &err);
    double t0 = now_s();
    if (CHECKF(slot && src && cc_source_file_start(src, slot, 200, &err), "%s", err.msg)) {
        int n = drain(slot, 0, &err);
        double dt = now_s() - t0;
        struct cc_frame_slot_stats st = cc_frame_slot_get_stats(slot);
        CHECKF(n >= 1 && st.put == 20 && st.taken == (uint64_t)n && st.dropped == 20 - st.taken &&
                   dt >= 0.085 && dt < 10.0,
               "fps 200: %d frames taken, %llu put, %llu dropped in %.3f s", n,
               (unsigned long long)st.put, (unsigned long long)st.dropped, dt);
    }
    cc_source_file_destroy(src);
    cc_frame_slot_destroy(slot);

    // An error in the stream closes the slot with the message naming the file.
    truncate_copy(tmp_path("t.y4m"), tmp_path("t_trunc.y4m"), 0.5);
    slot = cc_frame_slot_create(1, &err);
    src = cc_source_file_open(tmp_path("t_trunc.y4m"), false, &err);
    if (CHECKF(slot && src && cc_source_file_start(src, slot, 0, &err), "%s", err.msg)) {
        int n = drain(slot, 0, &err);
        CHECKF(n == 9 && strstr(err.msg, "t_trunc.y4m") && strstr(err.msg, "truncated"),
               "truncated stream: %d frames, message \"%s\"", n, err.msg);
    }
    cc_source_file_destroy(src);
    cc_frame_slot_destroy(slot);

    // A looping source at a low rate (a frame every 5 s) stops promptly when stopped: within
    // 2 s, room for a loaded machine, and well short of the 5 s it would sleep otherwise.
    slot = cc_frame_slot_create(1, &err);
    src = cc_source_file_open(tmp_path("t.y4m"), true, &err);
    if (CHECKF(slot && src && cc_source_file_start(src, slot, 0.2, &err), "%s", err.msg)) {
        struct cc_frame *f = NULL;
        CHECK(cc_frame_slot_take(slot, 5000, &f, &err) == CC_SLOT_FRAME);
        cc_frame_slot_release(slot, f);
        t0 = now_s();
        cc_source_file_stop(src);
        CHECKF(now_s() - t0 < 2.0, "stop took %.3f s", now_s() - t0);
    }
    cc_source_file_destroy(src);
    cc_frame_slot_destroy(slot);
}

int main(void)
{
    if (!tu_tmpdir(tmpdir, sizeof(tmpdir), "cc_sources"))
        return tu_exit_code();
    test_png();
    test_jpeg();
    test_cmyk_jpeg();
    test_directory();
    test_y4m();
    test_corrupt_files();
    test_image_limits();
    test_y4m_header_fields();
    test_pipe();
    test_thread();
    cc_source_file_destroy(NULL);
    tu_rmtree(tmpdir);
    return tu_exit_code();
}
