/* camclass — tests of the headless detection log (app/output/detlog.c, docs/LOG_FORMAT.md).
 *
 * Every line written is parsed with cJSON and checked against the schema of its event (exact
 * key set and types). Detections mode runs on crafted score sequences: a stable label, a label
 * change, a score flickering around the threshold (with and without hysteresis), an EWMA that
 * hides a one-frame blip. Then: reopen after a logrotate-style rename, the summary, escaping
 * of hostile labels, write errors (/dev/full, a pipe with no reader, a line cut short and cut
 * off again), bad configurations, a result naming another backend (the engine's switch to the
 * CPU mid-run).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "detlog.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers: results, files, lines
 */

static char tmpdir[256];

static void tmp_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", tmpdir, name);
}

// A result at t_ms with up to three (index, label, score) entries; n = entries used.
static struct cc_result result(uint64_t seq, double t_ms, int n, int i0, const char *l0, float s0,
                               int i1, const char *l1, float s1)
{
    struct cc_result r = {0};
    r.seq = seq;
    r.capture_ns = (int64_t)(t_ms * 1e6) - 20000000;
    r.result_ns = (int64_t)(t_ms * 1e6);
    r.latency_ms = 20.0;
    r.dequeue_ms = 1.0;
    r.preprocess_ms = 2.0;
    r.inference_ms = 15.0;
    r.camera_fps = 30.0;
    r.inference_fps = 10.0;
    r.dropped = seq / 3;
    r.n_top = n;
    r.top[0] = (struct cc_result_class){i0, l0, s0};
    if (n > 1)
        r.top[1] = (struct cc_result_class){i1, l1, s1};
    return r;
}

static struct cc_result two(uint64_t seq, const char *la, float sa, const char *lb, float sb)
{
    // Classes: 0 cat, 1 dog (the index follows the label), highest score first.
    int ia = strcmp(la, "cat") == 0 ? 0 : 1, ib = strcmp(lb, "cat") == 0 ? 0 : 1;
    if (sa >= sb)
        return result(seq, 100.0 * (double)seq, 2, ia, la, sa, ib, lb, sb);
    return result(seq, 100.0 * (double)seq, 2, ib, lb, sb, ia, la, sa);
}

struct lines {
    cJSON *item[512];
    int n;
    int bad; // lines that did not parse
};

static void lines_free(struct lines *ls)
{
    for (int i = 0; i < ls->n; i++)
        cJSON_Delete(ls->item[i]);
    ls->n = 0;
}

// Parses every line of path; a missing file gives no lines.
static struct lines read_lines(const char *path)
{
    struct lines ls = {0};
    size_t size;
    char *text = tu_read_file(path, &size);
    if (!text)
        return ls;
    CHECKF(size == 0 || text[size - 1] == '\n', "%s: last line not terminated", path);
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(l);
        if (!CHECKF(o != NULL, "%s: line does not parse: %s", path, l)) {
            ls.bad++;
            continue;
        }
        if (ls.n < (int)(sizeof(ls.item) / sizeof(ls.item[0])))
            ls.item[ls.n++] = o;
        else
            cJSON_Delete(o);
    }
    free(text);
    return ls;
}

static const char *event_of(const cJSON *o)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "event");
    return cJSON_IsString(e) ? e->valuestring : "";
}

static int count_event(const struct lines *ls, const char *event)
{
    int n = 0;
    for (int i = 0; i < ls->n; i++)
        n += strcmp(event_of(ls->item[i]), event) == 0;
    return n;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Schema (docs/LOG_FORMAT.md): the exact keys of each event and their types.
 */

enum type { T_STR, T_NUM, T_INT, T_NUM_NULL, T_INT_NULL, T_CLASS, T_CLASS_NULL, T_TOP, T_TRUE };

struct field {
    const char *key;
    enum type type;
};

static const struct field common_fields[] = {
    {"ts", T_STR}, {"event", T_STR}, {"source", T_STR}, {"model", T_STR}, {"backend", T_STR},
};
static const struct field result_fields[] = {
    {"seq", T_INT},      {"latency_ms", T_NUM_NULL},
    {"fps", T_NUM_NULL}, {"camera_fps", T_NUM_NULL},
    {"dropped", T_INT},  {"top", T_TOP},
    {"file", T_STR},     // only for frames from image files (optional)
    {"unknown", T_TRUE}, // only for an "unknown" answer (optional)
};
static const struct field detection_fields[] = {
    {"reason", T_STR},
    {"detection", T_CLASS},
    {"previous", T_CLASS},
};
static const struct field clear_fields[] = {
    {"detection", T_CLASS},
    {"duration_s", T_NUM},
};
static const struct field stats_fields[] = {
    {"seq", T_INT}, {"interval_s", T_NUM}, {"frames", T_INT},          {"detections", T_INT},
    {"fps", T_NUM}, {"dropped", T_INT},    {"latency_ms", T_NUM_NULL},
};
static const struct field summary_fields[] = {
    {"seq", T_INT_NULL},
    {"frames", T_INT},
    {"detections", T_INT},
    {"clears", T_INT},
    {"lines", T_INT},
    {"lines_lost", T_INT},
    {"dropped", T_INT},
    {"duration_s", T_NUM},
    {"fps", T_NUM},
    {"latency_ms", T_NUM_NULL},
    {"latency_max_ms", T_NUM_NULL},
    {"active", T_CLASS_NULL},
};

#define N(a) (int)(sizeof(a) / sizeof(a[0]))

static bool is_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble == floor(v->valuedouble);
}

