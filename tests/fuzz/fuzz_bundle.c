/* camclass fuzz target — the whole bundle loader on one zip file (engine/bundle/bundle.c,
 * engine/bundle/bundle_manifest.c and engine/bundle/bundle_zip.c through
 * cc_bundle_load_from_memory:
 * libzip's in-memory source, the entry-name checks, manifest.json, tensor data ranges, CRC-32
 * checks, labels.txt, the model builder and cc_model_finalize). Seeds:
 * tests/fuzz/corpus/bundle/ (small valid bundles, make_seeds.py). */
#include <stddef.h>
#include <stdint.h>

#include "bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cc_error err = {{0}};
    struct cc_model *m = cc_bundle_load_from_memory(data, size, "fuzz.ccm", &err);
    // Either a model or one line saying why not: never both, never neither.
    if (!m == !err.msg[0])
        __builtin_trap();
    cc_model_destroy(m);
    return 0;
}
