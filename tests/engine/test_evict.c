/* camclass — writing memory out of the CPU caches (engine/cpu/evict.h), which the CPU backend
 * does before each load-time timing run of a fused block against its layers: the memory's
 * contents stay as they were, to the byte, for ranges that start and end inside cache lines and
 * span many (3 MB: more than any L2); an empty range or NULL is nothing; the L2 size is a size.
 * Whether the lines leave the caches is a matter of speed (docs/PERFORMANCE.md), not tested. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "testutil.h"

enum { BYTES = 3 << 20 };

/* Evicts [off, off + n) of a patterned buffer (and a guard on either side), then checks every
 * byte. */
static void check_range(unsigned char *buf, size_t off, size_t n)
{
    for (size_t i = 0; i < BYTES; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    cc_evict(buf + off, n);
    size_t bad = BYTES;
    for (size_t i = 0; i < BYTES && bad == BYTES; i++)
        if (buf[i] != (unsigned char)(i * 131 + 7))
            bad = i;
    CHECKF(bad == BYTES, "evict [%zu, +%zu): byte %zu changed", off, n, bad);
}

int main(void)
{
    unsigned char *buf = malloc(BYTES);
    if (!CHECK(buf != NULL))
        return tu_exit_code();
    check_range(buf, 0, BYTES);
    check_range(buf, 3, BYTES - 70); // starts and ends inside a line
    check_range(buf, 63, 2);         // two lines, one byte each
    check_range(buf, 100, 0);
    cc_evict(NULL, 100);
    size_t l2 = cc_evict_l2_bytes();
    CHECKF(l2 >= 16384 && l2 <= ((size_t)1 << 30), "L2: %zu bytes", l2);
    free(buf);
    return tu_exit_code();
}