static bool class_ok(const cJSON *c)
{
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(c, "score");
    return cJSON_IsObject(c) && cJSON_GetArraySize(c) == 3 &&
           is_int(cJSON_GetObjectItemCaseSensitive(c, "index")) &&
           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(c, "label")) && cJSON_IsNumber(score) &&
           score->valuedouble >= 0 && score->valuedouble <= 1;
}

static bool type_ok(const cJSON *v, enum type t)
{
    switch (t) {
    case T_STR:
        return cJSON_IsString(v);
    case T_NUM:
        return cJSON_IsNumber(v);
    case T_INT:
        return is_int(v);
    case T_NUM_NULL:
        return cJSON_IsNumber(v) || cJSON_IsNull(v);
    case T_INT_NULL:
        return is_int(v) || cJSON_IsNull(v);
    case T_CLASS:
        return class_ok(v);
    case T_CLASS_NULL:
        return class_ok(v) || cJSON_IsNull(v);
    case T_TRUE:
        return cJSON_IsTrue(v);
    case T_TOP: {
        if (!cJSON_IsArray(v))
            return false;
        const cJSON *c;
        double prev = INFINITY;
        cJSON_ArrayForEach(c, v)
        {
            if (!class_ok(c))
                return false;
            double s = cJSON_GetObjectItemCaseSensitive(c, "score")->valuedouble;
            if (s > prev) // highest score first
                return false;
            prev = s;
        }
        return true;
    }
    }
    return false;
}

// Checks the fields of one group; optional fields may be missing. Returns how many were found.
/* Whether word is one of the space-separated words of list. */
static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* Counts the fields of f that o has, checking their types; the ones named in optional (a
 * space-separated list) may be absent. */
static int check_fields(const cJSON *o, const struct field *f, int n, const char *optional,
                        const char *event)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f[i].key);
        if (!v) {
            CHECKF(optional && word_in(optional, f[i].key), "%s line: no \"%s\"", event,
                   f[i].key);
            continue;
        }
        found++;
        CHECKF(type_ok(v, f[i].type), "%s line: \"%s\" has the wrong type", event, f[i].key);
    }
    return found;
}

static bool ts_ok(const char *ts)
{
    // 2026-11-22T10:31:05.123Z
    if (!ts || strlen(ts) != 24)
        return false;
    const char *pat = "dddd-dd-ddTdd:dd:dd.dddZ";
    for (int i = 0; i < 24; i++)
        if (pat[i] == 'd' ? (ts[i] < '0' || ts[i] > '9') : ts[i] != pat[i])
            return false;
    return true;
}

// Checks every line of ls against the schema of its event.
static void check_schema(const struct lines *ls)
{
    for (int i = 0; i < ls->n; i++) {
        const cJSON *o = ls->item[i];
        const char *event = event_of(o);
        int found = check_fields(o, common_fields, N(common_fields), NULL, event);
        CHECKF(ts_ok(str(o, "ts")), "bad ts \"%s\"", str(o, "ts") ? str(o, "ts") : "(none)");
        if (strcmp(event, "frame") == 0) {
            found += check_fields(o, result_fields, N(result_fields), "file unknown", event);
        } else if (strcmp(event, "detection") == 0) {
            found += check_fields(o, result_fields, N(result_fields), "file unknown", event);
            found += check_fields(o, detection_fields, N(detection_fields), "previous", event);
            const char *reason = str(o, "reason");
            CHECKF(reason && (strcmp(reason, "onset") == 0 || strcmp(reason, "change") == 0),
                   "detection reason \"%s\"", reason ? reason : "(none)");
            // "previous" exactly when the reason is a change
            CHECK(!cJSON_GetObjectItemCaseSensitive(o, "previous") ==
                  !(reason && strcmp(reason, "change") == 0));
        } else if (strcmp(event, "clear") == 0) {
            found += check_fields(o, result_fields, N(result_fields), "file unknown", event);
            found += check_fields(o, clear_fields, N(clear_fields), NULL, event);
        } else if (strcmp(event, "stats") == 0) {
            found += check_fields(o, stats_fields, N(stats_fields), NULL, event);
        } else if (strcmp(event, "summary") == 0) {
            found += check_fields(o, summary_fields, N(summary_fields), NULL, event);
        } else {
            CHECKF(false, "unknown event \"%s\"", event);
        }
        CHECKF(cJSON_GetArraySize(o) == found, "%s line has %d keys, the schema %d", event,
               cJSON_GetArraySize(o), found);
    }
}

