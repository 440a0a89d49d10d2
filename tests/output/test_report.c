/* camclass — where results go besides the window (app/output/report.c), without camclass:
 * --log-mode and --threshold to the log's mode (a bad mode refused naming it), nothing active
 * without a log or MQTT, a SIGHUP's reopen taken before the next line and before the summary
 * (a logrotate rename), a failed reopen said once through notice with the old file kept, a
 * write error said once, a reader gone from the pipe ending the run without a notice, and the
 * snapshot and clip writers' notices naming a config's camera (the command line's one unnamed).
 * The detection log itself is test_detlog's; the end-to-end runs are test_headless's. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clip.h"
#include "report.h"
#include "snapshot.h"
#include "testutil.h"

struct notices {
    int n;
    char last[512];
    char first[512];
};

static void notice(void *ctx, const char *line)
{
    struct notices *ns = ctx;
    if (ns->n++ == 0)
        snprintf(ns->first, sizeof(ns->first), "%s", line);
    snprintf(ns->last, sizeof(ns->last), "%s", line);
}

/* A report on log_path (NULL: none) with --log-mode mode and --threshold threshold. */
static struct cc_report *report(struct cc_cli *cli, const char *log_path, const char *mode,
                                double threshold, atomic_int *reopen, struct notices *ns,
                                struct cc_error *err)
{
    cc_cli_init(cli);
    cli->log_mode = mode ? strdup(mode) : NULL;
    cli->threshold = threshold;
    struct cc_report_config cfg = {.cli = cli,
                                   .log_path = log_path,
                                   .source = "test",
                                   .model = "selftest",
                                   .backend = "cpu",
                                   .reopen = reopen,
                                   .notice = notice,
                                   .notice_ctx = ns};
    return cc_report_create(&cfg, err);
}

/* Result i: class 0 at 0.9, 100 ms after the one before. */
static struct cc_result result(uint64_t i)
{
    struct cc_result r = {.seq = i,
                          .capture_ns = (int64_t)i * 100000000,
                          .result_ns = (int64_t)i * 100000000 + 5000000,
                          .latency_ms = 5,
                          .inference_fps = 10,
                          .backend = "cpu",
                          .n_top = 2};
    r.top[0] = (struct cc_result_class){.index = 0, .label = "zero", .score = 0.9f};
    r.top[1] = (struct cc_result_class){.index = 1, .label = "one", .score = 0.1f};
    return r;
}

/* Lines of the file at path holding needle. */
static int count(const char *path, const char *needle)
{
    size_t size;
    char *text = tu_read_file(path, &size);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p++)
        n++;
    free(text);
    return n;
}

static void modes(const char *dir)
{
    struct cc_cli cli;
    struct cc_error err = {0};
    struct notices ns = {0};
    struct cc_report *rep = report(&cli, NULL, "sometimes", -1, NULL, &ns, &err);
    CHECKF(!rep && strstr(err.msg, "--log-mode") && strstr(err.msg, "\"sometimes\""),
           "a bad --log-mode is refused naming it: %s", err.msg);
    cc_report_destroy(rep);
    cc_cli_finish(&cli);

    rep = report(&cli, NULL, NULL, -1, NULL, &ns, &err);
    CHECKF(rep && !cc_report_active(rep), "no log, no MQTT: nothing active");
    cc_report_destroy(rep);
    cc_cli_finish(&cli);

    // Every frame by default; --threshold alone means detections; --log-mode every keeps
    // every frame with a threshold.
    static const struct {
        const char *mode;
        double threshold;
        int frames, detections;
    } cases[] = {
        {NULL, -1, 5, 0}, {NULL, 0.7, 0, 1}, {"every", 0.7, 5, 0}, {"detections", -1, 0, 1}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char path[600];
        snprintf(path, sizeof(path), "%s/mode%zu.jsonl", dir, c);
        rep = report(&cli, path, cases[c].mode, cases[c].threshold, NULL, &ns, &err);
        if (CHECKF(rep && cc_report_active(rep), "a log: %s", err.msg)) {
            for (uint64_t i = 0; i < 5; i++) {
                struct cc_result r = result(i);
                cc_report_result(rep, &r, NULL);
            }
            cc_report_finish(rep);
        }
        cc_report_destroy(rep);
        cc_cli_finish(&cli);
        int frames = count(path, "\"event\":\"frame\"");
        int det = count(path, "\"event\":\"detection\"");
        CHECKF(frames == cases[c].frames && det == cases[c].detections &&
                   count(path, "\"event\":\"summary\"") == 1,
               "--log-mode %s --threshold %g: %d frame and %d detection lines, want %d and %d",
               cases[c].mode ? cases[c].mode : "(none)", cases[c].threshold, frames, det,
               cases[c].frames, cases[c].detections);
    }
}

