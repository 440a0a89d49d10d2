/* camclass — what other threads ask of a pipeline's inference thread (pipeline.h): a
 * classification of their tensor (cc_pipeline_classify, POST /predict) and a switch to another
 * engine (cc_pipeline_swap, a model reload), each waiting on the caller's stack until that thread
 * has done it between two frames. */
#include <stdlib.h>

#include "clock.h"
#include "pipeline_internal.h"

/* ------------------------------------------------------------------------------------------
 * Requests from other threads (cc_pipeline_classify)
 */

/* Inference thread: runs the oldest waiting request, if any. Returns whether more wait. An
 * engine failure fails the request and, as for a frame, the pipeline. */
bool cc_pipeline_serve_request(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    struct request *q = p->req_head;
    if (q && !(p->req_head = q->next))
        p->req_tail = NULL;
    pthread_mutex_unlock(&p->lock);
    if (!q)
        return false;
    struct cc_error err = {0};
    int64_t t0 = cc_now_ns();
    bool ok = cc_pipeline_run_engine(p, q->input, &err);
    int64_t t1 = cc_now_ns();
    struct cc_result r = {
        .backend = cc_engine_backend_name(p->engine),
        .capture_ns = q->submit_ns,
        .result_ns = t1,
        .latency_ms = cc_pipeline_ms_between(q->submit_ns, t1),
        .dequeue_ms = cc_pipeline_ms_between(q->submit_ns, t0),
        .inference_ms = cc_pipeline_ms_between(t0, t1),
    };
    if (ok) {
        struct cc_topk top[CC_RESULT_MAX_TOP];
        cc_pipeline_fill_top(p, q->top_k, top, &r);
    }
    pthread_mutex_lock(&p->lock);
    q->result = r;
    q->ok = ok;
    q->err = err;
    q->done = true;
    bool more = p->req_head != NULL;
    pthread_cond_broadcast(&p->req_done);
    pthread_mutex_unlock(&p->lock);
    if (!ok)
        cc_pipeline_finish_stream(p, CC_PIPELINE_FAILED, err.msg);
    return more;
}

/* Fails every waiting request with msg and refuses new ones (the inference thread has ended). */
void cc_pipeline_close_requests(struct cc_pipeline *p, const char *msg)
{
    pthread_mutex_lock(&p->lock);
    p->requests_closed = true;
    if (p->swap) { // the new engine stays its caller's
        cc_error_set(&p->swap->err, "%s", msg);
        p->swap->done = true;
        p->swap = NULL;
    }
    for (struct request *q = p->req_head; q; q = q->next) {
        cc_error_set(&q->err, "%s", msg);
        q->done = true;
    }
    p->req_head = p->req_tail = NULL;
    pthread_cond_broadcast(&p->req_done);
    pthread_mutex_unlock(&p->lock);
}

bool cc_pipeline_classify(struct cc_pipeline *p, const float *input, int top_k, struct cc_result *r,
                          struct cc_error *err)
{
    if (top_k < 1 || top_k > CC_RESULT_MAX_TOP)
        return cc_error_set(err, "top-k %d is not in 1..%d", top_k, CC_RESULT_MAX_TOP);
    struct request q = {.input = input, .top_k = top_k, .submit_ns = cc_now_ns()};
    pthread_mutex_lock(&p->lock);
    if (p->requests_closed || p->stop || !p->thread_running) {
        const char *why = p->state == CC_PIPELINE_FAILED ? p->error : "camclass is stopping";
        pthread_mutex_unlock(&p->lock);
        return cc_error_set(err, "%s", why);
    }
    if (p->req_tail)
        p->req_tail->next = &q;
    else
        p->req_head = &q;
    p->req_tail = &q;
    pthread_mutex_unlock(&p->lock);
    cc_frame_slot_kick(p->slot); // an idle inference thread waits in take
    pthread_mutex_lock(&p->lock);
    while (!q.done)
        pthread_cond_wait(&p->req_done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    if (!q.ok)
        return cc_error_set(err, "%s", q.err.msg);
    *r = q.result;
    return true;
}

/* Makes e the engine in use (use_engine) and blanks the mailbox's labels: they pointed into the
 * old model, which the swapper frees. The inference thread (take_swap), or the swapper once that
 * thread has ended (cc_pipeline_swap); on_model only on the inference thread. */
static bool switch_engine(struct cc_pipeline *p, struct cc_engine *e, bool on_model,
                          struct cc_error *err)
{
    bool ok = cc_pipeline_use_engine(p, e, err);
    if (ok && on_model && p->cfg.on_model)
        p->cfg.on_model(p->cfg.ctx, p->model);
    pthread_mutex_lock(&p->lock);
    if (ok)
        for (int i = 0; i < p->latest.n_top; i++)
            p->latest.top[i].label = "";
    pthread_mutex_unlock(&p->lock);
    return ok;
}

/* Inference thread, between two frames (it holds no turn of a shared engine here): switches to
 * the waiting swap's engine, if any. */
void cc_pipeline_take_swap(struct cc_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    struct swap *sw = p->swap;
    p->swap = NULL;
    pthread_mutex_unlock(&p->lock);
    if (!sw)
        return;
    struct cc_engine *old = p->engine;
    struct cc_error err = {0};
    bool ok = switch_engine(p, sw->engine, true, &err);
    pthread_mutex_lock(&p->lock);
    sw->ok = ok;
    sw->old = ok ? old : NULL;
    sw->err = err;
    sw->done = true;
    pthread_cond_broadcast(&p->req_done);
    pthread_mutex_unlock(&p->lock);
}

bool cc_pipeline_swap(struct cc_pipeline *p, struct cc_engine *engine, struct cc_engine **old,
                      struct cc_error *err)
{
    struct swap sw = {.engine = engine};
    pthread_rwlock_wrlock(&p->model_lock); // requests using the old model finish first
    pthread_mutex_lock(&p->lock);
    if (p->requests_closed) { // the inference thread has ended (its input ended, or it failed):
        pthread_mutex_unlock(&p->lock); // nothing runs the engine, switch here
        struct cc_engine *was = p->engine;
        bool ok = switch_engine(p, engine, false, err);
        pthread_rwlock_unlock(&p->model_lock);
        if (ok)
            *old = was;
        return ok;
    }
    if (p->requests_closed || p->stop || !p->thread_running || p->swap) {
        bool busy = p->swap != NULL;
        pthread_mutex_unlock(&p->lock);
        pthread_rwlock_unlock(&p->model_lock);
        return cc_error_set(err, "%s",
                            busy ? "another model is being switched to; try again"
                                 : "camclass is stopping");
    }
    p->swap = &sw;
    pthread_mutex_unlock(&p->lock);
    cc_frame_slot_kick(p->slot); // an idle inference thread waits in take
    pthread_mutex_lock(&p->lock);
    while (!sw.done)
        pthread_cond_wait(&p->req_done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_rwlock_unlock(&p->model_lock);
    if (!sw.ok)
        return cc_error_set(err, "%s", sw.err.msg);
    *old = sw.old;
    return true;
}

const struct cc_model *cc_pipeline_hold_model(struct cc_pipeline *p)
{
    pthread_rwlock_rdlock(&p->model_lock);
    return p->model; // written only under the write lock while the thread runs
}

void cc_pipeline_release_model(struct cc_pipeline *p)
{
    pthread_rwlock_unlock(&p->model_lock);
}

struct cc_engine *cc_pipeline_engine(struct cc_pipeline *p)
{
    return p->engine;
}