static struct cc_detlog *open_log(const char *path, enum cc_detlog_mode mode, double thr,
                                  double hyst, double alpha, double stats_s)
{
    struct cc_detlog_config cfg = {
        .path = path,
        .mode = mode,
        .threshold = thr,
        .hysteresis = hyst,
        .ewma_alpha = alpha,
        .stats_interval_s = stats_s,
        .source = "test-source",
        .model = "test-model",
        .backend = "cpu",
    };
    struct cc_error err = {""};
    struct cc_detlog *log = cc_detlog_create(&cfg, &err);
    CHECKF(log != NULL, "cc_detlog_create(%s): %s", path ? path : "(stdout)", err.msg);
    return log;
}

static void write_ok(struct cc_detlog *log, const struct cc_result *r)
{
    struct cc_error err = {""};
    CHECKF(cc_detlog_write(log, r, &err), "cc_detlog_write: %s", err.msg);
}

// Finishes and destroys log, then reads and schema-checks path.
static struct lines close_and_read(struct cc_detlog *log, const char *path)
{
    struct cc_error err = {""};
    CHECKF(cc_detlog_finish(log, &err), "cc_detlog_finish: %s", err.msg);
    cc_detlog_destroy(log);
    struct lines ls = read_lines(path);
    check_schema(&ls);
    CHECK(ls.n > 0 && strcmp(event_of(ls.item[ls.n - 1]), "summary") == 0);
    return ls;
}

/* ---------------------------------------------------------------------------------------------
 * Tests
 */

static void test_every_frame(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "frames.jsonl");
    // Stats every 0.25 s of result time; results 100 ms apart (t = 100 ms .. 1000 ms).
    struct cc_detlog *log = open_log(path, CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0.25);
    for (uint64_t s = 1; s <= 10; s++) {
        struct cc_result r = result(s, 100.0 * (double)s, 2, 7, "cat", 0.7f, 3, "dog", 0.2f);
        r.file = s % 2 ? "frame \"odd\".png" : NULL; // a directory input's file, or none
        write_ok(log, &r);
    }
    struct lines ls = close_and_read(log, path);
    CHECKF(count_event(&ls, "frame") == 10, "%d frame lines", count_event(&ls, "frame"));
    // Intervals close at t = 400, 700, 1000 ms.
    CHECKF(count_event(&ls, "stats") == 3, "%d stats lines", count_event(&ls, "stats"));
    CHECK(count_event(&ls, "detection") == 0 && count_event(&ls, "summary") == 1);
    CHECK(ls.n == 14);

    int frame = 0;
    for (int i = 0; i < ls.n; i++) {
        const cJSON *o = ls.item[i];
        if (strcmp(event_of(o), "frame") == 0) {
            frame++;
            CHECK(num(o, "seq") == frame);
            const char *file = str(o, "file");
            CHECKF(frame % 2 ? file && strcmp(file, "frame \"odd\".png") == 0 : !file,
                   "frame %d: file \"%s\"", frame, file ? file : "(none)");
            CHECK(strcmp(str(o, "source"), "test-source") == 0);
            CHECK(strcmp(str(o, "model"), "test-model") == 0);
            CHECK(strcmp(str(o, "backend"), "cpu") == 0);
            CHECK(num(o, "latency_ms") == 20 && num(o, "fps") == 10 && num(o, "camera_fps") == 30);
            const cJSON *top = cJSON_GetObjectItemCaseSensitive(o, "top");
            CHECK(cJSON_GetArraySize(top) == 2);
            const cJSON *t0 = cJSON_GetArrayItem(top, 0);
            CHECK(num(t0, "index") == 7 && strcmp(str(t0, "label"), "cat") == 0);
            CHECKF(num(t0, "score") == 0.7, "score %.17g (float 0.7 rounded to 1e-6)",
                   num(t0, "score"));
        } else if (strcmp(event_of(o), "stats") == 0) {
            // First interval: t = 100..400 ms, 4 results; then 3 per 300 ms.
            double frames = num(o, "frames"), interval = num(o, "interval_s");
            CHECKF(frames == (num(o, "seq") == 4 ? 4 : 3), "stats frames %g at seq %g", frames,
                   num(o, "seq"));
            CHECKF(fabs(interval - 0.3) < 1e-9, "stats interval_s %g", interval);
            CHECK(fabs(num(o, "fps") - round(frames / interval * 100) / 100) < 1e-9);
            CHECK(num(o, "latency_ms") == 20 && num(o, "detections") == 0);
        }
    }
    const cJSON *sum = ls.item[ls.n - 1];
    CHECK(num(sum, "frames") == 10 && num(sum, "seq") == 10 && num(sum, "lines") == 13);
    CHECK(num(sum, "lines_lost") == 0 && num(sum, "dropped") == 3);
    CHECK(fabs(num(sum, "duration_s") - 0.9) < 1e-9 && fabs(num(sum, "fps") - 10) < 1e-9);
    CHECK(num(sum, "latency_ms") == 20 && num(sum, "latency_max_ms") == 20);
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sum, "active")));
    lines_free(&ls);
}

