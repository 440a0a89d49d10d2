/* camclass — a class activation map in JSON (see cam_json.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cam_json.h"

static cJSON *numbers(const float *v, int n, double scale)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(round((double)v[i] * scale) / scale));
    return a;
}

/* The label of class index in the frame object's "top", or "". */
static const char *top_label(const cJSON *frame, int index)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(frame, "top"))
    {
        const cJSON *i = cJSON_GetObjectItemCaseSensitive(e, "index");
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "label");
        if (cJSON_IsNumber(i) && i->valuedouble == index && cJSON_IsString(l))
            return l->valuestring;
    }
    return "";
}

char *cc_cam_json_add(const char *frame_line, const struct cc_result_cam *cam)
{
    cJSON *o = cJSON_Parse(frame_line);
    cJSON *c = cJSON_IsObject(o) ? cJSON_AddObjectToObject(o, "cam") : NULL;
    char *text = NULL, *line = NULL;
    if (c) {
        cJSON_AddNumberToObject(c, "index", cam->index);
        cJSON_AddStringToObject(c, "label", top_label(o, cam->index));
        cJSON_AddNumberToObject(c, "w", cam->w);
        cJSON_AddNumberToObject(c, "h", cam->h);
        cJSON_AddItemToObject(c, "area", numbers(cam->area, 4, 1e6));
        cJSON_AddItemToObject(c, "values", numbers(cam->v, cam->w * cam->h, 1e4));
        text = cJSON_PrintUnformatted(o);
    }
    if (text && (line = malloc(strlen(text) + 2))) {
        strcpy(line, text);
        strcat(line, "\n");
    }
    cJSON_free(text);
    cJSON_Delete(o);
    return line;
}
