/* camclass — source → slot → inference thread → on_result / mailbox (see pipeline.h). */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "pipeline_internal.h"

/* ------------------------------------------------------------------------------------------
 * Create / destroy
 */

/* The shared engine's round (engine_turns.h): a frame waits in the slot for this pipeline. */
static bool slot_fresh(void *ctx)
{
    struct cc_pipeline *p = ctx;
    if (!p->slot)
        return false;
    struct cc_frame_slot_stats st = cc_frame_slot_get_stats(p->slot);
    return st.put > st.taken + st.dropped;
}

/* Sets the window's wish (on: 0 or 1) or the timed one's (until_ns: >= 0); false with err when
 * the model has no map. */
static bool ask_cam(struct cc_pipeline *p, int on, int64_t until_ns, struct cc_error *err)
{
    pthread_mutex_lock(&p->lock);
    bool have = p->cam.weight != NULL;
    if (on >= 0)
        p->want_cam = on;
    if (until_ns > p->want_cam_until_ns)
        p->want_cam_until_ns = until_ns;
    if (!have)
        cc_error_set(err, "no class activation map for this model (%s)", p->cam_why.msg);
    pthread_mutex_unlock(&p->lock);
    return have;
}

bool cc_pipeline_want_cam(struct cc_pipeline *p, bool on, struct cc_error *err)
{
    return ask_cam(p, on, -1, err);
}

bool cc_pipeline_want_cam_until(struct cc_pipeline *p, int64_t until_ns, struct cc_error *err)
{
    return ask_cam(p, -1, until_ns, err);
}

/* r's class activation map of its answer, when asked for and there is one (inference thread;
 * the engine has just run on frame f, preprocessed by spec). */
static void fill_cam(struct cc_pipeline *p, struct cc_result *r, const struct cc_frame *f,
                     const struct cc_input_spec *spec)
{
    pthread_mutex_lock(&p->lock);
    bool want = (p->want_cam || cc_now_ns() < p->want_cam_until_ns) && p->cam.weight;
    pthread_mutex_unlock(&p->lock);
    const struct cc_cam *cam = &p->cam;
    struct cc_error err = {0};
    struct cc_preprocess_geometry g;
    if (!want || r->n_top < 1 || cam->h * cam->w > CC_RESULT_CAM_MAX ||
        !cc_preprocess_geometry(f->width, f->height, spec, p->in_w, p->in_h, &g, NULL) ||
        !cc_engine_tap_read(p->engine, p->fmap, &err))
        return;
    cc_cam_compute(cam, p->fmap, r->top[0].index, r->cam.v);
    r->cam.w = cam->w, r->cam.h = cam->h, r->cam.index = r->top[0].index;
    // The output window of the (virtual) resized ROI, back in frame pixels, as fractions.
    double sx = (double)g.src.w / g.resized_w, sy = (double)g.src.h / g.resized_h;
    r->cam.area[0] = (float)((g.src.x + g.crop_x * sx) / f->width);
    r->cam.area[1] = (float)((g.src.y + g.crop_y * sy) / f->height);
    r->cam.area[2] = (float)(g.out_w * sx / f->width);
    r->cam.area[3] = (float)(g.out_h * sy / f->height);
}

struct cc_pipeline *cc_pipeline_create(const struct cc_pipeline_config *cfg, struct cc_error *err)
{
    if (!cfg->engine || (cfg->camera && cfg->file) || cfg->top_k < 1 ||
        cfg->top_k > CC_RESULT_MAX_TOP) {
        cc_error_set(err, "pipeline: needs an engine, at most one source and top_k in 1..%d",
                     CC_RESULT_MAX_TOP);
        return NULL;
    }
    struct cc_pipeline *p = calloc(1, sizeof(*p));
    if (!p) {
        cc_error_set(err, "out of memory creating the pipeline");
        return NULL;
    }
    p->cfg = *cfg;
    p->orient.orient = cfg->orient;
    pthread_mutex_init(&p->lock, NULL);
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&p->model_lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    cc_cond_init_monotonic(&p->cond);
    cc_cond_init_monotonic(&p->req_done);

