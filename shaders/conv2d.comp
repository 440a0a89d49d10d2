#version 450
// General 2-D convolution, NCHW, any groups / stride / padding / dilation, fused bias + clamp.
// One invocation computes PX consecutive output columns of one output row of one output
// channel; the channel is the workgroup's y so that its weight loads are uniform. Every shape
// is a specialization constant, so the KH×KW loops unroll (a depthwise 3×3 node becomes
// straight-line code) and all index arithmetic folds.
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
layout(constant_id = 15) const float ACT_MIN = -1.0 / 0.0; // fused clamp
layout(constant_id = 16) const float ACT_MAX = 1.0 / 0.0;

layout(binding = 0) uniform samplerBuffer X;     // (C, H, W)
layout(binding = 1) uniform samplerBuffer Wt;    // (O, C/GROUPS, KH, KW)
layout(binding = 2) uniform samplerBuffer Bias;  // (O), zeros when the node has no bias
layout(binding = 3, std430) writeonly buffer Y { float y[]; }; // (O, HO, WO)

#ifndef PX
#define PX 8
#endif
const int CG = C / GROUPS;
const int OG = O / GROUPS;
const int WB = (WO + PX - 1) / PX;

void main()
{
    int idx = int(gl_GlobalInvocationID.x);
    int o = int(gl_WorkGroupID.y);
    if (idx >= HO * WB)
        return;
    int oy = idx / WB;
    int ox0 = (idx - oy * WB) * PX;
    int g = o / OG;
    float b = texelFetch(Bias, o).x;
    float acc[PX];
    for (int j = 0; j < PX; j++)
        acc[j] = b;
    int iy0 = oy * SH - PADT;
    int ix0 = ox0 * SW - PADL;
    for (int ci = 0; ci < CG; ci++) {
        int cbase = (g * CG + ci) * H;
        int wbase = (o * CG + ci) * KH * KW;
        for (int ky = 0; ky < KH; ky++) {
            int iy = iy0 + ky * DH;
            bool yin = iy >= 0 && iy < H;
            int row = (cbase + clamp(iy, 0, H - 1)) * W;
            for (int kx = 0; kx < KW; kx++) {
                float w = texelFetch(Wt, wbase + ky * KW + kx).x;
                for (int j = 0; j < PX; j++) {
                    int ix = ix0 + (j * SW + kx * DW);
                    float v = texelFetch(X, row + clamp(ix, 0, W - 1)).x;
                    acc[j] += (yin && ix >= 0 && ix < W) ? v * w : 0.0;
                }
            }
        }
    }
    int obase = (o * HO + oy) * WO;
    for (int j = 0; j < PX; j++) {
        if (ox0 + j < WO)
            y[obase + ox0 + j] = clamp(acc[j], ACT_MIN, ACT_MAX);
    }
}
