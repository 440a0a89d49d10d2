/* camclass — the pipeline's mailbox (app/pipeline.c) without a camera: a folder of images as
 * the source, the self-test model on the reference backend. The mailbox holds the newest result
 * only (once the source ended: the last frame's, once; nothing queued behind it), with
 * keep_frames the frame it was computed from; on_result sees every result in order; an
 * on_result that returns false ends the run CLOSED with that result still published; a
 * request (cc_pipeline_classify) reaches neither on_result nor the mailbox; results carry a
 * class activation map when, and only when, asked for. No check depends
 * on timing: each waits for a state, bounded only against a hang.
 *
 *   test_pipeline MODEL IMAGES_DIR */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cam.h"
#include "pipeline.h"
#include "testutil.h"

enum { HANG_MS = 120000 };

struct seen {
    int n;         // results on_result saw
    uint64_t last; // the seq of the newest
    bool in_order; // every seq one more than the one before
    int close_at;  // on_result returns false for this result (counting from 1); 0 = never
    int n_cam;     // results that carried a class activation map
    bool cam_ok;   // each map was for the top class, 7 x 7, in 0..1 with 0 and 1 in it, over
                   // the whole frame
};

static bool on_result(void *ctx, const struct cc_result *r, const struct cc_frame *f)
{
    (void)f;
    struct seen *s = ctx;
    if (s->n > 0 && r->seq != s->last + 1)
        s->in_order = false;
    s->last = r->seq;
    if (r->cam.w > 0) {
        float lo = 1, hi = 0;
        for (int i = 0; i < r->cam.w * r->cam.h; i++)
            lo = r->cam.v[i] < lo ? r->cam.v[i] : lo, hi = r->cam.v[i] > hi ? r->cam.v[i] : hi;
        s->cam_ok &=
            r->cam.w == 7 && r->cam.h == 7 && r->cam.index == r->top[0].index && lo == 0 && hi == 1 &&
                     r->cam.area[0] == 0 && r->cam.area[1] == 0 && fabsf(r->cam.area[2] - 1) < 1e-6f &&
                     fabsf(r->cam.area[3] - 1) < 1e-6f; // squash, no ROI: the whole frame
        s->n_cam++;
    }
    return ++s->n != s->close_at;
}

static struct cc_pipeline *start(struct cc_engine *e, const char *images, struct seen *s,
                                 struct cc_source_file **src)
{
    struct cc_error err = {0};
    *src = cc_source_file_open(images, false, &err);
    if (!CHECKF(*src != NULL, "open %s: %s", images, err.msg))
        return NULL;
    *s = (struct seen){.in_order = true, .close_at = s->close_at, .cam_ok = true};
    struct cc_pipeline_config cfg = {.engine = e,
                                     .file = *src,
                                     .top_k = 3,
                                     .unknown_threshold = 0,
                                     .keep_frames = true,
                                     .on_result = on_result,
                                     .ctx = s};
    struct cc_pipeline *p = cc_pipeline_create(&cfg, &err);
    if (!CHECKF(p && cc_pipeline_start(p, &err), "pipeline: %s", err.msg)) {
        cc_pipeline_destroy(p);
        cc_source_file_destroy(*src);
        return NULL;
    }
    return p;
}

/* Waits until the pipeline is no longer running; its state. */
static enum cc_pipeline_state wait_end(struct cc_pipeline *p)
{
    enum cc_pipeline_state st = CC_PIPELINE_RUNNING;
    uint64_t seen = 0;
    struct cc_result r;
    for (int i = 0; i < HANG_MS / 100 && st == CC_PIPELINE_RUNNING; i++) {
        st = cc_pipeline_wait(p, seen, 100);
        cc_pipeline_latest(p, &seen, &r, NULL);
    }
    return st;
}

/* The whole folder: every frame to on_result in order; the mailbox then holds the last one,
 * with its frame, once. A request meanwhile is answered and counted nowhere. */