    if (cfg->turns && (p->lane = cc_engine_turns_join(cfg->turns, slot_fresh, p)) < 0) {
        cc_error_set(err, "out of memory creating the pipeline");
        goto error;
    }
    p->top = malloc((size_t)cfg->top_k * sizeof(struct cc_topk));
    if (!p->top || !cc_pipeline_use_engine(p, cfg->engine, err))
        goto error;
    if (!(p->pp = cc_preprocess_create(err)) || !(p->slot = cc_frame_slot_create(1, err)))
        goto error;
    struct cc_health_config hc = cc_health_defaults();
    if (cfg->camera_health && !(p->health = cc_health_create(&hc, err)))
        goto error;
    return p;
error:
    cc_pipeline_destroy(p);
    return NULL;
}

void cc_pipeline_destroy(struct cc_pipeline *p)
{
    if (!p)
        return;
    cc_pipeline_stop(p);
    cc_frame_slot_destroy(p->slot);
    cc_preprocess_destroy(p->pp);
    cc_orient_finish(&p->orient);
    cc_health_destroy(p->health);
    free(p->luma);
    cc_cam_finish(&p->cam);
    free(p->fmap);
    free(p->input);
    free(p->scores);
    free(p->top);
    free(p->latest_frame.data);
    cc_series_free(&p->s_dequeue);
    cc_series_free(&p->s_preprocess);
    cc_series_free(&p->s_inference);
    cc_series_free(&p->s_latency);
    pthread_cond_destroy(&p->cond);
    pthread_cond_destroy(&p->req_done);
    pthread_mutex_destroy(&p->lock);
    pthread_rwlock_destroy(&p->model_lock);
    free(p);
}

/* ------------------------------------------------------------------------------------------
 * The inference thread
 */

/* camera_fps and inference_fps over the last FPS_WINDOW results. */
static void update_fps(struct cc_pipeline *p, int64_t t, struct cc_result *r)
{
    struct cc_frame_slot_stats st = cc_frame_slot_get_stats(p->slot);
    p->fps_ring[p->fps_n % FPS_WINDOW] = (struct fps_sample){t, st.put};
    p->fps_n++;
    r->dropped = st.dropped;
    uint64_t n = p->fps_n < FPS_WINDOW ? p->fps_n : FPS_WINDOW;
    const struct fps_sample *old = &p->fps_ring[(p->fps_n - n) % FPS_WINDOW];
    double dt = (double)(t - old->t_ns) / 1e9;
    if (n < 2 || dt <= 0)
        return;
    r->inference_fps = (double)(n - 1) / dt;
    r->camera_fps = (double)(st.put - old->put) / dt;
}

/* Classifies one frame into r. False with err on an engine failure (fatal). */
static bool classify(struct cc_pipeline *p, const struct cc_frame *f, int64_t t_take,
                     struct cc_result *r, bool *bad_frame, struct cc_error *err)
{
    *bad_frame = false;
    struct cc_input_spec spec = cc_pipeline_input_spec(p, p->model);
    struct cc_roi_rect rect;
    if (!cc_roi_rect(&spec.roi, f->width, f->height, &rect, err)) {
        pthread_mutex_lock(&p->lock);
        p->usage_error = true; // a pixel ROI outside this frame: the user's to fix
        pthread_mutex_unlock(&p->lock);
        return false;
    }
    if (!cc_preprocess(p->pp, f, &spec, p->in_w, p->in_h, p->input, err)) {
        *bad_frame = true;
        return false;
    }
    int64_t t_pp = cc_now_ns();
    if (!cc_pipeline_run_engine(p, p->input, err))
        return false;
    int64_t t_run = cc_now_ns();
    *r = (struct cc_result){
        .seq = f->sequence,
        .backend = cc_engine_backend_name(p->engine),
        .file = p->cfg.file ? cc_source_file_frame_name(p->cfg.file, f->sequence) : NULL,
        .capture_ns = f->timestamp_ns,
        .result_ns = t_run,
        .latency_ms = cc_pipeline_ms_between(f->timestamp_ns, t_run),
        .dequeue_ms = cc_pipeline_ms_between(f->timestamp_ns, t_take),
        .preprocess_ms = cc_pipeline_ms_between(t_take, t_pp),
        .inference_ms = cc_pipeline_ms_between(t_pp, t_run),
        .roi = spec.roi,
    };
    cc_pipeline_fill_top(p, p->cfg.top_k, p->top, r);
    fill_cam(p, r, f, &spec);
    update_fps(p, t_run, r);
    return true;
}

