/* camclass — the region of interest (common/roi.h): what --roi, a config's "roi", ?roi= and
 * camclass-dataset.json accept and refuse, and the pixels a ROI is in a frame. */
#include <string.h>

#include "roi.h"
#include "testutil.h"

static void test_good(void)
{
    static const struct {
        const char *text;
        struct cc_roi roi;
    } good[] = {
        {"0.5,0.25,0.5,0.5", {CC_ROI_FRACTION, 0.5, 0.25, 0.5, 0.5}},
        {"0,0,1,1", {CC_ROI_FRACTION, 0, 0, 1, 1}},
        {"0.1,0.1,0.9,0.9", {CC_ROI_FRACTION, 0.1, 0.1, 0.9, 0.9}}, // to the far edges
        {".5,0.,.5,1", {CC_ROI_FRACTION, 0.5, 0, 0.5, 1}},
        {"320,120,200,200px", {CC_ROI_PIXELS, 320, 120, 200, 200}},
        {"0,0,1,1px", {CC_ROI_PIXELS, 0, 0, 1, 1}},
        {"none", {CC_ROI_NONE, 0, 0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct cc_roi r = {CC_ROI_PIXELS, 9, 9, 9, 9};
        struct cc_error err = {{0}};
        if (!CHECKF(cc_roi_parse(good[i].text, &r, &err), "\"%s\" refused: %s", good[i].text,
                    err.msg))
            continue;
        CHECKF(r.kind == good[i].roi.kind &&
                   (r.kind == CC_ROI_NONE || (r.x == good[i].roi.x && r.y == good[i].roi.y &&
                                              r.w == good[i].roi.w && r.h == good[i].roi.h)),
               "\"%s\" read as kind %d %g,%g,%g,%g", good[i].text, r.kind, r.x, r.y, r.w, r.h);
        char text[96];
        cc_roi_format(&r, text, sizeof(text));
        struct cc_roi again = {0};
        CHECKF(cc_roi_parse(text, &again, &err) && !memcmp(&again, &r, sizeof(r)),
               "\"%s\" formats as \"%s\", which does not read back the same", good[i].text, text);
    }
}

static void test_bad(void)
{
    static const char *const bad[] = {
        "",
        "0.5,0.25,0.5",
        "0.5,0.25,0.5,0.5,0.1",
        "0.5,0.25,0.6,0.5",
        "0.5,0.6,0.5,0.5",
        "0,0,0,0.5",
        "0,0,0.5,0",
        "1.5,0,0.5,0.5",
        "-0.1,0,0.5,0.5",
        "0.5, 0.25,0.5,0.5",
        " 0.5,0.25,0.5,0.5",
        "0.5,0.25,0.5,0.5 ",
        "1e-1,0,0.5,0.5",
        "nan,0,0.5,0.5",
        "inf,0,0.5,0.5",
        "0x1,0,0.5,0.5",
        "0.5,,0.5,0.5",
        "0.5,0.25,0.5,0.5,",
        "1..5,0,0.5,0.5",
        "320,120,200,0px",
        "320,120,0,200px",
        "320.5,120,200,200px",
        "320,120,200,200 px",
        "320,120,200,200PX",
        "-1,0,5,5px",
        "px",
        "9999999,0,5,5px",
        "NONE",
        "0.5;0.25;0.5;0.5",
        "a,b,c,d",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_roi r = {CC_ROI_FRACTION, 0.125, 0.125, 0.5, 0.5}, before = r;
        struct cc_error err = {{0}};
        CHECKF(!cc_roi_parse(bad[i], &r, &err), "\"%s\" accepted", bad[i]);
        CHECKF(!memcmp(&r, &before, sizeof(r)), "\"%s\" changed the ROI it was refused for",
               bad[i]);
        CHECKF(err.msg[0] && !strchr(err.msg, '\n'), "\"%s\": no one-line reason (\"%s\")", bad[i],
               err.msg);
    }
    // The message says how a good value looks.
    struct cc_roi r;
    struct cc_error err = {{0}};
    cc_roi_parse("0.5,0.25", &r, &err);
    CHECKF(strstr(err.msg, "X,Y,W,H") && strstr(err.msg, "px") && strstr(err.msg, "none"),
           "message \"%s\" does not show the forms", err.msg);
}

static void test_rect(void)
{
    struct cc_roi r;
    struct cc_roi_rect px;
    struct cc_error err = {{0}};
    // Fractions: round(f * size) at each edge.
    CHECK(cc_roi_parse("0.5,0.25,0.5,0.5", &r, &err) && cc_roi_rect(&r, 640, 480, &px, &err));
    CHECKF(px.x == 320 && px.y == 120 && px.w == 320 && px.h == 240, "%d,%d,%d,%d", px.x, px.y,
           px.w, px.h);
    CHECK(cc_roi_parse("0.25,0.5,0.5,0.5", &r, &err) && cc_roi_rect(&r, 333, 101, &px, &err));
    CHECKF(px.x == 83 && px.y == 51 && px.w == 167 && px.h == 50, "%d,%d,%d,%d", px.x, px.y, px.w,
           px.h);
    CHECK(cc_roi_parse("0.1,0.1,0.9,0.9", &r, &err) && cc_roi_rect(&r, 10, 10, &px, &err) &&
          px.x + px.w == 10 && px.y + px.h == 10);
    // Less than a pixel of a small frame.
    CHECK(cc_roi_parse("0.5,0.5,0.001,0.5", &r, &err) && !cc_roi_rect(&r, 100, 100, &px, &err));
    // Pixels: as given, and refused outside the frame, naming the frame's size.
    CHECK(cc_roi_parse("320,120,200,200px", &r, &err) && cc_roi_rect(&r, 640, 480, &px, &err));
    CHECK(px.x == 320 && px.y == 120 && px.w == 200 && px.h == 200);
    CHECK(cc_roi_rect(&r, 520, 320, &px, &err)); // exactly to the edge
    err.msg[0] = 0;
    CHECK(!cc_roi_rect(&r, 519, 480, &px, &err) && strstr(err.msg, "519x480"));
    CHECK(!cc_roi_rect(&r, 640, 319, &px, &err) && strstr(err.msg, "outside"));
    // None: the whole frame.
    CHECK(cc_roi_parse("none", &r, &err) && cc_roi_rect(&r, 33, 44, &px, &err) && px.x == 0 &&
          px.y == 0 && px.w == 33 && px.h == 44);
    // Pixels to fractions and back give the same pixels.
    CHECK(cc_roi_parse("320,120,200,200px", &r, &err));
    struct cc_roi f = cc_roi_to_fractions(&r, 640, 480);
    CHECK(f.kind == CC_ROI_FRACTION && cc_roi_check_fractions(&f, &err) &&
          cc_roi_rect(&f, 640, 480, &px, &err) && px.x == 320 && px.y == 120 && px.w == 200 &&
          px.h == 200);
}

int main(void)
{
    test_good();
    test_bad();
    test_rect();
    return tu_exit_code();
}
