/* camclass — the pictures of GET /stream (app/output/mjpeg.c) without a server: nothing drawn
 * while nobody watches, each picture a whole JPEG of the configured size showing the newest
 * frame offered, a picture handed out once per viewer (never the same one twice), one a viewer
 * still holds intact after newer ones replaced it, nothing after the last viewer went, and
 * nothing at all once stopped; no drawer made before the first viewer (its memory is what
 * /stream costs a camera nobody watches), a font that cannot be read refused at create,
 * and one gone since refused to the first viewer. test_serve.py reads the multipart stream of a
 * running camclass; these rules sit below what its viewer sees.
 *
 * Offers are rate-limited by the clock (max_fps): 1e6 here, so that no check depends on the
 * machine's speed. A "no picture" check waits 300 ms for one that must not come; the positive
 * waits are bounds for a hang only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "mjpeg.h"
#include "testutil.h"

enum { W = 320, H = 180, FW = 64, FH = 48 };
static const int NONE_MS = 300, HANG_MS = 30000;

/* A solid FW x FH RGB24 frame of colour rgb. */
static struct cc_frame solid_frame(uint8_t *px, const uint8_t rgb[3], uint64_t seq)
{
    for (int i = 0; i < FW * FH; i++)
        memcpy(px + 3 * i, rgb, 3);
    return (struct cc_frame){.format = CC_PIX_RGB24,
                             .width = FW,
                             .height = FH,
                             .stride = FW * 3,
                             .data = px,
                             .size = FW * FH * 3,
                             .capacity = FW * FH * 3,
                             .sequence = seq};
}

static void offer(struct cc_mjpeg *m, const uint8_t rgb[3], uint64_t seq)
{
    static uint8_t px[FW * FH * 3];
    struct cc_frame f = solid_frame(px, rgb, seq);
    struct cc_result r = {.seq = seq, .n_top = 1, .latency_ms = 5, .backend = "cpu"};
    r.top[0].index = 0;
    r.top[0].score = 0.9f;
    r.top[0].label = "solid";
    cc_mjpeg_offer(m, &r, &f);
}

/* Decodes j: true when it is one whole JPEG (SOI ... EOI) of W x H RGB pixels; *rgb_mid the
 * colour at (W/4, H/2), inside the frame's part of the picture. */
static bool decode(const struct cc_jpeg *j, uint8_t rgb_mid[3])
{
    if (!CHECKF(j->size > 4 && j->data[0] == 0xff && j->data[1] == 0xd8 &&
                    j->data[j->size - 2] == 0xff && j->data[j->size - 1] == 0xd9,
                "a whole JPEG: SOI first, EOI last (%zu bytes)", j->size))
        return false;
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, j->data, (unsigned long)j->size);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = JCS_RGB;
    jpeg_start_decompress(&d);
    bool ok = CHECKF(d.output_width == W && d.output_height == H && d.output_components == 3,
                     "picture %ux%u x%d, want %dx%d x3", d.output_width, d.output_height,
                     d.output_components, W, H);
    uint8_t row[W * 3];
    while (ok && d.output_scanline < d.output_height) {
        JSAMPROW p = row;
        unsigned y = d.output_scanline;
        jpeg_read_scanlines(&d, &p, 1);
        if (y == H / 2)
            memcpy(rgb_mid, row + 3 * (W / 4), 3);
    }
    if (ok)
        jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return ok;
}

/* The colour c is near want (JPEG's rounding and chroma subsampling). */
static bool near(const uint8_t c[3], const uint8_t want[3])
{
    for (int i = 0; i < 3; i++)
        if (abs(c[i] - want[i]) > 40)
            return false;
    return true;
}

/* A font that cannot be read: refused at create, with the font's one line (a bad --font is
 * said at startup, not to a viewer). */
static void bad_font(void)
{
    struct cc_overlay_config oc = {.font_path = "/nonexistent/camclass-font.ttf", .classes = 1};
    struct cc_error err = {0};
    memset(err.msg, 0xA5, sizeof(err.msg) - 1);
    struct cc_mjpeg *m = cc_mjpeg_create(&oc, W, H, 1e6, &err);
    CHECKF(!m && strstr(err.msg, "/nonexistent/camclass-font.ttf") &&
               strstr(err.msg, "fonts-dejavu-core"),
           "cc_mjpeg_create with a missing font: %s", m ? "(made)" : err.msg);
    cc_mjpeg_destroy(m);
}

/* A font gone after the start: the stream started, its first viewer gets the font's one line
 * and is not counted (an offer is not drawn), and nothing is made. */
