#version 450
// max_pool2d (MAX) and avg_pool2d, NCHW, with PyTorch's semantics exactly as cc_cpu_pool2d
// (engine/cpu/ref_ops.c) computes them: each output's window starts at (oy*SH - PADT,
// ox*SW - PADL), is clipped to the padded input (what count_include_pad counts) and then to
// the input itself (what is read); padding is -inf for max and 0 for avg. The host computes
// HO and WO (ceil_mode is in them).
// One invocation computes PX consecutive outputs of one row (PX = 4 where the windows of a row
// overlap, else 1): each row of taps is loaded once for all PX windows (SEG input columns
// instead of PX*KW loads; 3x3 stride 1 pools ran 2x faster on lavapipe than with one output
// per invocation). The window is unrolled (specialization constants) and branch-free: taps
// outside the input read a clamped address and are replaced by the neutral value, and the sum
// runs in the reference's order, so results match it exactly.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int C = 1;
layout(constant_id = 1) const int H = 1;  // input height, width
layout(constant_id = 2) const int W = 1;
layout(constant_id = 3) const int HO = 1; // output height, width
layout(constant_id = 4) const int WO = 1;
layout(constant_id = 5) const int KH = 1; // window
layout(constant_id = 6) const int KW = 1;
layout(constant_id = 7) const int SH = 1; // stride
layout(constant_id = 8) const int SW = 1;
layout(constant_id = 9) const int PADT = 0; // padding top, left, bottom, right
layout(constant_id = 10) const int PADL = 0;
layout(constant_id = 11) const int PADB = 0;
layout(constant_id = 12) const int PADR = 0;
layout(constant_id = 13) const int INCLUDE_PAD = 1; // avg: count_include_pad
layout(constant_id = 14) const int PX = 1;          // outputs per invocation (1 or 4)

const int WB = (WO + PX - 1) / PX;      // invocations per output row
const int SEG = (PX - 1) * SW + KW;     // input columns a row of taps reads
const bool STORE4 = PX == 4 && WO % 4 == 0;

layout(binding = 0) uniform samplerBuffer X; // (C, H, W)
layout(binding = 1, std430) writeonly buffer Y { vec4 y4[]; }; // (C, HO, WO) floats

#ifdef MAX
const float NEUTRAL = -1.0 / 0.0;
#else
const float NEUTRAL = 0.0;
#endif

void main()
{
    int idx = int(gl_GlobalInvocationID.x);
    if (idx >= C * HO * WB)
        return;
    int c = idx / (HO * WB);
    int oy = (idx - c * HO * WB) / WB;
    int ox0 = (idx - (c * HO + oy) * WB) * PX;
    int hs = oy * SH - PADT, ws = ox0 * SW - PADL;
    float acc[PX];
    for (int j = 0; j < PX; j++)
        acc[j] = NEUTRAL;
    for (int ky = 0; ky < KH; ky++) {
        int iy = hs + ky;
        bool yin = iy >= 0 && iy < H;
        int row = (c * H + clamp(iy, 0, H - 1)) * W;
        float r[SEG];
        for (int e = 0; e < SEG; e++) {
            int ix = ws + e;
            float v = texelFetch(X, row + clamp(ix, 0, W - 1)).x;
            r[e] = yin && ix >= 0 && ix < W ? v : NEUTRAL;
        }
        for (int j = 0; j < PX; j++) {
            for (int kx = 0; kx < KW; kx++) {
#ifdef MAX
                acc[j] = max(acc[j], r[j * SW + kx]);
#else
                acc[j] += r[j * SW + kx];
#endif
            }
        }
    }
#ifndef MAX
    int he = min(hs + KH, H + PADB);
    for (int j = 0; j < PX; j++) {
        int wsj = ws + j * SW, we = min(wsj + KW, W + PADR);
        int count = INCLUDE_PAD != 0 ? (he - hs) * (we - wsj)
                                     : (min(he, H) - max(hs, 0)) * (min(we, W) - max(wsj, 0));
        acc[j] /= float(count);
    }
#endif
    int base = (c * HO + oy) * WO + ox0;
    if (STORE4) { // one vec4 store (about the cost of a scalar one on CPU drivers)
        y4[base / 4] = vec4(acc[0], acc[min(1, PX - 1)], acc[min(2, PX - 1)], acc[min(3, PX - 1)]);
    } else {
        for (int j = 0; j < PX; j++) {
            int i = base + j;
            if (ox0 + j < WO)
                y4[i / 4][i % 4] = acc[j];
        }
    }
}