// Runs detections mode (threshold 0.5) over n (label a, score a, label b, score b) steps and
// returns the lines (schema-checked), the summary last.
struct step {
    const char *la;
    float sa;
    const char *lb;
    float sb;
    const char *file; // the image it came from (image inputs); NULL: a camera or video frame
    bool unknown;     // the result is "unknown" (below the model's threshold)
};

static struct lines run_detections(const char *name, const struct step *steps, int n, double hyst,
                                   double alpha)
{
    char path[300];
    tmp_path(path, sizeof(path), name);
    struct cc_detlog *log = open_log(path, CC_DETLOG_DETECTIONS, 0.5, hyst, alpha, 0);
    for (int i = 0; i < n; i++) {
        struct cc_result r =
            two((uint64_t)i + 1, steps[i].la, steps[i].sa, steps[i].lb, steps[i].sb);
        r.file = steps[i].file;
        r.unknown = steps[i].unknown;
        write_ok(log, &r);
    }
    return close_and_read(log, path);
}

static void test_detections(void)
{
    struct step s[64];
    int n = 0;

    // A stable label above the threshold: one line.
    for (int i = 0; i < 20; i++)
        s[n++] = (struct step){"cat", 0.9f, "dog", 0.05f};
    struct lines ls = run_detections("stable.jsonl", s, n, 0.1, 0);
    CHECKF(ls.n == 2, "stable label: %d lines (want onset + summary)", ls.n);
    CHECK(ls.n >= 1 && strcmp(event_of(ls.item[0]), "detection") == 0 &&
          strcmp(str(ls.item[0], "reason"), "onset") == 0 && num(ls.item[0], "seq") == 1);
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(ls.item[0], "detection");
    CHECK(strcmp(str(det, "label"), "cat") == 0 && num(det, "index") == 0 &&
          num(det, "score") == 0.9);
    const cJSON *sum = ls.item[ls.n - 1];
    CHECK(num(sum, "frames") == 20 && num(sum, "detections") == 1 && num(sum, "lines") == 1);
    CHECK(strcmp(str(cJSON_GetObjectItemCaseSensitive(sum, "active"), "label"), "cat") == 0);
    lines_free(&ls);

    // Then the label changes (seq 21): one "change" line naming the previous label; then the
    // score falls away (seq 26): one "clear" line.
    for (int i = 0; i < 5; i++)
        s[n++] = (struct step){"dog", 0.8f, "cat", 0.1f};
    for (int i = 0; i < 5; i++)
        s[n++] = (struct step){"dog", 0.2f, "cat", 0.1f};
    ls = run_detections("change.jsonl", s, n, 0.1, 0);
    CHECKF(ls.n == 4, "label change: %d lines (want onset, change, clear, summary)", ls.n);
    if (ls.n == 4) {
        const cJSON *ch = ls.item[1];
        CHECK(strcmp(str(ch, "reason"), "change") == 0 && num(ch, "seq") == 21);
        CHECK(strcmp(str(cJSON_GetObjectItemCaseSensitive(ch, "detection"), "label"), "dog") == 0);
        CHECK(strcmp(str(cJSON_GetObjectItemCaseSensitive(ch, "previous"), "label"), "cat") == 0);
        const cJSON *cl = ls.item[2];
        CHECK(strcmp(event_of(cl), "clear") == 0 && num(cl, "seq") == 26);
        CHECK(strcmp(str(cJSON_GetObjectItemCaseSensitive(cl, "detection"), "label"), "dog") == 0);
        CHECKF(fabs(num(cl, "duration_s") - 0.5) < 1e-9, "duration_s %g", num(cl, "duration_s"));
        CHECK(num(ls.item[3], "detections") == 2 && num(ls.item[3], "clears") == 1);
    }
    lines_free(&ls);

    // A score flickering around the threshold (0.45 / 0.56, 30 frames): with hysteresis 0.1
    // one onset and nothing else; without hysteresis a line on nearly every frame.
    n = 0;
    for (int i = 0; i < 30; i++)
        s[n++] = (struct step){"cat", i % 2 ? 0.56f : 0.45f, "dog", 0.3f};
    ls = run_detections("flicker.jsonl", s, n, 0.1, 0);
    CHECKF(ls.n == 2, "flicker with hysteresis: %d lines (want onset + summary)", ls.n);
    CHECK(ls.n >= 1 && num(ls.item[0], "seq") == 2);
    lines_free(&ls);
    ls = run_detections("flicker0.jsonl", s, n, 0, 0);
    CHECKF(ls.n == 30, "flicker without hysteresis: %d lines (want 29 + summary)", ls.n);
    CHECK(count_event(&ls, "detection") == 15 && count_event(&ls, "clear") == 14);
    lines_free(&ls);

    // Two labels trading first place by a little (0.62 / 0.58): hysteresis also holds the label.
    n = 0;
    for (int i = 0; i < 20; i++)
        s[n++] = (struct step){"cat", i % 2 ? 0.58f : 0.62f, "dog", i % 2 ? 0.62f : 0.58f};
    ls = run_detections("trade.jsonl", s, n, 0.1, 0);
    CHECKF(ls.n == 2, "labels trading places: %d lines (want onset + summary)", ls.n);
    lines_free(&ls);

    // A one-frame blip (dog 0.9 for one frame in a run of cat 0.9): EWMA alpha 0.3 keeps cat
    // (cat 0.3*0.05 + 0.7*0.9 = 0.645 > dog 0.27); without smoothing: change there and back.
    n = 0;
    for (int i = 0; i < 21; i++)
        s[n++] = i == 10 ? (struct step){"dog", 0.9f, "cat", 0.05f}
                         : (struct step){"cat", 0.9f, "dog", 0.05f};
    ls = run_detections("blip_ewma.jsonl", s, n, 0.1, 0.3);
    CHECKF(ls.n == 2, "blip with EWMA: %d lines (want onset + summary)", ls.n);
    lines_free(&ls);
    ls = run_detections("blip_raw.jsonl", s, n, 0.1, 0);
    CHECKF(ls.n == 4, "blip without EWMA: %d lines (want onset, change, change, summary)", ls.n);
    lines_free(&ls);

    // The same blip in a folder of images: each file is its own scene, no smoothing across
    // files, so the blip is a change there and back even with EWMA on.
    static const char *const names[21] = {"00.png", "01.png", "02.png", "03.png", "04.png",
                                          "05.png", "06.png", "07.png", "08.png", "09.png",
                                          "10.png", "11.png", "12.png", "13.png", "14.png",
                                          "15.png", "16.png", "17.png", "18.png", "19.png",
                                          "20.png"};
    for (int i = 0; i < 21; i++)
        s[i].file = names[i];
    ls = run_detections("blip_files.jsonl", s, 21, 0.1, 0.3);
    CHECKF(ls.n == 4, "blip across image files with EWMA: %d lines (want onset, change, change, "
                      "summary)", ls.n);
    lines_free(&ls);

    // "unknown" frames show no class: with EWMA 0.3 a cat detection decays and clears.
    n = 0;
    for (int i = 0; i < 5; i++)
        s[n++] = (struct step){"cat", 0.9f, "dog", 0.05f};
    for (int i = 0; i < 8; i++)
        s[n++] = (struct step){"cat", 0.3f, "dog", 0.2f, NULL, true};
    ls = run_detections("unknown.jsonl", s, n, 0.1, 0.3);
    CHECKF(ls.n == 3 && strcmp(event_of(ls.item[1]), "clear") == 0,
           "unknown frames clear a detection: %d lines", ls.n);
    lines_free(&ls);

    // The EWMA formula: cat 0.2 then 0.9: s = 0.2, 0.41, 0.557 -> onset on the third frame,
    // with the smoothed score in "detection" and the raw one in "top".
    n = 0;
    s[n++] = (struct step){"cat", 0.2f, "dog", 0.1f};
    for (int i = 0; i < 5; i++)
        s[n++] = (struct step){"cat", 0.9f, "dog", 0.1f};
    ls = run_detections("ewma.jsonl", s, n, 0.1, 0.3);
    CHECKF(ls.n == 2, "EWMA rise: %d lines", ls.n);
    if (ls.n == 2) {
        const cJSON *o = ls.item[0];
        double sm = num(cJSON_GetObjectItemCaseSensitive(o, "detection"), "score");
        double want = 0.3 * 0.9f + 0.7 * (0.3 * 0.9f + 0.7 * 0.2f);
        CHECKF(num(o, "seq") == 3 && fabs(sm - want) < 2e-6, "onset at seq %g, score %g (%g)",
               num(o, "seq"), sm, want);
        const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "top"), 0);
        CHECK(num(t0, "score") == 0.9);
    }
    lines_free(&ls);
}

