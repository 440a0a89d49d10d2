/* camclass-train — what training found (see train_report.h). */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "train_report.h"

enum { FEW_IMAGES = 5 }; // fewer per class than this: a warning

bool cc_train_report_count(struct cc_train_report *r, const int *truth, const int *predicted, int n)
{
    int k = r->data->n_classes;
    if (!(r->confusion = calloc((size_t)k * k, sizeof(int))))
        return false;
    for (int i = 0; i < n; i++) {
        r->confusion[truth[i] * k + predicted[i]]++;
        r->correct += truth[i] == predicted[i];
    }
    r->held = n;
    return true;
}

/* Precision and recall of class c on the held-out images (NAN where undefined). */
static void class_scores(const struct cc_train_report *r, int c, double *precision, double *recall)
{
    int k = r->data->n_classes, tp = r->confusion[c * k + c], row = 0, col = 0;
    for (int j = 0; j < k; j++)
        row += r->confusion[c * k + j], col += r->confusion[j * k + c];
    *precision = col ? (double)tp / col : NAN;
    *recall = row ? (double)tp / row : NAN;
}

/* The int8 bundle's line: calibration, its held-out accuracy next to the f32 head's, and how
 * often the two give the same top-1. */
static void print_int8(const struct cc_train_report *r, FILE *out)
{
    const struct cc_train_int8 *q = r->int8;
    fprintf(out, "int8: calibrated on %d training images; ", q->calibration_images);
    if (q->held)
        fprintf(out,
                "held out %d of %d right (%.1f%%; f32 %.1f%%), same answer as f32 on %d "
                "(%.1f%%), on %s\n",
                q->correct, q->held, 100.0 * q->correct / q->held,
                r->held ? 100.0 * r->correct / r->held : 0.0, q->agree, 100.0 * q->agree / q->held,
                q->device);
    else
        fprintf(out, "no held-out images (--val 0) to measure it on\n");
}

void cc_train_report_print(const struct cc_train_report *r, FILE *out)
{
    const struct cc_dataset *d = r->data;
    int k = d->n_classes;
    fprintf(out,
            "head: %d classes x %d features; %d L-BFGS iterations, kept #%d (%s); "
            "loss %.4f training, %.4f held out\n",
            k, r->dim, r->fit.iterations, r->fit.best_iteration, r->fit.stop, r->fit.train_loss,
            r->fit.held_loss);
    if (r->held)
        fprintf(out, "held out: %d of %d images right (%.1f%%)\n", r->correct, r->held,
                100.0 * r->correct / r->held);
    else
        fprintf(out, "held out: none (--val 0): no accuracy to report\n");
    if (r->int8)
        print_int8(r, out);
    if (r->unknown_threshold > 0)
        fprintf(out, "unknown: camclass answers \"unknown\" below a top probability of %.3f\n",
                r->unknown_threshold);
    else
        fprintf(out, "unknown: never (no threshold)\n");
    fprintf(out, "%-24s %7s %5s %9s %7s\n", "class", "images", "held", "precision", "recall");
    for (int c = 0; c < k; c++) {
        double p, rc;
        class_scores(r, c, &p, &rc);
        fprintf(out, "%-24s %7d %5d %9.3f %7.3f\n", d->classes[c], d->counts[c], d->held_counts[c],
                p, rc);
    }
    fprintf(out, "confusion (rows: true class, columns: predicted, in the order above):\n");
    for (int c = 0; c < k; c++) {
        for (int j = 0; j < k; j++)
            fprintf(out, "%s%5d", j ? " " : "  ", r->confusion[c * k + j]);
        fputc('\n', out);
    }
    for (int c = 0; c < k; c++) {
        double p, rc;
        class_scores(r, c, &p, &rc);
        if (d->counts[c] < FEW_IMAGES)
            fprintf(out,
                    "warning: class \"%s\" has %d images; give it %d or more, from "
                    "different moments and angles\n",
                    d->classes[c], d->counts[c], FEW_IMAGES * 4);
        else if (d->held_counts[c] && rc < 0.5)
            fprintf(out,
                    "warning: class \"%s\": %.0f%% of its held-out images were taken for "
                    "another class; its images may not show what tells it apart (crop "
                    "to it), or some may be in the wrong folder\n",
                    d->classes[c], 100 * (1 - rc));
    }
    if (r->check)
        cc_dataset_check_print(d, r->check, out);
}

static cJSON *add_num(cJSON *o, const char *key, double v)
{
    return isfinite(v) ? cJSON_AddNumberToObject(o, key, v) : cJSON_AddNullToObject(o, key);
}

/* "int8": {"calibration_images", "held_out_images", "held_out_accuracy", "agreement"}. */
static void int8_json(const struct cc_train_int8 *q, cJSON *o)
{
    cJSON *j = cJSON_AddObjectToObject(o, "int8");
    cJSON_AddNumberToObject(j, "calibration_images", q->calibration_images);
    cJSON_AddNumberToObject(j, "held_out_images", q->held);
    add_num(j, "held_out_accuracy", q->held ? (double)q->correct / q->held : NAN);
    add_num(j, "agreement", q->held ? (double)q->agree / q->held : NAN);
}

cJSON *cc_train_report_json(const struct cc_train_report *r)
{
    const struct cc_dataset *d = r->data;
    int k = d->n_classes;
    cJSON *o = cJSON_CreateObject(), *classes = cJSON_AddArrayToObject(o, "classes");
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(o, "tool", "camclass-train " CAMCLASS_VERSION);
    cJSON_AddStringToObject(o, "date", date);
    cJSON *base = cJSON_AddObjectToObject(o, "base");
    cJSON_AddStringToObject(base, "name", r->base_name);
    cJSON_AddStringToObject(base, "sha256", r->base_sha256);
    cJSON_AddNumberToObject(o, "augment", r->augment);
    cJSON_AddNumberToObject(o, "seed", (double)r->seed);
    cJSON_AddNumberToObject(o, "held_out_images", r->held);
    add_num(o, "held_out_accuracy", r->held ? (double)r->correct / r->held : NAN);
    cJSON_AddNumberToObject(o, "unknown_threshold", r->unknown_threshold);
    cJSON *conf = cJSON_AddArrayToObject(o, "confusion");
    for (int c = 0; c < k; c++) {
        double p, rc;
        class_scores(r, c, &p, &rc);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", d->classes[c]);
        cJSON_AddNumberToObject(e, "images", d->counts[c]);
        cJSON_AddNumberToObject(e, "held_out", d->held_counts[c]);
        add_num(e, "precision", p);
        add_num(e, "recall", rc);
        cJSON_AddItemToArray(classes, e);
        cJSON_AddItemToArray(conf, cJSON_CreateIntArray(r->confusion + c * k, k));
    }
    if (r->check)
        cc_dataset_check_json(d, r->check, o);
    if (r->int8)
        int8_json(r->int8, o);
    return o;
}

void cc_train_report_finish(struct cc_train_report *r)
{
    free(r->confusion);
    r->confusion = NULL;
}
