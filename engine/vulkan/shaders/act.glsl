// The fused activation of every kernel that applies one (conv2d, conv2d_pw, linear, eltwise),
// written once: cc_act_apply() in engine/model.c is the reference it must match (the kernel
// tests allow 1e-4; exp() here is within a few ulp of expf(), no faster approximation).
//
// The including shader declares three specialization constants before the #include:
//   ACT_KIND (int, enum cc_act_kind: 0 clamp, 1 sigmoid, 2 hardsigmoid, 3 hardswish, 4 silu),
//   ACT_MIN, ACT_MAX (float; the clamp range of kind 0, -inf and inf otherwise).
// ACT_KIND is a constant, so the driver folds the branches away when it specializes.
#ifndef CC_ACT_GLSL
#define CC_ACT_GLSL

vec4 act(vec4 x)
{
    if (ACT_KIND == 1) // sigmoid: 1 / (1 + e^-x); e^-x = inf gives 0, as expf does
        return 1.0 / (1.0 + exp(-x));
    if (ACT_KIND == 2) // hardsigmoid: clamp(x / 6 + 1/2, 0, 1)
        return clamp(x / 6.0 + 0.5, 0.0, 1.0);
    if (ACT_KIND == 3) // hardswish: x * hardsigmoid(x)
        return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    if (ACT_KIND == 4) // silu: x * sigmoid(x), written x / (1 + e^-x) as the reference is
        return x / (1.0 + exp(-x));
    return clamp(x, vec4(ACT_MIN), vec4(ACT_MAX));
}

float act(float x)
{
    return act(vec4(x)).x;
}

#endif
