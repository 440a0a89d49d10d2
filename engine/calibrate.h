/* camclass — post-training static quantization in C: a model's f32 graph, calibrated on
 * images, becomes an int8 model (docs/MODEL_FORMAT.md, "i8 tensors" and "Quantized
 * activations"), as tools/camclass-export --quantize int8 makes one in Python.
 *
 * Calibration runs the f32 graph with the reference ops (cpu/ref_ops.h, every activation kept
 * in its own buffer, one thread) on each image given and records each activation's range
 * (min/max over all runs: PyTorch's MinMaxObserver, the range python/camclass_export's
 * calibration takes, so both tools give a bundle the same quantization). Why not a percentile:
 * clipping each range at its 99.9th, 99.99th or 99.999th percentile gave 0.925, 0.900 and
 * 0.933 top-1 agreement with the f32 model against min/max's 0.892 (fake-quantized
 * random-weight mobilenet_v2 with a trained head, calibrated on 120 drawn pictures, measured
 * on 120 others): a few pictures either way, no clear gain for a tool that would then differ.
 *
 * The int8 model it writes:
 *   - weights: input 1 of every conv2d and linear becomes i8, per output channel symmetric:
 *     scale[o] = max|w[o, ...]| / 127 as f32 (1 for an all-zero channel), q = round half to
 *     even (w / scale[o]) in [-127, 127]. An i8 weight stays as it is; biases stay f32 (the CPU
 *     backend rounds them to int32 at input scale x weight scale).
 *   - activations and the input: per tensor asymmetric, the observed range widened to hold 0
 *     (zero, the padding value, is exact): scale = (hi - lo) / 255 as f32, zero_point =
 *     round(-128 - lo / scale) in [-128, 127] — PyTorch's affine quint8 observer shifted to
 *     signed int8. flatten, reshape and clamp outputs take their input's quantization (the CPU
 *     backend runs them in int8 only then); softmax outputs stay f32.
 * The rest (name, input spec, output spec, labels, training record) is copied.
 */
#ifndef CC_CALIBRATE_H
#define CC_CALIBRATE_H

#include <stdbool.h>

#include "error.h"
#include "model.h"

/* The ranges observed so far. Single-threaded; owns its buffers, not the model. */
struct cc_calibration;

/* A calibration of finalized model m, which must outlive it. NULL with err on out of memory
 * or an op the reference ops do not run. */
struct cc_calibration *cc_calibration_new(const struct cc_model *m, struct cc_error *err);

/* Runs the f32 graph on input (the input tensor's count values, preprocessed) and widens every
 * activation's range. False with err when an activation is not finite (NaN or infinity: no
 * int8 range can hold it). */
bool cc_calibration_run(struct cc_calibration *c, const float *input, struct cc_error *err);

/* The number of successful runs so far. */
int cc_calibration_runs(const struct cc_calibration *c);

/* The int8 model of the calibrated one (finalized, owned by the caller), named name (NULL:
 * the model's). NULL with err when no run was made or the builder fails. */
struct cc_model *cc_calibration_quantize(const struct cc_calibration *c, const char *name,
                                         struct cc_error *err);

void cc_calibration_destroy(struct cc_calibration *c);

#endif
