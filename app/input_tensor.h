/* camclass — a model input tensor from a file, for camclass-bench --input: an image (PNG, JPEG,
 * or a .y4m video's first frame) through camclass's own file source and preprocessing, exactly
 * as camclass would feed it, or a raw tensor (little-endian float32, NCHW, the model's input
 * count of values), so that anyone can run a bundle on their own input and compare the output
 * with their framework's. */
#ifndef CC_INPUT_TENSOR_H
#define CC_INPUT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "model.h"

/* Fills x (count values: the model's input tensor) from path. what receives a short
 * description ("image 640x480 RGB24, preprocessed" / "raw float32"). False with err set (one
 * line naming the file and the way out). */
bool cc_input_tensor_load(const char *path, const struct cc_model *m, float *x, size_t count,
                          char *what, size_t what_size, struct cc_error *err);

#endif
