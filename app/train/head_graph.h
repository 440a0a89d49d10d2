/* camclass-train — the base model's graph, cut and re-headed (model.h builder, no library).
 *
 * A classifier base ends in a linear node (its "classifier") whose output is the model's output,
 * or feeds a softmax that is: what every torchvision classifier and every bundle camclass-train
 * writes looks like (found by engine/cam.h's cc_classifier_find). The classifier's input is the
 * backbone's feature vector ([1, C]: the global pooling's output, flattened).
 *
 *   cc_head_graph_find(base, &g, &err)      which node is the classifier, what it reads
 *   cc_head_graph_backbone(base, &g, &err)  a model computing the feature vector only
 *   cc_head_graph_replace(base, &g, ...)    the base with a new classifier (K classes, f32)
 */
#ifndef CC_HEAD_GRAPH_H
#define CC_HEAD_GRAPH_H

#include <stdbool.h>

#include "error.h"
#include "model.h"

struct cc_head_graph {
    int classifier;  // node index of the final linear
    int softmax;     // node index of a softmax after it that produces the output, or -1
    int features;    // tensor index of the classifier's input, shape [1, C]
    int n_features;  // C
};

/* Finds the classifier of finalized model base. False with err ("... is not a classifier
 * base: ...") when the output is not produced that way. */
bool cc_head_graph_find(const struct cc_model *base, struct cc_head_graph *g, struct cc_error *err);

/* A new finalized model: base's nodes before the classifier, its output the feature tensor
 * (no labels). NULL with err on out of memory. */
struct cc_model *cc_head_graph_backbone(const struct cc_model *base, const struct cc_head_graph *g,
                                        struct cc_error *err);

/* A new finalized model: base with its classifier's weight replaced by w (n_classes x
 * n_features f32, row-major) and its bias by b (n_classes), the output n_classes wide, the
 * labels given, named name. The classifier and what follows it compute in f32 (an int8 base's
 * quantization of the old logits does not fit the new ones). NULL with err on failure. */
struct cc_model *cc_head_graph_replace(const struct cc_model *base, const struct cc_head_graph *g,
                                       const float *w, const float *b, int n_classes,
                                       const char *const *labels, const char *name,
                                       struct cc_error *err);

#endif
