/* camclass — the headless detection log (see detlog.h and docs/LOG_FORMAT.md). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "detector.h"
#include "detlog.h"
#include "log_text.h"
#include "utf8.h"

/* ---------------------------------------------------------------------------------------------
 * State
 */

struct detlog_stats {
    int64_t start_ns;    // result_ns where the interval began
    uint64_t frames;     // results in the interval
    uint64_t detections; // "detection" lines in the interval
    uint64_t dropped0;   // the result's dropped counter when the interval began
    double latency_sum;  // sum of latency_ms over the interval
};

struct cc_detlog {
    struct cc_detlog_config cfg; // path/source/model/backend point to the copies below
    char *path;                  // NULL when logging to standard output or to a sink
    char *source, *model, *backend;
    char *camera;  // NULL: no "camera" field
    int fd;        // the open log; STDOUT_FILENO (never closed) for standard output; -1 with
                   // a sink
    bool failing;  // the last write failed and was reported; later failures stay silent
    bool gone;     // a write failed with EPIPE: nobody reads the log; write nothing more
    bool partial;  // a failed write may have left a partial line: start the next with '\n'
    bool finished; // cc_detlog_finish ran

    struct cc_detector *det; // the detections mode's decision (idle in every-frame mode)

    // cc_detlog_note: fields for the next result's line, forgotten after it.
    struct {
        const char *key; // static
        char *value;     // owned
    } notes[CC_DETLOG_NOTES];
    int n_notes;

    // Totals of the run, for the summary.
    uint64_t frames, detections, clears, lines, lines_lost;
    uint64_t last_seq, last_dropped;
    double latency_sum, latency_max;
    int64_t first_ns, last_ns;

    struct detlog_stats st;
};

/* ---------------------------------------------------------------------------------------------
 * Strings
 */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* ---------------------------------------------------------------------------------------------
 * JSON building. cJSON escapes quotes, backslashes and control characters; labels are made
 * valid UTF-8 first. A failed allocation inside cJSON leaves a key out, and the final print
 * then fails as a whole, which is reported like a write error.
 */

static void add_string(cJSON *o, const char *key, const char *s)
{
    if (!s)
        s = "";
    if (cc_utf8_valid(s)) {
        cJSON_AddStringToObject(o, key, s);
        return;
    }
    char *clean = cc_utf8_clean_dup(s);
    if (clean)
        cJSON_AddStringToObject(o, key, clean);
    free(clean);
}

// A number rounded to 1/scale (scores to 1e-6, milliseconds to 1e-3, ...) so that floats print
// as short decimals; null when not finite (JSON has no NaN).
static void add_number(cJSON *o, const char *key, double v, double scale)
{
    if (!isfinite(v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, round(v * scale) / scale);
}

static void add_class(cJSON *o, const char *key, int index, const char *label, double score)
{
    cJSON *c = cJSON_AddObjectToObject(o, key);
    if (!c)
        return;
    cJSON_AddNumberToObject(c, "index", index);
    add_string(c, "label", label);
    add_number(c, "score", score, 1e6);
}

// A new line with the fields every line carries: ts, event, source, model, backend.
static cJSON *line_begin(const struct cc_detlog *log, const char *event)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    // Wall-clock time of the write (CLOCK_REALTIME), not of the capture: see LOG_FORMAT.md.
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    char ts[40];
    size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", now.tv_nsec / 1000000);
    cJSON_AddStringToObject(o, "ts", ts);
    cJSON_AddStringToObject(o, "event", event);
    if (log->camera)
        add_string(o, "camera", log->camera);
    add_string(o, "source", log->source);
    add_string(o, "model", log->model);
    add_string(o, "backend", log->backend);
    return o;
}

static void forget_notes(struct cc_detlog *log)
{
    for (int i = 0; i < log->n_notes; i++)
        free(log->notes[i].value);
    log->n_notes = 0;
}

