/* camclass — poisoning the CPU backends' working memory (internal to engine/).
 *
 * With struct cc_engine_options.poison, the CPU backends (cpu, ref) fill every buffer a run
 * writes before reading (activation arena, relayout and type copies, scratch, the padding after
 * them) with a pattern before each run and each load-time timing run. A result that depends on
 * memory the run did not write is then wrong on every host, not only where the bytes left there
 * happen to differ (a kernel test once passed by luck on two hosts of three that way).
 *
 * f32 values get a signalling NaN (0x7fa00000), int8 values -128 (0x80): neither is a value a
 * correct run leaves behind by chance, and a NaN read into a sum spreads to the output.
 */
#ifndef CC_POISON_H
#define CC_POISON_H

#include <stddef.h>

enum { CC_POISON_I8 = 0x80 };
#define CC_POISON_F32_BITS 0x7fa00000u

/* Fills bytes bytes at p with the f32 pattern (a tail of under 4 bytes with its first bytes). */
void cc_poison_f32(void *p, size_t bytes);

/* Fills bytes bytes at p with the int8 pattern. */
void cc_poison_i8(void *p, size_t bytes);

#endif
