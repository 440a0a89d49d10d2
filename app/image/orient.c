/* camclass — frames turned as the camera is mounted (see orient.h). */
#include "orient.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

bool cc_orient_identity(const struct cc_orient *o)
{
    return o->rotation == 0 && !o->hflip && !o->vflip;
}

bool cc_orient_rotation_valid(long degrees)
{
    return degrees == 0 || degrees == 90 || degrees == 180 || degrees == 270;
}

/* Where source pixel (x, y) of a w x h frame lands in the turned frame: flips first, then the
 * clockwise rotation. One source row at a time: *x0, *y0 the landing place of (0, y) and
 * *dx, *dy the step of the destination per source pixel to the right. */
static void landing(const struct cc_orient *o, int w, int h, int y, int *x0, int *y0, int *dx,
                    int *dy)
{
    int fy = o->vflip ? h - 1 - y : y;
    int fx = o->hflip ? w - 1 : 0, sx = o->hflip ? -1 : 1; // flipped x of source x = 0, step
    switch (o->rotation) {
    case 90: // (fx, fy) -> (h - 1 - fy, fx)
        *x0 = h - 1 - fy, *y0 = fx, *dx = 0, *dy = sx;
        return;
    case 180: // -> (w - 1 - fx, h - 1 - fy)
        *x0 = w - 1 - fx, *y0 = h - 1 - fy, *dx = -sx, *dy = 0;
        return;
    case 270: // -> (fy, w - 1 - fx)
        *x0 = fy, *y0 = w - 1 - fx, *dx = 0, *dy = -sx;
        return;
    default:
        *x0 = fx, *y0 = fy, *dx = sx, *dy = 0;
        return;
    }
}

static bool reserve(struct cc_orienter *o, int w, int h, struct cc_error *err)
{
    size_t need = (size_t)w * h * 3;
    if (o->row_cap < w * 3) {
        uint8_t *r = realloc(o->row, (size_t)w * 3);
        if (!r)
            return cc_error_set(err, "orientation: out of memory for a %dx%d frame", w, h);
        o->row = r, o->row_cap = w * 3;
    }
    if (o->out.capacity < need) {
        uint8_t *d = realloc(o->out.data, need);
        if (!d)
            return cc_error_set(err, "orientation: out of memory for a %dx%d frame", w, h);
        o->out.data = d, o->out.capacity = need;
    }
    return true;
}

bool cc_orient_apply(struct cc_orienter *o, const struct cc_frame *in, const struct cc_frame **out,
                     struct cc_error *err)
{
    if (cc_orient_identity(&o->orient)) {
        *out = in;
        return true;
    }
    struct cc_frame f;
    if (!cc_frame_rgb_prepare(&o->conv, in, &f, "orientation", err))
        return false;
    int w = f.width, h = f.height;
    if (!reserve(o, w, h, err))
        return false;
    bool swap = o->orient.rotation == 90 || o->orient.rotation == 270;
    int ow = swap ? h : w, oh = swap ? w : h;
    for (int y = 0; y < h; y++) {
        cc_frame_rgb_row(&o->conv, &f, y, o->row);
        int x0, y0, dx, dy;
        landing(&o->orient, w, h, y, &x0, &y0, &dx, &dy);
        // Indices, not a pointer stepped backwards past the buffer's start.
        ptrdiff_t at = ((ptrdiff_t)y0 * ow + x0) * 3, step = ((ptrdiff_t)dy * ow + dx) * 3;
        uint8_t *d = o->out.data;
        const uint8_t *s = o->row;
        for (int x = 0; x < w; x++, s += 3, at += step)
            d[at] = s[0], d[at + 1] = s[1], d[at + 2] = s[2];
    }
    o->out.format = CC_PIX_RGB24;
    o->out.width = ow, o->out.height = oh, o->out.stride = ow * 3;
    o->out.size = (size_t)ow * oh * 3;
    o->out.sequence = in->sequence;
    o->out.timestamp_ns = in->timestamp_ns;
    *out = &o->out;
    return true;
}

void cc_orient_finish(struct cc_orienter *o)
{
    cc_frame_rgb_finish(&o->conv);
    free(o->row);
    free(o->out.data);
    *o = (struct cc_orienter){0};
}
