/* camclass — camera health: is the picture one a classifier can trust?
 *
 * A camera whose lens is covered, whose focus has gone, whose driver delivers the same frame over
 * and over, or that was knocked to look elsewhere keeps producing confident answers that are
 * wrong. These checks read cheap statistics of a luma image the pipeline already has (the
 * preprocessed tensor turned back into 8-bit luma, cc_health_luma_from_tensor) and say when a
 * condition starts and ends:
 *
 *   covered  the picture is flat: luma standard deviation below covered_std (any brightness)
 *   dark     mean luma below dark_mean
 *   blurred  variance of the Laplacian below blur_ratio x this camera's own running baseline
 *            (the baseline is learnt from the frames that are not blurred, covered or dark)
 *   frozen   byte-identical pictures while the frame timestamps move on
 *   moved    a 16x16 thumbnail's correlation with the reference taken when the camera was
 *            healthy fell below moved_corr (the camera was turned, or the scene is another one);
 *            cc_health_reset_reference takes a new reference
 *
 * Hysteresis: a condition starts only after it has held for hold_s of frame time without a break,
 * and ends only after it has been absent for hold_s, so a passing shadow does not flap.
 * Ownership: one struct per camera, used by one thread (the inference thread).
 */
#ifndef CC_HEALTH_H
#define CC_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

enum cc_health_kind {
    CC_HEALTH_COVERED,
    CC_HEALTH_DARK,
    CC_HEALTH_BLURRED,
    CC_HEALTH_FROZEN,
    CC_HEALTH_MOVED,
    CC_HEALTH_COUNT
};

struct cc_health_config {
    double hold_s;      // a condition starts after holding this long, ends after absent this long
    double covered_std; // luma standard deviation (0..255) below which the picture is flat
    double dark_mean;   // mean luma (0..255) below which the picture is dark
    double blur_ratio;  // Laplacian variance below this fraction of the baseline is blurred
    double moved_corr;  // thumbnail correlation (-1..1) with the reference below this is moved
};

/* The defaults above, chosen on the self-test clip and vivid's patterns (docs/EVENTS.md). */
struct cc_health_config cc_health_defaults(void);

/* What one frame measured; for the event line and /metrics. */
struct cc_health_stats {
    double mean, std;  // luma, 0..255
    double laplacian;  // variance of the 4-neighbour Laplacian of the luma
    double baseline;   // the running Laplacian baseline; 0 until learnt
    double similarity; // correlation with the reference thumbnail; 1 before there is one
    bool identical;    // byte-identical to the previous picture
};

/* A condition that started or ended with this frame. */
struct cc_health_event {
    enum cc_health_kind kind;
    bool active;      // true: it started; false: it ended
    int64_t since_ns; // the frame time its change was first seen (before the hold)
};

struct cc_health;

struct cc_health *cc_health_create(const struct cc_health_config *cfg, struct cc_error *err);
void cc_health_destroy(struct cc_health *h); // accepts NULL

/* Reads one luma picture (w x h bytes, rows stride apart; w, h >= 3) taken at t_ns (frame time,
 * non-decreasing). Writes the conditions that started or ended into ev (room for
 * CC_HEALTH_COUNT) and returns how many; fills st when not NULL. */
int cc_health_update(struct cc_health *h, const uint8_t *luma, int w, int hgt, int stride,
                     int64_t t_ns, struct cc_health_event *ev, struct cc_health_stats *st);

/* Whether a condition is on now (after its hold). */
bool cc_health_active(const struct cc_health *h, enum cc_health_kind k);

/* Forgets the reference thumbnail: the next healthy frame after hold_s becomes the new one. */
void cc_health_reset_reference(struct cc_health *h);

/* "covered", "dark", "blurred", "frozen", "moved". */
const char *cc_health_kind_name(enum cc_health_kind k);

/* Turns a preprocessed tensor back into 8-bit luma (BT.601 weights): chw is (3, h, w) floats
 * normalized as (x/255 - mean[c]) / std[c] in the model's channel order (bgr: B, G, R). */
void cc_health_luma_from_tensor(const float *chw, int w, int h, const float mean[3],
                                const float std[3], bool bgr, uint8_t *luma);

#endif
