#version 450
// Pointwise (1×1, stride 1, no padding, groups 1) convolution, NCHW, fused bias + activation:
// a matrix product Y(O, HW) = Wt(O, C) · X(C, HW). Register-blocked: one invocation computes
// OB output channels × PB pixels (both multiples of 4, chosen per node: specialization
// constants); the channel block is the workgroup's y so that weight loads are uniform. Weights
// are repacked at upload as vec4 texels (O4, C) holding 4 consecutive output channels, O
// padded with zeros to a multiple of OB.
// VEC4: pixels are read and written as vec4 (needs HW % 4 == 0); otherwise scalar.
// WEIGHTS_I8: the same weights as int8 R8G8B8A8_SINT texels and the per-output-channel scales
// in binding 4 (vec4 (O4), as the bias): the sums are of float(q)·x, scaled once per output.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int C = 1;   // input channels
layout(constant_id = 1) const int HW = 1;  // pixels
layout(constant_id = 2) const int O = 1;   // output channels
layout(constant_id = 3) const float ACT_MIN = -1.0 / 0.0;
layout(constant_id = 4) const float ACT_MAX = 1.0 / 0.0;

layout(constant_id = 5) const int OB = 8;  // output channels per invocation
layout(constant_id = 6) const int PB = 8;  // pixels per invocation
// FLAT = 1: invocation x enumerates (pixel block, channel block) pairs, pixel block fastest,
// so that no subgroup is left part-empty when a row of pixel blocks is not a multiple of the
// subgroup size (a 7x7 layer has 7 blocks of 8 pixels); FLAT = 0: channel block = workgroup y
// (weight loads uniform across the workgroup).
layout(constant_id = 7) const int FLAT = 0;
layout(constant_id = 8) const int ACT_KIND = 0; // fused activation, see act.glsl
#include "act.glsl"
const int NV = OB / 4; // weight vec4s per input channel
const int NQ = PB / 4; // pixel quads per invocation

layout(binding = 0) uniform samplerBuffer X;    // (C, HW): vec4 texels when VEC4
#ifdef WEIGHTS_I8
layout(binding = 1) uniform isamplerBuffer Wt;   // ivec4 (O4, C) of int8 values
layout(binding = 4) uniform samplerBuffer Scale; // vec4 (O4)
#else
layout(binding = 1) uniform samplerBuffer Wt;   // vec4 (O4, C)
#endif
layout(binding = 2) uniform samplerBuffer Bias; // vec4 (O4)
#ifdef VEC4
layout(binding = 3, std430) writeonly buffer Y { vec4 y[]; }; // (O, HW/4)
const int HWQ = HW / 4;
#else
layout(binding = 3, std430) writeonly buffer Y { float y[]; }; // (O, HW)
#endif

void main()
{
    int p0, ob;
    if (FLAT != 0) {
        const int NPB = (HW + PB - 1) / PB; // pixel blocks
        int i = int(gl_GlobalInvocationID.x);
        if (i >= NPB * ((O + OB - 1) / OB))
            return;
        ob = i / NPB;
        p0 = (i - ob * NPB) * PB;
    } else {
        p0 = int(gl_GlobalInvocationID.x) * PB;
        ob = int(gl_WorkGroupID.y);
        if (p0 >= HW)
            return;
    }
    vec4 acc[OB][NQ];
    for (int v = 0; v < NV; v++) {
#ifdef WEIGHTS_I8
        vec4 b = vec4(0.0); // sum of q·x; bias and scale come last
#else
        vec4 b = texelFetch(Bias, ob * NV + v);
#endif
        for (int q = 0; q < NQ; q++) {
            acc[v * 4 + 0][q] = vec4(b.x);
            acc[v * 4 + 1][q] = vec4(b.y);
            acc[v * 4 + 2][q] = vec4(b.z);
            acc[v * 4 + 3][q] = vec4(b.w);
        }
    }
    for (int c = 0; c < C; c++) {
        vec4 x[NQ];
#ifdef VEC4
        for (int q = 0; q < NQ; q++)
            x[q] = texelFetch(X, c * HWQ + min(p0 / 4 + q, HWQ - 1));
#else
        for (int q = 0; q < NQ; q++) {
            int p = c * HW + p0 + q * 4;
            int last = c * HW + HW - 1;
            x[q] = vec4(texelFetch(X, min(p, last)).x, texelFetch(X, min(p + 1, last)).x,
                        texelFetch(X, min(p + 2, last)).x, texelFetch(X, min(p + 3, last)).x);
        }
#endif
        for (int v = 0; v < NV; v++) {
            vec4 w = vec4(texelFetch(Wt, (ob * NV + v) * C + c));
            for (int q = 0; q < NQ; q++) {
                acc[v * 4 + 0][q] += w.x * x[q];
                acc[v * 4 + 1][q] += w.y * x[q];
                acc[v * 4 + 2][q] += w.z * x[q];
                acc[v * 4 + 3][q] += w.w * x[q];
            }
        }
    }
#ifdef WEIGHTS_I8
    for (int v = 0; v < NV; v++) {
        vec4 b = texelFetch(Bias, ob * NV + v), sc = texelFetch(Scale, ob * NV + v);
        for (int q = 0; q < NQ; q++) {
            acc[v * 4 + 0][q] = b.x + acc[v * 4 + 0][q] * sc.x;
            acc[v * 4 + 1][q] = b.y + acc[v * 4 + 1][q] * sc.y;
            acc[v * 4 + 2][q] = b.z + acc[v * 4 + 2][q] * sc.z;
            acc[v * 4 + 3][q] = b.w + acc[v * 4 + 3][q] * sc.w;
        }
    }
#endif
    for (int k = 0; k < OB; k++) {
        int o = ob * OB + k;
        if (o >= O)
            break;
        for (int q = 0; q < NQ; q++) {
            vec4 r = act(acc[k][q]);
#ifdef VEC4
            if (p0 / 4 + q < HWQ)
                y[o * HWQ + p0 / 4 + q] = r;
#else
            for (int l = 0; l < 4; l++) {
                if (p0 + q * 4 + l < HW)
                    y[o * HW + p0 + q * 4 + l] = r[l];
            }
#endif
        }
    }
}
