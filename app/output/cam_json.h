/* camclass — a class activation map in JSON: GET /latest?cam=1's "cam" member (docs/SERVE.md).
 *
 *   "cam": {"index": 3, "label": "door open", "w": 7, "h": 7,
 *           "area": [0, 0, 1, 1], "values": [0.12, 0.5, ...]}
 *
 * index and label: the class the map is of (the answer, the frame's first "top" entry); w, h:
 * the map's size; area: x, y, w, h of the picture the model classified (its ROI and center
 * crop) as fractions of the frame; values: h rows of w numbers, 0..1 (4 decimals), row-major,
 * top-left first. Pure formatting (cJSON); no state.
 */
#ifndef CC_CAM_JSON_H
#define CC_CAM_JSON_H

#include "result.h"

/* frame_line: a detection log "frame" object (one line, detlog.h). Returns a malloc'd copy of
 * it with "cam" added as its last member, and a '\n'; NULL when out of memory or frame_line is
 * not a JSON object. The label is the frame's "top" entry of the map's class (as the log wrote
 * it: valid UTF-8), "" when absent. */
char *cc_cam_json_add(const char *frame_line, const struct cc_result_cam *cam);

#endif
