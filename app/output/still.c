/* camclass — --output PICTURE.jpg (see still.h). */
#include "still.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "jpeg_encode.h"
#include "overlay_offscreen.h"

#define QUALITY 90

struct cc_still {
    char *path; // owned
    int width, height;
    struct cc_overlay_offscreen *overlay;
    struct cc_frame frame;   // the last frame kept; data owned
    struct cc_result result; // its result; labels in labels
    struct cc_result_labels labels;
    bool have;
};

bool cc_still_is_picture(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    return dot && !strchr(dot, '/') && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

struct cc_still *cc_still_open(const struct cc_still_config *cfg, struct cc_error *err)
{
    struct cc_still *s = calloc(1, sizeof(*s));
    if (!s || !(s->path = strdup(cfg->path))) {
        free(s);
        cc_error_set(err, "--output: out of memory");
        return NULL;
    }
    s->width = cfg->width, s->height = cfg->height;
    if (!(s->overlay = cc_overlay_offscreen_create(cfg->overlay, cfg->width, cfg->height, err))) {
        cc_still_destroy(s);
        return NULL;
    }
    return s;
}

bool cc_still_keep(struct cc_still *s, const struct cc_result *r, const struct cc_frame *f)
{
    if (!cc_frame_copy(&s->frame, f))
        return false;
    s->result = *r;
    cc_result_keep_labels(&s->result, &s->labels);
    s->have = true;
    return true;
}

// Writes len bytes to a temporary file beside path (0644, as a recording), then renames it
// over path.
static bool write_file(const char *path, const uint8_t *bytes, size_t len, struct cc_error *err)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.partial-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return cc_error_set(err, "--output %s: %s", path, strerror(errno));
    bool ok = write(fd, bytes, len) == (ssize_t)len && fchmod(fd, 0644) == 0;
    int e = ok ? 0 : errno;
    if (close(fd) != 0 && ok)
        ok = false, e = errno;
    if (ok && rename(tmp, path) != 0)
        ok = false, e = errno;
    if (!ok) {
        unlink(tmp);
        return cc_error_set(err, "--output %s: %s", path, strerror(e));
    }
    return true;
}

bool cc_still_finish(struct cc_still *s, struct cc_error *err)
{
    if (!s->have)
        return cc_error_set(err, "--output %s: nothing was classified, so there is no picture",
                            s->path);
    size_t stride = (size_t)s->width * 3, size = 0;
    uint8_t *rgb = malloc(stride * s->height);
    if (!rgb)
        return cc_error_set(err, "--output %s: out of memory", s->path);
    uint8_t *jpeg = NULL;
    bool ok = cc_overlay_render(s->overlay, &s->frame, &s->result, rgb, (int)stride, err) &&
              ((jpeg = cc_jpeg_encode(rgb, s->width, s->height, (int)stride, QUALITY, &size)) ||
               cc_error_set(err, "--output %s: out of memory encoding the JPEG", s->path)) &&
              write_file(s->path, jpeg, size, err);
    free(jpeg);
    free(rgb);
    return ok;
}

void cc_still_destroy(struct cc_still *s)
{
    if (!s)
        return;
    cc_overlay_offscreen_destroy(s->overlay);
    free(s->frame.data);
    free(s->path);
    free(s);
}
