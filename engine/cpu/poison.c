/* camclass — poisoning the CPU backends' working memory: see poison.h. */
#include <stdint.h>
#include <string.h>

#include "poison.h"

void cc_poison_f32(void *p, size_t bytes)
{
    const uint32_t bits = CC_POISON_F32_BITS;
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i += sizeof(bits))
        memcpy(b + i, &bits, bytes - i < sizeof(bits) ? bytes - i : sizeof(bits));
}

void cc_poison_i8(void *p, size_t bytes)
{
    memset(p, CC_POISON_I8, bytes);
}
