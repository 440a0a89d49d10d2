/* camclass — the sample store (app/train/sample_store.h): class names refused by the rule they
 * break, classes from --classes or DIR's folders with their counts, a YUYV frame saved as a JPEG
 * that decodes to its colour, an MJPEG frame kept as it is, a name already taken never
 * overwritten, a write the kernel refuses (RLIMIT_FSIZE: EFBIG) leaving no file behind, and 4
 * threads saving at once (each picture its own file). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dataset.h"
#include "decode.h"
#include "jpeg_encode.h"
#include "sample_store.h"
#include "testutil.h"

/* Files in dir (hidden ones too), or -1. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECKF(f && fwrite(p, 1, n, f) == n, "write %s", path);
    if (f)
        fclose(f);
}

static void test_names(const char *root)
{
    static const struct {
        const char *list, *says;
    } bad[] = {
        {"a,..", "folder above"},
        {"a,b/c", "'/'"},
        {"a,.hidden", "starts with '.'"},
        {"a,,b", "is empty"},
        {"a,tab\there", "control"},
        {"a,a", "twice"},
        {"a,x*y", "other than letters"},
        {"a, lead", "space"},
        {"a,0123456789012345678901234567890123456789012345678901234567890123456789", "longer"},
    };
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/names", root);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cc_error err = {{0}};
        struct cc_sample_store *s = cc_sample_store_open(dir, bad[i].list, &err);
        CHECKF(!s && strstr(err.msg, bad[i].says) && !strchr(err.msg, '\n'),
               "--classes %s: \"%s\" should name \"%s\"", bad[i].list, err.msg, bad[i].says);
        cc_sample_store_destroy(s);
    }
    // A label posted later is checked by the same rules, and nothing is made for it.
    struct cc_error err = {{0}};
    struct cc_sample_store *s = cc_sample_store_open(dir, "ok", &err);
    if (!CHECKF(s, "open: %s", err.msg))
        return;
    char file[CC_SAMPLE_STORE_FILE_MAX];
    uint8_t tiny[3] = {1, 2, 3};
    size_t n = 0;
    uint8_t *jpg = cc_jpeg_encode(tiny, 1, 1, 3, 90, &n);
    CHECK(jpg != NULL);
    CHECK(cc_sample_store_save_jpeg(s, "..", jpg, n, file, sizeof(file), &err) ==
              CC_SAMPLE_BAD_LABEL &&
          strstr(err.msg, "folder above"));
    CHECK(cc_sample_store_save_jpeg(s, "a/b", jpg, n, file, sizeof(file), &err) ==
          CC_SAMPLE_BAD_LABEL);
    char above[4300];
    snprintf(above, sizeof(above), "%s/a", dir);
    CHECKF(access(above, F_OK) != 0, "%s was made for a refused label", above);
    CHECK(count_files(dir) == 0);
    free(jpg);
    cc_sample_store_destroy(s);
}

/* A solid YUYV frame of w × h. */
static struct cc_frame yuyv(int w, int h, uint8_t y, uint8_t u, uint8_t v)
{
    struct cc_frame f = {.format = CC_PIX_YUYV, .width = w, .height = h, .stride = 2 * w};
    f.size = f.capacity = (size_t)f.stride * h;
    f.data = malloc(f.size);
    for (size_t i = 0; f.data && i < f.size; i += 4) {
        f.data[i] = f.data[i + 2] = y;
        f.data[i + 1] = u;
        f.data[i + 3] = v;
    }
    return f;
}

