/* camclass — a pipeline's engine (pipeline_internal.h): making one the pipeline's (its buffers,
 * its class activation map), running it (at a shared engine, in its turn), its scores as the top
 * k, and the end of the stream. Called by the inference thread (pipeline.c) and for its requests
 * (pipeline_requests.c); calls neither. */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline_internal.h"

/* The model's input tensor must be [1, 3, H, W]; into *w, *h. */
static bool input_size(const struct cc_engine *e, int *w, int *h, struct cc_error *err)
{
    const struct cc_model *m = cc_engine_model(e);
    const struct cc_tensor *in = &m->tensors[m->input.tensor];
    if (in->ndim != 4 || in->shape[1] != 3 ||
        cc_engine_input_count(e) != (size_t)(3 * in->shape[2] * in->shape[3]))
        return cc_error_set(err, "model %s: input tensor is not [1, 3, H, W]", m->name);
    *h = (int)in->shape[2], *w = (int)in->shape[3];
    return true;
}

/* The class activation map of e's model, when e taps its feature map; else cam_why says why
 * not. Under lock (cc_pipeline_want_cam reads them). */
static void use_cam(struct cc_pipeline *p, struct cc_engine *e)
{
    struct cc_error err = {0};
    pthread_mutex_lock(&p->lock);
    cc_cam_finish(&p->cam);
    free(p->fmap);
    p->fmap = NULL;
    if (cc_cam_init(&p->cam, cc_engine_model(e), &err) && cc_engine_tap_count(e) == 0)
        cc_error_set(&err, "the engine keeps no feature map");
    else if (!err.msg[0] && p->cam.h * p->cam.w > CC_RESULT_CAM_MAX)
        cc_error_set(&err, "its feature map is %d x %d, more than the %d values a result holds",
                     p->cam.w, p->cam.h, CC_RESULT_CAM_MAX);
    else if (!err.msg[0] && !(p->fmap = malloc(cc_engine_tap_count(e) * sizeof(float))))
        cc_error_set(&err, "out of memory for the feature map");
    if (err.msg[0]) {
        cc_cam_finish(&p->cam);
        p->cam_why = err;
    }
    pthread_mutex_unlock(&p->lock);
}

/* Makes e the engine in use: its input and output buffers (sized by its input and classes; the
 * old ones are kept on failure, e is then not used). Create, or the inference thread. */
bool cc_pipeline_use_engine(struct cc_pipeline *p, struct cc_engine *e, struct cc_error *err)
{
    int w = 0, h = 0;
    if (!input_size(e, &w, &h, err))
        return false;
    float *input = malloc(cc_engine_input_count(e) * sizeof(float));
    float *scores = malloc(cc_engine_output_count(e) * sizeof(float));
    if (!input || !scores) {
        free(input);
        free(scores);
        return cc_error_set(err, "out of memory for the model's input and output");
    }
    free(p->input);
    free(p->scores);
    p->input = input, p->scores = scores;
    p->in_w = w, p->in_h = h;
    p->engine = e;
    p->model = cc_engine_model(e);
    use_cam(p, e);
    return true;
}

/* Ends the stream from the inference thread: state and message, and wakes main. */
void cc_pipeline_finish_stream(struct cc_pipeline *p, enum cc_pipeline_state state, const char *msg)
{
    pthread_mutex_lock(&p->lock);
    if (p->state == CC_PIPELINE_RUNNING) {
        p->state = state;
        snprintf(p->error, sizeof(p->error), "%s", msg ? msg : "");
    }
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    cc_frame_slot_close(p->slot, msg); // stops the source's loop (a no-op at end of stream)
}

/* r's top k classes from p->scores (the engine's output; softmax applied here to logits), with
 * their labels, and whether the answer is "unknown" (below the threshold in force). tmp: k
 * entries of scratch. Inference thread. */
void cc_pipeline_fill_top(struct cc_pipeline *p, int k, struct cc_topk *tmp, struct cc_result *r)
{
    int classes = p->model->output.classes;
    if (p->model->output.kind == CC_OUTPUT_LOGITS)
        cc_softmax(p->scores, p->scores, classes);
    r->n_top = cc_topk(p->scores, classes, k, tmp);
    for (int i = 0; i < r->n_top; i++) {
        int c = tmp[i].index;
        r->top[i] = (struct cc_result_class){
            .index = c,
            .label = c < p->model->n_labels ? p->model->labels[c] : "",
            .score = tmp[i].score,
        };
    }
    double t = p->cfg.unknown_threshold >= 0 ? p->cfg.unknown_threshold
                                             : p->model->output.unknown_threshold;
    r->unknown = r->n_top > 0 && t > 0 && r->top[0].score < t;
}

/* A shared engine: this pipeline holds a frame, and so its place in the engine's round (the
 * turn is taken by run_engine, or given up by drop_turn). Inference thread. */
void cc_pipeline_hold_turn(struct cc_pipeline *p)
{
    if (p->cfg.turns && !p->held) {
        cc_engine_turns_hold(p->cfg.turns, p->lane);
        p->held = true;
    }
}

void cc_pipeline_drop_turn(struct cc_pipeline *p)
{
    if (p->held) {
        cc_engine_turns_give(p->cfg.turns, p->lane);
        p->held = false;
    }
}

/* The engine on input into p->scores, in this pipeline's turn when it shares the engine (the
 * wait for the turn counts as inference time). Inference thread. */
bool cc_pipeline_run_engine(struct cc_pipeline *p, const float *input, struct cc_error *err)
{
    if (!p->cfg.turns)
        return cc_engine_run(p->engine, input, p->scores, err);
    cc_pipeline_hold_turn(p);
    cc_engine_turns_take(p->cfg.turns, p->lane);
    bool ok = cc_engine_run(p->engine, input, p->scores, err);
    cc_pipeline_drop_turn(p);
    return ok;
}