bool cc_detlog_note(struct cc_detlog *log, const char *key, const char *value)
{
    char *v = log->n_notes < CC_DETLOG_NOTES ? dup_or_empty(value) : NULL;
    if (!v)
        return false;
    log->notes[log->n_notes].key = key;
    log->notes[log->n_notes++].value = v;
    return true;
}

// The per-result fields of "frame", "detection" and "clear" lines.
static void add_result(cJSON *o, const struct cc_result *r)
{
    cJSON_AddNumberToObject(o, "seq", (double)r->seq);
    if (r->file)
        add_string(o, "file", r->file);
    add_number(o, "latency_ms", r->latency_ms, 1e3);
    add_number(o, "fps", r->inference_fps, 1e2);
    add_number(o, "camera_fps", r->camera_fps, 1e2);
    cJSON_AddNumberToObject(o, "dropped", (double)r->dropped);
    if (r->unknown)
        cJSON_AddTrueToObject(o, "unknown");
    cJSON *top = cJSON_AddArrayToObject(o, "top");
    if (!top)
        return;
    int n = r->n_top < 0 ? 0 : r->n_top > CC_RESULT_MAX_TOP ? CC_RESULT_MAX_TOP : r->n_top;
    for (int i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        if (!c)
            return;
        cJSON_AddItemToArray(top, c);
        cJSON_AddNumberToObject(c, "index", r->top[i].index);
        add_string(c, "label", r->top[i].label);
        add_number(c, "score", r->top[i].score, 1e6);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Output: one write(2) per line
 */

static bool write_all(int fd, const char *buf, size_t len, size_t *written)
{
    *written = 0;
    while (*written < len) {
        ssize_t w = write(fd, buf + *written, len - *written);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        *written += (size_t)w;
    }
    return true;
}

/* A write that failed midway (a full disk) left the first `written` bytes of a line at the end
 * of a regular file: cut them off, so that the file holds whole lines only. False when fd is no
 * regular file (a pipe cannot take bytes back) or the cut fails. */
static bool cut_partial(int fd, size_t written)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < written)
        return false;
    return ftruncate(fd, st.st_size - (off_t)written) == 0;
}

// Hands o, printed as one line, to the config's sink and frees o.
static bool emit_to_sink(struct cc_detlog *log, cJSON *o)
{
    const char *event = o ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "event")) : "";
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    bool ok = text && log->cfg.sink(log->cfg.sink_ctx, event, text, strlen(text));
    cJSON_Delete(o);
    cJSON_free(text);
    if (ok)
        log->lines++;
    else
        log->lines_lost++;
    return true; // the sink reports its own failures
}

// Prints o as one line, writes it and frees o. Errors: see cc_detlog_write in detlog.h.
static bool emit(struct cc_detlog *log, cJSON *o, struct cc_error *err)
{
    if (log->cfg.sink)
        return emit_to_sink(log, o);
    char *text = !o ? NULL : log->cfg.text ? cc_log_text(o) : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    int e = ENOMEM;
    bool ok = false;
    if (text) {
        size_t len = strlen(text);
        // Room for a leading '\n' after a partial line, the line and its '\n'.
        char *buf = malloc(len + 3);
        if (buf) {
            size_t off = 0;
            if (log->partial)
                buf[off++] = '\n';
            memcpy(buf + off, text, len);
            off += len;
            buf[off++] = '\n';
            size_t written;
            ok = write_all(log->fd, buf, off, &written);
            if (!ok) {
                e = errno;
                log->gone = e == EPIPE;
                if (written > 0 && !cut_partial(log->fd, written))
                    log->partial = true;
            } else {
                log->partial = false;
            }
            free(buf);
        }
        cJSON_free(text);
    }
    if (ok) {
        log->lines++;
        log->failing = false;
        return true;
    }
    log->lines_lost++;
    if (log->failing)
        return true; // already reported
    log->failing = true;
    return cc_error_set(err,
                        "detection log: writing to %s failed: %s; further lines are dropped until "
                        "a write succeeds (free disk space, check the reader of the pipe, or "
                        "send SIGHUP to reopen the file)",
                        log->path ? log->path : "standard output", strerror(e));
}

