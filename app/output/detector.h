/* camclass — what detections mode decides: from a stream of results, when a class is detected,
 * replaced by another, or cleared. The detection log's "detection"/"clear" lines, the MQTT
 * events and the actions on events (snapshots, commands) all read this one decision.
 *
 * Each class's score is smoothed (s = a*x + (1-a)*s, a = ewma_alpha; results of image files
 * are each their own scene and set s = x); the smoothed top-1 is a detection ("onset") once it
 * reaches threshold; another class replaces it ("change") when it reaches threshold and leads
 * by more than hysteresis; it clears below threshold - hysteresis. An "unknown" result shows
 * no class: every score decays.
 * Ownership: one detector per consumer, used by one thread; labels are copied (made valid
 * UTF-8), the result passed to cc_detector_update is only read during the call.
 */
#ifndef CC_DETECTOR_H
#define CC_DETECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "result.h"

struct cc_detector_config {
    double threshold;  // [0, 1]: smoothed top-1 score at or above which it is a detection
    double hysteresis; // [0, threshold]
    double ewma_alpha; // [0, 1]: weight of the newest score; 0 = off
};

enum cc_detection_kind {
    CC_DETECTION_NONE,
    CC_DETECTION_ONSET,
    CC_DETECTION_CHANGE,
    CC_DETECTION_CLEAR
};

struct cc_detection_class {
    int index;         // class index, -1 for none
    const char *label; // the detector's copy, valid until its next update; "" for none
    double score;      // smoothed
};

/* What one result changed. */
struct cc_detection {
    enum cc_detection_kind kind;
    struct cc_detection_class now;      // onset/change: the new detection; clear: the one cleared
    struct cc_detection_class previous; // change: the one it replaced; index -1 otherwise
    double held_s;                      // clear: how long it was detected (result time)
};

struct cc_detector;

/* Checks cfg; who starts the message ("detection log"). False with err naming the field. */
bool cc_detector_check(const struct cc_detector_config *cfg, const char *who, struct cc_error *err);

/* NULL with err on a bad cfg (as cc_detector_check with who "detections") or out of memory. */
struct cc_detector *cc_detector_create(const struct cc_detector_config *cfg, struct cc_error *err);
void cc_detector_destroy(struct cc_detector *d); // accepts NULL

/* Reads one result (results in order of result_ns) and says what it changed. */
struct cc_detection cc_detector_update(struct cc_detector *d, const struct cc_result *r);

/* The current detection (index -1 when none). */
struct cc_detection_class cc_detector_active(const struct cc_detector *d);

/* Forgets every class and the current detection without an event (a new model's indices mean
 * other things). */
void cc_detector_forget(struct cc_detector *d);

#endif
