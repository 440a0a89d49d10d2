/* camclass — a classifier's head, and class activation maps (see cam.h). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "cam.h"

bool cc_classifier_find(const struct cc_model *m, struct cc_classifier *c, struct cc_error *err)
{
    *c = (struct cc_classifier){.linear = -1, .softmax = -1, .features = -1};
    int out = m->output.tensor, producer = m->tensors[out].producer;
    if (producer >= 0 && m->nodes[producer].op == CC_OP_SOFTMAX) {
        c->softmax = producer;
        producer = m->tensors[m->nodes[producer].inputs[0]].producer;
    }
    if (producer < 0 || m->nodes[producer].op != CC_OP_LINEAR)
        return cc_error_set(err, "its output is not computed by a linear node (or a softmax "
                                 "after one)");
    const struct cc_tensor *x = &m->tensors[m->nodes[producer].inputs[0]];
    if (x->ndim != 2 || x->shape[0] != 1)
        return cc_error_set(err,
                            "its classifier reads a tensor \"%s\" that is not a feature "
                            "vector [1, C]",
                            x->name);
    c->linear = producer;
    c->features = m->nodes[producer].inputs[0];
    c->n_features = (int)x->shape[1];
    return true;
}

/* Whether node n averages all of its 4-D input into one value per channel: global average
 * pooling, or an average pooling whose one window is the whole input (no padding). */
static bool pools_globally(const struct cc_model *m, const struct cc_node *n)
{
    const struct cc_tensor *x = &m->tensors[n->inputs[0]];
    if (x->ndim != 4)
        return false;
    if (n->op == CC_OP_GLOBAL_AVG_POOL)
        return true;
    const struct cc_pool_attrs *p = &n->attrs.pool;
    return n->op == CC_OP_AVG_POOL2D && p->kernel[0] == x->shape[2] &&
           p->kernel[1] == x->shape[3] && !p->pad[0] && !p->pad[1] && !p->pad[2] && !p->pad[3];
}

/* The 4-D tensor whose global average pooling tensor t is (through flatten/reshape), or -1. */
static int pooled_from(const struct cc_model *m, int t)
{
    int producer = m->tensors[t].producer;
    for (int hops = 0; producer >= 0 && hops < 8; hops++) {
        const struct cc_node *n = &m->nodes[producer];
        if (n->op != CC_OP_FLATTEN && n->op != CC_OP_RESHAPE)
            return pools_globally(m, n) ? n->inputs[0] : -1;
        producer = m->tensors[n->inputs[0]].producer;
    }
    return -1;
}

bool cc_cam_init(struct cc_cam *cam, const struct cc_model *m, struct cc_error *err)
{
    *cam = (struct cc_cam){.feature_map = -1};
    if (!cc_classifier_find(m, &cam->cls, err))
        return false;
    int f = pooled_from(m, cam->cls.features);
    if (f < 0 || m->tensors[f].shape[1] != cam->cls.n_features)
        return cc_error_set(err, "its classifier does not read the global average pooling of a "
                                 "feature map");
    const struct cc_tensor *w = &m->tensors[m->nodes[cam->cls.linear].inputs[1]];
    cam->feature_map = f;
    cam->channels = cam->cls.n_features;
    cam->h = (int)m->tensors[f].shape[2];
    cam->w = (int)m->tensors[f].shape[3];
    cam->classes = (int)w->shape[0];
    if (!(cam->weight = malloc((size_t)w->count * sizeof(float))))
        return cc_error_set(err, "out of memory for the class activation map's weights");
    cc_tensor_dequantize(w, cam->weight);
    return true;
}

const char *cc_cam_tap(const struct cc_cam *cam, const struct cc_model *m)
{
    return m->tensors[cam->feature_map].name;
}

void cc_cam_compute(const struct cc_cam *cam, const float *fmap, int k, float *map)
{
    const float *row = cam->weight + (size_t)k * (size_t)cam->channels; // W[k][.]
    cc_cam_map(row, cam->channels, cam->h, cam->w, fmap, map);
}

void cc_cam_map(const float *row, int channels, int h, int w, const float *fmap, float *map)
{
    size_t hw = (size_t)h * (size_t)w;
    memset(map, 0, hw * sizeof(float));
    for (int c = 0; c < channels; c++) {
        const float *plane = fmap + (size_t)c * hw;
        for (size_t i = 0; i < hw; i++)
            map[i] += row[c] * plane[i];
    }
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (size_t i = 0; i < hw; i++) {
        lo = map[i] < lo ? map[i] : lo;
        hi = map[i] > hi ? map[i] : hi;
    }
    float range = hi - lo;
    for (size_t i = 0; i < hw; i++)
        map[i] = range > 0 ? (map[i] - lo) / range : 0.0f;
}

struct cc_engine *cc_cam_engine_create(struct cc_model *model, const struct cc_engine_options *opts,
                                       struct cc_error *err)
{
    struct cc_engine_options o = opts ? *opts : cc_engine_options_default();
    struct cc_cam cam = {0};
    struct cc_error none = {0};
    if (model && cc_cam_init(&cam, model, &none))
        o.tap = cc_cam_tap(&cam, model); // owned by model; the engine copies it
    cc_cam_finish(&cam);
    return cc_engine_create_from_model(model, &o, err);
}

void cc_cam_finish(struct cc_cam *cam)
{
    free(cam->weight);
    cam->weight = NULL;
}
