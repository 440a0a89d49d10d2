#version 450
// Softmax over N values in one workgroup: max, sum of exp, scale, with shared-memory
// reductions.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int N = 1;

layout(binding = 0) uniform samplerBuffer X; // (N)
layout(binding = 1, std430) writeonly buffer Y { float y[]; }; // (N)

shared float red[gl_WorkGroupSize.x];

void main()
{
    int t = int(gl_LocalInvocationID.x);
    int nt = int(gl_WorkGroupSize.x);
    float m = -1.0 / 0.0;
    for (int i = t; i < N; i += nt)
        m = max(m, texelFetch(X, i).x);
    red[t] = m;
    barrier();
    for (int s = nt / 2; s > 0; s /= 2) {
        if (t < s)
            red[t] = max(red[t], red[t + s]);
        barrier();
    }
    m = red[0];
    barrier();
    float sum = 0.0;
    for (int i = t; i < N; i += nt)
        sum += exp(texelFetch(X, i).x - m);
    red[t] = sum;
    barrier();
    for (int s = nt / 2; s > 0; s /= 2) {
        if (t < s)
            red[t] += red[t + s];
        barrier();
    }
    float inv = 1.0 / red[0];
    for (int i = t; i < N; i += nt)
        y[i] = exp(texelFetch(X, i).x - m) * inv;
}