static void test_stats_in_detections_mode(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "dstats.jsonl");
    struct cc_detlog *log = open_log(path, CC_DETLOG_DETECTIONS, 0.5, 0.1, 0, 1.0);
    // 35 results 100 ms apart: onset at seq 1, change at seq 15; stats at t = 1.1, 2.1, 3.1 s.
    for (uint64_t i = 1; i <= 35; i++) {
        struct cc_result r =
            i < 15 ? two(i, "cat", 0.9f, "dog", 0.05f) : two(i, "dog", 0.9f, "cat", 0.05f);
        write_ok(log, &r);
    }
    struct lines ls = close_and_read(log, path);
    CHECKF(count_event(&ls, "stats") == 3 && count_event(&ls, "detection") == 2,
           "%d stats, %d detection lines", count_event(&ls, "stats"),
           count_event(&ls, "detection"));
    double frames = 0, detections = 0, dropped = 0;
    for (int i = 0; i < ls.n; i++)
        if (strcmp(event_of(ls.item[i]), "stats") == 0) {
            frames += num(ls.item[i], "frames");
            detections += num(ls.item[i], "detections");
            dropped += num(ls.item[i], "dropped");
        }
    CHECKF(frames == 31 && detections == 2 && dropped == 31 / 3, "stats sum %g %g %g", frames,
           detections, dropped);
    lines_free(&ls);
}

