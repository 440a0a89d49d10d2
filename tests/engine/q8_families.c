/* camclass tests — the int8 kernel tests' FAMILY=yes|no arguments (see q8_families.h). */
#include <string.h>

#include "q8_families.h"
#include "testutil.h"

/* The family an argument FAMILY=yes|no names (-1: none) and what it says (yes). */
static int family_of(const char *arg, bool *yes)
{
    const char *eq = strchr(arg, '=');
    *yes = eq && !strcmp(eq, "=yes");
    if (!eq || (!*yes && strcmp(eq, "=no")))
        return -1;
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++) {
        const char *name = cc_fq8_isa_name((enum cc_fq8_isa)isa);
        if (strlen(name) == (size_t)(eq - arg) && !strncmp(arg, name, strlen(name)))
            return isa;
    }
    return -1;
}

void q8_families_wanted(int argc, char **argv, bool (*runs)(enum cc_fq8_isa isa),
                        bool want[CC_FQ8_ISA_COUNT])
{
    for (int isa = 0; isa < CC_FQ8_ISA_COUNT; isa++)
        want[isa] = argc < 2;
    for (int i = 1; i < argc; i++) {
        bool yes;
        int isa = family_of(argv[i], &yes);
        if (!CHECKF(isa >= 0, "argument %s: want FAMILY=yes or FAMILY=no", argv[i]))
            continue;
        want[isa] = yes;
        bool has = runs((enum cc_fq8_isa)isa);
        CHECKF(yes == has, "%s, but this host %s %s's kernels", argv[i],
               has ? "runs" : "does not run", cc_fq8_isa_name((enum cc_fq8_isa)isa));
    }
}