static void font_gone(void)
{
    static const uint8_t green[3] = {20, 230, 20};
    char dir[256], font[300];
    if (!CHECK(tu_tmpdir(dir, sizeof(dir), "mjpeg-font")))
        return;
    snprintf(font, sizeof(font), "%s/font.ttf", dir);
    FILE *in = fopen(CC_OVERLAY_DEFAULT_FONT, "rb"), *out = fopen(font, "wb");
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        fwrite(buf, 1, n, out);
    bool copied = in && out && !ferror(in);
    if (in)
        fclose(in);
    if (out)
        copied &= fclose(out) == 0;
    struct cc_overlay_config oc = {.font_path = font, .classes = 1};
    struct cc_error err = {0};
    struct cc_mjpeg *m = copied ? cc_mjpeg_create(&oc, W, H, 1e6, &err) : NULL;
    tu_rmtree(dir);
    if (!CHECKF(m != NULL, "cc_mjpeg_create with a copied font: %s", err.msg))
        return;
    memset(err.msg, 0xA5, sizeof(err.msg) - 1);
    bool came = cc_mjpeg_viewer_comes(m, &err);
    CHECKF(!came && strstr(err.msg, font) && strstr(err.msg, "fonts-dejavu-core") &&
               !cc_mjpeg_drawer_made(m),
           "a font gone at the first viewer: %s", came ? "(came)" : err.msg);
    uint64_t seen = 0;
    offer(m, green, 1);
    struct cc_jpeg *j = cc_mjpeg_next(m, &seen, NONE_MS);
    CHECKF(!j && cc_mjpeg_pictures(m) == 0, "the refused viewer does not count");
    cc_jpeg_release(m, j);
    cc_mjpeg_destroy(m);
}

int main(void)
{
    static const uint8_t red[3] = {230, 20, 20}, blue[3] = {20, 20, 230};
    struct cc_overlay_config oc = {.model_name = "test", .backend_name = "cpu", .classes = 1};
    struct cc_error err = {0};
    struct cc_mjpeg *m = cc_mjpeg_create(&oc, W, H, 1e6, &err);
    if (!CHECKF(m != NULL, "cc_mjpeg_create: %s", err.msg))
        return tu_exit_code();

    uint64_t seen = 0;
    offer(m, red, 1);
    struct cc_jpeg *j = cc_mjpeg_next(m, &seen, NONE_MS);
    CHECKF(!j && cc_mjpeg_pictures(m) == 0, "no viewer: nothing drawn (%llu pictures)",
           (unsigned long long)cc_mjpeg_pictures(m));
    CHECKF(!cc_mjpeg_drawer_made(m), "no viewer yet: no drawer made");
    cc_jpeg_release(m, j);

    CHECKF(cc_mjpeg_viewer_comes(m, &err), "the first viewer: %s", err.msg);
    CHECKF(cc_mjpeg_drawer_made(m), "the first viewer made the drawer");
    offer(m, red, 2);
    struct cc_jpeg *first = cc_mjpeg_next(m, &seen, HANG_MS);
    uint8_t mid[3] = {0};
    if (CHECKF(first != NULL, "a viewer: the offered frame drawn") && decode(first, mid))
        CHECKF(near(mid, red), "the first picture shows the red frame (%d,%d,%d)", mid[0], mid[1],
               mid[2]);
    CHECKF(seen == 1, "seen: %llu after the first picture", (unsigned long long)seen);
    j = cc_mjpeg_next(m, &seen, NONE_MS);
    CHECKF(!j, "no new offer: the same picture is not handed out again");
    cc_jpeg_release(m, j);

    // A newer picture replaces the first; the viewer still holding the first keeps it whole.
    size_t first_size = first ? first->size : 0;
    uint8_t *copy = first ? malloc(first_size) : NULL;
    if (copy)
        memcpy(copy, first->data, first_size);
    offer(m, blue, 3);
    struct cc_jpeg *second = cc_mjpeg_next(m, &seen, HANG_MS);
    if (CHECKF(second != NULL && second != first, "a second offer: a new picture") &&
        decode(second, mid))
        CHECKF(near(mid, blue), "the newest picture shows the blue frame (%d,%d,%d)", mid[0],
               mid[1], mid[2]);
    CHECKF(!first || (first->size == first_size && !memcmp(first->data, copy, first_size)),
           "a held picture is unchanged after a newer one replaced it");
    free(copy);
    cc_jpeg_release(m, first);
    cc_jpeg_release(m, second);

    // The last viewer goes: offers are no longer drawn (the drawer stays for the next).
    cc_mjpeg_viewer_goes(m);
    offer(m, red, 4);
    j = cc_mjpeg_next(m, &seen, NONE_MS);
    CHECKF(!j && cc_mjpeg_pictures(m) == 2, "no viewer left: nothing drawn (%llu pictures)",
           (unsigned long long)cc_mjpeg_pictures(m));
    cc_jpeg_release(m, j);

    CHECK(cc_mjpeg_drawer_made(m));

    // Stopped: a viewer that has seen nothing yet gets nothing, at once.
    CHECK(cc_mjpeg_viewer_comes(m, &err));
    cc_mjpeg_stop(m);
    uint64_t fresh = 0;
    j = cc_mjpeg_next(m, &fresh, HANG_MS);
    CHECKF(!j, "stopped: next returns nothing");
    cc_jpeg_release(m, j);
    cc_mjpeg_destroy(m);
    bad_font();
    font_gone();
    return tu_exit_code();
}