static void test_save(const char *root)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof(dir), "%s/garage", root);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof(path), "%s/closed", dir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof(path), "%s/closed/old.jpg", dir);
    write_bytes(path, "x", 1);
    snprintf(path, sizeof(path), "%s/open", dir);
    CHECK(mkdir(path, 0755) == 0);

    struct cc_error err = {{0}};
    struct cc_sample_store *s = cc_sample_store_open(dir, NULL, &err);
    if (!CHECKF(s, "open: %s", err.msg))
        return;
    struct cc_sample_class c[4];
    CHECK(cc_sample_store_classes(s, c, 4) == 2);
    CHECK(strcmp(c[0].name, "closed") == 0 && c[0].count == 1);
    CHECK(strcmp(c[1].name, "open") == 0 && c[1].count == 0);
    char name[80];
    CHECK(cc_sample_store_key_class(s, 2, name, sizeof(name)) && strcmp(name, "open") == 0);
    CHECK(!cc_sample_store_key_class(s, 3, name, sizeof(name)));

    // Red (Y 81, U 90, V 240) at 64 × 48: a JPEG of that size and colour.
    struct cc_frame f = yuyv(64, 48, 81, 90, 240);
    char file[CC_SAMPLE_STORE_FILE_MAX];
    CHECKF(cc_sample_store_save_frame(s, "open", &f, file, sizeof(file), &err) == CC_SAMPLE_SAVED,
           "save: %s", err.msg);
    snprintf(path, sizeof(path), "%s/open/%s", dir, file);
    size_t n = 0;
    uint8_t *bytes = tu_read_file(path, &n);
    struct cc_image img = {0};
    if (CHECKF(bytes && cc_decode_jpeg(bytes, n, path, &img, &err), "decode %s: %s", path,
               err.msg)) {
        CHECK(img.width == 64 && img.height == 48);
        CHECKF(img.pixels[0] > 200 && img.pixels[1] < 60 && img.pixels[2] < 60,
               "pixel %d %d %d is not red", img.pixels[0], img.pixels[1], img.pixels[2]);
    }
    // An MJPEG frame: its own bytes, once they decode.
    struct cc_frame m = {
        .format = CC_PIX_MJPEG, .width = 64, .height = 48, .data = bytes, .size = n};
    char file2[CC_SAMPLE_STORE_FILE_MAX];
    CHECK(cc_sample_store_save_frame(s, "open", &m, file2, sizeof(file2), &err) == CC_SAMPLE_SAVED);
    CHECK(strcmp(file, file2) != 0);
    snprintf(path, sizeof(path), "%s/open/%s", dir, file2);
    size_t n2 = 0;
    uint8_t *bytes2 = tu_read_file(path, &n2);
    CHECK(bytes2 && n2 == n && memcmp(bytes, bytes2, n) == 0);
    free(bytes2);
    // A corrupt MJPEG frame is refused, nothing written.
    m.size = 20;
    CHECK(cc_sample_store_save_frame(s, "open", &m, file2, sizeof(file2), &err) ==
          CC_SAMPLE_BAD_IMAGE);
    // A new label gets its folder; counts follow.
    CHECK(cc_sample_store_save_jpeg(s, "car in", bytes, n, file2, sizeof(file2), &err) ==
          CC_SAMPLE_SAVED);
    CHECK(cc_sample_store_classes(s, c, 4) == 3);
    CHECK(c[1].count == 2 && strcmp(c[2].name, "car in") == 0 && c[2].count == 1);
    snprintf(path, sizeof(path), "%s/open", dir);
    CHECKF(count_files(path) == 2, "%s holds %d files", path, count_files(path));
    // camclass-train's reader sees the same classes and images.
    struct cc_dataset d;
    if (CHECKF(cc_dataset_load(&d, dir, &err), "dataset: %s", err.msg)) {
        CHECK(d.n_classes == 3 && d.n_samples == 4);
        cc_dataset_finish(&d);
    }
    cc_image_finish(&img);
    free(bytes);
    free(f.data);
    cc_sample_store_destroy(s);
}

/* Names that exist already (this second's, for the next sequence numbers) are skipped, never
 * replaced. */
static void test_no_overwrite(const char *root)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof(dir), "%s/taken", root);
    struct cc_error err = {{0}};
    struct cc_sample_store *s = cc_sample_store_open(dir, "a", &err);
    if (!CHECKF(s, "open: %s", err.msg))
        return;
    snprintf(path, sizeof(path), "%s/a", dir);
    CHECK(mkdir(path, 0755) == 0);
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    for (int k = 0; k < 2; k++) { // this second and the next: the save may cross into it
        time_t t = now + k;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        for (int seq = 1; seq <= 3; seq++) {
            snprintf(path, sizeof(path), "%s/a/%s-%d.jpg", dir, stamp, seq);
            write_bytes(path, "keep", 4);
        }
    }
    uint8_t px[3] = {0, 255, 0};
    size_t n = 0;
    uint8_t *jpg = cc_jpeg_encode(px, 1, 1, 3, 90, &n);
    char file[CC_SAMPLE_STORE_FILE_MAX];
    CHECKF(cc_sample_store_save_jpeg(s, "a", jpg, n, file, sizeof(file), &err) == CC_SAMPLE_SAVED,
           "save: %s", err.msg);
    CHECKF(strstr(file, "-4.jpg") != NULL, "saved as %s, not after the taken -1..-3", file);
    for (int k = 0; k < 2; k++) {
        time_t t = now + k;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        for (int seq = 1; seq <= 3; seq++) {
            snprintf(path, sizeof(path), "%s/a/%s-%d.jpg", dir, stamp, seq);
            size_t m = 0;
            char *b = tu_read_file(path, &m);
            CHECKF(b && m == 4 && memcmp(b, "keep", 4) == 0, "%s was overwritten", path);
            free(b);
        }
    }
    snprintf(path, sizeof(path), "%s/a", dir);
    CHECK(count_files(path) == 7); // 6 kept + 1 new, no temporary file left
    free(jpg);
    cc_sample_store_destroy(s);
}

