/* camclass — the remembered measurements: backend auto (engine/autoselect.c) and the CPU
 * backend's per-layer 1x1 choice (xnn_backend.c), with the real backends on a real bundle.
 *
 * Usage: test_autoselect BUNDLE
 *
 * - A first start measures both backends: one notice "auto: cpu X ms, vulkan (DEVICE) Y ms ->
 *   B", B is the backend with the smaller time and the one that runs, and the cache file gets
 *   a line for it.
 * - A second start takes the remembered choice (the notice says "measured earlier").
 * - A cache line forged to name the other backend is obeyed: the cache is really read.
 * - A corrupt cache file is ignored, measured again and rewritten; another thread count is
 *   another key; so is the same bundle with one weight changed (measured again, then
 *   remembered under its own line); auto_cache "" writes nothing; NULL writes
 *   $XDG_CACHE_HOME/camclass/...;
 *   an unwritable cache costs one notice, not the engine.
 *
 * - The CPU backend's 1x1 choices: a first start writes one line with a 'b' (BLIS) or 'x'
 *   (XNNPACK) per f32 1x1 convolution (or 's', 'f', 'p': the stem, a fused block, the own
 *   1x1 GEMM); a line forged to all 'b', 'x', 'f' or 'p' is obeyed (the device name says so);
 *   a line of the wrong length is measured again and rewritten; "" writes nothing. With the
 *   default file, other formats' files (an older build's cpu-layer-choices.txt, a later
 *   one's) are left as they are, and a second start does not rewrite ours: builds of different
 *   formats sharing one cache folder each keep their own.
 *
 * Without a Vulkan device this test FAILS: CI installs mesa-vulkan-drivers (lavapipe).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "engine.h"
#include "testutil.h"

#define HEADER "camclass backend choices 1\n"

static char notice[1024];
static char cpu_cache[320]; // the CPU backend's 1x1 choices, in the test's folder

/* Creates an auto engine from bundle, or from model when given (the engine takes it); notice
 * gets what it said (first line). */
