/* camclass — a classifier's head, and class activation maps ("why did it say that").
 *
 * A classifier ends in a linear node (its "classifier") whose output is the model's output, or
 * feeds a softmax that is: every torchvision classifier and every bundle camclass-train writes.
 * When the linear reads the global average pooling of a feature map F [1, C, h, w] (through a
 * flatten or reshape), the score of class k is  b[k] + sum_c W[k][c] * mean_yx F[c][y][x],  so
 *
 *     cam_k[y][x] = sum_c W[k][c] * F[c][y][x]
 *
 * says how much each place of the picture adds to class k's score (Zhou et al., "Learning Deep
 * Features for Discriminative Localization", 2016). The engine keeps F for us when told its name
 * (struct cc_engine_options.tap); this module finds F and W in a model and computes the map:
 *
 *     struct cc_cam cam;
 *     if (!cc_cam_init(&cam, model, &err)) ... // err: why not
 *     opts.tap = cc_cam_tap(&cam, model);      // then cc_engine_create_from_model(...)
 *     cc_engine_run(e, in, scores, &err);
 *     cc_engine_tap_read(e, fmap, &err);       // cam.channels * cam.h * cam.w values
 *     cc_cam_compute(&cam, fmap, top_class, map); // cam.h * cam.w values, 0..1
 *     cc_cam_finish(&cam);
 */
#ifndef CC_CAM_H
#define CC_CAM_H

#include <stdbool.h>

#include "engine.h"
#include "error.h"
#include "model.h"

/* Where a model's classifier is. */
struct cc_classifier {
    int linear;     // node index of the final linear
    int softmax;    // node index of a softmax after it that produces the output, or -1
    int features;   // tensor index of the linear's input, shape [1, C]
    int n_features; // C
};

/* Finds the classifier of finalized model m. False with err saying why not ("its output is not
 * computed by a linear node ...": the callers name the model and add the way out). */
bool cc_classifier_find(const struct cc_model *m, struct cc_classifier *c, struct cc_error *err);

/* What a class activation map of a model is made of. Owns weight. */
struct cc_cam {
    struct cc_classifier cls;
    int feature_map;    // tensor index of F, [1, channels, h, w]
    int channels, h, w; // F's shape
    int classes;        // the linear's rows (the model's classes)
    float *weight;      // (classes x channels) W as f32, i8 weights dequantized; owned
};

/* Finds F and W in finalized model m. False with err saying why there is no map ("its
 * classifier does not read the global average pooling of a feature map", or
 * cc_classifier_find's reason: the callers name the model and what needed the map) when the
 * classifier does not read a global average pooling of a 4-D feature map; cam is then empty
 * (cc_cam_finish accepts it). */
bool cc_cam_init(struct cc_cam *cam, const struct cc_model *m, struct cc_error *err);

/* The name of F, for struct cc_engine_options.tap; owned by m. */
const char *cc_cam_tap(const struct cc_cam *cam, const struct cc_model *m);

/* map (cam->h * cam->w values, row-major) = class k's map from fmap (F, channels * h * w values
 * in NCHW order, as cc_engine_tap_read gives it), scaled to 0..1 over the map (its lowest value
 * 0, its highest 1; all 0 when the map is flat). k must be in [0, classes). */
void cc_cam_compute(const struct cc_cam *cam, const float *fmap, int k, float *map);

/* The same from one row of classifier weights (channels values, any head: camclass-train's new
 * one) and a feature map of channels x h x w values: map gets h x w values, 0..1. */
void cc_cam_map(const float *row, int channels, int h, int w, const float *fmap, float *map);

/* cc_engine_create_from_model (ownership of model passes, also on failure) with opts->tap set to
 * the model's feature map when it has a class activation map (as it is otherwise): what
 * camclass creates its engines with, so that a map can be asked for at any time. */
struct cc_engine *cc_cam_engine_create(struct cc_model *model, const struct cc_engine_options *opts,
                                       struct cc_error *err);

/* Frees weight; accepts a zeroed or failed cam. */
void cc_cam_finish(struct cc_cam *cam);

#endif