/* A write the kernel refuses midway: RLIMIT_FSIZE below the picture's size makes write() fail
 * with EFBIG (SIGXFSZ ignored), as a full disk fails with ENOSPC: one line, no file left. */
static void test_write_failure(const char *root)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof(dir), "%s/full", root);
    struct cc_error err = {{0}};
    struct cc_sample_store *s = cc_sample_store_open(dir, "a", &err);
    if (!CHECKF(s, "open: %s", err.msg))
        return;
    struct cc_frame f = yuyv(256, 256, 128, 100, 160); // a JPEG of some KB
    char file[CC_SAMPLE_STORE_FILE_MAX] = "";
    struct rlimit old;
    getrlimit(RLIMIT_FSIZE, &old);
    struct rlimit lim = {1000, old.rlim_max};
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    enum cc_sample_status st = cc_sample_store_save_frame(s, "a", &f, file, sizeof(file), &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    CHECKF(st == CC_SAMPLE_DISK_FULL, "status %d (%s)", st, err.msg);
    CHECKF(strstr(err.msg, "File too large") && strstr(err.msg, "nothing was kept") &&
               !strchr(err.msg, '\n'),
           "error line: %s", err.msg);
    snprintf(path, sizeof(path), "%s/a", dir);
    CHECKF(count_files(path) == 0, "%s holds %d files after a failed write", path,
           count_files(path));
    struct cc_sample_class c;
    CHECK(cc_sample_store_classes(s, &c, 1) == 1 && c.count == 0);
    // And the next save, with room again, works.
    CHECK(cc_sample_store_save_frame(s, "a", &f, file, sizeof(file), &err) == CC_SAMPLE_SAVED);
    CHECK(count_files(path) == 1);
    free(f.data);
    cc_sample_store_destroy(s);
}

/* Threads saving at once (the window's and HTTP connections'): every picture gets its own
 * file within the same second, and the count is all of them. */
struct saver {
    struct cc_sample_store *s;
    const uint8_t *jpg;
    size_t n;
    int failed;
};

static void *save_many(void *arg)
{
    struct saver *v = arg;
    for (int i = 0; i < 10; i++) {
        char file[CC_SAMPLE_STORE_FILE_MAX];
        struct cc_error err = {{0}};
        v->failed += cc_sample_store_save_jpeg(v->s, i % 2 ? "odd" : "even", v->jpg, v->n, file,
                                               sizeof(file), &err) != CC_SAMPLE_SAVED;
    }
    return NULL;
}

static void test_threads(const char *root)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof(dir), "%s/threads", root);
    struct cc_error err = {{0}};
    struct cc_sample_store *s = cc_sample_store_open(dir, NULL, &err);
    if (!CHECKF(s, "open: %s", err.msg))
        return;
    uint8_t px[3] = {9, 9, 9};
    size_t n = 0;
    uint8_t *jpg = cc_jpeg_encode(px, 1, 1, 3, 90, &n);
    struct saver v[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        v[i] = (struct saver){s, jpg, n, 0};
        CHECK(pthread_create(&t[i], NULL, save_many, &v[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(v[i].failed == 0);
    }
    struct cc_sample_class c[2];
    CHECK(cc_sample_store_classes(s, c, 2) == 2 && c[0].count == 20 && c[1].count == 20);
    snprintf(path, sizeof(path), "%s/even", dir);
    CHECK(count_files(path) == 20);
    snprintf(path, sizeof(path), "%s/odd", dir);
    CHECK(count_files(path) == 20);
    char line[200];
    cc_sample_store_keys_line(s, line, sizeof(line));
    CHECKF(strcmp(line, "1 even: 20   2 odd: 20") == 0, "keys line \"%s\"", line);
    free(jpg);
    cc_sample_store_destroy(s);
}

static void test_bad_dir(const char *root)
{
    char path[4100];
    snprintf(path, sizeof(path), "%s/afile", root);
    write_bytes(path, "x", 1);
    struct cc_error err = {{0}};
    CHECK(!cc_sample_store_open(path, NULL, &err) && strstr(err.msg, "not a folder"));
    snprintf(path, sizeof(path), "%s/no/such/parent", root);
    CHECK(!cc_sample_store_open(path, NULL, &err) && strstr(err.msg, "parent must exist"));
}

int main(void)
{
    char root[4000];
    if (!tu_tmpdir(root, sizeof(root), "sample_store"))
        return 1;
    test_names(root);
    test_save(root);
    test_no_overwrite(root);
    test_write_failure(root);
    test_threads(root);
    test_bad_dir(root);
    tu_rmtree(root);
    return tu_exit_code();
}
