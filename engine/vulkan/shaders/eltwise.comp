#version 450
// Element-wise ops with a fused activation (act.glsl): ADD: y = act(a + b); MUL: y = act(a * b);
// otherwise (clamp op, any activation kind): y = act(a). When N % 4 == 0 the operands are bound
// as vec4 texels and one invocation does 4 elements (one vec4 load and store costs about what a
// scalar one does on CPU drivers); otherwise one element.
// MUL's b has N elements (B_EVERY = 1) or one per B_EVERY consecutive elements of a: a
// [1,C,1,1] scale of a [1,C,H,W] input (B_EVERY = H*W); such a b is bound as scalar texels.
layout(local_size_x_id = 100, local_size_y_id = 101, local_size_z_id = 102) in;

layout(constant_id = 0) const int N = 1; // elements
layout(constant_id = 1) const float ACT_MIN = -1.0 / 0.0;
layout(constant_id = 2) const float ACT_MAX = 1.0 / 0.0;
layout(constant_id = 3) const int ACT_KIND = 0;
#ifdef MUL
layout(constant_id = 4) const int B_EVERY = 1;
#endif
#include "act.glsl"

const bool V4 = N % 4 == 0;

layout(binding = 0) uniform samplerBuffer A;
#if defined(ADD) || defined(MUL)
layout(binding = 1) uniform samplerBuffer B;
layout(binding = 2, std430) writeonly buffer Y { vec4 y4[]; };
#else
layout(binding = 1, std430) writeonly buffer Y { vec4 y4[]; };
#endif

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= (V4 ? N / 4 : N))
        return;
    vec4 v = texelFetch(A, i);
#ifdef ADD
    v += texelFetch(B, i);
#endif
#ifdef MUL
    if (B_EVERY == 1) // b as a: same texel format
        v *= texelFetch(B, i);
    else if (!V4)
        v *= texelFetch(B, i / B_EVERY).x;
    else if (B_EVERY % 4 == 0) // the 4 elements share one scale
        v *= texelFetch(B, 4 * i / B_EVERY).x;
    else
        v *= vec4(texelFetch(B, 4 * i / B_EVERY).x, texelFetch(B, (4 * i + 1) / B_EVERY).x,
                  texelFetch(B, (4 * i + 2) / B_EVERY).x, texelFetch(B, (4 * i + 3) / B_EVERY).x);
#endif
    v = act(v);
    if (V4)
        y4[i] = v;
    else
        y4[i / 4][i % 4] = v.x;
}
