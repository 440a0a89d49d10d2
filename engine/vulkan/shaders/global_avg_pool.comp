#version 450
// Global average pool: y[c] = mean over HW of x[c].
// GROUP = 0: one invocation per channel sums its HW values (small maps: 7x7 to 14x14).
// GROUP = 1: one workgroup per channel; its invocations sum strided values, then a shared-
// memory reduction (large maps). Each invocation then loops at most HW / WG times: one f32
// running sum over a million values loses digits, and llvmpipe (a conformant driver) stops a
// shader's loops after 65 535 iterations in all, which averaged a 1025x1365 map to 1/21 of
// its mean in one invocation.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int C = 1;
layout(constant_id = 1) const int HW = 1;
layout(constant_id = 2) const int GROUP = 0;

layout(binding = 0) uniform samplerBuffer X; // (C, HW)
layout(binding = 1, std430) writeonly buffer Y { float y[]; }; // (C)

shared float red[gl_WorkGroupSize.x];

void main()
{
    if (GROUP == 0) {
        int c = int(gl_GlobalInvocationID.x);
        if (c >= C)
            return;
        float s = 0.0;
        for (int i = 0; i < HW; i++)
            s += texelFetch(X, c * HW + i).x;
        y[c] = s * (1.0 / float(HW));
        return;
    }
    int c = int(gl_WorkGroupID.x);
    int t = int(gl_LocalInvocationID.x);
    int nt = int(gl_WorkGroupSize.x);
    float s = 0.0;
    for (int i = t; i < HW; i += nt)
        s += texelFetch(X, c * HW + i).x;
    red[t] = s;
    barrier();
    for (int k = nt / 2; k > 0; k /= 2) {
        if (t < k)
            red[t] += red[t + k];
        barrier();
    }
    if (t == 0)
        y[c] = red[0] * (1.0 / float(HW));
}
