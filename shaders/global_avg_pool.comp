#version 450
// Global average pool: y[c] = mean over HW of x[c]. One invocation per channel.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int C = 1;
layout(constant_id = 1) const int HW = 1;

layout(binding = 0) uniform samplerBuffer X; // (C, HW)
layout(binding = 1, std430) writeonly buffer Y { float y[]; }; // (C)

void main()
{
    int c = int(gl_GlobalInvocationID.x);
    if (c >= C)
        return;
    float s = 0.0;
    for (int i = 0; i < HW; i++)
        s += texelFetch(X, c * HW + i).x;
    y[c] = s * (1.0 / float(HW));
}