static bool open_log(const char *path, int *fd, struct cc_error *err)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (*fd < 0)
        return cc_error_set(err,
                            "detection log: open(\"%s\") failed: %s; check that the directory "
                            "exists and is writable, or use --log - for standard output",
                            path, strerror(errno));
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Create / destroy
 */

struct cc_detlog *cc_detlog_create(const struct cc_detlog_config *cfg, struct cc_error *err)
{
    if (cfg->mode != CC_DETLOG_EVERY_FRAME && cfg->mode != CC_DETLOG_DETECTIONS) {
        cc_error_set(err, "detection log: unknown mode %d", (int)cfg->mode);
        return NULL;
    }
    struct cc_detector_config dc = {cfg->threshold, cfg->hysteresis, cfg->ewma_alpha};
    if (!cc_detector_check(&dc, "detection log", err))
        return NULL;
    if (!(cfg->stats_interval_s >= 0 && cfg->stats_interval_s < 1e9)) {
        cc_error_set(err, "detection log: stats interval %g s is not >= 0 (0 = off)",
                     cfg->stats_interval_s);
        return NULL;
    }

    struct cc_detlog *log = calloc(1, sizeof(*log));
    if (!log) {
        cc_error_set(err, "detection log: out of memory");
        return NULL;
    }
    log->fd = -1;
    log->cfg = *cfg;
    bool to_stdout = !cfg->sink && (!cfg->path || strcmp(cfg->path, "-") == 0);
    log->path = to_stdout || cfg->sink ? NULL : strdup(cfg->path);
    log->source = dup_or_empty(cfg->source);
    log->model = dup_or_empty(cfg->model);
    log->backend = dup_or_empty(cfg->backend);
    log->camera = cfg->camera ? strdup(cfg->camera) : NULL;
    log->det = cc_detector_create(&dc, err);
    if ((!to_stdout && !cfg->sink && !log->path) || !log->source || !log->model || !log->backend ||
        !log->det || (cfg->camera && !log->camera)) {
        cc_error_set(err, "detection log: out of memory");
        goto error;
    }
    log->cfg.path = log->path;
    log->cfg.source = log->source;
    log->cfg.model = log->model;
    log->cfg.backend = log->backend;
    log->cfg.camera = log->camera;
    if (to_stdout)
        log->fd = STDOUT_FILENO;
    else if (!cfg->sink && !open_log(log->path, &log->fd, err))
        goto error;
    return log;

error:
    cc_detlog_destroy(log);
    return NULL;
}

void cc_detlog_destroy(struct cc_detlog *log)
{
    if (!log)
        return;
    if (log->path && log->fd >= 0)
        close(log->fd);
    cc_detector_destroy(log->det);
    forget_notes(log);
    free(log->path);
    free(log->source);
    free(log->camera);
    free(log->model);
    free(log->backend);
    free(log);
}

/* ---------------------------------------------------------------------------------------------
 * Lines
 */

static bool write_stats(struct cc_detlog *log, const struct cc_result *r, struct cc_error *err)
{
    struct detlog_stats *st = &log->st;
    double interval_s = (double)(r->result_ns - st->start_ns) / 1e9;
    cJSON *o = line_begin(log, "stats");
    if (o) {
        cJSON_AddNumberToObject(o, "seq", (double)r->seq);
        add_number(o, "interval_s", interval_s, 1e3);
        cJSON_AddNumberToObject(o, "frames", (double)st->frames);
        cJSON_AddNumberToObject(o, "detections", (double)st->detections);
        add_number(o, "fps", interval_s > 0 ? (double)st->frames / interval_s : 0, 1e2);
        uint64_t dropped = r->dropped >= st->dropped0 ? r->dropped - st->dropped0 : r->dropped;
        cJSON_AddNumberToObject(o, "dropped", (double)dropped);
        add_number(o, "latency_ms", st->frames ? st->latency_sum / (double)st->frames : NAN, 1e3);
    }
    *st = (struct detlog_stats){.start_ns = r->result_ns, .dropped0 = r->dropped};
    return emit(log, o, err);
}

