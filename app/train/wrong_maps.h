/* camclass-train --report: the held-out images the new classifier got wrong, per class, each
 * with the class activation map of its wrong answer (engine/cam.h): where in the picture the
 * answer came from, to see what misled it (a reflection, the background, a person).
 *
 * The maps are the base's last feature map (tapped on its backbone, the engine camclass-train
 * computed the features on) weighted by the new classifier's row of the answer, h x w values
 * in 0..1 (7 x 7 for mobilenet_v2 at 224), in the report as
 *
 *   "wrong": {"door open": [{"file": "garage/door open/0004.jpg", "answer": "door closed",
 *                            "score": 0.81, "cam": {"w": 7, "h": 7, "values": [...]}}, ...],
 *             "door closed": [], ...}
 *
 * A base whose classifier does not read a global average pooling has no maps: the entries lack
 * "cam" and "wrong_maps" says why. Each wrong image is run through the backbone once more (a
 * feature cache keeps vectors, not maps).
 */
#ifndef CC_WRONG_MAPS_H
#define CC_WRONG_MAPS_H

#include <cjson/cJSON.h>

#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "head_graph.h"

struct cc_wrong_maps_in {
    const struct cc_model *base;         // the base bundle (with the ROI in force)
    const struct cc_head_graph *g;       // its classifier
    const struct cc_engine_options *opt; // how camclass-train runs the backbone
    const struct cc_dataset *d;
    const int *truth, *pred; // (n_held) class of each held-out image, in sample order, and
    const float *prob;       // the new classifier's answer and its probability
    int n_held;
    const float *w; // (n_classes x g->n_features) the new classifier's weights
};

/* Adds "wrong" (and "wrong_maps" when there are no maps) to report. False with err when an
 * image or the engine fails, or out of memory. */
bool cc_wrong_maps_add(cJSON *report, const struct cc_wrong_maps_in *in, struct cc_error *err);

#endif
