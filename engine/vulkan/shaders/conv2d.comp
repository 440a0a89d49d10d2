#version 450
// General 2-D convolution, NCHW, any groups / stride / padding / dilation, fused bias and
// activation (act.glsl).
// One invocation computes PX (8 or 16, chosen per node) consecutive output columns of one
// output row for OCB output channels of one group; the channel block is the workgroup's y so that its weight loads are
// uniform. Every shape is a specialization constant, so the KH×KW loops unroll (a depthwise
// 3×3 node becomes straight-line code) and all index arithmetic folds.
//   default: OCB = 1, weights (O, C/GROUPS, KH, KW) as scalars (depthwise and any grouping).
//   OC4:     OCB = 4 (needs (O/GROUPS) % 4 == 0): each input load feeds 4 output channels;
//            weights repacked at upload as vec4 texels (O/4, C/GROUPS, KH, KW).
//   WEIGHTS_I8: the same weights as int8 (R8_SINT texels, R8G8B8A8_SINT with OC4) and the
//            per-output-channel scales in binding 4 (laid out as the bias): the sums are of
//            float(q)·x, scaled once per output. f32 arithmetic only.
// Results are stored 4 columns at a time when WO % 4 == 0: a vec4 store costs about as much as
// a scalar one on CPU drivers, which store lane by lane. Likewise, when W % 4 == 0 the input is
// bound as vec4 texels and each row of taps is read as a few aligned vec4s (QUADS) instead of
// one load per column; out-of-image quads read as zero, which is the padding.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int C = 1;       // input channels
layout(constant_id = 1) const int H = 1;       // input height
layout(constant_id = 2) const int W = 1;       // input width
layout(constant_id = 3) const int O = 1;       // output channels
layout(constant_id = 4) const int HO = 1;      // output height
layout(constant_id = 5) const int WO = 1;      // output width
layout(constant_id = 6) const int KH = 1;
layout(constant_id = 7) const int KW = 1;
layout(constant_id = 8) const int SH = 1;      // stride
layout(constant_id = 9) const int SW = 1;
layout(constant_id = 10) const int DH = 1;     // dilation
layout(constant_id = 11) const int DW = 1;
layout(constant_id = 12) const int PADT = 0;   // padding top, left (bottom/right are implied
layout(constant_id = 13) const int PADL = 0;   // by HO/WO)
layout(constant_id = 14) const int GROUPS = 1;
layout(constant_id = 15) const float ACT_MIN = -1.0 / 0.0; // fused activation's clamp
layout(constant_id = 16) const float ACT_MAX = 1.0 / 0.0;

layout(constant_id = 17) const int PX = 8; // output columns per invocation, a multiple of 4
layout(constant_id = 18) const int ACT_KIND = 0; // fused activation, see act.glsl
#include "act.glsl"
#ifdef OC4
#define ACC vec4
#define OCB 4
#else
#define ACC float
#define OCB 1
#endif

layout(binding = 0) uniform samplerBuffer X;     // (C, H, W); vec4 texels when W % 4 == 0
#ifdef WEIGHTS_I8
layout(binding = 1) uniform isamplerBuffer Wt;   // see above
layout(binding = 4) uniform samplerBuffer Scale; // (O) [vec4 (O/4) with OC4]
#else
layout(binding = 1) uniform samplerBuffer Wt;    // see above
#endif
layout(binding = 2) uniform samplerBuffer Bias;  // (O) [vec4 (O/4) with OC4]; zeros if none
layout(binding = 3, std430) writeonly buffer Y { vec4 y4[]; }; // (O, HO, WO) floats

const int CG = C / GROUPS;
const int OG = O / GROUPS;
const int WB = (WO + PX - 1) / PX;

const bool XVEC4 = W % 4 == 0;
const int SEG = (PX - 1) * SW + (KW - 1) * DW + 1; // input columns read by one row of taps
const int OFF = (4 - PADL % 4) % 4; // first column's place in its quad (PX % 4 == 0)
const int NQ = (OFF + SEG + 3) / 4; // quads covering a row of taps
#define MAXQ 8
const bool QUADS = XVEC4 && NQ <= MAXQ;

