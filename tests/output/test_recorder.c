/* camclass — the recorder module (recorder.h) on its own, with the encoder that camclass falls
 * back to when libavcodec has no libx264: libavcodec's MPEG-4 part 2.
 *
 * Usage: test_recorder OUTDIR
 * Five solid-colour frames with crafted results into OUTDIR/recorder-mpeg4.mkv at 10 frames/s;
 * ffprobe says mpeg4, 320x240, 5 frames, 100 ms apart; ffmpeg decodes each picture and the frame
 * area's centre is that frame's colour. Then the containers by extension, and the refusals: an
 * odd size, an unknown encoder, an unknown extension, a missing directory (one line each, naming
 * the file), and the add/finish contract (finish twice, add after finish).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "testutil.h"

#define W 320
#define H 240
#define FW 64
#define FH 48
#define N 5

static const uint8_t COLORS[N][3] = {
    {220, 30, 30}, {30, 200, 40}, {40, 60, 220}, {230, 220, 40}, {128, 128, 128}};

static struct cc_frame solid(const uint8_t rgb[3], uint64_t seq)
{
    struct cc_frame f = {
        .format = CC_PIX_RGB24, .width = FW, .height = FH, .stride = FW * 3, .sequence = seq};
    f.size = f.capacity = (size_t)FW * FH * 3;
    f.data = malloc(f.size);
    for (size_t i = 0; f.data && i < f.size; i++)
        f.data[i] = rgb[i % 3];
    return f;
}

/* Runs cmd and returns its stdout (malloc'd), NULL when it fails. */
static uint8_t *run(const char *cmd, size_t *size)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, p)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b)
                break;
            buf = b;
        }
    }
    int st = pclose(p);
    if (st != 0 || !buf) {
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

static const struct cc_overlay_config OVERLAY = {
    .model_name = "test", .backend_name = "cpu", .device_name = "CPU", .top_k = 3};

static void test_mpeg4(const char *outdir)
{
    char path[4096], cmd[8192];
    snprintf(path, sizeof(path), "%s/recorder-mpeg4.mkv", outdir);
    remove(path);
    struct cc_recorder_config cfg = {.path = path,
                                     .width = W,
                                     .height = H,
                                     .overlay = &OVERLAY,
                                     .frame_rate = 10,
                                     .encoder = "mpeg4"};
    struct cc_error err = {{0}};
    struct cc_recorder *rec = cc_recorder_open(&cfg, &err);
    if (!CHECKF(rec != NULL, "open %s: %s", path, err.msg))
        return;
    printf("%s\n", cc_recorder_describe(rec));
    CHECKF(strstr(cc_recorder_describe(rec), "MPEG-4 part 2") &&
               strstr(cc_recorder_describe(rec), "Matroska"),
           "describe: %s", cc_recorder_describe(rec));
    for (int i = 0; i < N; i++) {
        struct cc_frame f = solid(COLORS[i], 40 + i); // the index counts from the first frame
        struct cc_result r = {.seq = f.sequence, .n_top = 1, .camera_fps = 10};
        r.top[0] = (struct cc_result_class){.index = i, .label = "colour", .score = 0.2f * i};
        CHECKF(cc_recorder_add(rec, &r, &f, &err), "add %d: %s", i, err.msg);
        free(f.data);
    }
    CHECKF(cc_recorder_finish(rec, &err), "finish: %s", err.msg); // waits for the queue
    CHECKF(cc_recorder_frames(rec) == N, "%llu pictures encoded",
           (unsigned long long)cc_recorder_frames(rec));
    CHECK(cc_recorder_finish(rec, &err)); // idempotent
    struct cc_result r = {.n_top = 0};
    struct cc_frame f = solid(COLORS[0], 99);
    CHECK(!cc_recorder_add(rec, &r, &f, NULL) && cc_recorder_frames(rec) == N);
    free(f.data);
    cc_recorder_destroy(rec);

    snprintf(cmd, sizeof(cmd),
             "ffprobe -v error -select_streams v:0 -show_entries "
             "stream=codec_name,width,height:frame=pts_time -of csv=p=0 '%s'",
             path);
    size_t size = 0;
    char *probe = (char *)run(cmd, &size);
    if (CHECKF(probe != NULL, "%s failed", cmd)) {
        probe[size < 1 ? 0 : size - 1] = '\0';
        // The stream line, then one pts line per picture: 0, 0.1, ... 0.4 s.
        CHECKF(strstr(probe, "mpeg4,320,240") != NULL, "ffprobe: %s", probe);
        int frames = 0;
        double last = -1, t;
        for (char *line = strtok(probe, "\n"); line; line = strtok(NULL, "\n"))
            if (!strchr(line, ',') && sscanf(line, "%lf", &t) == 1) {
                CHECKF(frames == 0 ? t < 0.001 : t - last > 0.099 && t - last < 0.101,
                       "picture %d at %.3f s, previous %.3f s", frames, t, last);
                last = t, frames++;
            }
        CHECKF(frames == N, "ffprobe: %d pictures, %d recorded", frames, N);
    }
    free(probe);

    snprintf(cmd, sizeof(cmd),
             "ffmpeg -v error -i '%s' -fps_mode passthrough -f rawvideo -pix_fmt rgb24 -", path);
    uint8_t *raw = run(cmd, &size);
    if (CHECKF(raw && size == (size_t)N * W * H * 3, "decoded %zu bytes, expected %d pictures",
               raw ? size : 0, N)) {
        // The frame area is the left W - panel pixels (160 here), the 64x48 frame letterboxed
        // in it: its centre is the area's centre.
        for (int i = 0; i < N; i++) {
            const uint8_t *c = raw + (size_t)i * W * H * 3 + ((size_t)(H / 2) * W + 80) * 3;
            bool ok = true;
            for (int k = 0; k < 3; k++)
                ok &= abs((int)c[k] - (int)COLORS[i][k]) <= 12;
            CHECKF(ok, "picture %d centre %d,%d,%d, frame colour %d,%d,%d", i, c[0], c[1], c[2],
                   COLORS[i][0], COLORS[i][1], COLORS[i][2]);
        }
    }
    free(raw);
}

static void test_refusals(const char *outdir)
{
    CHECK(!strcmp(cc_recorder_container("a.mp4"), "mp4"));
    CHECK(!strcmp(cc_recorder_container("dir/A.MP4"), "mp4"));
    CHECK(!strcmp(cc_recorder_container("x.mkv"), "matroska"));
    CHECK(!cc_recorder_container("x.avi") && !cc_recorder_container("x") &&
          !cc_recorder_container("dir.mp4/x") && !cc_recorder_container("x.mp4.part"));

    char path[4096];
    snprintf(path, sizeof(path), "%s/recorder-refused.mkv", outdir);
    const struct {
        const char *path, *encoder;
        int w, h;
        const char *words[2];
    } cases[] = {
        {path, NULL, 321, 240, {"321x240", "even"}},
        {path, "no-such-encoder", W, H, {"no-such-encoder", "no encoder"}},
        {"/nonexistent-camclass-dir/x.mkv",
         NULL,
         W,
         H,
         {"/nonexistent-camclass-dir/x.mkv", "No such file or directory"}},
        {"clip.webm", NULL, W, H, {"clip.webm", ".mp4 or .mkv"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cc_recorder_config cfg = {.path = cases[i].path,
                                         .width = cases[i].w,
                                         .height = cases[i].h,
                                         .overlay = &OVERLAY,
                                         .encoder = cases[i].encoder};
        struct cc_error err = {{0}};
        struct cc_recorder *rec = cc_recorder_open(&cfg, &err);
        CHECKF(!rec && strstr(err.msg, cases[i].path) && strstr(err.msg, cases[i].words[0]) &&
                   strstr(err.msg, cases[i].words[1]) && !strchr(err.msg, '\n'),
               "case %zu: %s", i, err.msg);
        printf("refused: %s\n", err.msg);
        cc_recorder_destroy(rec);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_recorder OUTDIR\n");
        return 2;
    }
    test_mpeg4(argv[1]);
    test_refusals(argv[1]);
    return tu_exit_code();
}
