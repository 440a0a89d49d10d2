#version 450
// Fully connected: y[n] = act(bias[n] + sum_k w[n][k] x[k]) (act.glsl). One invocation per output;
// weights repacked at upload as vec4 texels (N, K4), K padded with zeros to a multiple of 4,
// so that each invocation reads 4 weights per load.
// WEIGHTS_I8: the same weights as int8 R8G8B8A8_SINT texels and the per-output scales in
// binding 4: y[n] = act(bias[n] + scale[n] · sum_k float(q[n][k]) x[k]).
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int K = 1;
layout(constant_id = 1) const int N = 1;
layout(constant_id = 2) const float ACT_MIN = -1.0 / 0.0;
layout(constant_id = 3) const float ACT_MAX = 1.0 / 0.0;
layout(constant_id = 4) const int ACT_KIND = 0; // fused activation, see act.glsl
#include "act.glsl"

const int K4 = (K + 3) / 4;

layout(binding = 0) uniform samplerBuffer X;    // (K)
#ifdef WEIGHTS_I8
layout(binding = 1) uniform isamplerBuffer Wt;   // ivec4 (N, K4) of int8 values
layout(binding = 4) uniform samplerBuffer Scale; // (N)
#else
layout(binding = 1) uniform samplerBuffer Wt;   // vec4 (N, K4)
#endif
layout(binding = 2) uniform samplerBuffer Bias; // (N)
layout(binding = 3, std430) writeonly buffer Y { float y[]; }; // (N)

void main()
{
    int n = int(gl_GlobalInvocationID.x);
    if (n >= N)
        return;
    vec4 s = vec4(0.0);
    for (int k4 = 0; k4 < K4; k4++) {
        int k = k4 * 4;
        vec4 x = vec4(texelFetch(X, min(k, K - 1)).x, texelFetch(X, min(k + 1, K - 1)).x,
                      texelFetch(X, min(k + 2, K - 1)).x, texelFetch(X, min(k + 3, K - 1)).x);
        s += vec4(texelFetch(Wt, n * K4 + k4)) * x; // padded weights are 0
    }
#ifdef WEIGHTS_I8
    float sum = texelFetch(Scale, n).x * ((s.x + s.y) + (s.z + s.w));
#else
    float sum = (s.x + s.y) + (s.z + s.w);
#endif
    y[n] = act(texelFetch(Bias, n).x + sum);
}
