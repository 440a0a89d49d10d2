#version 450
// Element-wise ops with a fused clamp, one element per invocation:
// ADD: y = clamp(a + b); otherwise (clamp op): y = clamp(a).
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int N = 1; // elements
layout(constant_id = 1) const float ACT_MIN = -1.0 / 0.0;
layout(constant_id = 2) const float ACT_MAX = 1.0 / 0.0;

layout(binding = 0) uniform samplerBuffer A;
#ifdef ADD
layout(binding = 1) uniform samplerBuffer B;
layout(binding = 2, std430) writeonly buffer Y { float y[]; };
#else
layout(binding = 1, std430) writeonly buffer Y { float y[]; };
#endif

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= N)
        return;
    float v = texelFetch(A, i).x;
#ifdef ADD
    v += texelFetch(B, i).x;
#endif
    y[i] = clamp(v, ACT_MIN, ACT_MAX);
}
