/* camclass-train — a labelled image folder (see dataset.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "dataset.h"

enum { MAX_CLASSES = 1000, MAX_IMAGES = 1000000 };

const char *cc_dataset_class_name_problem(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return "is empty";
    if (n > CC_DATASET_CLASS_MAX)
        return "is longer than 64 bytes";
    if (strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
        return "names a folder above (. or ..), not a class";
    if (name[0] == '.')
        return "starts with '.' (a hidden folder)";
    if (name[0] == ' ' || name[n - 1] == ' ')
        return "starts or ends with a space";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p == '/' || *p == '\\')
            return "holds a '/' or '\\' (one folder name only)";
        if (*p < 0x20 || *p == 0x7f)
            return "holds a control character";
        if (!(*p >= 0x80 || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || strchr("_-. ", *p)))
            return "holds a character other than letters, digits, '_', '-', '.' and spaces";
    }
    return NULL;
}

bool cc_dataset_class_name_ok(const char *name)
{
    return cc_dataset_class_name_problem(name) == NULL;
}

static bool is_image(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && name[0] != '.' &&
           (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in dir for which keep(dir/name) holds, into *names (owned). -1 with err. */
static int list_dir(const char *dir, bool dirs, char ***names, struct cc_error *err)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return cc_error_set(err, "cannot read folder %s: %s", dir, strerror(errno)), -1;
    int n = 0, cap = 0;
    char **v = NULL;
    struct dirent *de;
    while ((de = readdir(dp))) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (de->d_name[0] == '.' || stat(path, &st) != 0 ||
            (dirs ? !S_ISDIR(st.st_mode) : !(S_ISREG(st.st_mode) && is_image(de->d_name))))
            continue;
        if (n == cap) {
            char **nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*v));
            if (!nv)
                break;
            v = nv;
        }
        if (!(v[n] = strdup(de->d_name)))
            break;
        n++;
    }
    bool complete = de == NULL;
    closedir(dp);
    if (!complete) {
        for (int i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return cc_error_set(err, "out of memory listing %s", dir), -1;
    }
    if (n) // qsort of NULL (an empty folder) is undefined, even for 0 items
        qsort(v, (size_t)n, sizeof(*v), cmp_str);
    *names = v;
    return n;
}

static void free_names(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int cc_dataset_list_classes(const char *dir, char ***names, struct cc_error *err)
{
    return list_dir(dir, true, names, err);
}

int cc_dataset_count_images(const char *class_dir, struct cc_error *err)
{
    char **files = NULL;
    int n = list_dir(class_dir, false, &files, err);
    if (n > 0)
        free_names(files, n);
    else
        free(files);
    return n;
}

void cc_dataset_free_names(char **names, int n)
{
    free_names(names, n);
}

/* Appends class k's images (dir/name/...) to d. */
static bool add_class(struct cc_dataset *d, const char *dir, int k, struct cc_error *err)
{
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/%s", dir, d->classes[k]);
    char **files = NULL;
    int n = list_dir(sub, false, &files, err);
    if (n < 0)
        return false;
    if (n == 0) {
        free(files);
        return cc_error_set(err,
                            "class folder %s holds no .jpg, .jpeg or .png image; add images "
                            "or remove the folder",
                            sub);
    }
    struct cc_sample *s = d->n_samples + n <= MAX_IMAGES
                              ? realloc(d->samples, (size_t)(d->n_samples + n) * sizeof(*s))
                              : NULL;
    if (!s) {
        free_names(files, n);
        return cc_error_set(err, "%s: too many images (at most %d in all)", dir, MAX_IMAGES);
    }
    d->samples = s;
    for (int i = 0; i < n; i++) {
        char *path = malloc(strlen(sub) + strlen(files[i]) + 2);
        if (!path) {
            free_names(files, n);
            return cc_error_set(err, "out of memory listing %s", sub);
        }
        sprintf(path, "%s/%s", sub, files[i]);
        d->samples[d->n_samples++] = (struct cc_sample){.path = path, .label = k};
    }
    d->counts[k] = n;
    free_names(files, n);
    return true;
}

bool cc_dataset_load(struct cc_dataset *d, const char *dir, struct cc_error *err)
{
    *d = (struct cc_dataset){0};
    int n = list_dir(dir, true, &d->classes, err);
    if (n < 0)
        return false;
    d->n_classes = n;
    if (n < 2 || n > MAX_CLASSES) {
        cc_error_set(err,
                     "%s holds %d class folders; a dataset needs 2 to %d "
                     "(DIR/<class>/<image>.jpg, one folder per class)",
                     dir, n, MAX_CLASSES);
        goto error;
    }
    for (int k = 0; k < n; k++)
        if (!cc_dataset_class_name_ok(d->classes[k])) {
            cc_error_set(err,
                         "%s/%s: a class name may hold letters, digits, '_', '-', '.' and "
                         "spaces (1 to 64 bytes, not starting with '.'); rename the folder",
                         dir, d->classes[k]);
            goto error;
        }
    d->counts = calloc((size_t)n, sizeof(int));
    d->held_counts = calloc((size_t)n, sizeof(int));
    if (!d->counts || !d->held_counts) {
        cc_error_set(err, "out of memory");
        goto error;
    }
    for (int k = 0; k < n; k++)
        if (!add_class(d, dir, k, err))
            goto error;
    return true;

error:
    cc_dataset_finish(d);
    return false;
}

/* xorshift64*: the split's and augmentation's random numbers (seeded, the same everywhere). */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

void cc_dataset_split(struct cc_dataset *d, double fraction, uint64_t seed)
{
    uint64_t s = seed ? seed : 1;
    int first = 0;
    for (int k = 0; k < d->n_classes; first += d->counts[k], k++) {
        int n = d->counts[k], held = (int)(fraction * n + 0.5);
        if (fraction > 0 && n >= 2 && held < 1)
            held = 1;
        if (held > n - 1)
            held = n - 1;
        d->held_counts[k] = held;
        int *idx = malloc((size_t)n * sizeof(int));
        for (int i = 0; idx && i < n; i++)
            idx[i] = i;
        for (int i = n - 1; idx && i > 0; i--) { // Fisher-Yates
            int j = (int)(next(&s) % (uint64_t)(i + 1)), t = idx[i];
            idx[i] = idx[j], idx[j] = t;
        }
        for (int i = 0; i < n; i++)
            d->samples[first + (idx ? idx[i] : i)].held_out = i < held;
        free(idx);
    }
}

void cc_dataset_finish(struct cc_dataset *d)
{
    free_names(d->classes, d->n_classes);
    for (int i = 0; i < d->n_samples; i++)
        free(d->samples[i].path);
    free(d->samples);
    free(d->counts);
    free(d->held_counts);
    *d = (struct cc_dataset){0};
}