static void add_detected(cJSON *o, const char *key, const struct cc_detection_class *c)
{
    add_class(o, key, c->index, c->label, c->score);
}

// In detections mode: the line this result calls for (NULL and *none = true when none).
static cJSON *detection_line(struct cc_detlog *log, const struct cc_result *r, bool *none)
{
    struct cc_detection d = cc_detector_update(log->det, r);
    *none = d.kind == CC_DETECTION_NONE;
    if (*none)
        return NULL;
    bool clear = d.kind == CC_DETECTION_CLEAR;
    if (clear)
        log->clears++;
    else
        log->detections++, log->st.detections++;
    cJSON *o = line_begin(log, clear ? "clear" : "detection");
    if (!o)
        return NULL;
    add_result(o, r);
    if (!clear)
        cJSON_AddStringToObject(o, "reason", d.kind == CC_DETECTION_ONSET ? "onset" : "change");
    add_detected(o, "detection", &d.now);
    if (d.kind == CC_DETECTION_CHANGE)
        add_detected(o, "previous", &d.previous);
    if (clear)
        add_number(o, "duration_s", d.held_s, 1e3);
    return o;
}

bool cc_detlog_write(struct cc_detlog *log, const struct cc_result *r, struct cc_error *err)
{
    if (log->finished || log->gone)
        return true;
    // The engine fell back (Vulkan -> CPU) mid-run: this line and every later one, the summary
    // included, name the backend that computes now.
    if (r->backend && strcmp(r->backend, log->backend) != 0) {
        char *b = dup_or_empty(r->backend);
        if (b) {
            free(log->backend);
            log->cfg.backend = log->backend = b;
        }
    }

    log->frames++;
    if (log->frames == 1) {
        log->first_ns = r->result_ns;
        log->st.start_ns = r->result_ns;
    }
    log->last_ns = r->result_ns;
    log->last_seq = r->seq;
    log->last_dropped = r->dropped;
    if (isfinite(r->latency_ms)) {
        log->latency_sum += r->latency_ms;
        log->st.latency_sum += r->latency_ms;
        if (r->latency_ms > log->latency_max)
            log->latency_max = r->latency_ms;
    }
    log->st.frames++;

    bool ok = true, none = false;
    cJSON *o = NULL;
    if (log->cfg.mode == CC_DETLOG_EVERY_FRAME) {
        if ((o = line_begin(log, "frame")))
            add_result(o, r);
    } else {
        o = detection_line(log, r, &none);
    }
    for (int i = 0; o && i < log->n_notes; i++)
        add_string(o, log->notes[i].key, log->notes[i].value);
    forget_notes(log);
    if (!none)
        ok = emit(log, o, err);

    // emit reports only the first of several failures, so err keeps the first message.
    if (log->cfg.stats_interval_s > 0 &&
        (double)(r->result_ns - log->st.start_ns) >= log->cfg.stats_interval_s * 1e9)
        ok = write_stats(log, r, err) && ok;
    return ok;
}

