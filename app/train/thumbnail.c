/* camclass-train — grey thumbnails of pictures (see thumbnail.h). */
#include <math.h>

#include "thumbnail.h"

void cc_thumbnail_of_tensor(const struct cc_input_spec *in, const float *x, int h, int w,
                            float *out)
{
    static const float rgb_weight[3] = {0.299f, 0.587f, 0.114f};
    float weight[3];
    for (int c = 0; c < 3; c++) // grey = sum of weight * (x * std + mean) * 255
        weight[c] = rgb_weight[in->color == CC_COLOR_BGR ? 2 - c : c] * 255.0f;
    for (int ty = 0; ty < CC_THUMB_SIDE; ty++) {
        int r0 = ty * h / CC_THUMB_SIDE, r1 = (ty + 1) * h / CC_THUMB_SIDE;
        r1 = r1 > r0 ? r1 : r0 + 1; // pictures under CC_THUMB_SIDE repeat rows
        for (int tx = 0; tx < CC_THUMB_SIDE; tx++) {
            int c0 = tx * w / CC_THUMB_SIDE, c1 = (tx + 1) * w / CC_THUMB_SIDE;
            c1 = c1 > c0 ? c1 : c0 + 1;
            double sum = 0;
            for (int c = 0; c < 3; c++) {
                const float *plane = x + (size_t)c * h * w;
                double s = 0;
                for (int r = r0; r < r1; r++)
                    for (int col = c0; col < c1; col++)
                        s += plane[(size_t)r * w + col];
                double n = (double)(r1 - r0) * (c1 - c0);
                sum += weight[c] * (s / n * in->std[c] + in->mean[c]);
            }
            out[ty * CC_THUMB_SIDE + tx] = (float)sum;
        }
    }
}

float cc_thumbnail_mean(const float *t)
{
    double s = 0;
    for (int i = 0; i < CC_THUMB_CELLS; i++)
        s += t[i];
    return (float)(s / CC_THUMB_CELLS);
}

bool cc_thumbnail_near(const float *a, const float *b)
{
    const float budget = CC_THUMB_MEAN_DIFF * CC_THUMB_CELLS;
    float sum = 0;
    for (int i = 0; i < CC_THUMB_CELLS; i++) {
        float d = fabsf(a[i] - b[i]);
        if (d > CC_THUMB_MAX_DIFF || (sum += d) > budget)
            return false;
    }
    return true;
}
