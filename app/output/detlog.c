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

#include "detlog.h"

// Class indices above this are ignored by the smoothing (a result with a wild index must not
// make the log allocate gigabytes); real models have a few thousand classes at most.
#define DETLOG_MAX_CLASSES (1 << 20)

/* ---------------------------------------------------------------------------------------------
 * State
 */

struct detlog_class {
    double score; // smoothed score (EWMA, or the latest score when smoothing is off)
    char *label;  // copy of the latest label seen for this index (valid UTF-8), or NULL
};

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
    int fd;        // the open log; STDOUT_FILENO (never closed) for standard output; -1 with
                   // a sink
    bool failing;  // the last write failed and was reported; later failures stay silent
    bool gone;     // a write failed with EPIPE: nobody reads the log; write nothing more
    bool partial;  // a failed write may have left a partial line: start the next with '\n'
    bool finished; // cc_detlog_finish ran

    struct detlog_class *cls; // (n_cls) per class index
    int n_cls;
    int active;              // class index of the current detection, -1 when none
    int64_t active_since_ns; // result_ns of its onset (or change)

    // Totals of the run, for the summary.
    uint64_t frames, detections, clears, lines, lines_lost;
    uint64_t last_seq, last_dropped;
    double latency_sum, latency_max;
    int64_t first_ns, last_ns;

    struct detlog_stats st;
};

/* ---------------------------------------------------------------------------------------------
 * Strings: copies and UTF-8 cleaning
 */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

// Length of the valid UTF-8 sequence at s, or 0 when it is not one (overlong forms, surrogates
// and code points above U+10FFFF are invalid).
static size_t utf8_seq_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; // also stops at the terminating NUL
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

// A copy of s with every byte that does not start valid UTF-8 replaced by U+FFFD, so that the
// log stays valid JSON text whatever bytes a model's label file holds. NULL when out of memory.
static char *utf8_clean_dup(const char *s)
{
    if (!s)
        s = "";
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    char *out = malloc(len * 3 + 1); // each bad byte becomes 3 bytes
    if (!out)
        return NULL;
    size_t o = 0;
    while (*p) {
        size_t n = utf8_seq_len(p);
        if (n) {
            memcpy(out + o, p, n);
            o += n;
            p += n;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        }
    }
    out[o] = '\0';
    return out;
}

static bool utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_seq_len(p);
        if (!n)
            return false;
        p += n;
    }
    return true;
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
    if (utf8_valid(s)) {
        cJSON_AddStringToObject(o, key, s);
        return;
    }
    char *clean = utf8_clean_dup(s);
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
    add_string(o, "source", log->source);
    add_string(o, "model", log->model);
    add_string(o, "backend", log->backend);
    return o;
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
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
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
    if (!(cfg->threshold >= 0 && cfg->threshold <= 1)) {
        cc_error_set(err, "detection log: threshold %g is not in [0, 1]", cfg->threshold);
        return NULL;
    }
    if (!(cfg->hysteresis >= 0 && cfg->hysteresis <= cfg->threshold)) {
        cc_error_set(err, "detection log: hysteresis %g is not in [0, threshold = %g]",
                     cfg->hysteresis, cfg->threshold);
        return NULL;
    }
    if (!(cfg->ewma_alpha >= 0 && cfg->ewma_alpha <= 1)) {
        cc_error_set(err, "detection log: EWMA alpha %g is not in [0, 1] (0 = off)",
                     cfg->ewma_alpha);
        return NULL;
    }
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
    log->active = -1;
    log->cfg = *cfg;
    bool to_stdout = !cfg->sink && (!cfg->path || strcmp(cfg->path, "-") == 0);
    log->path = to_stdout || cfg->sink ? NULL : strdup(cfg->path);
    log->source = dup_or_empty(cfg->source);
    log->model = dup_or_empty(cfg->model);
    log->backend = dup_or_empty(cfg->backend);
    if ((!to_stdout && !cfg->sink && !log->path) || !log->source || !log->model || !log->backend) {
        cc_error_set(err, "detection log: out of memory");
        goto error;
    }
    log->cfg.path = log->path;
    log->cfg.source = log->source;
    log->cfg.model = log->model;
    log->cfg.backend = log->backend;
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
    for (int i = 0; i < log->n_cls; i++)
        free(log->cls[i].label);
    free(log->cls);
    free(log->path);
    free(log->source);
    free(log->model);
    free(log->backend);
    free(log);
}

/* ---------------------------------------------------------------------------------------------
 * Smoothing and the detection state machine
 */

// Makes room for class index i. False when out of memory (that entry is then not smoothed).
static bool grow_classes(struct cc_detlog *log, int i)
{
    if (i < log->n_cls)
        return true;
    int n = log->n_cls ? log->n_cls : 64;
    while (n <= i)
        n *= 2;
    struct detlog_class *c = realloc(log->cls, (size_t)n * sizeof(*c));
    if (!c)
        return false;
    memset(c + log->n_cls, 0, (size_t)(n - log->n_cls) * sizeof(*c));
    log->cls = c;
    log->n_cls = n;
    return true;
}