static struct cc_engine *create_from(const char *bundle, struct cc_model *model, const char *cache,
                                     int threads)
{
    struct cc_error err = {0};
    struct cc_engine_options o = cc_engine_options_default();
    o.pipeline_cache = "";
    o.auto_cache = cache;
    o.cpu_cache = cpu_cache;
    o.cpu_threads = threads;
    o.notices = tmpfile();
    struct cc_engine *e =
        model ? cc_engine_create_from_model(model, &o, &err) : cc_engine_create(bundle, &o, &err);
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

static struct cc_engine *create(const char *bundle, const char *cache, int threads)
{
    return create_from(bundle, NULL, cache, threads);
}

/* The bundle with its first constant's first value changed: the same graph and shapes, other
 * weights. NULL when it does not load. */
static struct cc_model *load_changed(const char *bundle)
{
    struct cc_error err = {0};
    struct cc_model *m = cc_bundle_load(bundle, &err);
    CHECKF(m != NULL, "load %s: %s", bundle, err.msg);
    for (int t = 0; m && t < m->n_tensors; t++) {
        if (m->tensors[t].data) {
            m->tensors[t].data[0] += 0.5f;
            return m;
        }
        if (m->tensors[t].q) {
            m->tensors[t].q[0] ^= 1;
            return m;
        }
    }
    CHECKF(false, "%s has no constant to change", bundle);
    return m;
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

static struct cc_engine *create_cpu(const char *bundle, const char *cache)
{
    struct cc_error err = {0};
    struct cc_engine_options o = cc_engine_options_default();
    o.backend = CC_BACKEND_CPU;
    o.cpu_threads = 1;
    o.cpu_cache = cache;
    struct cc_engine *e = cc_engine_create(bundle, &o, &err);
    CHECKF(e != NULL, "cpu engine (cache %s): %s", cache, err.msg);
    return e;
}

/* Replaces the value of the (only) choices line with n copies of c. */
static void forge_choices(const char *path, const char *text, char c, int n)
{
    const char *tab = strrchr(text, '\t');
    char out[2048];
    int len = snprintf(out, sizeof(out), "%.*s", (int)(tab + 1 - text), text);
    for (int i = 0; i < n && len < (int)sizeof(out) - 2; i++)
        out[len++] = c;
    out[len++] = '\n';
    out[len] = 0;
    write_text(path, out);
}

static void test_cpu_choices(const char *bundle, const char *dir)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/cpu-choices.txt", dir);
    struct cc_engine *e = create_cpu(bundle, path);
    cc_engine_destroy(e);
    char *text = read_text(path);
    const char *tab = text ? strrchr(text, '\t') : NULL;
    int n = tab ? (int)strcspn(tab + 1, "\n") : 0;
    // One letter a layer: b BLIS, x XNNPACK, s the direct stem (the first conv, where faster),
    // f a conv of a fused inverted-residual block (where faster), p the own f32 1x1 GEMM, d / w
    // / v our own k x k conv, direct / Winograd F(2x2) / F(4x4) (conv3x3.h; here only the 3x3
    // stride-2 first conv can be d); q the int8 1x1 GEMM, S the int8 stem, e the int8 depthwise
    // (an f32 model has none; its 17 depthwise convs have a letter too, x or f); the last: the
    // classifier (a linear).
    CHECKF(text && strncmp(text, "camclass cpu layer choices 10\n", 30) == 0 && tab && n == 53 &&
               (int)strspn(tab + 1, "bxsfpdwv") == n && count_lines(text) == 2,
           "cpu choices file: %s", text ? text : "(none)");
    if (tab) {
        forge_choices(path, text, 'b', n);
        e = create_cpu(bundle, path);
        CHECKF(e && strstr(cc_engine_device_name(e), "BLIS for 35 of 35"),
               "all-BLIS line obeyed: %s", e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
        forge_choices(path, text, 'x', n);
        e = create_cpu(bundle, path);
        CHECKF(e && !strstr(cc_engine_device_name(e), "BLIS"), "all-XNNPACK line obeyed: %s",
               e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
        forge_choices(path, text, 'f', n); // every one of mobilenet_v2's 17 blocks fused
        e = create_cpu(bundle, path);
        CHECKF(e && strstr(cc_engine_device_name(e), ", 17 fused blocks"),
               "all-fused line obeyed: %s", e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
        forge_choices(path, text, 'p', n); // the own GEMM: all 34 1x1 convs (not the 3x3 stem)
        e = create_cpu(bundle, path);
        CHECKF(e && strstr(cc_engine_device_name(e), ", own 1x1 for 34 ("),
               "all-own-GEMM line obeyed: %s", e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
        forge_choices(path, text, 'd', n); // only the first conv is k x k: 1x1s stay XNNPACK
        e = create_cpu(bundle, path);
        CHECKF(e && strstr(cc_engine_device_name(e), ", 1 direct convs (0 Winograd") &&
                   !strstr(cc_engine_device_name(e), "BLIS"),
               "all-direct line obeyed: %s", e ? cc_engine_device_name(e) : "-");
        cc_engine_destroy(e);
        forge_choices(path, text, 'b', 3); // wrong length: measured again, rewritten
        e = create_cpu(bundle, path);
        cc_engine_destroy(e);
        char *again = read_text(path);
        const char *t2 = again ? strrchr(again, '\t') : NULL;
        CHECKF(t2 && (int)strcspn(t2 + 1, "\n") == 53, "short line rewritten: %s",
               again ? again : "(none)");
        free(again);
    }
    free(text);
    unlink(path);
    e = create_cpu(bundle, "");
    CHECKF(access(path, F_OK) != 0, "\"\": no choices file");
    cc_engine_destroy(e);
}

/* The file at path as it is: its inode (cc_cache_file_write renames a new one over it) and text. */
struct file_state {
    ino_t ino;
    char *text;
};

static struct file_state file_state(const char *path)
{
    struct stat st;
    return (struct file_state){stat(path, &st) == 0 ? st.st_ino : 0, read_text(path)};
}

/* Whether path is still the file that was (not rewritten, not changed). */
static bool same_file(const char *path, struct file_state was)
{
    struct file_state now = file_state(path);
    bool same =
        was.ino && now.ino == was.ino && was.text && now.text && strcmp(was.text, now.text) == 0;
    free(now.text);
    return same;
}

/* $XDG_CACHE_HOME/camclass/ (set to dir) with another format's choices files: the default file
 * of this build is its own, and neither rewrites the other's. */
static void test_cpu_choices_formats(const char *bundle, const char *dir)
{
    char folder[320], old[400], later[400];
    snprintf(folder, sizeof(folder), "%s/camclass", dir);
    snprintf(old, sizeof(old), "%s/cpu-layer-choices.txt", folder);        // builds before this
    snprintf(later, sizeof(later), "%s/cpu-layer-choices-99.txt", folder); // a later format
    mkdir(folder, 0755);
    write_text(old, "camclass cpu layer choices 4\n0123456789abcdef some cpu\tbbxxf\n");
    write_text(later, "camclass cpu layer choices 99\n0123456789abcdef some cpu\tzz\n");
    struct file_state was_old = file_state(old), was_later = file_state(later);

    cc_engine_destroy(create_cpu(bundle, NULL)); // measures, writes its own file
    CHECKF(same_file(old, was_old), "format 4's %s left as it was", old);
    CHECKF(same_file(later, was_later), "format 99's %s left as it was", later);
    char ours[600] = "";
    DIR *d = opendir(folder);
    for (struct dirent *de; d && (de = readdir(d));)
        if (strncmp(de->d_name, "cpu-layer-choices-", 18) == 0 && strcmp(de->d_name + 18, "99.txt"))
            snprintf(ours, sizeof(ours), "%s/%.200s", folder, de->d_name);
    if (d)
        closedir(d);
    struct file_state mine = file_state(ours);
    CHECKF(ours[0] && mine.text && strncmp(mine.text, "camclass cpu layer choices ", 27) == 0,
           "this build's own choices file: %s", ours[0] ? ours : "(none)");

    cc_engine_destroy(create_cpu(bundle, NULL)); // remembered: nothing rewritten
    CHECKF(ours[0] && same_file(ours, mine), "a second start rewrote %s", ours);
    CHECKF(same_file(old, was_old) && same_file(later, was_later),
           "the other formats' files left as they were at the second start");
    free(mine.text);
    free(was_old.text);
    free(was_later.text);
    if (ours[0])
        unlink(ours);
    unlink(old);
    unlink(later);
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
    snprintf(cpu_cache, sizeof(cpu_cache), "%s/auto-cpu-choices.txt", dir);

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

    // 6. Other weights are another model: measured, then remembered under a line of their own.
    e = create_from(bundle, load_changed(bundle), cache, 1);
    CHECKF(strstr(notice, " -> "), "one weight changed: measured: %s", notice);
    cc_engine_destroy(e);
    text = read_text(cache);
    CHECKF(text && count_lines(text) == 4, "three keys now: %s", text ? text : "(none)");
    free(text);
    e = create_from(bundle, load_changed(bundle), cache, 1);
    CHECKF(strstr(notice, "measured earlier"), "the changed model again: cached: %s", notice);
    cc_engine_destroy(e);

    // 7. "" remembers nothing; NULL uses $XDG_CACHE_HOME/camclass/backend-choice.txt.
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 1); // nothing of Mesa's in our temp folder
    setenv("XDG_CACHE_HOME", dir, 1);
    char xdg_file[400];
    snprintf(xdg_file, sizeof(xdg_file), "%s/camclass/backend-choice.txt", dir);
    e = create(bundle, "", 1);
    CHECKF(access(xdg_file, F_OK) != 0 && strstr(notice, " -> "), "\"\": no file: %s", notice);
    cc_engine_destroy(e);
    e = create(bundle, NULL, 1);
    CHECKF(access(xdg_file, F_OK) == 0, "NULL: %s written", xdg_file);
    cc_engine_destroy(e);

    // 8. An unwritable cache costs a notice, not the engine.
    e = create(bundle, "/proc/camclass-no-such-dir/choices.txt", 1);
    CHECKF(e && strstr(notice, "choice not remembered: cannot write cache file"),
           "unwritable cache: %s", notice);
    cc_engine_destroy(e);

    test_cpu_choices(bundle, dir);
    test_cpu_choices_formats(bundle, dir); // XDG_CACHE_HOME is dir (7.)

    unlink(xdg_file);
    snprintf(xdg_file, sizeof(xdg_file), "%s/camclass/cpu-layer-choices.txt", dir);
    unlink(xdg_file);
    snprintf(xdg_file, sizeof(xdg_file), "%s/camclass", dir);
    rmdir(xdg_file);
    unlink(cache);
    unlink(cpu_cache);
    rmdir(dir);
    return tu_exit_code();
}
