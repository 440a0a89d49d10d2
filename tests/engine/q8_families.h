/* camclass tests — the arguments FAMILY=yes|no of the int8 kernel tests (test_fused_q8,
 * test_q8_gemm): which of fused_q8.h's kernel families (enum cc_fq8_isa, by name: c, neon,
 * neondot, ...) a run checks, and what the host must say about them (the run-time choice:
 * under qemu-aarch64 -cpu cortex-a72 there is no sdot, under -cpu max there is;
 * tests/engine/meson.build). */
#ifndef CC_TEST_Q8_FAMILIES_H
#define CC_TEST_Q8_FAMILIES_H

#include <stdbool.h>

#include "fused_q8.h"

/* want[isa]: whether argv asks for isa (every family when there are no arguments; else only
 * those named =yes). A failed check (testutil) for an argument that names no family, a
 * family named =yes that runs(isa) says this host lacks, or one named =no that it has. */
void q8_families_wanted(int argc, char **argv, bool (*runs)(enum cc_fq8_isa isa),
                        bool want[CC_FQ8_ISA_COUNT]);

#endif
