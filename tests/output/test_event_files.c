/* The events' files (app/output/event_files.c) in a temporary folder: labels and camera names
 * made safe, names from a given time, a taken name given the next suffix (at naming and when it
 * appears before the save) with the existing file untouched, no temporary file left, and the
 * cap deleting the oldest of camclass's own names only. Snapshots end to end:
 * tests/app/test_snapshot.py. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "event_files.h"
#include "testutil.h"

// 2026-11-27 04:54:54.123 UTC
#define WALL_NS (1795755294LL * 1000000000 + 123000000)
#define STAMP "20261127T045454.123Z"

static void test_safe_names(void)
{
    const struct {
        const char *in, *out;
    } labels[] = {
        {"cat", "cat"},
        {"../../etc/passwd", "_._.._etc_passwd"},
        {"a b/c\\d", "a_b_c_d"},
        {".hidden", "_hidden"},
        {"", "none"},
        {"ünïcode", "__n__code"},
    };
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
        char out[CC_EVENT_LABEL_MAX + 1];
        cc_event_folder_safe_label(labels[i].in, out, sizeof(out));
        CHECKF(strcmp(out, labels[i].out) == 0, "label \"%s\" -> \"%s\", want \"%s\"", labels[i].in,
               out, labels[i].out);
    }
    char long_label[300], out[CC_EVENT_LABEL_MAX + 1];
    memset(long_label, 'x', sizeof(long_label) - 1);
    long_label[sizeof(long_label) - 1] = '\0';
    cc_event_folder_safe_label(long_label, out, sizeof(out));
    CHECKF(strlen(out) == CC_EVENT_LABEL_MAX, "a 299-byte label -> %zu bytes", strlen(out));
    const char *cams[][2] = {{"/dev/video0", "video0"},
                             {"/tmp/front door.mp4", "front_door"},
                             {"assets/samples/selftest/", "selftest"},
                             {"rtsp://host:554/live/..", "_"}};
    for (size_t i = 0; i < sizeof(cams) / sizeof(cams[0]); i++) {
        char name[CC_EVENT_CAMERA_MAX + 1];
        cc_event_folder_camera_name(cams[i][0], name, sizeof(name));
        CHECKF(strcmp(name, cams[i][1]) == 0 && cc_event_folder_name_ok(name),
               "camera \"%s\" -> \"%s\", want \"%s\"", cams[i][0], name, cams[i][1]);
    }
    CHECK(!cc_event_folder_name_ok("..") && !cc_event_folder_name_ok("a/b") &&
          !cc_event_folder_name_ok(""));
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECKF(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

static bool has_text(const char *path, const char *text)
{
    size_t n;
    char *got = tu_read_file(path, &n);
    bool same = got && n == strlen(text) && memcmp(got, text, n) == 0;
    free(got);
    return same;
}

/* No ".partial-" file left in dir. */
static int partials(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, ".partial-", 9) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_names(const char *root)
{
    struct cc_event_folder f;
    struct cc_error err = {""};
    CHECKF(cc_event_folder_open(&f, root, "cam", 1000000, ".jpg", "--snapshot-dir", &err), "%s",
           err.msg);
    struct tu_notices said = TU_NOTICES_INIT;
    f.notice = tu_notice, f.notice_ctx = &said;
    char taken[CC_EVENT_PATH_MAX], path[CC_EVENT_PATH_MAX], want[CC_EVENT_PATH_MAX];
    snprintf(taken, sizeof(taken), "%s/cam/" STAMP "-cat.jpg", root);
    write_text(taken, "someone else's");
    cc_event_folder_name(&f, WALL_NS, "cat", path, sizeof(path));
    snprintf(want, sizeof(want), "%s/cam/" STAMP "-cat-2.jpg", root);
    CHECKF(strcmp(path, want) == 0, "a taken name: %s, want %s", path, want);
    // A second event at the same time gets the next name even before the first is written.
    char second[CC_EVENT_PATH_MAX];
    cc_event_folder_name(&f, WALL_NS, "cat", second, sizeof(second));
    CHECKF(strstr(second, "-cat-3.jpg") != NULL, "the same name given twice: %s", second);
    // The name appears before the save: the file gets the next free one, the other stays.
    write_text(path, "appeared meanwhile");
    char saved[CC_EVENT_PATH_MAX];
    snprintf(saved, sizeof(saved), "%s", path);
    CHECKF(cc_event_folder_save(&f, (const uint8_t *)"ours", 4, saved, sizeof(saved), &err), "%s",
           err.msg);
    CHECKF(strcmp(saved, path) != 0 && has_text(saved, "ours"), "saved as %s", saved);
    CHECKF(has_text(path, "appeared meanwhile") && has_text(taken, "someone else's"),
           "an existing file was overwritten");
    CHECKF(strstr(said.text, "was taken meanwhile; saved as") && strstr(said.text, saved) &&
               !strchr(strchr(said.text, '\n') + 1, '\n'),
           "not one line naming the new name: %s", said.text);
    char dir[CC_EVENT_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/cam", root);
    CHECKF(partials(dir) == 0, "a temporary file was left in %s", dir);
    CHECK(!cc_event_folder_open(&f, "/nonexistent-dir", "cam", 1, ".jpg", "--snapshot-dir", &err) &&
          strstr(err.msg, "--snapshot-dir /nonexistent-dir"));
}

static void make_file(const char *dir, const char *name, size_t size)
{
    char path[CC_EVENT_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECKF(f != NULL, "cannot make %s", path);
    for (size_t i = 0; f && i < size; i++)
        fputc('x', f);
    if (f)
        fclose(f);
}

static bool exists(const char *dir, const char *name)
{
    char path[CC_EVENT_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_cap(const char *root)
{
    struct cc_event_folder f;
    struct cc_error err = {""};
    CHECKF(cc_event_folder_open(&f, root, "capped", 1000, ".jpg", "--snapshot-dir", &err), "%s",
           err.msg);
    const char *own[] = {"20000101T000000.000Z-old.jpg", "20000101T000001.000Z-old.jpg",
                         "20000101T000002.000Z-old-2.jpg", "20000101T000003.000Z-new.jpg"};
    const char *foreign[] = {"notes.jpg", "20000101T000000.000Z-old.png",
                             "20000101T000000.000Z-a b.jpg", ".partial-x.jpg"};
    for (int i = 0; i < 4; i++) {
        make_file(f.dir, own[i], 400);
        make_file(f.dir, foreign[i], 5000);
    }
    // 1600 bytes of own files, cap 1000: the two oldest go (800 left), the newest is kept.
    int deleted = cc_event_folder_cap(&f, NULL);
    CHECKF(deleted == 2, "the cap deleted %d files, want 2", deleted);
    CHECKF(!exists(f.dir, own[0]) && !exists(f.dir, own[1]) && exists(f.dir, own[2]) &&
               exists(f.dir, own[3]),
           "not the oldest deleted");
    for (int i = 0; i < 4; i++)
        CHECKF(exists(f.dir, foreign[i]), "%s deleted: not a name camclass gives", foreign[i]);
    // A file over the cap on its own: kept when it is the one just written.
    make_file(f.dir, "20000101T000004.000Z-big.jpg", 3000);
    cc_event_folder_cap(&f, "20000101T000004.000Z-big.jpg");
    CHECK(exists(f.dir, "20000101T000004.000Z-big.jpg") && !exists(f.dir, own[3]));
}

int main(void)
{
    char root[512];
    if (!tu_tmpdir(root, sizeof(root), "event_files"))
        return 1;
    test_safe_names();
    test_names(root);
    test_cap(root);
    tu_rmtree(root);
    return tu_exit_code();
}