/* logrotate: rename, then SIGHUP's flag; the next line and the summary go to the new file. A
 * reopen that fails (the folder renamed away) is said once; the old file keeps the lines. */
static void reopen(const char *dir)
{
    char sub[600], log[700], rotated[700], moved[600], moved_log[700];
    snprintf(sub, sizeof(sub), "%s/logs", dir);
    snprintf(log, sizeof(log), "%s/log.jsonl", sub);
    snprintf(rotated, sizeof(rotated), "%s/log.jsonl.1", sub);
    snprintf(moved, sizeof(moved), "%s/gone", dir);
    snprintf(moved_log, sizeof(moved_log), "%s/log.jsonl", moved);
    if (!CHECKF(mkdir(sub, 0700) == 0, "mkdir %s: %m", sub))
        return;
    struct cc_cli cli;
    struct cc_error err = {0};
    struct notices ns = {0};
    atomic_int flag = 0;
    struct cc_report *rep = report(&cli, log, NULL, -1, &flag, &ns, &err);
    if (!CHECKF(rep != NULL, "report: %s", err.msg)) {
        cc_cli_finish(&cli);
        return;
    }
    struct cc_result r = result(0);
    cc_report_result(rep, &r, NULL);
    CHECK(rename(log, rotated) == 0);
    atomic_store(&flag, 1);
    r = result(1);
    cc_report_result(rep, &r, NULL);
    CHECKF(atomic_load(&flag) == 0, "the reopen took the flag");
    CHECKF(count(rotated, "\"event\":\"frame\"") == 1 && count(log, "\"event\":\"frame\"") == 1,
           "after the rename and the flag: one frame line in each file (%d, %d)",
           count(rotated, "\"event\":\"frame\""), count(log, "\"event\":\"frame\""));
    CHECK(rename(log, rotated) == 0);
    atomic_store(&flag, 1);
    cc_report_finish(rep);
    CHECKF(count(log, "\"event\":\"summary\"") == 1 && count(rotated, "\"summary\"") == 0,
           "a flag at the end: the summary in the new file");
    cc_report_destroy(rep);
    cc_cli_finish(&cli);

    rep = report(&cli, log, NULL, -1, &flag, &ns, &err);
    if (!CHECKF(rep != NULL, "report: %s", err.msg)) {
        cc_cli_finish(&cli);
        return;
    }
    CHECK(rename(sub, moved) == 0);
    for (uint64_t i = 0; i < 3; i++) {
        atomic_store(&flag, 1);
        r = result(i);
        cc_report_result(rep, &r, NULL);
    }
    CHECKF(ns.n == 3 && strstr(ns.last, log), "each failed reopen said, naming the path (%d: %s)",
           ns.n, ns.last);
    CHECKF(count(moved_log, "\"event\":\"frame\"") == 3, "the old file kept every line (%d)",
           count(moved_log, "\"event\":\"frame\""));
    cc_report_destroy(rep);
    cc_cli_finish(&cli);
}

/* /dev/full: the first failing write said once, the run goes on; a pipe nobody reads: the run
 * ends (false), nothing said. */