static void test_reopen(void)
{
    char path[300], rotated[300], dir[300], moved[300], path2[320];
    tmp_path(path, sizeof(path), "rot.jsonl");
    tmp_path(rotated, sizeof(rotated), "rot.jsonl.1");
    struct cc_error err = {""};

    struct cc_detlog *log = open_log(path, CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0);
    for (uint64_t s = 1; s <= 3; s++) {
        struct cc_result r = result(s, 100.0 * (double)s, 1, 1, "cat", 0.9f, 0, NULL, 0);
        write_ok(log, &r);
    }
    // logrotate: rename, then SIGHUP -> the pipeline calls reopen.
    CHECK(rename(path, rotated) == 0);
    struct cc_result r4 = result(4, 400, 1, 1, "cat", 0.9f, 0, NULL, 0);
    write_ok(log, &r4); // still to the renamed file, as a real logger between rename and HUP
    CHECKF(cc_detlog_reopen(log, &err), "reopen: %s", err.msg);
    for (uint64_t s = 5; s <= 6; s++) {
        struct cc_result r = result(s, 100.0 * (double)s, 1, 1, "cat", 0.9f, 0, NULL, 0);
        write_ok(log, &r);
    }
    struct lines ls = close_and_read(log, path);
    struct lines old = read_lines(rotated);
    check_schema(&old);
    CHECKF(old.n == 4 && ls.n == 3, "rotated file %d lines, new file %d lines", old.n, ls.n);
    CHECK(ls.n >= 1 && num(ls.item[0], "seq") == 5);
    CHECK(ls.n == 3 && num(ls.item[2], "frames") == 6);
    lines_free(&ls);
    lines_free(&old);

    // Reopen appends: a second log on the same path adds to it.
    log = open_log(path, CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0);
    write_ok(log, &r4);
    ls = close_and_read(log, path);
    CHECK(ls.n == 5);
    lines_free(&ls);

    // Reopen that cannot open the path (its directory is gone): false, the old file is kept.
    tmp_path(dir, sizeof(dir), "sub");
    tmp_path(moved, sizeof(moved), "sub-moved");
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path2, sizeof(path2), "%s/log.jsonl", dir);
    log = open_log(path2, CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0);
    write_ok(log, &r4);
    CHECK(rename(dir, moved) == 0);
    err.msg[0] = '\0';
    CHECK(!cc_detlog_reopen(log, &err));
    CHECKF(strstr(err.msg, "log.jsonl") && strstr(err.msg, strerror(ENOENT)), "message: %s",
           err.msg);
    write_ok(log, &r4);
    char moved_path[320];
    snprintf(moved_path, sizeof(moved_path), "%s/log.jsonl", moved);
    ls = close_and_read(log, moved_path);
    CHECKF(ls.n == 3, "old file after a failed reopen: %d lines", ls.n);
    lines_free(&ls);
}

static void test_finish(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "finish.jsonl");
    struct cc_error err = {""};

    // No results at all: a summary with zero frames and nulls where there is nothing to say.
    struct cc_detlog *log = open_log(path, CC_DETLOG_DETECTIONS, 0.5, 0.1, 0.3, 10);
    CHECK(cc_detlog_finish(log, &err));
    struct cc_result r = result(1, 100, 1, 1, "cat", 0.9f, 0, NULL, 0);
    CHECK(cc_detlog_write(log, &r, &err)); // ignored after finish
    CHECK(cc_detlog_finish(log, &err));    // a second finish does nothing
    struct lines ls = close_and_read(log, path);
    CHECKF(ls.n == 1, "%d lines", ls.n);
    if (ls.n == 1) {
        const cJSON *o = ls.item[0];
        CHECK(num(o, "frames") == 0 && num(o, "lines") == 0);
        CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "seq")));
        CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "latency_ms")));
    }
    lines_free(&ls);
    cc_detlog_destroy(NULL);
}

