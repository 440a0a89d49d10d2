/* camclass — Chrome trace writer (see trace.h), on cJSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "trace.h"

struct cc_trace {
    cJSON *root;   // {"traceEvents": [...], "displayTimeUnit": "ms"}, owned
    cJSON *events; // the array inside root
};

enum { TRACE_PID = 1 }; // one process: the benchmark

struct cc_trace *cc_trace_create(void)
{
    struct cc_trace *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->root = cJSON_CreateObject();
    t->events = cJSON_AddArrayToObject(t->root, "traceEvents");
    if (!t->events || !cJSON_AddStringToObject(t->root, "displayTimeUnit", "ms")) {
        cc_trace_destroy(t);
        return NULL;
    }
    return t;
}

// A new event object with the fields every event has, appended to the array; NULL when out
// of memory.
static cJSON *add_event(struct cc_trace *t, const char *name, const char *ph, int tid)
{
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return NULL;
    if (!cJSON_AddStringToObject(e, "name", name) || !cJSON_AddStringToObject(e, "ph", ph) ||
        !cJSON_AddNumberToObject(e, "pid", TRACE_PID) || !cJSON_AddNumberToObject(e, "tid", tid) ||
        !cJSON_AddItemToArray(t->events, e)) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

bool cc_trace_thread_name(struct cc_trace *t, int tid, const char *name)
{
    cJSON *e = add_event(t, "thread_name", "M", tid);
    cJSON *args = e ? cJSON_AddObjectToObject(e, "args") : NULL;
    return args && cJSON_AddStringToObject(args, "name", name);
}

bool cc_trace_complete(struct cc_trace *t, const char *name, const char *cat, int tid, double ts_us,
                       double dur_us, int run)
{
    cJSON *e = add_event(t, name, "X", tid);
    if (!e || !cJSON_AddStringToObject(e, "cat", cat) || !cJSON_AddNumberToObject(e, "ts", ts_us) ||
        !cJSON_AddNumberToObject(e, "dur", dur_us))
        return false;
    cJSON *args = cJSON_AddObjectToObject(e, "args");
    return args && cJSON_AddNumberToObject(args, "run", run);
}

bool cc_trace_write(const struct cc_trace *t, const char *path, struct cc_error *err)
{
    char *text = cJSON_PrintUnformatted(t->root);
    if (!text)
        return cc_error_set(err, "trace: out of memory formatting %s", path);
    FILE *f = fopen(path, "w");
    if (!f) {
        cc_error_set(err, "trace: cannot create %s: %s", path, strerror(errno));
        free(text);
        return false;
    }
    size_t len = strlen(text);
    bool ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
    ok = (fclose(f) == 0) && ok;
    free(text);
    if (!ok)
        return cc_error_set(err, "trace: writing %s failed: %s; check the disk space", path,
                            strerror(errno));
    return true;
}

void cc_trace_destroy(struct cc_trace *t)
{
    if (!t)
        return;
    cJSON_Delete(t->root);
    free(t);
}
