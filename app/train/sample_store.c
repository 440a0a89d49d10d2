/* camclass — the collected pictures, written safely into an ImageFolder (see sample_store.h). */
#include "sample_store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dataset.h"
#include "decode.h"
#include "file_once.h"
#include "frame_rgb.h"
#include "jpeg_encode.h"

struct cc_sample_store {
    char *dir; // as given; owned

    pthread_mutex_t lock; // guards everything below
    struct cc_sample_class classes[CC_SAMPLE_STORE_MAX_CLASSES];
    int n_classes;
    unsigned long seq; // the next file's sequence number
};

/* ------------------------------------------------------------------------------------------
 * Opening: the folder and its classes
 */

bool cc_sample_store_check_label(const char *label, const char *what, struct cc_error *err)
{
    const char *problem = cc_dataset_class_name_problem(label);
    if (problem)
        return cc_error_set(err,
                            "%s \"%.80s\" %s; a class name is one folder name of letters, "
                            "digits, '_', '-', '.' and spaces (1 to 64 bytes)",
                            what, label, problem);
    return true;
}

/* Adds name as a class with count images: false with err when it is unsafe, known, or one too
 * many. Called at open, and under the lock for a new label. */
static bool add_class(struct cc_sample_store *s, const char *name, int count, const char *what,
                      struct cc_error *err)
{
    if (!cc_sample_store_check_label(name, what, err))
        return false;
    for (int i = 0; i < s->n_classes; i++)
        if (strcmp(s->classes[i].name, name) == 0)
            return cc_error_set(err, "%s \"%s\" is given twice; name each class once", what, name);
    if (s->n_classes == CC_SAMPLE_STORE_MAX_CLASSES)
        return cc_error_set(err, "%s \"%s\" would be class %d; camclass collects at most %d", what,
                            name, s->n_classes + 1, CC_SAMPLE_STORE_MAX_CLASSES);
    struct cc_sample_class *c = &s->classes[s->n_classes++];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->count = count;
    return true;
}

/* The images already in dir/name (0 when the folder is not there yet); -1 with err. */
static int existing_images(const char *dir, const char *name, struct cc_error *err)
{
    char sub[4096];
    struct stat st;
    snprintf(sub, sizeof(sub), "%s/%s", dir, name);
    if (stat(sub, &st) != 0)
        return errno == ENOENT ? 0 : (cc_error_set(err, "%s: %s", sub, strerror(errno)), -1);
    if (!S_ISDIR(st.st_mode))
        return cc_error_set(err, "%s is %s, not a class folder; move it away", sub,
                            cc_file_kind(st.st_mode)),
               -1;
    return cc_dataset_count_images(sub, err);
}

/* The classes of the comma list (in its order), else dir's sub-folders. */
static bool load_classes(struct cc_sample_store *s, const char *list, struct cc_error *err)
{
    char **names = NULL;
    int n = 0;
    if (list) {
        for (const char *p = list;; p++) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            char name[CC_DATASET_CLASS_MAX + 2];
            snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1),
                     p);
            int count = existing_images(s->dir, name, err);
            if (count < 0 || !add_class(s, name, count, "--classes: the class", err))
                return false;
            if (!end)
                return true;
            p = end;
        }
    }
    if ((n = cc_dataset_list_classes(s->dir, &names, err)) < 0)
        return false;
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
        int count = existing_images(s->dir, names[i], err);
        char what[4200];
        snprintf(what, sizeof(what), "%s: the class folder", s->dir);
        ok = count >= 0 && add_class(s, names[i], count, what, err);
    }
    cc_dataset_free_names(names, n);
    return ok;
}

struct cc_sample_store *cc_sample_store_open(const char *dir, const char *classes,
                                             struct cc_error *err)
{
    struct stat st;
    if (!dir || !dir[0]) {
        cc_error_set(err, "no folder given for the pictures (e.g. garage)");
        return NULL;
    }
    if (stat(dir, &st) != 0 && (errno != ENOENT || mkdir(dir, 0755) != 0)) {
        cc_error_set(err, "cannot make the folder %s for the pictures: %s (its parent must exist)",
                     dir, strerror(errno));
        return NULL;
    }
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        cc_error_set(err, "%s is %s, not a folder for the pictures; give a folder", dir,
                     cc_file_kind(st.st_mode));
        return NULL;
    }
    struct cc_sample_store *s = calloc(1, sizeof(*s));
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        cc_error_set(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->seq = 1;
    if (!load_classes(s, classes, err)) {
        cc_sample_store_destroy(s);
        return NULL;
    }
    return s;
}

void cc_sample_store_destroy(struct cc_sample_store *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s->dir);
    free(s);
}

const char *cc_sample_store_dir(const struct cc_sample_store *s)
{
    return s->dir;
}

int cc_sample_store_classes(struct cc_sample_store *s, struct cc_sample_class *out, int max)
{
    pthread_mutex_lock(&s->lock);
    int n = s->n_classes;
    for (int i = 0; i < n && i < max; i++)
        out[i] = s->classes[i];
    pthread_mutex_unlock(&s->lock);
    return n;
}

bool cc_sample_store_key_class(struct cc_sample_store *s, int key, char *name, size_t size)
{
    pthread_mutex_lock(&s->lock);
    bool ok = key >= 1 && key <= 9 && key <= s->n_classes;
    if (ok)
        snprintf(name, size, "%s", s->classes[key - 1].name);
    pthread_mutex_unlock(&s->lock);
    return ok;
}

