/* camclass — the cameras of a run (see cameras.h). */
#include "cameras.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dataset.h"

static const char *const camera_keys[] = {
    "input", "camera", "loop",  "size",      "fps",      "rotation", "hflip",
    "vflip", "roi",    "model", "threshold", "log-mode", NULL,
};

// The receivers of the camera's events (app_events.c).
static const char *const event_keys[] = {
    "webhook", "on-event", "on-event-timeout", "ha-binary", "gpio", "gpio-active-low", NULL,
};

static bool camera_key(const char *key)
{
    for (int i = 0; camera_keys[i]; i++)
        if (strcmp(camera_keys[i], key) == 0)
            return true;
    for (int i = 0; event_keys[i]; i++)
        if (strcmp(event_keys[i], key) == 0)
            return true;
    return false;
}

/* The camera's "name": present, a string, safe, not one before it. who names the camera. */
static bool read_name(const cJSON *obj, const struct cc_cameras *c, const char *who,
                      struct cc_camera *cam, struct cc_error *err)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (!name)
        return cc_error_set(err, "%s has no \"name\"; give each camera one (\"name\": \"door\")",
                            who);
    if (!cJSON_IsString(name))
        return cc_error_set(err, "%s: \"name\" takes a string", who);
    const char *problem = cc_dataset_class_name_problem(name->valuestring);
    if (problem)
        return cc_error_set(err,
                            "%s: \"name\" \"%.80s\" %s; a camera name is one folder name "
                            "(letters, digits, '_', '-', '.')",
                            who, name->valuestring, problem);
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->cam[i].name, name->valuestring) == 0)
            return cc_error_set(err,
                                "%s: \"name\" \"%s\" is given to two cameras; make each unique",
                                who, name->valuestring);
    snprintf(cam->name, sizeof(cam->name), "%s", name->valuestring);
    return true;
}

/* One camera object into cam (its name first, then its keys). */
static bool read_camera(const cJSON *obj, const struct cc_cameras *c, const char *config, int i,
                        struct cc_camera *cam, struct cc_error *err)
{
    char who[CC_CAMERA_NAME_MAX + 320];
    snprintf(who, sizeof(who), "config %s: camera %d", config, i + 1);
    if (!cJSON_IsObject(obj))
        return cc_error_set(err, "%s is not an object ({\"name\": ..., \"input\": ...})", who);
    if (!read_name(obj, c, who, cam, err))
        return false;
    snprintf(who, sizeof(who), "config %s: camera \"%s\"", config, cam->name);
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        const char *key = item->string;
        if (strcmp(key, "name") == 0)
            continue;
        char where[sizeof(who) + 80];
        snprintf(where, sizeof(where), "%s: \"%.60s\"", who, key);
        if (!camera_key(key))
            return cc_error_set(err, "%s is not a camera key (a camera takes name, %s)", where,
                                CC_CAMERA_KEYS);
        if (!cc_cli_set_json(&cam->own, key, item, where, err))
            return false;
    }
    if (!cam->own.camera == !cam->own.input)
        return cc_error_set(err,
                            "%s: give one source, \"input\" (a file, folder or URL) or "
                            "\"camera\" (a device or index)%s",
                            who, cam->own.camera ? ", not both" : "");
    return true;
}

bool cc_cameras_read(const struct cc_cli *cli, const char *config, struct cc_cameras *out,
                     struct cc_error *err)
{
    *out = (struct cc_cameras){0};
    if (!cli->cameras || cc_cli_given(cli, "camera") || cc_cli_given(cli, "input")) {
        if (!(out->cam = calloc(1, sizeof(*out->cam))))
            return cc_error_set(err, "out of memory");
        cc_cli_init(&out->cam[0].own);
        out->n = 1;
        return true;
    }
    cJSON *arr = cJSON_Parse(cli->cameras); // cli.c printed it from a parsed array
    int n = arr ? cJSON_GetArraySize(arr) : 0;
    if (n > CC_CAMERAS_MAX) {
        cJSON_Delete(arr);
        return cc_error_set(err, "config %s: %d cameras; at most %d run in one camclass", config, n,
                            CC_CAMERAS_MAX);
    }
    out->from_config = true;
    if (!arr || !(out->cam = calloc((size_t)n, sizeof(*out->cam)))) {
        cJSON_Delete(arr);
        return cc_error_set(err, "out of memory reading config %s", config);
    }
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
        cc_cli_init(&out->cam[i].own);
        ok = read_camera(cJSON_GetArrayItem(arr, i), out, config, i, &out->cam[i], err);
        out->n = i + 1; // finish frees it, read or not
    }
    cJSON_Delete(arr);
    if (!ok)
        cc_cameras_finish(out);
    return ok;
}

/* The camera's own events' receivers in place of the top-level ones. */
static void view_events(const struct cc_cli *own, struct cc_cli *view)
{
    if (own->webhook)
        view->webhook = own->webhook;
    if (own->on_event)
        view->on_event = own->on_event;
    if (cc_cli_given(own, "on-event-timeout"))
        view->on_event_timeout = own->on_event_timeout;
    if (own->ha_binary)
        view->ha_binary = own->ha_binary;
    if (own->gpio.count)
        view->gpio = own->gpio;
    if (cc_cli_given(own, "gpio-active-low"))
        view->gpio_active_low = own->gpio_active_low;
}

void cc_cameras_view(const struct cc_cameras *c, int i, const struct cc_cli *top,
                     struct cc_cli *view)
{
    const struct cc_cli *own = &c->cam[i].own;
    *view = *top;
    if (own->camera || own->input) {
        view->camera = own->camera;
        view->input = own->input;
    }
    if (cc_cli_given(own, "loop"))
        view->loop = own->loop;
    if (cc_cli_given(own, "size"))
        view->width = own->width, view->height = own->height;
    if (cc_cli_given(own, "fps"))
        view->fps = own->fps;
    if (cc_cli_given(own, "rotation"))
        view->rotation = own->rotation;
    if (cc_cli_given(own, "hflip"))
        view->hflip = own->hflip;
    if (cc_cli_given(own, "vflip"))
        view->vflip = own->vflip;
    if (own->roi_set)
        view->roi = own->roi, view->roi_set = true;
    if (own->model)
        view->model = own->model;
    if (cc_cli_given(own, "threshold"))
        view->threshold = own->threshold;
    if (own->log_mode)
        view->log_mode = own->log_mode;
    view_events(own, view);
}

void cc_cameras_finish(struct cc_cameras *c)
{
    for (int i = 0; i < c->n; i++)
        cc_cli_finish(&c->cam[i].own);
    free(c->cam);
    *c = (struct cc_cameras){0};
}