static void to_the_end(struct cc_engine *e, const char *images, int n_images)
{
    struct seen s = {0};
    struct cc_source_file *src;
    struct cc_pipeline *p = start(e, images, &s, &src);
    if (!p)
        return;
    // A request: the model's input, zeros.
    float *input = calloc(cc_engine_input_count(e), sizeof(float));
    struct cc_result req;
    struct cc_error err = {0};
    CHECKF(input && cc_pipeline_classify(p, input, 2, &req, &err) && req.n_top == 2,
           "a request answered with its 2 classes: %s", err.msg);
    free(input);
    enum cc_pipeline_state st = wait_end(p);
    CHECKF(st == CC_PIPELINE_ENDED, "the folder's end: state %d, want ENDED", (int)st);
    CHECKF(s.n == n_images && s.in_order && s.last == (uint64_t)n_images - 1,
           "on_result saw %d results (want %d), in order %d, the last seq %llu", s.n, n_images,
           s.in_order, (unsigned long long)s.last);
    uint64_t seen = 0;
    struct cc_result r;
    struct cc_frame f = {0};
    bool got = cc_pipeline_latest(p, &seen, &r, &f);
    CHECKF(got && r.seq == (uint64_t)n_images - 1 && seen == (uint64_t)n_images,
           "the mailbox: the last result (seq %llu, generation %llu), want seq %d generation %d",
           (unsigned long long)r.seq, (unsigned long long)seen, n_images - 1, n_images);
    CHECKF(got && f.data && f.width > 0 && f.height > 0 && f.sequence == r.seq,
           "keep_frames: the result's own frame (%dx%d, seq %llu)", f.width, f.height,
           (unsigned long long)f.sequence);
    CHECKF(!cc_pipeline_latest(p, &seen, &r, NULL), "nothing queued behind the newest");
    struct cc_pipeline_totals t = cc_pipeline_get_totals(p);
    CHECKF(t.results == (uint64_t)n_images, "the totals count %llu results, not the request",
           (unsigned long long)t.results);
    free(f.data);
    cc_pipeline_destroy(p);
    cc_source_file_destroy(src);
}

/* on_result false at the 3rd result: CLOSED, and that result is the mailbox's newest. */
static void closed_by_output(struct cc_engine *e, const char *images)
{
    struct seen s = {.close_at = 3};
    struct cc_source_file *src;
    struct cc_pipeline *p = start(e, images, &s, &src);
    if (!p)
        return;
    enum cc_pipeline_state st = wait_end(p);
    CHECKF(st == CC_PIPELINE_CLOSED, "on_result false: state %d, want CLOSED", (int)st);
    uint64_t seen = 0;
    struct cc_result r;
    bool got = cc_pipeline_latest(p, &seen, &r, NULL);
    CHECKF(s.n == 3 && got && r.seq == 2 && seen == 3,
           "the closing result published: %d results, mailbox seq %llu generation %llu", s.n,
           (unsigned long long)r.seq, (unsigned long long)seen);
    cc_pipeline_destroy(p);
    cc_source_file_destroy(src);
}

/* Class activation maps (cc_pipeline_want_cam): none unless asked; asked, every result carries
 * its top class's; an engine that keeps no feature map says why, in one line. */
static void cam_when_asked(const char *model, const char *images, int n_images)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(model, &err);
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_REF;
    struct cc_engine *e = m ? cc_cam_engine_create(m, &opt, &err) : NULL;
    if (!CHECKF(e != NULL, "engine with its map on %s: %s", model, err.msg))
        return;
    for (int asked = 0; asked < 2; asked++) {
        struct seen s = {0};
        struct cc_source_file *src;
        struct cc_pipeline *p = start(e, images, &s, &src);
        if (!p)
            continue;
        CHECKF(cc_pipeline_want_cam(p, asked, &err), "want_cam: %s", err.msg);
        wait_end(p);
        // The request may race the first frame: all but that one when asked.
        CHECKF(asked ? s.n_cam >= n_images - 1 && s.cam_ok : s.n_cam == 0,
               "asked %d: %d of %d results carried a map (right: %d)", asked, s.n_cam, s.n,
               s.cam_ok);
        cc_pipeline_destroy(p);
        cc_source_file_destroy(src);
    }
    cc_engine_destroy(e);
    m = cc_bundle_load(model, &err);
    e = m ? cc_engine_create_from_model(m, &opt, &err) : NULL; // no tap
    struct cc_pipeline_config cfg = {.engine = e, .top_k = 1};
    struct cc_pipeline *p = e ? cc_pipeline_create(&cfg, &err) : NULL;
    if (CHECKF(p != NULL, "pipeline without a map: %s", err.msg))
        CHECKF(!cc_pipeline_want_cam(p, true, &err) &&
                   strstr(err.msg, "no class activation map for this model (") &&
                   !strchr(err.msg, '\n'),
               "without a tap: %s", err.msg);
    cc_pipeline_destroy(p);
    cc_engine_destroy(e);
}

/* The PNG files in dir: the frames the file source gives. */
static int count_images(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && strcmp(e->d_name + len - 4, ".png") == 0;
    }
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_pipeline MODEL IMAGES_DIR\n");
        return 2;
    }
    int n_images = count_images(argv[2]);
    if (!CHECKF(n_images > 3, "%s holds %d PNG images, want more than 3", argv[2], n_images))
        return tu_exit_code();
    struct cc_engine_options opt = cc_engine_options_default();
    opt.backend = CC_BACKEND_REF;
    struct cc_error err = {0};
    struct cc_engine *e = cc_engine_create(argv[1], &opt, &err);
    if (!CHECKF(e != NULL, "engine on %s: %s", argv[1], err.msg))
        return tu_exit_code();
    to_the_end(e, argv[2], n_images);
    closed_by_output(e, argv[2]);
    cc_engine_destroy(e);
    cam_when_asked(argv[1], argv[2], n_images);
    return tu_exit_code();
}