// s = a*x + (1-a)*s for every class, x = the result's score (0 for classes not in its top
// list). The first result, every result when smoothing is off, and every result of an image
// input (each file is its own scene: a folder of unrelated pictures is no sequence) set s = x.
static void smooth(struct cc_detlog *log, const struct cc_result *r)
{
    double a = (log->cfg.ewma_alpha == 0 || log->frames == 1 || r->file) ? 1.0
                                                                          : log->cfg.ewma_alpha;
    for (int i = 0; i < log->n_cls; i++)
        log->cls[i].score *= 1.0 - a;
    // An "unknown" answer shows no class: every score decays, as in a frame of nothing known.
    int n = r->unknown ? 0 : r->n_top < 0 ? 0 : r->n_top > CC_RESULT_MAX_TOP ? CC_RESULT_MAX_TOP
                                                                               : r->n_top;
    for (int k = 0; k < n; k++) {
        const struct cc_result_class *t = &r->top[k];
        if (t->index < 0 || t->index >= DETLOG_MAX_CLASSES || !grow_classes(log, t->index))
            continue;
        struct detlog_class *c = &log->cls[t->index];
        if (isfinite(t->score))
            c->score += a * t->score;
        const char *label = t->label ? t->label : "";
        if (!c->label || strcmp(c->label, label) != 0) {
            char *copy = utf8_clean_dup(label);
            if (copy) {
                free(c->label);
                c->label = copy;
            }
        }
    }
}

// The smoothed top-1: highest score, lowest index on ties; -1 when no class was seen.
static int smoothed_best(const struct cc_detlog *log)
{
    int best = -1;
    for (int i = 0; i < log->n_cls; i++)
        if (log->cls[i].label && (best < 0 || log->cls[i].score > log->cls[best].score))
            best = i;
    return best;
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

// In detections mode: the line this result calls for (NULL and *none = true when none).
static cJSON *detection_line(struct cc_detlog *log, const struct cc_result *r, bool *none)
{
    double thr = log->cfg.threshold, hyst = log->cfg.hysteresis;
    int best = smoothed_best(log);
    *none = true;
    if (best < 0)
        return NULL;
    double sb = log->cls[best].score;
    const char *reason = NULL;
    int cleared = -1;
    if (log->active < 0) {
        if (sb >= thr)
            reason = "onset";
    } else {
        double sa = log->cls[log->active].score;
        if (best != log->active && sb >= thr && sb > sa + hyst)
            reason = "change";
        else if (sa < thr - hyst)
            cleared = log->active;
    }
    if (!reason && cleared < 0)
        return NULL;

    *none = false;
    int64_t held_ns = r->result_ns - log->active_since_ns;
    cJSON *o = line_begin(log, reason ? "detection" : "clear");
    if (o)
        add_result(o, r);
    if (reason) {
        if (o) {
            cJSON_AddStringToObject(o, "reason", reason);
            add_class(o, "detection", best, log->cls[best].label, sb);
            if (log->active >= 0)
                add_class(o, "previous", log->active, log->cls[log->active].label,
                          log->cls[log->active].score);
        }
        log->active = best;
        log->active_since_ns = r->result_ns;
        log->detections++;
        log->st.detections++;
    } else {
        if (o) {
            add_class(o, "detection", cleared, log->cls[cleared].label, log->cls[cleared].score);
            add_number(o, "duration_s", (double)held_ns / 1e9, 1e3);
        }
        log->active = -1;
        log->clears++;
    }
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

    bool ok = true;
    if (log->cfg.mode == CC_DETLOG_EVERY_FRAME) {
        cJSON *o = line_begin(log, "frame");
        if (o)
            add_result(o, r);
        ok = emit(log, o, err);
    } else {
        smooth(log, r);
        bool none;
        cJSON *o = detection_line(log, r, &none);
        if (!none)
            ok = emit(log, o, err);
    }

    // emit reports only the first of several failures, so err keeps the first message.
    if (log->cfg.stats_interval_s > 0 &&
        (double)(r->result_ns - log->st.start_ns) >= log->cfg.stats_interval_s * 1e9)
        ok = write_stats(log, r, err) && ok;
    return ok;
}

static void forget_classes(struct cc_detlog *log)
{
    for (int i = 0; i < log->n_cls; i++) {
        free(log->cls[i].label);
        log->cls[i] = (struct detlog_class){0};
    }
    log->active = -1;
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
    forget_classes(log);
    if (log->finished || log->gone)
        return true;
    cJSON *o = line_begin(log, "model");
    cJSON *arr = o ? cJSON_AddArrayToObject(o, "labels") : NULL;
    if (o && sha256 && sha256[0])
        cJSON_AddStringToObject(o, "sha256", sha256);
    if (o)
        cJSON_AddNumberToObject(o, "classes", n_labels);
    for (int i = 0; arr && i < n_labels; i++) {
        char *l = utf8_clean_dup(labels[i] ? labels[i] : "");
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
        if (log->active >= 0)
            add_class(o, "active", log->active, log->cls[log->active].label,
                      log->cls[log->active].score);
        else
            cJSON_AddNullToObject(o, "active");
    }
    // The summary is the last line: its failure is reported even while the log was failing.
    log->failing = false;
    return emit(log, o, err);
}
