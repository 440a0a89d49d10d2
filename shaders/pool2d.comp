#version 450
// max_pool2d (MAX) and avg_pool2d, NCHW, with PyTorch's semantics exactly as cc_cpu_pool2d
// (engine/cpu_ops.c) computes them: each output's window starts at (oy*SH - PADT,
// ox*SW - PADL), is clipped to the padded input (what count_include_pad counts) and then to
// the input itself (what is read); padding is -inf for max and 0 for avg. The host computes
// HO and WO (ceil_mode is in them). One invocation per output element; the KH×KW window is
// unrolled (specialization constants) and branch-free: taps outside the input read a clamped
// address and are replaced by the neutral value, and the sum runs in the reference's order.
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

layout(binding = 0) uniform samplerBuffer X; // (C, H, W)
layout(binding = 1, std430) writeonly buffer Y { float y[]; }; // (C, HO, WO)

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= C * HO * WO)
        return;
    int c = i / (HO * WO);
    int oy = (i - c * HO * WO) / WO;
    int ox = i - (c * HO + oy) * WO;
    int hs = oy * SH - PADT, ws = ox * SW - PADL;
#ifdef MAX
    const float NEUTRAL = -1.0 / 0.0;
#else
    const float NEUTRAL = 0.0;
#endif
    float acc = NEUTRAL;
    for (int ky = 0; ky < KH; ky++) {
        int iy = hs + ky;
        bool yin = iy >= 0 && iy < H;
        int row = (c * H + clamp(iy, 0, H - 1)) * W;
        for (int kx = 0; kx < KW; kx++) {
            int ix = ws + kx;
            float v = texelFetch(X, row + clamp(ix, 0, W - 1)).x;
            v = yin && ix >= 0 && ix < W ? v : NEUTRAL;
#ifdef MAX
            acc = max(acc, v);
#else
            acc += v;
#endif
        }
    }
#ifndef MAX
    int he = min(hs + KH, H + PADB), we = min(ws + KW, W + PADR);
    int count = INCLUDE_PAD != 0 ? (he - hs) * (we - ws)
                                 : (min(he, H) - max(hs, 0)) * (min(we, W) - max(ws, 0));
    acc /= float(count);
#endif
    y[i] = acc;
}