void cc_sample_store_keys_line(struct cc_sample_store *s, char *line, size_t size)
{
    pthread_mutex_lock(&s->lock);
    size_t n = 0;
    line[0] = '\0';
    for (int i = 0; i < s->n_classes && i < 9 && n < size; i++) {
        int k = snprintf(line + n, size - n, "%s%d %s: %d", i ? "   " : "", i + 1,
                         s->classes[i].name, s->classes[i].count);
        n += k > 0 ? (size_t)k : 0;
    }
    if (!s->n_classes)
        snprintf(line, size, "no classes to collect: give --classes A,B or make DIR/<class>/");
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------------------------------
 * Saving: a temporary file, fsync, a new name that replaces nothing
 */

/* Names tmp (in sub) YYYYmmdd-HHMMSS-N.jpg with the first free N from the store's sequence. */
static bool give_name(struct cc_sample_store *s, const char *sub, const char *tmp, char *file,
                      size_t file_size, struct cc_error *err)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    for (int tries = 0; tries < 1000; tries++) {
        pthread_mutex_lock(&s->lock);
        unsigned long seq = s->seq++;
        pthread_mutex_unlock(&s->lock);
        char name[CC_SAMPLE_STORE_FILE_MAX], path[4300];
        snprintf(name, sizeof(name), "%s-%lu.jpg", stamp, seq);
        snprintf(path, sizeof(path), "%s/%s", sub, name);
        int e = cc_file_name_once(tmp, path);
        if (e == 0) {
            snprintf(file, file_size, "%s", name);
            return true;
        }
        if (e != EEXIST)
            return cc_error_set(err, "cannot name the picture %s: %s", path, strerror(e));
    }
    return cc_error_set(err, "%s: 1000 names taken in a row; is something else writing there?",
                        sub);
}

/* The class folder of label, made if needed, and the class known (added if new). */
static enum cc_sample_status class_folder(struct cc_sample_store *s, const char *label, char *sub,
                                          size_t sub_size, struct cc_error *err)
{
    pthread_mutex_lock(&s->lock);
    bool known = false;
    for (int i = 0; i < s->n_classes && !known; i++)
        known = strcmp(s->classes[i].name, label) == 0;
    bool ok = known || add_class(s, label, 0, "the label", err);
    pthread_mutex_unlock(&s->lock);
    if (!ok)
        return CC_SAMPLE_BAD_LABEL;
    snprintf(sub, sub_size, "%s/%s", s->dir, label);
    if (mkdir(sub, 0755) != 0 && errno != EEXIST) {
        cc_error_set(err, "cannot make the class folder %s: %s", sub, strerror(errno));
        return CC_SAMPLE_WRITE_FAILED;
    }
    return CC_SAMPLE_SAVED;
}

enum cc_sample_status cc_sample_store_save_jpeg(struct cc_sample_store *s, const char *label,
                                                const uint8_t *jpeg, size_t size, char *file,
                                                size_t file_size, struct cc_error *err)
{
    char sub[4200], tmp[4300];
    enum cc_sample_status st = class_folder(s, label, sub, sizeof(sub), err);
    if (st != CC_SAMPLE_SAVED)
        return st;
    snprintf(tmp, sizeof(tmp), "%s/.partial-XXXXXX", sub);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cc_error_set(err, "cannot write a picture in %s: %s", sub, strerror(errno));
        return CC_SAMPLE_WRITE_FAILED;
    }
    bool ok = fchmod(fd, 0644) == 0 && cc_file_write_synced(fd, jpeg, size);
    int e = errno;
    if (close(fd) != 0 && ok)
        ok = false, e = errno;
    if (!ok) {
        unlink(tmp);
        bool full = e == ENOSPC || e == EDQUOT || e == EFBIG;
        cc_error_set(err, "cannot write a picture in %s: %s; nothing was kept%s", sub, strerror(e),
                     full ? " (free some space)" : "");
        return full ? CC_SAMPLE_DISK_FULL : CC_SAMPLE_WRITE_FAILED;
    }
    if (!give_name(s, sub, tmp, file, file_size, err)) {
        unlink(tmp);
        return CC_SAMPLE_WRITE_FAILED;
    }
    int dfd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC); // the new name on the disk too
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n_classes; i++)
        if (strcmp(s->classes[i].name, label) == 0)
            s->classes[i].count++;
    pthread_mutex_unlock(&s->lock);
    return CC_SAMPLE_SAVED;
}

enum cc_sample_status cc_sample_store_save_frame(struct cc_sample_store *s, const char *label,
                                                 const struct cc_frame *frame, char *file,
                                                 size_t file_size, struct cc_error *err)
{
    struct cc_frame_rgb conv = {0};
    struct cc_frame f;
    if (!cc_frame_rgb_prepare(&conv, frame, &f, "the frame to save", err)) {
        cc_frame_rgb_finish(&conv);
        return CC_SAMPLE_BAD_IMAGE;
    }
    enum cc_sample_status st;
    if (frame->format == CC_PIX_MJPEG) { // decodes: the camera's own JPEG, not a second one
        st = cc_sample_store_save_jpeg(s, label, frame->data, frame->size, file, file_size, err);
    } else {
        uint8_t *rgb = cc_frame_rgb_all(&conv, &f);
        size_t size = 0;
        uint8_t *jpeg = rgb ? cc_jpeg_encode(rgb, f.width, f.height, f.width * 3,
                                             CC_SAMPLE_STORE_QUALITY, &size)
                            : NULL;
        free(rgb);
        if (jpeg) {
            st = cc_sample_store_save_jpeg(s, label, jpeg, size, file, file_size, err);
        } else {
            cc_error_set(err, "out of memory encoding a %dx%d picture", f.width, f.height);
            st = CC_SAMPLE_WRITE_FAILED;
        }
        free(jpeg);
    }
    cc_frame_rgb_finish(&conv);
    return st;
}
