/* camclass — one classification result, as the inference thread hands it to the overlay
 * (main thread) and the detection logger.
 *
 * Plain data, copied by value; labels point into the engine's model and file into the file
 * source. The file source outlives every result; the model does not when it is reloaded
 * (pipeline.h cc_pipeline_swap frees the old one between two frames), so a copy kept past the
 * on_result / on_frame call that handed it (a queue to another thread) keeps its labels with
 * cc_result_keep_labels.
 */
#ifndef CC_RESULT_H
#define CC_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "roi.h"

#define CC_RESULT_MAX_TOP 16

struct cc_result_class {
    int index;         // class index in the model's output
    const char *label; // model->labels[index]; owned by the model
    float score;       // probability (softmax of logits, or the model's probabilities)
};

/* The camera health checks of one frame (image/health.h), when they ran. */
struct cc_result_health {
    bool checked;     // the checks ran on this frame (live sources, --camera-health)
    unsigned active;  // bit k: condition k of health.h's enum cc_health_kind is on (after its
                      // hold): covered, dark, blurred, frozen, moved
    float mean, std;  // luma, 0..255
    float sharpness;  // variance of the Laplacian / the camera's running baseline; 0 before one
    float similarity; // the thumbnail's correlation with the reference; 1 before one
};

/* A class activation map of the answer (engine/cam.h), when it was asked for
 * (cc_pipeline_want_cam): where in the picture the top class's score came from. */
enum { CC_RESULT_CAM_MAX = 32 * 32 }; // values; a larger feature map gets no map
struct cc_result_cam {
    int w, h;                   // 0: no map in this result
    int index;                  // the class it is for: top[0].index
    float v[CC_RESULT_CAM_MAX]; // (h * w) row-major over the picture classified, 0..1: least
                                // to most
    float area[4]; // x, y, w, h of the picture classified (the ROI's crop, and the model's
                   // center crop of it) as fractions of the frame's width and height
};

struct cc_result {
    uint64_t seq;         // source frame sequence number
    const char *file;     // image inputs: the file the frame came from (its name in the
                          // directory); NULL for cameras and videos. Owned by the file source
    int64_t capture_ns;   // frame timestamp, CLOCK_MONOTONIC (driver timestamp for V4L2)
    int64_t result_ns;    // when the result was ready, CLOCK_MONOTONIC
    double latency_ms;    // result_ns - capture_ns
    double dequeue_ms;    // capture timestamp -> taken from the slot by inference
    double preprocess_ms; // convert + resize + normalize
    double inference_ms;  // cc_engine_run
    double camera_fps;    // frames delivered by the source per second (recent average)
    double inference_fps; // results per second (recent average)
    uint64_t dropped;     // frames dropped by latest-frame-wins so far
    const char *backend;  // the backend that computed it ("vulkan", "cpu", "ref": it changes
                          // when the engine falls back mid-run); static; NULL = not said
    int n_top;            // entries used in top
    struct cc_result_class top[CC_RESULT_MAX_TOP]; // highest score first
    bool unknown; // top[0]'s score is below the unknown threshold (the model's, or
                  // --unknown-threshold): the answer is "unknown"; top is still filled
    struct cc_result_health health;
    struct cc_roi roi; // the region of interest the frame was cropped to (--roi, else the
                       // model's: it follows a reload); CC_ROI_NONE: the whole frame
    struct cc_result_cam cam; // w 0 unless asked for (cc_pipeline_want_cam) and the model has one
};

/* Room for a result's labels, where a copy of it is kept. */
enum { CC_RESULT_LABEL_MAX = 128 }; // longer labels are cut (ImageNet's longest is ~90 bytes)
struct cc_result_labels {
    char s[CC_RESULT_MAX_TOP][CC_RESULT_LABEL_MAX];
};

/* Copies r's labels into *store and points r's at them: r then no longer reads the model. */
static inline void cc_result_keep_labels(struct cc_result *r, struct cc_result_labels *store)
{
    for (int i = 0; i < r->n_top && i < CC_RESULT_MAX_TOP; i++) {
        snprintf(store->s[i], CC_RESULT_LABEL_MAX, "%s", r->top[i].label ? r->top[i].label : "");
        r->top[i].label = store->s[i];
    }
}

#endif