static void test_escaping(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "escape.jsonl");
    struct cc_detlog_config cfg = {
        .path = path,
        .mode = CC_DETLOG_EVERY_FRAME,
        .threshold = 0.5,
        .source = "cam \"front\"\n",
        .model = "m\\odel",
        .backend = NULL,
    };
    struct cc_error err = {""};
    struct cc_detlog *log = cc_detlog_create(&cfg, &err);
    CHECKF(log != NULL, "create: %s", err.msg);
    if (!log)
        return;
    const char *labels[] = {
        "say \"cheese\"",    "two\nlines\r",
        "tab\there \\ back", "caf\xc3\xa9 \xe7\x8c\xab \xf0\x9f\x90\xb1",
        "ctl \x01\x1f",      "bad \xff\xfe end",
        "overlong \xc0\xaf", "cut \xe7\x8c",
    };
    const char *want[] = {
        "say \"cheese\"",
        "two\nlines\r",
        "tab\there \\ back",
        "caf\xc3\xa9 \xe7\x8c\xab \xf0\x9f\x90\xb1",
        "ctl \x01\x1f",
        "bad \xef\xbf\xbd\xef\xbf\xbd end",
        "overlong \xef\xbf\xbd\xef\xbf\xbd",
        "cut \xef\xbf\xbd\xef\xbf\xbd",
    };
    int n = N(labels);
    for (int i = 0; i < n; i++) {
        struct cc_result r =
            result((uint64_t)i + 1, 100.0 * i, 2, i, labels[i], 0.6f, 99, NULL, 0.1f);
        write_ok(log, &r);
    }
    struct lines ls = close_and_read(log, path);
    CHECKF(ls.n == n + 1 && ls.bad == 0, "%d lines, %d bad (want %d)", ls.n, ls.bad, n + 1);
    for (int i = 0; i < ls.n && i < n; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(ls.item[i], "top");
        const char *got = str(cJSON_GetArrayItem(t, 0), "label");
        CHECKF(got && strcmp(got, want[i]) == 0, "label %d came back as \"%s\"", i,
               got ? got : "(none)");
        CHECK(strcmp(str(cJSON_GetArrayItem(t, 1), "label"), "") == 0); // NULL label
        CHECK(strcmp(str(ls.item[i], "source"), "cam \"front\"\n") == 0);
        CHECK(strcmp(str(ls.item[i], "model"), "m\\odel") == 0);
        CHECK(strcmp(str(ls.item[i], "backend"), "") == 0);
    }
    lines_free(&ls);
}

static void test_write_errors(void)
{
    struct cc_error err = {""};
    struct cc_result r = result(1, 100, 1, 1, "cat", 0.9f, 0, NULL, 0);

    // Disk full: reported once, then silent; the summary's failure is reported again.
    struct cc_detlog *log = open_log("/dev/full", CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0);
    if (log) {
        CHECK(!cc_detlog_write(log, &r, &err));
        CHECKF(strstr(err.msg, "/dev/full") && strstr(err.msg, strerror(ENOSPC)), "message: %s",
               err.msg);
        int quiet = 0;
        for (int i = 0; i < 10; i++) {
            err.msg[0] = '\0';
            quiet += cc_detlog_write(log, &r, &err) && err.msg[0] == '\0';
        }
        CHECKF(quiet == 10, "%d of 10 later failures stayed quiet", quiet);
        CHECK(!cc_detlog_reader_gone(log)); // a full disk is not a reader that left
        CHECK(cc_detlog_reopen(log, &err)); // re-arms the report
        CHECK(!cc_detlog_write(log, &r, &err));
        CHECK(!cc_detlog_finish(log, &err));
        cc_detlog_destroy(log);
    }

    // A pipe whose reader went away (EPIPE): no crash with SIGPIPE ignored, as detlog.h asks;
    // reported once, then the log knows its reader is gone and writes nothing more, not even
    // the summary (camclass ends its run there: `camclass --log - | head -1`).
    int p[2];
    if (!CHECK(pipe(p) == 0))
        return;
    signal(SIGPIPE, SIG_IGN);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
    log = open_log(path, CC_DETLOG_DETECTIONS, 0.5, 0.1, 0, 0);
    close(p[0]);
    close(p[1]);
    if (log) {
        err.msg[0] = '\0';
        CHECK(!cc_detlog_write(log, &r, &err));
        CHECKF(strstr(err.msg, strerror(EPIPE)) != NULL, "message: %s", err.msg);
        CHECK(cc_detlog_reader_gone(log));
        err.msg[0] = '\0';
        CHECK(cc_detlog_write(log, &r, &err) && err.msg[0] == '\0');
        CHECK(cc_detlog_finish(log, &err) && err.msg[0] == '\0');
        cc_detlog_destroy(log);
    }
}

// A write cut short (here by RLIMIT_FSIZE: part of the line fits, then EFBIG; a full disk does
// the same): the part written is cut off again, so the file holds whole lines only and only the
// cut line is lost (counted).
static void test_partial_line(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "partial.jsonl");
    struct cc_error err = {""};
    struct cc_detlog *log = open_log(path, CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0);
    if (!log)
        return;
    struct cc_result r = result(1, 100, 1, 1, "cat", 0.9f, 0, NULL, 0);
    write_ok(log, &r);
    struct stat st;
    struct rlimit saved, lim;
    if (!CHECK(stat(path, &st) == 0 && getrlimit(RLIMIT_FSIZE, &saved) == 0))
        return;
    signal(SIGXFSZ, SIG_IGN);
    lim = saved;
    lim.rlim_cur = (rlim_t)st.st_size + 40; // part of the next line fits
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    r.seq = 2;
    bool ok = cc_detlog_write(log, &r, &err);
    CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
    CHECKF(!ok && strstr(err.msg, strerror(EFBIG)), "cut write: %s", err.msg);
    r.seq = 3;
    write_ok(log, &r);
    CHECK(cc_detlog_finish(log, &err));
    cc_detlog_destroy(log);

    // Lines: seq 1, seq 3, the summary: the 40 bytes of seq 2 that fit were cut off again (a
    // regular file holds whole lines only).
    size_t size;
    char *text = tu_read_file(path, &size);
    if (!CHECK(text != NULL))
        return;
    const char *want[] = {"1", "3", "summary"};
    int n = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
        cJSON *o = cJSON_Parse(l);
        if (n < 3 && strcmp(want[n], "summary") == 0) {
            CHECK(o && strcmp(event_of(o), "summary") == 0 && num(o, "lines_lost") == 1);
        } else if (n < 3) {
            CHECKF(o && num(o, "seq") == atof(want[n]), "line %d: %s", n, l);
        }
        cJSON_Delete(o);
    }
    CHECKF(n == 3, "%d lines", n);
    free(text);
}

