/* camclass fuzz target — the JSON config file parser (app/cli.c, cc_cli_apply_config_text):
 * the input is the config text. The first byte, when the input is long enough, picks options
 * "given on the command line" (parsed by cc_cli_parse first), so that the command-line-wins
 * paths are covered too. Keys and values are in config.dict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cli.c's one call into the engine. engine.c links every backend (Vulkan, XNNPACK), which the
 * fuzz build leaves out, so this stand-in takes its place here: the names of engine.c's
 * backends[] table, which is not what this target tests. */
bool cc_backend_kind_parse(const char *s, enum cc_backend_kind *out)
{
    static const char *const names[] = {"auto", "vulkan", "cpu", "ref"};
    for (int i = 0; s && i < 4; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum cc_backend_kind)i;
            return true;
        }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[8] = {"camclass"};
    int argc = 1;
    if (size > 1) {
        uint8_t pick = data[0];
        if (pick & 1)
            argv[argc++] = "--top-k=3";
        if (pick & 2)
            argv[argc++] = "--input=clip.y4m";
        if (pick & 4)
            argv[argc++] = "--camera=0";
        if (pick & 8)
            argv[argc++] = "--headless";
        if (pick & 16)
            argv[argc++] = "--size=320x240";
    }
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = 0;
    struct cc_cli cli;
    cc_cli_init(&cli);
    struct cc_error err = {{0}};
    if (cc_cli_parse(&cli, argc, argv, &err) == CC_CLI_OK) {
        bool ok = cc_cli_apply_config_text(&cli, text, "fuzz.json", &err);
        if (ok == !!err.msg[0])
            __builtin_trap();
    }
    cc_cli_finish(&cli);
    free(text);
    return 0;
}
