/* camclass — Vulkan fault injection, the spec half: what `vk_fault` (engine option; camclass
 * --vk-fault) asks for, parsed without Vulkan so that the command line can check it (cli.c).
 * vk_context.c counts the calls and makes the chosen one fail (docs/RELIABILITY.md, "Fault
 * injection"). A test option: nothing is injected unless it is given.
 */
#ifndef CC_VK_FAULT_H
#define CC_VK_FAULT_H

#include <stdbool.h>

#include "error.h"

enum cc_vk_fault_kind {
    CC_VK_FAULT_NONE,
    CC_VK_FAULT_ALLOC, // "alloc:N": the Nth vkAllocateMemory -> VK_ERROR_OUT_OF_DEVICE_MEMORY
    CC_VK_FAULT_OOM,   // "oom:N": the Nth armed submission -> VK_ERROR_OUT_OF_DEVICE_MEMORY
    CC_VK_FAULT_LOST,  // "lost:N": the Nth armed submission's wait -> VK_ERROR_DEVICE_LOST, and
                       // every submission after it too (a lost device stays lost)
};
struct cc_vk_fault {
    enum cc_vk_fault_kind kind;
    long at;    // the call that fails, 1 = the first
    long calls; // calls counted so far
    bool armed; // submissions count only once armed: the backend arms it when its load is done
    bool lost;  // a LOST fault has fired
};

/* Parses "alloc:N", "oom:N" or "lost:N" (N >= 1); NULL or "" is no fault. False with err set
 * (naming the spec and the forms) when it is none of these. */
bool cc_vk_fault_parse(const char *spec, struct cc_vk_fault *out, struct cc_error *err);

/* Whether spec parses (cc_vk_fault_parse without the result): engine.h's cc_engine_vk_fault_valid.
 */
bool cc_vk_fault_valid(const char *spec, struct cc_error *err);

#endif
