/* camclass — backend auto (engine/autoselect.c) with the real backends on a real bundle.
 *
 * Usage: test_autoselect BUNDLE
 *
 * - A first start measures both backends: one notice "auto: cpu X ms, vulkan (DEVICE) Y ms ->
 *   B", B is the backend with the smaller time and the one that runs, and the cache file gets
 *   a line for it.
 * - A second start takes the remembered choice (the notice says "measured earlier").
 * - A cache line forged to name the other backend is obeyed: the cache is really read.
 * - A corrupt cache file is ignored, measured again and rewritten; another thread count is
 *   another key; auto_cache "" writes nothing; NULL writes $XDG_CACHE_HOME/camclass/...;
 *   an unwritable cache costs one notice, not the engine.
 *
 * Without a Vulkan device this test FAILS: CI installs mesa-vulkan-drivers (lavapipe).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "testutil.h"

#define HEADER "camclass backend choices 1\n"

static char notice[1024];

/* Creates an auto engine; notice gets what it said (first line). */
static struct cc_engine *create(const char *bundle, const char *cache, int threads)
{
    struct cc_error err = {0};
    struct cc_engine_options o = cc_engine_options_default();
    o.pipeline_cache = "";
    o.auto_cache = cache;
    o.cpu_threads = threads;
    o.notices = tmpfile();
    struct cc_engine *e = cc_engine_create(bundle, &o, &err);
    notice[0] = 0;
    if (o.notices) {
        rewind(o.notices);
        size_t n = fread(notice, 1, sizeof(notice) - 1, o.notices);
        notice[n] = 0;
        fclose(o.notices);
    }
    CHECKF(e != NULL, "auto engine (cache %s): %s", cache ? cache : "default", err.msg);
    printf("notice: %s", notice);
    return e;
}

static char *read_text(const char *path)
{
    size_t size = 0;
    unsigned char *data = tu_read_file(path, &size);
    char *text = data ? realloc(data, size + 1) : NULL;
    if (text)
        text[size] = 0;
    return text;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; text && *text; text++)
        n += *text == '\n';
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s BUNDLE\n", argv[0]);
        return 2;
    }
    const char *bundle = argv[1];
    char dir[] = "/tmp/camclass-auto-XXXXXX";
    if (!CHECK(mkdtemp(dir) != NULL))
        return tu_exit_code();
    char cache[300];
    snprintf(cache, sizeof(cache), "%s/choices.txt", dir);

    // 1. Measured: the notice's times decide, the cache remembers.
    struct cc_engine *e = create(bundle, cache, 1);
    double cpu_ms = -1, vk_ms = -1;
    char device[256] = "", chosen[16] = "";
    const char *last_paren = strrchr(notice, ')');
    bool parsed =
        sscanf(notice, "camclass: auto: cpu %lf ms, vulkan (%255[^\n]", &cpu_ms, device) == 2 &&
        last_paren && sscanf(last_paren + 1, " %lf ms -> %15s", &vk_ms, chosen) == 2;
    CHECKF(parsed && strchr(notice, '\n') == notice + strlen(notice) - 1,
           "one measured notice line: %s", notice);
    const char *faster = cpu_ms <= vk_ms ? "cpu" : "vulkan";
    CHECKF(strcmp(chosen, faster) == 0, "chose %s, but cpu %g ms, vulkan %g ms", chosen, cpu_ms,
           vk_ms);
    CHECKF(e && strcmp(cc_engine_backend_name(e), faster) == 0, "runs on %s, the faster is %s",
           e ? cc_engine_backend_name(e) : "nothing", faster);
    cc_engine_destroy(e);
    char *text = read_text(cache);
    char want[32];
    snprintf(want, sizeof(want), "\t%s\t", faster);
    CHECKF(text && strncmp(text, HEADER, strlen(HEADER)) == 0 && strstr(text, want) &&
               count_lines(text) == 2,
           "cache file %s: %s", cache, text ? text : "(none)");

    // 2. Remembered.
    e = create(bundle, cache, 1);
    char said[64];
    snprintf(said, sizeof(said), "camclass: auto: %s (measured earlier: ", faster);
    CHECKF(strncmp(notice, said, strlen(said)) == 0 && strstr(notice, cache),
           "second start uses the cache: %s", notice);
    CHECK(e && strcmp(cc_engine_backend_name(e), faster) == 0);
    cc_engine_destroy(e);

    // 3. A forged line naming the other backend is obeyed.
    const char *other = strcmp(faster, "cpu") == 0 ? "vulkan" : "cpu";
    char *tab = text ? strstr(text, want) : NULL;
    if (tab) {
        char forged[2048];
        snprintf(forged, sizeof(forged), "%.*s\t%s\t%s", (int)(tab - text), text, other,
                 tab + strlen(want));
        write_text(cache, forged);
        e = create(bundle, cache, 1);
        CHECKF(e && strcmp(cc_engine_backend_name(e), other) == 0 &&
                   strstr(notice, "measured earlier"),
               "forged cache line for %s obeyed: %s", other, notice);
        cc_engine_destroy(e);
    }
    free(text);

    // 4. A corrupt file is ignored and rewritten.
    write_text(cache, "camclass backend choices 1\ngarbage\twithout\tnumbers\n\x01\x02");
    e = create(bundle, cache, 1);
    CHECKF(strstr(notice, " -> "), "corrupt cache: measured again: %s", notice);
    cc_engine_destroy(e);
    write_text(cache, "not a cache file at all");
    e = create(bundle, cache, 1);
    CHECKF(strstr(notice, " -> "), "foreign file: measured again: %s", notice);
    cc_engine_destroy(e);
    text = read_text(cache);
    CHECKF(text && strncmp(text, HEADER, strlen(HEADER)) == 0 && count_lines(text) == 2,
           "rewritten: %s", text ? text : "(none)");
    free(text);

    // 5. Another thread count is another key.
    e = create(bundle, cache, 2);
    CHECKF(strstr(notice, " -> "), "2 threads: measured: %s", notice);
    cc_engine_destroy(e);
    text = read_text(cache);
    CHECKF(text && count_lines(text) == 3, "two keys now: %s", text ? text : "(none)");
    free(text);

    // 6. "" remembers nothing; NULL uses $XDG_CACHE_HOME/camclass/backend-choice.txt.
    setenv("XDG_CACHE_HOME", dir, 1);
    char xdg_file[400];
    snprintf(xdg_file, sizeof(xdg_file), "%s/camclass/backend-choice.txt", dir);
    e = create(bundle, "", 1);
    CHECKF(access(xdg_file, F_OK) != 0 && strstr(notice, " -> "), "\"\": no file: %s", notice);
    cc_engine_destroy(e);
    e = create(bundle, NULL, 1);
    CHECKF(access(xdg_file, F_OK) == 0, "NULL: %s written", xdg_file);
    cc_engine_destroy(e);

    // 7. An unwritable cache costs a notice, not the engine.
    e = create(bundle, "/proc/camclass-no-such-dir/choices.txt", 1);
    CHECKF(e && strstr(notice, "choice not remembered: cannot write cache file"),
           "unwritable cache: %s", notice);
    cc_engine_destroy(e);

    unlink(xdg_file);
    snprintf(xdg_file, sizeof(xdg_file), "%s/camclass", dir);
    rmdir(xdg_file);
    unlink(cache);
    rmdir(dir);
    return tu_exit_code();
}
