/* camclass — the Vulkan fault injection spec (see vk_fault.h). */
#include <stdlib.h>
#include <string.h>

#include "vk_fault.h"

bool cc_vk_fault_parse(const char *spec, struct cc_vk_fault *out, struct cc_error *err)
{
    static const struct {
        const char *name;
        enum cc_vk_fault_kind kind;
    } kinds[] = {
        {"alloc", CC_VK_FAULT_ALLOC}, {"oom", CC_VK_FAULT_OOM}, {"lost", CC_VK_FAULT_LOST}};
    *out = (struct cc_vk_fault){.kind = CC_VK_FAULT_NONE};
    if (!spec || !spec[0])
        return true;
    const char *colon = strchr(spec, ':');
    for (size_t i = 0; colon && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strlen(kinds[i].name) != (size_t)(colon - spec) ||
            strncmp(spec, kinds[i].name, (size_t)(colon - spec)) != 0)
            continue;
        char *end = NULL;
        long n = strtol(colon + 1, &end, 10);
        if (colon[1] < '0' || colon[1] > '9' || *end || n < 1 || n > 1000000000)
            break;
        *out = (struct cc_vk_fault){.kind = kinds[i].kind, .at = n};
        return true;
    }
    return cc_error_set(err,
                        "vk fault \"%s\": use alloc:N, oom:N or lost:N with N >= 1 (a test "
                        "option, see camclass(1))",
                        spec);
}

bool cc_vk_fault_valid(const char *spec, struct cc_error *err)
{
    struct cc_vk_fault f;
    return cc_vk_fault_parse(spec, &f, err);
}
