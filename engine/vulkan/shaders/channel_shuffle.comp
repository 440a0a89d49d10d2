#version 450
// ShuffleNet's channel shuffle, NCHW: output channel i * GROUPS + j is input channel
// j * (C / GROUPS) + i (cc_ref_channel_shuffle). A gather of whole channels: one invocation
// moves one texel, a vec4 of 4 pixels when HW % 4 == 0 (bound as vec4 texels then), else one.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int C = 1;
layout(constant_id = 1) const int HW = 1;
layout(constant_id = 2) const int GROUPS = 1;

const bool V4 = HW % 4 == 0;
const int Q = V4 ? HW / 4 : HW; // texels per channel

layout(binding = 0) uniform samplerBuffer X; // (C, HW)
layout(binding = 1, std430) writeonly buffer Y { vec4 y4[]; }; // (C, HW) floats

void main()
{
    int t = int(gl_GlobalInvocationID.x);
    if (t >= C * Q)
        return;
    int oc = t / Q;
    int i = oc / GROUPS;
    int ic = (oc - i * GROUPS) * (C / GROUPS) + i;
    vec4 v = texelFetch(X, ic * Q + (t - oc * Q));
    if (V4)
        y4[t] = v;
    else
        y4[t / 4][t % 4] = v.x;
}
