/* camclass — the engine's options (engine.h): their defaults, and the check of a value a caller
 * takes from its user before any engine exists. Apart from engine.c so that a program checking
 * its settings (the command line's parser, its fuzz target) needs no backend. */
#include "engine.h"
#include "vk_fault.h"

struct cc_engine_options cc_engine_options_default(void)
{
    return (struct cc_engine_options){
        .backend = CC_BACKEND_AUTO,
        .device_index = -1,
        .profile = false,
        .pipeline_cache = NULL,
        .notices = NULL,
        .cpu_threads = 0,
        .cpu_pointwise = CC_CPU_POINTWISE_MEASURE,
        .cpu_cache = NULL,
        .auto_cache = NULL,
        .vk_staging = false,
        .vk_profile = NULL,
        .cpu_fallback = false,
        .vk_fault = NULL,
        .poison = false,
        .tap = NULL,
    };
}

bool cc_engine_vk_fault_valid(const char *spec, struct cc_error *err)
{
    return cc_vk_fault_valid(spec, err);
}
