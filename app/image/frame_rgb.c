/* camclass — frames as packed RGB rows (see frame_rgb.h). */
#include "frame_rgb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

bool cc_frame_rgb_prepare(struct cc_frame_rgb *c, const struct cc_frame *in, struct cc_frame *out,
                          const char *who, struct cc_error *err)
{
    struct cc_frame f = *in;
    if (in->format == CC_PIX_MJPEG) {
        char name[64];
        snprintf(name, sizeof(name), "MJPEG frame %llu", (unsigned long long)in->sequence);
        if (!in->data)
            return cc_error_set(err, "%s: %s has no data", who, name);
        if (!cc_decode_jpeg(in->data, in->size, name, &c->jpeg, err))
            return false;
        f = (struct cc_frame){.format = CC_PIX_RGB24,
                              .width = c->jpeg.width,
                              .height = c->jpeg.height,
                              .stride = c->jpeg.width * 3,
                              .data = c->jpeg.pixels,
                              .size = (size_t)c->jpeg.width * c->jpeg.height * 3,
                              .sequence = in->sequence};
    }
    if (!cc_frame_check(&f, who, err))
        return false;
    int pcap = f.width + 1; // YUYV/NV12 rows convert whole pairs
    if ((f.format == CC_PIX_YUYV || f.format == CC_PIX_NV12) && c->planar_cap < pcap) {
        uint8_t *p = realloc(c->planar, (size_t)pcap * 3);
        if (!p)
            return cc_error_set(err, "%s: out of memory for a %dx%d frame", who, f.width, f.height);
        c->planar = p;
        c->planar_cap = pcap;
    }
    *out = f;
    return true;
}

void cc_frame_rgb_row(struct cc_frame_rgb *c, const struct cc_frame *f, int y, uint8_t *dst)
{
    const uint8_t *row = f->data + (size_t)y * f->stride;
    int w = f->width;
    switch (f->format) {
    case CC_PIX_RGB24:
        memcpy(dst, row, (size_t)w * 3);
        return;
    case CC_PIX_BGR24:
        for (int x = 0; x < w; x++) {
            dst[3 * x] = row[3 * x + 2];
            dst[3 * x + 1] = row[3 * x + 1];
            dst[3 * x + 2] = row[3 * x];
        }
        return;
    case CC_PIX_GREY:
        for (int x = 0; x < w; x++)
            dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = row[x];
        return;
    default:
        break;
    }
    uint8_t *r = c->planar, *g = r + c->planar_cap, *b = g + c->planar_cap;
    if (f->format == CC_PIX_YUYV) {
        cc_yuyv_row_to_planar(row, 0, (w + 1) / 2, r, g, b);
    } else { // NV12
        const uint8_t *uv = f->data + (size_t)f->height * f->stride + (size_t)(y / 2) * f->stride;
        cc_nv12_row_to_planar(row, uv, 0, (w + 1) / 2, r, g, b);
    }
    for (int x = 0; x < w; x++) {
        dst[3 * x] = r[x];
        dst[3 * x + 1] = g[x];
        dst[3 * x + 2] = b[x];
    }
}

uint8_t *cc_frame_rgb_all(struct cc_frame_rgb *c, const struct cc_frame *f)
{
    uint8_t *rgb = malloc((size_t)f->width * f->height * 3);
    for (int y = 0; rgb && y < f->height; y++)
        cc_frame_rgb_row(c, f, y, rgb + (size_t)y * f->width * 3);
    return rgb;
}

void cc_frame_rgb_finish(struct cc_frame_rgb *c)
{
    cc_image_finish(&c->jpeg);
    free(c->planar);
    *c = (struct cc_frame_rgb){0};
}