/* The camera health checks on the tensor just classified (still in p->input), into r->health.
 * Out of memory for the luma picture skips the checks of this frame. */
static void check_health(struct cc_pipeline *p, const struct cc_frame *f, struct cc_result *r)
{
    size_t n = (size_t)p->in_w * p->in_h;
    if (n > p->luma_cap) {
        uint8_t *l = realloc(p->luma, n);
        if (!l)
            return;
        p->luma = l, p->luma_cap = n;
    }
    const struct cc_input_spec *in = &p->model->input;
    if (atomic_exchange(&p->new_reference, false))
        cc_health_reset_reference(p->health);
    cc_health_luma_from_tensor(p->input, p->in_w, p->in_h, in->mean, in->std,
                               in->color == CC_COLOR_BGR, p->luma);
    struct cc_health_event ev[CC_HEALTH_COUNT];
    struct cc_health_stats st;
    cc_health_update(p->health, p->luma, p->in_w, p->in_h, p->in_w, f->timestamp_ns, ev, &st);
    struct cc_result_health *h = &r->health;
    *h = (struct cc_result_health){
        .checked = true,
        .mean = (float)st.mean,
        .std = (float)st.std,
        .sharpness = st.baseline > 0 ? (float)(st.laplacian / st.baseline) : 0,
        .similarity = (float)st.similarity,
    };
    for (int k = 0; k < CC_HEALTH_COUNT; k++)
        h->active |= cc_health_active(p->health, k) ? 1u << k : 0;
}

bool cc_pipeline_reset_health_reference(struct cc_pipeline *p)
{
    if (!p->health)
        return false;
    atomic_store(&p->new_reference, true); // the next frame's checks take it (check_health)
    return true;
}