static void test_stdout(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "stdout.jsonl");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!CHECK(saved >= 0 && fd >= 0))
        return;
    dup2(fd, STDOUT_FILENO);
    close(fd);
    struct cc_error err = {""};
    struct cc_detlog *log = open_log("-", CC_DETLOG_EVERY_FRAME, 0.5, 0.1, 0, 0);
    struct cc_result r = result(1, 100, 1, 1, "cat", 0.9f, 0, NULL, 0);
    if (log) {
        write_ok(log, &r);
        CHECK(cc_detlog_reopen(log, &err)); // nothing to reopen
        write_ok(log, &r);
    }
    struct lines ls = close_and_read(log, path); // destroy must not close stdout
    CHECK(write(STDOUT_FILENO, "", 0) == 0);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    CHECKF(ls.n == 3, "stdout: %d lines", ls.n);
    lines_free(&ls);

    // NULL path is standard output too.
    struct cc_detlog_config cfg = {.path = NULL, .threshold = 0.5};
    log = cc_detlog_create(&cfg, &err);
    CHECK(log != NULL);
    cc_detlog_destroy(log);
}

static void test_bad_config(void)
{
    struct {
        struct cc_detlog_config cfg;
        const char *word;
    } cases[] = {
        {{.path = "-", .threshold = 1.5}, "threshold"},
        {{.path = "-", .threshold = NAN}, "threshold"},
        {{.path = "-", .threshold = 0.5, .hysteresis = 0.6}, "hysteresis"},
        {{.path = "-", .threshold = 0.5, .hysteresis = -0.1}, "hysteresis"},
        {{.path = "-", .threshold = 0.5, .ewma_alpha = 1.5}, "alpha"},
        {{.path = "-", .threshold = 0.5, .stats_interval_s = -1}, "stats interval"},
        {{.path = "-", .mode = (enum cc_detlog_mode)7, .threshold = 0.5}, "mode"},
        {{.path = "/nonexistent-dir/x.jsonl", .threshold = 0.5}, "/nonexistent-dir/x.jsonl"},
    };
    for (int i = 0; i < N(cases); i++) {
        struct cc_error err = {""};
        struct cc_detlog *log = cc_detlog_create(&cases[i].cfg, &err);
        CHECKF(!log && strstr(err.msg, cases[i].word), "case %d: %s", i, err.msg);
        cc_detlog_destroy(log);
    }
}

// The backend a result names (the engine switched from Vulkan to the CPU mid-run) is the one on
// its line and every later line, the summary included; a result that names none keeps it.
static void test_backend_switch(void)
{
    char path[300];
    tmp_path(path, sizeof(path), "backend.jsonl");
    struct cc_detlog_config cfg = {.path = path, .source = "s", .model = "m", .backend = "vulkan"};
    struct cc_error err = {""};
    struct cc_detlog *log = cc_detlog_create(&cfg, &err);
    if (!CHECKF(log != NULL, "create: %s", err.msg))
        return;
    const char *said[] = {"vulkan", NULL, "cpu", NULL};
    for (int i = 0; i < 4; i++) {
        struct cc_result r =
            result((uint64_t)i + 1, 100.0 * (i + 1), 1, 1, "cat", 0.9f, 0, NULL, 0);
        r.backend = said[i];
        write_ok(log, &r);
    }
    CHECK(cc_detlog_finish(log, &err));
    cc_detlog_destroy(log);
    struct lines ls = read_lines(path);
    const char *want[] = {"vulkan", "vulkan", "cpu", "cpu", "cpu"}; // 4 frames, the summary
    CHECKF(ls.n == 5, "%d lines", ls.n);
    for (int i = 0; i < ls.n && i < 5; i++) {
        const char *got = str(ls.item[i], "backend");
        CHECKF(got && strcmp(got, want[i]) == 0, "line %d: backend %s, want %s", i + 1,
               got ? got : "(none)", want[i]);
    }
    lines_free(&ls);
}

int main(void)
{
    if (!tu_tmpdir(tmpdir, sizeof(tmpdir), "test_detlog"))
        return tu_exit_code();

    test_every_frame();
    test_detections();
    test_stats_in_detections_mode();
    test_reopen();
    test_finish();
    test_escaping();
    test_write_errors();
    test_partial_line();
    test_backend_switch();
    test_stdout();
    test_bad_config();

    int rc = tu_exit_code();
    if (rc == 0) {
        tu_rmtree(tmpdir);
    } else {
        fprintf(stderr, "files kept in %s\n", tmpdir);
    }
    return rc;
}
