/* camclass — the CPU backend's layer choices timed on a crowded machine (engine/cpu/
 * choice_watch.h), on a real bundle; CAMCLASS_CPU_CROWDED stands for the measure (which
 * test_choice_watch.c tests on given times), so nothing here depends on the machine's load:
 * - yes, 2 threads: the engine is made and runs, its output that of a quiet start's engine
 *   (1e-4 x max); nothing is written to the choices file; one notice line says the choices were
 *   not saved because the machine was busy, and that every timing ran on the calling thread
 *   alone, none on the pool;
 * - no: the same start writes the file, and says nothing;
 * - yes again with the file there: the remembered choices are used, nothing is timed, nothing
 *   said, the file unchanged;
 * - a bad value: no engine, one line naming it.
 *
 * Usage: test_choices_crowded BUNDLE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "testutil.h"

static char said[1024]; // what the last create said on its notices

/* A CPU engine of bundle on 2 threads with the choices file cache, CAMCLASS_CPU_CROWDED=crowded;
 * NULL with err. */
static struct cc_engine *create(const char *bundle, const char *cache, const char *crowded,
                                struct cc_error *err)
{
    struct cc_engine_options o = cc_engine_options_default();
    o.backend = CC_BACKEND_CPU;
    o.cpu_threads = 2;
    o.cpu_cache = cache;
    o.notices = tmpfile();
    setenv("CAMCLASS_CPU_CROWDED", crowded, 1);
    struct cc_engine *e = cc_engine_create(bundle, &o, err);
    said[0] = 0;
    if (o.notices) {
        rewind(o.notices);
        said[fread(said, 1, sizeof(said) - 1, o.notices)] = 0;
        fclose(o.notices);
    }
    return e;
}

/* The output of e for a fixed input (n values), malloc'd; NULL when it does not run. */
static float *output(struct cc_engine *e)
{
    size_t n_in = cc_engine_input_count(e), n_out = cc_engine_output_count(e);
    float *in = malloc(n_in * sizeof(float)), *out = malloc(n_out * sizeof(float));
    struct tu_rng r;
    tu_rng_seed(&r, 7);
    if (in)
        tu_rng_fill(&r, in, n_in, -2.0f, 2.0f);
    struct cc_error err = {0};
    bool ok = in && out && CHECKF(cc_engine_run(e, in, out, &err), "run: %s", err.msg);
    free(in);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s BUNDLE\n", argv[0]);
        return 2;
    }
    char dir[256], cache[320];
    if (!tu_tmpdir(dir, sizeof(dir), "camclass-crowded"))
        return tu_exit_code();
    snprintf(cache, sizeof(cache), "%s/choices.txt", dir);
    struct cc_error err = {0};

    struct cc_engine *busy = create(argv[1], cache, "yes", &err);
    CHECKF(busy != NULL, "crowded: %s", err.msg);
    int alone = -1, timed = -2;
    const char *counts = strstr(said, " ms timed; ");
    CHECKF(!strncmp(said, "camclass: cpu backend: layer choices not saved: the machine was busy",
                    68) &&
               strstr(said, "CAMCLASS_CPU_CROWDED=yes") && counts &&
               sscanf(counts, " ms timed; %d of %d timings on one thread, not the pool", &alone,
                      &timed) == 2 &&
               timed > 0 && alone == timed && strchr(said, '\n') == said + strlen(said) - 1,
           "crowded: one line, every timing on the calling thread: %s", said);
    CHECKF(access(cache, F_OK) != 0, "crowded: %s was written", cache);

    struct cc_engine *quiet = create(argv[1], cache, "no", &err);
    CHECKF(quiet != NULL && !said[0], "quiet: %s; said \"%s\"", quiet ? "" : err.msg, said);
    char *text = tu_read_file(cache, NULL);
    CHECKF(text && !strncmp(text, "camclass cpu layer choices ", 27), "quiet: %s written: %s",
           cache, text ? text : "(none)");
    float *a = busy ? output(busy) : NULL, *b = quiet ? output(quiet) : NULL;
    if (a && b) {
        size_t n = cc_engine_output_count(quiet);
        double scale = tu_max_abs(b, n), diff = tu_max_abs_diff(a, b, n, NULL);
        CHECKF(diff <= 1e-4 * scale, "crowded and quiet engines differ by %.3g x max",
               diff / scale);
    }
    free(a);
    free(b);
    cc_engine_destroy(busy);
    cc_engine_destroy(quiet);

    struct cc_engine *again = create(argv[1], cache, "yes", &err);
    char *now = tu_read_file(cache, NULL);
    CHECKF(again && !said[0] && text && now && !strcmp(text, now),
           "remembered: nothing timed, nothing said (\"%s\"), the file unchanged", said);
    cc_engine_destroy(again);
    free(now);
    free(text);

    struct cc_engine *bad = create(argv[1], "", "busy", &err);
    CHECKF(!bad && strstr(err.msg, "CAMCLASS_CPU_CROWDED=\"busy\"") && !strchr(err.msg, '\n'),
           "a bad value: %s", bad ? "an engine" : err.msg);
    cc_engine_destroy(bad);
    unsetenv("CAMCLASS_CPU_CROWDED");
    tu_rmtree(dir);
    return tu_exit_code();
}