static void publish(struct cc_pipeline *p, const struct cc_result *r, const struct cc_frame *f)
{
    pthread_mutex_lock(&p->lock);
    p->latest = *r;
    if (p->cfg.keep_frames && !cc_frame_copy(&p->latest_frame, f))
        p->latest_frame.size = 0; // out of memory: show no frame rather than a stale one
    p->generation++;
    if (!p->results)
        p->first_result_ns = r->result_ns;
    p->last_result_ns = r->result_ns;
    p->results++;
    p->latency_sum_ms += r->latency_ms;
    p->mean_latency_ms = p->latency_sum_ms / (double)p->results;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static bool stop_requested(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    bool stop = p->stop;
    pthread_mutex_unlock(&p->lock);
    return stop;
}

static bool has_failed(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    bool failed = p->state == CC_PIPELINE_FAILED;
    pthread_mutex_unlock(&p->lock);
    return failed;
}

/* A frame the orientation or the preprocessing refused: counted, and told once. */
static void count_bad_frame(struct cc_pipeline *p, const struct cc_error *err)
{
    pthread_mutex_lock(&p->lock);
    uint64_t n = ++p->bad_frames;
    pthread_mutex_unlock(&p->lock);
    if (n == 1)
        fprintf(stderr, "camclass: skipping a bad frame: %s\n", err->msg);
}

/* Hands a classified frame (f as taken, g as turned) to the checks, the profile, the caller
 * and the readers. False when on_result asks to stop. */
static bool deliver(struct cc_pipeline *p, struct cc_result *r, const struct cc_frame *f,
                    const struct cc_frame *g)
{
    if (p->health)
        check_health(p, g, r);
    if (p->cfg.profile) {
        cc_series_add(&p->s_dequeue, r->dequeue_ms);
        cc_series_add(&p->s_preprocess, r->preprocess_ms);
        cc_series_add(&p->s_inference, r->inference_ms);
        cc_series_add(&p->s_latency, r->latency_ms);
    }
    bool more = !p->cfg.on_result || p->cfg.on_result(p->cfg.ctx, r, f);
    if (p->cfg.on_frame)
        p->cfg.on_frame(p->cfg.ctx, r, g);
    publish(p, r, g);
    return more;
}

/* The thread's last acts: waiting requests get the reason, the engine's round lets go. */
static void leave(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    char why[sizeof(p->error)];
    snprintf(why, sizeof(why), "%s",
             p->state == CC_PIPELINE_FAILED ? p->error : "camclass is stopping");
    pthread_mutex_unlock(&p->lock);
    cc_pipeline_close_requests(p, why);
    if (p->cfg.turns) // the others' round no longer waits for this camera
        cc_engine_turns_leave(p->cfg.turns, p->lane);
}

static void *inference_main(void *arg)
{
    struct cc_pipeline *p = arg;
    while (!stop_requested(p)) {
        cc_pipeline_take_swap(p);
        // Fair sharing of the engine: one waiting request, then one frame (when one waits);
        // with more requests waiting the take below only looks, it does not wait.
        bool more_requests = cc_pipeline_serve_request(p);
        if (has_failed(p))
            break;
        struct cc_frame *f = NULL;
        struct cc_error err = {0};
        enum cc_slot_status st =
            cc_frame_slot_take(p->slot, more_requests ? 0 : TAKE_TIMEOUT_MS, &f, &err);
        if (st == CC_SLOT_TIMEOUT)
            continue;
        if (st == CC_SLOT_CLOSED) {
            // Closed by stop (state stays RUNNING until stop sets it), the source's end, or its
            // error.
            if (!stop_requested(p))
                cc_pipeline_finish_stream(p, err.msg[0] ? CC_PIPELINE_FAILED : CC_PIPELINE_ENDED,
                                          err.msg[0] ? err.msg : NULL);
            break;
        }
        int64_t t_take = cc_now_ns();
        cc_pipeline_hold_turn(p); // a fresh frame: this camera's place in the shared engine's round
        struct cc_result r;
        bool bad = true;          // a frame the orientation cannot turn is a bad frame too
        const struct cc_frame *g; // f turned (cfg.orient): what everything below sees
        if (!cc_orient_apply(&p->orient, f, &g, &err) || !classify(p, g, t_take, &r, &bad, &err)) {
            cc_pipeline_drop_turn(p); // when the frame did not reach the engine
            cc_frame_slot_release(p->slot, f);
            if (bad) {
                count_bad_frame(p, &err);
                continue;
            }
            cc_pipeline_finish_stream(p, CC_PIPELINE_FAILED, err.msg);
            break;
        }
        bool more = deliver(p, &r, f, g);
        cc_frame_slot_release(p->slot, f);
        if (!more) {
            cc_pipeline_finish_stream(p, CC_PIPELINE_CLOSED, NULL);
            break;
        }
    }
    leave(p);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Control (main thread)
 */

bool cc_pipeline_start(struct cc_pipeline *p, struct cc_error *err)
{
    p->start_ns = cc_now_ns();
    pthread_mutex_lock(&p->lock); // cc_pipeline_classify reads thread_running
    int e = pthread_create(&p->thread, NULL, inference_main, p);
    p->thread_running = e == 0;
    pthread_mutex_unlock(&p->lock);
    if (e)
        return cc_error_set(err, "pthread_create (inference thread): %s", strerror(e));
    if (!p->cfg.camera && !p->cfg.file)
        return true; // requests only
    bool ok = p->cfg.camera ? cc_capture_start(p->cfg.camera, p->slot, err)
                            : cc_source_file_start(p->cfg.file, p->slot, p->cfg.file_fps, err);
    if (!ok) {
        cc_pipeline_stop(p);
        return false;
    }
    p->source_running = true;
    return true;
}

void cc_pipeline_ask_stop(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_mutex_unlock(&p->lock);
    cc_frame_slot_kick(p->slot); // an idle inference thread waits in take
}

void cc_pipeline_stop(struct cc_pipeline *p)
{
    if (!p->thread_running && !p->source_running)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_mutex_unlock(&p->lock);
    // The inference thread first: it finishes the frame it holds (and its on_result) and exits;
    // the slot stays open meanwhile so that the source does not see a closed slot as an error.
    if (p->thread_running)
        pthread_join(p->thread, NULL);
    pthread_mutex_lock(&p->lock);
    p->thread_running = false;
    pthread_mutex_unlock(&p->lock);
    cc_frame_slot_close(p->slot, NULL);
    if (p->source_running) {
        if (p->cfg.camera)
            cc_capture_stop(p->cfg.camera);
        else
            cc_source_file_stop(p->cfg.file);
    }
    p->source_running = false;
    p->stop_ns = cc_now_ns();
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

enum cc_pipeline_state cc_pipeline_wait(struct cc_pipeline *p, uint64_t seen, int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000)
        deadline.tv_sec++, deadline.tv_nsec -= 1000000000;
    pthread_mutex_lock(&p->lock);
    while (p->state == CC_PIPELINE_RUNNING && p->generation <= seen && !p->stop)
        if (pthread_cond_timedwait(&p->cond, &p->lock, &deadline) == ETIMEDOUT)
            break;
    enum cc_pipeline_state s = p->state;
    pthread_mutex_unlock(&p->lock);
    return s;
}

bool cc_pipeline_latest(struct cc_pipeline *p, uint64_t *seen, struct cc_result *r,
                        struct cc_frame *frame)
{
    bool fresh = false;
    pthread_mutex_lock(&p->lock);
    if (p->generation > *seen) {
        fresh = true;
        *seen = p->generation;
        *r = p->latest;
        if (frame && p->cfg.keep_frames && p->latest_frame.size &&
            !cc_frame_copy(frame, &p->latest_frame))
            frame->size = 0;
    }
    pthread_mutex_unlock(&p->lock);
    return fresh;
}

const char *cc_pipeline_error(struct cc_pipeline *p)
{
    return p->error;
}

bool cc_pipeline_usage_error(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    bool u = p->usage_error;
    pthread_mutex_unlock(&p->lock);
    return u;
}

struct cc_input_spec cc_pipeline_input_spec(const struct cc_pipeline *p, const struct cc_model *m)
{
    struct cc_input_spec spec = m->input;
    if (p->cfg.roi) // set at create, never changed: no lock
        spec.roi = *p->cfg.roi;
    return spec;
}

struct cc_pipeline_totals cc_pipeline_get_totals(struct cc_pipeline *p)
{
    struct cc_frame_slot_stats st = cc_frame_slot_get_stats(p->slot);
    struct cc_pipeline_totals t = {.frames = st.put};
    pthread_mutex_lock(&p->lock);
    t.results = p->results;
    t.dropped = p->results ? p->latest.dropped : 0; // as the log's summary: at the last result
    t.bad_frames = p->bad_frames;
    t.mean_latency_ms = p->mean_latency_ms;
    t.duration_s = (double)(p->last_result_ns - p->first_result_ns) / 1e9;
    pthread_mutex_unlock(&p->lock);
    t.fps = t.results > 1 && t.duration_s > 0 ? (double)(t.results - 1) / t.duration_s : 0;
    int64_t end = p->stop_ns ? p->stop_ns : cc_now_ns();
    t.elapsed_s = p->start_ns ? (double)(end - p->start_ns) / 1e9 : 0;
    return t;
}

struct cc_pipeline_profile cc_pipeline_get_profile(struct cc_pipeline *p)
{
    return (struct cc_pipeline_profile){&p->s_dequeue, &p->s_preprocess, &p->s_inference,
                                        &p->s_latency};
}
