/* camclass fuzz target — image decoding (app/image/decode.c): the input goes through the
 * decoder table as the file source and /predict use it (cc_image_decode: PNG, JPEG, WebP, BMP
 * by the first bytes, or refused), and the header reader of /predict's decode budget
 * (cc_image_declared); anything that is not a PNG or JPEG also goes to those two decoders,
 * which must refuse it. One struct cc_image is reused across the decodes, as the file source
 * reuses it across files. The pixel limit (40 M) is the decoder's own: a tiny file declaring a
 * huge size must be refused before anything is allocated. */
#include <stddef.h>
#include <stdint.h>

#include "decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const struct cc_image *img, const struct cc_error *err)
{
    if (ok != !err->msg[0])
        __builtin_trap();
    if (ok) {
        if (img->width < 1 || img->height < 1 || (img->channels != 1 && img->channels != 3) ||
            (long long)img->width * img->height > CC_IMAGE_MAX_PIXELS ||
            (size_t)img->width * (size_t)img->height * (size_t)img->channels > img->capacity)
            __builtin_trap();
        // Touch the last pixel byte: ASan reports a buffer shorter than promised.
        volatile uint8_t last = img->pixels[(size_t)img->width * img->height * img->channels - 1];
        (void)last;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cc_image img = {0};
    struct cc_error err = {{0}};
    bool ok = cc_image_decode(data, size, "fuzz", &img, &err);
    check(ok, &img, &err);
    if (ok && !cc_image_format(data, size))
        __builtin_trap(); // decoded without a format
    err.msg[0] = 0;
    long long w, h;
    bool progressive;
    volatile bool declared = cc_image_declared(data, size, &w, &h, &progressive);
    (void)declared;
    bool png = cc_is_png(data, size), jpeg = cc_is_jpeg(data, size);
    if (png || jpeg) { // decoded above
        cc_image_finish(&img);
        return 0;
    }
    ok = cc_decode_png(data, size, "fuzz.png", &img, &err);
    check(ok, &img, &err);
    err.msg[0] = 0;
    ok = cc_decode_jpeg(data, size, "fuzz.jpg", &img, &err);
    check(ok, &img, &err);
    cc_image_finish(&img);
    return 0;
}
