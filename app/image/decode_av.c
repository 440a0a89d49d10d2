/* camclass — GIF and TIFF pictures through libavcodec (see decode_av.h). */
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>

#include "decode_av.h"

/* ---------------------------------------------------------------------------------------- */
/* What the headers declare                                                                 */
/* ---------------------------------------------------------------------------------------- */

bool cc_is_gif(const uint8_t *data, size_t size)
{
    return size >= 13 && (memcmp(data, "GIF87a", 6) == 0 || memcmp(data, "GIF89a", 6) == 0);
}

bool cc_is_tiff(const uint8_t *data, size_t size)
{
    return size >= 8 && (memcmp(data, "II*\0", 4) == 0 || memcmp(data, "MM\0*", 4) == 0);
}

/* A TIFF's n-byte unsigned number at off, in its byte order (II: little-endian). */
static uint32_t tiff_uint(const uint8_t *data, size_t off, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint32_t)data[off + (data[0] == 'I' ? (size_t)i : (size_t)(n - 1 - i))] << (8 * i);
    return v;
}

bool cc_gif_declared(const uint8_t *data, size_t size, long long *w, long long *h)
{
    if (!cc_is_gif(data, size))
        return false;
    *w = data[6] | data[7] << 8, *h = data[8] | data[9] << 8; // the logical screen
    return true;
}

bool cc_tiff_declared(const uint8_t *data, size_t size, long long *w, long long *h)
{
    if (!cc_is_tiff(data, size))
        return false;
    size_t ifd = tiff_uint(data, 4, 4);
    if (ifd > size - 2)
        return false;
    size_t n = tiff_uint(data, ifd, 2);
    *w = *h = -1;
    for (size_t i = 0; i < n && ifd + 2 + 12 * (i + 1) <= size; i++) {
        size_t e = ifd + 2 + 12 * i;
        uint32_t tag = tiff_uint(data, e, 2), type = tiff_uint(data, e + 2, 2);
        if ((tag == 256 || tag == 257) && (type == 3 || type == 4))
            *(tag == 256 ? w : h) = tiff_uint(data, e + 8, type == 3 ? 2 : 4);
    }
    return *w >= 0 && *h >= 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* The first frame libavcodec's decoder for id makes of the whole file as one packet. */
static AVFrame *first_frame(enum AVCodecID id, const uint8_t *data, size_t size, char *why,
                            size_t why_size)
{
    const AVCodec *codec = avcodec_find_decoder(id);
    AVCodecContext *ctx = codec ? avcodec_alloc_context3(codec) : NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    uint8_t *buf = av_malloc(size + AV_INPUT_BUFFER_PADDING_SIZE); // the padding it reads
    int r = AVERROR(ENOMEM);
    if (ctx && pkt && frame && buf) {
        memcpy(buf, data, size);
        memset(buf + size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
        ctx->thread_count = 1;
        if ((r = av_packet_from_data(pkt, buf, (int)size)) == 0) {
            buf = NULL; // the packet's now
            if ((r = avcodec_open2(ctx, codec, NULL)) == 0 &&
                (r = avcodec_send_packet(ctx, pkt)) == 0 &&
                (r = avcodec_receive_frame(ctx, frame)) == AVERROR(EAGAIN) &&
                (r = avcodec_send_packet(ctx, NULL)) == 0) // flush: a decoder that waits
                r = avcodec_receive_frame(ctx, frame);
        }
    }
    if (r < 0) {
        av_strerror(r, why, why_size);
        av_frame_free(&frame);
    }
    av_free(buf);
    av_packet_free(&pkt);
    avcodec_free_context(&ctx);
    return frame;
}

/* frame converted to RGB rows in img (libswscale). */
static bool frame_to_rgb(const AVFrame *frame, const char *name, struct cc_image *img,
                         struct cc_error *err)
{
    if (!cc_image_reserve(img, frame->width, frame->height, 3, name, err))
        return false;
    struct SwsContext *sws =
        sws_getContext(frame->width, frame->height, frame->format, frame->width, frame->height,
                       AV_PIX_FMT_RGB24, SWS_POINT, NULL, NULL, NULL);
    if (!sws)
        return cc_error_set(err, "%s: its pixel format (%s) cannot be converted to RGB", name,
                            av_get_pix_fmt_name(frame->format));
    uint8_t *dst[4] = {img->pixels};
    int stride[4] = {frame->width * 3};
    sws_scale(sws, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, dst,
              stride);
    sws_freeContext(sws);
    return true;
}

/* Decodes a file of a format whose declared size was checked (format: its name in messages). */
static bool decode_av(enum AVCodecID id, const char *format, const uint8_t *data, size_t size,
                      const char *name, struct cc_image *img, struct cc_error *err)
{
    char why[128] = "";
    if (size > (size_t)INT32_MAX - AV_INPUT_BUFFER_PADDING_SIZE)
        return cc_error_set(err, "%s: a %s over 2 GB; convert it to PNG", name, format);
    AVFrame *frame = first_frame(id, data, size, why, sizeof(why));
    if (!frame)
        return cc_error_set(err, "%s: corrupt or truncated %s (libavcodec: %s); replace the file",
                            name, format, why);
    bool ok = cc_image_check_size(frame->width, frame->height, name, err) &&
              frame_to_rgb(frame, name, img, err);
    av_frame_free(&frame);
    return ok;
}

bool cc_decode_gif(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                   struct cc_error *err)
{
    long long w, h;
    cc_gif_declared(data, size, &w, &h);
    return cc_image_check_size(w, h, name, err) &&
           decode_av(AV_CODEC_ID_GIF, "GIF", data, size, name, img, err);
}

bool cc_decode_tiff(const uint8_t *data, size_t size, const char *name, struct cc_image *img,
                    struct cc_error *err)
{
    long long w, h;
    if (!cc_tiff_declared(data, size, &w, &h))
        return cc_error_set(err,
                            "%s: corrupt or truncated TIFF (no image width and height in its "
                            "first directory); replace the file",
                            name);
    return cc_image_check_size(w, h, name, err) &&
           decode_av(AV_CODEC_ID_TIFF, "TIFF", data, size, name, img, err);
}