static void write_errors(void)
{
    struct cc_cli cli;
    struct cc_error err = {0};
    struct notices ns = {0};
    struct cc_report *rep = report(&cli, "/dev/full", NULL, -1, NULL, &ns, &err);
    if (CHECKF(rep != NULL, "report on /dev/full: %s", err.msg)) {
        bool on = true;
        for (uint64_t i = 0; i < 4; i++) {
            struct cc_result r = result(i);
            on &= cc_report_result(rep, &r, NULL);
        }
        CHECKF(on && ns.n == 1 && strstr(ns.last, "/dev/full"),
               "a full disk: said once (%d: %s), the run goes on", ns.n, ns.last);
    }
    cc_report_destroy(rep);
    cc_cli_finish(&cli);

    int fds[2], saved = dup(STDOUT_FILENO);
    if (!CHECK(pipe(fds) == 0 && saved >= 0))
        return;
    signal(SIGPIPE, SIG_IGN);
    fflush(stdout);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    close(fds[0]); // nobody reads
    ns = (struct notices){0};
    rep = report(&cli, "-", NULL, -1, NULL, &ns, &err);
    bool made = rep != NULL, on = true;
    for (uint64_t i = 0; rep && on && i < 4; i++) {
        struct cc_result r = result(i);
        on = cc_report_result(rep, &r, NULL);
    }
    cc_report_destroy(rep);
    cc_cli_finish(&cli);
    fflush(stdout);
    clearerr(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    CHECKF(made && !on && ns.n == 0, "a reader gone: the run ends, nothing said (%d: %s)", ns.n,
           ns.last);
}

/* A report of camera (NULL: the command line's) whose snapshots (clips: false) go to a folder
 * removed after its start: the writer's failure, said through notice. */
static void folder_gone(const char *dir, const char *camera, bool clips, struct notices *ns)
{
    char folder[600], own[700];
    snprintf(folder, sizeof(folder), "%s/%s-%s", dir, clips ? "clips" : "snaps",
             camera ? camera : "one");
    snprintf(own, sizeof(own), "%s/door", folder);
    if (!CHECKF(mkdir(folder, 0755) == 0, "mkdir %s", folder))
        return;
    struct cc_cli cli;
    cc_cli_init(&cli);
    cli.threshold = 0.5;
    struct cc_snapshot_config snap = {.dir = folder, .max_mb = 10, .camera = "door"};
    struct cc_clip_config clip = {
        .dir = folder, .before_s = 0, .after_s = 0.1, .max_mb = 10, .camera = "door"};
    struct cc_overlay_config oc = {0};
    struct cc_report_config cfg = {.cli = &cli,
                                   .source = "test",
                                   .camera = camera,
                                   .model = "selftest",
                                   .backend = "cpu",
                                   .snapshot = clips ? NULL : &snap,
                                   .clip = clips ? &clip : NULL,
                                   .picture_width = 64,
                                   .picture_height = 48,
                                   .overlay = &oc,
                                   .frame_rate = 10,
                                   .notice = notice,
                                   .notice_ctx = ns};
    struct cc_error err = {0};
    struct cc_report *rep = cc_report_create(&cfg, &err);
    if (CHECKF(rep != NULL, "report with %s: %s", clips ? "clips" : "snapshots", err.msg)) {
        tu_rmtree(own); // made by create: the writer cannot put its file there
        uint8_t px[16 * 12 * 3] = {0};
        for (uint64_t i = 0; i < 4; i++) {
            struct cc_frame f = {.format = CC_PIX_RGB24,
                                 .width = 16,
                                 .height = 12,
                                 .stride = 16 * 3,
                                 .data = px,
                                 .size = sizeof(px),
                                 .capacity = sizeof(px),
                                 .sequence = i};
            struct cc_result r = result(i);
            cc_report_result(rep, &r, &f);
        }
        cc_report_finish(rep); // the writer's queue done
    }
    cc_report_destroy(rep);
    cc_cli_finish(&cli);
    tu_rmtree(folder);
}

/* The snapshot and clip writers' notices: "camera NAME: " first for a config's camera (as the
 * webhook's and the program's), as before for the command line's one. */
static void writer_notices(const char *dir)
{
    for (int clips = 0; clips < 2; clips++) {
        const char *flag = clips ? "--clip-dir" : "--snapshot-dir";
        struct notices ns = {0};
        folder_gone(dir, "door", clips, &ns);
        CHECKF(ns.n >= 1 && strncmp(ns.first, "camera door: ", 13) == 0 && strstr(ns.first, flag) &&
                   strncmp(ns.last, "camera door: ", 13) == 0,
               "%s, camera door: %d notices, first \"%s\", last \"%s\"", flag, ns.n, ns.first,
               ns.last);
        ns = (struct notices){0};
        folder_gone(dir, NULL, clips, &ns);
        CHECKF(ns.n >= 1 && strncmp(ns.first, flag, strlen(flag)) == 0,
               "%s, one camera: %d notices, first \"%s\"", flag, ns.n, ns.first);
    }
}

int main(void)
{
    char dir[512];
    if (!tu_tmpdir(dir, sizeof(dir), "camclass-report"))
        return tu_exit_code();
    modes(dir);
    reopen(dir);
    write_errors();
    writer_notices(dir);
    tu_rmtree(dir);
    return tu_exit_code();
}