/* Input element i (flat index), from either texel format. */
float x_at(int i)
{
    return XVEC4 ? texelFetch(X, i / 4)[i % 4] : texelFetch(X, i).x;
}

/* Stores the PX columns of one output channel row starting at flat float index base. */
void store_row(int base, int ox0, float v[PX])
{
    if (WO % 4 == 0) {
        for (int q = 0; q < PX / 4; q++) {
            if (ox0 + 4 * q < WO)
                y4[base / 4 + q] = vec4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
        }
    } else {
        for (int j = 0; j < PX; j++) {
            int i = base + j;
            if (ox0 + j < WO)
                y4[i / 4][i % 4] = v[j];
        }
    }
}

void main()
{
    int idx = int(gl_GlobalInvocationID.x);
    int ob = int(gl_WorkGroupID.y); // output channel block
    if (idx >= HO * WB)
        return;
    int oy = idx / WB;
    int ox0 = (idx - oy * WB) * PX;
    int g = ob * OCB / OG;
    ACC b = ACC(texelFetch(Bias, ob));
    ACC acc[PX];
    for (int j = 0; j < PX; j++) {
#ifdef WEIGHTS_I8
        acc[j] = ACC(0.0); // sum of q·x; bias and scale come last
#else
        acc[j] = b;
#endif
    }
    int iy0 = oy * SH - PADT;
    int ix0 = ox0 * SW - PADL;
    for (int ci = 0; ci < CG; ci++) {
        int cbase = (g * CG + ci) * H;
        int wbase = (ob * CG + ci) * KH * KW;
        for (int ky = 0; ky < KH; ky++) {
            int iy = iy0 + ky * DH;
            bool yin = iy >= 0 && iy < H;
            int row = (cbase + clamp(iy, 0, H - 1)) * W;
            if (QUADS) {
                vec4 q[MAXQ];
                int q0 = (ix0 - OFF) / 4; // exact: ix0 - OFF is a multiple of 4
                for (int k = 0; k < NQ; k++) {
                    int qi = q0 + k;
                    vec4 v = texelFetch(X, row / 4 + clamp(qi, 0, W / 4 - 1));
                    q[k] = (yin && qi >= 0 && qi < W / 4) ? v : vec4(0.0);
                }
                for (int kx = 0; kx < KW; kx++) {
                    ACC w = ACC(texelFetch(Wt, wbase + ky * KW + kx));
                    for (int j = 0; j < PX; j++) {
                        int e = OFF + j * SW + kx * DW;
                        acc[j] += q[e / 4][e % 4] * w;
                    }
                }
                continue;
            }
            for (int kx = 0; kx < KW; kx++) {
                ACC w = ACC(texelFetch(Wt, wbase + ky * KW + kx));
                for (int j = 0; j < PX; j++) {
                    int ix = ix0 + (j * SW + kx * DW);
                    float v = x_at(row + clamp(ix, 0, W - 1));
                    acc[j] += (yin && ix >= 0 && ix < W) ? v * w : ACC(0.0);
                }
            }
        }
    }
#ifdef WEIGHTS_I8
    ACC sc = ACC(texelFetch(Scale, ob));
    for (int j = 0; j < PX; j++)
        acc[j] = b + acc[j] * sc;
#endif
    for (int j = 0; j < PX; j++)
        acc[j] = act(acc[j]); // vec4 with OC4: 4 channels at once
    for (int k = 0; k < OCB; k++) {
        float v[PX];
        for (int j = 0; j < PX; j++) {
#ifdef OC4
            v[j] = acc[j][k];
#else
            v[j] = acc[j];
#endif
        }
        store_row(((ob * OCB + k) * HO + oy) * WO + ox0, ox0, v);
    }
}