bool cc_detlog_model(struct cc_detlog *log, const char *name, const char *sha256,
                     const char *const *labels, int n_labels, struct cc_error *err)
{
    char *copy = dup_or_empty(name);
    if (!copy)
        return cc_error_set(err, "detection log: out of memory for the model's name");
    free(log->model);
    log->model = copy;
    log->cfg.model = copy;
    cc_detector_forget(log->det);
    if (log->finished || log->gone)
        return true;
    cJSON *o = line_begin(log, "model");
    cJSON *arr = o ? cJSON_AddArrayToObject(o, "labels") : NULL;
    if (o && sha256 && sha256[0])
        cJSON_AddStringToObject(o, "sha256", sha256);
    if (o)
        cJSON_AddNumberToObject(o, "classes", n_labels);
    for (int i = 0; arr && i < n_labels; i++) {
        char *l = cc_utf8_clean_dup(labels[i] ? labels[i] : "");
        cJSON *item = l ? cJSON_CreateString(l) : NULL;
        free(l);
        if (!item || !cJSON_AddItemToArray(arr, item))
            arr = NULL, cJSON_Delete(item);
    }
    if (!arr) {
        cJSON_Delete(o);
        log->lines_lost++;
        return cc_error_set(err, "detection log: out of memory for the model line");
    }
    return emit(log, o, err);
}

bool cc_detlog_camera(struct cc_detlog *log, const struct cc_result *r, const char *condition,
                      bool start, struct cc_error *err)
{
    if (log->finished || log->gone)
        return true;
    cJSON *o = line_begin(log, "camera");
    if (o) {
        cJSON_AddNumberToObject(o, "seq", (double)r->seq);
        add_string(o, "condition", condition);
        cJSON_AddStringToObject(o, "state", start ? "start" : "end");
        add_number(o, "mean", r->health.mean, 1e2);
        add_number(o, "std", r->health.std, 1e2);
        add_number(o, "sharpness", r->health.sharpness, 1e3);
        add_number(o, "similarity", r->health.similarity, 1e3);
    }
    return emit(log, o, err);
}

bool cc_detlog_reader_gone(const struct cc_detlog *log)
{
    return log->gone;
}

bool cc_detlog_reopen(struct cc_detlog *log, struct cc_error *err)
{
    if (!log->path)
        return true;
    int fd;
    if (!open_log(log->path, &fd, err))
        return false; // keep writing to the old file
    // A partial line left by a failed write only matters when the path is still the same file.
    struct stat a, b;
    bool same = fstat(log->fd, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
                a.st_ino == b.st_ino;
    close(log->fd);
    log->fd = fd;
    log->failing = false;
    log->gone = false;
    log->partial = log->partial && same;
    return true;
}

bool cc_detlog_finish(struct cc_detlog *log, struct cc_error *err)
{
    if (log->finished)
        return true;
    log->finished = true;
    if (log->gone)
        return true; // nobody would read the summary
    double duration_s = (double)(log->last_ns - log->first_ns) / 1e9;
    cJSON *o = line_begin(log, "summary");
    if (o) {
        if (log->frames)
            cJSON_AddNumberToObject(o, "seq", (double)log->last_seq);
        else
            cJSON_AddNullToObject(o, "seq");
        cJSON_AddNumberToObject(o, "frames", (double)log->frames);
        cJSON_AddNumberToObject(o, "detections", (double)log->detections);
        cJSON_AddNumberToObject(o, "clears", (double)log->clears);
        cJSON_AddNumberToObject(o, "lines", (double)log->lines);
        cJSON_AddNumberToObject(o, "lines_lost", (double)log->lines_lost);
        cJSON_AddNumberToObject(o, "dropped", (double)log->last_dropped);
        add_number(o, "duration_s", duration_s, 1e3);
        add_number(o, "fps",
                   log->frames > 1 && duration_s > 0 ? (double)(log->frames - 1) / duration_s : 0,
                   1e2);
        add_number(o, "latency_ms", log->frames ? log->latency_sum / (double)log->frames : NAN,
                   1e3);
        add_number(o, "latency_max_ms", log->frames ? log->latency_max : NAN, 1e3);
        struct cc_detection_class active = cc_detector_active(log->det);
        if (active.index >= 0)
            add_detected(o, "active", &active);
        else
            cJSON_AddNullToObject(o, "active");
    }
    // The summary is the last line: its failure is reported even while the log was failing.
    log->failing = false;
    return emit(log, o, err);
}
