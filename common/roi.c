/* camclass — a region of interest (see roi.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roi.h"

#define ROI_FORMS                                                                                  \
    "X,Y,W,H as fractions of the frame (0.5,0.25,0.5,0.5), pixels with px (320,120,200,200px), "   \
    "or none"
#define MAX_PIXELS 1048576.0 // a bound far past any frame, so that pixel sums fit an int

/* The four numbers of s (without a px suffix: n characters), strictly: digits with at most
 * one '.', separated by single commas, nothing else. */
static bool four_numbers(const char *s, size_t n, bool whole, double v[4])
{
    size_t i = 0;
    for (int k = 0; k < 4; k++) {
        if (k > 0 && (i >= n || s[i++] != ','))
            return false;
        size_t start = i;
        int dots = 0, digits = 0;
        for (; i < n && s[i] != ','; i++) {
            if (s[i] == '.' && !whole)
                dots++;
            else if (s[i] >= '0' && s[i] <= '9')
                digits++;
            else
                return false;
        }
        if (!digits || dots > 1 || i - start > 32)
            return false;
        char num[40];
        snprintf(num, sizeof(num), "%.*s", (int)(i - start), s + start);
        v[k] = strtod(num, NULL);
    }
    return i == n;
}

bool cc_roi_check_fractions(const struct cc_roi *roi, struct cc_error *err)
{
    const double eps = 1e-9; // 0.1 + 0.9 is a hair above 1 in binary
    double v[4] = {roi->x, roi->y, roi->w, roi->h};
    for (int k = 0; k < 4; k++)
        if (!isfinite(v[k]) || v[k] < 0 || v[k] > 1)
            return cc_error_set(err, "ROI fractions must lie in [0, 1]; %g does not", v[k]);
    if (!(roi->w > 0) || !(roi->h > 0))
        return cc_error_set(err, "ROI width and height must be above 0");
    if (roi->x + roi->w > 1 + eps || roi->y + roi->h > 1 + eps)
        return cc_error_set(err,
                            "ROI %g,%g,%g,%g reaches outside the frame (X+W and Y+H must be at "
                            "most 1)",
                            roi->x, roi->y, roi->w, roi->h);
    return true;
}

bool cc_roi_parse(const char *s, struct cc_roi *roi, struct cc_error *err)
{
    if (strcmp(s, "none") == 0) {
        *roi = (struct cc_roi){.kind = CC_ROI_NONE};
        return true;
    }
    size_t n = strlen(s);
    bool px = n >= 2 && strcmp(s + n - 2, "px") == 0;
    double v[4];
    if (!four_numbers(s, px ? n - 2 : n, px, v))
        return cc_error_set(err, "takes " ROI_FORMS ", not \"%.64s\"", s);
    struct cc_roi r = {px ? CC_ROI_PIXELS : CC_ROI_FRACTION, v[0], v[1], v[2], v[3]};
    struct cc_error why = {0};
    if (px) {
        for (int k = 0; k < 4; k++)
            if (v[k] > MAX_PIXELS)
                return cc_error_set(err, "\"%.64s\": %.0f pixels is past any frame", s, v[k]);
        if (r.w < 1 || r.h < 1)
            return cc_error_set(err, "\"%.64s\": width and height must be at least 1 pixel", s);
    } else if (!cc_roi_check_fractions(&r, &why)) {
        return cc_error_set(err, "\"%.64s\": %s; give " ROI_FORMS, s, why.msg);
    }
    *roi = r;
    return true;
}

/* round(f·size) as a pixel edge in [0, size]. */
static int edge(double f, int size)
{
    double e = floor(f * size + 0.5);
    return e < 0 ? 0 : e > size ? size : (int)e;
}

bool cc_roi_rect(const struct cc_roi *roi, int frame_w, int frame_h, struct cc_roi_rect *r,
                 struct cc_error *err)
{
    char text[96];
    switch (roi->kind) {
    case CC_ROI_NONE:
        *r = (struct cc_roi_rect){0, 0, frame_w, frame_h};
        return true;
    case CC_ROI_PIXELS:
        *r = (struct cc_roi_rect){(int)roi->x, (int)roi->y, (int)roi->w, (int)roi->h};
        if (r->x + r->w > frame_w || r->y + r->h > frame_h) {
            cc_roi_format(roi, text, sizeof(text));
            return cc_error_set(err,
                                "--roi %s reaches outside the %dx%d frame (to %d,%d); give a "
                                "rectangle inside it, or fractions of the frame",
                                text, frame_w, frame_h, r->x + r->w, r->y + r->h);
        }
        return true;
    case CC_ROI_FRACTION:
        break;
    }
    int x0 = edge(roi->x, frame_w), x1 = edge(roi->x + roi->w, frame_w);
    int y0 = edge(roi->y, frame_h), y1 = edge(roi->y + roi->h, frame_h);
    *r = (struct cc_roi_rect){x0, y0, x1 - x0, y1 - y0};
    if (r->w < 1 || r->h < 1) {
        cc_roi_format(roi, text, sizeof(text));
        return cc_error_set(err,
                            "--roi %s is less than a pixel of the %dx%d frame; give a larger "
                            "region",
                            text, frame_w, frame_h);
    }
    return true;
}

struct cc_roi cc_roi_to_fractions(const struct cc_roi *roi, int frame_w, int frame_h)
{
    if (roi->kind != CC_ROI_PIXELS || frame_w <= 0 || frame_h <= 0)
        return *roi;
    return (struct cc_roi){CC_ROI_FRACTION, roi->x / frame_w, roi->y / frame_h, roi->w / frame_w,
                           roi->h / frame_h};
}

void cc_roi_format(const struct cc_roi *roi, char *buf, size_t size)
{
    if (roi->kind == CC_ROI_NONE)
        snprintf(buf, size, "none");
    else if (roi->kind == CC_ROI_PIXELS)
        snprintf(buf, size, "%.0f,%.0f,%.0f,%.0fpx", roi->x, roi->y, roi->w, roi->h);
    else
        snprintf(buf, size, "%.9g,%.9g,%.9g,%.9g", roi->x, roi->y, roi->w, roi->h);
}
