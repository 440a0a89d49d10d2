/* camclass — the source a run reads (see source_choice.h). */
#include "source_choice.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets.h"

#define SAMPLE_INPUT "samples/selftest"
enum { EXIT_USAGE = 2 };

bool cc_source_choice_sample(char *path, size_t size, struct cc_error *err)
{
    if (cc_asset_find(SAMPLE_INPUT, path, size, NULL))
        return true;
    char where[CC_ASSET_WHERE_SIZE];
    cc_asset_where(where, sizeof(where));
    return cc_error_set(err, "no sample input: %s is not in %s; give one with --input",
                        SAMPLE_INPUT, where);
}

/* No source given: the first camera if it opens, else the sample clip, looped. 0 with a->camera
 * or a->name set (the clip, to open as a file), 1 when neither is there. */
static int open_default(const struct cc_cli *cli, struct cc_source_choice *a)
{
    struct cc_error err = {0};
    struct stat st;
    if (stat("/dev/video0", &st) == 0) {
        struct cc_capture_config cc = cc_capture_config_default();
        cc.device = "/dev/video0";
        cc.width = cli->width, cc.height = cli->height, cc.fps = cli->fps;
        cc.log = stderr;
        if ((a->camera = cc_capture_open(&cc, &err))) {
            snprintf(a->name, sizeof(a->name), "/dev/video0");
            fprintf(stderr, "camclass: camera %s\n", cc_capture_get_info(a->camera)->line);
            return 0;
        }
        fprintf(stderr, "camclass: /dev/video0 does not open (%s); using the sample input\n",
                err.msg);
    }
    if (!cc_source_choice_sample(a->name, sizeof(a->name), &err)) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    a->loop = true;
    fprintf(stderr, "camclass: input %s (no camera; the bundled sample, looped)\n", a->name);
    return 0;
}

/* --camera DEV (dev_path, from an index when dev_index). A camera that cannot be opened is exit
 * 1, not 2: it may appear later (USB, a slow driver) and the service's Restart= retries; exit 2
 * would stop the retries. */
static int open_camera(const struct cc_cli *cli, const char *dev, bool dev_index,
                       struct cc_source_choice *a)
{
    struct cc_error err = {0};
    if (access(dev, F_OK) != 0) {
        if (dev_index)
            fprintf(stderr, "camclass: camera %s (%s): %s (see --list-cameras)\n", cli->camera, dev,
                    strerror(errno));
        else
            fprintf(stderr, "camclass: camera %s: %s (see --list-cameras)\n", dev, strerror(errno));
        return 1;
    }
    struct cc_capture_config cc = cc_capture_config_default();
    cc.device = dev;
    cc.width = cli->width, cc.height = cli->height, cc.fps = cli->fps;
    cc.log = stderr;
    if (!(a->camera = cc_capture_open(&cc, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return 1;
    }
    snprintf(a->name, sizeof(a->name), "%s", dev);
    fprintf(stderr, "camclass: camera %s\n", cc_capture_get_info(a->camera)->line);
    return 0;
}

/* A network stream: like a camera, a server that does not answer is exit 1 (it may come later);
 * an answer that is no usable video is exit 2. */
static int open_stream(const char *url, bool (*stop)(void *ctx), struct cc_source_choice *a)
{
    struct cc_error err = {0};
    if (a->loop) {
        fprintf(stderr, "camclass: %s: --loop is for files; a stream reconnects by itself\n", url);
        return EXIT_USAGE;
    }
    bool unreachable = false;
    if (!(a->file = cc_source_file_open_url(url, stderr, stop, NULL, &unreachable, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        if (stop(NULL)) // stopped while connecting: a stop, exit 0
            return -1;
        return unreachable ? 1 : EXIT_USAGE;
    }
    fprintf(stderr, "camclass: stream %s: %s\n", url, cc_source_file_describe(a->file));
    return 0;
}

/* An image, a directory, a video file, "-" (standard input), or a stream's URL. */
static int open_input(const char *input, bool (*stop)(void *ctx), struct cc_source_choice *a)
{
    if (strcmp(input, "-") == 0) // standard input, as --log - is standard output
        input = "/dev/stdin";
    if (input != a->name)
        snprintf(a->name, sizeof(a->name), "%s", input);
    if (cc_source_is_url(a->name))
        return open_stream(a->name, stop, a);
    if (access(a->name, R_OK) != 0) {
        fprintf(stderr, "camclass: cannot read input %s: %s\n", a->name, strerror(errno));
        return EXIT_USAGE;
    }
    struct cc_error err = {0};
    if (!(a->file = cc_source_file_open(a->name, a->loop, &err))) {
        fprintf(stderr, "camclass: %s\n", err.msg);
        return EXIT_USAGE;
    }
    return 0;
}

int cc_source_choice_open(const struct cc_cli *cli, bool (*stop)(void *ctx),
                          struct cc_source_choice *a)
{
    *a = (struct cc_source_choice){.loop = cli->loop};
    char dev_path[PATH_MAX];
    bool dev_index = cli->camera && cc_cli_camera_path(cli->camera, dev_path, sizeof(dev_path));
    if (cli->camera) // --camera 2 is /dev/video2
        return open_camera(cli, dev_path, dev_index, a);
    if (cli->input)
        return open_input(cli->input, stop, a);
    if (cli->serve) { // --serve alone: HTTP requests are the only input
        snprintf(a->name, sizeof(a->name), "none");
        fprintf(stderr, "camclass: no --camera or --input: classifying HTTP requests only\n");
        return 0;
    }
    int rc = open_default(cli, a);
    return rc || a->camera ? rc : open_input(a->name, stop, a);
}

void cc_source_choice_label(const struct cc_source_choice *s, char *label, size_t size)
{
    snprintf(label, size, "camera");
    if (!s->file)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s", s->name);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    const char *base = strrchr(path, '/');
    struct stat st;
    bool dir = stat(s->name, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(label, size, "%.*s%s", NAME_MAX, base && base[1] ? base + 1 : path, dir ? "/" : "");
}

bool cc_source_choice_live(const struct cc_source_choice *s, const struct cc_cli *cli)
{
    return s->camera || (s->file && cli->input && cc_source_is_url(cli->input));
}
