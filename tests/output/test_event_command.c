/* The on-event command (app/output/event_command.c) with real programs: shell scripts the test
 * writes. Its environment (ours replace inherited CAMCLASS_* values), one run at a time, a
 * program that outlives its timeout stopped with its whole process group, exit statuses said,
 * its stdout kept off ours, and the one-line refusals of a missing or non-executable program. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event_command.h"
#include "testutil.h"

static char dir[256];

// Writes an executable script dir/name with body after the #! line; returns its path.
static const char *script(const char *name, const char *body)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!CHECKF(f != NULL, "fopen %s: %s", p, strerror(errno)))
        return p;
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(p, 0755);
    return p;
}

static struct cc_event_command *make(const char *program, double timeout_s, struct tu_notices *n)
{
    struct cc_event_command_config cfg = {.program = program,
                                          .timeout_s = timeout_s,
                                          .camera = "porch",

                                          .notice = tu_notice,
                                          .notice_ctx = n};
    struct cc_error err = {""};
    struct cc_event_command *c = cc_event_command_create(&cfg, &err);
    CHECKF(c != NULL, "create %s: %s", program, err.msg);
    return c;
}

static char *slurp(const char *name)
{
    char path[320];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    char *s = tu_read_file(path, NULL);
    if (!s && !(s = calloc(1, 1))) // "" for a file the program did not write
        abort();
    return s;
}

static void test_environment(void)
{
    char body[512];
    snprintf(body, sizeof(body), "env | grep ^CAMCLASS_ | sort > %s/env.txt\necho to-stdout", dir);
    struct tu_notices n = TU_NOTICES_INIT;
    setenv("CAMCLASS_LABEL", "inherited", 1);
    setenv("CAMCLASS_PREVIOUS", "inherited", 1);
    struct cc_event_command *c = make(script("env.sh", body), 10, &n);
    if (!c)
        return;
    struct cc_event_info ev = {
        .start = true, .label = "cat", .score = 0.875, .snapshot = "/var/snap/1.jpg"};
    CHECK(cc_event_command_run(c, &ev) == CC_EVENT_RUN_STARTED);
    cc_event_command_destroy(c); // waits for it
    unsetenv("CAMCLASS_LABEL");
    unsetenv("CAMCLASS_PREVIOUS");
    char *env = slurp("env.txt");
    const char *want[] = {"CAMCLASS_CAMERA=porch\n",
                          "CAMCLASS_EVENT=start\n",
                          "CAMCLASS_LABEL=cat\n",
                          "CAMCLASS_SCORE=0.875000\n",
                          "CAMCLASS_SNAPSHOT=/var/snap/1.jpg\n",
                          "CAMCLASS_TIME=20"};
    const char *seen = env; // never NULL (slurp)
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        bool has = strstr(seen, want[i]) != NULL;
        CHECKF(has, "environment lacks %s:\n%s", want[i], seen);
    }
    bool inherited = strstr(seen, "inherited") != NULL,
         previous = strstr(seen, "CAMCLASS_PREVIOUS");
    CHECKF(!inherited, "an inherited CAMCLASS_ value reached it:\n%s", seen);
    CHECKF(!previous, "PREVIOUS set for an onset:\n%s", seen);
    CHECKF(strstr(n.text, "(start of \"cat\"): exit status 0") != NULL, "notices: %s", n.text);
    free(env);
}

static void test_end_and_status(void)
{
    char body[512];
    snprintf(body, sizeof(body), "echo \"$CAMCLASS_EVENT $CAMCLASS_LABEL\" > %s/end.txt\nexit 3",
             dir);
    struct tu_notices n = TU_NOTICES_INIT;
    struct cc_event_command *c = make(script("end.sh", body), 10, &n);
    if (!c)
        return;
    struct cc_event_info ev = {.start = false, .label = "dog", .score = 0.2};
    CHECK(cc_event_command_run(c, &ev) == CC_EVENT_RUN_STARTED);
    cc_event_command_destroy(c);
    char *end = slurp("end.txt");
    CHECKF(strcmp(end, "end dog\n") == 0, "end event: \"%s\"", end);
    CHECKF(strstr(n.text, "(end of \"dog\"): exit status 3") != NULL, "notices: %s", n.text);
    free(end);
}

static void test_busy_and_timeout(void)
{
    // The script starts a grandchild in the background and waits: the timeout must stop both.
    char body[512];
    snprintf(body, sizeof(body), "sleep 60 &\necho $! > %s/grandchild.pid\nwait", dir);
    struct tu_notices n = TU_NOTICES_INIT;
    struct cc_event_command *c = make(script("slow.sh", body), 0.5, &n);
    if (!c)
        return;
    struct cc_event_info ev = {.start = true, .label = "cat", .score = 0.9};
    CHECK(cc_event_command_run(c, &ev) == CC_EVENT_RUN_STARTED);
    CHECK(cc_event_command_run(c, &ev) == CC_EVENT_RUN_BUSY);
    cc_event_command_destroy(c);
    CHECKF(strstr(n.text, "still running; the start of \"cat\" was not passed (1 so far)") != NULL,
           "notices: %s", n.text);
    CHECKF(strstr(n.text, "still running after 0.5 s; stopped") != NULL, "notices: %s", n.text);
    char *pid = slurp("grandchild.pid");
    int gp = atoi(pid);
    CHECKF(gp > 0, "no grandchild pid: \"%s\"", pid);
    // The grandchild was in the group: gone, or a zombie of init's on its way out.
    bool alive = false;
    for (int i = 0; gp > 0 && i < 100; i++) {
        char stat[64], buf[256] = "";
        snprintf(stat, sizeof(stat), "/proc/%d/stat", gp);
        FILE *f = fopen(stat, "r");
        alive = f && fgets(buf, sizeof(buf), f) && !strstr(buf, ") Z ");
        if (f)
            fclose(f);
        if (!alive)
            break;
        usleep(20000);
    }
    CHECKF(!alive, "the grandchild %d outlived the timeout", gp);
    free(pid);
}

static void test_stdout_kept_off_ours(void)
{
    // Our stdout becomes a file for the run: the program's "to-stdout" must not land there.
    char path[320], body[128];
    snprintf(path, sizeof(path), "%s/our-stdout", dir);
    snprintf(body, sizeof(body), "echo to-stdout");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    struct tu_notices n = TU_NOTICES_INIT;
    struct cc_event_command *c = make(script("out.sh", body), 10, &n);
    struct cc_event_info ev = {.start = true, .label = "x", .score = 1};
    if (c)
        cc_event_command_run(c, &ev);
    cc_event_command_destroy(c);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char *out = slurp("our-stdout");
    CHECKF(out[0] == '\0', "the program wrote into our stdout: \"%s\"", out);
    free(out);
}

static void test_refusals(void)
{
    struct {
        const char *program, *msg;
    } cases[] = {
        {"/nonexistent/hook", "no such file"},
        {"no-such-program-camclass", "not found in PATH"},
        {"", "give a program"},
        {NULL, "not an executable file"}, // filled below: a file without x
    };
    char plain[320];
    snprintf(plain, sizeof(plain), "%s/plain.txt", dir);
    FILE *f = fopen(plain, "w");
    if (f)
        fclose(f);
    cases[3].program = plain;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cc_event_command_config cfg = {.program = cases[i].program, .timeout_s = 1};
        struct cc_error err = {""};
        CHECKF(cc_event_command_create(&cfg, &err) == NULL, "%s accepted", cases[i].program);
        CHECKF(strstr(err.msg, cases[i].msg) && !strchr(err.msg, '\n'), "%s: \"%s\"",
               cases[i].program, err.msg);
    }
    struct cc_event_command_config cfg = {.program = "sh", .timeout_s = 0};
    struct cc_error err = {""};
    CHECKF(cc_event_command_create(&cfg, &err) == NULL && strstr(err.msg, "timeout"),
           "timeout 0: \"%s\"", err.msg);
}

int main(void)
{
    if (!tu_tmpdir(dir, sizeof(dir), "camclass-event"))
        return tu_exit_code();
    test_environment();
    test_end_and_status();
    test_busy_and_timeout();
    test_stdout_kept_off_ours();
    test_refusals();
    tu_rmtree(dir);
    return tu_exit_code();
}
