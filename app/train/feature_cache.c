/* camclass-train — feature vectors kept between runs (see feature_cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_file.h"
#include "feature_cache.h"
#include "thumbnail.h"

#define HEADER "camclass features 2\n" // then dim, n (int32), the thumbnail, n views

void cc_feature_cache_init(struct cc_feature_cache *c, const char *dir_override,
                           const char *base_sha256, int dim, uint64_t seed, bool flip,
                           const struct cc_roi *roi)
{
    *c = (struct cc_feature_cache){.dim = dim, .seed = seed, .flip = flip};
    if (roi && roi->kind != CC_ROI_NONE)
        cc_roi_format(roi, c->roi, sizeof(c->roi));
    if (dir_override && !dir_override[0])
        return;
    char sub[128];
    snprintf(sub, sizeof(sub), "train/%s", base_sha256);
    if (!dir_override) {
        c->dir = cc_cache_file_default(sub);
        return;
    }
    size_t n = strlen(dir_override) + strlen(base_sha256) + 2;
    if ((c->dir = malloc(n)))
        snprintf(c->dir, n, "%s/%s", dir_override, base_sha256);
}

static void path_of(const struct cc_feature_cache *c, const char *sha256, char *out, size_t size)
{
    snprintf(out, size, "%s/%s-s%llu-f%d%s%s.feat", c->dir, sha256, (unsigned long long)c->seed,
             c->flip, c->roi[0] ? "-roi" : "", c->roi);
}

int cc_feature_cache_get(const struct cc_feature_cache *c, const char *sha256, float *thumb,
                         float *out, int max_views)
{
    char path[4096], header[sizeof(HEADER)] = "";
    if (!c->dir)
        return 0;
    path_of(c, sha256, path, sizeof(path));
    FILE *f = fopen(path, "rb");
    int32_t dim = 0, n = 0;
    bool ok = f && fread(header, 1, sizeof(HEADER) - 1, f) == sizeof(HEADER) - 1 &&
              !strcmp(header, HEADER) && fread(&dim, sizeof(dim), 1, f) == 1 &&
              fread(&n, sizeof(n), 1, f) == 1 && dim == c->dim && n >= 1 &&
              fread(thumb, sizeof(float), CC_THUMB_CELLS, f) == CC_THUMB_CELLS;
    if (ok && n > max_views)
        n = max_views;
    ok = ok && fread(out, sizeof(float) * (size_t)dim, (size_t)n, f) == (size_t)n;
    if (f)
        fclose(f);
    return ok ? n : 0;
}

void cc_feature_cache_put(const struct cc_feature_cache *c, const char *sha256, const float *thumb,
                          const float *views, int n_views)
{
    if (!c->dir || n_views < 1)
        return;
    size_t rows = (size_t)n_views * (size_t)c->dim * sizeof(float);
    size_t thumb_size = CC_THUMB_CELLS * sizeof(float);
    size_t size = sizeof(HEADER) - 1 + 2 * sizeof(int32_t) + thumb_size + rows;
    char *buf = malloc(size), *p = buf, path[4096];
    if (!buf)
        return;
    int32_t head[2] = {c->dim, n_views};
    memcpy(p, HEADER, sizeof(HEADER) - 1);
    memcpy(p += sizeof(HEADER) - 1, head, sizeof(head));
    memcpy(p += sizeof(head), thumb, thumb_size);
    memcpy(p + thumb_size, views, rows);
    path_of(c, sha256, path, sizeof(path));
    struct cc_error ignored = {0};
    cc_cache_file_write(path, buf, size, &ignored);
    free(buf);
}

void cc_feature_cache_finish(struct cc_feature_cache *c)
{
    free(c->dir);
    c->dir = NULL;
}
