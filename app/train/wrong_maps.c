/* camclass-train --report: the wrong held-out images with their maps (see wrong_maps.h). */
#include <math.h>
#include <stdlib.h>

#include "cam.h"
#include "input_tensor.h"
#include "wrong_maps.h"

/* What computing the maps needs: the backbone with its feature map tapped, and room. */
struct mapper {
    struct cc_cam cam; // of the base: the feature map's place and size
    struct cc_engine *e;
    float *in, *out, *fmap, *map;
};

static void mapper_finish(struct mapper *mp)
{
    cc_engine_destroy(mp->e);
    cc_cam_finish(&mp->cam);
    free(mp->in), free(mp->out), free(mp->fmap), free(mp->map);
}

/* False with *why when the base has no map (err untouched), or with err on a failure. */
static bool mapper_init(struct mapper *mp, const struct cc_wrong_maps_in *in, struct cc_error *why,
                        struct cc_error *err)
{
    *mp = (struct mapper){0};
    if (!cc_cam_init(&mp->cam, in->base, why))
        return false;
    struct cc_engine_options o = *in->opt;
    o.tap = cc_cam_tap(&mp->cam, in->base);
    struct cc_model *bb = cc_head_graph_backbone(in->base, in->g, err);
    if (!bb || !(mp->e = cc_engine_create_from_model(bb, &o, err)))
        return false;
    size_t hw = (size_t)mp->cam.h * (size_t)mp->cam.w;
    mp->in = malloc(cc_engine_input_count(mp->e) * sizeof(float));
    mp->out = malloc(cc_engine_output_count(mp->e) * sizeof(float));
    mp->fmap = malloc(cc_engine_tap_count(mp->e) * sizeof(float));
    mp->map = malloc(hw * sizeof(float));
    return (mp->in && mp->out && mp->fmap && mp->map) ||
           cc_error_set(err, "out of memory for the report's maps");
}

/* The map of answer k for image path: {"w", "h", "values"}; NULL with err. */
static cJSON *map_json(struct mapper *mp, const struct cc_wrong_maps_in *in, const char *path,
                       int k, struct cc_error *err)
{
    char what[128];
    const struct cc_model *bb = cc_engine_model(mp->e);
    if (!cc_input_tensor_load(path, bb, mp->in, cc_engine_input_count(mp->e), what, sizeof(what),
                              err) ||
        !cc_engine_run(mp->e, mp->in, mp->out, err) || !cc_engine_tap_read(mp->e, mp->fmap, err))
        return NULL;
    int c = in->g->n_features;
    cc_cam_map(in->w + (size_t)k * (size_t)c, c, mp->cam.h, mp->cam.w, mp->fmap, mp->map);
    cJSON *o = cJSON_CreateObject(), *v = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "w", mp->cam.w);
    cJSON_AddNumberToObject(o, "h", mp->cam.h);
    for (int i = 0; i < mp->cam.h * mp->cam.w; i++)
        cJSON_AddItemToArray(v, cJSON_CreateNumber(round((double)mp->map[i] * 1e4) / 1e4));
    cJSON_AddItemToObject(o, "values", v);
    return o;
}

bool cc_wrong_maps_add(cJSON *report, const struct cc_wrong_maps_in *in, struct cc_error *err)
{
    struct mapper mp;
    struct cc_error why = {0};
    bool maps = mapper_init(&mp, in, &why, err);
    if (!maps && !why.msg[0]) {
        mapper_finish(&mp);
        return false;
    }
    const struct cc_dataset *d = in->d;
    cJSON *wrong = cJSON_AddObjectToObject(report, "wrong");
    for (int k = 0; wrong && k < d->n_classes; k++)
        cJSON_AddArrayToObject(wrong, d->classes[k]);
    if (!maps)
        cJSON_AddStringToObject(report, "wrong_maps", why.msg);
    bool ok = wrong != NULL || cc_error_set(err, "out of memory for the report");
    for (int i = 0, n = 0; ok && i < d->n_samples; i++) {
        if (!d->samples[i].held_out)
            continue;
        int row = n++;
        if (row >= in->n_held || in->pred[row] == in->truth[row])
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "file", d->samples[i].path);
        cJSON_AddStringToObject(e, "answer", d->classes[in->pred[row]]);
        cJSON_AddNumberToObject(e, "score", round((double)in->prob[row] * 1e4) / 1e4);
        cJSON *cam = maps ? map_json(&mp, in, d->samples[i].path, in->pred[row], err) : NULL;
        ok = !maps || cam;
        if (cam)
            cJSON_AddItemToObject(e, "cam", cam);
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(wrong, d->classes[in->truth[row]]),
                             e);
    }
    mapper_finish(&mp);
    return ok;
}
